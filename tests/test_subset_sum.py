"""The subset-sum engine: exact optimality of mitm, exact error recomputation, bad input."""

from __future__ import annotations

import math
import re
import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sltcheck.pruning import bounded_search, certified_search, enumeration, exact_errors, mip_solvers, subset_sum
from sltcheck.pruning.certified_search import FAST_TOLERANCE
from sltcheck.pruning.subset_sum import (
    MIPOptions,
    SolverOutputError,
    SolverUnavailableError,
    exact_error,
    solve_subset_sum,
)
from sltcheck.pruning.subset_sum_instances import DISTRIBUTIONS, draw, region


def lemma7_instances(problems: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, problems), rng.uniform(-1, 1, (problems, n)) * rng.uniform(-1, 1, (problems, n))


def mp_error(w: float, a: np.ndarray, mask: np.ndarray) -> mpmath.mpf:
    """An independent recomputation: mpmath at 60 digits (exact for these sums)."""
    with mpmath.workdps(60):
        return abs(mpmath.mpf(w) - mpmath.fsum(mpmath.mpf(x) for x in a[mask]))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 11, 13, 16])
def test_mitm_equals_brute_force_exactly(n):
    w, a = lemma7_instances(12, n, seed=n)
    mitm = solve_subset_sum(w, a, "mitm", return_mp=True, dps=50)
    brute = solve_subset_sum(w, a, "brute", return_mp=True, dps=50)
    assert mitm.exact_errors == brute.exact_errors
    assert mitm.errors_mp == brute.errors_mp
    assert mitm.proven_optimal.all()
    assert brute.proven_optimal.all()
    assert mitm.optimality_exact


def test_mitm_equals_brute_force_at_twenty():
    w, a = lemma7_instances(2, 20, seed=20)
    assert solve_subset_sum(w, a, "mitm").exact_errors == solve_subset_sum(w, a, "brute").exact_errors


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 9),
    seed=st.integers(0, 2**32 - 1),
    spread=st.integers(0, 60),
    duplicates=st.booleans(),
)
def test_mitm_equals_brute_force_on_adversarial_magnitudes(n, seed, spread, duplicates):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-spread, 1, n)  # magnitudes over 2^spread
    if duplicates:
        a[rng.integers(0, n, n)] = a[0]
    w = float(a[rng.random(n) < 0.5].sum() + rng.uniform(-1, 1) * 2.0 ** -rng.integers(0, 60))
    assert solve_subset_sum(w, a, "mitm").exact_errors == solve_subset_sum(w, a, "brute").exact_errors


def test_exact_decision_beats_float_rounding():
    # The float64 left sum 1 + 2^-53 rounds to 1, so {a0, a2} and {a0, a1, a2} look equally
    # good in float64; exactly, the second hits w = 1 + 2^-52.
    a = np.array([1.0, 2.0**-53, 2.0**-53, 5.0])
    w = 1.0 + 2.0**-52
    for solver in ("mitm", "brute"):
        result = solve_subset_sum(w, a, solver)
        assert result.exact_errors == (Fraction(0),)
        assert result.masks[0].tolist() == [True, True, True, False]


def test_errors_are_recomputed_from_the_masks():
    w, a = lemma7_instances(6, 10, seed=3)
    for solver in ("mitm", "greedy", "brute"):
        result = solve_subset_sum(w, a, solver, return_mp=True, dps=40)
        assert result.masks.dtype == bool
        assert result.masks.shape == (6, 10)
        for p in range(6):
            assert result.exact_errors[p] == exact_error(w[p], a[p], result.masks[p])
            assert result.errors[p] == float(mp_error(w[p], a[p], result.masks[p]))
            with mpmath.workdps(40):
                assert abs(result.errors_mp[p] - mp_error(w[p], a[p], result.masks[p])) <= mpmath.mpf(10) ** -38


def test_exactly_reachable_targets_and_zero_candidates():
    a = np.array([0.25, 0.0, -0.5, 0.125, 0.0])
    result = solve_subset_sum(np.array([-0.375, 0.0]), np.stack([a, a]))
    assert result.exact_errors == (Fraction(0), Fraction(0))
    assert not result.masks[:, [1, 4]].any()  # a zero candidate is never kept
    assert not result.masks[1].any()  # target 0: the empty mask


def test_batch_equals_one_by_one_and_is_deterministic():
    w, a = lemma7_instances(8, 14, seed=5)
    batch = solve_subset_sum(w, a)
    again = solve_subset_sum(w, a)
    assert batch.masks.tobytes() == again.masks.tobytes()
    for p in range(8):
        single = solve_subset_sum(float(w[p]), a[p])
        assert single.masks[0].tobytes() == batch.masks[p].tobytes()


@pytest.mark.parametrize("solver", ["greedy", "gurobi", "highs", "cvxpy"])
def test_no_solver_beats_mitm(solver):
    reason = subset_sum.available_solvers()[solver]
    if reason is not None:  # each solver skips on its own, saying why (CI installs them all: extras = all)
        pytest.skip(f"solver {solver!r} is not usable here: {reason}")
    w, a = lemma7_instances(4, 12, seed=7)
    optimum = solve_subset_sum(w, a, "mitm").exact_errors
    result = solve_subset_sum(w, a, solver)
    assert all(e >= o for e, o in zip(result.exact_errors, optimum, strict=True)), solver


@pytest.mark.slow
@pytest.mark.parametrize("n", [32, 40])
def test_mitm_large_is_proven_and_beats_greedy(n):
    w, a = lemma7_instances(1, n, seed=n)
    result = solve_subset_sum(w, a)
    assert result.proven_optimal.all()
    assert result.exact_errors[0] <= solve_subset_sum(w, a, "greedy").exact_errors[0]


@pytest.mark.parametrize(
    ("targets", "candidates", "solver", "fragment"),
    [
        (np.nan, [0.5, 0.25], "mitm", "targets must have finite entries"),
        ([0.1, np.inf], [[0.5], [0.25]], "mitm", "targets must have finite entries"),
        (0.1, [0.5, np.nan], "mitm", "candidates must have finite entries"),
        (0.1, [], "mitm", "at least one candidate"),
        ([0.1, 0.2], np.zeros((2, 0)), "mitm", "at least one candidate"),
        ([], np.zeros((0, 3)), "mitm", "at least one problem"),
        ([0.1, 0.2], [[0.5, 0.1]], "mitm", "must have shape (P, n') = (2, n')"),
        (0.1, [0.5], "simplex", "solver must be one of 'mitm'"),
        (0.1, np.ones(subset_sum.MITM_MAX_CANDIDATES + 1), "mitm", "solver 'mitm' allows n'"),
        (0.1, np.ones(21), "brute", "solver 'brute' allows n' <= 20"),
    ],
)
def test_bad_input_is_a_clear_value_error(targets, candidates, solver, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        solve_subset_sum(targets, candidates, solver)


def test_unknown_fallback_and_bad_options():
    with pytest.raises(ValueError, match="fallback must be one of"):
        solve_subset_sum(0.1, [0.5], "mitm", fallback="magic")
    with pytest.raises(ValueError, match="mip_gap_abs are not supported by solver 'highs'"):
        solve_subset_sum(0.1, [0.5], "highs", options=MIPOptions(mip_gap_abs=1e-9))
    with pytest.raises(ValueError, match=r"options\.binary_tolerance must be finite and > 0"):
        solve_subset_sum(0.1, [0.5], options=MIPOptions(binary_tolerance=-1))


@pytest.fixture
def fresh_gurobi_env(monkeypatch):
    monkeypatch.setattr(mip_solvers, "GUROBI_ENV", [])


def test_gurobi_not_installed(monkeypatch, fresh_gurobi_env):
    monkeypatch.setitem(sys.modules, "gurobipy", None)  # makes `import gurobipy` fail
    with pytest.raises(SolverUnavailableError, match=r"solver 'gurobi' needs .*'gurobipy'.*pip install gurobipy"):
        solve_subset_sum(0.1, [0.5, 0.25], "gurobi")
    with pytest.warns(UserWarning, match="falling back to solver 'mitm'"):
        result = solve_subset_sum(0.1, [0.5, 0.25], "gurobi", fallback="mitm")
    assert result.solver == "mitm"
    assert "gurobipy" in result.fallback_reason
    assert subset_sum.available_solvers()["gurobi"] is not None


def test_gurobi_not_licensed(monkeypatch, fresh_gurobi_env):
    gurobipy = pytest.importorskip("gurobipy")

    def no_licence(*args, **kwargs):
        raise gurobipy.GurobiError(10009, "No Gurobi license found")

    monkeypatch.setattr(gurobipy, "Env", no_licence)
    with pytest.raises(SolverUnavailableError, match="solver 'gurobi' is installed but not licensed"):
        solve_subset_sum(0.1, [0.5, 0.25], "gurobi")
    with pytest.warns(UserWarning, match="falling back to solver 'mitm'"):
        assert solve_subset_sum(0.1, [0.5, 0.25], "gurobi", fallback="mitm").solver == "mitm"


def test_gurobi_size_limit_names_the_limit():
    if (reason := subset_sum.available_solvers()["gurobi"]) is not None:
        pytest.skip(f"gurobipy is not usable here: {reason}")
    a = np.random.default_rng(0).uniform(-1, 1, mip_solvers.GUROBI_PIP_SIZE_LIMIT)
    options = MIPOptions(time_limit=2.0)
    try:
        solve_subset_sum(0.3, a, "gurobi", options=options)
    except SolverUnavailableError as error:
        message = str(error)
    else:
        pytest.skip("a full Gurobi licence is installed: no size limit to hit")
    assert "size-limited licence" in message
    assert "2000" in message
    with pytest.warns(UserWarning, match="falling back to solver 'greedy'"):
        result = solve_subset_sum(0.3, a, "gurobi", options=options, fallback="greedy")
    assert result.solver == "greedy"
    assert result.fallback_reason


def test_cvxpy_without_a_milp_backend(monkeypatch):
    cvxpy = pytest.importorskip("cvxpy")
    monkeypatch.setattr(cvxpy, "installed_solvers", lambda: ["SCS", "CLARABEL"])
    with pytest.raises(SolverUnavailableError, match="found no installed mixed-integer back-end"):
        solve_subset_sum(0.1, [0.5], "cvxpy")
    monkeypatch.setattr(cvxpy, "installed_solvers", lambda: ["HIGHS"])
    with pytest.raises(SolverUnavailableError, match=r"options\.cvxpy_solver='SCIP' is not installed"):
        solve_subset_sum(0.1, [0.5], "cvxpy", options=MIPOptions(cvxpy_solver="SCIP"))


def test_values_far_from_binary_are_refused():
    assert subset_sum._round_to_binary(np.array([1e-6, 1 - 1e-6]), 1e-4, "x").tolist() == [False, True]
    with pytest.raises(SolverOutputError, match=r"mask value 0\.5 at index 1"):
        subset_sum._round_to_binary(np.array([0.0, 0.5]), 1e-4, "x")
    with pytest.raises(SolverOutputError, match=r"mask value 2\.0"):
        subset_sum._round_to_binary(np.array([2.0]), 1e-4, "x")


def test_mip_objective_is_kept_apart_from_the_error():
    if (reason := subset_sum.available_solvers()["highs"]) is not None:
        pytest.skip(f"scipy's HiGHS is not usable here: {reason}")
    w, a = lemma7_instances(2, 10, seed=11)
    result = solve_subset_sum(w, a, "highs")
    assert not result.optimality_exact
    for p in range(2):
        assert result.errors[p] == float(exact_error(w[p], a[p], result.masks[p]))
    assert np.isfinite(result.solver_objective).all()


# --- exact and fast modes: a second, independent search checked against brute force and mitm -------



@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 14, 15, 16])
def test_exact_equals_brute_force(n):
    w, a = lemma7_instances(25, n, seed=100 + n)
    exact = solve_subset_sum(w, a, "exact")
    brute = solve_subset_sum(w, a, "brute")
    assert exact.exact_errors == brute.exact_errors
    assert exact.masks.tobytes() == brute.masks.tobytes()  # ties decided the same way
    assert exact.certificates == ("optimal",) * 25
    assert exact.optimality_exact


@pytest.mark.parametrize(("n", "problems"), [(13, 60), (17, 60), (21, 60), (24, 60), (27, 30), (30, 20), (32, 20)])
def test_exact_equals_mitm(n, problems):
    w, a = lemma7_instances(problems, n, seed=200 + n)
    exact = solve_subset_sum(w, a, "exact")
    mitm = solve_subset_sum(w, a, "mitm")
    assert exact.exact_errors == mitm.exact_errors
    assert exact.masks.tobytes() == mitm.masks.tobytes()
    assert all(c == "optimal" for c in exact.certificates)


@pytest.mark.slow
@pytest.mark.parametrize("n", [28, 30, 32, 34, 36])
def test_exact_equals_mitm_many(n):
    w, a = lemma7_instances(200, n, seed=300 + n)
    exact = solve_subset_sum(w, a, "exact")
    assert exact.masks.tobytes() == solve_subset_sum(w, a, "mitm").masks.tobytes()


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(1, 12),
    seed=st.integers(0, 2**32 - 1),
    spread=st.integers(0, 60),
    duplicates=st.booleans(),
    zeros=st.booleans(),
)
def test_exact_equals_brute_force_on_adversarial_magnitudes(n, seed, spread, duplicates, zeros):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-spread, 1, n)
    if duplicates:
        a[rng.integers(0, n, n)] = a[0]
    if zeros:
        a[rng.random(n) < 0.3] = 0.0
    w = float(a[rng.random(n) < 0.5].sum() + rng.uniform(-1, 1) * 2.0 ** -rng.integers(0, 60))
    brute = solve_subset_sum(w, a, "brute")
    for search in ("enumeration", "one leaf", "branch and bound"):  # n' <= 12; the bounded search, lists long or short
        with pytest.MonkeyPatch.context() as patch:
            if search != "enumeration":
                patch.setattr(certified_search, "BATCH_ENUMERATION_MAX", 0)
            if search == "branch and bound":
                patch.setattr(bounded_search, "LIST_CAP", 4)
            exact = solve_subset_sum(w, a, "exact")
        assert exact.exact_errors == brute.exact_errors
        assert exact.masks.tobytes() == brute.masks.tobytes()
        assert exact.certificates == ("optimal",)


@pytest.mark.parametrize("n", [14, 20, 24])
def test_branch_and_bound_equals_one_leaf(monkeypatch, n):
    # Lists of at most 256 sums: the search branches on the largest items down to small leaves.
    w, a = lemma7_instances(6, n, seed=400 + n)
    whole = solve_subset_sum(w, a, "exact")
    monkeypatch.setattr(bounded_search, "LIST_CAP", 256)
    branched = solve_subset_sum(w, a, "exact")
    assert branched.masks.tobytes() == whole.masks.tobytes()
    assert branched.certificates == whole.certificates == ("optimal",) * 6


@pytest.mark.parametrize("n", [14, 20, 26])
def test_many_slices_equal_one(monkeypatch, n):
    # The sliced search (the seek of exact and fast beyond n' = 40) in slices of 32 left sums, run to
    # the end: the probe, the slice order and the right windows all take part.
    from sltcheck.pruning import sliced_search

    w, a = lemma7_instances(10, n, seed=400 + n)
    mitm = solve_subset_sum(w, a, "mitm")
    for p in range(10):
        values = a[p][a[p] != 0]
        tolerance = exact_errors.shortlist_tolerance(w[p], values)
        greedy = enumeration.solve_greedy(w[p], values)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sliced_search, "SLICE_SIZE", 32)
            patch.setattr(sliced_search, "MIN_SLICE_SIZE", 1)
            outcome = sliced_search.sliced_search(w[p], values, tolerance, greedy.objective + tolerance)
        used = np.flatnonzero(a[p] != 0)
        mask = exact_errors.decide_exactly(w[p], a[p], used, outcome.codes)
        assert outcome.complete
        assert mask.tobytes() == mitm.masks[p].tobytes()


def test_numpy_kernels_equal_compiled_ones(monkeypatch):
    from sltcheck.pruning import kernels

    rng = np.random.default_rng(9)
    values, queries = np.sort(rng.normal(size=3000)), np.sort(rng.normal(size=2000))
    assert kernels._nearest_numpy(values, queries).tobytes() == kernels.nearest_distances(values, queries).tobytes()
    first, second = np.sort(rng.normal(size=50)), np.sort(rng.normal(size=70))
    codes = np.arange(50, dtype=np.int64), np.arange(70, dtype=np.int64) << 6
    start = rng.integers(0, 70, 50)
    counts = rng.integers(0, 70 - start + 1)
    for got, want in zip(kernels._pair_sums_numpy(first, codes[0], second, codes[1], start, counts),
                         kernels.pair_sums(first, codes[0], second, codes[1], start, counts), strict=True):
        assert got.tobytes() == want.tobytes()
    positive = np.sort(np.abs(rng.normal(size=18)))[::-1].copy()
    positive[5] = positive[6]  # equal sums: ties go to the unshifted run in both
    for bound, cap in ((0.5, 1 << 20), (3.0, 1 << 20), (np.inf, 1 << 20), (3.0, 100)):
        numpy_sums = kernels._bounded_sums_numpy(positive, bound, cap)
        compiled_sums = kernels._kernels()[0][2](positive, bound, cap)
        assert numpy_sums[2] == compiled_sums[2]
        assert all(x.tobytes() == y.tobytes() for x, y in zip(numpy_sums[:2], compiled_sums[:2], strict=True))
        if numpy_sums[2]:  # every subset sum <= bound, once each
            assert numpy_sums[0].size == len(set(numpy_sums[1].tolist()))
            assert (numpy_sums[0] <= bound).all()
    w, a = lemma7_instances(6, 30, seed=10)
    compiled = solve_subset_sum(w, a, "exact")
    monkeypatch.setattr(kernels, "nearest_distances", kernels._nearest_numpy)
    monkeypatch.setattr(kernels, "pair_sums", kernels._pair_sums_numpy)
    monkeypatch.setattr(kernels, "_kernels", lambda: ((kernels._nearest_numpy, kernels._pair_sums_numpy,
                                                       kernels._bounded_sums_numpy), False))
    assert solve_subset_sum(w, a, "exact").masks.tobytes() == compiled.masks.tobytes()


@pytest.mark.parametrize(("n", "solver"), [(48, "exact"), (64, "exact"), (200, "exact"), (64, "fast"), (1024, "fast")])
def test_beyond_proof_reach_the_floor_certificate_is_exact(n, solver):
    w, a = lemma7_instances(2, n, seed=500 + n)
    result = solve_subset_sum(w, a, solver)
    for p in range(2):
        floor = subset_sum.float64_floor(w[p], a[p])
        assert result.floors[p] == floor
        assert result.exact_errors[p] == exact_error(w[p], a[p], result.masks[p])
        if solver == "exact":
            assert result.certificates[p] in ("optimal", "float64-floor")
        if result.certificates[p] == "float64-floor":
            assert result.exact_errors[p] <= Fraction(floor)
        assert result.exact_errors[p] <= Fraction(max(floor, FAST_TOLERANCE))
        assert result.exact_errors[p] <= solve_subset_sum(w[p], a[p], "greedy").exact_errors[0]


def test_fast_equals_exact_where_the_optimum_is_above_its_tolerance():
    w, a = lemma7_instances(20, 24, seed=12)
    assert solve_subset_sum(w, a, "fast").masks.tobytes() == solve_subset_sum(w, a, "exact").masks.tobytes()


@pytest.mark.parametrize(("claim", "bound"), [("float64-floor", None), ("gap", None), ("gap", Fraction(10))])
def test_a_false_certificate_is_withdrawn(monkeypatch, claim, bound):
    # Mutants: the search claims the floor, or a gap with no bound or one above the mask's own error,
    # for the empty mask; the exact check must refuse each ("none", only ever from such a fault).
    def lying(w, a, solver, time_limit):
        return np.zeros(a.size, dtype=bool), claim, 0.0, bound

    monkeypatch.setattr(certified_search, "solve_exact", lying)
    w, a = lemma7_instances(3, 20, seed=13)
    result = solve_subset_sum(w, a, "exact")
    assert result.certificates == ("none",) * 3
    assert not result.certified.any()
    assert result.lower_bounds == (None,) * 3


def test_any_solver_earns_the_floor_certificate_exactly():
    a = np.array([0.25, -0.5, 0.125])
    result = solve_subset_sum(-0.375, a, "greedy")
    assert result.exact_errors == (Fraction(0),)
    assert result.certificates == ("float64-floor",)


@pytest.mark.parametrize("solver", ["exact", "fast"])
def test_exact_batch_equals_one_by_one(solver):
    for n in (9, 22):
        w, a = lemma7_instances(5, n, seed=14 + n)
        batch = solve_subset_sum(w, a, solver)
        assert batch.masks.tobytes() == solve_subset_sum(w, a, solver).masks.tobytes()
        for p in range(5):
            assert solve_subset_sum(float(w[p]), a[p], solver).masks[0].tobytes() == batch.masks[p].tobytes()


@pytest.mark.parametrize(("solver", "n"), [("exact", 26), ("fast", 40), ("fast", 256), ("mitm", 10)])
def test_worker_processes_give_the_same_answers(solver, n):
    w, a = lemma7_instances(7, n, seed=15 + n)
    alone = solve_subset_sum(w, a, solver)
    for workers in (2, 3):
        shared = solve_subset_sum(w, a, solver, workers=workers)
        assert shared.masks.tobytes() == alone.masks.tobytes()
        assert shared.exact_errors == alone.exact_errors
        assert shared.certificates == alone.certificates
        assert shared.floors == alone.floors
        assert shared.problem_times.shape == (7,)
    with pytest.raises(ValueError, match="workers must be a positive integer, got 0"):
        solve_subset_sum(w, a, solver, workers=0)


# --- fast mode from n' = 128: the window search -------------------------------------------------------


def adversarial_wide_instances(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Lemma 7 instances with zeros, repeated values and candidates of very different sizes."""
    w, a = lemma7_instances(4, n, seed)
    rng = np.random.default_rng(seed)
    a[0, rng.random(n) < 0.3] = 0.0
    a[1, rng.integers(0, n, n // 2)] = a[1, 0]
    a[2] *= 2.0 ** rng.integers(-40, 1, n)
    a[3, : n // 2] = 0.0
    return w, a


@pytest.mark.parametrize("n", [128, 256, 1024])
def test_window_search_numpy_equals_compiled(n):
    from sltcheck.pruning import window_search

    for w, a in (lemma7_instances(6, n, seed=700 + n), adversarial_wide_instances(n, seed=710 + n)):
        stops = np.array([max(FAST_TOLERANCE, subset_sum.float64_floor(w[p], a[p])) for p in range(w.size)])
        compiled = window_search.window_search(w, a, stops)
        numpy = window_search.window_search(w, a, stops, use_numba=False)
        for got, want in zip(numpy, compiled, strict=True):
            assert got.tobytes() == want.tobytes()
        assert not (compiled[0] & (a == 0)).any()  # a zero candidate is never kept


def test_window_search_equality_can_fail(monkeypatch):
    # Mutant: the numpy path's greedy keeps nothing; the comparison above must see the difference.
    from sltcheck.pruning import window_search

    w, a = lemma7_instances(3, 128, seed=720)
    stops = np.full(3, FAST_TOLERANCE)
    compiled = window_search.window_search(w, a, stops)
    monkeypatch.setattr(window_search, "_greedy", lambda values, start, stop, residual, mask: residual)
    assert window_search.window_search(w, a, stops, use_numba=False)[0].tobytes() != compiled[0].tobytes()


@pytest.mark.parametrize("n", [128, 300, 1024])
def test_fast_window_reaches_its_tolerance_and_is_exactly_checked(n):
    w, a = lemma7_instances(8, n, seed=730 + n)
    result = solve_subset_sum(w, a, "fast")
    for p in range(8):
        stop = Fraction(max(FAST_TOLERANCE, result.floors[p]))
        assert result.exact_errors[p] == exact_error(w[p], a[p], result.masks[p])
        assert result.exact_errors[p] <= stop
        assert result.certificates[p] in ("float64-floor", "gap")  # gap: stopped at the tolerance, from 0
        assert (result.certificates[p] == "float64-floor") == (result.exact_errors[p] <= Fraction(result.floors[p]))
        assert result.lower_bounds[p] == 0
    assert not result.proven_optimal.any()


def test_fast_window_batch_equals_one_by_one():
    w, a = adversarial_wide_instances(200, seed=740)
    batch = solve_subset_sum(w, a, "fast")
    for p in range(w.size):
        assert solve_subset_sum(float(w[p]), a[p], "fast").masks[0].tobytes() == batch.masks[p].tobytes()


@pytest.mark.parametrize("seed", range(8))
def test_exact_error_equals_a_sum_of_fractions(seed):
    # Magnitudes from subnormal to 2^1000, zeros and repeats: the per-power integer sums stay exact.
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    a = rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-1070, 1000, n) if seed % 2 else lemma7_instances(1, n, seed)[1][0]
    a[rng.random(n) < 0.2] = 0.0
    a[: n // 4] = a[0]
    mask = rng.random(n) < 0.6
    w = float(rng.uniform(-1, 1) * 2.0 ** rng.integers(-1070, 30))
    want = abs(Fraction(w) - sum((Fraction(x) for x in a[mask]), Fraction(0)))
    assert exact_error(w, a, mask) == want
    flipped = mask.copy()
    flipped[np.flatnonzero(a)[0]] ^= True  # mutant: one nonzero candidate more or less is seen
    assert exact_error(w, a, flipped) != want


@st.composite
def wide_problems_with_zeros_repeats_and_scales(draw):
    """One wide Lemma 7 problem (n' from 128) with zeros, repeated values and magnitudes over 2^-40..1."""
    n = draw(st.integers(128, 260))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = rng.uniform(-1, 1, n) * rng.uniform(-1, 1, n) * 2.0 ** -rng.integers(0, draw(st.integers(0, 40)) + 1, n)
    a[rng.random(n) < draw(st.floats(0, 0.5))] = 0.0
    repeats = draw(st.integers(0, n // 2))
    a[rng.integers(0, n, repeats)] = a[0]
    return float(rng.uniform(-1, 1)), a


@settings(max_examples=15, deadline=None)
@given(problem=wide_problems_with_zeros_repeats_and_scales())
def test_window_search_numpy_equals_compiled_on_any_wide_problem(problem):
    from sltcheck.pruning import window_search

    w, a = np.array([problem[0]]), problem[1][None]
    stops = np.array([max(FAST_TOLERANCE, subset_sum.float64_floor(w[0], a[0]))])
    compiled = window_search.window_search(w, a, stops)
    numpy = window_search.window_search(w, a, stops, use_numba=False)
    assert all(x.tobytes() == y.tobytes() for x, y in zip(compiled, numpy, strict=True))


# --- exact and fast on every distribution: the reach, the bounded search, certificates, budgets ------


def reach_targets(candidates: np.ndarray, rng: np.random.Generator) -> list[float]:
    """Targets inside, at and beyond the reach [R-, R+] of ``candidates``: the middle, deep inside, just
    inside, R+ and R- as rounded (math.fsum), one ulp either side of them, and beyond."""
    high = math.fsum(candidates[candidates > 0].tolist())
    low = math.fsum(candidates[candidates < 0].tolist())
    return [
        0.5 * (high + low), float(rng.uniform(low, high)), 0.97 * high, 0.995 * low,
        high, np.nextafter(high, np.inf), np.nextafter(high, -np.inf), low, np.nextafter(low, -np.inf),
        1.2 * high + 1e-3, 1.3 * low - 1e-3, 0.0,
    ]


def brute_mismatches(distribution: str, n: int, solver: str = "exact") -> list[str]:
    """Problems (each distribution's candidates at n', targets inside, at and beyond the reach, and the
    same with candidates rounded to multiples of 2^-30 so that R+ and R- are exact) where ``solver``
    differs from brute force: a different mask, or, for fast, an error above both the optimum and its
    stop. The bounded search runs at every n' (the enumeration of n' <= 12 is switched off)."""
    _, a = draw(distribution, n, 3, seed=n)
    rng = np.random.default_rng(n)
    found = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(certified_search, "BATCH_ENUMERATION_MAX", 0)
        for candidates in (*a, *(np.round(a * 2.0**30) / 2.0**30)):
            targets = np.array(reach_targets(candidates, rng))
            problems = np.tile(candidates, (targets.size, 1))
            brute = solve_subset_sum(targets, problems, "brute")
            result = solve_subset_sum(targets, problems, solver)
            for p, w in enumerate(targets.tolist()):
                stop = Fraction(max(FAST_TOLERANCE, result.floors[p])) if solver == "fast" else Fraction(0)
                same = result.masks[p].tobytes() == brute.masks[p].tobytes()
                if not (same or result.exact_errors[p] <= stop) or result.certificates[p] == "none":
                    found.append(f"w={w!r} {result.certificates[p]} {float(result.exact_errors[p])!r} "
                                 f"vs {float(brute.exact_errors[p])!r}")
    return found


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
@pytest.mark.parametrize("n", [3, 9, 13, 15])
def test_exact_equals_brute_force_inside_at_and_beyond_the_reach(distribution, n):
    assert brute_mismatches(distribution, n) == []


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_fast_is_brute_force_or_within_its_stop(distribution):
    assert brute_mismatches(distribution, 14, "fast") == []


def test_a_wrong_closed_form_or_pruning_is_seen(monkeypatch):
    # Mutants the comparison with brute force must refute: beyond the reach, every nonzero candidate
    # kept; inside it, every node pruned (the greedy mask comes back, claimed optimal).
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(certified_search, "beyond_reach", lambda w, a: None if abs(w) < 0.1 else (a != 0, 0.0))
        assert brute_mismatches("xavier", 9)
    monkeypatch.setattr(bounded_search.BoundedSearch, "_node_bound", lambda self, target, start: np.inf)
    assert brute_mismatches("uniform", 14)


def test_beyond_the_reach_is_the_closed_form_and_unique():
    a = np.array([0.5, -0.25, 0.125, 0.0, -2.0**-40])
    cases = ((0.625, [0, 2], 0), (1.0, [0, 2], 0.375), (-0.25 - 2.0**-40, [1, 4], 0), (-3.0, [1, 4], 2.75 - 2.0**-40))
    for w, kept, error in cases:
        result = solve_subset_sum(w, a, "exact", options=MIPOptions(time_limit=1e-9))  # no search: no time needed
        assert np.flatnonzero(result.masks[0]).tolist() == kept
        assert result.exact_errors == (Fraction(error),)
        assert result.certificates == ("optimal",)
        assert result.lower_bounds == (Fraction(error),)


@pytest.mark.parametrize("distribution", ["xavier", "theory"])
def test_exact_beyond_forty_is_mitm_where_it_claims_optimality(distribution):
    # n' = 42 > EXACT_PROVE_MAX: the search may stop at the floor; where it claims "optimal" (targets near
    # the edge of the reach), the independent meet-in-the-middle must agree exactly; at the floor, its
    # error is within the floor of mitm's.
    _, a = draw(distribution, 42, 1, seed=42)
    rng = np.random.default_rng(42)
    targets = np.array(reach_targets(a[0], rng)[:4])
    problems = np.tile(a[0], (targets.size, 1))
    exact, mitm = solve_subset_sum(targets, problems, "exact"), solve_subset_sum(targets, problems, "mitm")
    for p in range(targets.size):
        assert exact.certificates[p] in ("optimal", "float64-floor")
        if exact.certificates[p] == "optimal":
            assert exact.masks[p].tobytes() == mitm.masks[p].tobytes()
        else:
            assert mitm.exact_errors[p] <= exact.exact_errors[p] <= Fraction(exact.floors[p])


@pytest.mark.slow
@pytest.mark.parametrize("n", [44, 46])  # mitm's lists: 2^23 sums a half at 46, ~0.5 GB
def test_exact_beyond_forty_is_mitm_where_it_claims_optimality_many(n):
    _, a = draw("xavier", n, 4, seed=n)
    for candidates in a:
        targets = np.array(reach_targets(candidates, np.random.default_rng(n))[:6])
        problems = np.tile(candidates, (targets.size, 1))
        exact, mitm = solve_subset_sum(targets, problems, "exact"), solve_subset_sum(targets, problems, "mitm")
        for p in range(targets.size):
            assert mitm.exact_errors[p] <= exact.exact_errors[p]
            assert exact.certificates[p] != "optimal" or exact.exact_errors[p] == mitm.exact_errors[p]


def gurobi_tight(w: np.ndarray, a: np.ndarray, time_limit: float = 20.0) -> subset_sum.SubsetSumResult:
    """Gurobi at MIPGap 0 and its tightest tolerances; skips where gurobipy is missing or its licence
    refuses the size. Far inside the reach it seldom proves anything within ``time_limit``; its mask
    is compared all the same."""
    if (reason := subset_sum.available_solvers()["gurobi"]) is not None:
        pytest.skip(f"gurobipy is not usable here: {reason}")
    options = MIPOptions(mip_gap=0.0, mip_gap_abs=0.0, feasibility_tol=1e-9, int_feas_tol=1e-9, time_limit=time_limit)
    try:
        return solve_subset_sum(w, a, "gurobi", options=options)
    except SolverUnavailableError as error:
        pytest.skip(f"gurobipy refuses the size here: {error}")


@pytest.mark.parametrize(("n", "where"), [(48, (0.93, 1.0))])
def test_exact_is_never_worse_than_gurobi_at_a_tight_gap(n, where):
    _, a = draw("xavier", n, 3, seed=n)
    reach = np.where(a > 0, a, 0.0).sum(axis=1)
    w = np.random.default_rng(n).uniform(*where, 3) * reach
    exact, gurobi = solve_subset_sum(w, a, "exact"), gurobi_tight(w, a)
    assert all(e <= g for e, g in zip(exact.exact_errors, gurobi.exact_errors, strict=True))
    assert set(exact.certificates) <= {"optimal", "float64-floor"}


@pytest.mark.slow
@pytest.mark.parametrize("distribution", ["xavier", "theory"])
@pytest.mark.parametrize("n", [64, 128])
def test_exact_is_never_worse_than_gurobi_at_a_tight_gap_many(distribution, n):
    w, a = draw(distribution, n, 3, seed=n)  # xavier: one target inside, one near, one beyond the reach
    exact, gurobi = solve_subset_sum(w, a, "exact"), gurobi_tight(w, a, time_limit=5.0)
    assert all(e <= g for e, g in zip(exact.exact_errors, gurobi.exact_errors, strict=True))
    assert set(exact.certificates) <= {"optimal", "float64-floor"}


def test_a_time_limit_gives_a_proven_gap():
    # Stopped at once: the mask found so far, with "gap" and a lower bound at most the true optimum
    # (mitm's), or the floor where the mask earns it; beyond the reach the closed form needs no time.
    w, a = draw("xavier", 42, 6, seed=7)
    limited = solve_subset_sum(w, a, "exact", options=MIPOptions(time_limit=1e-9))
    optimum = solve_subset_sum(w, a, "mitm").exact_errors
    for p in range(6):
        certificate, bound = limited.certificates[p], limited.lower_bounds[p]
        assert certificate in ("gap", "float64-floor", "optimal")
        assert bound is not None
        assert bound <= optimum[p] <= limited.exact_errors[p]
        if region(w[p], a[p]) == "beyond":
            assert certificate == "optimal"
            assert limited.exact_errors[p] == optimum[p]
    assert "gap" in limited.certificates


def test_instances_of_each_distribution():
    targets, candidates = draw("uniform", 24, 5, seed=0)  # what the bench drew before distributions existed
    rng = np.random.default_rng([0, 24])
    assert targets.tolist() == rng.uniform(-1, 1, 5).tolist()
    assert candidates.tolist() == (rng.uniform(-1, 1, (5, 24)) * rng.uniform(-1, 1, (5, 24))).tolist()
    w, a = draw("xavier", 64, 9, seed=1)
    assert np.abs(a).max() <= 6.0 / 66.0
    assert [region(w[p], a[p]) for p in (0, 3, 6, 2, 5, 8)] == ["inside"] * 3 + ["beyond"] * 3
    w, a = draw("theory", 16, 4, seed=1)
    assert np.abs(a).max() <= 2.0
    assert np.abs(w).max() <= 1.0
    with pytest.raises(ValueError, match="distribution must be one of uniform, xavier, theory, got 'gauss'"):
        draw("gauss", 8, 1, 0)
