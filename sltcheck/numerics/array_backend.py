"""The ``arrays`` backend: the branch-and-bound's enclosures over thousands of boxes at once.

:class:`ArrayBackend` gives the operations of :class:`~sltcheck.numerics.balls.Backend` on
:class:`~sltcheck.numerics.interval_arrays.Intervals` of one shape (one element per box), so a family's
``enclose``, written once against the backend interface, encloses a whole batch of boxes in a few
numpy passes per operation instead of one arb call per box and operation. Its ends come back as
arrays (:meth:`ArrayBackend.lower`, :meth:`ArrayBackend.upper`: NaN read as -inf and +inf, an enclosure
that proves nothing). Everything it computes rests on IEEE 754's correctly rounded +, -, x, / and sqrt,
each end moved outward (:mod:`sltcheck.numerics.interval_arrays`; exp, expm1 and log are built from
those, not taken from libm).

Only boxes: a family's point evaluations (the lower bounds, the climb, the counterexample) stay on
the scalar backend :attr:`ArrayBackend.scalar` (arb where python-flint is installed, else mpmath),
and the exact-ends interface of the single-instance enclosures is not offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sltcheck.numerics import interval_arrays as ia
from sltcheck.numerics.balls import Backend
from sltcheck.numerics.interval_arrays import Intervals


def _intervals(x: Any) -> Intervals:
    return x if isinstance(x, Intervals) else Intervals(x)


class ArrayBackend(Backend):
    name = "arrays"

    def __init__(self, scalar: Backend) -> None:
        self._scalar = scalar

    @property
    def scalar(self) -> Backend:
        return self._scalar

    def interval(self, low: Any, high: Any) -> Intervals:
        return Intervals(np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64))

    def exp(self, x: Any) -> Intervals:
        return ia.exp(_intervals(x))

    def expm1(self, x: Any) -> Intervals:
        return ia.expm1(_intervals(x))

    def sqrt(self, x: Any) -> Intervals:
        return ia.sqrt(_intervals(x))

    def log(self, x: Any) -> Intervals:
        return ia.log(_intervals(x))

    def lower(self, x: Any) -> Any:  # an array of floats, one per box
        low = _intervals(x).lo
        return np.where(np.isnan(low), -np.inf, low)

    def upper(self, x: Any) -> Any:
        return ia.upper_ends(_intervals(x))

    def is_point(self, x: Any) -> bool:
        x = _intervals(x)
        return bool(np.all(x.lo == x.hi))

    def owns(self, x: Any) -> bool:
        return isinstance(x, Intervals)

    def magnitude(self, x: Any) -> tuple[Any, Any]:
        lo, hi = self.lower(x), self.upper(x)
        low = np.where(lo > 0, lo, np.where(hi < 0, -hi, 0.0))
        return low, np.maximum(np.abs(lo), np.abs(hi))

    def hull(self, values: Sequence[Any]) -> Intervals:
        return Intervals(np.minimum.reduce([self.lower(v) for v in values]),
                         np.maximum.reduce([self.upper(v) for v in values]))

    def unit_vector(self, index: int, size: int) -> Intervals:
        """e_index as intervals of shape (size, 1): a dual number's directions along the first axis, the
        boxes along the second (a (size, N) derivative times an (N,) value broadcasts)."""
        column = np.eye(size)[index][:, None]
        return Intervals(column, column)

    def where(self, condition: Any, a: Any, b: Any) -> Intervals:
        a, b = _intervals(a), _intervals(b)
        return Intervals(np.where(condition, a.lo, b.lo), np.where(condition, a.hi, b.hi))

    def intersect(self, a: Any, b: Any) -> Intervals:
        lo, hi = np.maximum(self.lower(a), self.lower(b)), np.minimum(self.upper(a), self.upper(b))
        keep = lo <= hi  # two true enclosures always meet; keep one rather than fail
        return Intervals(np.where(keep, lo, self.lower(a)), np.where(keep, hi, self.upper(a)))

    def number(self, value: Any) -> Any:
        raise NotImplementedError("the arrays backend encloses boxes only; exact ends are the scalar backend's")

    def from_ends(self, low: Any, high: Any) -> Any:
        raise NotImplementedError("the arrays backend encloses boxes only; exact ends are the scalar backend's")

    def ends(self, x: Any) -> tuple[Any, Any]:
        raise NotImplementedError("the arrays backend encloses boxes only; exact ends are the scalar backend's")
