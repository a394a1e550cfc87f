"""Subset-sum solvers: the engine behind the masks of Lemma 7 (Eqs. (6)-(8)).

In the proof of Lemma 7 every entry W[i, j] of a target matrix is approximated
by a subset sum sum_k m_k v_{i,j,k} u_{j,k} of n' random products, so finding the
masks is, entry by entry, the problem

    minimise |w - a . m|  over m in {0, 1}^n'                          (SUBSETSUM)

with target w and candidates a_k = v_{i,j,k} u_{j,k}. Appendix B.1 solves it with
Gurobi as the mixed-integer program min t s.t. -t <= w - a . m <= t, m binary.

:func:`solve_subset_sum` is the one entry point. It takes many problems at once
(targets (P,), candidates (P, n')) and a solver by name:

* ``"mitm"`` (default): exact meet-in-the-middle (Horowitz and Sahni). The
  candidates are split in two halves, the 2^(n'/2) subset sums of each half are
  enumerated in sorted order with numpy, and every left sum is matched with its
  nearest right sums by binary search. Optimality is exact, not up to a
  tolerance: the float64 search only shortlists every mask whose float64 error
  is within a rigorous rounding bound of the best one, and the shortlist is
  decided by exact rational arithmetic (see ``_shortlist_tolerance``).
* ``"exact"``: the same answers as ``"mitm"`` from a second, independent search,
  at every n' and every target, in bounded memory. A target beyond the reach
  (w >= R+, the sum of the positive candidates, or w <= R-) has a closed-form
  optimum: every candidate of its sign (``_beyond_reach``, decided exactly).
  Inside it, :mod:`sltcheck.pruning.bounded_search`: on the magnitudes |a_k| from
  the nearer edge, the subset sums that can still come within the best error are
  bounded, so a branch and bound over the largest candidates with meet-in-the-middle
  lists of bounded sums at its leaves proves the optimum near the edge; farther
  inside, where the optimum of a wide problem lies below the float64 floor, the
  sliced search (:mod:`sltcheck.pruning.sliced_search`, four sorted lists of
  2^(n'/4) sums) finds a mask there; n' <= 12 is a vectorised enumeration over all
  problems at once. Each problem gets a certificate: ``"optimal"`` (proven optimal,
  exactly; up to n' = ``EXACT_PROVE_MAX`` nonzero candidates always), or
  ``"float64-floor"``: the mask's exact error is at most the float64 floor
  (n' + 4) u (|w| + sum|a|) (see :func:`float64_floor`), so no mask can do better
  by more than the rounding of evaluating the sum itself; beyond n' = 40 the search
  stops at the floor where a mask reaches it and proves optimality where none does.
  Only where ``options.time_limit`` runs out: ``"gap"`` with a proven lower bound
  on the optimum (``lower_bounds``; inside the reach 0, as the LP relaxation gives).
* ``"fast"``: the same search, stopping as soon as the error is proven at most
  ``FAST_TOLERANCE`` (1e-10) or the floor, if larger (certificate ``"gap"`` from 0,
  or the floor where earned); where the optimum is above that, it runs to the end
  and equals ``"exact"``, and beyond the reach it is the closed form. From n' =
  ``window_search.MIN_CANDIDATES`` (128) the problems inside their reach first go
  through :mod:`sltcheck.pruning.window_search` (greedy on the large candidates,
  meet-in-the-middle on the smallest ones and on the differences of near-equal
  pairs, all problems in one compiled call); a mask it finds counts only where its
  exact error is at most the stop, the others take the search above.
* ``"brute"``: all 2^n' subsets (n' <= 20), decided the same exact way.
* ``"gurobi"``, ``"highs"`` (scipy.optimize.milp), ``"cvxpy"``: the MIP above.
* ``"greedy"``: largest |a_k| first, keep it when it reduces the error.

Exactness of ``"exact"`` and ``"fast"``: floats only shortlist. Every comparison that
discards a mask keeps a margin of twice a rigorous bound on the rounding of any float64
evaluation of its error (``_shortlist_tolerance``; see the bounded search's
docstring), the reach is decided by ``math.fsum`` (one rounding of the exact sum, so
its sign is exact), and the shortlist is decided in exact rational arithmetic, ties as
``"mitm"`` decides them (fewer kept weights, then lower code).

Whatever the solver, the returned masks are rounded to {0, 1} (after checking
that the solver's values are within ``binary_tolerance`` of 0 or 1) and the
reported error is recomputed from the mask exactly: |w - sum_k m_k a_k| with the
float64 inputs converted exactly to fractions. A MIP solver's own objective is
kept apart as ``solver_objective``: with FeasibilityTol and IntFeasTol it can be
smaller than the true error of the mask it returns.
"""

from __future__ import annotations

import atexit
import dataclasses
import importlib
import math
import multiprocessing
import time
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from sltcheck.numerics.validation import check_array, check_choice, check_dps, check_positive
from sltcheck.pruning import window_search
from sltcheck.pruning.bounded_search import BoundedSearch
from sltcheck.pruning.solver_names import (  # noqa: F401 (re-exported: the solvers' names live in a light module)
    BRUTE_MAX_CANDIDATES,
    CERTIFICATES,
    EXACT_SOLVERS,
    MIP_SOLVERS,
    MITM_MAX_CANDIDATES,
    SLICED_SOLVERS,
    SOLVERS,
)

EXACT_PROVE_MAX = 40  # "exact" runs every search to the end (proves optimality) up to this n'
EXACT_FREE_MAX = 56  # the seek for a mask at the floor leaves at most this many candidates free
FAST_FREE_MAX = 44  # ... at fast mode's stop
# "fast" stops at this error (or the float64 floor, if larger): 10^-4 of Gurobi's default
# FeasibilityTol (1e-6), below which Gurobi-default's answers practically never go.
FAST_TOLERANCE = 1e-10
BATCH_ENUMERATION_MAX = 12  # up to this n', "exact" and "fast" enumerate all problems at once
BATCH_MEMORY_BYTES = 1 << 25  # per chunk of problems in that enumeration
GUROBI_PIP_SIZE_LIMIT = 2000  # variables and constraints of gurobipy's pip licence
# cvxpy back-ends that accept boolean variables, in the order we prefer them.
CVXPY_MILP_SOLVERS: tuple[str, ...] = (
    "HIGHS", "SCIP", "CBC", "GLPK_MI", "SCIPY", "GUROBI", "CPLEX", "MOSEK", "XPRESS", "COPT",
)
UNIT_ROUNDOFF = 2.0**-53
# Beyond this many shortlisted masks (only with many equal candidates) only the nearest are
# decided exactly and optimality is not claimed: "gap", from the least float64 error found.
SHORTLIST_LIMIT = 100_000


class SolverUnavailableError(ValueError):
    """The requested solver is not installed, not licensed, or its licence is too small."""


class SolverOutputError(RuntimeError):
    """A solver returned something we refuse to use (values not near 0 or 1)."""


@dataclass(frozen=True)
class MIPOptions:
    """Options of the MIP solvers; ``None`` keeps the solver's default.

    Gurobi takes all of them (TimeLimit, MIPGap, MIPGapAbs, IntFeasTol,
    FeasibilityTol, Threads). scipy's HiGHS takes ``time_limit`` and ``mip_gap``
    only; cvxpy passes ``time_limit`` and ``mip_gap`` to GUROBI or HIGHS only.
    ``"exact"`` and ``"fast"`` take ``time_limit`` (seconds per problem): a problem
    that reaches it returns its best mask so far with the certificate ``"gap"`` and
    a proven lower bound (the others are ignored).
    """

    time_limit: float | None = None
    mip_gap: float | None = None
    mip_gap_abs: float | None = None
    int_feas_tol: float | None = None
    feasibility_tol: float | None = None
    threads: int | None = None
    cvxpy_solver: str | None = None
    binary_tolerance: float = 1e-4  # a solver value farther than this from 0/1 is an error

    def set_fields(self) -> dict[str, object]:
        names = ("time_limit", "mip_gap", "mip_gap_abs", "int_feas_tol", "feasibility_tol", "threads")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


@dataclass(frozen=True)
class SubsetSumResult:
    """Masks and their exactly recomputed errors for P problems.

    ``proven_optimal[p]`` is the solver's optimality certificate. It is exact
    when ``optimality_exact`` (mitm, brute, exact, fast); for MIP solvers it is the
    solver's OPTIMAL status, which holds only up to its MIPGap, MIPGapAbs,
    IntFeasTol and FeasibilityTol. ``certificates[p]`` is one of CERTIFICATES:
    "float64-floor" is checked exactly (exact error <= ``floors[p]``) for every
    solver's mask that is not proven optimal; "gap" (exact solvers only, where a
    stated budget ran out: ``options.time_limit``, fast mode's tolerance) comes with
    ``lower_bounds[p]``, a proven lower bound on the optimum, so that the mask is
    within ``exact_errors[p] - lower_bounds[p]`` of it, as a MIP solver reports its gap.
    ``problem_times`` are per-problem wall times in seconds (a batch solved at once
    shares its time equally).
    """

    masks: np.ndarray  # bool (P, n')
    errors: np.ndarray  # float64 (P,): |w - a . m| exactly, then rounded to nearest
    proven_optimal: np.ndarray  # bool (P,)
    optimality_exact: bool
    solver: str
    wall_time: float
    problem_times: np.ndarray  # float64 (P,)
    solver_objective: np.ndarray  # float64 (P,), the solver's own value, NaN if none
    errors_mp: tuple[Any, ...] | None = None  # mpf at ``dps`` digits when asked for
    fallback_reason: str | None = None
    exact_errors: tuple[Fraction, ...] = field(default=(), repr=False)
    certificates: tuple[str, ...] = ()
    floors: tuple[float, ...] = ()
    # A proven lower bound on each problem's optimum, exactly (the exact solvers; None for the others):
    # the error itself where "optimal", the bound behind a "gap" (0 inside the reach, as the LP
    # relaxation gives), 0 where "float64-floor" is all that is claimed.
    lower_bounds: tuple[Fraction | None, ...] = ()

    @property
    def certified(self) -> np.ndarray:
        """Proven optimal or proven at the float64 floor, per problem."""
        return np.array([c in ("optimal", "float64-floor") for c in self.certificates], dtype=bool)


@dataclass(frozen=True)
class _Solution:
    values: np.ndarray  # the solver's mask values, before rounding
    proven_optimal: bool
    objective: float = float("nan")
    lower_bound: Fraction | None = None  # exact solvers that could not prove optimality: a proven bound


def solve_subset_sum(
    targets: object,
    candidates: object,
    solver: str = "mitm",
    *,
    options: MIPOptions | None = None,
    fallback: str | None = None,
    return_mp: bool = False,
    dps: int = 40,
    workers: int = 1,
) -> SubsetSumResult:
    """Solve min_m |w_p - a_p . m| for every problem p.

    ``targets`` is (P,) and ``candidates`` (P, n'); a scalar target with a 1-D
    candidate vector is one problem. ``fallback`` names a solver to use, with a
    warning, when ``solver`` is not installed, not licensed or over its licence's
    size limit (e.g. ``fallback="mitm"`` for Gurobi's 2000-variable pip licence);
    the result's ``solver`` and ``fallback_reason`` then say what ran and why.
    ``return_mp`` adds the errors as mpf at ``dps`` digits. ``workers`` > 1 splits
    the problems of the licence-free solvers into that many contiguous chunks,
    solved (errors recomputed exactly included) in as many worker processes, kept
    for the next call (spawned: a script calling this belongs under ``if __name__ ==
    "__main__":``); the MIP solvers run here, one problem after another. Masks,
    errors and certificates do not depend on ``workers``: every problem is solved
    on its own (see ``tests/test_subset_sum.py``).
    """
    targets_array, candidates_array = _check_problems(targets, candidates)
    solver = check_choice("solver", solver, SOLVERS)
    if fallback is not None:
        fallback = check_choice("fallback", fallback, SOLVERS)
    dps = check_dps(dps)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    options = options if options is not None else MIPOptions()
    check_positive("options.binary_tolerance", options.binary_tolerance)
    try:
        if workers > 1 and targets_array.size > 1 and solver not in MIP_SOLVERS:
            return _run_in_processes(solver, targets_array, candidates_array, options, return_mp, dps, workers)
        return _run(solver, targets_array, candidates_array, options, return_mp, dps)
    except SolverUnavailableError as error:
        if fallback is None or fallback == solver:
            raise
        warnings.warn(f"{error}; falling back to solver {fallback!r}", stacklevel=2)
        result = _run(fallback, targets_array, candidates_array, options, return_mp, dps)
        return dataclasses.replace(result, fallback_reason=str(error))


def exact_sum(values: np.ndarray) -> Fraction:
    """The sum of float64 ``values``, exactly: every float64 is a 53-bit integer times a power of
    two, so the sum is an integer times the smallest of those powers, with no rounding.

    The integers are summed per power of two in numpy, split in 27-bit halves so that the
    float64 sums of bincount stay exact (below 2^53 for up to 2^25 terms); the few per-power
    totals are then shifted together in Python integers.
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size == 0:
        return Fraction(0)
    fractions, exponents = np.frexp(values)
    mantissas = np.ldexp(fractions, 53).astype(np.int64)  # exact: |mantissa| < 2^53
    powers, group = np.unique(exponents, return_inverse=True)
    high = np.bincount(group, weights=(mantissas >> 26).astype(np.float64), minlength=powers.size)
    low = np.bincount(group, weights=(mantissas & ((1 << 26) - 1)).astype(np.float64), minlength=powers.size)
    base = int(powers[0]) - 53
    total = 0
    for power, high_sum, low_sum in zip((powers - powers[0]).tolist(), high.tolist(), low.tolist(), strict=True):
        total += ((int(high_sum) << 26) + int(low_sum)) << power
    return Fraction(total << base) if base >= 0 else Fraction(total, 1 << -base)


def exact_error(target: float, candidates: np.ndarray, mask: np.ndarray) -> Fraction:
    """|w - sum_k m_k a_k| exactly (:func:`exact_sum` of w and the negated kept candidates)."""
    kept = np.asarray(candidates, dtype=np.float64)[np.asarray(mask, dtype=bool)]
    return abs(exact_sum(np.concatenate(([float(target)], -kept))))


def float64_floor(target: float, candidates: np.ndarray) -> float:
    """(n' + 4) u (|w| + sum|a|): a bound on the rounding error of evaluating w - a . m in
    float64 for any mask and any order of summation (Higham, Thm 4.4), with room to spare.
    A mask whose exact error is below it cannot be beaten by more than that rounding."""
    a = np.asarray(candidates, dtype=np.float64)
    return (a.size + 4) * UNIT_ROUNDOFF * (abs(float(target)) + float(np.abs(a).sum()))


def fraction_to_mp(value: Fraction, dps: int) -> Any:
    with mpmath.workdps(check_dps(dps)):
        return mpmath.mpf(value.numerator) / value.denominator


def available_solvers() -> dict[str, str | None]:
    """Each solver name mapped to None when usable, else the reason it is not."""
    reasons: dict[str, str | None] = {}
    for name in SOLVERS:
        try:
            if name == "gurobi":
                _gurobi_env()
            elif name == "highs":
                _import("scipy.optimize", "highs", "pip install scipy")
            elif name == "cvxpy":
                _cvxpy_solver_name(None)
            reasons[name] = None
        except SolverUnavailableError as error:
            reasons[name] = str(error)
    return reasons


# --- driver -------------------------------------------------------------------------------------


def _check_problems(targets: object, candidates: object) -> tuple[np.ndarray, np.ndarray]:
    w = check_array("targets", targets, ndim=(0, 1))
    a = check_array("candidates", candidates, ndim=(1, 2))
    w, a = w.astype(np.float64), a.astype(np.float64)  # mpf entries are rounded to float64
    if w.ndim == 0:
        if a.ndim != 1:
            raise ValueError(f"candidates must be 1-D (n',) for a scalar target, got shape {a.shape}")
        w, a = w[None], a[None]
    elif a.ndim != 2 or a.shape[0] != w.shape[0]:
        raise ValueError(
            f"candidates must have shape (P, n') = ({w.shape[0]}, n') for targets of shape "
            f"{w.shape}, got {a.shape}"
        )
    if w.shape[0] == 0:
        raise ValueError("targets must hold at least one problem (P >= 1), got P = 0")
    if a.shape[1] == 0:
        raise ValueError(
            f"candidates must hold at least one candidate per problem (n' >= 1), got shape {a.shape}"
        )
    return w, a


_POOLS: dict[int, ProcessPoolExecutor] = {}  # worker processes by count, started once: a start costs ~1 s


def _pool(workers: int) -> ProcessPoolExecutor:
    if workers not in _POOLS:
        # spawn: a forked child would inherit numba's and BLAS's threads in an unknown state
        _POOLS[workers] = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        if len(_POOLS) == 1:
            atexit.register(_close_pools)
    return _POOLS[workers]


def _close_pools() -> None:
    for pool in _POOLS.values():
        pool.shutdown(cancel_futures=True)
    _POOLS.clear()


def _run_in_processes(
    solver: str, w: np.ndarray, a: np.ndarray, options: MIPOptions, return_mp: bool, dps: int, workers: int
) -> SubsetSumResult:
    """``_run`` on ``workers`` contiguous chunks of the problems in worker processes, joined in order."""
    start = time.perf_counter()
    chunks = [c for c in np.array_split(np.arange(w.size), min(workers, w.size)) if c.size]
    futures = [_pool(workers).submit(_run, solver, w[c], a[c], options, return_mp, dps) for c in chunks]
    parts = [future.result() for future in futures]
    join = np.concatenate
    return SubsetSumResult(
        masks=join([p.masks for p in parts]),
        errors=join([p.errors for p in parts]),
        proven_optimal=join([p.proven_optimal for p in parts]),
        optimality_exact=parts[0].optimality_exact,
        solver=solver,
        wall_time=time.perf_counter() - start,
        problem_times=join([p.problem_times for p in parts]),
        solver_objective=join([p.solver_objective for p in parts]),
        errors_mp=tuple(e for p in parts for e in (p.errors_mp or ())) if return_mp else None,
        exact_errors=tuple(e for p in parts for e in p.exact_errors),
        certificates=tuple(c for p in parts for c in p.certificates),
        floors=tuple(f for p in parts for f in p.floors),
        lower_bounds=tuple(b for p in parts for b in p.lower_bounds),
    )


def _run(
    solver: str,
    w: np.ndarray,
    a: np.ndarray,
    options: MIPOptions,
    return_mp: bool,
    dps: int,
) -> SubsetSumResult:
    start = time.perf_counter()
    problems, n = a.shape
    if solver in SLICED_SOLVERS:
        masks, certificates, objective, times, bounds = _solve_sliced_batch(solver, w, a, options.time_limit)
    else:
        solve_one = _prepare(solver, n, options)
        masks = np.zeros((problems, n), dtype=bool)
        objective = np.full(problems, np.nan)
        times = np.zeros(problems)
        certificates, bounds = [], []
        for p in range(problems):
            tick = time.perf_counter()
            solution = solve_one(float(w[p]), a[p])
            masks[p] = _round_to_binary(solution.values, options.binary_tolerance, solver)
            times[p] = time.perf_counter() - tick
            objective[p] = solution.objective
            if solver in EXACT_SOLVERS:
                certificates.append("optimal" if solution.proven_optimal else "gap")
            else:
                certificates.append("mip-optimal" if solution.proven_optimal else "none")
            bounds.append(solution.lower_bound)
    exact = [exact_error(w[p], a[p], masks[p]) for p in range(problems)]
    floors = tuple(float64_floor(w[p], a[p]) for p in range(problems))
    checked = [_checked_certificate(c, b, e, f, solver in EXACT_SOLVERS)
               for c, b, e, f in zip(certificates, bounds, exact, floors, strict=True)]
    certificates, bounds = [c for c, _ in checked], [b for _, b in checked]
    errors = np.array([float(e) for e in exact])  # Fraction -> float rounds to nearest
    return SubsetSumResult(
        masks=masks,
        errors=errors,
        proven_optimal=np.array([c in ("optimal", "mip-optimal") for c in certificates], dtype=bool),
        optimality_exact=solver in EXACT_SOLVERS,
        solver=solver,
        wall_time=time.perf_counter() - start,
        problem_times=times,
        solver_objective=objective,
        errors_mp=tuple(fraction_to_mp(e, dps) for e in exact) if return_mp else None,
        exact_errors=tuple(exact),
        certificates=tuple(certificates),
        floors=floors,
        lower_bounds=tuple(bounds),
    )


def _checked_certificate(
    certificate: str, bound: Fraction | None, error: Fraction, floor: float, exact_solver: bool
) -> tuple[str, Fraction | None]:
    """The certificate a mask keeps once checked exactly against its own error.

    "optimal" stays (its bound is the error). Any other mask whose exact error is at most the
    floor earns "float64-floor", whatever the solver. A "float64-floor" claim the error does not
    earn, or a "gap" whose bound is missing or above the error, is refused: "none" (only a faulty
    search could make such a claim; the tests feed one in).
    """
    if certificate == "optimal":
        return certificate, error
    if error <= Fraction(floor):
        return "float64-floor", (bound if bound is not None else Fraction(0)) if exact_solver else None
    if certificate == "float64-floor" or (certificate == "gap" and (bound is None or bound > error)):
        return "none", None
    return certificate, bound


def _round_to_binary(values: np.ndarray, tolerance: float, solver: str) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    rounded = np.round(values)
    bad = ~np.isfinite(values) | (np.abs(values - rounded) > tolerance) | ~np.isin(rounded, (0, 1))
    if np.any(bad):
        index = int(np.flatnonzero(bad)[0])
        raise SolverOutputError(
            f"solver {solver!r} returned mask value {float(values[index])!r} at index {index}, farther than "
            f"binary_tolerance={tolerance} from 0 or 1"
        )
    return rounded.astype(bool)


def _prepare(solver: str, n: int, options: MIPOptions) -> Callable[[float, np.ndarray], _Solution]:
    """Check that ``solver`` can run on n candidates; return its one-problem function."""
    if solver == "mitm":
        if n > MITM_MAX_CANDIDATES:
            raise ValueError(
                f"candidates has n' = {n} per problem; solver 'mitm' allows n' <= "
                f"{MITM_MAX_CANDIDATES} (2^(n'/2) sums per half); use 'gurobi', 'highs' or 'greedy'"
            )
        return _solve_mitm
    if solver == "brute":
        if n > BRUTE_MAX_CANDIDATES:
            raise ValueError(
                f"candidates has n' = {n} per problem; solver 'brute' allows n' <= "
                f"{BRUTE_MAX_CANDIDATES}; use 'mitm'"
            )
        return _solve_brute
    if solver == "greedy":
        return _solve_greedy
    if solver == "gurobi":
        env = _gurobi_env()
        return lambda w, a: _solve_gurobi(env, w, a, options)
    if solver == "highs":
        _check_highs_options(options)
        return lambda w, a: _solve_highs(w, a, options)
    name = _cvxpy_solver_name(options.cvxpy_solver)
    return lambda w, a: _solve_cvxpy(name, w, a, options)


# --- exact solvers ------------------------------------------------------------------------------


def _sorted_subset_sums(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
        codes = np.concatenate((codes, codes | (1 << bit)))[order]
    return sums, codes


def _shortlist_tolerance(w: float, a: np.ndarray) -> float:
    """A bound, twice over, on |float64 error - exact error| of any enumerated mask.

    Subset sums carry at most n u sum|a|, the residual w - left and the final
    difference one rounding each of a number below |w| + sum|a|.
    """
    return 2.0 * (a.size + 4) * UNIT_ROUNDOFF * (abs(w) + float(np.abs(a).sum()))


def _solve_mitm(w: float, a: np.ndarray) -> _Solution:
    used = np.flatnonzero(a != 0)  # a zero candidate never changes the sum
    values = a[used]
    half = values.size // 2
    left_sums, left_codes = _sorted_subset_sums(values[:half])
    right_sums, right_codes = _sorted_subset_sums(values[half:])
    # Walk the left sums from the largest down so that the residuals w - left ascend:
    # searchsorted is fastest on sorted queries.
    left_sums, left_codes = left_sums[::-1], left_codes[::-1]
    residuals = w - left_sums
    nearest = _nearest_distance(right_sums, residuals)
    best_float = float(nearest.min())
    window = best_float + 2.0 * _shortlist_tolerance(w, values)
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
    mask = _decide_exactly(w, a, used, codes)
    return _Solution(mask.astype(np.float64), proven, best_float, _float_bound(best_float, w, values))


def _float_bound(best_float: float, w: float, a: np.ndarray) -> Fraction:
    """A proven lower bound on the exact optimum from the least float64 error of a complete
    enumeration: no mask's exact error is below it by more than the shortlist tolerance."""
    return max(Fraction(0), Fraction(best_float) - Fraction(_shortlist_tolerance(w, a)))


def _nearest_distance(sorted_values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """For each query, the float distance to its nearest entry of ``sorted_values``."""
    position = np.searchsorted(sorted_values, queries)
    above = sorted_values[np.minimum(position, sorted_values.size - 1)]
    below = sorted_values[np.maximum(position - 1, 0)]
    return np.minimum(np.abs(queries - above), np.abs(queries - below))


def _decide_exactly(w: float, a: np.ndarray, used: np.ndarray, codes: Iterable[int]) -> np.ndarray:
    """The shortlisted mask of least exact error; ties go to fewer kept weights, then lower code.

    ``codes`` are bit codes over ``used`` (bit i keeps candidate used[i]), numpy or Python
    integers (Python ones may have more than 63 bits).
    """
    best_key: tuple[Fraction, int, int] | None = None
    best_mask = np.zeros(a.size, dtype=bool)
    for code in sorted({int(code) for code in codes}):  # sorted, so ties are deterministic
        mask = np.zeros(a.size, dtype=bool)
        mask[used[[bit for bit in range(used.size) if code >> bit & 1]]] = True
        key = (exact_error(w, a, mask), int(mask.sum()), code)
        if best_key is None or key < best_key:
            best_key, best_mask = key, mask
    return best_mask


def _solve_brute(w: float, a: np.ndarray) -> _Solution:
    """Every subset's sum as a product with its 0/1 indicator row, then the exact decision."""
    n = a.size
    codes = np.arange(2**n, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(n)) & 1).astype(np.float64)
    float_errors = np.abs(w - bits @ a)
    best_float = float(float_errors.min())
    shortlisted = float_errors <= best_float + 2.0 * _shortlist_tolerance(w, a)
    proven = int(shortlisted.sum()) <= SHORTLIST_LIMIT
    if not proven:
        shortlisted = np.argsort(float_errors, kind="stable")[:1000]
    mask = _decide_exactly(w, a, np.arange(n), codes[shortlisted])
    return _Solution(mask.astype(np.float64), proven, best_float, _float_bound(best_float, w, a))


def _solve_greedy(w: float, a: np.ndarray) -> _Solution:
    """Largest |a_k| first; keep a_k when it brings the partial sum closer to w."""
    mask = np.zeros(a.size)
    residual = float(w)
    values = a.tolist()  # Python floats: the same float64 arithmetic, without numpy scalars
    for k in np.argsort(-np.abs(a), kind="stable").tolist():
        if abs(residual - values[k]) < abs(residual):
            residual -= values[k]
            mask[k] = 1.0
    return _Solution(mask, False, abs(residual))


# masks, certificates, best float errors, times, lower bounds
_Batch = tuple[np.ndarray, list[str], np.ndarray, np.ndarray, list[Fraction | None]]


def _solve_sliced_batch(solver: str, w: np.ndarray, a: np.ndarray, time_limit: float | None) -> _Batch:
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
        masks[p], certificates[p], objective[p], bounds[p] = _solve_exact(float(w[p]), a[p], solver, time_limit)
        times[p] += time.perf_counter() - tick
    return masks, certificates, objective, times, bounds


def _window_batch(w: np.ndarray, a: np.ndarray, masks: np.ndarray, objective: np.ndarray,
                  times: np.ndarray) -> list[int]:
    """``"fast"`` from n' = window_search.MIN_CANDIDATES: the problems inside their reach in one
    compiled call; returns the problems it left to :func:`_solve_exact` (beyond the reach, where
    the closed form is exact, or not proven at the stop)."""
    tick = time.perf_counter()
    inside = [p for p in range(w.size) if _beyond_reach(float(w[p]), a[p]) is None]
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


def _enumerate_batch(w: np.ndarray, a: np.ndarray) -> _Batch:
    """All 2^n' subset sums of a chunk of problems as one matrix product, then the exact decision.

    A product with a 0/1 row is a sum of the kept candidates in some order: its
    rounding is within ``_shortlist_tolerance``, whatever order BLAS uses.
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
                masks[p] = _decide_exactly(float(w[p]), a[p], np.arange(n), codes[candidates])
        objective[rows] = best
        times[rows] = (time.perf_counter() - tick) / (rows.stop - rows.start)
    return masks, ["optimal"] * problems, objective, times, [None] * problems


def _code_error(w: float, a: np.ndarray, used: np.ndarray, code: int) -> Fraction:
    mask = np.zeros(a.size, dtype=bool)
    mask[used[[bit for bit in range(used.size) if code >> bit & 1]]] = True
    return exact_error(w, a, mask)


def _beyond_reach(w: float, a: np.ndarray) -> tuple[np.ndarray, float] | None:
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


def _solve_exact(w: float, a: np.ndarray, solver: str, time_limit: float | None) -> tuple[
        np.ndarray, str, float, Fraction | None]:
    """One problem in ``"exact"`` or ``"fast"`` mode: mask, certificate, best float error, lower bound.

    Beyond the reach: the closed form (``_beyond_reach``). Inside it: the search of
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
    closed = _beyond_reach(w, a)
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
    tolerance = _shortlist_tolerance(t, magnitudes)

    def accept(flips: list[int]) -> bool:
        return any(_code_error(w, a, used, base_code ^ f) <= Fraction(stop) for f in flips)

    outcome = BoundedSearch(t, magnitudes, tolerance, stop, accept, deadline, free_max).run()
    codes = [base_code ^ f for f in outcome.flips]
    if outcome.stopped:  # no optimality to decide: the best of those accepted (one is at the stop, exactly)
        codes = [base_code ^ f for f in outcome.accepted]
    elif len(codes) > SHORTLIST_LIMIT:  # pathological ties: decide among the nearest only
        codes = [codes[i] for i in np.argsort(outcome.float_errors, kind="stable")[:1000].tolist()]
    mask = _decide_exactly(w, a, used, codes)
    if outcome.complete and not outcome.truncated and len(outcome.flips) <= SHORTLIST_LIMIT:
        return mask, "optimal", outcome.best_float, None
    if outcome.stopped:  # at the stop, decided exactly: the floor (checked again by the caller) or the tolerance
        return mask, "gap", outcome.best_float, Fraction(0)
    # The time ran out (or too many ties): every mask not examined is at least lower_bound away in
    # float64, every examined one at least best_float; the exact errors differ by under tolerance.
    bound = min(outcome.best_float, outcome.lower_bound)
    return mask, "gap", outcome.best_float, max(Fraction(0), Fraction(bound) - Fraction(2.0 * tolerance))


# --- MIP solvers: min t s.t. -t <= w - a . m <= t, m binary (Appendix B.1) ------------------------


def _import(module: str, solver: str, how: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise SolverUnavailableError(
            f"solver {solver!r} needs the Python package {module.split('.')[0]!r}, which is not "
            f"installed ({error}); install it with `{how}` or use solver 'mitm'"
        ) from None


_GUROBI_ENV: list[Any] = []  # one started environment, reused: starting one checks the licence


def _gurobi_env() -> Any:
    gp = _import("gurobipy", "gurobi", "pip install gurobipy")
    if _GUROBI_ENV and _GUROBI_ENV[0][0] is gp:
        return _GUROBI_ENV[0][1]
    try:
        env = gp.Env(params={"OutputFlag": 0})
    except gp.GurobiError as error:
        raise SolverUnavailableError(
            f"solver 'gurobi' is installed but not licensed (Gurobi error {getattr(error, 'errno', '?')}: "
            f"{error}); get a licence (https://www.gurobi.com/academia/) or use solver 'mitm' "
            "(exact) or 'highs'"
        ) from None
    _GUROBI_ENV[:] = [(gp, env)]
    return env


def _solve_gurobi(env: Any, w: float, a: np.ndarray, options: MIPOptions) -> _Solution:
    gp = importlib.import_module("gurobipy")
    grb = gp.GRB
    model = gp.Model(env=env)
    try:
        parameters = {
            "TimeLimit": options.time_limit,
            "MIPGap": options.mip_gap,
            "MIPGapAbs": options.mip_gap_abs,
            "IntFeasTol": options.int_feas_tol,
            "FeasibilityTol": options.feasibility_tol,
            "Threads": options.threads,
        }
        for name, value in parameters.items():
            if value is not None:
                model.setParam(name, value)
        mask = model.addMVar(a.size, vtype=grb.BINARY, name="m")
        error = model.addVar(lb=0.0, name="t")
        model.addConstr(a @ mask - error <= w)
        model.addConstr(a @ mask + error >= w)
        model.setObjective(error, grb.MINIMIZE)
        model.optimize()
        if model.SolCount == 0:  # stopped before any incumbent: the empty mask is always feasible
            return _Solution(np.zeros(a.size), False)
        return _Solution(np.asarray(mask.X), model.Status == grb.OPTIMAL, float(model.ObjVal))
    except gp.GurobiError as error:
        if getattr(error, "errno", None) == grb.Error.SIZE_LIMIT_EXCEEDED:
            raise SolverUnavailableError(
                f"solver 'gurobi': the model has {a.size + 1} variables and 2 constraints, over the "
                f"size-limited licence (at most {GUROBI_PIP_SIZE_LIMIT} variables and "
                f"{GUROBI_PIP_SIZE_LIMIT} constraints); use a full licence or fallback='mitm'"
            ) from None
        raise
    finally:
        model.dispose()


def _check_highs_options(options: MIPOptions) -> None:
    unsupported = sorted(set(options.set_fields()) - {"time_limit", "mip_gap"})
    if unsupported:
        raise ValueError(
            f"options {', '.join(unsupported)} are not supported by solver 'highs' "
            "(scipy.optimize.milp takes time_limit and mip_gap only); leave them None"
        )


def _mip_matrices(w: float, a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Variables (m_1..m_n, t): rows a.m - t <= w and a.m + t >= w."""
    cost = np.zeros(a.size + 1)
    cost[-1] = 1.0
    rows = np.vstack((np.append(a, -1.0), np.append(a, 1.0)))
    return cost, rows, np.array([w, w])


def _solve_highs(w: float, a: np.ndarray, options: MIPOptions) -> _Solution:
    optimize = _import("scipy.optimize", "highs", "pip install scipy")
    cost, rows, bound = _mip_matrices(w, a)
    settings: dict[str, object] = {"disp": False}
    if options.time_limit is not None:
        settings["time_limit"] = options.time_limit
    if options.mip_gap is not None:
        settings["mip_rel_gap"] = options.mip_gap
    result = optimize.milp(
        cost,
        constraints=optimize.LinearConstraint(rows, lb=[-np.inf, bound[1]], ub=[bound[0], np.inf]),
        integrality=np.append(np.ones(a.size), 0.0),
        bounds=optimize.Bounds(np.zeros(a.size + 1), np.append(np.ones(a.size), np.inf)),
        options=settings,
    )
    if result.x is None:
        return _Solution(np.zeros(a.size), False)
    return _Solution(result.x[:-1], result.status == 0, float(result.fun))


def _cvxpy_solver_name(requested: str | None) -> str:
    cp = _import("cvxpy", "cvxpy", "pip install cvxpy highspy")
    installed = [name for name in CVXPY_MILP_SOLVERS if name in cp.installed_solvers()]
    if requested is not None:
        check_choice("options.cvxpy_solver", requested, CVXPY_MILP_SOLVERS)
        if requested not in installed:
            raise SolverUnavailableError(
                f"options.cvxpy_solver={requested!r} is not installed for cvxpy; installed "
                f"mixed-integer back-ends: {installed or 'none'}"
            )
        return requested
    if not installed:
        raise SolverUnavailableError(
            "solver 'cvxpy' found no installed mixed-integer back-end; it needs one of "
            f"{', '.join(CVXPY_MILP_SOLVERS)} (e.g. `pip install highspy`)"
        )
    return installed[0]


def _solve_cvxpy(name: str, w: float, a: np.ndarray, options: MIPOptions) -> _Solution:
    cp = importlib.import_module("cvxpy")
    mask = cp.Variable(a.size, boolean=True)
    error = cp.Variable(nonneg=True)
    problem = cp.Problem(cp.Minimize(error), [a @ mask - error <= w, a @ mask + error >= w])
    settings: dict[str, object] = {}
    unsupported = sorted(set(options.set_fields()) - {"time_limit", "mip_gap"})
    if unsupported or (options.set_fields() and name not in ("GUROBI", "HIGHS")):
        raise ValueError(
            f"options {', '.join(sorted(options.set_fields()))} are not supported by solver 'cvxpy' "
            f"with back-end {name} (only time_limit and mip_gap, with GUROBI or HIGHS)"
        )
    if name == "GUROBI":
        settings = {"TimeLimit": options.time_limit, "MIPGap": options.mip_gap}
    elif name == "HIGHS":
        settings = {"time_limit": options.time_limit, "mip_rel_gap": options.mip_gap}
    settings = {key: value for key, value in settings.items() if value is not None}
    problem.solve(solver=name, **settings)
    if mask.value is None:
        return _Solution(np.zeros(a.size), False)
    objective = float(problem.value) if problem.value is not None else float("nan")
    return _Solution(np.asarray(mask.value), problem.status == cp.OPTIMAL, objective)
