"""Instances of Lemma 8: logits, tokens on the alpha-sphere, masks, perturbations up to eps_max."""

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

EPS_HIGH = 3.0  # Lemma 8 allows any eps_max >= 0; beyond ~3 the bound is astronomically loose

__all__ = ["FREE", "SEQUENCE", "instances", "project", "shapes", "start"]


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    return softmax_instances(EPS_HIGH, drop)


def project(instance: Instance) -> Instance:
    return project_softmax(instance, EPS_HIGH)


def shapes() -> list[dict[str, int]]:
    return boundary.ordered_shapes(SHAPES)


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    return softmax_start(shape, rng, EPS_HIGH, on_boundary=on_boundary)
