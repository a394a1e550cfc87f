"""Forward-mode derivatives over enclosures: the mean-value form of a difference.

A :class:`Dual` carries a value v and a directional derivative d, both enclosures of a
:class:`~sltcheck.numerics.balls.Backend`. Evaluating f on duals whose values enclose the segment
x + [0, 1] h and whose derivatives are h encloses f'(x + t h)[h] for every t in [0, 1], hence (mean
value theorem, f smooth along the segment) f(x + h) - f(x) itself. Unlike the difference of two
enclosures of f, this does not blur when h is small: a perturbation eps h is divided out exactly.
"""

from __future__ import annotations

from typing import Any

from sltcheck.numerics.balls import Backend


class Dual:
    __slots__ = ("d", "v")

    def __init__(self, v: Any, d: Any) -> None:
        self.v, self.d = v, d

    @staticmethod
    def _lift(other: Any) -> Dual:
        return other if isinstance(other, Dual) else Dual(other, 0)

    def __add__(self, other: Any) -> Dual:
        o = self._lift(other)
        return Dual(self.v + o.v, self.d + o.d)

    __radd__ = __add__

    def __neg__(self) -> Dual:
        return Dual(-self.v, -self.d)

    def __sub__(self, other: Any) -> Dual:
        return self + (-self._lift(other))

    def __rsub__(self, other: Any) -> Dual:
        return self._lift(other) - self

    def __mul__(self, other: Any) -> Dual:
        o = self._lift(other)
        return Dual(self.v * o.v, self.d * o.v + self.v * o.d)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Dual:
        o = self._lift(other)
        q = self.v / o.v
        return Dual(q, (self.d - q * o.d) / o.v)

    def __rtruediv__(self, other: Any) -> Dual:
        return self._lift(other) / self


def exp(arith: Backend, x: Any) -> Any:
    """exp of a dual or of a plain enclosure."""
    if isinstance(x, Dual):
        e = arith.exp(x.v)
        return Dual(e, e * x.d)
    return arith.exp(x)
