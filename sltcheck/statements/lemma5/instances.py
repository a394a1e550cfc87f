"""Instances of Lemma 5: as Lemma 8, with eps_max <= 1/2 (broken when the mutant drops it)."""

from __future__ import annotations

from hypothesis import strategies as st

from sltcheck.statements import Instance
from sltcheck.statements.lemma8.softmax_instances import FREE, project_softmax, softmax_instances

__all__ = ["FREE", "instances", "project"]


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    return softmax_instances(3.0 if "eps-max-half" in drop else 0.5, drop)


def project(instance: Instance) -> Instance:
    return project_softmax(instance, 0.5)
