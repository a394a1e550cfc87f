"""Instances of Lemma 4: Lemma 7's instances with a target of spectral norm <= 1."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary, strategies
from sltcheck.statements import Instance
from sltcheck.statements.lemma7.instances import (
    FREE,
    MAX_D,
    MIN_N_PRIME,
    SEARCH_COST,
    enumerable_n_prime,
    eps_start,
    eps_values,
    nonzero,
    shapes,
    source_start,
    sources,
)

__all__ = ["FREE", "SEARCH_COST", "SIMPLIFY_EVALUATIONS", "instances", "project", "shapes", "start"]

# Each evaluation searches every mask exactly (~0.3 s at ci sizes): sltcheck.harness.simplify
# tries at most this many simplifications of a counterexample.
SIMPLIFY_EVALUATIONS = 8


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    @st.composite
    def draw(draw: st.DrawFn) -> Instance:
        d1, d2 = draw(st.integers(2, MAX_D)), draw(st.integers(1, MAX_D))
        if "matrix-spectral" in drop:
            W = draw(strategies.float_arrays((d2, d1), -2.0, 2.0))
        else:
            W = draw(strategies.unit_spectral_matrices(d2, d1).filter(nonzero))
        W1, W2 = draw(sources(d1, d2, enumerable_n_prime(d1, d2), MIN_N_PRIME))
        return {"W": W, "W1": W1, "W2": W2, "eps": draw(eps_values())}

    return draw()


def project(instance: Instance) -> Instance:
    out = dict(instance)
    for key in ("W1", "W2"):
        out[key] = np.clip(np.asarray(out[key], dtype=np.float64), -1.0, 1.0)
    W = np.asarray(out["W"], dtype=np.float64)
    if W.size and float(np.linalg.norm(W, 2)) > strategies.INSIDE:
        W = strategies.scale_inside(W)
    out["W"] = W
    return out


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    """Targets in sign patterns of spectral norm 1 (or random, norm <= 1); uniform sources."""
    size = (shape["d2"], shape["d1"])
    W = boundary.unit_pattern(rng, *size) if on_boundary else boundary.random_unit(rng, *size, shrink=True)
    W1, W2 = source_start(shape, rng)
    return {"W": W, "W1": W1, "W2": W2, "eps": eps_start(rng, on_boundary)}
