"""Arguments that prove measured <= bound on a box where no quotient of enclosures can.

Where a bound is attained, bound - measured is exactly 0 on a set of the family, and every
enclosure of measured / bound rounded outward on a box that touches that set reaches above 1: the
quotient never closes such a box, however small. A family's :class:`Argument` decides those boxes
instead; each returns True only when it proves bound - measured >= 0 at every instance of the box
(then the box's upper end is 1, see :func:`sltcheck.certify.bnb.evaluate_box`), and decides nothing
else: a box it cannot prove is split as before. Three kinds, knowing no statement by name:

- **chain slack** (:func:`slack_holds`): the family writes bound - measured >= sum_k prod_j f_kj,
  its proof's chain term by term (each relaxation an inequality whose slack is kept as a term of
  its own), every factor f_kj enclosed separately as a :class:`Factor`; proved when every factor's
  lower end is >= 0 (or the term has a factor exactly 0). An exact zero survives: a factor that
  vanishes on the box (|t| on a box around t = 0, 1 - u on a box that reaches u = 1) has the lower
  end 0 exactly (:func:`magnitude`, :func:`room`), and a product is never formed as one ball, whose
  midpoint-radius form would dip below 0.
- **exact pieces** (:class:`PiecewiseLinear`, :func:`dominated`): a side that is a continuous
  piecewise-linear function of one coordinate with finitely many rational breakpoints is decided in
  exact rational arithmetic: f <= c g on an interval holds iff it holds at the interval's ends, at
  every breakpoint of f and g inside it and where the pieces of a maximum cross.
- **monotone corners** (:func:`increasing_range`): a quantity increasing in every input (argued by
  the family) is enclosed over a box by its values at the box's two corners, each a point
  evaluation: an exponential over a wide box stays two narrow enclosures instead of one ball that
  spans many orders of magnitude (and, midpoint-radius, reaches below 0).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath

from sltcheck.numerics.balls import Backend

# The box as the arguments see it: each dimension's (low, high) float ends, exact.
Ends = dict[str, tuple[float, float]]


@dataclass(frozen=True)
class Argument:
    """``proves(arith, values, ends)``: True only if bound - measured >= 0 at every instance of the
    box (``values``: one enclosure per dimension, as ``Family.enclose`` gets them; ``ends``: the box's
    exact float ends). ``name`` is recorded with the volume it proves."""

    name: str
    proves: Callable[[Backend, dict[str, Any], Ends], bool]


# --- chain slack ------------------------------------------------------------------------------------


def _down(value: Any) -> float:
    """A float <= value (an mpf or Fraction, exact comparison)."""
    if isinstance(value, mpmath.mpf) and not mpmath.isfinite(value):
        return -math.inf if value < 0 or mpmath.isnan(value) else math.inf
    out = float(value)
    return out if out <= value else math.nextafter(out, -math.inf)


def _up(value: Any) -> float:
    """A float >= value."""
    if isinstance(value, mpmath.mpf) and not mpmath.isfinite(value):
        return math.inf if value > 0 or mpmath.isnan(value) else -math.inf
    out = float(value)
    return out if out >= value else math.nextafter(out, math.inf)


@dataclass(frozen=True)
class Factor:
    """One factor of a slack term: ``low`` <= its value at every instance of the box <= ``high``."""

    low: float
    high: float

    @property
    def zero(self) -> bool:
        return self.low == 0.0 == self.high


def enclosed(arith: Backend, x: Any) -> Factor:
    """A factor from an enclosure, its ends exact (no ulp moved outward past 0)."""
    if not isinstance(x, (int, float)):
        lo, hi = arith.ends(x)
        return Factor(_down(lo), _up(hi))
    return Factor(float(x), float(x))


def magnitude(arith: Backend, x: Any) -> Factor:
    """|x|: never below 0, and exactly 0 at the low end where x's enclosure reaches 0."""
    if isinstance(x, (int, float)):
        return Factor(abs(float(x)), abs(float(x)))
    lo, hi = arith.ends(x)
    if lo >= 0:
        return Factor(_down(lo), _up(hi))
    if hi <= 0:
        return Factor(_down(-hi), _up(-lo))
    return Factor(0.0, _up(max(-lo, hi)))


def room(limit: float, low: float, high: float) -> Factor:
    """limit - v for every v in [low, high] (exact rational differences, rounded outward): the
    distance from a box's coordinate to a face of the family, exactly 0 where the box reaches it."""
    return Factor(_down(Fraction(limit) - Fraction(high)), _up(Fraction(limit) - Fraction(low)))


def constant(value: float) -> Factor:
    return Factor(float(value), float(value))


def slack_holds(terms: Iterable[Sequence[Factor]]) -> bool:
    """Whether sum_k prod_j f_kj >= 0 is proved: in every term a factor exactly 0, or every factor
    >= 0 (a term whose factors' signs are not all known proves nothing)."""
    return all(any(f.zero for f in term) or all(f.low >= 0 for f in term) for term in terms)


# --- exact pieces -------------------------------------------------------------------------------------


def exact(value: float | int | Fraction) -> Fraction:
    """A float (or int) as the rational it is, exactly."""
    return value if isinstance(value, Fraction) else Fraction(value)


@dataclass(frozen=True)
class PiecewiseLinear:
    """A continuous function of one variable, linear between consecutive ``breaks`` (rationals,
    sorted) and outside them, evaluated exactly by ``value``."""

    breaks: tuple[Fraction, ...]
    value: Callable[[Fraction], Fraction]

    def inside(self, low: Fraction, high: Fraction) -> list[Fraction]:
        """The breakpoints strictly between ``low`` and ``high``."""
        return list(self.breaks[bisect.bisect_right(self.breaks, low):bisect.bisect_left(self.breaks, high)])

    def maximum(self, other: PiecewiseLinear) -> PiecewiseLinear:
        """max(self, other): breakpoints of both and every crossing between them (exact)."""
        points = sorted(set(self.breaks) | set(other.breaks)) or [Fraction(0)]

        def gap(x: Fraction) -> Fraction:
            return self.value(x) - other.value(x)

        # on each piece (two of them unbounded) the gap is linear: its root, where inside, is a break
        pieces = [(points[0] - 1, points[0]), *itertools.pairwise(points)]
        pieces.append((points[-1], points[-1] + 1))
        crossings = []
        for index, (a, b) in enumerate(pieces):
            ga, gb = gap(a), gap(b)
            if ga == gb:
                continue  # parallel: no crossing (or equal on the whole piece)
            root = a + (b - a) * ga / (ga - gb)
            leftmost, rightmost = index == 0, index == len(pieces) - 1
            if (leftmost or root > a) and (rightmost or root < b) and (root < b or not leftmost) \
                    and (root > a or not rightmost):
                crossings.append(root)
        breaks = tuple(sorted(set(points) | set(crossings)))
        first, second = self.value, other.value
        return PiecewiseLinear(breaks, lambda x: max(first(x), second(x)))


def distance_to(points: Sequence[Fraction]) -> PiecewiseLinear:
    """x -> min over the finite set ``points`` of |x - p|: breakpoints at the points and halfway
    between consecutive ones (where the nearest point changes)."""
    ordered = sorted(set(points))
    if not ordered:
        raise ValueError("points must hold at least one rational, got none")
    middles = [(a + b) / 2 for a, b in itertools.pairwise(ordered)]

    def value(x: Fraction) -> Fraction:
        i = bisect.bisect_left(ordered, x)
        near = [ordered[k] for k in (i - 1, i) if 0 <= k < len(ordered)]
        return min(abs(x - p) for p in near)

    return PiecewiseLinear(tuple(sorted(ordered + middles)), value)


def dominated(f: PiecewiseLinear, g: PiecewiseLinear, scale: Fraction, low: float, high: float) -> bool:
    """Whether f(x) <= scale g(x) for every x in [low, high], decided exactly: both are linear
    between consecutive breakpoints, so it suffices at the ends and at the breakpoints between."""
    lo, hi = exact(low), exact(high)
    for x in [lo, *sorted(set(f.inside(lo, hi)) | set(g.inside(lo, hi))), hi]:
        if f.value(x) > scale * g.value(x):
            return False
    return True


# --- monotone corners ---------------------------------------------------------------------------------


def increasing_range(arith: Backend, at: Callable[..., Any], inputs: Sequence[Any],
                     floors: Sequence[float | None]) -> tuple[float, float]:
    """(a float <= f, a float >= f) over the box of ``inputs`` (enclosures) for an ``f`` increasing in
    every input: f at the low corner and at the high corner, each a point evaluation ``at(arith,
    *points)``. ``floors[i]``, where not None, is the least value input i takes (its low end is
    raised to it: an error size's enclosure may dip below 0)."""
    lows = [arith.point(max(arith.lower(x), floor) if floor is not None else arith.lower(x))
            for x, floor in zip(inputs, floors, strict=True)]
    highs = [arith.point(arith.upper(x)) for x in inputs]
    return arith.lower(at(arith, *lows)), arith.upper(at(arith, *highs))


def ratio_enclosure(arith: Backend, measured: tuple[float, float], bound: tuple[float, float]) -> Any:
    """measured / bound from their float ranges (bound > 0), as one enclosure of the ratio (the
    family's candidate is then (this, 1)): never a quotient of two wide balls."""
    m_lo, m_hi = max(measured[0], 0.0), measured[1]
    b_lo, b_hi = bound
    if not b_lo > 0 or math.isinf(m_hi):
        return arith.interval(0.0, math.inf) if b_lo > 0 else arith.interval(-math.inf, math.inf)
    low = _down(Fraction(m_lo) / Fraction(b_hi)) if math.isfinite(b_hi) else 0.0
    return arith.interval(low, _up(Fraction(m_hi) / Fraction(b_lo)))
