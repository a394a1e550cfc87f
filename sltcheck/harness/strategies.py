"""Named Hypothesis strategies for the paper's objects, pushed to their edges.

Every strategy respects the assumption it is named for *by construction* and
pushes it to its limit: tokens lie exactly on the alpha-sphere (a few ulps
inside, since the assumption checks run in mpmath with no tolerance),
matrices have spectral norm 1 up to a few ulps, perturbations sit at their
maximum or are tiny (1e-30, where only mpmath can tell the difference).

Cost: small arrays (at most ``DRAWN_ENTRIES`` entries) are drawn entry by
entry, so Hypothesis can shrink and hill-climb them; larger ones are drawn
from a NumPy generator seeded by a drawn integer (shrinking then acts on the
seed and the few shape parameters), which keeps T = 256 affordable.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sltcheck.harness.projection import INSIDE, into_ball, scale_inside, within

# Arrays with more entries than this are generated from a drawn seed.
DRAWN_ENTRIES = 48

TINY = 1e-30  # a perturbation float64 arithmetic cannot resolve around O(1) values


def _edge_floats(low: float, high: float) -> st.SearchStrategy[float]:
    edges = [low, high, 0.0] if low < 0.0 < high else [low, high]
    return st.one_of(
        st.sampled_from(edges),
        st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False),
    )


@functools.lru_cache(maxsize=4096)
def float_arrays(
    shape: tuple[int, ...], low: float = -1.0, high: float = 1.0
) -> st.SearchStrategy[np.ndarray]:
    """Arrays with entries in [low, high]: drawn entries when small, seeded when large.

    Strategies are cached by their arguments (building and validating them
    anew for every example costs more than drawing from them).
    """
    size = int(np.prod(shape)) if shape else 1
    if size <= DRAWN_ENTRIES:
        return hnp.arrays(np.float64, shape, elements=_edge_floats(low, high))
    return st.builds(
        lambda seed, kind: _seeded(np.random.default_rng(seed), shape, low, high, kind),
        st.integers(0, 2**32 - 1),
        st.sampled_from(["uniform", "signs", "normal"]),
    )


def _seeded(
    rng: np.random.Generator, shape: tuple[int, ...], low: float, high: float, kind: str
) -> np.ndarray:
    if kind == "signs":
        return np.where(rng.random(shape) < 0.5, low, high)
    if kind == "normal":
        mid, half = (low + high) / 2, (high - low) / 2
        return np.clip(mid + half * rng.standard_normal(shape) / 2, low, high)
    return rng.uniform(low, high, shape)


@functools.lru_cache(maxsize=64)
def sequence_lengths(max_length: int = 256) -> st.SearchStrategy[int]:
    """T from 1 to ``max_length``: mostly short, ``max_length`` itself only rarely (mpmath cost).

    A bucket index is drawn first (0-49: 2 <= T <= 4, 50-59: T = 1, 60-89: T <= 16,
    90-97: T <= 64, 98-99: T = max_length), so shrinking moves toward short
    sequences that still have two tokens to mix.
    """

    def bucket(index: int) -> st.SearchStrategy[int]:
        if index < 50 and max_length >= 2:
            return st.integers(2, min(4, max_length))
        if index < 60:
            return st.just(1)
        if index < 90:
            return st.integers(1, min(16, max_length))
        if index < 98:
            return st.integers(1, min(64, max_length))
        return st.just(max_length)

    return st.integers(0, 99).flatmap(bucket)


@functools.lru_cache(maxsize=64)
def dimensions(max_dim: int = 8) -> st.SearchStrategy[int]:
    return st.one_of(st.just(1), st.integers(1, max_dim))


@functools.lru_cache(maxsize=1024)
def unit_spectral_matrices(
    rows: int, cols: int, *, at_limit: bool | None = None
) -> st.SearchStrategy[np.ndarray]:
    """(rows, cols) matrices with ||M|| <= 1, usually exactly 1 (a few ulps inside).

    Besides generic matrices: identities/partial isometries (every singular
    value 1) and rank-one matrices (one-hot attention when used in W_QK).
    """

    def finish(raw: np.ndarray, shrink: float, kind: str) -> np.ndarray:
        if kind == "isometry":
            raw = np.eye(rows, cols) * np.sign(raw[0, 0] or 1.0)
        elif kind == "rank-one":
            raw = np.outer(raw[:, 0], raw[0, :])
        unit = scale_inside(raw)
        return unit if at_limit or (at_limit is None and shrink >= 1.0) else unit * shrink

    shrinks = st.just(1.0) if at_limit else st.sampled_from([1.0, 1.0, 0.5, 0.0]) | st.floats(0, 1)
    return st.builds(
        finish,
        float_arrays((rows, cols)),
        shrinks,
        st.sampled_from(["generic", "generic", "isometry", "rank-one"]),
    )


def stacked_unit_spectral(heads: int, rows: int, cols: int) -> st.SearchStrategy[np.ndarray]:
    """(heads, rows, cols): every head's matrix has spectral norm <= 1."""
    return st.lists(unit_spectral_matrices(rows, cols), min_size=heads, max_size=heads).map(
        lambda ms: np.stack(ms) if ms else np.zeros((0, rows, cols))
    )


@functools.lru_cache(maxsize=1024)
def alphas(d1: int, d2: int | None = None, *, large: bool = True) -> st.SearchStrategy[float]:
    """Input norm bounds alpha; ``large``: alpha >= max(sqrt(d1), sqrt(d2)), often at the limit."""
    low = float(np.sqrt(max(d1, d2 or d1))) if large else 1e-3
    # sqrt in float64 may round down; nudge up so the mpmath check passes.
    low = float(np.nextafter(low, np.inf)) if large and low * low < max(d1, d2 or d1) else low
    return st.one_of(
        st.just(low), st.floats(low, max(4 * low, 8.0)), st.sampled_from([low * 2, 10.0 * low])
    )


def tokens_on_alpha_sphere(
    T: int, d: int, alpha: float, *, inside: bool = True, overshoot: float = 1.0
) -> st.SearchStrategy[np.ndarray]:
    """(T, d) tokens with ||x_i|| <= alpha, most of them on the sphere (a few ulps inside).

    Shapes: generic directions, all tokens colinear (+-alpha e_1: the extreme
    case of convex combinations) and, with ``inside``, some tokens pulled inside
    (including the zero token). ``overshoot`` > 1 scales tokens *beyond* alpha,
    for mutants that drop the token-norm assumption.
    """
    scale = alpha * INSIDE * overshoot
    return _unit_tokens(T, d, inside).map(lambda unit: unit * scale)


@functools.lru_cache(maxsize=4096)
def _unit_tokens(T: int, d: int, inside: bool) -> st.SearchStrategy[np.ndarray]:
    def finish(raw: np.ndarray, radii: np.ndarray, kind: str) -> np.ndarray:
        if kind == "colinear":
            raw = np.zeros((T, d))
            raw[:, 0] = np.where(radii >= 0.5, 1.0, -1.0)
            radii = np.ones(T)
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        safe = np.where(norms > 0, norms, 1.0)
        directions = np.where(norms > 0, raw / safe, np.eye(1, d))
        return directions * radii[:, None] if inside else directions

    radii = float_arrays((T,), 0.0, 1.0).map(lambda r: np.where(r > 0.5, 1.0, r / 0.5))
    return st.builds(
        finish, float_arrays((T, d)), radii, st.sampled_from(["generic", "generic", "colinear"])
    )


@functools.lru_cache(maxsize=1024)
def attention_masks(T: int) -> st.SearchStrategy[np.ndarray]:
    """(T, T) binary masks, every row attending to at least one token:
    full, causal, single-attended-token (one per row) and random."""

    def single(choice: np.ndarray) -> np.ndarray:
        mask = np.zeros((T, T), dtype=np.int8)
        mask[np.arange(T), (np.abs(choice) * T).astype(int).clip(0, T - 1)] = 1
        return mask

    def random(seed: int, density: float) -> np.ndarray:
        rng = np.random.default_rng(seed)
        mask = (rng.random((T, T)) < density).astype(np.int8)
        mask[np.arange(T), rng.integers(0, T, T)] = 1
        return mask

    return st.one_of(
        st.just(np.ones((T, T), dtype=np.int8)),
        st.just(np.tril(np.ones((T, T), dtype=np.int8))),
        float_arrays((T,), 0.0, 1.0).map(single),
        st.builds(random, st.integers(0, 2**32 - 1), st.floats(0.0, 1.0)),
    )


@functools.lru_cache(maxsize=1024)
def eps_maxima(low: float = 0.0, high: float = 1.0) -> st.SearchStrategy[float]:
    """Perturbation sizes: the edges, tiny ones (beyond float64) and the range between."""
    specials = [v for v in (low, high, TINY, 1e-12, 1e-6, 1e-3, 0.1) if low <= v <= high]
    return st.one_of(
        st.sampled_from(specials),
        st.floats(low, high),
        st.floats(0.0, 1.0).map(lambda v: low + (high - low) * v**6),
    )


def perturbations(
    shape: tuple[int, ...], eps_max: float, *, overshoot: float = 1.0
) -> st.SearchStrategy[np.ndarray]:
    """Arrays with ||.||_max <= eps_max: at the maximum (signs), inside, or zero.

    ``overshoot`` > 1 allows entries beyond eps_max (mutants dropping the assumption).
    """
    limit = eps_max * overshoot
    return _unit_perturbations(tuple(shape)).map(lambda unit: np.clip(unit * limit, -limit, limit))


@functools.lru_cache(maxsize=4096)
def _unit_perturbations(shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    def finish(raw: np.ndarray, kind: str) -> np.ndarray:
        if kind == "signs":
            return np.where(raw >= 0, 1.0, -1.0)
        if kind == "zero":
            return np.zeros(shape)
        return raw

    return st.builds(
        finish, float_arrays(shape), st.sampled_from(["signs", "signs", "inside", "zero"])
    )


@functools.lru_cache(maxsize=1024)
def logits(T: int) -> st.SearchStrategy[np.ndarray]:
    """(T, T) softmax inputs from near-uniform (all equal) to one-hot (one dominant logit)."""

    def finish(raw: np.ndarray, scale: float, kind: str) -> np.ndarray:
        if kind == "one-hot":
            out = np.zeros((T, T))
            out[np.arange(T), (np.abs(raw[:, 0]) * T).astype(int).clip(0, T - 1)] = scale
            return out
        return raw * scale

    return st.builds(
        finish,
        float_arrays((T, T)),
        st.sampled_from([0.0, 1e-3, 1.0, 5.0, 50.0]) | st.floats(0.0, 60.0),
        st.sampled_from(["scaled", "scaled", "one-hot"]),
    )


def perturbed_tokens(
    X: np.ndarray, alpha: float, eps_max: float, *, overshoot: float = 1.0
) -> st.SearchStrategy[np.ndarray]:
    """X' with max_i ||x_i - x'_i|| <= eps_max and ||x'_i|| <= alpha (both a few ulps inside).

    The step is drawn as a direction times eps_max, then x' is pulled back onto
    the alpha-ball if it left it (the pull only shortens the step).
    ``overshoot`` > 1 lets steps exceed eps_max (mutants dropping input-perturbation).
    """
    T, d = X.shape

    def finish(raw: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        directions = np.where(norms > 0, raw / np.where(norms > 0, norms, 1.0), 0.0)
        steps = directions * (eps_max * overshoot * INSIDE * lengths[:, None])
        return within(X, into_ball(X + steps, alpha * INSIDE), eps_max * overshoot)

    def common(raw: np.ndarray) -> np.ndarray:
        # every token shifted by the same step (the aligned extreme case)
        return finish(np.broadcast_to(raw, (T, d)).copy(), np.ones(T))

    lengths = float_arrays((T,), 0.0, 1.0).map(lambda r: np.where(r > 0.3, 1.0, r))
    return st.one_of(
        st.builds(finish, float_arrays((T, d)), lengths), float_arrays((1, d)).map(common)
    )
