"""The ``"exact"`` and ``"fast"`` solvers on a batch of problems: certified masks in bounded memory.

Up to n' = ``BATCH_ENUMERATION_MAX`` every problem's 2^n' sums in one matrix product; beyond,
one problem at a time: the closed form beyond the reach (:func:`beyond_reach`), else the search
of :mod:`sltcheck.pruning.bounded_search` (:func:`solve_exact`); ``"fast"`` from n' =
``window_search.MIN_CANDIDATES`` tries :mod:`sltcheck.pruning.window_search` first. The
certificates are described in :mod:`sltcheck.pruning.subset_sum`.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from sltcheck.pruning import window_search
from sltcheck.pruning.bounded_search import BoundedSearch
from sltcheck.pruning.exact_errors import (
    SHORTLIST_LIMIT,
    UNIT_ROUNDOFF,
    decide_exactly,
    exact_error,
    float64_floor,
    shortlist_tolerance,
)

EXACT_PROVE_MAX = 40  # "exact" runs every search to the end (proves optimality) up to this n'
EXACT_FREE_MAX = 56  # the seek for a mask at the floor leaves at most this many candidates free
FAST_FREE_MAX = 44  # ... at fast mode's stop
# "fast" stops at this error (or the float64 floor, if larger): 10^-4 of Gurobi's default
# FeasibilityTol (1e-6), below which Gurobi-default's answers practically never go.
FAST_TOLERANCE = 1e-10
BATCH_ENUMERATION_MAX = 12  # up to this n', "exact" and "fast" enumerate all problems at once
BATCH_MEMORY_BYTES = 1 << 25  # per chunk of problems in that enumeration

# masks, certificates, best float errors, times, lower bounds
Batch = tuple[np.ndarray, list[str], np.ndarray, np.ndarray, list[Fraction | None]]


def solve_batch(solver: str, w: np.ndarray, a: np.ndarray, time_limit: float | None) -> Batch:
    """``"exact"`` and ``"fast"`` on every problem: masks, certificates, float errors, times, bounds."""
    problems, n = a.shape
    if n <= BATCH_ENUMERATION_MAX:
        return _enumerate_batch(w, a)
    masks = np.zeros((problems, n), dtype=bool)
    certificates = ["gap"] * problems
    objective = np.zeros(problems)
    times = np.zeros(problems)
    bounds: list[Fraction | None] = [None] * problems
    remaining = list(range(problems))
    if solver == "fast" and n >= window_search.MIN_CANDIDATES:
        remaining = _window_batch(w, a, masks, objective, times)
        for p in set(range(problems)) - set(remaining):
            bounds[p] = Fraction(0)  # at the stop, proven exactly: "gap" from 0 (or the floor, if earned)
    for p in remaining:
        tick = time.perf_counter()
        masks[p], certificates[p], objective[p], bounds[p] = solve_exact(float(w[p]), a[p], solver, time_limit)
        times[p] += time.perf_counter() - tick
    return masks, certificates, objective, times, bounds


def _window_batch(w: np.ndarray, a: np.ndarray, masks: np.ndarray, objective: np.ndarray,
                  times: np.ndarray) -> list[int]:
    """``"fast"`` from n' = window_search.MIN_CANDIDATES: the problems inside their reach in one
    compiled call; returns the problems it left to :func:`solve_exact` (beyond the reach, where
    the closed form is exact, or not proven at the stop)."""
    tick = time.perf_counter()
    inside = [p for p in range(w.size) if beyond_reach(float(w[p]), a[p]) is None]
    if not inside:
        return list(range(w.size))
    stops = np.array([max(FAST_TOLERANCE, float64_floor(w[p], a[p])) for p in inside])
    found, _, _, errors = window_search.window_search(w[inside], a[inside], stops)
    left = [p for p in range(w.size) if p not in inside]
    for row, p in enumerate(inside):
        if exact_error(w[p], a[p], found[row]) <= Fraction(float(stops[row])):
            masks[p], objective[p] = found[row], errors[row]  # its certificate: "gap" (the tolerance) or the floor
        else:
            left.append(p)
    times += (time.perf_counter() - tick) / w.size
    return sorted(left)


def _enumerate_batch(w: np.ndarray, a: np.ndarray) -> Batch:
    """All 2^n' subset sums of a chunk of problems as one matrix product, then the exact decision.

    A product with a 0/1 row is a sum of the kept candidates in some order: its
    rounding is within ``shortlist_tolerance``, whatever order BLAS uses.
    """
    problems, n = a.shape
    codes = np.arange(2**n, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(n)) & 1).astype(np.float64)  # (2^n, n)
    chunk = max(1, BATCH_MEMORY_BYTES // (8 * 3 * 2**n))
    masks = np.zeros((problems, n), dtype=bool)
    objective = np.zeros(problems)
    times = np.zeros(problems)
    tolerance = 2.0 * (n + 4) * UNIT_ROUNDOFF * (np.abs(w) + np.abs(a).sum(axis=1))
    for start in range(0, problems, chunk):
        tick = time.perf_counter()
        rows = slice(start, min(start + chunk, problems))
        float_errors = np.abs(w[rows, None] - a[rows] @ bits.T)
        best = float_errors.min(axis=1)
        shortlisted = float_errors <= (best + 2.0 * tolerance[rows])[:, None]
        for offset, row in enumerate(shortlisted):
            p = start + offset
            candidates = np.flatnonzero(row)
            if candidates.size == 1:
                masks[p] = bits[candidates[0]].astype(bool)
            else:
                masks[p] = decide_exactly(float(w[p]), a[p], np.arange(n), codes[candidates])
        objective[rows] = best
        times[rows] = (time.perf_counter() - tick) / (rows.stop - rows.start)
    return masks, ["optimal"] * problems, objective, times, [None] * problems


def _code_error(w: float, a: np.ndarray, used: np.ndarray, code: int) -> Fraction:
    mask = np.zeros(a.size, dtype=bool)
    mask[used[[bit for bit in range(used.size) if code >> bit & 1]]] = True
    return exact_error(w, a, mask)


def beyond_reach(w: float, a: np.ndarray) -> tuple[np.ndarray, float] | None:
    """Every subset sum lies in [R-, R+] (the sums of the negative and of the positive candidates):
    for w >= R+ the mask of every positive candidate is optimal, with error w - R+, and the only one
    (any other mask drops a positive or adds a negative, so its sum is strictly smaller); likewise
    for w <= R-. None when w is inside the reach. ``math.fsum`` rounds the exact sum once
    (Shewchuk's exact partials, IEEE round-to-nearest), so the sign of w - R+ it returns is the
    exact sign: the decision is exact (w = R+ included)."""
    above = math.fsum([w, *(-a[a > 0]).tolist()])
    if above >= 0.0:
        return a > 0, above
    below = math.fsum([*a[a < 0].tolist(), -w])
    if below >= 0.0:
        return a < 0, below
    return None


def solve_exact(w: float, a: np.ndarray, solver: str, time_limit: float | None) -> tuple[
        np.ndarray, str, float, Fraction | None]:
    """One problem in ``"exact"`` or ``"fast"`` mode: mask, certificate, best float error, lower bound.

    Beyond the reach: the closed form (``beyond_reach``). Inside it: the search of
    :mod:`sltcheck.pruning.bounded_search` on magnitudes, from the base mask of every negative
    candidate (t = w - R-) or of every positive one (t = R+ - w), whichever t is smaller; a flip
    set F maps back to the mask base xor F. It stops at ``stop``: 0 for ``"exact"`` up to
    ``EXACT_PROVE_MAX`` nonzero candidates (proven optimal), the float64 floor beyond, fast mode's
    tolerance (or the floor if larger) for ``"fast"``; each stop decided in exact arithmetic.
    """
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    used = np.flatnonzero(a != 0)  # a zero candidate never changes the sum
    if used.size == 0:
        return np.zeros(a.size, dtype=bool), "optimal", abs(w), None
    closed = beyond_reach(w, a)
    if closed is not None:
        return closed[0], "optimal", closed[1], None
    # t = w - R- or R+ - w, rounded once from its exact value (math.fsum); which is smaller is
    # immaterial to exactness (both are valid reductions), so the rounded values may decide it.
    from_low, from_high = math.fsum([w, *(-a[a < 0]).tolist()]), math.fsum([*a[a > 0].tolist(), -w])
    base, t = (a < 0, from_low) if from_low <= from_high else (a > 0, from_high)
    floor = float64_floor(w, a)
    if solver == "exact":
        stop, free_max = (0.0 if used.size <= EXACT_PROVE_MAX else floor), EXACT_FREE_MAX
    else:
        stop, free_max = max(floor, FAST_TOLERANCE), FAST_FREE_MAX
    base_code = sum(1 << bit for bit, kept in enumerate(base[used].tolist()) if kept)
    magnitudes = np.abs(a[used])
    tolerance = shortlist_tolerance(t, magnitudes)

    def accept(flips: list[int]) -> bool:
        return any(_code_error(w, a, used, base_code ^ f) <= Fraction(stop) for f in flips)

    outcome = BoundedSearch(t, magnitudes, tolerance, stop, accept, deadline, free_max).run()
    codes = [base_code ^ f for f in outcome.flips]
    if outcome.stopped:  # no optimality to decide: the best of those accepted (one is at the stop, exactly)
        codes = [base_code ^ f for f in outcome.accepted]
    elif len(codes) > SHORTLIST_LIMIT:  # pathological ties: decide among the nearest only
        codes = [codes[i] for i in np.argsort(outcome.float_errors, kind="stable")[:1000].tolist()]
    mask = decide_exactly(w, a, used, codes)
    if outcome.complete and not outcome.truncated and len(outcome.flips) <= SHORTLIST_LIMIT:
        return mask, "optimal", outcome.best_float, None
    if outcome.stopped:  # at the stop, decided exactly: the floor (checked again by the caller) or the tolerance
        return mask, "gap", outcome.best_float, Fraction(0)
    # The time ran out (or too many ties): every mask not examined is at least lower_bound away in
    # float64, every examined one at least best_float; the exact errors differ by under tolerance.
    bound = min(outcome.best_float, outcome.lower_bound)
    return mask, "gap", outcome.best_float, max(Fraction(0), Fraction(bound) - Fraction(2.0 * tolerance))
