"""Instances of Lemma 2: target W (||W|| <= 1), input x (||x|| <= 1), sources W1, W2 (U[-1, 1]), eps.

n = d1 n' with n' <= 10 (each group splits by the sign of its incoming weights, so the
exact subset-sum problems have at most n' items). Inputs: basis vectors +-e_j (where the
pointwise bound is tight; a quarter of the draws), the unit sphere and the ball (x = 0 and
W = 0 are not drawn: both sides are then exactly 0); with ``input-norm-unit`` dropped,
norms up to 4.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary
from sltcheck.harness.projection import INSIDE
from sltcheck.statement_types import Instance
from sltcheck.statements.lemma7.instances import (
    MAX_D,
    MIN_N_PRIME,
    SEARCH_COST,
    SHAPES,
    eps_start,
    eps_values,
    nonzero,
    project_spectral_target,
    source_start,
    sources,
    spectral_targets,
)

FREE = ("W", "x", "W1", "W2")

__all__ = ["FREE", "SEARCH_COST", "instances", "project", "shapes", "start"]


def inputs(d1: int, drop: tuple[str, ...]) -> st.SearchStrategy[np.ndarray]:
    def unit(raw: np.ndarray, radius: float) -> np.ndarray:
        norm = float(np.linalg.norm(raw))
        if norm == 0.0:
            return raw
        return raw * (radius * INSIDE / norm)

    basis = st.builds(
        lambda j, sign: sign * np.eye(d1)[j], st.integers(0, d1 - 1), st.sampled_from([1.0, -1.0])
    )
    high = 4.0 if "input-norm-unit" in drop else 1.0
    radii = st.just(high) | st.floats(0.0, high)
    # Basis inputs a quarter of the draws: at d2 = 1 the bounds are attained there (a tie).
    # Directions from a seeded Gaussian: Hypothesis's own float arrays favour sparse vectors,
    # i.e. basis vectors again.
    directions = st.integers(0, 2**32 - 1).map(lambda seed: np.random.default_rng(seed).standard_normal(d1))
    spread = st.builds(unit, directions, radii).filter(nonzero)
    return st.one_of(basis, spread, spread, spread)


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    @st.composite
    def draw(draw: st.DrawFn) -> Instance:
        d1, d2 = draw(st.integers(1, MAX_D)), draw(st.integers(1, MAX_D))
        W = draw(spectral_targets(d1, d2, drop))
        x = draw(inputs(d1, drop))
        if "input-norm-unit" in drop and draw(st.booleans()):
            x = 4.0 * x
        W1, W2 = draw(sources(d1, d2, min_n_prime=MIN_N_PRIME))
        return {"W": W, "x": x, "W1": W1, "W2": W2, "eps": draw(eps_values())}

    return draw()


def shapes() -> list[dict[str, int]]:
    return boundary.ordered_shapes(SHAPES)


def project(instance: Instance) -> Instance:
    out = project_spectral_target(instance)
    x = np.asarray(out["x"], dtype=np.float64)
    norm = float(np.linalg.norm(x))
    if norm > INSIDE:
        x = x * (INSIDE / norm)
    out["x"] = x
    return out


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    """Targets in sign patterns of spectral norm 1 and inputs +-e_j (boundary), or random."""
    d1, d2 = shape["d1"], shape["d2"]
    if on_boundary:
        W = boundary.unit_pattern(rng, d2, d1)
        x = rng.choice((-1.0, 1.0)) * np.eye(d1)[rng.integers(d1)] * INSIDE
    else:
        W = boundary.random_unit(rng, d2, d1, shrink=True)
        x = boundary.sphere_tokens(rng, 1, d1, 1.0, boundary=False)[0]
    W1, W2 = source_start(shape, rng)
    return {"W": W, "x": x, "W1": W1, "W2": W2, "eps": eps_start(rng, on_boundary)}
