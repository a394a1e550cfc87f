"""Interval enclosure (see :mod:`sltcheck.harness.interval_verdict`) of Lemma 5:

``lemma5``: the same measured, the bounds ``as-stated`` (4 sqrt(d1) alpha eps_max) and
  ``via-lemma8``, and the mutant ``quadratic``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sltcheck.numerics.intervals import num, power, scalar, sqrt
from sltcheck.statements.lemma8.enclosure import bound as lemma8_bound
from sltcheck.statements.lemma8.enclosure import measured

__all__ = ["BOUNDS", "measured"]


def linear(factor: float, exponent: int = 1) -> Callable[[dict[str, Any]], Any]:
    """factor sqrt(d1) alpha eps_max^exponent (``lemma5._linear``)."""

    def bound(instance: dict[str, Any]) -> Any:
        d1, alpha, e = (scalar(instance[k]) for k in ("d1", "alpha", "eps_max"))
        return num(factor) * sqrt(d1) * alpha * power(e, exponent)

    return bound


BOUNDS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "as-stated": linear(4.0),
    "via-lemma8": lemma8_bound(1.0, 2.0),
    "quadratic": linear(4.0, 2),
}
