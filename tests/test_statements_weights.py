"""Lemmas 2, 4 and 7 (weight approximation): unit checks of the statement modules."""

import itertools

import mpmath
import numpy as np
import pytest

from sltcheck.harness import evaluate
from sltcheck.statements import lemma2, lemma4, lemma7
from sltcheck.statements.lemma7 import brute_force


def _instance(d1: int, d2: int, n_prime: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    n = d1 * n_prime
    return {"W": rng.uniform(-1, 1, (d2, d1)), "W1": rng.uniform(-1, 1, (n, d1)),
            "W2": rng.uniform(-1, 1, (d2, n)), "eps": 0.1}


def _brute_force_entrywise_error(instance: dict, dps: int = 40) -> mpmath.mpf:
    """max over entries (i, j) of min over every subset S of group j of |W_ij - sum_{k in S} W2_ik W1_kj|.

    Eqs. (6)-(8): with the block-diagonal M1, entry (i, j) of (W2 M2)(W1 M1) is a subset sum
    of group j's n' products, so the best the construction can do is this minimum; it is
    enumerated here over all 2^n' subsets, in mpmath (a product of two doubles is exact at
    40 digits), independently of the subset-sum solvers.
    """
    W, W1, W2 = (np.asarray(instance[k]) for k in ("W", "W1", "W2"))
    (d2, d1), size = W.shape, W1.shape[0] // W.shape[1]
    worst = mpmath.mpf(0)
    with mpmath.workdps(dps):
        for i in range(d2):
            for j in range(d1):
                group = range(j * size, (j + 1) * size)
                products = [mpmath.mpf(W2[i, k]) * mpmath.mpf(W1[k, j]) for k in group]
                best = min(abs(mpmath.mpf(W[i, j]) - mpmath.fsum(p for p, keep in zip(products, choice, strict=True)
                                                                   if keep))
                           for choice in itertools.product((False, True), repeat=size))
                worst = max(worst, best)
    return worst


@pytest.mark.parametrize(("d1", "d2", "n_prime", "seed"), [(3, 2, 8, 0), (1, 1, 10, 1), (2, 3, 6, 2)])
def test_lemma7_construction_error_is_the_brute_force_optimum(d1: int, d2: int, n_prime: int, seed: int) -> None:
    instance = _instance(d1, d2, n_prime, seed)
    value, brute = lemma7.construction_error(instance, 40), _brute_force_entrywise_error(instance)
    assert brute > 0
    # The two sums differ only in the order of 40-digit additions: agreement to 1e-35 relative.
    assert abs(value - brute) <= brute * mpmath.mpf(10) ** -35
    # Mixing the columns (any subset of all n products per entry) can only do better, and does
    # once there are other columns to mix in (d1 = 1 has one group: the same optimum).
    mixed = lemma7.unstructured_optimum(instance, 40)
    assert mixed < value if d1 > 1 else mixed == value


@pytest.mark.parametrize(("d1", "d2", "n_prime", "seed"), [
    (1, 1, 8, 0), (2, 1, 4, 1), (2, 2, 3, 2), (3, 2, 2, 3), (3, 3, 6, 4), (2, 3, 10, 5),
])
def test_lemma7_construction_error_is_the_entrywise_optimum(d1: int, d2: int, n_prime: int, seed: int) -> None:
    """Eq. (8): the block-diagonal M1 decouples the entries and M2 is entrywise optimal: the
    construction's error (full product from its masks) equals the max of the per-entry optima
    enumerated over all 2^n' subsets (no solver)."""
    instance = _instance(d1, d2, n_prime, seed)
    W, W1, W2 = (np.asarray(instance[k]) for k in ("W", "W1", "W2"))
    brute = brute_force.entrywise_optimum_brute(W, W1, W2).max()
    assert float(lemma7.construction_error(instance, 40)) == pytest.approx(brute, rel=1e-12, abs=1e-15)
    assert float(lemma7.entrywise_optimum(instance, 40)) == pytest.approx(brute, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(("d2", "n_prime", "seed"), [(1, 8, 0), (2, 8, 1), (3, 6, 2)])
def test_lemma7_construction_is_optimal_for_one_input(d2: int, n_prime: int, seed: int) -> None:
    """d1 = 1: every mask pair is a subset sum of the n products, so the best masks and the
    construction agree (to the enumeration's rounding bound)."""
    instance = _instance(1, d2, n_prime, seed)
    W, W1 = np.asarray(instance["W"]), np.asarray(instance["W1"])
    best = brute_force.best_error_float(W, W1, np.asarray(instance["W2"]))
    assert abs(best - float(lemma7.construction_error(instance, 40))) <= brute_force.rounding_bound(W, W1.shape[0])


def test_lemma7_best_masks_beat_the_construction_when_entries_couple() -> None:
    instance = _instance(2, 2, 3, seed=2)
    assert lemma7.measured(instance, 40) < 0.99 * lemma7.construction_error(instance, 40)
    assert not evaluate("lemma7", "construction", instance).violated


def test_lemma7_enumeration_refuses_large_sources() -> None:
    instance = _instance(3, 3, 4)
    with pytest.raises(ValueError, match="n \\(rows of W1\\) = 12"):
        lemma7.measured(instance, 40)


def test_lemma7_mutants_below_measured() -> None:
    instance = _instance(2, 2, 3, seed=2)
    value = lemma7.measured(instance, 40)
    assert value > 0
    assert lemma7.unstructured_optimum(instance, 40) < value
    assert lemma7.MUTANTS[0].bound(_instance(1, 2, 6, seed=3), 40) < lemma7.measured(_instance(1, 2, 6, seed=3), 40)


def test_lemma7_unstructured_masks_mix_columns() -> None:
    """With M1 all ones the construction's M2 no longer gives the entrywise optimum."""
    instance = _instance(2, 2, 6)
    W, W1, W2 = (np.asarray(instance[k]) for k in ("W", "W1", "W2"))
    _, M2 = lemma7.masks(instance)
    mixed = lemma7.product_error(W, W1, W2, np.ones_like(W1, dtype=bool), M2, 40)
    assert mixed > lemma7.construction_error(instance, 40)


def test_lemma7_success_frequency_large_width() -> None:
    result = lemma7.success_frequency(2, 2, 0.1, n_prime=30, trials=200, seed=0)
    assert result["ci_low"] > 1 - result["eps"]
    assert result["successes"] == 200


def test_lemma7_success_frequency_small_width_fails() -> None:
    result = lemma7.success_frequency(2, 2, 0.1, n_prime=2, trials=200, seed=0)
    assert result["ci_high"] < 1 - result["eps"]


def test_lemma4_reuses_lemma7() -> None:
    assert lemma4.VARIANTS is lemma7.VARIANTS
    assert lemma4.measured is lemma7.measured
    assert lemma4.ASSUMPTIONS == ("matrix-spectral", "eps-unit")


def test_lemma2_bounds_order_and_tight_corner() -> None:
    rng = np.random.default_rng(1)
    instance = {"W": np.array([[0.3]]), "x": np.array([1.0]), "W1": rng.uniform(-1, 1, (4, 1)),
                "W2": rng.uniform(-1, 1, (1, 4)), "eps": 0.5}
    m, p, a = (f(instance, 40) for f in (lemma2.measured, lemma2.pointwise, lemma2.as_proven))
    assert m <= p <= a
    other = dict(instance, x=np.array([-1.0]))
    assert max(m, lemma2.measured(other, 40)) == a  # d1 = d2 = 1: x = +-1 attains sqrt(d1 d2) e
    assert not evaluate("lemma2", "as-proven", instance).violated
