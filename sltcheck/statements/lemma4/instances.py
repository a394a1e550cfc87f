"""Instances of Lemma 4: Lemma 7's instances with a target of spectral norm <= 1."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary
from sltcheck.statement_types import Instance
from sltcheck.statements.lemma7.instances import (
    FREE,
    SEARCH_COST,
    eps_start,
    matrix_instances,
    project_spectral_target,
    shapes,
    source_start,
    spectral_targets,
)

__all__ = ["FREE", "SEARCH_COST", "SIMPLIFY_EVALUATIONS", "instances", "project", "shapes", "start"]

# Each evaluation searches every mask exactly (~0.3 s at ci sizes): sltcheck.harness.simplify
# tries at most this many simplifications of a counterexample.
SIMPLIFY_EVALUATIONS = 8


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    return matrix_instances(spectral_targets, drop)


project = project_spectral_target


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    """Targets in sign patterns of spectral norm 1 (or random, norm <= 1); uniform sources."""
    size = (shape["d2"], shape["d1"])
    W = boundary.unit_pattern(rng, *size) if on_boundary else boundary.random_unit(rng, *size, shrink=True)
    W1, W2 = source_start(shape, rng)
    return {"W": W, "W1": W1, "W2": W2, "eps": eps_start(rng, on_boundary)}
