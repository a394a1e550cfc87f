"""First-order affine forms over boxes (reduced affine arithmetic, a first-order Taylor model): many boxes at once.

An :class:`Affine` of shape S holds, per box, a float ``centre`` (S), float ``coef`` (S + (D,)) and a
non-negative float ``radius`` (S): at every point m + r * e of the box (m its midpoint, r its half-widths,
e in [-1, 1]^D) the real value lies in ``centre + coef . e + [-radius, radius]``. Unlike an interval, the
form keeps how a quantity moves with the box's D parameters, so a difference of two correlated quantities
(x_m - x_k inside a softmax, the source's and the target's FC nets at one input, a residual added back)
cancels their shared linear part instead of adding both widths; unlike a mean-value form
(:mod:`sltcheck.numerics.jets`), whose gradient is an interval enclosure over the box, nothing is wrapped
into intervals through the layers, only the second-order remainders go into ``radius``. This is the
relational form through blocks that DeepT (zonotopes through attention) uses, with one error term per value
instead of a noise symbol per operation.

Every linear step is exact in the reals; the floats' rounding (each + and x errs by at most 2^-53 of its
result's size, relative) is bounded by ``_ROUNDING`` times the sizes involved and added to the radius,
which is itself rounded upward (``_up``). A nonlinear f is linearised at the centre c:
f(y) in f(c) + alpha (y - c) + [-rest, rest] for y within rad of c, rest = |f(c)'s enclosure| +
|alpha - f'(c)| rad + max|f''| rad^2 / 2; where that is wider than f's interval enclosure over the form's
range, the constant form of that interval is taken instead (``_narrower``). f(c) and f'(c) are
enclosed by :mod:`sltcheck.numerics.interval_arrays` (exp, expm1 from IEEE +, -, x; cos and sin under its
declared ``LIBM_RELATIVE``). ReLU takes the chord relaxation (DeepPoly's, sound for any slope in [0, 1]).

:mod:`sltcheck.numerics.interval_arrays`' helpers dispatch on :class:`Affine` to the functions here, so
:mod:`sltcheck.model.difference` runs unchanged on floats, intervals, jets and affine forms.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from sltcheck.numerics import interval_arrays as ia
from sltcheck.numerics.interval_arrays import Intervals

_ROUNDING = 2.0**-50  # >= the few roundings of one step, relative to the sizes they act on
_TINY = 2.0**-1000  # covers an underflowed product's absolute error


def _quiet(function: Callable[..., Any]) -> Callable[..., Any]:
    """numpy's warnings off: an inf or NaN (a box too wide for exp, 0 x inf) is a result here, an enclosure that
    proves nothing (``range`` and :func:`~sltcheck.numerics.interval_arrays.upper_ends` read it as +inf)."""

    @functools.wraps(function)
    def quiet(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore", under="ignore"):
            return function(*args, **kwargs)

    return quiet


def _up(radius: np.ndarray) -> np.ndarray:
    """A non-negative sum or product of a few dozen float operations, rounded to nearest: moved above its
    exact value (NaN stays NaN: an enclosure that says nothing)."""
    return radius * (1.0 + 2.0**-44) + _TINY


def _split(value: Intervals) -> tuple[np.ndarray, np.ndarray]:
    """(mid, rad) with [lo, hi] within mid + [-rad, rad] (rad rounded up)."""
    lo, hi = np.broadcast_arrays(value.lo, value.hi)
    with np.errstate(invalid="ignore", over="ignore"):
        mid = lo + (hi - lo) / 2
        mid = np.where(np.isfinite(mid), mid, 0.0)
        return mid, _up(np.maximum(hi - mid, mid - lo))


def _float_constant(value: Any) -> np.ndarray:
    """A constant operand as float64, exactly: floats, bools and integers below 2^53 only (a wider integer,
    a long double or an mpmath number would be rounded with nothing to cover it: pass an ``Intervals``)."""
    array = np.asarray(value)
    exact = array.dtype.kind == "b" or (array.dtype.kind == "f" and array.dtype.itemsize <= 8) or (
        array.dtype.kind in "iu" and bool(np.all((array >= -(2**53)) & (array <= 2**53))))
    if not exact:
        raise TypeError(f"an affine form's constant must be float64-exact (floats, bools, integers up to 2^53), "
                        f"got dtype {array.dtype}: enclose it in an Intervals")
    return array.astype(np.float64)


def _same_parameters(a: Affine, b: Affine) -> None:
    if a.dims != b.dims:
        raise ValueError(f"affine forms over different parameters: {a.dims} and {b.dims} coefficients")


class Affine:
    """centre + coef . e + [-radius, radius], e in [-1, 1]^D, elementwise, with numpy's broadcasting.
    Immutable: operations return new forms, and may share (read-only, broadcast) arrays with their operands."""

    __slots__ = ("centre", "coef", "radius")
    __array_ufunc__ = None  # ndarray (op) Affine defers to Affine's reflected operators

    def __init__(self, centre: np.ndarray, coef: np.ndarray, radius: np.ndarray) -> None:
        self.centre, self.coef, self.radius = centre, coef, radius

    @classmethod
    def variables(cls, lows: np.ndarray, highs: np.ndarray) -> Affine:
        """The boxes' parameters themselves, (N, D): midpoint m and half-widths r, every box within m + r [-1, 1]."""
        count, dims = lows.shape
        middle = lows + (highs - lows) / 2
        half = _up(np.maximum(highs - middle, middle - lows))
        coef = np.zeros((count, dims, dims))
        coef[:, np.arange(dims), np.arange(dims)] = half
        return cls(middle, coef, np.zeros((count, dims)))

    @classmethod
    def constant(cls, value: Any, dims: int) -> Affine:
        """A float array or :class:`~sltcheck.numerics.interval_arrays.Intervals` as a form with no coefficients."""
        if isinstance(value, Intervals):
            centre, radius = _split(value)
        else:
            centre = np.asarray(value, dtype=np.float64)
            radius = np.zeros(centre.shape)
        return cls(centre, np.zeros((*centre.shape, dims)), radius)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.centre.shape

    @property
    def dims(self) -> int:
        return int(self.coef.shape[-1])

    @_quiet
    def spread(self) -> np.ndarray:
        """sum_j |coef_j| + radius (rounded up): how far the value may lie from the centre."""
        return _up(np.abs(self.coef).sum(axis=-1) + self.radius)

    @_quiet
    def range(self) -> Intervals:
        """An interval enclosure of the value over each box."""
        spread = self.spread()
        return Intervals(ia._down(self.centre - spread), ia._up(self.centre + spread))

    @_quiet
    def _size(self) -> np.ndarray:
        """|centre| + sum_j |coef_j|: the floats a step's rounding acts on."""
        return np.abs(self.centre) + np.abs(self.coef).sum(axis=-1)

    def __getitem__(self, index: Any) -> Affine:
        index = index if isinstance(index, tuple) else (index,)
        return Affine(self.centre[index], self.coef[(*index, slice(None))], self.radius[index])

    def reshape(self, *shape: Any) -> Affine:
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        return Affine(self.centre.reshape(shape), self.coef.reshape((*shape, self.dims)), self.radius.reshape(shape))

    def __repr__(self) -> str:
        return f"Affine(centre={self.centre!r}, coef={self.coef!r}, radius={self.radius!r})"

    def __neg__(self) -> Affine:
        return Affine(-self.centre, -self.coef, self.radius)

    @_quiet
    def __add__(self, other: Any) -> Affine:
        if isinstance(other, Affine):
            _same_parameters(self, other)
            result = Affine(self.centre + other.centre, self.coef + other.coef, self.radius + other.radius)
        elif isinstance(other, Intervals):
            mid, rad = _split(other)
            result = Affine(self.centre + mid, np.broadcast_to(self.coef, (*np.broadcast_shapes(
                self.shape, mid.shape), self.dims)), self.radius + rad)
        else:
            constant = _float_constant(other)
            result = Affine(self.centre + constant, np.broadcast_to(self.coef, (*np.broadcast_shapes(
                self.shape, constant.shape), self.dims)), np.broadcast_to(self.radius, np.broadcast_shapes(
                    self.shape, constant.shape)))
        # fl(x + y) lies within 2^-53 |result| of x + y: the rounding is bounded by the result's own size
        result.radius = _up(result.radius + _ROUNDING * result._size())
        return result

    __radd__ = __add__

    def __sub__(self, other: Any) -> Affine:
        return self + (-other)

    def __rsub__(self, other: Any) -> Affine:
        return (-self) + other

    @_quiet
    def __mul__(self, other: Any) -> Affine:
        if isinstance(other, Affine):
            _same_parameters(self, other)
            # (c1 + l1 + r1)(c2 + l2 + r2) = c1 c2 + c1 l2 + c2 l1 + [l1 l2 + (c1 + l1) r2 + c2 r1 ...]
            spread1, spread2 = self.spread(), other.spread()
            centre = self.centre * other.centre
            coef = self.centre[..., None] * other.coef + other.centre[..., None] * self.coef
            size = np.abs(self.centre) * other._size() + np.abs(other.centre) * self._size()
            radius = (np.abs(self.centre) * other.radius + np.abs(other.centre) * self.radius
                      + spread1 * spread2 + _ROUNDING * size)
            return Affine(centre, coef, _up(radius))
        if isinstance(other, Intervals):
            mid, rad = _split(other)
            scaled = self * mid
            return Affine(scaled.centre, scaled.coef, _up(scaled.radius + rad * (self._size() + self.radius)))
        constant = _float_constant(other)
        centre = self.centre * constant
        coef = self.coef * constant[..., None]
        size = np.abs(centre) + np.abs(coef).sum(axis=-1)
        return Affine(centre, coef, _up(self.radius * np.abs(constant) + _ROUNDING * size))

    __rmul__ = __mul__

    @_quiet
    def __truediv__(self, other: Any) -> Affine:
        if isinstance(other, Affine):
            return self * other.reciprocal()
        if isinstance(other, Intervals):
            return self * (1.0 / other)
        constant = _float_constant(other)
        centre = self.centre / constant
        coef = self.coef / constant[..., None]
        size = np.abs(centre) + np.abs(coef).sum(axis=-1)
        return Affine(centre, coef, _up(self.radius / np.abs(constant) + _ROUNDING * size))

    def __rtruediv__(self, other: Any) -> Affine:
        return self.reciprocal() * other

    @_quiet
    def reciprocal(self) -> Affine:
        """1/y for y > 0 over the box (where the range reaches 0: unbounded). 1/y = 1/c - (y - c)/c^2 + R,
        |R| <= rad^2 / low^3 (half of max |2 / y^3|)."""
        span = self.range()
        positive = span.lo > 0
        value = Intervals(1.0) / Intervals(np.where(positive, self.centre, 1.0))
        mid, half = _split(value)
        slope = -(mid * mid)
        slope_error = _up(2 * np.abs(mid) * half + half * half + 2 * _ROUNDING * mid * mid)
        inverse_low = _up(1.0 / np.where(positive, span.lo, 1.0))
        curvature = _up(inverse_low * inverse_low * inverse_low)  # max |f''| / 2 = 1 / low^3
        linear = _linearised(self, mid, half, slope, slope_error, curvature)
        result = _narrower(linear, Intervals(1.0) / span)
        result.radius = np.where(positive, result.radius, np.inf)
        return result


@_quiet
def _linearised(x: Affine, value: np.ndarray, value_error: np.ndarray, slope: np.ndarray,
                slope_error: np.ndarray, half_curvature: np.ndarray) -> Affine:
    """f(x) as value + slope (x - c) + rest, f(c) within value_error of ``value``, f'(c) within slope_error
    of ``slope``, |f''| / 2 <= ``half_curvature`` where x reaches (x within rad of c)."""
    distance = x.spread()
    coef = x.coef * slope[..., None]
    rest = (value_error + slope_error * distance + half_curvature * distance * distance
            + np.abs(slope) * x.radius + _ROUNDING * np.abs(coef).sum(axis=-1))
    return Affine(value, coef, _up(rest))


@_quiet
def _narrower(form: Affine, enclosure: Intervals) -> Affine:
    """Per value, ``form`` or the constant form of ``enclosure`` (two enclosures of the same values),
    whichever is narrower."""
    mid, rad = _split(enclosure)
    width = form.spread()
    take = ~(width <= rad) | ~np.isfinite(form.centre)  # NaN or inf in the form: the interval's
    return Affine(np.where(take, mid, form.centre), np.where(take[..., None], 0.0, form.coef),
                  np.where(take, rad, form.radius))


# --- the functions (sltcheck.numerics.interval_arrays dispatches to these) ------------------------------


@_quiet
def exp(x: Affine) -> Affine:
    span = x.range()
    at_centre = ia.exp(Intervals(x.centre))
    mid, half = _split(at_centre)
    curvature = _up(ia.exp(span).hi / 2)  # exp'' = exp, largest at the range's top
    return _narrower(_linearised(x, mid, half, mid, half, curvature), ia.exp(span))


@_quiet
def expm1(x: Affine) -> Affine:
    span = x.range()
    value, slope = _split(ia.expm1(Intervals(x.centre))), _split(ia.exp(Intervals(x.centre)))
    curvature = _up(ia.exp(span).hi / 2)
    return _narrower(_linearised(x, *value, *slope, curvature), ia.expm1(span))


@_quiet
def cos(x: Affine) -> Affine:
    """cos(c) and -sin(c) from numpy within LIBM_RELATIVE (the declared assumption); |cos''| <= 1."""
    error = np.full(x.shape, ia.LIBM_RELATIVE)
    linear = _linearised(x, np.cos(x.centre), error, -np.sin(x.centre), error, np.full(x.shape, 0.5))
    return _narrower(linear, ia.cos(x.range()))


@_quiet
def sin(x: Affine) -> Affine:
    error = np.full(x.shape, ia.LIBM_RELATIVE)
    linear = _linearised(x, np.sin(x.centre), error, np.cos(x.centre), error, np.full(x.shape, 0.5))
    return _narrower(linear, ia.sin(x.range()))


@_quiet
def relu(x: Affine) -> Affine:
    """ReLU(y) in lam y + [0, mu'] on [low, high] for any lam in [0, 1] (ReLU - lam y is convex, 0 at y = 0,
    largest at an end): lam = 1 above 0, 0 below, the chord's slope high / (high - low) across it."""
    span = x.range()
    across = (span.lo < 0) & (span.hi > 0)
    chord = np.clip(np.where(across, span.hi / (span.hi - span.lo), 0.0), 0.0, 1.0)
    slope = np.where(span.lo >= 0, 1.0, np.where(across, chord, 0.0))
    top = _up(np.maximum(-slope * span.lo, (1.0 - slope) * span.hi))
    offset = np.where(across, top / 2, 0.0)
    scaled = x * slope
    return Affine(scaled.centre + offset, scaled.coef, _up(scaled.radius + offset + _ROUNDING * np.abs(scaled.centre)
                                                           + offset * _ROUNDING))


@_quiet
def relu_change(x: Affine, dx: Affine) -> Affine:
    """ReLU(x + dx) - ReLU(x) = t dx for some t in [0, 1]: dx where both are surely positive, 0 where both are
    surely not, else dx / 2 + [-|dx| / 2, |dx| / 2]."""
    span, moved = x.range(), (x + dx).range()
    on = (span.lo >= 0) & (moved.lo >= 0)
    off = (span.hi <= 0) & (moved.hi <= 0)
    share = np.where(on, 1.0, np.where(off, 0.0, 0.5))
    scaled = dx * share
    extra = np.where(on | off, 0.0, dx.spread() / 2 + np.abs(dx.centre) / 2)
    return Affine(scaled.centre, scaled.coef, _up(scaled.radius + extra))


@_quiet
def clip(x: Affine, low: float, high: float) -> Affine:
    """x known to lie in [low, high]: the narrower of x and the constant [low, high] (clipped range)."""
    return _narrower(x, ia.clip(x.range(), low, high))


@_quiet
def intersect(a: Affine, b: Any) -> Affine:
    """Two enclosures of the same values: per value the narrower."""
    if not isinstance(b, Affine):
        return _narrower(a, b)
    take = ~(a.spread() <= b.spread()) | ~np.isfinite(a.centre)
    return Affine(np.where(take, b.centre, a.centre), np.where(take[..., None], b.coef, a.coef),
                  np.where(take, b.radius, a.radius))


def all_finite(x: Affine) -> bool:
    return bool(np.all(np.isfinite(x.centre)) and np.all(np.isfinite(x.coef)) and np.all(np.isfinite(x.radius)))


def stack(parts: list[Affine]) -> Affine:
    """Forms of one shape stacked along a new last axis."""
    return Affine(np.stack([p.centre for p in parts], axis=-1), np.stack([p.coef for p in parts], axis=-2),
                  np.stack([p.radius for p in parts], axis=-1))


def concatenate(first: np.ndarray, body: Affine, axis: int) -> Affine:
    """A constant array (no coefficients) before ``body`` along ``axis`` (of the value)."""
    axis %= len(body.shape)
    return Affine(np.concatenate([first, body.centre], axis=axis),
                  np.concatenate([np.zeros((*first.shape, body.dims)), body.coef], axis=axis),
                  np.concatenate([np.zeros(first.shape), body.radius], axis=axis))
