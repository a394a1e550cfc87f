"""One arithmetic, two precisions.

Every reference object in :mod:`sltcheck.model.reference` is written once against
numpy and runs either in float64 (``dps=None``, vectorised) or in mpmath at
``dps`` decimal digits (numpy object arrays of ``mpmath.mpf``: the same code
path, every operation rounded at the caller's precision). Float64 inputs are
converted to mpf exactly, so both precisions evaluate the same instance.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

import mpmath
import numpy as np

from sltcheck.numerics.validation import check_dps

_mp_exp = np.frompyfunc(mpmath.exp, 1, 1)
_mp_sqrt = np.frompyfunc(mpmath.sqrt, 1, 1)
_mp_from = np.frompyfunc(mpmath.mpf, 1, 1)
_iv_exp = np.frompyfunc(mpmath.iv.exp, 1, 1)
_iv_sqrt = np.frompyfunc(mpmath.iv.sqrt, 1, 1)
_iv_from = np.frompyfunc(mpmath.iv.mpf, 1, 1)
_INTERVAL: contextvars.ContextVar[bool] = contextvars.ContextVar("sltcheck_interval", default=False)


@contextlib.contextmanager
def working_precision(dps: int | None) -> Iterator[None]:
    """Run the body at ``dps`` digits in mpmath; a no-op for float64."""
    if dps is None:
        yield
        return
    with mpmath.workdps(check_dps(dps)):
        yield


def to_mp(array: object, dps: int) -> np.ndarray:
    """An object array of mpf at ``dps`` digits (exact for float64 input).

    Inside :func:`interval_arithmetic` it is an object array of ``mpmath.iv.mpf``
    (point intervals, exact for float64 input) instead."""
    if _INTERVAL.get():
        return to_iv(array)
    with working_precision(dps):
        return np.asarray(_mp_from(np.asarray(array, dtype=object)), dtype=object)


def as_precision(array: np.ndarray, dps: int | None) -> np.ndarray:
    return np.asarray(array, dtype=np.float64) if dps is None else to_mp(array, dps)


def exp(array: np.ndarray) -> np.ndarray:
    if is_interval(array):
        return np.asarray(_iv_exp(array), dtype=object)
    if array.dtype == object:
        return np.asarray(_mp_exp(array), dtype=object)
    return np.exp(array)


def sqrt(array: np.ndarray | float) -> np.ndarray:
    array = np.asarray(array)
    if is_interval(array):
        return np.asarray(_iv_sqrt(array), dtype=object)
    if array.dtype == object:
        return np.asarray(_mp_sqrt(array), dtype=object)
    return np.sqrt(array)


def vector_norm(array: np.ndarray, axis: int = -1) -> np.ndarray:
    """Euclidean norm along ``axis`` (the spectral norm of a row vector)."""
    return sqrt((array * array).sum(axis=axis))


def max_norm(array: np.ndarray) -> object:
    """||A||_max, the largest absolute entry."""
    return np.abs(array).max()


def spectral_norm(matrix: np.ndarray, dps: int | None = None) -> Any:
    """Largest singular value; in mpmath as the square root of the largest eigenvalue of the
    smaller Gram matrix (symmetric, so ``mpmath.eigsy``): mpmath's SVD fails to converge, or
    converges differently at each precision, on rank-deficient matrices with repeated rows."""
    matrix = np.asarray(matrix)
    if dps is None:
        return float(np.linalg.norm(np.asarray(matrix, dtype=np.float64), 2))
    with working_precision(dps):
        m = to_mp(matrix, dps)
        gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
        values = mpmath.eigsy(mpmath.matrix(gram.tolist()), eigvals_only=True)
        return mpmath.sqrt(max(max(values[i] for i in range(values.rows)), 0))


# --- interval mode (added for sltcheck.harness.interval_verdict) -------------------------------------------------
# Inside ``interval_arithmetic(dps)`` the mpmath code path runs on ``mpmath.iv.mpf``
# intervals: to_mp/as_precision build point intervals, exp and sqrt dispatch to
# iv.exp and iv.sqrt, and +, -, *, / round outward (mpmath.iv). Every result then
# encloses the exact real value. Comparisons of overlapping intervals are not
# decided (mpmath.iv returns None), so code that branches on them (max, ReLU) is
# only safe where any branch gives a valid enclosure: the largest-logit shift of
# ``reference.masked_softmax`` is (softmax is shift-invariant), ``reference.fc``'s
# ReLU is not. Outside the context nothing changes.


@contextlib.contextmanager
def interval_arithmetic(dps: int) -> Iterator[None]:
    """Evaluate the mpmath code path in outward-rounded interval arithmetic at ``dps`` digits."""
    dps = check_dps(dps)
    token = _INTERVAL.set(True)
    saved = mpmath.iv.prec
    try:
        mpmath.iv.dps = dps
        with mpmath.workdps(dps):
            yield
    finally:
        mpmath.iv.prec = saved
        _INTERVAL.reset(token)


def in_interval_mode() -> bool:
    return _INTERVAL.get()


def to_iv(array: object) -> np.ndarray:
    """An object array of point intervals (exact for float64, mpf or int input; intervals pass)."""
    return np.asarray(_iv_from(np.asarray(array, dtype=object)), dtype=object)


def is_interval(array: np.ndarray) -> bool:
    """True for an object array whose entries are ``mpmath.iv.mpf``."""
    array = np.asarray(array)
    return array.dtype == object and array.size > 0 and isinstance(array.flat[0], mpmath.iv.mpf)
