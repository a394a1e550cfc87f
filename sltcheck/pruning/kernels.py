"""The inner loop of the sliced search, compiled with numba when it is installed.

``nearest_distances(sorted_values, sorted_queries)``: for each query, the distance
to its nearest value, both arrays ascending. Compiled, it is one merge pass (a
two-pointer walk); without numba it is numpy's binary search, several times
slower at n' = 32 and bit-for-bit the same (both pick the first value >= the
query and the one before it). ``pair_sums``: every first[i] + second[j] for j in start[i] .. start[i] + counts[i],
with its bit code, in that order (one pass instead of numpy's gathers).
``compiled()`` says which one runs. numba is imported and the kernels compiled on first use
(importing numba alone costs about 250 ms), so importing the solvers stays cheap.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np


def _nearest_numpy(sorted_values: np.ndarray, sorted_queries: np.ndarray) -> np.ndarray:
    position = np.searchsorted(sorted_values, sorted_queries)
    above = sorted_values[np.minimum(position, sorted_values.size - 1)]
    below = sorted_values[np.maximum(position - 1, 0)]
    return np.minimum(np.abs(sorted_queries - above), np.abs(sorted_queries - below))


def _nearest_merge(sorted_values: np.ndarray, sorted_queries: np.ndarray) -> np.ndarray:  # pragma: no cover
    out = np.empty(sorted_queries.size)
    last = sorted_values.size - 1
    j = 0
    for i in range(sorted_queries.size):
        query = sorted_queries[i]
        while j <= last and sorted_values[j] < query:
            j += 1
        above = sorted_values[min(j, last)]
        below = sorted_values[max(j - 1, 0)]
        out[i] = min(abs(query - above), abs(query - below))
    return out


def _pair_sums_numpy(
    first: np.ndarray, first_codes: np.ndarray, second: np.ndarray, second_codes: np.ndarray,
    start: np.ndarray, counts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    rows = np.repeat(np.arange(first.size), counts)
    columns = np.repeat(start - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
    return first[rows] + second[columns], first_codes[rows] | second_codes[columns]


def _pair_sums_loop(
    first: np.ndarray, first_codes: np.ndarray, second: np.ndarray, second_codes: np.ndarray,
    start: np.ndarray, counts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    total = 0
    for count in counts:
        total += count
    sums = np.empty(total)
    codes = np.empty(total, dtype=np.int64)
    k = 0
    for i in range(first.size):
        for j in range(start[i], start[i] + counts[i]):
            sums[k] = first[i] + second[j]
            codes[k] = first_codes[i] | second_codes[j]
            k += 1
    return sums, codes


def _compile() -> tuple[Callable[..., np.ndarray], Callable[..., tuple[np.ndarray, np.ndarray]], bool]:
    try:
        import numba
    except ImportError:
        return _nearest_numpy, _pair_sums_numpy, False
    try:  # the on-disk cache needs a writable place; without one, compile once per process
        return numba.njit(cache=True, nogil=True)(_nearest_merge), numba.njit(cache=True, nogil=True)(
            _pair_sums_loop), True
    except RuntimeError:
        return numba.njit(nogil=True)(_nearest_merge), numba.njit(nogil=True)(_pair_sums_loop), True


_kernels = functools.cache(_compile)


def nearest_distances(sorted_values: np.ndarray, sorted_queries: np.ndarray) -> np.ndarray:
    return _kernels()[0](sorted_values, sorted_queries)


def pair_sums(first: np.ndarray, first_codes: np.ndarray, second: np.ndarray, second_codes: np.ndarray,
              start: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _kernels()[1](first, first_codes, second, second_codes, start, counts)


def compiled() -> bool:
    """Whether the numba kernels run (compiling them if that has not happened yet)."""
    return _kernels()[2]
