"""Lemma 5's families for the branch-and-bound (:mod:`sltcheck.certify`): Lemma 8's families
(:mod:`sltcheck.statements.lemma8.family`: the same left side, d1 = 1, T = 2, 3, eps_max in
[0.01, 0.5], inside Lemma 5's eps_max <= 1/2) under Lemma 5's bounds. ``as-stated``:
4 sqrt(d1) alpha eps_max, i.e. 4 once divided by eps_max at d1 = alpha = 1; known supremum
2 tanh(eps / 2) / (4 eps) at eps = 0.01 (it decreases in eps)."""

from __future__ import annotations

import math
from typing import Any

from sltcheck.numerics.balls import Backend
from sltcheck.statements.lemma8.family import EPS_LOW, families, known_supremum, lemma8_over_eps


def linear_over_eps(arith: Backend, eps: Any) -> Any:
    """4 sqrt(d1) alpha eps_max / eps_max at d1 = alpha = 1."""
    return arith.point(4.0)


FAMILIES = families("lemma5", {
    "as-stated": (linear_over_eps, known_supremum(lambda e: 4 * e)),
    "via-lemma8": (lemma8_over_eps, known_supremum(lambda e: math.expm1(2 * e))),
})
assert EPS_LOW <= 0.5  # the family stays inside Lemma 5's eps_max <= 1/2
