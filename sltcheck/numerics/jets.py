"""First-order interval jets: a value and its gradient with respect to D parameters, both enclosed over a box.

A :class:`Jet` holds ``value`` (an :class:`~sltcheck.numerics.interval_arrays.Intervals` of some shape S) and
``grad`` (Intervals of shape S + (D,)), each containing, at every point of the parameters' box, the
function's value and its partial derivatives there (forward-mode differentiation carried out in
outward-rounded interval arithmetic). The mean-value theorem then encloses the function over the box by
f(box) within f(m) + sum_j grad_j(box) (box_j - m_j), m any point of the box: an enclosure whose excess
shrinks with the square of the box's width, where the plain interval evaluation's shrinks with the width
(:func:`mean_value`). Jets go through the same formulas as floats and intervals (the helpers of
:mod:`sltcheck.numerics.interval_arrays` dispatch on them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sltcheck.numerics.interval_arrays import Intervals


def _const(value: Any) -> Intervals:
    return value if isinstance(value, Intervals) else Intervals(value)


def _expand(value: Intervals) -> Intervals:
    """A constant with a trailing axis, to scale a gradient (shape S + (D,)) by it."""
    return Intervals(np.asarray(value.lo)[..., None], np.asarray(value.hi)[..., None])


class Jet:
    """(value, grad): a value enclosure and its gradient enclosure over the same box."""

    __slots__ = ("grad", "value")
    __array_ufunc__ = None

    def __init__(self, value: Intervals, grad: Intervals) -> None:
        self.value, self.grad = value, grad

    @classmethod
    def variables(cls, lows: np.ndarray, highs: np.ndarray) -> Jet:
        """The box's parameters themselves, (N, D): gradient the identity."""
        count, dims = lows.shape
        eye = np.broadcast_to(np.eye(dims), (count, dims, dims))
        return cls(Intervals(lows, highs), Intervals(eye))

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape

    def __getitem__(self, index: Any) -> Jet:
        index = index if isinstance(index, tuple) else (index,)
        return Jet(self.value[index], self.grad[(*index, slice(None))])

    def reshape(self, *shape: int) -> Jet:
        dims = self.grad.shape[-1]
        return Jet(Intervals(np.reshape(np.broadcast_to(self.value.lo, self.shape), shape),
                             np.reshape(np.broadcast_to(self.value.hi, self.shape), shape)),
                   Intervals(np.reshape(np.broadcast_to(self.grad.lo, self.grad.shape), (*shape, dims)),
                             np.reshape(np.broadcast_to(self.grad.hi, self.grad.shape), (*shape, dims))))

    def __neg__(self) -> Jet:
        return Jet(-self.value, -self.grad)

    def __add__(self, other: Any) -> Jet:
        if isinstance(other, Jet):
            return Jet(self.value + other.value, self.grad + other.grad)
        return Jet(self.value + _const(other), self.grad)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Jet:
        if isinstance(other, Jet):
            return Jet(self.value - other.value, self.grad - other.grad)
        return Jet(self.value - _const(other), self.grad)

    def __rsub__(self, other: Any) -> Jet:
        return Jet(_const(other) - self.value, -self.grad)

    def __mul__(self, other: Any) -> Jet:
        if isinstance(other, Jet):
            return Jet(self.value * other.value,
                       self.grad * _expand(other.value) + other.grad * _expand(self.value))
        constant = _const(other)
        return Jet(self.value * constant, self.grad * _expand(constant))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Jet:
        if isinstance(other, Jet):
            quotient = self.value / other.value
            return Jet(quotient, (self.grad - other.grad * _expand(quotient)) / _expand(other.value))
        constant = _const(other)
        return Jet(self.value / constant, self.grad / _expand(constant))

    def __rtruediv__(self, other: Any) -> Jet:
        quotient = _const(other) / self.value
        return Jet(quotient, -(self.grad * _expand(quotient / self.value)))


def chain(x: Jet, value: Intervals, derivative: Intervals) -> Jet:
    """The jet of f(x) from f's value and f's derivative over x's value enclosure."""
    return Jet(value, x.grad * _expand(derivative))


def stack(parts: list[Jet], axis: int = -1) -> Jet:
    """Jets of one shape stacked along a new last axis of the value (the gradient's axis stays last)."""
    if axis != -1:
        raise ValueError(f"axis must be -1, got {axis!r}")
    return Jet(Intervals(np.stack([np.broadcast_to(p.value.lo, p.shape) for p in parts], axis=-1),
                         np.stack([np.broadcast_to(p.value.hi, p.shape) for p in parts], axis=-1)),
               Intervals(np.stack([np.broadcast_to(p.grad.lo, p.grad.shape) for p in parts], axis=-2),
                         np.stack([np.broadcast_to(p.grad.hi, p.grad.shape) for p in parts], axis=-2)))


def concatenate(first: np.ndarray, body: Jet, axis: int) -> Jet:
    """A constant array (no gradient) before ``body`` along ``axis`` (of the value, counted from 0)."""
    dims = body.grad.shape[-1]
    zeros = np.zeros((*first.shape, dims))
    value = Intervals(np.concatenate([first, np.broadcast_to(body.value.lo, body.shape)], axis=axis),
                      np.concatenate([first, np.broadcast_to(body.value.hi, body.shape)], axis=axis))
    grad = Intervals(np.concatenate([zeros, np.broadcast_to(body.grad.lo, body.grad.shape)], axis=axis),
                     np.concatenate([zeros, np.broadcast_to(body.grad.hi, body.grad.shape)], axis=axis))
    return Jet(value, grad)


def mean_value(at_point: Intervals, jet: Jet, lows: np.ndarray, highs: np.ndarray, points: np.ndarray) -> Intervals:
    """f over each box, (N, ...): f(m) + sum_j grad_j (box_j - m_j) (the mean-value theorem), intersected with
    the jet's own value enclosure. ``at_point`` encloses f at ``points`` (m, one per box, inside it)."""
    result = at_point
    extra = (1,) * (len(jet.shape) - 1)
    for j in range(lows.shape[1]):
        offset = Intervals(lows[:, j], highs[:, j]) - points[:, j]
        offset = Intervals(offset.lo.reshape(-1, *extra), offset.hi.reshape(-1, *extra))
        result = result + jet.grad[..., j] * offset
    return Intervals(np.fmax(result.lo, jet.value.lo), np.fmin(result.hi, jet.value.hi))


# --- the functions, for Jets (sltcheck.numerics.interval_arrays dispatches to these) -------------------


def exp(x: Jet) -> Jet:
    from sltcheck.numerics import interval_arrays as ia

    value = ia.exp(x.value)
    return chain(x, value, value)


def expm1(x: Jet) -> Jet:
    from sltcheck.numerics import interval_arrays as ia

    return chain(x, ia.expm1(x.value), ia.exp(x.value))


def _step(x: Intervals) -> Intervals:
    """ReLU's derivative over x: 1 where surely positive, 0 where surely not, else [0, 1] (Clarke's)."""
    return Intervals(np.where(x.lo > 0, 1.0, 0.0), np.where(x.hi > 0, 1.0, 0.0))


def relu(x: Jet) -> Jet:
    from sltcheck.numerics import interval_arrays as ia

    return chain(x, ia.relu(x.value), _step(x.value))


def relu_change(x: Jet, dx: Jet) -> Jet:
    """ReLU(x + dx) - ReLU(x) and its gradient (steps at x + dx and at x)."""
    from sltcheck.numerics.interval_arrays import relu_change as value_change

    moved = x.value + dx.value
    grad = (x.grad + dx.grad) * _expand(_step(moved)) - x.grad * _expand(_step(x.value))
    return Jet(value_change(x.value, dx.value), grad)


def cos(x: Jet) -> Jet:
    from sltcheck.numerics import interval_arrays as ia

    return chain(x, ia.cos(x.value), -ia.sin(x.value))


def sin(x: Jet) -> Jet:
    from sltcheck.numerics import interval_arrays as ia

    return chain(x, ia.sin(x.value), ia.cos(x.value))
