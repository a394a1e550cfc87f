"""Instances of Lemma 5: as Lemma 8, with eps_max <= 1/2 (broken when the mutant drops it)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary
from sltcheck.statement_types import Instance
from sltcheck.statements.shared.softmax_instances import (
    FREE,
    SEQUENCE,
    SHAPES,
    project_softmax,
    softmax_instances,
    softmax_start,
)

__all__ = ["FREE", "SEQUENCE", "instances", "project", "shapes", "start"]


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    return softmax_instances(3.0 if "eps-max-half" in drop else 0.5, drop)


def project(instance: Instance) -> Instance:
    return project_softmax(instance, 0.5)


def shapes() -> list[dict[str, int]]:
    return boundary.ordered_shapes(SHAPES)


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    return softmax_start(shape, rng, 0.5, on_boundary=on_boundary)
