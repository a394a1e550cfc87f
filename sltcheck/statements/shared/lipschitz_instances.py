"""Shared instance strategy of the input-Lipschitz lemmas (Lemmas 12 and 13)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary
from sltcheck.harness import strategies as S
from sltcheck.harness.projection import INSIDE, into_ball, scale_inside, within
from sltcheck.harness.sequence import Structure
from sltcheck.statement_types import Instance

FREE = ("alpha", "X", "X_perturbed", "W_Q", "W_K", "W_V", "W_O", "eps_max")
BLOCK_FREE = (*FREE, "fc_layers")
SHAPES = {"d1": (1, 2), "d2": (1, 2), "H": (1, 2), "dK": (1, 2), "dV": (1, 2), "T": (1, 2, 3, 4, 5, 6)}
BLOCK_SHAPES = {**SHAPES, "L": (1, 2)}
# The search's sequence structure (sltcheck.harness.sequence): the tokens are the rows of X and X'.
# Structured shapes realise up to sequence.LONGEST tokens, the worst cases' fractions included.
SEQUENCE = Structure({"X": 1, "X_perturbed": 1})
# The search holds X as X / alpha (sltcheck.harness.sequence.Space), so alpha moves the tokens with it
# (the worst case over at most 64 tokens sits at alpha = 1.48, on the sphere). X' stays absolute: held as
# (X' - X) / eps_max as well, the climbs at the d1 = 2 bracket's eps_max = 0.05 reached 6-9% less.
RELATIVE = {"X": (None, "alpha")}
EPS_HIGH = 0.5
# The smallest eps_max the search moves to. The measured side is a difference of two float64 outputs
# of size ~alpha that agree but for O(eps_max): below ~1e-9 float64 keeps fewer than 7 of its digits,
# the float64 ratio ranks points on rounding noise, and a climb that follows it down to eps_max ~ 1e-15
# ends where mpmath finds 1.031 for a 1.0417 it reported (Lemma 13 as stated, OpenBLAS's Haswell
# kernels). The suprema are first-order limits (eps_max -> 0): at 1e-9 they are within 1e-8 of them.
EPS_RESOLVED = 1e-9
# Longest drawn sequence. Neither bound depends on T (the worst cases known sit at T <= 6), and
# where the two outputs agree to rounding every row goes to mpmath at T^2 H exponentials: a
# T = 256 instance then costs ~30 s, and Hypothesis's target phase, climbing one, held a deep
# run on Lemma 13 for over 15 minutes. At 64 such an instance costs 16 times less.
LONGEST_SEQUENCE = 64
OVERSHOOT = {
    "token-norm": 4.0,
    "target-spectral": 4.0,
    "fc-spectral": 4.0,
    "input-perturbation": 64.0,
}


def lipschitz_instances(drop: tuple[str, ...] = (), *, block: bool) -> st.SearchStrategy[Instance]:
    def over(name: str) -> float:
        return OVERSHOOT[name] if name in drop else 1.0

    @st.composite
    def draw(draw: st.DrawFn) -> Instance:
        T = draw(S.sequence_lengths(LONGEST_SEQUENCE))
        d1 = draw(S.dimensions())
        d2 = d1 if block else draw(S.dimensions())
        H = draw(st.integers(1, 3) | st.integers(1, 8))
        dK, dV = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        alpha = draw(S.alphas(d1, d2))
        X = draw(S.tokens_on_alpha_sphere(T, d1, alpha, overshoot=over("token-norm")))
        eps_max = draw(S.eps_maxima(0.0, EPS_HIGH))
        Xp = draw(
            S.perturbed_tokens(
                X, alpha * over("token-norm"), eps_max, overshoot=over("input-perturbation")
            )
        )
        weights = {
            name: draw(S.stacked_unit_spectral(H, rows, cols)) * over("target-spectral")
            for name, rows, cols in (
                ("W_Q", d1, dK),
                ("W_K", d1, dK),
                ("W_V", d1, dV),
                ("W_O", dV, d2),
            )
        }
        mask = draw(S.attention_masks(T))
        if draw(st.integers(0, 2)) == 0:
            # The extreme case of the proof's chain: isometric weights (identities at norm 1),
            # colinear tokens at +-alpha (one pulled inside, the query), a common shift along them.
            for name, rows, cols in (
                ("W_Q", d1, dK),
                ("W_K", d1, dK),
                ("W_V", d1, dV),
                ("W_O", dV, d2),
            ):
                weights[name] = np.broadcast_to(
                    np.eye(rows, cols) * INSIDE, (H, rows, cols)
                ).copy()
                weights[name] *= over("target-spectral")
            radii = draw(S.float_arrays((T,), -1.0, 1.0))
            X = np.zeros((T, d1))
            X[:, 0] = (
                np.where(np.abs(radii) > 0.5, np.sign(radii), radii)
                * alpha
                * INSIDE
                * over("token-norm")
            )
            X[:, 0] = np.where(X[:, 0] == 0, alpha * INSIDE, X[:, 0])
            direction = np.zeros((1, d1))
            direction[0, 0] = 1.0 if draw(st.booleans()) else -1.0
            limit = alpha * INSIDE * over("token-norm")
            shifted = np.clip(
                X + direction * (eps_max * over("input-perturbation") * INSIDE), -limit, limit
            )
            Xp = within(X, shifted, eps_max * over("input-perturbation"))
            mask = np.ones((T, T), dtype=np.int8)
        instance: Instance = {
            "alpha": alpha,
            "d1": d1,
            "d2": d2,
            "X": X,
            "X_perturbed": Xp,
            "mask": mask,
            **weights,
            "eps_max": eps_max,
        }
        if block:
            L = draw(st.integers(1, 3))
            layers = [draw(S.unit_spectral_matrices(d1, d1)) for _ in range(L)]
            if draw(st.booleans()):
                layers = [np.eye(d1) * INSIDE for _ in range(L)]
            instance["fc_layers"] = tuple(layer * over("fc-spectral") for layer in layers)
        return instance

    return draw()


def project_lipschitz(instance: Instance) -> Instance:
    out = dict(instance)
    least = boundary.least_alpha(int(out["d1"]), int(out.get("d2", out["d1"])))  # type: ignore[call-overload]
    out["alpha"] = max(abs(float(out["alpha"])), least)  # type: ignore[arg-type]
    eps_max = float(np.clip(abs(float(out["eps_max"])), 0.0, EPS_HIGH))  # type: ignore[arg-type]
    out["eps_max"] = eps_max
    limit = float(out["alpha"]) * INSIDE  # type: ignore[arg-type]
    X = into_ball(np.asarray(out["X"], dtype=np.float64), limit)
    Xp = np.asarray(out["X_perturbed"], dtype=np.float64)
    step = Xp - X
    lengths = np.linalg.norm(step, axis=1, keepdims=True)
    cap = eps_max * INSIDE
    step = np.where(lengths > cap, step * (cap / np.where(lengths > 0, lengths, 1.0)), step)
    out["X"], out["X_perturbed"] = X, within(X, into_ball(X + step, limit), eps_max)
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        stack = np.asarray(out[name], dtype=np.float64)
        out[name] = np.stack(
            [scale_inside(m) if np.linalg.norm(m, 2) > INSIDE else m for m in stack]
        )
    if "fc_layers" in out:
        out["fc_layers"] = tuple(
            scale_inside(m) if np.linalg.norm(m, 2) > INSIDE else m
            for m in (np.asarray(w, dtype=np.float64) for w in out["fc_layers"])  # type: ignore[attr-defined]
        )
    return out


def limits(shape: dict[str, int]) -> dict[str, tuple[float, float]]:
    """The box of the search's scalar fields: alpha from its least admissible value, eps_max from
    EPS_RESOLVED (where float64 still resolves the measured side) to EPS_HIGH."""
    return {"alpha": (boundary.least_alpha(shape["d1"], shape.get("d2", shape["d1"])), np.inf),
            "eps_max": (EPS_RESOLVED, EPS_HIGH)}


def lipschitz_shapes(*, block: bool) -> list[dict[str, int]]:
    if block:
        return boundary.ordered_shapes(BLOCK_SHAPES, keep=lambda s: s["d2"] == s["d1"])
    return boundary.ordered_shapes(SHAPES)


def _line(rng: np.random.Generator, T: int, d1: int, alpha: float, eps_max: float) -> tuple[np.ndarray, np.ndarray]:
    """Tokens on one line at +-alpha, k of the T negative with k uniform in 0..T (every balance of
    signs equally often: a binomial draw rarely gives 1 of 5), every token moved by eps_max along
    the line, all inward, all outward (from eps_max inside the sphere) or each its own way."""
    direction = np.eye(d1)[0] if d1 == 1 or rng.random() < 0.5 else boundary.sphere_tokens(rng, 1, d1, 1.0,
                                                                                         boundary=True)[0]
    direction = direction / np.linalg.norm(direction) if np.linalg.norm(direction) > 0 else np.eye(d1)[0]
    signs = np.where(rng.permutation(T) < rng.integers(0, T + 1), -1.0, 1.0)
    way = rng.integers(5) // 2  # all inward, all outward (the same |first-order change|), or mixed
    radius = alpha * INSIDE - (eps_max if way == 1 else 0.0)
    inward = np.full(T, -1.0) if way == 0 else np.full(T, 1.0) if way == 1 else rng.choice((-1.0, 1.0), T)
    X = np.outer(signs * radius, direction)
    return X, np.outer(signs * inward * eps_max, direction)


def lipschitz_start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    """A start for the search: alpha at sqrt(max(d1, d2)), tokens on the alpha-sphere (or on one
    line at +-alpha, half the time), every token moved by eps_max (along it, across it or
    along an axis), weights in sign patterns of spectral norm 1 (boundary); or random tokens,
    steps, weights and alpha."""
    T, d1, d2, H = shape["T"], shape["d1"], shape["d2"], shape["H"]
    least = boundary.least_alpha(d1, d2)
    alpha = least if on_boundary or rng.random() < 0.5 else least * rng.uniform(1.0, 3.0)
    eps_max = float(rng.choice(boundary.eps_levels(0.0, EPS_HIGH))) if on_boundary else EPS_HIGH * rng.random() ** 3
    X = boundary.sphere_tokens(rng, T, d1, alpha, boundary=on_boundary)
    line = on_boundary and rng.random() < 0.5
    if line:
        eps_max = 1e-5  # the first-order regime, where the bounds are tightest (other levels: below)
        X, steps = _line(rng, T, d1, alpha, eps_max)
    elif on_boundary:
        steps = boundary.steps(rng, X, eps_max)
    else:
        raw = rng.normal(size=(T, d1))
        steps = raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-300) * eps_max * rng.random((T, 1))
    instance: Instance = {
        "alpha": alpha, "d1": d1, "d2": d2, "X": X, "X_perturbed": X + steps,
        "mask": boundary.masks(rng, T, boundary=on_boundary),
        "W_Q": boundary.pattern_stack(rng, H, d1, shape["dK"], boundary=on_boundary),
        "W_K": boundary.pattern_stack(rng, H, d1, shape["dK"], boundary=on_boundary),
        "W_V": boundary.pattern_stack(rng, H, d1, shape["dV"], boundary=on_boundary),
        "W_O": boundary.pattern_stack(rng, H, shape["dV"], d2, boundary=on_boundary),
        "eps_max": eps_max,
    }
    if "L" in shape:
        instance["fc_layers"] = tuple(boundary.pattern_stack(rng, shape["L"], d1, d1, boundary=on_boundary))
        if line:  # identity layers: F doubles the change of its input (the proof's factor 2, attained)
            instance["fc_layers"] = tuple(np.eye(d1) * INSIDE for _ in range(shape["L"]))
    return project_lipschitz(instance)
