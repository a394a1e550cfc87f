"""Lemma 5's worst case: Lemma 8's supremum (the same left side), with Lemma 5's bound
4 sqrt(d1) alpha eps_max (eps_max <= 1/2); derived in :mod:`sltcheck.statements.lemma8.worst_case`."""

from __future__ import annotations

from typing import Any

from sltcheck.statements.lemma8 import worst_case as lemma8

PARAMS = lemma8.PARAMS


def supremum(d1: int = 1, alpha: float = 1.0, eps_max: float = 0.1) -> dict[str, Any]:
    return lemma8.supremum("lemma5", d1=d1, alpha=alpha, eps_max=eps_max)
