"""The inner loop of the sliced search, compiled with numba when it is installed.

``nearest_distances(sorted_values, sorted_queries)``: for each query, the distance
to its nearest value, both arrays ascending. Compiled, it is one merge pass (a
two-pointer walk); without numba it is numpy's binary search, several times
slower at n' = 32 and bit-for-bit the same (both pick the first value >= the
query and the one before it). ``pair_sums``: every first[i] + second[j] for j in start[i] .. start[i] + counts[i],
with its bit code, in that order (one pass instead of numpy's gathers). ``bounded_sums(values, bound, cap)``:
the subset sums of ``values`` that are <= ``bound``, ascending, with their bit codes, built one value at a time
by merging the list with its shifted copy (ties to the unshifted run, as a stable sort of the two runs orders
them); ``None`` once the list would exceed ``cap`` entries. For positive values given largest first, the
list stays small until the smallest values double it, so the work is a few times the final size.
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


def _bounded_sums_numpy(values: np.ndarray, bound: float, cap: int) -> tuple[np.ndarray, np.ndarray, bool]:
    sums = np.zeros(1)
    codes = np.zeros(1, dtype=np.int64)
    for bit, value in enumerate(values.tolist()):
        shifted = sums + value  # ascending, as sums are
        keep = int(np.searchsorted(shifted, bound, side="right"))
        if sums.size + keep > cap:
            return sums[:0], codes[:0], False
        merged = np.concatenate((sums, shifted[:keep]))
        order = np.argsort(merged, kind="stable")  # a merge of two sorted runs, ties to the first
        sums = merged[order]
        codes = np.concatenate((codes, codes[:keep] | (1 << bit)))[order]
    return sums, codes, True


def _bounded_sums_loop(
    values: np.ndarray, bound: float, cap: int
) -> tuple[np.ndarray, np.ndarray, bool]:  # pragma: no cover
    room = 1024
    sums = np.empty(room)
    codes = np.empty(room, dtype=np.int64)
    spare_sums = np.empty(room)
    spare_codes = np.empty(room, dtype=np.int64)
    sums[0] = 0.0
    codes[0] = 0
    size = 1
    for bit in range(values.size):
        value = values[bit]
        keep = 0
        while keep < size and sums[keep] + value <= bound:
            keep += 1
        if size + keep > cap:
            return sums[:0].copy(), codes[:0].copy(), False
        if size + keep > room:
            while room < size + keep:
                room *= 2
            grown_sums = np.empty(room)
            grown_codes = np.empty(room, dtype=np.int64)
            grown_sums[:size] = sums[:size]
            grown_codes[:size] = codes[:size]
            sums, codes = grown_sums, grown_codes
            spare_sums = np.empty(room)
            spare_codes = np.empty(room, dtype=np.int64)
        flag = np.int64(1) << bit
        i = 0
        j = 0
        out = 0
        while i < size or j < keep:
            if j >= keep or (i < size and sums[i] <= sums[j] + value):
                spare_sums[out] = sums[i]
                spare_codes[out] = codes[i]
                i += 1
            else:
                spare_sums[out] = sums[j] + value
                spare_codes[out] = codes[j] | flag
                j += 1
            out += 1
        size = out
        sums, spare_sums = spare_sums, sums
        codes, spare_codes = spare_codes, codes
    return sums[:size].copy(), codes[:size].copy(), True


_PURE = (_nearest_merge, _pair_sums_loop, _bounded_sums_loop)


def _compile() -> tuple[tuple[Callable[..., object], ...], bool]:
    try:
        import numba
    except ImportError:
        return (_nearest_numpy, _pair_sums_numpy, _bounded_sums_numpy), False
    try:  # the on-disk cache needs a writable place; without one, compile once per process
        return tuple(numba.njit(cache=True, nogil=True)(kernel) for kernel in _PURE), True
    except RuntimeError:
        return tuple(numba.njit(nogil=True)(kernel) for kernel in _PURE), True


_kernels = functools.cache(_compile)


def nearest_distances(sorted_values: np.ndarray, sorted_queries: np.ndarray) -> np.ndarray:
    return _kernels()[0][0](sorted_values, sorted_queries)  # type: ignore[return-value]


def pair_sums(first: np.ndarray, first_codes: np.ndarray, second: np.ndarray, second_codes: np.ndarray,
              start: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _kernels()[0][1](first, first_codes, second, second_codes, start, counts)  # type: ignore[return-value]


def bounded_sums(values: np.ndarray, bound: float, cap: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Subset sums of ``values`` (at most 62) that are <= ``bound``, ascending, with bit codes; None over ``cap``."""
    kernel: Callable[..., tuple[np.ndarray, np.ndarray, bool]] = _kernels()[0][2]  # type: ignore[assignment]
    sums, codes, complete = kernel(np.ascontiguousarray(values, dtype=np.float64), float(bound), int(cap))
    return (sums, codes) if complete else None


def compiled() -> bool:
    """Whether the numba kernels run (compiling them if that has not happened yet)."""
    return _kernels()[1]
