"""Exact subset sum on magnitudes: branch and bound with bounded meet-in-the-middle leaves.

``sltcheck.pruning.certified_search.solve_exact`` reduces min |w - a . m| (a nonzero) to
this module's problem. From the base mask "every negative candidate" (sum R-), flipping
candidate k (keeping a positive one, or dropping a negative one) adds c_k = |a_k| > 0, so
a . m = R- + c(F) for the flip set F and the error is |t - c(F)| with t = w - R-. From "every
positive candidate" (sum R+) a flip subtracts c_k and t = R+ - w. The caller takes the
smaller t, so 0 < t <= S / 2 with S = sum c (a target beyond the reach has its closed form
there and never comes here). The problem here:

    minimise |t - c(F)| over F, every c_k > 0.

Because every c_k is positive, a part of a flip set never sums to more than the whole: a set
within ``best`` of t, and every part of it, sums to at most U = t + best. So

* an item with c_k > U is never flipped (near the edge of the reach, t is small and few
  items qualify);
* a leaf splits the items that qualify in two halves and lists, for each, the subset sums
  <= U in ascending order (:func:`sltcheck.pruning.kernels.bounded_sums`); a two-pointer walk
  pairs every left sum with the right sums nearest to t minus it (Horowitz and Sahni,
  restricted to [0, U]): every set within ``best`` of t is one such pair;
* where those lists would be longer than ``LIST_CAP`` (targets farther inside the reach),
  the node branches on its largest item (flipped: t - c_1; or not), the node whose subset
  sums are densest near its target first, and a node whose items cannot come within
  ``best`` of its target (t_node < 0, or the sum of its items < t_node) is pruned.

Farther inside, the bound prunes little. Where the optimum of a wide problem lies below the
float64 floor, :meth:`BoundedSearch.run` first *seeks* a mask at the stop (the floor, or fast
mode's tolerance): the sliced search (:func:`sltcheck.pruning.sliced_search.sliced_search`)
over the fewest smallest items likely to get there (32 to ``free_max``), the larger ones
decided greedily so that what is left falls near the middle of the free items' sums, for a
few slices only (estimated from the density of those sums at the target; a quick
meet-in-the-middle over 24 of them bounds the windows first). If it does not get there, the
complete search runs, and also stops at the stop: the sliced search over every item that
qualifies, where they are at most ``SLICED_MAX`` and the bound would hardly shorten the lists;
else the branch and bound above, best first.

Why the answer is exact. Floats only shortlist. ``tolerance`` bounds, twice over, the
difference between the float64 error of any flip set, however its sum is grouped here
(t rounded once from its exact value, at most n + 3 roundings of numbers below t + S), and
its exact error (Higham, Thm 4.4). Every comparison that discards a set keeps a margin of
``2 tolerance`` or more: a leaf or a slice returns every pair within ``best + 2 tolerance``
of its target, a node is pruned only when its bound exceeds ``best + 4 tolerance``, an item
is dropped only above ``t + best + 4 tolerance``. So when the search completes, the
shortlist holds every flip set whose exact error is the exact optimum, and the caller
decides among them in exact rational arithmetic. A stop is decided exactly by the caller
(``accept``).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sltcheck.pruning import kernels, sliced_search

LIST_CAP = 1 << 20  # sums per leaf list: 16 MB with their codes; a longer one branches instead
GROUP_MAX = 62  # items per leaf half: codes are int64 bit masks
ESTIMATE_BINS = 256  # bins of the histogram that estimates list lengths and the density at t
SEEK_LISTS = 1 << 16  # below this estimated list length the complete search is cheap: no seek first
SEEK_QUICK = 24  # a quick meet-in-the-middle over this many free items bounds the seek's windows first
SEEK_FREE_MIN = 32  # the seek tries 32, 36, ... free items: the fewest that are likely enough
SEEK_MARGIN = 1e-3  # ... where the estimated nearest sum of all their subsets is below this fraction of the stop
SLICED_MAX = 56  # the complete search may be the sliced search up to this many items that qualify ...
SLICED_SLICE_SIZE = 1 << 18  # left sums per slice there: ~50 MB at most with the pairs of a slice
SLICED_SHORTER = 3  # ... unless the bound shortens each list below 2^(m/2 - 3) sums: then branch and bound
SEEK_SLICE_SIZE = 1 << 16  # left sums per slice of the seek at most
SEEK_SLICES = 8  # slices the seek may examine before the complete search takes over
SHORTLIST_KEEP = 200_000  # flip sets kept in the shortlist (only many equal items come near)


@dataclass(frozen=True)
class BoundedOutcome:
    """What the search found; the caller decides the shortlist exactly.

    ``flips``: the shortlisted flip sets as Python int bit codes over the items (bit k =
    item k flipped). ``complete``: every flip set within ``best_float + 2 tolerance`` of t
    is in ``flips``. ``stopped``: ``accept`` said yes (a mask at the stop). Otherwise the
    time ran out and ``lower_bound`` bounds the float error of every flip set not examined
    (subtract ``2 tolerance`` for a bound on the exact error). ``truncated``: more flip sets
    tied than ``SHORTLIST_KEEP`` (the nearest are kept).
    """

    flips: list[int]
    float_errors: list[float]
    accepted: list[int]  # where stopped: the flip sets ``accept`` said yes to (one at least is at the stop)
    best_float: float
    complete: bool
    stopped: bool
    lower_bound: float
    truncated: bool
    nodes: int
    leaves: int


def estimated_sizes(values: np.ndarray, bound: float) -> tuple[float, float]:
    """(log2 of the number of subsets of ``values`` with sum <= ``bound``, log2 of the number with
    sum in the top bin [bound - h, bound]), h = bound / ESTIMATE_BINS: a histogram of subset sums with
    every value rounded to a whole number of bins. Only an estimate: it picks the strategy, never
    decides anything (the lists themselves are capped)."""
    bins = ESTIMATE_BINS
    width = bound / bins
    if not width > 0:
        return 0.0, 0.0
    counts = np.zeros(bins + 1)
    counts[0] = 1.0
    scale = 0.0  # counts are kept below 2^512 by halving; log2 of what was taken out
    for shift in np.rint(values / width).astype(np.int64).tolist():
        if shift <= bins:
            shifted = counts[: bins + 1 - shift].copy()
            counts[shift:] += shifted
        top = counts.max()
        if top > 2.0**512:
            counts /= top
            scale += float(np.log2(top))
    total = counts.sum()
    edge = counts[-1]
    return (scale + float(np.log2(total)) if total > 0 else -np.inf,
            scale + float(np.log2(edge)) if edge > 0 else -np.inf)


class BoundedSearch:
    """One problem: items ``c`` (positive float64), target ``t`` (float64, 0 < t)."""

    def __init__(
        self,
        t: float,
        c: np.ndarray,
        tolerance: float,
        stop: float,
        accept: Callable[[list[int]], bool] | None,
        deadline: float | None,
        free_max: int,
    ) -> None:
        self.t = float(t)
        self.c = np.asarray(c, dtype=np.float64)
        self.tolerance = float(tolerance)
        self.stop = float(stop)
        self.accept = accept
        self.deadline = deadline
        self.free_max = free_max
        self.order = np.argsort(-self.c, kind="stable")  # largest first
        self.sorted = self.c[self.order]
        # suffix[k] = sum of sorted[k:] (recursive from the smallest; its rounding is inside tolerance)
        self.suffix = np.concatenate((np.cumsum(self.sorted[::-1])[::-1], [0.0]))
        self.best = np.inf
        self.flips: list[int] = []
        self.float_errors: list[float] = []
        self.truncated = False
        self.accepted: list[int] = []
        self.nodes = 0
        self.leaves = 0

    # --- the shortlist -------------------------------------------------------------------------

    def _offer(self, flips: list[int], errors: np.ndarray) -> None:
        if not flips:
            return
        self.best = min(self.best, float(errors.min()))
        self.flips.extend(flips)
        self.float_errors.extend(errors.tolist())
        window = self.best + 2.0 * self.tolerance
        if len(self.flips) > 2 * SHORTLIST_KEEP or float(errors.max()) > window:
            keep = [i for i, e in enumerate(self.float_errors) if e <= window]
            if len(keep) > SHORTLIST_KEEP:
                keep = sorted(keep, key=lambda i: self.float_errors[i])[:SHORTLIST_KEEP]
                self.truncated = True
            self.flips = [self.flips[i] for i in keep]
            self.float_errors = [self.float_errors[i] for i in keep]

    def _stop_reached(self) -> bool:
        if self.accept is None or self.stop <= 0.0 or self.best > self.stop:
            return False
        near = sorted(range(len(self.flips)), key=lambda i: self.float_errors[i])[:64]
        candidates = [self.flips[i] for i in near if self.float_errors[i] <= self.stop]
        if self.accept(candidates):
            self.accepted = candidates
            return True
        return False

    def _greedy(self) -> None:
        """Largest first, flip an item where it still fits (a flip only adds, so an overshoot could
        never be undone): a first upper bound."""
        residual, code = self.t, 0
        for k, value in zip(self.order.tolist(), self.sorted.tolist(), strict=True):
            if value <= residual:
                residual -= value
                code |= 1 << k
        self._offer([code], np.array([abs(residual)]))

    # --- the search ----------------------------------------------------------------------------

    def run(self) -> BoundedOutcome:
        self._greedy()
        stopped = self._stop_reached()
        plan = self._seek_plan() if not stopped and self.stop > 0.0 else None
        if plan is not None:
            stopped = self._seek(*plan)
        lower_bound = np.inf
        complete = False
        if not stopped and self._whole_sliced():
            positions = np.arange(self._first_within(self._reach(self.t), 0), self.sorted.size)
            # every fourth item to each quarter (see _centred)
            ran_out = not self._sliced(np.concatenate([positions[k::4] for k in range(4)]), 0, self.t, None,
                                       SLICED_SLICE_SIZE)
            stopped = self._stop_reached()
            complete = not ran_out and not stopped
            lower_bound = 0.0 if ran_out and not stopped else np.inf
        elif not stopped:
            stopped, lower_bound = self._branch_and_bound()
            complete = not stopped and lower_bound == np.inf
        return BoundedOutcome(
            self.flips, self.float_errors, self.accepted, self.best, complete, stopped, lower_bound,
            self.truncated, self.nodes, self.leaves,
        )

    def _first_within(self, bound: float, start: int) -> int:
        """The first position >= start (largest first) whose item is <= bound."""
        return start + int(np.searchsorted(-self.sorted[start:], -bound, side="left"))

    def _seek_plan(self) -> tuple[np.ndarray, int, float] | None:
        """A centred sliced search, where one is likely to reach the stop and the complete search
        would be long: the smallest items that qualify are left free (the fewest, from
        ``SEEK_FREE_MIN`` up to ``free_max``, likely to reach it), the larger ones
        decided greedily so that what is left (``target``) falls as near the middle of the free
        items' sums as they allow, where those sums are densest. Returns (free positions, flips of
        the larger ones, target), or None where the lists are short anyway, or where the free
        items' density at the target (Gaussian estimate) puts the nearest sum above a quarter of
        the stop (near the edge of the reach: there the branch and bound, which also stops at the
        stop, is the better search)."""
        reach = self._reach(self.t)
        first = self._first_within(reach, 0)
        items = self.sorted[first:]
        if items.size <= 2 * GROUP_MAX and max(
                estimated_sizes(items[0::2], reach)[0], estimated_sizes(items[1::2], reach)[0]) < np.log2(SEEK_LISTS):
            return None
        positions = np.arange(first, self.sorted.size)
        # The fewest free items (shortest lists) whose estimated nearest sum is far below the stop: the
        # seek examines a few slices only, about a thousandth of the pairs (measured on Xavier instances).
        for count in [*range(SEEK_FREE_MIN, self.free_max, 4), self.free_max]:
            log_nearest, plan = self._centred(positions, count)
            if log_nearest < np.log(SEEK_MARGIN * self.stop):
                return plan
        return plan if log_nearest < np.log(0.25 * self.stop) else None

    def _centred(self, positions: np.ndarray, count: int, target: float | None = None) -> tuple[
            float, tuple[np.ndarray, int, float]]:
        """The ``count`` smallest of ``positions`` (largest first) free, the others decided greedily
        so that what is left of ``target`` (default t) falls near the middle of the free items'
        sums: (log of the estimated nearest sum, (free positions, flips, what is left))."""
        target = self.t if target is None else target
        free = positions[-count:]
        # Every fourth item to each quarter of the sliced search: its four lists then spread alike,
        # which keeps the right windows of a slice narrow.
        free = np.concatenate([free[k::4] for k in range(4)])
        free_values = self.sorted[free]
        aim = target - 0.5 * float(free_values.sum())
        residual, fixed = aim, 0
        for position in positions[: positions.size - free.size].tolist():
            value = float(self.sorted[position])
            if value <= residual:  # never overshoot: the free items only add
                residual -= value
                fixed |= 1 << int(self.order[position])
        spread = 0.5 * float(np.sqrt(np.sum(free_values**2)))  # standard deviation of a random free subset's sum
        log_density = free.size * np.log(2.0) - 0.5 * (residual / spread) ** 2 - np.log(spread * np.sqrt(2.0 * np.pi))
        return -np.log(2.0) - log_density, (free, fixed, target - (aim - residual))  # nearest ~ 1 / (2 density)

    def _seek(self, free: np.ndarray, fixed: int, target: float) -> bool:
        """The sliced search over the free items for a few slices, stopping at the stop."""
        # A first bound, cheaply: every subset of the smallest SEEK_QUICK free items (two lists of
        # 2^(SEEK_QUICK / 2) sums), the other free ones decided greedily. The windows of the
        # slices below are best + 2 tolerance wide: without a good best they can be long.
        positions = np.sort(free)
        _, (quick, quick_fixed, quick_target) = self._centred(positions, min(SEEK_QUICK, positions.size), target)
        self._pair_lists(quick_target, quick, quick_fixed | fixed)
        if self._stop_reached():
            return True
        self._sliced(free, fixed, target, SEEK_SLICES, SEEK_SLICE_SIZE)
        return self._stop_reached()

    def _sliced(self, free: np.ndarray, fixed: int, target: float, max_slices: int | None,
                max_slice_size: int) -> bool:
        """:func:`sliced_search.sliced_search` over the items at ``free`` (at most 62), each flip set
        joined with ``fixed``, into the shortlist, stopping at the stop; True if it ran to the end
        (then the shortlist holds every such set within best + 2 tolerance of ``target``)."""
        free_items = self.order[free].tolist()

        def flips_of(codes: np.ndarray) -> list[int]:
            out = []
            for code in codes.tolist():
                flips = fixed
                for bit, item in enumerate(free_items):
                    if code >> bit & 1:
                        flips |= 1 << item
                out.append(flips)
            return out

        def reached(codes: np.ndarray, float_errors: np.ndarray) -> bool:
            near = np.argsort(float_errors, kind="stable")[: np.count_nonzero(float_errors <= self.stop)][:64]
            return bool(self.accept is not None and self.accept(flips_of(np.unique(codes[near]))))

        outcome = sliced_search.sliced_search(
            target, self.sorted[free], self.tolerance, self.best + self.tolerance, self.stop,
            reached if self.stop > 0.0 else None, max_slices=max_slices, max_slice_size=max_slice_size,
            deadline=self.deadline,
        )
        self._offer(flips_of(outcome.codes), outcome.float_errors)
        return outcome.complete

    def _whole_sliced(self) -> bool:
        """Whether the complete search is the sliced search over every item that qualifies rather
        than the branch and bound: where they fit its codes (SLICED_MAX) and the bound U = t + best
        would not shorten the lists much (the target far from the edge), its 2^(m/4)-long lists
        and value slices beat many capped leaves."""
        reach = self._reach(self.t)
        items = self.sorted[self._first_within(reach, 0):]
        if items.size > SLICED_MAX or items.size <= 2 * 20:  # up to 40 items: one leaf of <= 2^20 sums
            return False
        halves = max(estimated_sizes(items[0::2], reach)[0], estimated_sizes(items[1::2], reach)[0])
        return bool(halves > items.size / 2.0 - SLICED_SHORTER)

    def _node_bound(self, target: float, start: int) -> float:
        """A lower bound on the float error of every flip set of a node: its sums lie in
        [0, sum of its items]."""
        return max(0.0, -target, target - float(self.suffix[start]))

    def _reach(self, target: float) -> float:
        """Items above this never join a flip set of a node aiming at ``target``, and no part of
        such a set sums above it: t + best plus the rounding of both sides, with room to spare."""
        return target + self.best + 4.0 * self.tolerance

    def _branch_and_bound(self) -> tuple[bool, float]:
        """Best first over nodes (target, first position, flips so far): the node whose sums are
        densest near its target (estimated) first, so that a mask at the stop, where one exists,
        comes early; every node is examined unless pruned or stopped. Returns (stopped, bound of
        what was left when the time ran out, inf if nothing was)."""
        heap: list[tuple[float, int, float, int, int]] = [(0.0, 0, self.t, 0, 0)]
        pushed = 1
        while heap:
            if self.deadline is not None and time.perf_counter() > self.deadline:
                return False, min(self._node_bound(target, start) for _, _, target, start, _ in heap)
            _, _, target, start, flips = heapq.heappop(heap)
            self.nodes += 1
            first = self._first_within(self._reach(target), start)
            if self._node_bound(target, first) > self.best + 4.0 * self.tolerance:
                continue
            if first >= self.sorted.size:  # no item fits: the node is its flips alone
                self._offer([flips], np.array([abs(target)]))
            elif not self._leaf(target, first, flips):
                item = int(self.order[first])
                value = float(self.sorted[first])
                for child_target, child_flips in ((target - value, flips | 1 << item), (target, flips)):
                    if child_target >= -self.best - 4.0 * self.tolerance:
                        density = estimated_sizes(self.sorted[first + 1:], self._reach(child_target))[1]
                        heapq.heappush(heap, (-density, pushed, child_target, first + 1, child_flips))
                        pushed += 1
            if self._stop_reached():
                return True, np.inf
        return False, np.inf

    def _leaf(self, target: float, first: int, flips: int) -> bool:
        """Bounded meet-in-the-middle over every item from ``first`` on; False when a list would
        be too long (the caller branches instead)."""
        if self.sorted.size - first > 2 * GROUP_MAX:
            return False
        if not self._pair_lists(target, np.arange(first, self.sorted.size), flips):
            return False
        self.leaves += 1
        return True

    def _pair_lists(self, target: float, positions: np.ndarray, flips: int) -> bool:
        """Every flip set of the items at ``positions`` (at most 2 GROUP_MAX) within ``best + 2
        tolerance`` of ``target``, each joined with ``flips``, into the shortlist; False (nothing
        done) when a list of sums <= the reach would be longer than LIST_CAP."""
        bound = self._reach(target)
        halves = (positions[0::2], positions[1::2])
        if max(estimated_sizes(self.sorted[h], bound)[0] for h in halves) > np.log2(LIST_CAP):
            return False
        left_list = kernels.bounded_sums(self.sorted[halves[0]], bound, LIST_CAP)
        right_list = kernels.bounded_sums(self.sorted[halves[1]], bound, LIST_CAP) if left_list is not None else None
        if left_list is None or right_list is None:
            return False
        (left, left_codes), (right, right_codes) = left_list, right_list
        # Left sums from the largest down: the residuals target - left ascend.
        residuals = target - left[::-1]
        left_codes = left_codes[::-1]
        nearest = kernels.nearest_distances(right, residuals)
        leaf_best = float(nearest.min())
        window = min(self.best, leaf_best) + 2.0 * self.tolerance
        # A row with a right sum inside its window has its nearest one there too; doubling the
        # window absorbs the roundings of residual +- window.
        rows = np.flatnonzero(nearest <= 2.0 * window)
        low = np.searchsorted(right, residuals[rows] - window, side="left")
        high = np.searchsorted(right, residuals[rows] + window, side="right")
        counts = high - low
        total = int(counts.sum())
        if total == 0:
            return True
        if total > 2 * SHORTLIST_KEEP:  # many equal sums: the nearest rows first
            take = np.argsort(nearest[rows], kind="stable")
            cumulative = np.cumsum(counts[take])
            take = take[: int(np.searchsorted(cumulative, 2 * SHORTLIST_KEEP)) + 1]
            rows, low, counts = rows[take], low[take], counts[take]
            total = int(counts.sum())
            self.truncated = True
        pair_rows = np.repeat(rows, counts)
        pair_columns = np.repeat(low - np.cumsum(counts) + counts, counts) + np.arange(total)
        errors = np.abs(residuals[pair_rows] - right[pair_columns])
        close = errors <= window
        left_items = self.order[halves[0]].tolist()
        right_items = self.order[halves[1]].tolist()
        found = []
        for left_code, right_code in zip(left_codes[pair_rows[close]].tolist(),
                                         right_codes[pair_columns[close]].tolist(), strict=True):
            code = flips
            for bit, item in enumerate(left_items):
                if left_code >> bit & 1:
                    code |= 1 << item
            for bit, item in enumerate(right_items):
                if right_code >> bit & 1:
                    code |= 1 << item
            found.append(code)
        self._offer(found, errors[close])
        return True
