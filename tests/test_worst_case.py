"""Closed-form suprema: attained by their extremal instances, never exceeded by others."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from sltcheck import assumptions, worst_case
from sltcheck.statements import lemma8, load
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
    sup = worst_case.supremum(name, **params)
    assert sup["kind"] == worst_case.CLOSED
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
        sup = worst_case.supremum(name, d1=d1, alpha=math.sqrt(d1), eps_max=e)
        instance = sup["instance"]
        expected = module.VARIANTS[module.DEFAULT_VARIANT](instance, 40) / module.measured(instance, 40)
        assert worst_case.slack(name, d1=d1, alpha=math.sqrt(d1), eps_max=e) == pytest.approx(float(expected),
                                                                                               rel=1e-12)


def test_slack_limits_at_small_eps():
    """As eps -> 0 (d1 = alpha = 1): Lemma 8's sqrt(d1) alpha (e^{2 eps} - 1) / (2 alpha tanh(eps / 2)) -> 2 eps / eps
    = 2 and Lemma 5's 4 sqrt(d1) alpha eps / (2 alpha tanh(eps / 2)) -> 4; at eps = 1e-6 the next terms are O(1e-6)."""
    assert worst_case.slack("lemma8", d1=1, alpha=1.0, eps_max=1e-6) == pytest.approx(2.0, rel=1e-5)
    assert worst_case.slack("lemma5", d1=1, alpha=1.0, eps_max=1e-6) == pytest.approx(4.0, rel=1e-5)


T9_CLOSED = [dict(H=1, d1=1, d2=1, e_qk=0.0, e_vo=0.01), dict(H=2, d1=2, d2=3, e_qk=0.0, e_vo=0.003),
             dict(H=2, d1=2, d2=3, e_qk=1e-3, e_vo=0.0), dict(H=1, d1=3, d2=3, alpha=2.0, e_qk=1e-4, e_vo=0.0)]


@pytest.mark.parametrize("params", T9_CLOSED)
def test_theorem9_closed_slices_attained(params):
    sup = worst_case.supremum("theorem9", **params)
    assert sup["kind"] == worst_case.CLOSED
    inst = sup["instance"]
    assert assumptions.violations("theorem9", inst) == []
    errors = t9.achieved_errors(t9.target_of(inst), t9.source_of(inst), 30)
    assert max(float(e) for e in errors["e_QK"]) <= params["e_qk"] * (1 + 1e-12) + 1e-300
    assert max(float(e) for e in errors["e_VO"]) <= params["e_vo"] * (1 + 1e-12) + 1e-300
    assert float(t9.measured(inst, 40)) == pytest.approx(sup["value"], rel=1e-12)
    assert float(t9.VARIANTS["as-proven"](inst, 40)) == pytest.approx(sup["bound"], rel=1e-9)


def test_theorem9_bracket():
    params = dict(H=1, d1=2, d2=2, e_qk=1e-3, e_vo=1e-3)
    sup = worst_case.supremum("theorem9", **params)
    assert sup["kind"] == worst_case.BRACKET and sup["lower"] < sup["upper"]
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
    upper = worst_case.supremum("theorem9", **params)["upper"]
    for _ in range(200):
        assert _t9_random_value(rng, **params) <= upper * (1 + 1e-12)


@pytest.mark.parametrize("bad", [dict(statement="theorem10"), dict(statement="lemma8", d1=0),
                                 dict(statement="lemma8", eps_max=-1.0), dict(statement="lemma5", eps_max=0.7),
                                 dict(statement="theorem9", d1=4, alpha=1.0), dict(statement="lemma8", foo=1)])
def test_bad_inputs(bad):
    with pytest.raises(ValueError):
        worst_case.supremum(**bad)


def test_slack_table():
    rows = worst_case.slack_table(searched=False)
    assert {r["statement"] for r in rows} == {"lemma8", "lemma5", "theorem9", "theorem11", "theorem14"}
    assert all(r["slack"] >= 1 - 1e-12 for r in rows)
    assert all(r["slack_range"] is None or r["slack_range"][0] <= r["slack_range"][1] for r in rows)


def test_report_renders_slack_table():
    from sltcheck.report import page as report

    rows = worst_case.slack_table(searched=False)
    built = report.build({"findings": [{"slack": rows, "findings": []}], "synthetic": [], "lm": []})
    assert len(built["slack"]) == len(rows)
    html = report.render(built)
    assert "Slack factors" in html and "closed-form" in html and "bracket" in html
    assert "Slack factors" not in report.render(report.build({"findings": [], "synthetic": [], "lm": []}))
