"""Instances of Lemma 13: a target block (MHA and FC layers of spectral norm <= 1),
tokens and a perturbed sequence."""

from __future__ import annotations

from hypothesis import strategies as st

from sltcheck.statements import Instance
from sltcheck.statements.lemma12.lipschitz_instances import FREE, lipschitz_instances, project_lipschitz

__all__ = ["FREE", "instances", "project"]


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    return lipschitz_instances(drop, block=True)


def project(instance: Instance) -> Instance:
    return project_lipschitz(instance)
