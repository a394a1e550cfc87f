"""Worst cases of Lemmas 12, 13 and Theorems 11, 14: the proved upper ends are never exceeded by
random or adversarial instances, closed forms are attained, and the searched lower ends are real."""

from __future__ import annotations

import math
import re

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings

from sltcheck import assumptions, suprema
from sltcheck.harness.instances import instances
from sltcheck.statements import lemma12, lemma13, theorem11, theorem14
from sltcheck.statements.lemma12 import worst_case as w12
from sltcheck.statements.lemma13 import worst_case as w13
from sltcheck.statements.theorem11 import worst_case as w11
from sltcheck.statements.theorem14 import worst_case as w14

MODULES = {"lemma12": lemma12, "lemma13": lemma13, "theorem11": theorem11, "theorem14": theorem14}
CHECKED = settings(max_examples=40, deadline=None, database=None)


def _lipschitz_upper(instance, block):
    """U_12 (U_13 for a block) at the instance's own d_K (the sharper key-scaled form)."""
    H, d_key = instance["W_Q"].shape[0], instance["W_Q"].shape[2]
    alpha, eps = float(instance["alpha"]), float(instance["eps_max"])
    u12 = w12.upper(H, alpha, eps, d_key)
    return 2 * (u12 + eps) if block else u12


def _upper_of(statement, instance):
    if statement in ("lemma12", "lemma13"):
        return mpmath.mpf(_lipschitz_upper(instance, statement == "lemma13")) * (1 + mpmath.mpf(2) ** -50)
    return (w11 if statement == "theorem11" else w14).upper_of(instance, 30)


@pytest.mark.parametrize("statement", list(MODULES))
def test_upper_never_exceeded_by_random_or_adversarial_instances(statement):
    @CHECKED
    @given(instances(statement))
    def check(instance):
        assert assumptions.violations(statement, instance) == []
        with mpmath.workdps(30):
            assert MODULES[statement].measured(instance, 30) <= _upper_of(statement, instance)

    check()


@pytest.mark.parametrize("statement", ["theorem11", "theorem14"])
def test_halved_upper_is_refuted(statement):
    """The property above can fail: with its upper end halved (a mutant) the same search refutes it.
    (For Lemmas 12 and 13 random instances reach half the upper end too rarely to find quickly;
    their searched instances refute the halved upper end in test_lipschitz_bracket_is_real.)"""

    @settings(CHECKED, max_examples=200)
    @given(instances(statement))
    def check(instance):
        with mpmath.workdps(30):
            assert MODULES[statement].measured(instance, 30) <= _upper_of(statement, instance) / 2

    with pytest.raises(AssertionError):
        check()


@pytest.mark.parametrize(("statement", "params"), [
    ("lemma12", dict(H=2, d1=3, alpha=2.0, eps_max=0.05, random_starts=0)),
    ("lemma13", dict(H=1, d1=2, L=1, alpha=2.0, eps_max=0.05, random_starts=0)),
    ("lemma12", dict(H=1, d1=1, alpha=1.0, eps_max=0.2)),
    ("lemma13", dict(H=2, d1=1, L=1, alpha=1.0, eps_max=1e-3)),
])
def test_lipschitz_bracket_is_real(statement, params):
    sup = suprema.supremum(statement, **params)
    instance = sup["instance"]
    assert sup["kind"] == suprema.BRACKET
    assert assumptions.violations(statement, instance) == []
    assert float(MODULES[statement].measured(instance, 40)) == pytest.approx(sup["lower"], rel=1e-12)
    assert sup["lower"] <= sup["upper"] <= sup["bound"]
    # the proved upper end is within a factor 2 of what an instance reaches: halving it is refuted
    assert sup["lower"] > sup["upper"] / 2
    general = _lipschitz_upper(instance, statement == "lemma13")  # U_12 or U_13, any d1
    if params["d1"] == 1:  # the closed form (worst_case.py) is the sharper upper end, and nearly reached
        assert sup["upper"] <= general * (1 + 1e-15)
        assert sup["lower"] > (0.9 if params["eps_max"] < 0.01 else 0.6) * sup["upper"]
    else:
        assert general <= sup["upper"] * (1 + 1e-15)


@pytest.mark.lemma12
def test_lipschitz_first_order_construction():
    """The docstring's construction reaches sqrt(2) alpha^2 eps_max to first order (H = 1, d_K = 2)."""
    alpha, eps = 2.0, 1e-4
    layout = w12.Layout(2, 2, 2)
    instance = layout.build(layout.construction(alpha, eps), 1, 2, 2, alpha, eps)
    assert assumptions.violations("lemma12", instance) == []
    assert float(lemma12.measured(instance, 30)) == pytest.approx(math.sqrt(2) * alpha**2 * eps, rel=1e-3)


T11_CLOSED = [dict(H=1, d1=1, L=1, e_vo=0.01), dict(H=2, d1=2, L=2, e_vo=1e-3, e_fc=1e-3),
              dict(H=3, d1=3, L=1, alpha=2.0, e_vo=1e-4, e_fc=[2e-3])]


@pytest.mark.parametrize("params", T11_CLOSED)
def test_theorem11_closed_slice_attained(params):
    sup = suprema.supremum("theorem11", **params)
    instance = sup["instance"]
    assert sup["kind"] == suprema.CLOSED
    assert assumptions.violations("theorem11", instance) == []
    value = float(theorem11.measured(instance, 40))
    assert value == pytest.approx(sup["upper"], rel=1e-12)
    assert value == pytest.approx(sup["nominal_upper"], rel=1e-12)
    assert sup["bound"] >= value * (1 - 1e-12)


def test_theorem11_bracket():
    sup = suprema.supremum("theorem11", H=2, d1=2, L=1, e_qk=1e-3, e_vo=1e-3, e_fc=1e-3)
    assert sup["kind"] == suprema.BRACKET
    assert sup["lower"] == pytest.approx(float(theorem11.measured(sup["instance"], 40)), rel=1e-12)
    assert sup["lower"] < sup["upper"] <= sup["bound"]


@pytest.mark.parametrize("params", [dict(H=1, d1=1, L=1, B=2, e_vo=0.01),
                                    dict(H=2, d1=2, L=2, B=3, e_qk=1e-4, e_vo=1e-4, e_fc=1e-4)])
def test_theorem14_bracket(params):
    sup = suprema.supremum("theorem14", **params)
    instance = sup["instance"]
    assert assumptions.violations("theorem14", instance) == []
    H, B = params["H"], params["B"]
    c = 2 * (H + 1)
    growth = math.prod(1 + params["d1"] * params.get("e_fc", 0.0) for _ in range(params["L"]))
    c_source = (1 + growth) * (1 + H * (1 + params["d1"] * params["e_vo"]))
    ray = w14.ray_instance(H, params["d1"], B, sup["params"]["alpha"], params.get("e_qk", 0.0), params["e_vo"],
                           sup["params"]["e_fc"])
    ray_value = float(theorem14.measured(ray, 40))
    assert ray_value == pytest.approx(sup["params"]["alpha"] * (c_source**B - c**B), rel=1e-9)
    assert sup["lower"] == pytest.approx(float(theorem14.measured(instance, 40)), rel=1e-12)
    assert ray_value <= sup["lower"] * (1 + 1e-12)
    if params["d1"] >= 2:  # the swap chain's softmax term beats the ray
        assert sup["lower"] > 4 * ray_value
    assert sup["lower"] < sup["upper"] == pytest.approx(sup["nominal_upper"], rel=1e-9)


@pytest.mark.parametrize(("bad", "fragment"), [
    (dict(statement="theorem14", B=1), "B must be an integer >= 2 (Theorem 14 assumes B >= 2), got 1"),
    (dict(statement="lemma12", eps_max=-0.1), "eps_max must be a finite number >= 0, got -0.1"),
    (dict(statement="theorem11", L=2, e_fc=[0.1]), "e_fc must be a number or a sequence of L = 2 numbers"),
    (dict(statement="lemma13", d1=2, alpha=1.0), "alpha must be >= max(sqrt(d1), sqrt(d2)) = 1.41421, got 1.0"),
    (dict(statement="lemma12", d1=2, random_starts=-1), "random_starts must be an integer >= 0, got -1"),
    (dict(statement="theorem11", seed=1), "params for theorem11 are H, d1, L, alpha, e_qk, e_vo, e_fc; got unknown"),
])
def test_bad_inputs(bad, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        suprema.supremum(**bad)


@pytest.mark.parametrize("eps", [0.1, 0.25, 0.5])
def test_lemma13_upper_end_covers_a_block_that_doubles_the_shift(eps):
    """One token, every weight (and the token) 1 - 2^-48 =: c, alpha = 1, x' = x - eps.

    Derived by hand: T = 1 makes the softmax 1, so Attn(x) = c^2 x and the residual
    r = x + Attn(x) = (1 + c^2) x; the one-layer FC gives F(r) = c r (r > 0), so
    Blk(x) = (1 + c)(1 + c^2) x and ||Blk(x) - Blk(x')|| = (1 + c)(1 + c^2) eps, i.e. 4 eps
    to 1e-14. Lemma 12's upper end for this head is 2 alpha tanh(alpha eps) + eps, so
    U_12 + eps = 2 tanh(eps) + 2 eps < 4 eps: Lemma 13's upper end must keep the factor 2
    (1 + Lip F) of the residual, and it must cover 4 eps.
    """
    c = 1.0 - 2.0**-48
    one = np.full((1, 1, 1), c)
    instance = {"alpha": 1.0, "d1": 1, "d2": 1, "X": np.array([[c]]), "X_perturbed": np.array([[c - eps]]),
                "mask": np.ones((1, 1), dtype=np.int8), "W_Q": one, "W_K": one, "W_V": one, "W_O": one,
                "eps_max": eps, "fc_layers": (np.array([[c]]),)}
    assert assumptions.violations("lemma13", instance) == []
    shift = float(lemma13.measured(instance, 40))
    assert shift == pytest.approx(4 * eps, rel=1e-13)  # (1 + c)(1 + c^2) = 4 - 12 * 2^-48 + ...
    assert shift <= w13.upper(1, 1.0, eps)
    assert shift > 2 * math.tanh(eps) + 2 * eps  # what the upper end would be without the factor 2


# Theorem 14 with Lemma 13 as printed, B = 2 (worst_case.py): P <= (34/33) L at block 2, with P the step-(3)
# bound on the block's Lipschitz step (written here) and L Lemma 13 as printed (the chain's own code).
# (H, d1, alpha, Delta): beta_2 = 4 H sqrt(d1) alpha, Delta anywhere from 0+ to past beta_2
PRINTED_LEMMA13_CASES = [
    (1, 1, 1.0, 1e-12), (1, 1, 1.0, 1e-6), (1, 1, 1.0, 1e-3), (1, 1, 1.0, 0.1), (1, 1, 1.0, 4.0),
    (1, 1, 2.0, 1e-9), (2, 1, 1.0, 1e-9), (1, 4, 2.0, 1e-9), (3, 2, 1.5, 1e-2), (1, 1, 1.0, 50.0),
]


def _step_three(H, beta, delta):
    """2 (H (2 beta tanh(beta Delta + Delta^2 / 2) + Delta) + Delta): worst_case.py's step (3)."""
    return 2 * (H * (2 * beta * mpmath.tanh(beta * delta + delta * delta / 2) + delta) + delta)


@pytest.mark.theorem14
@pytest.mark.parametrize(("H", "d1", "alpha", "delta"), PRINTED_LEMMA13_CASES)
def test_theorem14s_block_step_is_within_34_33_of_lemma13_as_printed(H, d1, alpha, delta):
    with mpmath.workdps(50):
        beta = 4 * H * mpmath.sqrt(d1) * mpmath.mpf(alpha)
        printed = theorem14.lemma13(H, d1, beta, mpmath.mpf(delta), 50, factor=1)
        assert _step_three(H, beta, mpmath.mpf(delta)) <= mpmath.mpf(34) / 33 * printed


@pytest.mark.theorem14
def test_theorem14s_block_step_exceeds_a_constant_below_34_33():
    """The argument's constant is sharp at H = d1 = alpha = 1 as Delta -> 0: 1 + 1/34 fails there."""
    with mpmath.workdps(50):
        beta, delta = mpmath.mpf(4), mpmath.mpf("1e-12")
        printed = theorem14.lemma13(1, 1, beta, delta, 50, factor=1)
        assert _step_three(1, beta, delta) > (1 + mpmath.mpf(1) / 34) * printed


@pytest.mark.theorem14
def test_theorem14s_repaired_constant_is_the_bracket_the_proof_gives():
    (row,) = theorem14.REPAIRED_CONSTANTS
    assert row["variant"] == "lemma13-as-stated"
    assert row["bracket"] == [1.0, 34 / 33]
    assert "B <= 2" in row["scope"]
    assert "34/33" in w14.__doc__
