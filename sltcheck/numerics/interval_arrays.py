"""Vectorised outward-rounded interval arithmetic on numpy arrays: many boxes at once.

An :class:`Intervals` holds two float64 arrays ``lo <= hi`` of one shape; every real the
operations produce lies between them. Each ``+ - * /`` is computed in IEEE round-to-nearest
(error <= 1/2 ulp) and its ends are then moved one ulp outward (``np.nextafter``), which
contains the exact result. The transcendental functions come from numpy, which documents no
correctly rounded result: their ends are moved out by ``LIBM_RELATIVE`` (2^-40, about
4,000 ulps: far above the few ulps numpy's and glibc's exp, expm1, cos and sin are measured
to err by; ``tests/test_interval_arrays.py`` checks containment against mpmath). ``sqrt`` is
correctly rounded by IEEE 754, so one ulp suffices.

Sums are taken one term at a time (:func:`total`), never by ``np.sum``'s pairwise reduction,
so that every addition is rounded outward. A NaN end (0 x inf, inf - inf) propagates through every
later operation (``np.minimum``/``np.maximum``, never ``fmin``/``fmax``, which would drop it), and
:func:`upper_ends` reads it as +inf: such an enclosure proves nothing, never something false.

The same formulas run on plain float64 arrays (the point evaluation a search needs): every
helper here (:func:`exp`, :func:`expm1`, :func:`total`, ...) takes either.
"""

from __future__ import annotations

from typing import Any

import numpy as np

LIBM_RELATIVE = 2.0**-40
_TINY = 2.0**-1000  # an absolute widening that keeps zero results of libm functions honest


# Moving an end out by 2^-51 of itself (plus the smallest normal number, for subnormal ends) is at
# least one ulp more than the 1/2 ulp the operation's own rounding and this subtraction's can cost: a
# few fast vector passes instead of np.nextafter's slow one. NaN propagates (see the module's note).
_OUTWARD = 2.0**-51
_FLOOR = 2.0**-1022


def _down(x: np.ndarray) -> np.ndarray:
    return x - (np.abs(x) * _OUTWARD + _FLOOR)


def _up(x: np.ndarray) -> np.ndarray:
    return x + (np.abs(x) * _OUTWARD + _FLOOR)


class Intervals:
    """Intervals [lo, hi], elementwise, with numpy's broadcasting and indexing."""

    __slots__ = ("hi", "lo")
    __array_ufunc__ = None  # ndarray (op) Intervals defers to Intervals' reflected operators

    def __init__(self, lo: Any, hi: Any | None = None) -> None:
        self.lo = np.asarray(lo, dtype=np.float64)
        self.hi = self.lo if hi is None else np.asarray(hi, dtype=np.float64)

    @property
    def shape(self) -> tuple[int, ...]:
        return np.broadcast_shapes(self.lo.shape, self.hi.shape)

    def __getitem__(self, index: Any) -> Intervals:
        return Intervals(np.broadcast_to(self.lo, self.shape)[index], np.broadcast_to(self.hi, self.shape)[index])

    def __repr__(self) -> str:
        return f"Intervals(lo={self.lo!r}, hi={self.hi!r})"

    def __neg__(self) -> Intervals:
        return Intervals(-self.hi, -self.lo)

    def __add__(self, other: Any) -> Intervals:
        o = _as(other)
        with np.errstate(invalid="ignore", over="ignore"):
            return Intervals(_down(self.lo + o.lo), _up(self.hi + o.hi))

    __radd__ = __add__

    def __sub__(self, other: Any) -> Intervals:
        o = _as(other)
        with np.errstate(invalid="ignore", over="ignore"):
            return Intervals(_down(self.lo - o.hi), _up(self.hi - o.lo))

    def __rsub__(self, other: Any) -> Intervals:
        return _as(other) - self

    def __mul__(self, other: Any) -> Intervals:
        o = _as(other)
        with np.errstate(invalid="ignore", over="ignore"):  # 0 x inf is NaN, and propagates
            if o.lo is o.hi:  # a point: two products suffice
                a, b = self.lo * o.lo, self.hi * o.lo
                return Intervals(_down(np.minimum(a, b)), _up(np.maximum(a, b)))
            if self.lo is self.hi:
                a, b = o.lo * self.lo, o.hi * self.lo
                return Intervals(_down(np.minimum(a, b)), _up(np.maximum(a, b)))
            products = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
            low = np.minimum(np.minimum(products[0], products[1]), np.minimum(products[2], products[3]))
            high = np.maximum(np.maximum(products[0], products[1]), np.maximum(products[2], products[3]))
            return Intervals(_down(low), _up(high))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Intervals:
        """Division by an interval of positive numbers (a denominator that may reach 0 gives (-inf, inf))."""
        o = _as(other)
        positive = o.lo > 0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            quotients = (self.lo / o.lo, self.lo / o.hi, self.hi / o.lo, self.hi / o.hi)
        low = np.minimum(np.minimum(quotients[0], quotients[1]), np.minimum(quotients[2], quotients[3]))
        high = np.maximum(np.maximum(quotients[0], quotients[1]), np.maximum(quotients[2], quotients[3]))
        return Intervals(np.where(positive, _down(low), -np.inf), np.where(positive, _up(high), np.inf))

    def __rtruediv__(self, other: Any) -> Intervals:
        return _as(other) / self


def _as(value: Any) -> Intervals:
    return value if isinstance(value, Intervals) else Intervals(value)


def _is_jet(value: Any) -> bool:
    return type(value).__name__ == "Jet"  # sltcheck.numerics.jets.Jet (which imports this module)


def is_intervals(value: Any) -> bool:
    return isinstance(value, Intervals)


def _libm(fn: Any, x: Intervals) -> Intervals:
    """An increasing libm function over x, its ends moved out by LIBM_RELATIVE (and _TINY)."""
    with np.errstate(over="ignore"):
        low, high = fn(x.lo), fn(x.hi)
    return Intervals(_down(low - np.abs(low) * LIBM_RELATIVE - _TINY), _up(high + np.abs(high) * LIBM_RELATIVE + _TINY))


def exp(x: Any) -> Any:
    if _is_jet(x):
        from sltcheck.numerics import jets

        return jets.exp(x)
    if isinstance(x, Intervals):
        result = _libm(np.exp, x)
        return Intervals(np.maximum(result.lo, 0.0), result.hi)
    return np.exp(x)


def expm1(x: Any) -> Any:
    if _is_jet(x):
        from sltcheck.numerics import jets

        return jets.expm1(x)
    if isinstance(x, Intervals):
        result = _libm(np.expm1, x)
        return Intervals(np.maximum(result.lo, -1.0), result.hi)
    return np.expm1(x)


def square(x: Any) -> Any:
    """x^2 (tighter than x * x where x straddles 0)."""
    if isinstance(x, Intervals):
        low_abs = np.where((x.lo <= 0) & (x.hi >= 0), 0.0, np.minimum(np.abs(x.lo), np.abs(x.hi)))
        high_abs = np.maximum(np.abs(x.lo), np.abs(x.hi))
        return Intervals(_down(low_abs * low_abs), _up(high_abs * high_abs))
    return x * x


def sqrt(x: Any) -> Any:
    """The square root of the non-negative part of x (IEEE's sqrt is correctly rounded)."""
    if isinstance(x, Intervals):
        return Intervals(_down(np.sqrt(np.maximum(x.lo, 0.0))), _up(np.sqrt(np.maximum(x.hi, 0.0))))
    return np.sqrt(x)


def relu(x: Any) -> Any:
    if _is_jet(x):
        from sltcheck.numerics import jets

        return jets.relu(x)
    if isinstance(x, Intervals):
        return Intervals(np.maximum(x.lo, 0.0), np.maximum(x.hi, 0.0))
    return np.maximum(x, 0.0)


def clip(x: Any, low: float, high: float) -> Any:
    """x known to lie in [low, high]: its ends moved inside, a NaN end replaced by the limit."""
    if _is_jet(x):
        return type(x)(clip(x.value, low, high), x.grad)
    if isinstance(x, Intervals):
        return Intervals(np.where(np.isnan(x.lo), low, np.clip(x.lo, low, high)),
                         np.where(np.isnan(x.hi), high, np.clip(x.hi, low, high)))
    return np.clip(x, low, high)


def intersect(a: Any, b: Any) -> Any:
    """Two enclosures of the same values: their intersection (a NaN end gives way to the other's)."""
    if _is_jet(a):
        return type(a)(intersect(a.value, b.value), intersect(a.grad, b.grad))
    return Intervals(np.fmax(a.lo, b.lo), np.fmin(a.hi, b.hi))


def all_finite(x: Any) -> bool:
    if _is_jet(x):
        return all_finite(x.value) and all_finite(x.grad)
    if isinstance(x, Intervals):
        return bool(np.all(np.isfinite(x.lo)) and np.all(np.isfinite(x.hi)))
    return bool(np.all(np.isfinite(x)))


def relu_change(x: Any, dx: Any) -> Any:
    """ReLU(x + dx) - ReLU(x): dx where both are surely positive, 0 where both are surely not, else between
    0 and dx (ReLU is increasing and 1-Lipschitz)."""
    if _is_jet(x):
        from sltcheck.numerics import jets

        return jets.relu_change(x, dx)
    if not isinstance(x, Intervals):
        return relu(x + dx) - relu(x)
    moved = x + dx
    on = (x.lo >= 0) & (moved.lo >= 0)
    off = (x.hi <= 0) & (moved.hi <= 0)
    low = np.where(on, dx.lo, np.where(off, 0.0, np.minimum(dx.lo, 0.0)))
    high = np.where(on, dx.hi, np.where(off, 0.0, np.maximum(dx.hi, 0.0)))
    return Intervals(low, high)


def upper_ends(x: Any) -> np.ndarray:
    """The upper ends of x (the values of a float array), NaN read as +inf."""
    high = x.hi if isinstance(x, Intervals) else np.asarray(x)
    return np.where(np.isnan(high), np.inf, high)


def absolute_max(x: Any) -> np.ndarray:
    """max |x| over each interval (the value itself for floats)."""
    if isinstance(x, Intervals):
        return np.maximum(np.abs(x.lo), np.abs(x.hi))
    return np.abs(x)


def _periodic_extreme(x: Intervals, offset: float) -> np.ndarray:
    """Whether [lo, hi] (widened) contains offset + 2 pi k for some integer k."""
    two_pi = 2 * np.pi
    k = np.ceil((x.lo - offset) / two_pi - 1e-9)
    return k * two_pi + offset <= x.hi + 1e-9 * (1 + np.abs(x.hi))


def cos(x: Any) -> Any:
    """cos over each interval: the ends' values, and +-1 where a maximum or minimum lies inside."""
    if _is_jet(x):
        from sltcheck.numerics import jets

        return jets.cos(x)
    if not isinstance(x, Intervals):
        return np.cos(x)
    a, b = np.cos(x.lo), np.cos(x.hi)
    low = np.where(_periodic_extreme(x, np.pi), -1.0, np.minimum(a, b) - LIBM_RELATIVE)
    high = np.where(_periodic_extreme(x, 0.0), 1.0, np.maximum(a, b) + LIBM_RELATIVE)
    wide = (x.hi - x.lo) >= 2 * np.pi
    return Intervals(np.where(wide, -1.0, np.maximum(low, -1.0)), np.where(wide, 1.0, np.minimum(high, 1.0)))


def sin(x: Any) -> Any:
    """sin x = cos(x - pi/2), the shift rounded outward."""
    if _is_jet(x):
        from sltcheck.numerics import jets

        return jets.sin(x)
    if not isinstance(x, Intervals):
        return np.sin(x)
    shifted = x - np.pi / 2
    result = cos(Intervals(_down(shifted.lo - 1e-15), _up(shifted.hi + 1e-15)))
    # the shift by a rounded pi/2 costs up to ~1e-15 in the argument: cos is 1-Lipschitz, so widen by that
    return Intervals(np.maximum(result.lo - 2e-15, -1.0), np.minimum(result.hi + 2e-15, 1.0))


def total(x: Any, axis: int) -> Any:
    """The sum along ``axis``, one rounded-outward addition at a time."""
    if not isinstance(x, Intervals) and not _is_jet(x):
        return np.sum(x, axis=axis)
    count = x.shape[axis]
    result = x[(slice(None),) * (axis % len(x.shape)) + (0,)]
    for index in range(1, count):
        result = result + x[(slice(None),) * (axis % len(x.shape)) + (index,)]
    return result


def contract(a: Any, b: Any) -> Any:
    """a @ b for a (..., k) and a constant-shaped b (k, m): sum_k a[..., k, None] * b[k]."""
    if not isinstance(a, Intervals) and not isinstance(b, Intervals) and not _is_jet(a):
        return a @ b
    k = a.shape[-1]
    result = a[..., 0, None] * b[0]
    for index in range(1, k):
        result = result + a[..., index, None] * b[index]
    return result


def hull_of(values: np.ndarray, widen: float = 0.0) -> Intervals:
    """Point values as intervals, each widened by ``widen`` relative (for inputs known to that accuracy)."""
    values = np.asarray(values, dtype=np.float64)
    margin = np.abs(values) * widen
    return Intervals(_down(values - margin), _up(values + margin))
