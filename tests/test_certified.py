"""Interval verdicts: agree with point verdicts far from the bound, undecided on it."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from mpmath import iv

from sltcheck import certified, precision, reference, worst_case
from sltcheck.verdict import decide

lemma8 = pytest.importorskip("sltcheck.statements.lemma8")
t9 = pytest.importorskip("sltcheck.statements.theorem9")


def test_decide_interval():
    assert certified.decide_interval((1, 2), (2, 3)) == "holds"
    assert certified.decide_interval((2.5, 3), (1, 2)) == "violated"
    assert certified.decide_interval((1, 2.5), (2, 3)) == "undecided"
    assert certified.decide_interval(iv.mpf(1), iv.mpf(1)) == "holds"  # equal points: <= is proved
    assert certified.decide_interval(iv.mpf([1, 1]), iv.mpf([0.5, 1])) == "undecided"
    with pytest.raises(ValueError, match="finite"):
        certified.decide_interval((1, float("inf")), (0, 1))


def test_interval_mode_encloses_and_leaves_point_mode_alone():
    logits = np.array([[0.3, -1.2, 2.0]])
    mask = np.ones((1, 3))
    with precision.interval_arithmetic(30):
        p = reference.masked_softmax(logits, mask, 30)
        assert precision.is_interval(p) and precision.in_interval_mode()
    assert not precision.in_interval_mode()
    exact = reference.masked_softmax(logits, mask, 60)
    with mpmath.workdps(60):
        for a, b in zip(p.flat, exact.flat, strict=True):
            lo, hi = certified.ends(a)
            assert lo <= b <= hi and hi - lo < mpmath.mpf(10) ** -25
    assert reference.masked_softmax(logits, mask, 30)[0, 0].__class__ is mpmath.mpf


def _random_lemma8(rng: np.random.Generator, T: int = 3, d1: int = 2) -> dict:
    alpha = float(rng.uniform(0.5, 2))
    X = rng.normal(size=(T, d1))
    X *= alpha * rng.uniform(0.2, 0.99, (T, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    e = float(rng.uniform(0.001, 0.5))
    return {"alpha": alpha, "d1": d1, "X": X, "logits": rng.normal(size=(T, T)), "mask": np.ones((T, T), np.int8),
            "perturbation": rng.uniform(-e, e, (T, T)), "eps_max": e}


@pytest.mark.parametrize("seed", range(6))
def test_lemma8_agrees_with_point_verdicts(seed):
    rng = np.random.default_rng(seed)
    inst = _random_lemma8(rng)
    for variant, bound in (("as-stated", lemma8.VARIANTS["as-stated"]),
                           ("exponent-quartered", lemma8.MUTANTS[0].bound)):
        point = decide(lemma8.measured(inst, 40), bound(inst, 40), 40)
        result = certified.evaluate("lemma8", inst, variant, dps=40)
        lo, hi = certified.ends(result["measured"])
        assert lo <= point.measured <= hi
        if abs(point.ratio - 1) > 0.01:
            assert result["outcome"] == ("holds" if point.holds else "violated")


def test_lemma8_extremal_instance_certified():
    sup = worst_case.supremum("lemma8", d1=2, alpha=1.5, eps_max=0.2)
    assert certified.evaluate("lemma8", sup["instance"])["outcome"] == "holds"
    # the quartered exponent is refuted with a certificate at the extremal point
    assert certified.evaluate("lemma8", sup["instance"], "exponent-quartered")["outcome"] == "violated"


def _random_t9(rng: np.random.Generator, H=1, d1=2, d2=2, dk=2, n=3, noise=1e-3) -> dict:
    from sltcheck.weights import MHAWeights

    def spec1(*shape):
        m = rng.uniform(-1, 1, shape)
        return m / max(1.0, np.linalg.norm(m, 2)) * 0.9

    target = MHAWeights(np.stack([spec1(d1, dk) for _ in range(H)]), np.stack([spec1(d1, dk) for _ in range(H)]),
                        np.stack([spec1(d1, dk) for _ in range(H)]), np.stack([spec1(dk, d2) for _ in range(H)]))
    # a source with n_K = n_V = dk that is the target plus noise (any pruned source will do)
    scale = (dk / dk) ** 0.25
    source = MHAWeights(*(w * scale + rng.uniform(-noise, noise, w.shape) for w in target.tensors()))
    alpha = 2.0
    X = rng.normal(size=(3, d1))
    X *= alpha * 0.95 / np.linalg.norm(X, axis=1, keepdims=True)
    return t9.make_instance(target, source, X, np.tril(np.ones((3, 3), np.int8)), alpha)


@pytest.mark.parametrize("seed", range(3))
def test_theorem9_agrees_with_point_verdicts(seed):
    rng = np.random.default_rng(seed)
    inst = _random_t9(rng)
    for variant in ("as-proven", "as-stated"):
        point = decide(t9.measured(inst, 30), t9.VARIANTS[variant](inst, 30), 30)
        result = certified.evaluate("theorem9", inst, variant, dps=30)
        blo, bhi = certified.ends(result["bound"])
        with mpmath.workdps(60):
            slack = mpmath.mpf(10) ** -25 * point.bound
            assert blo - slack <= point.bound <= bhi + slack
        if abs(point.ratio - 1) > 0.01:
            assert result["outcome"] == ("holds" if point.holds else "violated")
            assert result["certified"]


def test_undecided_on_an_instance_sitting_on_the_bound():
    """d1 = d2 = H = 1, one token of norm alpha, W_QK reproduced exactly, only W_VO perturbed:
    measured = alpha |dW_VO| = the as-proven bound, as real numbers."""
    sup = worst_case.supremum("theorem9", H=1, d1=1, d2=1, alpha=1.0, e_qk=0.0, e_vo=0.01)
    inst = sup["instance"]
    result = certified.evaluate("theorem9", inst, "as-proven", dps=40)
    assert result["outcome"] == "undecided" and not result["certified"]
    point = decide(t9.measured(inst, 40), t9.VARIANTS["as-proven"](inst, 40), 40)
    assert point.undecided or abs(point.ratio - 1) < 1e-30


def test_unsupported():
    with pytest.raises(ValueError, match="statement"):
        certified.evaluate("theorem11", {}, None)
    with pytest.raises(ValueError, match="variant"):
        certified.evaluate("lemma8", {}, "tight")
    assert "as-proven" in certified.supported()["theorem9"]
