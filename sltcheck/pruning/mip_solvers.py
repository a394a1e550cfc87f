"""The MIP solvers of Appendix B.1: min t s.t. -t <= w - a . m <= t, m binary.

``"gurobi"`` (gurobipy), ``"highs"`` (scipy.optimize.milp) and ``"cvxpy"`` (its first installed
mixed-integer back-end, or ``MIPOptions.cvxpy_solver``), one problem at a time. Each is imported
when first used: a missing or unlicensed solver raises
:class:`~sltcheck.pruning.solver_types.SolverUnavailableError`.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from sltcheck.numerics.validation import check_choice
from sltcheck.pruning.solver_types import MIPOptions, Solution, SolverUnavailableError

GUROBI_PIP_SIZE_LIMIT = 2000  # variables and constraints of gurobipy's pip licence
# cvxpy back-ends that accept boolean variables, in the order we prefer them.
CVXPY_MILP_SOLVERS: tuple[str, ...] = (
    "HIGHS", "SCIP", "CBC", "GLPK_MI", "SCIPY", "GUROBI", "CPLEX", "MOSEK", "XPRESS", "COPT",
)


def import_solver(module: str, solver: str, how: str) -> Any:
    """``module`` imported, or SolverUnavailableError saying how to install it (``how``)."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise SolverUnavailableError(
            f"solver {solver!r} needs the Python package {module.split('.')[0]!r}, which is not "
            f"installed ({error}); install it with `{how}` or use solver 'mitm'"
        ) from None


GUROBI_ENV: list[Any] = []  # one started environment, reused: starting one checks the licence


def gurobi_env() -> Any:
    """Gurobi's started environment (one per process); SolverUnavailableError without a licence."""
    gp = import_solver("gurobipy", "gurobi", "pip install gurobipy")
    if GUROBI_ENV and GUROBI_ENV[0][0] is gp:
        return GUROBI_ENV[0][1]
    try:
        env = gp.Env(params={"OutputFlag": 0})
    except gp.GurobiError as error:
        raise SolverUnavailableError(
            f"solver 'gurobi' is installed but not licensed (Gurobi error {getattr(error, 'errno', '?')}: "
            f"{error}); get a licence (https://www.gurobi.com/academia/) or use solver 'mitm' "
            "(exact) or 'highs'"
        ) from None
    GUROBI_ENV[:] = [(gp, env)]
    return env


def solve_gurobi(env: Any, w: float, a: np.ndarray, options: MIPOptions) -> Solution:
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
            return Solution(np.zeros(a.size), False)
        return Solution(np.asarray(mask.X), model.Status == grb.OPTIMAL, float(model.ObjVal))
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


def check_highs_options(options: MIPOptions) -> None:
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


def solve_highs(w: float, a: np.ndarray, options: MIPOptions) -> Solution:
    optimize = import_solver("scipy.optimize", "highs", "pip install scipy")
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
        return Solution(np.zeros(a.size), False)
    return Solution(result.x[:-1], result.status == 0, float(result.fun))


def cvxpy_solver_name(requested: str | None) -> str:
    cp = import_solver("cvxpy", "cvxpy", "pip install cvxpy highspy")
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


def solve_cvxpy(name: str, w: float, a: np.ndarray, options: MIPOptions) -> Solution:
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
        return Solution(np.zeros(a.size), False)
    objective = float(problem.value) if problem.value is not None else float("nan")
    return Solution(np.asarray(mask.value), problem.status == cp.OPTIMAL, objective)
