"""Instances of Lemma 12: a target MHA (spectral norms <= 1), tokens and a perturbed sequence."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.statements import Instance
from sltcheck.statements.lemma12.lipschitz_instances import (
    FREE,
    lipschitz_instances,
    lipschitz_shapes,
    lipschitz_start,
    project_lipschitz,
)

__all__ = ["FREE", "instances", "project", "shapes", "start"]


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    return lipschitz_instances(drop, block=False)


def project(instance: Instance) -> Instance:
    return project_lipschitz(instance)


def shapes() -> list[dict[str, int]]:
    return lipschitz_shapes(block=False)


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    return lipschitz_start(shape, rng, on_boundary=on_boundary)
