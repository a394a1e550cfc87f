"""Fast mode for wide problems: greedy, then meet-in-the-middle at two scales.

For n' well beyond exact reach (128 .. 1024 and more) the optimum of 2^n' subsets
lies at the float64 floor, and a mask far below Gurobi-default's error is found
with a few thousand sums. The nonzero candidates are laid out once per problem:

* ``singles``: the ``SINGLES_MAX`` smallest |a|;
* ``pairs``: the others sorted by value and paired with their neighbour
  (lo <= hi); the ``PAIRS_MAX`` pairs of least difference d = hi - lo are kept. A
  pair always keeps one of its two candidates: lo, or hi instead, which adds d;
* the rest, largest |a| first.

One pass with s singles and k pairs:

1. greedy (largest first) decides the rest (and the singles left out of the
   pass), aiming so that what is left falls in the middle of the singles' and the
   differences' subset sums, where they are densest;
2. meet-in-the-middle over the s singles (Horowitz-Sahni: both halves' 2^(s/2)
   subset sums sorted by merging, the nearest pair found by a two-pointer walk)
   brings what is left down to about spread(singles) / 2^s;
3. meet-in-the-middle over the k differences, whose spread is far smaller (the
   closest neighbours among hundreds of values), brings it to about
   spread(differences) / 2^k.

Passes grow (s by ``SINGLES_STEP``, k by ``PAIRS_STEP``) until the error is proven
at most ``stop`` (a compensated sum, Ogita-Rump-Oishi Sum2, with a rigorous bound
on its error) or both reach their maximum; the best pass is kept. Nothing here
claims optimality: the caller recomputes the mask's error exactly.

Two implementations give bit-for-bit the same masks: numba kernels (one compiled
call for a whole batch of problems) and numpy (sorted sums by a stable argsort of two sorted runs, which is a
merge with ties to the first run; the nearest pair by binary search, which finds
the same first right sum >= the residual as the two-pointer walk; the scalar steps
are the same Python functions, uncompiled). The layout is numpy in both.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable

import numpy as np

SINGLES_START, SINGLES_STEP, SINGLES_MAX = 12, 2, 20
PAIRS_START, PAIRS_STEP, PAIRS_MAX = 16, 4, 32  # at most 2^16 sums per half
MIN_CANDIDATES = 128  # below, the layout would leave too few candidates to greedy (fast mode uses the sliced search)
UNIT_ROUNDOFF = 2.0**-53


# --- scalar steps: plain Python, compiled by numba or run as they are --------------------------------


def _greedy(values: np.ndarray, start: int, stop: int, residual: float, mask: np.ndarray) -> float:
    """Largest first over values[start:stop]: keep one when it brings the residual closer to 0."""
    for index in range(start, stop):
        value = values[index]
        if abs(residual - value) < abs(residual):
            residual -= value
            mask[index] = True
        else:
            mask[index] = False
    return residual


def _half_sum(values: np.ndarray, start: int, stop: int) -> float:
    total = 0.0
    for index in range(start, stop):
        total += values[index]
    return 0.5 * total


def _low_sum(values: np.ndarray, first: int, pairs: int) -> float:
    """What the pairs keep when none is chosen: the sum of their lo."""
    total = 0.0
    for j in range(pairs):
        total += values[first + 2 * j]
    return total


def _pair_differences(values: np.ndarray, first: int, pairs: int) -> np.ndarray:
    differences = np.empty(pairs)
    for j in range(pairs):
        differences[j] = values[first + 2 * j + 1] - values[first + 2 * j]
    return differences


def _residual_within(w: float, values: np.ndarray, mask: np.ndarray, stop: float) -> tuple[bool, float]:
    """Whether |w - sum of the kept values| <= stop, proven: Sum2 (Ogita, Rump, Oishi 2005)
    has |result - exact| <= u |exact| + gamma_(n-1)^2 sum |terms|. Returns it and |result|."""
    total, compensation, magnitude, terms = w, 0.0, abs(w), 1
    for index in range(values.size):
        if mask[index]:
            term = -values[index]
            new_total = total + term  # TwoSum: new_total + error == total + term exactly
            virtual = new_total - total
            error = (total - (new_total - virtual)) + (term - virtual)
            total = new_total
            compensation += error
            magnitude += abs(term)
            terms += 1
    result = abs(total + compensation)
    gamma = terms * UNIT_ROUNDOFF / (1.0 - terms * UNIT_ROUNDOFF)
    bound = result * (1.0 + 4.0 * UNIT_ROUNDOFF) + 2.0 * gamma * gamma * magnitude
    return bound <= stop, result


# --- the two vector steps, compiled ------------------------------------------------------------------


def _merged_subset_sums(values: np.ndarray, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """The 2^h subset sums of values[start:stop] ascending, codes over bits 0..h-1: each step
    merges the sorted sums with themselves plus the next value, ties to the first run."""
    h = stop - start
    sums = np.zeros(1 << h)
    codes = np.zeros(1 << h, dtype=np.int64)
    spare_sums = np.zeros(1 << h)
    spare_codes = np.zeros(1 << h, dtype=np.int64)
    size = 1
    for bit in range(h):
        value = values[start + bit]
        flag = np.int64(1) << bit
        i, j, out = 0, 0, 0
        while i < size and j < size:
            shifted = sums[j] + value
            if shifted < sums[i]:
                spare_sums[out], spare_codes[out] = shifted, codes[j] | flag
                j += 1
            else:
                spare_sums[out], spare_codes[out] = sums[i], codes[i]
                i += 1
            out += 1
        while i < size:
            spare_sums[out], spare_codes[out] = sums[i], codes[i]
            i += 1
            out += 1
        while j < size:
            spare_sums[out], spare_codes[out] = sums[j] + value, codes[j] | flag
            j += 1
            out += 1
        sums, spare_sums = spare_sums, sums
        codes, spare_codes = spare_codes, codes
        size *= 2
    return sums, codes


def _nearest_pair_walk(target: float, left: np.ndarray, right: np.ndarray) -> tuple[int, int]:
    """(i, j) minimising |(target - left[i]) - right[j]|, the first i on ties; for each i, j is
    the first right >= the residual or the one before it (the one before on ties)."""
    last = right.size - 1
    j = right.size
    best, best_i, best_j = np.inf, 0, 0
    for i in range(left.size):
        residual = target - left[i]
        while j > 0 and right[j - 1] >= residual:
            j -= 1
        above, below = min(j, last), max(j - 1, 0)
        distance_above, distance_below = abs(residual - right[above]), abs(residual - right[below])
        if distance_above < distance_below:
            distance, column = distance_above, above
        else:
            distance, column = distance_below, below
        if distance < best:
            best, best_i, best_j = distance, i, column
    return best_i, best_j


# --- the same two steps in numpy ---------------------------------------------------------------------


def _sorted_subset_sums_numpy(values: np.ndarray, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    sums = np.zeros(1)
    codes = np.zeros(1, dtype=np.int64)
    for bit, value in enumerate(values[start:stop]):
        merged = np.concatenate((sums, sums + value))
        order = np.argsort(merged, kind="stable")
        sums = merged[order]
        codes = np.concatenate((codes, codes | (1 << bit)))[order]
    return sums, codes


def _nearest_pair_numpy(target: float, left: np.ndarray, right: np.ndarray) -> tuple[int, int]:
    residuals = target - left
    position = np.searchsorted(right, residuals, side="left")
    above, below = np.minimum(position, right.size - 1), np.maximum(position - 1, 0)
    distance_above, distance_below = np.abs(residuals - right[above]), np.abs(residuals - right[below])
    take_above = distance_above < distance_below
    distance = np.where(take_above, distance_above, distance_below)
    i = int(np.argmin(distance))
    return i, int(above[i] if take_above[i] else below[i])


# --- one problem, then a batch: one control flow, run as Python with the numpy steps, or compiled ------


def _one_problem(
    w: float, values: np.ndarray, rest: int, pairs: int, stop: float, mask: np.ndarray
) -> tuple[int, bool, float]:
    """Passes over one laid-out problem (values = rest | pairs lo, hi | singles); the best pass's
    mask goes to ``mask``. Returns the number of passes, whether ``stop`` was proven and the
    best pass's error (a compensated sum, within a few units in the last place)."""
    n = values.size
    first_single = rest + 2 * pairs
    singles_max = n - first_single
    trial = np.zeros(n, dtype=np.bool_)
    best = np.inf
    singles, used_pairs, passes = min(SINGLES_START, singles_max), min(PAIRS_START, pairs), 0
    while True:
        passes += 1
        start = n - singles  # the pass's singles: the smallest ones
        differences = _pair_differences(values, rest, used_pairs)
        centre_pairs, centre_singles = _half_sum(differences, 0, used_pairs), _half_sum(values, start, n)
        residual = w - _low_sum(values, rest, pairs) - centre_pairs - centre_singles
        residual = _greedy(values, 0, rest, residual, trial)
        residual = _greedy(values, first_single, start, residual, trial)
        # the singles
        middle = start + singles // 2
        left, left_codes = _subset_sums(values, start, middle)
        right, right_codes = _subset_sums(values, middle, n)
        target = residual + centre_singles
        i, j = _nearest_pair(target, left, right)
        code = left_codes[i] | (right_codes[j] << (middle - start))
        for bit in range(singles):
            trial[start + bit] = (code >> bit) & 1 == 1
        residual = (target - left[i]) - right[j]
        # the differences: a chosen pair keeps hi instead of lo
        half = used_pairs // 2
        left, left_codes = _subset_sums(differences, 0, half)
        right, right_codes = _subset_sums(differences, half, used_pairs)
        i, j = _nearest_pair(residual + centre_pairs, left, right)
        code = left_codes[i] | (right_codes[j] << half)
        for pair in range(pairs):
            chosen = pair < used_pairs and (code >> pair) & 1 == 1
            trial[rest + 2 * pair] = not chosen
            trial[rest + 2 * pair + 1] = chosen
        reached, error = _residual_within(w, values, trial, stop)
        if error < best:
            best = error
            mask[:] = trial
        if reached or (singles == singles_max and used_pairs == pairs):
            return passes, reached, best
        singles = min(singles + SINGLES_STEP, singles_max)
        used_pairs = min(used_pairs + PAIRS_STEP, pairs)


def _batch(targets: np.ndarray, values: np.ndarray, rest: int, pairs: int, stops: np.ndarray,
           masks: np.ndarray, passes: np.ndarray, reached: np.ndarray, errors: np.ndarray) -> None:
    for p in range(targets.size):
        passes[p], reached[p], errors[p] = _one_problem(targets[p], values[p], rest, pairs, stops[p], masks[p])


# The names the control flow calls: the numpy steps here; _compile gives a copy of it the compiled ones.
_subset_sums, _nearest_pair = _sorted_subset_sums_numpy, _nearest_pair_numpy
_SCALAR_STEPS = ("_greedy", "_half_sum", "_low_sum", "_pair_differences", "_residual_within")


def _compile() -> Callable[..., None] | None:
    try:
        import numba
    except ImportError:
        return None

    def jit(function: Callable[..., object], name: str) -> Callable[..., object]:
        # A copy of ``function`` whose global names resolve in ``namespace``: numba compiles the
        # same code with the compiled steps in place of the numpy ones.
        copy = types.FunctionType(function.__code__, namespace, name, function.__defaults__)
        copy.__qualname__, copy.__module__ = name, __name__
        try:
            return numba.njit(cache=True, nogil=True)(copy)
        except RuntimeError:  # no writable cache directory
            return numba.njit(nogil=True)(copy)

    namespace = dict(globals())
    for name in _SCALAR_STEPS:
        namespace[name] = jit(globals()[name], f"{name}_compiled")
    namespace["_subset_sums"] = jit(_merged_subset_sums, "_merged_subset_sums_compiled")
    namespace["_nearest_pair"] = jit(_nearest_pair_walk, "_nearest_pair_walk_compiled")
    namespace["_one_problem"] = jit(_one_problem, "_one_problem_compiled")
    return jit(_batch, "_batch_compiled")  # type: ignore[return-value]


_compiled = functools.cache(_compile)


def compiled() -> bool:
    """Whether the numba kernels run (compiling them if that has not happened yet)."""
    return _compiled() is not None


def layout(candidates: np.ndarray) -> tuple[np.ndarray, int, int]:
    """Per problem, the candidates' indices as rest (|a| descending) | pairs (lo, hi, by increasing
    hi - lo) | singles (|a| descending, the smallest last); with the sizes of rest and pairs."""
    problems, n = candidates.shape
    if n < MIN_CANDIDATES:
        raise ValueError(f"candidates must have at least {MIN_CANDIDATES} columns for the window search, got {n}")
    by_size = np.argsort(np.abs(candidates), axis=1, kind="stable")
    singles = by_size[:, :SINGLES_MAX][:, ::-1]
    others = by_size[:, SINGLES_MAX:]
    others = np.take_along_axis(others, np.argsort(np.take_along_axis(candidates, others, axis=1), axis=1,
                                                   kind="stable"), axis=1)
    count = others.shape[1] // 2
    low, high = others[:, 0:2 * count:2], others[:, 1:2 * count:2]
    differences = np.take_along_axis(candidates, high, axis=1) - np.take_along_axis(candidates, low, axis=1)
    kept_pairs = min(PAIRS_MAX, (n - SINGLES_MAX) // 3)
    chosen = np.argsort(differences, axis=1, kind="stable")[:, :kept_pairs]
    low, high = np.take_along_axis(low, chosen, axis=1), np.take_along_axis(high, chosen, axis=1)
    taken = np.zeros((problems, n), dtype=bool)
    for block in (singles, low, high):
        np.put_along_axis(taken, block, True, axis=1)
    key = np.where(taken, np.inf, -np.abs(candidates))
    rest = np.argsort(key, axis=1, kind="stable")[:, : n - SINGLES_MAX - 2 * kept_pairs]
    pairs = np.stack((low, high), axis=2).reshape(problems, 2 * kept_pairs)
    return np.concatenate((rest, pairs, singles), axis=1), rest.shape[1], kept_pairs


def window_search(
    targets: np.ndarray, candidates: np.ndarray, stops: np.ndarray, use_numba: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Masks (P, n') for the problems (targets (P,), candidates (P, n'), n' >= MIN_CANDIDATES),
    each searched until its error is proven <= stops[p] or the passes run out.

    Returns the masks, the number of passes per problem, whether ``stops`` was reached and the
    float errors. ``use_numba=False`` runs the numpy steps even where numba is installed.
    """
    order, rest, pairs = layout(candidates)
    values = np.ascontiguousarray(np.take_along_axis(candidates, order, axis=1), dtype=np.float64)
    problems, n = candidates.shape
    ordered_masks = np.zeros((problems, n), dtype=np.bool_)
    passes = np.zeros(problems, dtype=np.int64)
    reached = np.zeros(problems, dtype=np.bool_)
    errors = np.zeros(problems)
    targets = np.ascontiguousarray(targets, dtype=np.float64)
    stops = np.ascontiguousarray(stops, dtype=np.float64)
    kernel = _compiled() if use_numba else None
    (kernel or _batch)(targets, values, rest, pairs, stops, ordered_masks, passes, reached, errors)
    ordered_masks &= values != 0  # a zero candidate changes nothing: never keep it
    masks = np.zeros((problems, n), dtype=bool)
    np.put_along_axis(masks, order, ordered_masks, axis=1)
    return masks, passes, reached, errors
