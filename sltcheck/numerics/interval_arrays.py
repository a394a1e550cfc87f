"""Vectorised outward-rounded interval arithmetic on numpy arrays: many boxes at once.

An :class:`Intervals` holds two float64 arrays ``lo <= hi`` of one shape; every real the
operations produce lies between them. Each ``+ - * /`` is computed in IEEE round-to-nearest
(error <= 1/2 ulp) and its ends are then moved one ulp outward (``np.nextafter``), which
contains the exact result. The transcendental functions come from numpy, which documents no
correctly rounded result, so :func:`exp`, :func:`expm1` and :func:`log` are not taken from it:
they are evaluated from +, -, x (range reduction by an enclosed ln 2, a Taylor polynomial in
interval Horner form, its remainder bounded), so they rest on IEEE 754 alone. Only :func:`cos` and
:func:`sin` (the task space of the input-space brackets) take numpy's values with their ends moved out
by ``LIBM_RELATIVE`` (2^-40, about 4,000 ulps: far above the few ulps numpy's and glibc's cos and sin
are measured to err by; ``tests/test_interval_arrays.py`` checks containment against mpmath): a
declared assumption. ``sqrt`` is correctly rounded by IEEE 754, so one ulp suffices.

Sums are taken one term at a time (:func:`total`), never by ``np.sum``'s pairwise reduction,
so that every addition is rounded outward. A NaN end (0 x inf, inf - inf) propagates through every
later operation (``np.minimum``/``np.maximum``, never ``fmin``/``fmax``, which would drop it), and
:func:`upper_ends` reads it as +inf: such an enclosure proves nothing, never something false.

The same formulas run on plain float64 arrays (the point evaluation a search needs): every
helper here (:func:`exp`, :func:`expm1`, :func:`total`, ...) takes either.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

LIBM_RELATIVE = 2.0**-40


# Moving an end out by 2^-51 of itself (plus the smallest normal number, for subnormal ends) is at
# least one ulp more than the 1/2 ulp the operation's own rounding and this subtraction's can cost: a
# few fast vector passes instead of np.nextafter's slow one. NaN propagates (see the module's note).
_OUTWARD = 2.0**-51
_FLOOR = 2.0**-1022


def _down(x: np.ndarray) -> np.ndarray:
    margin = np.abs(x, out=np.empty(np.shape(x)))  # x - (|x| 2^-51 + 2^-1022) in one buffer: the hot path
    margin *= _OUTWARD
    margin += _FLOOR
    return np.subtract(x, margin, out=margin)


def _up(x: np.ndarray) -> np.ndarray:
    margin = np.abs(x, out=np.empty(np.shape(x)))
    margin *= _OUTWARD
    margin += _FLOOR
    return np.add(x, margin, out=margin)


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
        if _foreign(other):
            return NotImplemented
        o = _as(other)
        with np.errstate(invalid="ignore", over="ignore"):
            return Intervals(_down(self.lo + o.lo), _up(self.hi + o.hi))

    __radd__ = __add__

    def __sub__(self, other: Any) -> Intervals:
        if _foreign(other):
            return NotImplemented
        o = _as(other)
        with np.errstate(invalid="ignore", over="ignore"):
            return Intervals(_down(self.lo - o.hi), _up(self.hi - o.lo))

    def __rsub__(self, other: Any) -> Intervals:
        if _foreign(other):
            return NotImplemented
        return _as(other) - self

    def __mul__(self, other: Any) -> Intervals:
        if _foreign(other):
            return NotImplemented
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
        if _foreign(other):
            return NotImplemented
        o = _as(other)
        positive = o.lo > 0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            quotients = (self.lo / o.lo, self.lo / o.hi, self.hi / o.lo, self.hi / o.hi)
        low = np.minimum(np.minimum(quotients[0], quotients[1]), np.minimum(quotients[2], quotients[3]))
        high = np.maximum(np.maximum(quotients[0], quotients[1]), np.maximum(quotients[2], quotients[3]))
        return Intervals(np.where(positive, _down(low), -np.inf), np.where(positive, _up(high), np.inf))

    def __rtruediv__(self, other: Any) -> Intervals:
        if _foreign(other):
            return NotImplemented
        return _as(other) / self


def _foreign(value: Any) -> bool:
    """An operand of another number type (a dual, a jet): its reflected operator decides."""
    return not isinstance(value, Intervals | int | float | np.ndarray | np.generic)


def _as(value: Any) -> Intervals:
    return value if isinstance(value, Intervals) else Intervals(value)


# the forms built on intervals, by class name: their modules import this one, so they cannot be imported here
JET, AFFINE = "Jet", "Affine"
FORM_MODULES = {JET: "sltcheck.numerics.jets", AFFINE: "sltcheck.numerics.affine_arrays"}


def _is_jet(value: Any) -> bool:
    return type(value).__name__ == JET


def _is_affine(value: Any) -> bool:
    return type(value).__name__ == AFFINE


def _form(value: Any) -> Any:
    """The module of a form built on intervals (jets, affine forms), whose functions take it; else None. A form
    exists only once its module is imported, so ``sys.modules`` holds it (no import on this hot path)."""
    name = FORM_MODULES.get(type(value).__name__)
    return None if name is None else sys.modules[name]


# exp from IEEE +, -, x alone: x = k ln 2 + r with |r| <= 0.35 (r enclosed: ln 2 between two floats), exp(r)
# by its Taylor polynomial of degree _DEGREE evaluated by Horner's rule at r's two ends (increasing in r),
# each moved out by _HORNER. Higham (Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. (5.3)):
# |error| <= gamma_2n sum |c_i| |r|^i <= 2n u e^|r|, plus the rounded coefficients' u; over e^r >= e^-0.36
# that is < 7e-15, and _HORNER = 2^-44 ~ 5.7e-14. The Taylor remainder |r|^(n+1)/(n+1)! e^|r| is added, and
# the result scaled by 2^k (exact, but for underflow, which the outward move of _down/_up covers).
_LN2 = float.fromhex("0x1.62e42fefa39efp-1")  # ln 2 rounded to nearest; its neighbours bracket it
_LN2_ENDS = (float(np.nextafter(_LN2, 0.0)), float(np.nextafter(_LN2, np.inf)))
_DEGREE = 14
_HORNER = 2.0**-44
_REMAINDER = 0.36 ** (_DEGREE + 1) / math.factorial(_DEGREE + 1) * 1.5  # |r| <= 0.36, e^0.36 < 1.5
_QUOTIENT_REMAINDER = 0.36 ** _DEGREE / math.factorial(_DEGREE + 1) * 1.5  # the same for (exp(r) - 1) / r
_COEFFICIENTS = tuple(1.0 / math.factorial(n) for n in range(_DEGREE + 1))  # int / int: correctly rounded


def _horner(r: np.ndarray, first: int = 0) -> np.ndarray:
    """sum_{n >= first} r^(n - first) / n! to degree _DEGREE, in float64 (its error: see above)."""
    p = np.full_like(r, _COEFFICIENTS[_DEGREE])
    for n in range(_DEGREE - 1, first - 1, -1):
        p = p * r + _COEFFICIENTS[n]
    return p


def _exp_points(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) with lo <= exp(x) <= hi elementwise, for float64 points x (NaN gives NaN ends)."""
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        k = np.clip(np.rint(x / _LN2), -1100.0, 1100.0)
        k = np.where(np.isnan(k), 0.0, k)
        r = Intervals(x) - Intervals(k) * Intervals(*_LN2_ENDS)
        exponent = k.astype(np.int64)
        lo = _down(np.ldexp(_horner(r.lo) * (1 - _HORNER) - _REMAINDER, exponent))
        hi = _up(np.ldexp(_horner(r.hi) * (1 + _HORNER) + _REMAINDER, exponent))
    largest = np.finfo(np.float64).max  # exp(x) exceeds it for x > 709.79
    lo = np.where(x < -745.2, 0.0, np.where(x > 709.8, largest, np.minimum(np.maximum(lo, 0.0), largest)))
    hi = np.where(x > 709.8, np.inf, np.where(x < -745.2, _FLOOR, hi))
    return lo, hi


def _exp_intervals(x: Intervals) -> Intervals:
    """exp over each interval: its ends' (exp is increasing), both in one pass."""
    lo, hi = np.broadcast_arrays(x.lo, x.hi)
    n = lo.size
    ends_lo, ends_hi = _exp_points(np.concatenate([lo.ravel(), hi.ravel()]))
    return Intervals(ends_lo[:n].reshape(lo.shape), ends_hi[n:].reshape(hi.shape))


def _expm1_intervals(x: Intervals) -> Intervals:
    """expm1 over each interval: where an end is small, x (1/1! + x/2! + ...) (relative accuracy kept),
    else exp - 1 rounded outward (expm1 is increasing)."""
    lo, hi = np.broadcast_arrays(x.lo, x.hi)
    n = lo.size
    ends = np.concatenate([lo.ravel(), hi.ravel()])
    small = np.abs(ends) <= 0.34
    e_lo, e_hi = _exp_points(ends)
    big = Intervals(e_lo, e_hi) - 1.0
    t = np.where(small, ends, 0.0)
    with np.errstate(under="ignore"):
        q = _horner(t, first=1)  # (exp(t) - 1) / t, in [0.85, 1.2]: its Horner error is as exp's
        quotient = Intervals(q * (1 - _HORNER) - _QUOTIENT_REMAINDER, q * (1 + _HORNER) + _QUOTIENT_REMAINDER)
        small_values = quotient * Intervals(t)
    low = np.where(small, small_values.lo, big.lo)
    high = np.where(small, small_values.hi, big.hi)
    return Intervals(np.maximum(low[:n], -1.0).reshape(lo.shape), high[n:].reshape(hi.shape))


def exp(x: Any) -> Any:
    if (form := _form(x)) is not None:
        return form.exp(x)
    if isinstance(x, Intervals):
        return _exp_intervals(x)
    return np.exp(x)


def expm1(x: Any) -> Any:
    if (form := _form(x)) is not None:
        return form.expm1(x)
    if isinstance(x, Intervals):
        return _expm1_intervals(x)
    return np.expm1(x)


def log(x: Any) -> Any:
    """log over intervals of positive numbers: numpy's value at each end, moved out by a step that
    doubles until the rigorous exp confirms it (exp(lo) <= x.lo, exp(hi) >= x.hi); an end <= 0 gives -inf."""
    if not isinstance(x, Intervals):
        return np.log(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        low, high = np.log(np.maximum(x.lo, 0.0)), np.log(x.hi)
    step_low, step_high = (np.abs(low) + 1.0) * 2.0**-50, (np.abs(high) + 1.0) * 2.0**-50
    for _ in range(64):
        below = np.isfinite(low) & (_exp_points(low)[1] > x.lo)
        above = np.isfinite(high) & (_exp_points(high)[0] < x.hi)
        if not (below.any() or above.any()):
            return Intervals(low, high)
        low, step_low = np.where(below, low - step_low, low), np.where(below, 2 * step_low, step_low)
        high, step_high = np.where(above, high + step_high, high), np.where(above, 2 * step_high, step_high)
    raise ArithmeticError("log: the enclosure of numpy's log could not be confirmed in 64 steps")


def square(x: Any) -> Any:
    """x^2 (tighter than x * x where x straddles 0; an affine form's square over its range)."""
    if _is_affine(x):
        x = x.range()
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
    if (form := _form(x)) is not None:
        return form.relu(x)
    if isinstance(x, Intervals):
        return Intervals(np.maximum(x.lo, 0.0), np.maximum(x.hi, 0.0))
    return np.maximum(x, 0.0)


def clip(x: Any, low: float, high: float) -> Any:
    """x known to lie in [low, high]: its ends moved inside, a NaN end replaced by the limit."""
    if _is_jet(x):
        return type(x)(clip(x.value, low, high), x.grad)
    if _is_affine(x):
        return _form(x).clip(x, low, high)
    if isinstance(x, Intervals):
        return Intervals(np.where(np.isnan(x.lo), low, np.clip(x.lo, low, high)),
                         np.where(np.isnan(x.hi), high, np.clip(x.hi, low, high)))
    return np.clip(x, low, high)


def intersect(a: Any, b: Any) -> Any:
    """Two enclosures of the same values: their intersection (a NaN end gives way to the other's)."""
    if _is_jet(a):
        return type(a)(intersect(a.value, b.value), intersect(a.grad, b.grad))
    if _is_affine(a):
        return _form(a).intersect(a, b)
    return Intervals(np.fmax(a.lo, b.lo), np.fmin(a.hi, b.hi))


def all_finite(x: Any) -> bool:
    if _is_jet(x):
        return all_finite(x.value) and all_finite(x.grad)
    if _is_affine(x):
        return bool(_form(x).all_finite(x))
    if isinstance(x, Intervals):
        return bool(np.all(np.isfinite(x.lo)) and np.all(np.isfinite(x.hi)))
    return bool(np.all(np.isfinite(x)))


def relu_change(x: Any, dx: Any) -> Any:
    """ReLU(x + dx) - ReLU(x): dx where both are surely positive, 0 where both are surely not, else between
    0 and dx (ReLU is increasing and 1-Lipschitz)."""
    if (form := _form(x)) is not None:
        return form.relu_change(x, dx)
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
    if _is_affine(x):
        x = x.range()
    high = x.hi if isinstance(x, Intervals) else np.asarray(x)
    return np.where(np.isnan(high), np.inf, high)


def _periodic_extreme(x: Intervals, offset: float) -> np.ndarray:
    """Whether [lo, hi] (widened) contains offset + 2 pi k for some integer k."""
    two_pi = 2 * np.pi
    k = np.ceil((x.lo - offset) / two_pi - 1e-9)
    return k * two_pi + offset <= x.hi + 1e-9 * (1 + np.abs(x.hi))


def cos(x: Any) -> Any:
    """cos over each interval: the ends' values, and +-1 where a maximum or minimum lies inside."""
    if (form := _form(x)) is not None:
        return form.cos(x)
    if not isinstance(x, Intervals):
        return np.cos(x)
    a, b = np.cos(x.lo), np.cos(x.hi)
    low = np.where(_periodic_extreme(x, np.pi), -1.0, np.minimum(a, b) - LIBM_RELATIVE)
    high = np.where(_periodic_extreme(x, 0.0), 1.0, np.maximum(a, b) + LIBM_RELATIVE)
    wide = (x.hi - x.lo) >= 2 * np.pi
    return Intervals(np.where(wide, -1.0, np.maximum(low, -1.0)), np.where(wide, 1.0, np.minimum(high, 1.0)))


def sin(x: Any) -> Any:
    """sin x = cos(x - pi/2), the shift rounded outward."""
    if (form := _form(x)) is not None:
        return form.sin(x)
    if not isinstance(x, Intervals):
        return np.sin(x)
    shifted = x - np.pi / 2
    result = cos(Intervals(_down(shifted.lo - 1e-15), _up(shifted.hi + 1e-15)))
    # the shift by a rounded pi/2 costs up to ~1e-15 in the argument: cos is 1-Lipschitz, so widen by that
    return Intervals(np.maximum(result.lo - 2e-15, -1.0), np.minimum(result.hi + 2e-15, 1.0))


def total(x: Any, axis: int) -> Any:
    """The sum along ``axis``, one rounded-outward addition at a time."""
    if not isinstance(x, Intervals) and _form(x) is None:
        return np.sum(x, axis=axis)
    count = x.shape[axis]
    result = x[(slice(None),) * (axis % len(x.shape)) + (0,)]
    for index in range(1, count):
        result = result + x[(slice(None),) * (axis % len(x.shape)) + (index,)]
    return result


def contract(a: Any, b: Any) -> Any:
    """a @ b for a (..., k) and a constant-shaped b (k, m): sum_k a[..., k, None] * b[k]."""
    if not isinstance(a, Intervals) and not isinstance(b, Intervals) and _form(a) is None:
        return a @ b
    k = a.shape[-1]
    result = a[..., 0, None] * b[0]
    for index in range(1, k):
        result = result + a[..., index, None] * b[index]
    return result
