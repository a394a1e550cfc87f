"""Closed-form suprema: attained by their extremal instances, never exceeded by others."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import optimize

from sltcheck import assumptions, suprema
from sltcheck.harness.pytest_plugin import every_statement
from sltcheck.registry import load
from sltcheck.statements import lemma8
from sltcheck.statements import theorem9 as t9
from sltcheck.statements.lemma8.worst_case import supremum_value as lemma8_supremum_value

LEMMA_PARAMS = [dict(d1=1, alpha=1.0, eps_max=0.1), dict(d1=3, alpha=2.0, eps_max=0.7),
                dict(d1=5, alpha=3.0, eps_max=1e-4), dict(d1=2, alpha=1.5, eps_max=0.5)]


# Lemma 5 assumes eps_max <= 1/2, so it takes only those parameters.
CLOSED_FORM_CASES = [("lemma8", p) for p in LEMMA_PARAMS] + [("lemma5", p) for p in LEMMA_PARAMS if p["eps_max"] <= 0.5]


def _two_token_maximum(alpha: float, eps: float) -> float:
    """The largest shift of two tokens +-alpha u, found by a 1-D search (not the code's closed form).

    With tokens +-alpha u the output is (p1 - p2) alpha u = (2 p1 - 1) alpha u, so the shift is
    2 alpha |p1 - q1| with p1 = s(g) (s the logistic function, g the logit gap) and
    q1 = s(g + delta), |delta| <= 2 eps (each perturbation entry moves by at most eps). The
    best delta is 2 eps; maximise s(g + 2 eps) - s(g) over g numerically (bounded Brent to
    1e-12 in g; the maximum is flat there, so the value is good to ~1e-15 relative).
    """
    logistic = lambda z: 1 / (1 + math.exp(-z))  # noqa: E731
    found = optimize.minimize_scalar(lambda g: -(logistic(g + 2 * eps) - logistic(g)), bounds=(-10 - 2 * eps, 10),
                                     method="bounded", options={"xatol": 1e-12})
    return 2 * alpha * -found.fun


@pytest.mark.parametrize(("name", "params"), CLOSED_FORM_CASES)
def test_lemma_closed_form_attained(name, params):
    sup = suprema.supremum(name, **params)
    assert sup["kind"] == suprema.CLOSED
    assert assumptions.violations("lemma8", sup["instance"]) == []
    value = float(lemma8.measured(sup["instance"], 40))
    assert value == pytest.approx(sup["value"], rel=1e-13)
    assert sup["value"] == pytest.approx(_two_token_maximum(params["alpha"], params["eps_max"]), rel=1e-9)
    assert sup["bound"] >= sup["value"]


def _lemma8_value(z: np.ndarray, T: int, d1: int, alpha: float, e: float) -> float:
    """measured of a Lemma 8 instance parametrised by unconstrained z (tokens inside the ball)."""
    X = z[: T * d1].reshape(T, d1)
    X = alpha * X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    logits = z[T * d1: T * d1 + T]
    pert = e * np.tanh(z[T * d1 + T:])
    p = np.exp(logits - logits.max())
    p /= p.sum()
    q = np.exp(logits + pert - (logits + pert).max())
    q /= q.sum()
    return float(np.linalg.norm((p - q) @ X))


@pytest.mark.parametrize("seed", range(4))
def test_lemma8_never_exceeded(seed):
    rng = np.random.default_rng(seed)
    T, d1 = int(rng.integers(2, 6)), int(rng.integers(1, 4))
    alpha, e = float(rng.uniform(0.5, 3)), float(rng.uniform(0.01, 1.5))
    sup = lemma8_supremum_value(alpha, e)
    best = 0.0
    for _ in range(300):  # random instances
        z = rng.normal(size=T * d1 + 2 * T) * 2
        best = max(best, _lemma8_value(z, T, d1, alpha, e))
    for _ in range(6):  # searched instances
        res = optimize.minimize(lambda z: -_lemma8_value(z, T, d1, alpha, e), rng.normal(size=T * d1 + 2 * T),
                                method="Nelder-Mead", options={"maxiter": 3000, "xatol": 1e-10, "fatol": 1e-14})
        best = max(best, -res.fun)
    assert best <= sup * (1 + 1e-12)
    assert best >= 0.9 * sup  # the search gets close, so the test has teeth


def test_lemma8_statement_measured_never_exceeds_on_random_instances():
    rng = np.random.default_rng(11)
    for _ in range(20):
        T, d1 = 3, 2
        alpha, e = 1.3, 0.4
        X = rng.normal(size=(T, d1))
        X *= alpha * rng.uniform(0, 1, (T, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
        inst = {"alpha": alpha, "d1": d1, "X": X, "logits": rng.normal(size=(T, T)) * 2,
                "mask": np.ones((T, T), np.int8), "perturbation": rng.uniform(-e, e, (T, T)), "eps_max": e}
        assert float(lemma8.measured(inst, None)) <= lemma8_supremum_value(alpha, e) * (1 + 1e-12)


@pytest.mark.parametrize("name", ["lemma8", "lemma5"])
def test_slack_is_the_bound_over_the_attained_value(name):
    """slack = the statement's own bound / its own measured side at the supremum's instance
    (the statement modules at 40 digits, not the worst-case module's closed forms)."""
    module = load(name)
    for d1, e in ((1, 1e-3), (4, 0.25), (9, 0.5)):
        sup = suprema.supremum(name, d1=d1, alpha=math.sqrt(d1), eps_max=e)
        instance = sup["instance"]
        expected = module.VARIANTS[module.DEFAULT_VARIANT](instance, 40) / module.measured(instance, 40)
        assert suprema.slack(name, d1=d1, alpha=math.sqrt(d1), eps_max=e) == pytest.approx(float(expected),
                                                                                               rel=1e-12)


@pytest.mark.lemma5
@pytest.mark.lemma8
def test_slack_limits_at_small_eps():
    """As eps -> 0 (d1 = alpha = 1): Lemma 8's sqrt(d1) alpha (e^{2 eps} - 1) / (2 alpha tanh(eps / 2)) -> 2 eps / eps
    = 2 and Lemma 5's 4 sqrt(d1) alpha eps / (2 alpha tanh(eps / 2)) -> 4; at eps = 1e-6 the next terms are O(1e-6)."""
    assert suprema.slack("lemma8", d1=1, alpha=1.0, eps_max=1e-6) == pytest.approx(2.0, rel=1e-5)
    assert suprema.slack("lemma5", d1=1, alpha=1.0, eps_max=1e-6) == pytest.approx(4.0, rel=1e-5)


T9_CLOSED = [dict(H=1, d1=1, d2=1, e_qk=0.0, e_vo=0.01), dict(H=2, d1=2, d2=3, e_qk=0.0, e_vo=0.003),
             dict(H=2, d1=2, d2=3, e_qk=1e-3, e_vo=0.0), dict(H=1, d1=3, d2=3, alpha=2.0, e_qk=1e-4, e_vo=0.0)]


@pytest.mark.parametrize("params", T9_CLOSED)
def test_theorem9_closed_slices_attained(params):
    sup = suprema.supremum("theorem9", **params)
    assert sup["kind"] == suprema.CLOSED
    inst = sup["instance"]
    assert assumptions.violations("theorem9", inst) == []
    errors = t9.achieved_errors(t9.target_of(inst), t9.source_of(inst), 30)
    assert max(float(e) for e in errors["e_QK"]) <= params["e_qk"] * (1 + 1e-12) + 1e-300
    assert max(float(e) for e in errors["e_VO"]) <= params["e_vo"] * (1 + 1e-12) + 1e-300
    assert float(t9.measured(inst, 40)) == pytest.approx(sup["value"], rel=1e-12)
    assert float(t9.VARIANTS["as-proven"](inst, 40)) == pytest.approx(sup["bound"], rel=1e-9)


def test_theorem9_bracket():
    params = dict(H=1, d1=2, d2=2, e_qk=1e-3, e_vo=1e-3)
    sup = suprema.supremum("theorem9", **params)
    assert sup["kind"] == suprema.BRACKET
    assert sup["lower"] < sup["upper"]
    assert float(t9.measured(sup["instance"], 40)) >= sup["lower"] * (1 - 1e-12)


def _t9_random_value(rng, H, d1, d2, alpha, e_qk, e_vo):
    """A random admissible instance with achieved errors <= (e_qk, e_vo); returns measured."""
    from sltcheck.model.weights import MHAWeights

    def contract(*shape):
        m = rng.normal(size=shape)
        return m / np.linalg.norm(m, 2) * rng.uniform(0.5, 1.0)

    dk = 2
    WQ, WK = np.stack([contract(d1, dk) for _ in range(H)]), np.stack([contract(d1, dk) for _ in range(H)])
    WV, WO = np.stack([contract(d1, dk) for _ in range(H)]), np.stack([contract(dk, d2) for _ in range(H)])
    target = MHAWeights(WQ, WK, WV, WO)
    merged = target.merged(None)
    dqk = rng.choice([-1.0, 1.0], size=merged.W_QK.shape) * e_qk * rng.uniform(0.9, 1, merged.W_QK.shape)
    dvo = rng.choice([-1.0, 1.0], size=merged.W_VO.shape) * e_vo * rng.uniform(0.9, 1, merged.W_VO.shape)
    T = 3
    X = rng.normal(size=(T, d1))
    X *= alpha * (1 - 1e-9) / np.linalg.norm(X, axis=1, keepdims=True)
    mask = np.ones((T, T), np.int8)
    out = 0.0
    for i in range(T):
        total = np.zeros(d2)
        for j in range(H):
            la = X[i] @ merged.W_QK[j] @ X.T
            lb = X[i] @ (merged.W_QK[j] - dqk[j]) @ X.T
            p, q = np.exp(la - la.max()), np.exp(lb - lb.max())
            p, q = p / p.sum(), q / q.sum()
            total += p @ X @ merged.W_VO[j] - q @ X @ (merged.W_VO[j] - dvo[j])
        out = max(out, float(np.linalg.norm(total)))
    del mask
    return out


@pytest.mark.parametrize("params", [dict(H=1, d1=2, d2=2, alpha=1.5, e_qk=0.01, e_vo=0.01),
                                    dict(H=2, d1=1, d2=3, alpha=2.0, e_qk=0.05, e_vo=0.0),
                                    dict(H=2, d1=3, d2=1, alpha=2.0, e_qk=0.0, e_vo=0.02)])
def test_theorem9_upper_never_exceeded(params):
    rng = np.random.default_rng(5)
    upper = suprema.supremum("theorem9", **params)["upper"]
    for _ in range(200):
        assert _t9_random_value(rng, **params) <= upper * (1 + 1e-12)


@pytest.mark.parametrize(("bad", "fragment"), [
    (dict(statement="theorem10"), "statement must be one of lemma5, lemma8"),
    (dict(statement="lemma8", d1=0), "d1 must be an integer >= 1, got 0"),
    (dict(statement="lemma8", eps_max=-1.0), "eps_max must be a finite number >= 0, got -1.0"),
    (dict(statement="lemma5", eps_max=0.7), "eps_max must be a finite number in [0, 0.5], got 0.7"),
    (dict(statement="theorem9", d1=4, alpha=1.0), "alpha must be >= max(sqrt(d1), sqrt(d2)) = 2, got 1.0"),
    (dict(statement="lemma8", foo=1), "params for lemma8 are d1, alpha, eps_max; got unknown ['foo']"),
])
def test_bad_inputs(bad, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        suprema.supremum(**bad)


@every_statement  # discovers which folders have the part
def test_slack_table():
    rows = suprema.slack_table(searched=False)
    assert {r["statement"] for r in rows} == {"lemma8", "lemma5", "lemma12", "lemma13", "theorem9", "theorem11",
                                              "theorem14"}
    assert {r["params"]["d1"] for r in rows if r["statement"] in ("lemma12", "lemma13")} == {1}  # no search
    assert all(r["slack"] >= 1 - 1e-12 for r in rows)
    assert all(r["slack_range"] is None or r["slack_range"][0] <= r["slack_range"][1] for r in rows)


def test_report_renders_slack_table():
    from sltcheck.report import page as report

    rows = suprema.slack_table(searched=False)
    built = report.build({"findings": [{"slack": rows, "findings": []}], "synthetic": [], "lm": []})
    assert len(built["slack"]) == len(rows)
    html = report.render(built)
    assert "Slack factors" in html
    assert "closed-form" in html
    assert "bracket" in html
    assert "Slack factors" not in report.render(report.build({"findings": [], "synthetic": [], "lm": []}))


# --- Lemmas 12 and 13 at d1 = 1, Theorem 14's chain: the closed forms of issue 32 -----------------------


def _lipschitz_d1(rng: np.random.Generator, L: int = 0) -> dict:
    """A random admissible Lemma 12 (L = 0) or 13 (L = 1) instance at d1 = d2 = 1: any T <= 8, heads, d_K,
    tokens, steps, weights, eps_max from 1e-6 to 0.3, full or causal mask."""
    from sltcheck.statements.lemma12.token_families import perturbed

    T, H, dK = int(rng.integers(2, 9)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
    alpha, eps = float(rng.uniform(1.0, 2.5)), float(10 ** rng.uniform(-6, np.log10(0.3)))
    x = alpha * rng.choice((-1.0, 1.0), T) * np.where(rng.random(T) < 0.7, 1.0, rng.random(T))
    xp = [perturbed(v, eps * s, eps, alpha) for v, s in zip(x * (1 - 2**-40), rng.uniform(-1, 1, T), strict=True)]

    def unit(rows: int, cols: int) -> np.ndarray:
        w = rng.normal(size=(H, rows, cols))
        return w / np.linalg.norm(w, 2, axis=(1, 2), keepdims=True) * (1 - 2**-40)

    mask = np.ones((T, T), dtype=np.int8) if rng.random() < 0.5 else np.tril(np.ones((T, T), dtype=np.int8))
    out = {"alpha": alpha, "d1": 1, "d2": 1, "X": (x * (1 - 2**-40)).reshape(T, 1),
           "X_perturbed": np.reshape(xp, (T, 1)), "mask": mask, "W_Q": unit(1, dK), "W_K": unit(1, dK),
           "W_V": unit(1, 1), "W_O": unit(1, 1), "eps_max": eps}
    if L:
        out["fc_layers"] = (np.full((1, 1), rng.uniform(-1, 1)),)
    return out


@pytest.mark.parametrize("statement", ["lemma12", "lemma13"])
def test_the_d1_closed_form_bounds_every_instance_at_every_eps(statement):
    """Proved in worst_case.py (the mean-value argument): measured <= H eps phi(alpha^2 / sqrt d_K) (Lemma 12),
    2 eps (H phi + 1) (Lemma 13), at every eps_max; checked at 40 digits on random d1 = 1 instances."""
    from sltcheck.assumptions import violations
    from sltcheck.statements import lemma12, lemma13
    from sltcheck.statements.shared.lipschitz import supremum_bound

    rng = np.random.default_rng(32)
    module = lemma13 if statement == "lemma13" else lemma12
    for _ in range(40):
        instance = _lipschitz_d1(rng, L=1 if statement == "lemma13" else 0)
        assert not violations(statement, instance)
        assert module.measured(instance, 40) <= supremum_bound(instance, 40, with_block=statement == "lemma13")


@pytest.mark.lemma12
def test_phi_is_the_first_order_supremum():
    """phi(t) = max(1 + t, 2 t + 1/(8 t)): no distribution of token values beats it (a random search over
    the first-order quantity f of the proof's step 1), and the two-point extremal attains it."""
    from sltcheck.statements.lemma12.worst_case import BRANCH, phi

    rng = np.random.default_rng(7)

    def f(p, y, u, q, theta):  # the proof's step 1: query q among the values y (weights p), directions u
        c, m = theta * y[q], p @ y
        return p @ (u * (1 + c * (y - m))) + theta * u[q] * (p @ (y - m) ** 2)

    for t in (0.3, BRANCH, 1.0, 2.0, 5.0):
        best = 0.0
        for _ in range(3000):
            k = int(rng.integers(2, 5))
            p = rng.dirichlet(np.ones(k) * rng.choice((0.3, 1.0, 5.0)))
            y, u = rng.choice((-1.0, 1.0, 0.0), k) * rng.choice((1.0, rng.random()), k), rng.choice((-1.0, 1.0), k)
            best = max(best, abs(f(p, y, u, int(rng.integers(k)), t * rng.choice((1.0, -1.0, rng.random())))))
        assert best <= phi(t) * (1 + 1e-12)
        P = 0.5 + 1 / (8 * t) if t >= BRANCH else 0.5  # the extremal: values +-1, attention P on +1
        u = np.array([1.0, -1.0]) if t >= BRANCH else np.array([1.0, 1.0])
        assert abs(f(np.array([P, 1 - P]), np.array([1.0, -1.0]), u, 0, t)) == pytest.approx(phi(t), rel=1e-12)


@pytest.mark.lemma12
@pytest.mark.lemma13
def test_the_suprema_of_the_ratios():
    from sltcheck.statements.lemma12 import worst_case as w12
    from sltcheck.statements.lemma13 import worst_case as w13

    alphas = np.linspace(1.0, 30.0, 300)
    r12 = [w12.ratio_supremum(float(a)) for a in alphas]
    assert np.all(np.diff(r12) > 0)
    assert r12[0] == pytest.approx(17 / 40)
    assert max(r12) < w12.SUPREMUM
    assert w12.SUPREMUM - r12[-1] < 1 / (8 * 30.0**2)  # 1/2 - O(1/alpha^2)
    r13 = [w13.ratio_supremum(float(a)) for a in alphas]
    assert np.all(np.diff(r13) < 0)
    assert r13[0] == pytest.approx(25 / 24)
    assert min(r13) > 1
    assert w13.ratio_supremum(1.0, H=2) == pytest.approx(0.875)
    assert w13.ratio_supremum(30.0, H=2) < 1
    assert w12.ratio_supremum(1.0, d_key=10**6, key_scaled=True) > 0.99  # key-scaled: -> 1 as d_K grows


@pytest.mark.parametrize(("statement", "variant", "supremum"), [("lemma13", "as-stated", 25 / 24),
                                                               ("lemma13", "as-proven", 25 / 48),
                                                               ("lemma12", "as-stated", 17 / 40)])
def test_the_extremal_family_approaches_the_supremum_from_below(statement, variant, supremum):
    """7 of 38 tokens at +alpha (the fraction nearest 5 / (3 e^2 + 5)), alpha = 1: below the supremum at every
    eps_max, within 1e-6 of it at eps_max = 1e-8 (decided at 50 digits)."""
    from sltcheck.assumptions import violations
    from sltcheck.harness import evaluate
    from sltcheck.statements.lemma12.worst_case import closest_count, two_value_instance

    assert closest_count(1.0) == (7, 38)
    ratios = []
    for eps in (1e-2, 1e-5, 1e-8):
        instance = two_value_instance(7, 38, 1.0, eps, L=1 if statement == "lemma13" else 0)
        assert not violations(statement, instance)
        ratios.append(evaluate(statement, variant, instance, dps=50).ratio)
    assert all(r < supremum for r in ratios)
    assert ratios == sorted(ratios)
    assert ratios[-1] > supremum * (1 - 1e-6)


def test_theorem14s_chain_is_tight_but_never_attained():
    """worst_case.tight_instance: measured / the as-proven chain below 1 and tending to 1 as the last block's
    source error grows (at 60 digits, and the docstring's closed form); with block 1's error below beta_2 the
    limit is (beta_2 + Delta_2) / (2 beta_2) instead."""
    from sltcheck.assumptions import violations
    from sltcheck.harness import evaluate
    from sltcheck.statements.theorem14 import worst_case as w14

    previous = 0.0
    for e_last in (1e28, 1e32, 1e40):
        instance = w14.tight_instance(1.0, 2.0, e_last)
        assert not violations("theorem14", instance)
        ratio = evaluate("theorem14", "as-proven", instance, dps=60).ratio
        assert previous < ratio < 1
        assert ratio == pytest.approx(w14.tight_ratio(1.0, 2.0, e_last), rel=1e-12)
        previous = ratio
    assert previous > 1 - 1e-12
    short = evaluate("theorem14", "as-proven", w14.tight_instance(1.0, 1.0, 1e40), dps=60).ratio
    assert short == pytest.approx((4 + 2) / 8, rel=1e-9)
