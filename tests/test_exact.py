"""Exact arithmetic where an instance keeps it (sltcheck.numerics.exact): attained bounds decided,
not left undecided, and a bound below the measured side by less than any precision still refuted."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest

from sltcheck.harness import interval_verdict as certified
from sltcheck.numerics.balls import arb_available
from sltcheck.numerics.intervals import ends, norm, num, softmax, spectral_norm, using

pytestmark = pytest.mark.skipif(not arb_available(), reason="the exact backend keeps its balls in arb (python-flint)")


def test_radicals_are_exact_and_compare_exactly() -> None:
    from sltcheck.numerics.exact import Radical

    rng = random.Random(3)

    def draw() -> Radical:
        r, s = Fraction(rng.randint(-9, 9), rng.randint(1, 9)), Fraction(rng.randint(1, 12), rng.randint(1, 5))
        return Radical.of(r, s)

    def real(x: Radical) -> Any:
        return mpmath.mpf(x.r.numerator) / x.r.denominator * mpmath.sqrt(mpmath.mpf(x.s.numerator) / x.s.denominator)

    with mpmath.workdps(60):
        for _ in range(200):
            a, b = draw(), draw()

            assert abs(real(a * b) - real(a) * real(b)) < mpmath.mpf(10) ** -50
            if b.r != 0:
                assert abs(real(a / b) - real(a) / real(b)) < mpmath.mpf(10) ** -50
            total = a + b
            if total is not None:
                assert abs(real(total) - (real(a) + real(b))) < mpmath.mpf(10) ** -50
            assert a.compare(b) == (real(a) > real(b)) - (real(a) < real(b))
    assert Radical.of(Fraction(1), Fraction(2)) + Radical.of(Fraction(1), Fraction(3)) is None  # unlike radicals
    assert Radical.of(Fraction(1), Fraction(2)) + Radical.of(Fraction(1), Fraction(8)) == Radical.of(Fraction(3),
                                                                                                    Fraction(2))


def test_the_exact_backend_keeps_what_it_can_and_only_that() -> None:
    from sltcheck.numerics.exact import Exact, exact_max

    with using("exact", 30) as arith:
        half = num(0.5)
        assert arith.exp(num(0)).value is not None
        assert arith.expm1(num(0)).value.r == 0
        assert arith.exp(half).value is None  # e^(1/2) has no exact value here
        assert (arith.exp(half) * num(0)).value.r == 0  # ... but 0 times it is 0
        three = norm(np.asarray([num(1.0), num(2.0), num(2.0)], dtype=object))
        assert three.value is not None
        assert three.value.compare(num(3).value) == 0
        assert spectral_norm(np.asarray([[3.0, 4.0]])).value.compare(num(5).value) == 0
        uniform = softmax(np.asarray([[num(0.25), num(0.25), num(7.0)]], dtype=object), np.asarray([[1, 1, 0]]))
        assert [p.value.r for p in uniform[0]] == [Fraction(1, 2), Fraction(1, 2), 0]
        apart = softmax(np.asarray([[num(0.25), num(0.5)]], dtype=object), np.asarray([[1, 1]]))
        assert apart[0][0].value is None
        one, ball = num(1.0), Exact(None, arith.interval(0.0, 0.5).ball)
        assert exact_max([ball, one]) is one  # an exact value above every other ball is the maximum
        assert exact_max([Exact(None, arith.interval(0.9, 1.1).ball), one]).value is None


def _attained_theorem9() -> dict[str, Any]:
    """One token at alpha, W_QK reproduced, only W_VO perturbed: Theorem 9's tight chain is attained."""
    def weight(value: float) -> np.ndarray:
        return np.full((1, 1, 1), value)

    return {"alpha": 1.0, "d1": 1, "d2": 1, "X": np.asarray([[1.0]]), "mask": np.ones((1, 1), dtype=np.int8),
            "W_Q": weight(0.75), "W_K": weight(1.0), "W_V": weight(1.0), "W_O": weight(1.0),
            "S_Q": weight(0.75), "S_K": weight(1.0), "S_V": weight(0.875), "S_O": weight(1.0)}


@pytest.mark.theorem9
@pytest.mark.parametrize("variant", ["tight", "sharp"])
def test_an_attained_instance_is_attained_and_its_exact_value_lies_in_the_intervals(variant: str) -> None:
    instance = _attained_theorem9()
    result = certified.evaluate("theorem9", instance, variant)
    assert result["outcome"] == "attained"
    assert result["decided_by"] == "exact arithmetic"
    assert result["certified"]
    intervals = certified._evaluate_at("theorem9", instance, variant, 30, "arb")
    assert intervals["outcome"] == "undecided"  # what no enclosure decides
    (lo, hi), value = ends(intervals["measured"]), mpmath.mpf(0.125)  # |x| |dW_VO| = 1/8
    assert lo <= value <= hi


@pytest.mark.theorem9
def test_a_bound_below_the_measured_side_by_2_to_the_minus_700_is_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below any precision the intervals reach (120 digits), above exact arithmetic's: refuted, not attained."""
    module = certified.enclosures()["theorem9"]
    tight = module.BOUNDS["tight"]
    monkeypatch.setitem(module.BOUNDS, "tight", lambda instance: tight(instance) - num(mpmath.mpf(2) ** -700))
    result = certified.evaluate("theorem9", _attained_theorem9(), "tight")
    assert result["outcome"] == "violated"
    assert result["decided_by"] == "exact arithmetic"


@pytest.mark.theorem9
def test_settle_decides_a_variant_but_never_a_mutant_bound() -> None:
    from sltcheck.harness.runner import evaluate
    from sltcheck.statements import theorem9

    instance = _attained_theorem9()
    verdict = evaluate("theorem9", "tight", instance, dps=40)
    assert verdict.attained
    assert not verdict.undecided
    assert verdict.holds
    assert not verdict.violated
    assert verdict.as_dict()["attained"] is True
    same = evaluate("theorem9", "tight", instance, dps=40, bound=theorem9.VARIANTS["tight"])
    assert same.undecided  # a bound given by the caller (a mutant's) is not settled
    assert not same.attained


@pytest.mark.lemma7
def test_a_minimum_enclosed_by_its_best_choice_is_decided_from_its_exact_upper_end() -> None:
    """Lemma 7 at d1 = 1: the construction's masks are among the best, so measured = bound as real
    numbers; the measured side is known only as [the enumeration's lower bound, the best masks'
    error], whose exact upper end equals the bound: "holds" (not "attained": measured may be less)."""
    instance = {"W": np.asarray([[0.3]]), "W1": np.asarray([[0.5], [0.25]]), "W2": np.asarray([[1.0, 1.0]]),
                "eps": 0.5}
    assert certified._evaluate_at("lemma7", instance, "construction", 30, "arb")["outcome"] == "undecided"
    result = certified.evaluate("lemma7", instance, "construction")
    assert result["outcome"] == "holds"
    assert result["decided_by"] == "exact arithmetic"
    assert certified.evaluate("lemma7", instance, "bound-halved")["outcome"] == "violated"
