"""The subset-sum solvers' types: options, results, errors, and one problem's raw solution.

:func:`sltcheck.pruning.subset_sum.solve_subset_sum` takes :class:`MIPOptions` and returns a
:class:`SubsetSumResult`; every one-problem solver (:mod:`sltcheck.pruning.enumeration`,
:mod:`sltcheck.pruning.mip_solvers`) returns a :class:`Solution`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np


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
class Solution:
    """One problem's answer from a one-problem solver, before its mask is rounded and checked."""

    values: np.ndarray  # the solver's mask values, before rounding
    proven_optimal: bool
    objective: float = float("nan")
    lower_bound: Fraction | None = None  # exact solvers that could not prove optimality: a proven bound

