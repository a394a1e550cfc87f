"""Unit tests of the lemma modules (5, 8, 12, 13) and the harness, on closed-form cases."""

import math

import mpmath
import numpy as np
import pytest

from sltcheck.assumptions import violations
from sltcheck.harness import deciding_rows, decode_instance, encode_instance, evaluate
from sltcheck.harness.projection import INSIDE, scale_inside
from sltcheck.registry import STATEMENT_MODULES, load


def two_tokens(eps: float, alpha: float = 1.0, d1: int = 1) -> dict[str, object]:
    """The extreme case of Lemma 8: tokens +-alpha e_1, equal weights, eps aligned."""
    X = np.zeros((2, d1))
    X[:, 0] = [alpha * INSIDE, -alpha * INSIDE]
    return {
        "alpha": alpha,
        "d1": d1,
        "X": X,
        "logits": np.zeros((2, 2)),
        "mask": np.ones((2, 2), dtype=np.int8),
        "perturbation": np.array([[eps, -eps], [eps, -eps]]),
        "eps_max": eps,
    }


# (eps, closed form of the left side / (alpha INSIDE)): 2 tanh(eps) ... with tokens +-a the
# shift of the mean is a (sigmoid(2 eps) - sigmoid(-2 eps)) = a tanh(eps).
CLOSED_FORM = [
    (1e-30, lambda e: math.tanh(e)),
    (1e-3, lambda e: math.tanh(e)),
    (0.25, lambda e: math.tanh(e)),
    (2.0, lambda e: math.tanh(e)),
]


@pytest.mark.parametrize(("eps", "closed"), CLOSED_FORM)
def test_lemma8_two_tokens_closed_form(eps: float, closed: object) -> None:
    inst = two_tokens(eps)
    value = load("lemma8").measured(inst, 60)
    with mpmath.workdps(60):
        expected = mpmath.tanh(mpmath.mpf(eps)) * mpmath.mpf(INSIDE)
        assert abs(value - expected) <= mpmath.mpf(10) ** -45 * expected


def test_lemma8_ratio_tends_to_one_half() -> None:
    verdict = evaluate("lemma8", "as-stated", two_tokens(1e-30), dps=50)
    assert not verdict.violated
    assert abs(verdict.ratio - 0.5) < 1e-12


def test_lemma5_ratio_tends_to_one_quarter() -> None:
    verdict = evaluate("lemma5", "as-stated", two_tokens(1e-30), dps=50)
    assert abs(verdict.ratio - 0.25) < 1e-12


def test_lemma8_float64_and_mpmath_agree() -> None:
    inst = two_tokens(0.1, alpha=3.0, d1=2)
    assert load("lemma8").measured(inst, None) == pytest.approx(
        float(load("lemma8").measured(inst, 40)), rel=1e-12
    )


@pytest.mark.lemma8
def test_tiny_perturbation_is_seen_only_in_mpmath() -> None:
    inst = two_tokens(1e-30)
    assert float(load("lemma8").measured(inst, 40)) > 0  # float64 logits + 1e-30 == logits


def lipschitz_single_token(eps: float, block: bool) -> dict[str, object]:
    """T = 1: Attn(x) = x W_V W_O, so with identities the shift is exactly ||x - x'||."""
    one = np.full((1, 1, 1), INSIDE)
    inst = {
        "alpha": 1.0,
        "d1": 1,
        "d2": 1,
        "X": np.array([[INSIDE]]),
        "X_perturbed": np.array([[INSIDE - eps]]),
        "mask": np.ones((1, 1), dtype=np.int8),
        "W_Q": one,
        "W_K": one,
        "W_V": one,
        "W_O": one,
        "eps_max": eps,
    }
    if block:
        inst["fc_layers"] = (np.array([[INSIDE]]),)
    return inst


def test_lemma12_single_token_is_linear() -> None:
    inst = lipschitz_single_token(0.25, block=False)
    value = load("lemma12").measured(inst, 40)
    assert abs(float(value) - 0.25 * INSIDE**2) < 1e-15
    assert not violations("lemma12", inst)


def test_lemma13_single_token_block() -> None:
    inst = lipschitz_single_token(0.25, block=True)
    # Blk(x) = F(r) + r, r = x (1 + INSIDE^2), F = INSIDE: shift (1 + INSIDE)(1 + INSIDE^2) eps
    expected = (1 + INSIDE) * (1 + INSIDE**2) * 0.25
    assert abs(float(load("lemma13").measured(inst, 40)) - expected) < 1e-14
    # The paper's bounds at H = d1 = alpha = 1, eps = 1/4, typed from the paper, not the code:
    # as stated (Lemma 13) H sqrt(d1) (alpha (e^{4 alpha eps} - 1) + 2 eps) = e - 1/2, and the
    # proof's 2 H sqrt(d1) (...) = 2e - 1 (the factor 2 of the residual, Lemma 13 proof).
    with mpmath.workdps(50):
        stated, proven = mpmath.e - mpmath.mpf(1) / 2, 2 * mpmath.e - 1
        assert abs(evaluate("lemma13", "as-stated", inst).bound - stated) < mpmath.mpf(10) ** -35
        assert abs(evaluate("lemma13", "as-proven", inst).bound - proven) < mpmath.mpf(10) ** -35


@pytest.mark.parametrize("name", [n for n in STATEMENT_MODULES if n.startswith("lemma")])
def test_statement_module_contract(name: str) -> None:
    module = load(name)
    assert module.DEFAULT_VARIANT in module.VARIANTS
    assert module.MUTANTS, "every statement needs at least one mutant"
    assert module.__doc__
    assert "As the paper states it" in module.__doc__


def test_instances_round_trip_exactly() -> None:
    inst = lipschitz_single_token(1e-300, block=True)
    back = decode_instance(encode_instance(inst))
    for key, value in inst.items():
        if isinstance(value, tuple):
            assert all(np.array_equal(a, b) for a, b in zip(value, back[key], strict=True))
        else:
            assert np.array_equal(np.asarray(value), np.asarray(back[key]))


def test_deciding_rows_keeps_ties_and_top() -> None:
    rows = deciding_rows(np.array([0.1, 0.5, 0.5 - 1e-12, 0.2]))
    assert {1, 2} <= set(rows.tolist())


@pytest.mark.lemma12
def test_scale_inside_is_inside_in_mpmath() -> None:
    matrix = scale_inside(np.random.default_rng(0).standard_normal((5, 3)))
    assert not violations(
        "lemma12",
        {"W_Q": matrix[None], "W_K": matrix[None], "W_V": matrix[None], "W_O": matrix.T[None]},
    )
    assert scale_inside(np.full((2, 2), 5e-324)).max() > 0
