"""The one-problem solvers by enumeration, ``"mitm"`` and ``"brute"``, and the ``"greedy"`` baseline.

``"mitm"`` is Horowitz and Sahni's meet-in-the-middle: the sorted subset sums of each half, every
left sum matched with its nearest right sums by binary search. ``"brute"`` tries all 2^n' subsets.
Both only shortlist in float64 and decide the shortlist exactly
(:func:`sltcheck.pruning.exact_errors.decide_exactly`), so their optimality is exact.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from sltcheck.pruning.exact_errors import SHORTLIST_LIMIT, decide_exactly, shortlist_tolerance
from sltcheck.pruning.sliced_search import sorted_subset_sums
from sltcheck.pruning.solver_types import Solution


def solve_mitm(w: float, a: np.ndarray) -> Solution:
    """Meet-in-the-middle over the nonzero candidates; the float64 shortlist decided exactly."""
    used = np.flatnonzero(a != 0)  # a zero candidate never changes the sum
    values = a[used]
    half = values.size // 2
    left_sums, left_codes = sorted_subset_sums(values[:half])
    right_sums, right_codes = sorted_subset_sums(values[half:])
    # Walk the left sums from the largest down so that the residuals w - left ascend:
    # searchsorted is fastest on sorted queries.
    left_sums, left_codes = left_sums[::-1], left_codes[::-1]
    residuals = w - left_sums
    nearest = _nearest_distance(right_sums, residuals)
    best_float = float(nearest.min())
    window = best_float + 2.0 * shortlist_tolerance(w, values)
    # A row with a right sum inside its window has its nearest one there too; doubling the
    # window absorbs the roundings of residual +- window, so no such row is missed.
    near_rows = np.flatnonzero(nearest <= 2.0 * window)
    low = np.searchsorted(right_sums, residuals[near_rows] - window, side="left")
    high = np.searchsorted(right_sums, residuals[near_rows] + window, side="right")
    counts = high - low
    total = int(counts.sum())
    proven = total <= SHORTLIST_LIMIT
    if proven:
        rows = np.repeat(near_rows, counts)
        starts = np.repeat(low - np.cumsum(counts) + counts, counts)
        columns = starts + np.arange(total)
    else:  # pathological ties: decide among the nearest pairs of the closest rows only
        rows = np.argsort(nearest, kind="stable")[:1000]
        columns = np.clip(np.searchsorted(right_sums, residuals[rows]), 0, right_sums.size - 1)
    codes = left_codes[rows] | (right_codes[columns] << half)
    mask = decide_exactly(w, a, used, codes)
    return Solution(mask.astype(np.float64), proven, best_float, _float_bound(best_float, w, values))


def _float_bound(best_float: float, w: float, a: np.ndarray) -> Fraction:
    """A proven lower bound on the exact optimum from the least float64 error of a complete
    enumeration: no mask's exact error is below it by more than the shortlist tolerance."""
    return max(Fraction(0), Fraction(best_float) - Fraction(shortlist_tolerance(w, a)))


def _nearest_distance(sorted_values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """For each query, the float distance to its nearest entry of ``sorted_values``."""
    position = np.searchsorted(sorted_values, queries)
    above = sorted_values[np.minimum(position, sorted_values.size - 1)]
    below = sorted_values[np.maximum(position - 1, 0)]
    return np.minimum(np.abs(queries - above), np.abs(queries - below))


def solve_brute(w: float, a: np.ndarray) -> Solution:
    """Every subset's sum as a product with its 0/1 indicator row, then the exact decision."""
    n = a.size
    codes = np.arange(2**n, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(n)) & 1).astype(np.float64)
    float_errors = np.abs(w - bits @ a)
    best_float = float(float_errors.min())
    shortlisted = float_errors <= best_float + 2.0 * shortlist_tolerance(w, a)
    proven = int(shortlisted.sum()) <= SHORTLIST_LIMIT
    if not proven:
        shortlisted = np.argsort(float_errors, kind="stable")[:1000]
    mask = decide_exactly(w, a, np.arange(n), codes[shortlisted])
    return Solution(mask.astype(np.float64), proven, best_float, _float_bound(best_float, w, a))


def solve_greedy(w: float, a: np.ndarray) -> Solution:
    """Largest |a_k| first; keep a_k when it brings the partial sum closer to w."""
    mask = np.zeros(a.size)
    residual = float(w)
    values = a.tolist()  # Python floats: the same float64 arithmetic, without numpy scalars
    for k in np.argsort(-np.abs(a), kind="stable").tolist():
        if abs(residual - values[k]) < abs(residual):
            residual -= values[k]
            mask[k] = 1.0
    return Solution(mask, False, abs(residual))
