"""Instances of Lemma 13: a target block (MHA and FC layers of spectral norm <= 1),
tokens and a perturbed sequence."""

from __future__ import annotations

from functools import partial

from sltcheck.statements.lemma12.instances import project, start
from sltcheck.statements.shared.lipschitz_instances import BLOCK_FREE as FREE
from sltcheck.statements.shared.lipschitz_instances import (
    RELATIVE,
    SEQUENCE,
    limits,
    lipschitz_instances,
    lipschitz_shapes,
)

__all__ = ["FREE", "RELATIVE", "SEQUENCE", "instances", "limits", "project", "shapes", "start"]

# Lemma 12's instances with the block's FC layers (``block=True``); projection and starts as Lemma 12's.
instances = partial(lipschitz_instances, block=True)
shapes = partial(lipschitz_shapes, block=True)
