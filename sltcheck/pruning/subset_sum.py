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
  decided by exact rational arithmetic (see :func:`~sltcheck.pruning.exact_errors.shortlist_tolerance`).
* ``"exact"``: the same answers as ``"mitm"`` from a second, independent search,
  at every n' and every target, in bounded memory. A target beyond the reach
  (w >= R+, the sum of the positive candidates, or w <= R-) has a closed-form
  optimum: every candidate of its sign (:func:`~sltcheck.pruning.certified_search.beyond_reach`, decided exactly).
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
  (n' + 4) u (|w| + sum|a|) (see :func:`~sltcheck.pruning.exact_errors.float64_floor`), so no mask can do better
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
evaluation of its error (``shortlist_tolerance``; see the bounded search's
docstring), the reach is decided by ``math.fsum`` (one rounding of the exact sum, so
its sign is exact), and the shortlist is decided in exact rational arithmetic, ties as
``"mitm"`` decides them (fewer kept weights, then lower code).

Whatever the solver, the returned masks are rounded to {0, 1} (after checking
that the solver's values are within ``binary_tolerance`` of 0 or 1) and the
reported error is recomputed from the mask exactly: |w - sum_k m_k a_k| with the
float64 inputs converted exactly to fractions. A MIP solver's own objective is
kept apart as ``solver_objective``: with FeasibilityTol and IntFeasTol it can be
smaller than the true error of the mask it returns.

The parts: :mod:`~sltcheck.pruning.solver_types` (options, results), :mod:`~sltcheck.pruning.exact_errors`
(exact errors, the floor, the exact decision), :mod:`~sltcheck.pruning.enumeration` ("mitm", "brute",
"greedy"), :mod:`~sltcheck.pruning.certified_search` ("exact", "fast"), :mod:`~sltcheck.pruning.mip_solvers`,
:mod:`~sltcheck.pruning.solver_pool` (``workers`` > 1); this module checks the input, runs the solver and
checks every answer exactly.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from sltcheck.numerics.validation import check_array, check_choice, check_dps, check_positive
from sltcheck.pruning import certified_search, enumeration, mip_solvers
from sltcheck.pruning.exact_errors import (  # noqa: F401 (exact_sum re-exported: public here)
    exact_error,
    exact_sum,
    float64_floor,
    fraction_to_mp,
)
from sltcheck.pruning.solver_names import (  # noqa: F401 (re-exported: the solvers' names live in a light module)
    BRUTE_MAX_CANDIDATES,
    CERTIFICATES,
    EXACT_SOLVERS,
    MIP_SOLVERS,
    MITM_MAX_CANDIDATES,
    SLICED_SOLVERS,
    SOLVERS,
)
from sltcheck.pruning.solver_pool import run_in_processes
from sltcheck.pruning.solver_types import (
    MIPOptions,
    Solution,
    SolverOutputError,
    SolverUnavailableError,
    SubsetSumResult,
)


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
            return run_in_processes(_run, solver, targets_array, candidates_array, options, return_mp, dps, workers)
        return _run(solver, targets_array, candidates_array, options, return_mp, dps)
    except SolverUnavailableError as error:
        if fallback is None or fallback == solver:
            raise
        warnings.warn(f"{error}; falling back to solver {fallback!r}", stacklevel=2)
        result = _run(fallback, targets_array, candidates_array, options, return_mp, dps)
        return dataclasses.replace(result, fallback_reason=str(error))


def available_solvers() -> dict[str, str | None]:
    """Each solver name mapped to None when usable, else the reason it is not."""
    reasons: dict[str, str | None] = {}
    for name in SOLVERS:
        try:
            if name == "gurobi":
                mip_solvers.gurobi_env()
            elif name == "highs":
                mip_solvers.import_solver("scipy.optimize", "highs", "pip install scipy")
            elif name == "cvxpy":
                mip_solvers.cvxpy_solver_name(None)
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
        masks, certificates, objective, times, bounds = certified_search.solve_batch(solver, w, a, options.time_limit)
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


def _prepare(solver: str, n: int, options: MIPOptions) -> Callable[[float, np.ndarray], Solution]:
    """Check that ``solver`` can run on n candidates; return its one-problem function."""
    if solver == "mitm":
        if n > MITM_MAX_CANDIDATES:
            raise ValueError(
                f"candidates has n' = {n} per problem; solver 'mitm' allows n' <= "
                f"{MITM_MAX_CANDIDATES} (2^(n'/2) sums per half); use 'gurobi', 'highs' or 'greedy'"
            )
        return enumeration.solve_mitm
    if solver == "brute":
        if n > BRUTE_MAX_CANDIDATES:
            raise ValueError(
                f"candidates has n' = {n} per problem; solver 'brute' allows n' <= "
                f"{BRUTE_MAX_CANDIDATES}; use 'mitm'"
            )
        return enumeration.solve_brute
    if solver == "greedy":
        return enumeration.solve_greedy
    if solver == "gurobi":
        env = mip_solvers.gurobi_env()
        return lambda w, a: mip_solvers.solve_gurobi(env, w, a, options)
    if solver == "highs":
        mip_solvers.check_highs_options(options)
        return lambda w, a: mip_solvers.solve_highs(w, a, options)
    name = mip_solvers.cvxpy_solver_name(options.cvxpy_solver)
    return lambda w, a: mip_solvers.solve_cvxpy(name, w, a, options)
