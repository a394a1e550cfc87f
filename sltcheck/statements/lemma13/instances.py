"""Instances of Lemma 13: a target block (MHA and FC layers of spectral norm <= 1),
tokens and a perturbed sequence."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.statements import Instance
from sltcheck.statements.lemma12.lipschitz_instances import BLOCK_FREE as FREE
from sltcheck.statements.lemma12.lipschitz_instances import (
    lipschitz_instances,
    lipschitz_shapes,
    lipschitz_start,
    project_lipschitz,
)

__all__ = ["FREE", "instances", "project", "shapes", "start"]


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    return lipschitz_instances(drop, block=True)


def project(instance: Instance) -> Instance:
    return project_lipschitz(instance)


def shapes() -> list[dict[str, int]]:
    return lipschitz_shapes(block=True)


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    return lipschitz_start(shape, rng, on_boundary=on_boundary)
