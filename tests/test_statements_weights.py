"""Lemmas 2, 4 and 7 (weight approximation): unit checks of the statement modules."""

import numpy as np
import pytest

from sltcheck.harness import evaluate
from sltcheck.statements import lemma2, lemma4, lemma7


def _instance(d1: int, d2: int, n_prime: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    n = d1 * n_prime
    return {"W": rng.uniform(-1, 1, (d2, d1)), "W1": rng.uniform(-1, 1, (n, d1)),
            "W2": rng.uniform(-1, 1, (d2, n)), "eps": 0.1}


def test_lemma7_measured_equals_entrywise_optimum() -> None:
    instance = _instance(3, 2, 8)
    assert lemma7.measured(instance, 40) == lemma7.deterministic(instance, 40)
    assert lemma7.measured(instance, None) == pytest.approx(lemma7.deterministic(instance, None), rel=1e-12)


def test_lemma7_mutants_below_measured() -> None:
    instance = _instance(3, 2, 8)
    value = lemma7.measured(instance, 40)
    assert value > 0
    assert lemma7.MUTANTS[0].bound(instance, 40) < value
    assert lemma7.unstructured_optimum(instance, 40) < value


def test_lemma7_unstructured_masks_mix_columns() -> None:
    """With M1 all ones the construction's M2 no longer gives the entrywise optimum."""
    instance = _instance(2, 2, 6)
    W, W1, W2 = (np.asarray(instance[k]) for k in ("W", "W1", "W2"))
    _, M2 = lemma7.masks(instance)
    mixed = lemma7.product_error(W, W1, W2, np.ones_like(W1, dtype=bool), M2, 40)
    assert mixed > lemma7.measured(instance, 40)


def test_lemma7_success_frequency_large_width() -> None:
    result = lemma7.success_frequency(2, 2, 0.1, n_prime=30, trials=200, seed=0)
    assert result["ci_low"] > 1 - result["eps"]
    assert result["successes"] == 200


def test_lemma7_success_frequency_small_width_fails() -> None:
    result = lemma7.success_frequency(2, 2, 0.1, n_prime=2, trials=200, seed=0)
    assert result["ci_high"] < 1 - result["eps"]


def test_lemma4_reuses_lemma7() -> None:
    assert lemma4.VARIANTS is lemma7.VARIANTS and lemma4.measured is lemma7.measured
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
