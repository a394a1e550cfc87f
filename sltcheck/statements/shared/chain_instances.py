"""Shared instance strategies of the a-posteriori chains (Theorems 9, 11 and 14).

A target satisfying the assumptions (every projection and FC layer of spectral
norm <= 1, tokens with ||x_i|| <= alpha, alpha >= max(sqrt(d1), sqrt(d2)), masks
with a nonzero row each) and ANY pruned source: the chains are deterministic,
so every pruned source with its achieved errors must satisfy measured <= bound.
Sources come in four kinds:

- ``perturbed``: the target's own weights plus a perturbation (all tensors or only
  some: W_QK-only and W_VO-only errors isolate the two terms of Eqs. 16/17), the
  small-error regime where the chains are meaningful;
- ``padded``: a wider source (n_K > d_K, n_V > d_V) that reproduces the target
  exactly through the n_K^{1/4} rescaling (Eq. 4), then perturbed;
- ``random``: a theory-initialised source (``sltcheck.pruning.sources``) under random masks;
- ``construction``: helper masks from ``sltcheck.pruning.construction`` (Lemma 7 and
  Pensia et al.'s FC construction) on a theory-initialised source.

FC sources (Theorem 10) are single-input ("structured": P ReLU(x) - N ReLU(-x)),
optionally with dead multi-input units, or random-masked (the generic bound).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary
from sltcheck.harness import strategies as S
from sltcheck.harness.projection import INSIDE, into_ball, scale_inside
from sltcheck.harness.sequence import Structure
from sltcheck.model.weights import FCWeights, MHAWeights
from sltcheck.statement_types import Instance

OVERSHOOT = 4.0  # how far a dropped assumption is broken
SOURCE_KINDS = ("perturbed", "perturbed", "perturbed", "padded", "random", "construction")
PATTERNS = ("all", "vo", "vo", "qk", "q", "k", "v", "o")
FREE = ("alpha", "X", "W_Q", "W_K", "W_V", "W_O", "S_Q", "S_K", "S_V", "S_O")
BLOCK_FREE = (*FREE, "fc_layers")  # the FC sources keep their single-input structure; their errors move with the target
ERROR_LEVELS = (1e-6, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 100.0)  # the chains hold for any source: large errors too
MHA_SHAPES = {"d1": (1, 2), "d2": (1, 2), "H": (1, 2), "dK": (1, 2), "dV": (1, 2), "T": (1, 2, 3, 4, 5, 6)}
BLOCK_SHAPES = {"d1": (1, 2), "H": (1, 2), "dK": (1, 2), "dV": (1, 2), "L": (1, 2), "T": (1, 2, 3, 4, 5, 6)}
VISIBLE = 1e-3  # norm of the smallest target projection / token in non-degenerate draws (see ``visible``)
TRANSFORMER_SHAPES = {"d1": (1, 2), "H": (1, 2), "dK": (1, 2), "dV": (1, 2), "L": (1, 2), "B": (2, 3),
                      "T": (1, 2, 3, 4)}
# The search's sequence structure (sltcheck.harness.sequence): the tokens are the rows of X. One block
# keeps it under a causal mask too; stacked blocks (Theorem 14) only under the full mask (a causal
# block's copies of one token leave it different, so the next block no longer sees copies).
SEQUENCE = Structure({"X": 1})
STACKED_SEQUENCE = Structure({"X": 1}, causal=False)


def visible(stack: np.ndarray, floor: float = VISIBLE) -> np.ndarray:
    """Each matrix of ``stack`` with spectral norm >= ``floor``: a smaller one is scaled up to
    ``floor`` (a zero one becomes the all-ones matrix at that norm), so a source error on the
    matrices around it reaches the output instead of vanishing below float64's noise floor."""
    out = []
    for m in np.asarray(stack, dtype=np.float64):
        norm = float(np.linalg.norm(m, 2)) if m.size else floor
        if norm < floor:
            m = m if norm > 0 else np.ones_like(m)
            m = scale_inside(m) * floor
        out.append(m)
    return np.stack(out) if out else np.asarray(stack, dtype=np.float64)


def perturbation_sizes(high: float = 0.3) -> st.SearchStrategy[float]:
    if high <= 0:
        return st.just(0.0)
    edges = [v for v in (0.0, 1e-12, 1e-6, 1e-3, 0.05) if v <= high]
    return st.sampled_from(edges) | st.floats(0.0, high)


def _scaled(
    strategy: st.SearchStrategy[np.ndarray], drop: tuple[str, ...], name: str
) -> st.SearchStrategy[np.ndarray]:
    if name not in drop:
        return strategy
    return st.tuples(strategy, st.floats(1.0, OVERSHOOT)).map(lambda p: p[0] * p[1])


def mha_plan() -> st.SearchStrategy[dict[str, object]]:
    """Shapes and source kind (shared by all blocks of a transformer instance)."""
    return st.fixed_dictionaries(
        {
            "dK": st.integers(1, 3),
            "dV": st.integers(1, 3),
            "kind": st.sampled_from(SOURCE_KINDS),
            "nK": st.integers(1, 8),
            "nV": st.integers(1, 8),
            "per": st.integers(1, 6),
            "extra_k": st.integers(1, 4),
            "extra_v": st.integers(1, 4),
        }
    )


@st.composite
def mha_pair(
    draw: st.DrawFn,
    H: int,
    d1: int,
    d2: int,
    drop: tuple[str, ...] = (),
    high: float = 0.3,
    plan: dict[str, object] | None = None,
) -> tuple[MHAWeights, MHAWeights]:
    plan = plan if plan is not None else draw(mha_plan())
    dK, dV = int(plan["dK"]), int(plan["dV"])  # type: ignore[call-overload]
    shapes = ((d1, dK), (d1, dK), (d1, dV), (dV, d2))
    if plan.get("positive"):  # d = 1 corner: every projection +1 (a few ulps inside)
        target = MHAWeights(*(np.full((H, *sh), INSIDE) for sh in shapes))
    elif plan.get("seeded"):  # generic projections of spectral norm 1, never zero
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        target = MHAWeights(
            *(np.stack([scale_inside(rng.normal(size=sh)) for _ in range(H)]) for sh in shapes)
        )
    else:
        target = MHAWeights(
            *(
                draw(_scaled(S.stacked_unit_spectral(H, *sh), drop, "target-spectral"))
                for sh in shapes
            )
        )
    if plan.get("visible"):  # non-degenerate draws: no zero (or sub-noise) target projection
        target = MHAWeights(*(visible(t) for t in target.tensors()))
    kind = plan["kind"]
    if kind == "random":
        from sltcheck.pruning import sources

        seed, nK, nV = draw(st.integers(0, 2**32 - 1)), int(plan["nK"]), int(plan["nV"])  # type: ignore[call-overload]
        rng = np.random.default_rng(seed)
        source = sources.source_mha(
            "theory", seed, heads=H, d_in=d1, d_out=d2, n_key=nK, n_value=nV
        )
        density = draw(st.floats(0.0, 1.0))
        masked = [w * (rng.random(w.shape) < density) for w in source.tensors()]
        return target, MHAWeights(*masked)
    if kind == "construction":
        from sltcheck.pruning import construction, sources

        seed, per = draw(st.integers(0, 2**32 - 1)), int(plan["per"])  # type: ignore[call-overload]
        source = sources.source_mha(
            "theory", seed, heads=H, d_in=d1, d_out=d2, n_key=per * d1, n_value=per * d2
        )
        return target, construction.prune_mha(target, source, "mitm").weights
    tensors = list(target.tensors())
    if kind == "padded":
        extra_k, extra_v = int(plan["extra_k"]), int(plan["extra_v"])  # type: ignore[call-overload]
        scale = ((dK + extra_k) / dK) ** 0.25
        pad_k = np.zeros((H, d1, extra_k))
        junk = draw(S.float_arrays((H, extra_v, d2)))
        tensors = [
            np.concatenate([tensors[0], pad_k], axis=2) * scale,
            np.concatenate([tensors[1], pad_k], axis=2) * scale,
            np.concatenate([tensors[2], np.zeros((H, d1, extra_v))], axis=2),
            np.concatenate([tensors[3], junk], axis=1),
        ]
    pattern = plan["pattern"] if "pattern" in plan else draw(st.sampled_from(PATTERNS))
    size = max(draw(perturbation_sizes(high)), float(plan.get("min_size", 0.0)))  # type: ignore[arg-type]
    chosen = {"all": "qkvo", "qk": "qk", "vo": "vo"}.get(str(pattern), str(pattern))
    out = []
    for letter, w in zip("qkvo", tensors, strict=True):
        if letter in chosen and size > 0:
            w = w + size * draw(S.perturbations(w.shape, 1.0))
        out.append(w)
    return target, MHAWeights(*out)


def fc_plan() -> st.SearchStrategy[dict[str, object]]:
    return st.fixed_dictionaries(
        {
            "kind": st.sampled_from(
                ["structured", "structured", "structured", "random", "construction"]
            ),
            "n": st.integers(1, 8),
            "per": st.integers(1, 6),
            "dead": st.integers(0, 2),
        }
    )


@st.composite
def fc_pair(
    draw: st.DrawFn,
    d: int,
    L: int,
    drop: tuple[str, ...] = (),
    high: float = 0.3,
    plan: dict[str, object] | None = None,
) -> tuple[FCWeights, FCWeights]:
    plan = plan if plan is not None else draw(fc_plan())
    if plan.get("positive"):  # the identity (a few ulps inside): F_T(z) = z on z >= 0
        layers = tuple(np.eye(d) * INSIDE for _ in range(L))
    else:
        layers = tuple(
            draw(_scaled(S.unit_spectral_matrices(d, d), drop, "fc-spectral")) for _ in range(L)
        )
    target = FCWeights(layers)
    kind = plan["kind"]
    if kind == "random":
        from sltcheck.pruning import sources

        seed, n = draw(st.integers(0, 2**32 - 1)), int(plan["n"])  # type: ignore[call-overload]
        rng = np.random.default_rng(seed)
        source = sources.source_fc("theory", seed, widths=[d] * (L + 1), hidden=n)
        density = draw(st.floats(0.0, 1.0))
        return target, FCWeights(tuple(w * (rng.random(w.shape) < density) for w in source.layers))
    if kind == "construction":
        from sltcheck.pruning import construction, sources

        seed, per = draw(st.integers(0, 2**32 - 1)), int(plan["per"])  # type: ignore[call-overload]
        source = sources.source_fc("theory", seed, widths=[d] * (L + 1), hidden=per * d)
        return target, construction.prune_fc(target, source, "mitm").weights
    size = draw(perturbation_sizes(high))
    dead = int(plan["dead"])  # type: ignore[call-overload]
    source_layers: list[np.ndarray] = []
    for W in layers:
        c1 = draw(S.float_arrays((d,), 0.5, 2.0))
        c2 = draw(S.float_arrays((d,), 0.5, 2.0))
        E1 = size * draw(S.perturbations(W.shape, 1.0)) if size > 0 else np.zeros_like(W)
        if plan.get("same"):  # one error for both halves: |P - W| = |N - W| = e_l
            E2 = E1
        else:
            E2 = size * draw(S.perturbations(W.shape, 1.0)) if size > 0 else np.zeros_like(W)
        A1 = np.concatenate([np.diag(c1), -np.diag(c2), np.ones((dead, d))])
        A2 = np.concatenate([(W + E1) / c1, -(W + E2) / c2, np.zeros((d, dead))], axis=1)
        source_layers += [A1, A2]
    return target, FCWeights(tuple(source_layers))


@st.composite
def sequence(
    draw: st.DrawFn,
    d1: int,
    d2: int,
    drop: tuple[str, ...],
    max_T: int = 4,
    min_T: int = 1,
    nonzero: bool = False,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Tokens in the alpha-ball (mostly on its sphere) and a mask; ``nonzero``: if every token
    is below VISIBLE alpha, the first goes onto the sphere (all-zero tokens: both sides 0)."""
    T = draw(st.integers(min_T, max_T))
    alpha = draw(S.alphas(d1, d2, large="alpha-large" not in drop))
    over = OVERSHOOT if "token-norm" in drop else 1.0
    X = draw(S.tokens_on_alpha_sphere(T, d1, alpha, overshoot=over))
    if nonzero and np.linalg.norm(X, axis=1).max() < VISIBLE * alpha:
        X = X.copy()
        X[0] = 0.0
        X[0, 0] = alpha * INSIDE * over
    return alpha, X, draw(S.attention_masks(T))


def edge_plan(
    kind: str = "perturbed", pattern: str = "vo", positive: bool = True
) -> dict[str, object]:
    """The corner where the value term of Eq. 17 is attained (d = 1, W_VO-only error, all
    projections +1); with ``positive=False`` generic seeded projections instead."""
    return {
        "positive": positive,
        "seeded": not positive,
        "min_size": 1e-3,
        "dK": 1,
        "dV": 1,
        "kind": kind,
        "pattern": pattern,
        "nK": 1,
        "nV": 1,
        "per": 1,
        "extra_k": 1,
        "extra_v": 1,
    }


@st.composite
def seeded_sequence(
    draw: st.DrawFn, d1: int, d2: int, drop: tuple[str, ...], min_T: int = 2, max_T: int = 4
) -> tuple[float, np.ndarray, np.ndarray]:
    """Generic tokens (distinct directions, radii in [alpha/2, alpha]) and a full mask."""
    T = draw(st.integers(min_T, max_T))
    alpha = draw(S.alphas(d1, d2, large="alpha-large" not in drop))
    over = OVERSHOOT if "token-norm" in drop else 1.0
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.normal(size=(T, d1))
    radii = alpha * INSIDE * over * rng.uniform(0.5, 1.0, (T, 1))
    X *= radii / np.linalg.norm(X, axis=1, keepdims=True)
    return alpha, X, np.ones((T, T), dtype=np.int8)


@st.composite
def edge_sequence(draw: st.DrawFn, drop: tuple[str, ...]) -> tuple[float, np.ndarray, np.ndarray]:
    """d = 1: tokens colinear on the alpha-sphere (one or two of them)."""
    T = draw(st.integers(1, 2))
    alpha = draw(S.alphas(1, 1, large="alpha-large" not in drop))
    over = OVERSHOOT if "token-norm" in drop else 1.0
    X = np.full((T, 1), alpha * INSIDE * over)
    return alpha, X, np.tril(np.ones((T, T), dtype=np.int8))


def fewer_tokens(instance: Instance) -> Iterator[tuple[str, Instance]]:
    """Structural simplifications (the ``simplifications`` hook of sltcheck.harness.simplify):
    the instance with one token dropped (its row of X, its row and column of the mask)."""
    X, mask = np.asarray(instance["X"]), np.asarray(instance["mask"])
    for index in reversed(range(X.shape[0]) if X.shape[0] > 1 else range(0)):
        keep = np.arange(X.shape[0]) != index
        yield f"token {index} dropped", {**instance, "X": X[keep], "mask": mask[np.ix_(keep, keep)]}


def dims(max_dim: int) -> st.SearchStrategy[int]:
    return st.one_of(st.just(1), st.integers(1, max_dim))


def project(instance: Instance) -> Instance:
    """Tokens back into the alpha-ball, target projections back to spectral norm <= 1."""
    out = dict(instance)
    least = boundary.least_alpha(int(out["d1"]), int(out["d2"]))  # type: ignore[call-overload]
    out["alpha"] = max(abs(float(out["alpha"])), least)  # type: ignore[arg-type]
    X = np.asarray(out["X"], dtype=np.float64)
    out["X"] = into_ball(X, float(out["alpha"]) * INSIDE)  # type: ignore[arg-type]
    for key in ("W_Q", "W_K", "W_V", "W_O"):
        stacked = np.asarray(out[key], dtype=np.float64)
        out[key] = np.stack(
            [m if np.linalg.norm(m, 2) <= INSIDE else scale_inside(m) for m in stacked]
        )
    if "fc_layers" in out:
        out["fc_layers"] = tuple(
            m if np.linalg.norm(m, 2) <= INSIDE else scale_inside(m)
            for m in (np.asarray(w, dtype=np.float64) for w in cast(tuple, out["fc_layers"]))
        )
    return out


def _error(rng: np.random.Generator, shape: tuple[int, ...], size: float, on_boundary: bool) -> np.ndarray:
    return size * (rng.choice((-1.0, 1.0), shape) if on_boundary else rng.uniform(-1.0, 1.0, shape))


def mha_start(
    shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool
) -> tuple[MHAWeights, MHAWeights]:
    """A target in sign patterns of spectral norm 1 (or random) and a source of the same
    widths: the target plus errors at one size (tiny to 0.1) on a random subset of Q, K, V, O."""
    H, d1, d2, dK, dV = (shape[k] for k in ("H", "d1", "d2", "dK", "dV"))
    target = MHAWeights(*(boundary.pattern_stack(rng, H, r, c, boundary=on_boundary)
                          for r, c in ((d1, dK), (d1, dK), (d1, dV), (dV, d2))))
    size = float(rng.choice(ERROR_LEVELS))
    chosen = [letter for letter in "qkvo" if rng.random() < 0.5] or [str(rng.choice(list("qkvo")))]
    source = MHAWeights(*(w + _error(rng, w.shape, size, on_boundary) if letter in chosen else w.copy()
                          for letter, w in zip("qkvo", target.tensors(), strict=True)))
    return target, source


def fc_start(d: int, L: int, rng: np.random.Generator, *, on_boundary: bool) -> tuple[FCWeights, FCWeights]:
    """Target layers in sign patterns (or random) and single-input sources
    P ReLU(x) - N ReLU(-x) with P, N the target plus errors (zero, tiny to 0.1)."""
    layers = tuple(boundary.pattern_stack(rng, L, d, d, boundary=on_boundary))
    source: list[np.ndarray] = []
    for W in layers:
        size = float(rng.choice((0.0, *ERROR_LEVELS)))
        P = W + _error(rng, W.shape, size, on_boundary)
        N = P.copy() if rng.random() < 0.5 else W + _error(rng, W.shape, size, on_boundary)
        source += [np.vstack([np.eye(d), -np.eye(d)]), np.hstack([P, -N])]
    return FCWeights(layers), FCWeights(tuple(source))


def sequence_start(
    shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool
) -> tuple[float, np.ndarray, np.ndarray]:
    least = boundary.least_alpha(shape["d1"], shape.get("d2", shape["d1"]))
    alpha = least if on_boundary or rng.random() < 0.5 else least * rng.uniform(1.0, 3.0)
    X = boundary.sphere_tokens(rng, shape["T"], shape["d1"], alpha, boundary=on_boundary)
    return alpha, X, boundary.masks(rng, shape["T"], boundary=on_boundary)
