"""Forward-mode derivatives over enclosures: the mean-value form of a difference.

A :class:`Dual` carries a value v and a directional derivative d, both enclosures of a
:class:`~sltcheck.numerics.balls.Backend`. Evaluating f on duals whose values enclose the segment
x + [0, 1] h and whose derivatives are h encloses f'(x + t h)[h] for every t in [0, 1], hence (mean
value theorem, f smooth along the segment) f(x + h) - f(x) itself. Unlike the difference of two
enclosures of f, this does not blur when h is small: a perturbation eps h is divided out exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sltcheck.numerics.balls import Backend


class Dual:
    # the derivative multiplies from the left: a numpy array of directions times an mpmath interval is
    # elementwise, the other way round mpmath would read a two-element array as an interval's ends
    __slots__ = ("d", "v")
    __array_ufunc__ = None  # ndarray (op) Dual defers to Dual's reflected operators, not an object array

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
        return Dual(self.v * o.v, self.d * o.v + o.d * self.v)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Dual:
        o = self._lift(other)
        q = self.v / o.v
        return Dual(q, (self.d - o.d * q) / o.v)

    def __rtruediv__(self, other: Any) -> Dual:
        return self._lift(other) / self


def exp(arith: Backend, x: Any) -> Any:
    """exp of a dual or of a plain enclosure."""
    if isinstance(x, Dual):
        e = arith.exp(x.v)
        return Dual(e, x.d * e)
    return arith.exp(x)


class Tangents:
    """A backend whose exp also takes duals (the rest is the wrapped backend's): a function written against
    the backend interface then carries derivatives through its exp."""

    def __init__(self, arith: Backend) -> None:
        self.arith = arith

    def exp(self, x: Any) -> Any:
        return exp(self.arith, x)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.arith, name)


def centred(arith: Backend, values: dict[str, Any], names: Sequence[str],
            fn: Callable[[Backend, dict[str, Any]], Sequence[Any]]) -> list[Any]:
    """Each enclosure ``fn`` gives over the box ``values``, intersected with its mean-value (centred) form
    in the coordinates ``names``: f(m) + sum_i df/dx_i(box) (x_i - m_i), m the box's midpoint in them (the
    others stay intervals in both terms). Its excess over the true range shrinks with the square of the
    box's width, the plain enclosure's only with the width: what decides boxes near a tight supremum.

    Sound when ``fn`` uses only +, -, x, / and the backend's exp on the coordinates (the operations duals
    carry, :class:`Tangents`); an enclosure ``fn`` reads from outside (over the box) is an independent
    variable held fixed, the same in both calls, which only widens the form."""
    count = len(names)
    tangent = {**values, **{name: Dual(values[name], arith.unit_vector(i, count)) for i, name in enumerate(names)}}
    over_box = fn(Tangents(arith), tangent)  # type: ignore[arg-type]
    middle = {name: arith.point(arith.lower(values[name]) + (arith.upper(values[name]) - arith.lower(values[name])) / 2)
              for name in names}
    at_middle = fn(arith, {**values, **middle})
    out = []
    for box_value, middle_value in zip(over_box, at_middle, strict=True):
        if not isinstance(box_value, Dual) or isinstance(box_value.d, int | float):  # no dependence on names
            out.append(box_value.v if isinstance(box_value, Dual) else box_value)
            continue
        form = middle_value
        for i, name in enumerate(names):
            form = form + box_value.d[i] * (values[name] - middle[name])
        out.append(arith.intersect(form, box_value.v))
    return out


def refined(arith: Backend, values: dict[str, Any], coarse: Sequence[Any],
            fine: Callable[[dict[str, Any]], Sequence[Any]], above: float) -> list[Any]:
    """``coarse`` enclosures over the box ``values`` where every one of them stays within [-above, above] (what
    a caller decides with: |.| of each, as the engine's quotients; the rest of the work would not change its
    decision), else ``fine(values)``: a tighter, costlier enclosure of the same numbers. On the ``arrays``
    backend box by box: ``fine`` sees only the boxes of the batch that need it (every field of ``values``
    indexed alike; it must compute anything batch-shaped from them)."""
    uppers = [arith.magnitude(c)[1] for c in coarse]
    if arith.name != "arrays":
        return list(coarse) if all(u <= above for u in uppers) else list(fine(values))
    count = next(iter(values.values())).shape[0]
    need = np.zeros(count, dtype=bool)
    for upper in uppers:
        need |= ~(np.broadcast_to(upper, (count,)) <= above)  # NaN counts as above
    if not need.any():
        return list(coarse)
    if need.all():
        return list(fine(values))
    where = np.flatnonzero(need)
    tight = fine({name: value[where] for name, value in values.items()})
    out = []
    for loose, better in zip(coarse, tight, strict=True):
        low: Any = np.array(np.broadcast_to(arith.lower(loose), (count,)))
        high: Any = np.array(np.broadcast_to(arith.upper(loose), (count,)))
        low[where], high[where] = arith.lower(better), arith.upper(better)
        out.append(arith.interval(low, high))
    return out
