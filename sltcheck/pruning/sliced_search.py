"""Four-list meet-in-the-middle in value slices: exact subset sum in bounded memory.

The candidates are split in four quarters A, B | C, D (the left half A, B is the
first n // 2 candidates, as in ``enumeration.solve_mitm``).
Each quarter's 2^(n/4) subset sums are enumerated and sorted. A left sum is a
pair a + b, a right sum a pair c + d; instead of sorting all 2^(n/2) sums of a
half (what Horowitz-Sahni does, 1 GB at n = 48), the left sums are generated one
value slice [x0, x1) at a time (for every a, the b in [x0 - a, x1 - a) by binary
search, as Schroeppel and Shamir's sorted lists allow), and only the right sums
that can pair with that slice, those within the current best error of
w - [x0, x1), are generated and sorted. Memory is O(2^(n/4) + slice), the work
that of Horowitz-Sahni, and the slices around the densest region come first, so
a search allowed to stop at a threshold (the float64 floor, or fast mode's
tolerance) stops after a few of them.

The float64 search only shortlists: every pair whose float error is within the
window ``best + 2 tolerance`` of the best one is returned, where ``tolerance``
bounds, twice over, |float error - exact error| of any pair (each quarter sum is
a recursive sum, one more rounding joins two quarters, one the residual, one the
difference: at most (n + 2) u (|w| + sum|a|) in all). The caller decides the
shortlist exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sltcheck.pruning import kernels

SLICE_SIZE = 1 << 20  # left sums per slice when the search must run to the end
MIN_SLICE_SIZE = 1 << 9
MAX_SLICES = 4096
SAMPLE_SIZE = 1 << 14  # left sums drawn (deterministically) to place the slice boundaries
MAX_CODE_BITS = 62
PAIR_LIMIT = 1 << 16
PROBE_SIZE = 64  # masks are int64 bit codes
RIGHT_LIMIT = 1 << 20  # right sums paired with one slice at most: a wider slice is halved


@dataclass(frozen=True)
class SlicedOutcome:
    codes: np.ndarray  # int64: shortlisted masks as bit codes over ``values``
    float_errors: np.ndarray  # their float64 errors
    best_float: float
    complete: bool  # every pair was examined: the shortlist holds every near-optimal mask


def sorted_subset_sums(values: np.ndarray, shift: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """All 2^h subset sums of ``values`` in ascending order, with their masks as bit codes.

    Each sum is accumulated in index order (recursive summation), so its rounding
    error is at most (h - 1) u sum|values| (Higham, Accuracy and Stability, Thm 4.4).
    """
    sums = np.zeros(1)
    codes = np.zeros(1, dtype=np.int64)
    for bit, value in enumerate(values):
        merged = np.concatenate((sums, sums + value))  # two sorted runs
        order = np.argsort(merged, kind="stable")  # timsort merges the runs in linear time
        sums = merged[order]
        codes = np.concatenate((codes, codes | (1 << (bit + shift))))[order]
    return sums, codes


def _pairs_between(
    first: np.ndarray, first_codes: np.ndarray, second: np.ndarray, second_codes: np.ndarray,
    low: float, high: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Every x + y (x in first, y in second sorted) with low <= y + x < high, as decided by y vs bound - x."""
    start = np.searchsorted(second, low - first, side="left")
    stop = np.searchsorted(second, high - first, side="left")
    return kernels.pair_sums(first, first_codes, second, second_codes, start, stop - start)


def _count_between(first: np.ndarray, second: np.ndarray, low: float, high: float) -> int:
    """How many pairs :func:`_pairs_between` would return, without making them."""
    start = np.searchsorted(second, low - first, side="left")
    stop = np.searchsorted(second, high - first, side="left")
    return int((stop - start).sum())


def _pairs_by_windows(residuals: np.ndarray, right: np.ndarray, window: float) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j) with |residuals[i] - right[j]| <= window, up to rounding at the edges."""
    order = np.argsort(right, kind="stable")
    ordered = right[order]
    lo = np.searchsorted(ordered, residuals - window, side="left")
    hi = np.searchsorted(ordered, residuals + window, side="right")
    counts = hi - lo
    rows = np.repeat(np.arange(residuals.size), counts)
    columns = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
    return rows, order[columns]


def _slice_bounds(
    a: np.ndarray, b: np.ndarray, slices: int, centre: float
) -> list[tuple[float, float]]:
    """``slices`` value ranges covering the line, each holding about as many a + b, nearest ``centre`` first."""
    if slices <= 1:
        return [(-np.inf, np.inf)]
    rng = np.random.default_rng(0)  # fixed: the same problem always gets the same slices
    size = min(SAMPLE_SIZE, 4 * slices)
    sample = np.sort(a[rng.integers(0, a.size, size)] + b[rng.integers(0, b.size, size)])
    cuts = np.unique(sample[np.linspace(0, size, slices + 1)[1:-1].astype(np.int64)])
    edges = np.concatenate(([-np.inf], cuts, [np.inf]))
    lows, highs = edges[:-1].copy(), edges[1:].copy()
    lows[0], highs[-1] = highs[0] - 1.0, lows[-1] + 1.0  # finite stand-ins for the two open ends
    order = np.argsort(np.abs(np.clip(centre, lows, highs) - centre), kind="stable")
    return list(zip(edges[:-1][order].tolist(), edges[1:][order].tolist(), strict=True))


def _slice_size(values: np.ndarray, half: int, stop_below: float, c_size: int, d_size: int,
                max_slice_size: int) -> int:
    """Left sums per slice: ``max_slice_size``, or fewer when the search may stop at ``stop_below``."""
    if stop_below <= 0.0:
        return max_slice_size
    # Pairs within stop_below of w expected per left sum: 2 stop_below times the density of
    # the right sums (about Gaussian) near w - left; a few such pairs are usually enough.
    spread = float(np.sqrt(np.sum(values[half:] ** 2) / 4.0 + np.sum(values[:half] ** 2) / 4.0)) + 1e-300
    per_left = 2.0 * stop_below * c_size * d_size / (spread * 2.5)
    return int(np.clip(2.0 / max(per_left, 1e-300), MIN_SLICE_SIZE, max_slice_size))


def _densest_left_sum(w: float, values: np.ndarray, half: int) -> tuple[float, float, float]:
    """The left sum l* maximising the product of the two (Gaussian) densities of the left and right
    sums (the densest pairs lie near it), with the variances of the two halves' sums."""
    mean_left, mean_right = values[:half].sum() / 2.0, values[half:].sum() / 2.0
    var_left = float(np.sum(values[:half] ** 2)) / 4.0 + 1e-300
    var_right = float(np.sum(values[half:] ** 2)) / 4.0 + 1e-300
    centre = (mean_left * var_right + (w - mean_right) * var_left) / (var_left + var_right)
    return centre, var_left, var_right


def _near_pairs(residuals: np.ndarray, right: np.ndarray, rows: np.ndarray, columns: np.ndarray,
                window: float) -> tuple[np.ndarray, np.ndarray]:
    """The (row, column) pairs to examine among the near ``rows`` and ``columns``: all of them, or,
    with many ties (over PAIR_LIMIT), those within ``window`` by sorted windows."""
    if rows.size * columns.size > PAIR_LIMIT:
        pair_rows, pair_columns = _pairs_by_windows(residuals[rows], right[columns], window)
        return rows[pair_rows], columns[pair_columns]
    pair_rows, pair_columns = (grid.ravel() for grid in np.meshgrid(rows, columns, indexing="ij"))
    return pair_rows, pair_columns


def _out_of_budget(examined: int, max_slices: int | None, deadline: float | None) -> bool:
    """Whether ``max_slices`` slices are examined or the ``deadline`` (``time.perf_counter()``) is past."""
    return (max_slices is not None and examined >= max_slices) or (
        deadline is not None and time.perf_counter() > deadline)


def _accepts(accept: Callable[[np.ndarray, np.ndarray], bool] | None, found_codes: list[np.ndarray],
             found_errors: list[np.ndarray]) -> bool:
    """Whether ``accept`` (if any) takes the shortlist found so far (if any)."""
    if accept is None or not found_codes:
        return False
    return accept(np.concatenate(found_codes), np.concatenate(found_errors))


def sliced_search(
    w: float,
    values: np.ndarray,
    tolerance: float,
    upper: float,
    stop_below: float = 0.0,
    accept: Callable[[np.ndarray, np.ndarray], bool] | None = None,
    *,
    max_slices: int | None = None,
    max_slice_size: int = SLICE_SIZE,
    deadline: float | None = None,
) -> SlicedOutcome:
    """Shortlist the masks of min |w - values . m|, slice by slice.

    ``upper`` bounds the best float error from above (e.g. a greedy mask's float
    error plus ``tolerance``); ``tolerance`` is the shortlist tolerance. Once the
    best float error is at most ``stop_below``, ``accept(codes, float_errors)`` is
    asked (with the shortlist so far) whether to stop; it decides exactly, e.g.
    whether a mask's exact error is at most ``stop_below``. The search also stops
    after ``max_slices`` slices (the densest first, of at most ``max_slice_size`` left
    sums each, as far as MAX_SLICES allows) or at ``deadline``
    (``time.perf_counter()``). Stopping early leaves ``complete=False``.
    """
    n = values.size
    if n > MAX_CODE_BITS:
        raise ValueError(f"values has {n} entries; the sliced search takes at most {MAX_CODE_BITS}")
    half = n // 2
    quarter_left, quarter_right = half // 2, half + (n - half) // 2
    a, a_codes = sorted_subset_sums(values[:quarter_left])
    b, b_codes = sorted_subset_sums(values[quarter_left:half], quarter_left)
    c, c_codes = sorted_subset_sums(values[half:quarter_right], half)
    d, d_codes = sorted_subset_sums(values[quarter_right:], quarter_right)

    left_count = a.size * b.size
    slice_size = _slice_size(values, half, stop_below, c.size, d.size, max_slice_size)
    slices = min(MAX_SLICES, max(1, -(-left_count // slice_size)))
    centre, var_left, var_right = _densest_left_sum(w, values, half)

    best = float(upper)
    found_codes: list[np.ndarray] = []
    found_errors: list[np.ndarray] = []

    def examine(low: float, high: float, reach: float | None = None) -> None:
        """Pair the left sums in [low, high) with every right sum that can beat ``best``
        (or, for the probe, with the right sums within ``reach`` of their residuals only)."""
        nonlocal best
        left, left_codes = _pairs_between(a, a_codes, b, b_codes, low, high)
        if left.size == 0:
            return
        residuals = w - left
        window = best + 2.0 * tolerance
        # tolerance also absorbs the rounding of c + d against the bounds below
        margin = window + tolerance if reach is None else min(reach, window + tolerance)
        right_low, right_high = float(residuals.min()) - margin, float(residuals.max()) + margin
        if left.size > 1 and _count_between(c, d, right_low, right_high) > RIGHT_LIMIT:
            # A slice wide in value (a tail) would pair with too many right sums: halve it at its
            # median left sum (memory stays O(slice + RIGHT_LIMIT)); every left sum is in one half.
            middle = float(np.median(left))
            if low < middle < high:
                examine(low, middle, reach)
                examine(middle, high, reach)
                return
        right, right_codes = _pairs_between(c, c_codes, d, d_codes, right_low, right_high)
        if right.size == 0:
            return
        # Values only are sorted (fast); the few near pairs find their codes afterwards.
        residuals_sorted, right_sorted = np.sort(residuals), np.sort(right)
        nearest = kernels.nearest_distances(right_sorted, residuals_sorted)
        best = min(best, float(nearest.min()))
        window = best + 2.0 * tolerance
        near_residuals = np.unique(residuals_sorted[nearest <= 2.0 * window])
        if near_residuals.size == 0:  # nothing here comes near the best of an earlier slice
            return
        lo = np.searchsorted(right_sorted, near_residuals - window, side="left")
        hi = np.searchsorted(right_sorted, near_residuals + window, side="right")
        spans = zip(lo.tolist(), hi.tolist(), strict=True)
        near_right = np.unique(np.concatenate([right_sorted[i:j] for i, j in spans]))
        rows = np.flatnonzero(np.isin(residuals, near_residuals))
        columns = np.flatnonzero(np.isin(right, near_right))
        pair_rows, pair_columns = _near_pairs(residuals, right, rows, columns, window)
        errors = np.abs(residuals[pair_rows] - right[pair_columns])
        close = errors <= window
        found_codes.append(left_codes[pair_rows[close]] | right_codes[pair_columns[close]])
        found_errors.append(errors[close])

    if slices > 1:
        # A probe first: about PROBE_SIZE left sums at the centre against about PROBE_SIZE^2 right
        # sums near them. Any pair it meets bounds the best error, which keeps the right windows
        # of every slice after it small; its pairs are met again in their own slice.
        width = PROBE_SIZE * np.sqrt(2.0 * np.pi * var_left) / left_count
        reach = PROBE_SIZE**2 * np.sqrt(2.0 * np.pi * var_right) / (2.0 * c.size * d.size)
        examine(float(centre) - width / 2.0, float(centre) + width / 2.0, float(reach))
    complete = True
    for examined, (low, high) in enumerate(_slice_bounds(a, b, slices, float(centre))):
        if _out_of_budget(examined, max_slices, deadline):
            complete = False
            break
        examine(low, high)
        if best <= stop_below and _accepts(accept, found_codes, found_errors):
            complete = False
            break
    codes = np.concatenate(found_codes) if found_codes else np.zeros(0, dtype=np.int64)
    errors = np.concatenate(found_errors) if found_errors else np.zeros(0)
    keep = errors <= best + 2.0 * tolerance
    return SlicedOutcome(codes[keep], errors[keep], best, complete)
