"""Instances of Lemma 12: a target MHA (spectral norms <= 1), tokens and a perturbed sequence."""

from __future__ import annotations

from functools import partial

from sltcheck.statements.shared.lipschitz_instances import (
    FREE,
    RELATIVE,
    SEQUENCE,
    limits,
    lipschitz_instances,
    lipschitz_shapes,
    lipschitz_start,
    project_lipschitz,
)

__all__ = ["FREE", "RELATIVE", "SEQUENCE", "instances", "limits", "project", "shapes", "start"]

instances = partial(lipschitz_instances, block=False)
shapes = partial(lipschitz_shapes, block=False)
project, start = project_lipschitz, lipschitz_start
