"""One arithmetic, two precisions.

Every reference object in :mod:`sltcheck.reference` is written once against
numpy and runs either in float64 (``dps=None``, vectorised) or in mpmath at
``dps`` decimal digits (numpy object arrays of ``mpmath.mpf``: the same code
path, every operation rounded at the caller's precision). Float64 inputs are
converted to mpf exactly, so both precisions evaluate the same instance.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import mpmath
import numpy as np

from sltcheck.validation import check_dps

_mp_exp = np.frompyfunc(mpmath.exp, 1, 1)
_mp_sqrt = np.frompyfunc(mpmath.sqrt, 1, 1)
_mp_from = np.frompyfunc(mpmath.mpf, 1, 1)


@contextlib.contextmanager
def working_precision(dps: int | None) -> Iterator[None]:
    """Run the body at ``dps`` digits in mpmath; a no-op for float64."""
    if dps is None:
        yield
        return
    with mpmath.workdps(check_dps(dps)):
        yield


def to_mp(array: object, dps: int) -> np.ndarray:
    """An object array of mpf at ``dps`` digits (exact for float64 input)."""
    with working_precision(dps):
        return np.asarray(_mp_from(np.asarray(array, dtype=object)), dtype=object)


def as_precision(array: np.ndarray, dps: int | None) -> np.ndarray:
    return np.asarray(array, dtype=np.float64) if dps is None else to_mp(array, dps)


def exp(array: np.ndarray) -> np.ndarray:
    if array.dtype == object:
        return np.asarray(_mp_exp(array), dtype=object)
    return np.exp(array)


def sqrt(array: np.ndarray | float) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype == object:
        return np.asarray(_mp_sqrt(array), dtype=object)
    return np.sqrt(array)


def vector_norm(array: np.ndarray, axis: int = -1) -> np.ndarray:
    """Euclidean norm along ``axis`` (the spectral norm of a row vector)."""
    return sqrt((array * array).sum(axis=axis))


def max_norm(array: np.ndarray) -> object:
    """||A||_max, the largest absolute entry."""
    return np.abs(array).max()


def spectral_norm(matrix: np.ndarray, dps: int | None = None) -> object:
    """Largest singular value; in mpmath via its SVD at ``dps`` digits."""
    matrix = np.asarray(matrix)
    if dps is None:
        return float(np.linalg.norm(np.asarray(matrix, dtype=np.float64), 2))
    with working_precision(dps):
        values = mpmath.svd_r(mpmath.matrix(to_mp(matrix, dps).tolist()), compute_uv=False)
        return max(values[i] for i in range(values.rows))


def to_float(value: Any) -> float:
    return float(value)  # mpf and numpy scalars both convert
