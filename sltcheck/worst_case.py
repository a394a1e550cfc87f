"""Exact worst cases of the deterministic bounds, and the paper's slack factors.

``supremum(statement, **params)`` returns the supremum of a statement's measured side over
everything its assumptions allow (given the parameters its bound depends on), an extremal
instance (a dict usable by ``sltcheck.statements.<statement>.measured``), and how the value
is known: "closed-form" (derived and proved below, attained by the instance), or "bracket"
(a certified upper bound, proved below, with the best instance found as a lower bound).
``slack(statement, **params)`` is bound / supremum (for a bracket: the range).

Lemma 8 (and Lemma 5, its main-text form): closed form
------------------------------------------------------
Claim. For X with ||x_k|| <= alpha, any mask row with at least two attended tokens, any
logits l and perturbations with ||eps||_max <= e:

    sup ||(sigma(l; a) - sigma(l + eps; a)) X|| = 2 alpha tanh(e / 2),

attained (not only approached), for every d1 >= 1 and T >= 2. (With a single attended token
the left side is 0.)

Proof. Write p = sigma(l; a), p' = sigma(l + eps; a) (probability vectors on the attended
set). (i) Reduction to total variation: sum_k (p_k - p'_k) = 0, so
||sum_k (p_k - p'_k) x_k|| <= sum_k |p_k - p'_k| ||x_k|| <= alpha ||p - p'||_1, with equality
for x_k = alpha u sign(p_k - p'_k) (u a unit vector). (ii) ||p - p'||_1 = 2 (p'(S) - p(S))
for S = {k : p'_k > p_k}. With s = p(S), A = sum_{k in S} p_k e^{eps_k} <= s e^e and
B = sum_{k notin S} p_k e^{eps_k} >= (1 - s) e^{-e}, p'(S) = A / (A + B) is increasing in A and
decreasing in B, so p'(S) <= s r / (s r + 1 - s) with r = e^{2e}. (iii) g(s) = s r / (1 + s (r - 1)) - s
is concave on [0, 1] with g'(s) = r / (1 + s (r - 1))^2 - 1 = 0 at 1 + s (r - 1) = sqrt(r), i.e.
s* = 1 / (1 + e^e), where g(s*) = s* (e^e - 1) = (e^e - 1) / (e^e + 1) = tanh(e / 2). Hence
||p - p'||_1 <= 2 tanh(e / 2) and the claim's upper bound. (iv) Attainment: two tokens x_1 = alpha u,
x_2 = -alpha u, logits (0, e) (so p_1 = 1 / (1 + e^e) = s*), perturbation (+e, -e): p'_1 = e^e / (e^e + 1),
p'_1 - p_1 = tanh(e / 2), and (p - p') X = 2 (p_1 - p'_1) alpha u has norm 2 alpha tanh(e / 2). []

Slack. Lemma 8's bound sqrt(d1) alpha (e^{2e} - 1) over the supremum:
    slack_8(d1, e) = sqrt(d1) (e^{2e} - 1) / (2 tanh(e / 2)),
independent of alpha, -> 2 sqrt(d1) as e -> 0, increasing in e (e.g. 2.07 sqrt(d1) at e = 0.01, 2.75 sqrt(d1) at
e = 0.25, 4.48 sqrt(d1) at e = 1/2). Lemma 5's bound 4 sqrt(d1) alpha e (e <= 1/2):
slack_5 = 2 sqrt(d1) e / tanh(e / 2) -> 4 sqrt(d1) as e -> 0 (4.04 sqrt(d1) at e = 1/2).

Theorem 9 (deterministic chain, per achieved errors): bracket, closed form on two slices
------------------------------------------------------------------------------------------
Parameters: H, d1, d2, alpha (>= max(sqrt d1, sqrt d2)), e_QK, e_VO (the max-norm errors of
every head's merged matrices, Eqs. 14, 15). The measured side is max_i ||Attn_S(x_i) - Attn_T(x_i)||
over targets with spectral norms <= 1, any source with those achieved errors, tokens with
||x_k|| <= alpha and any mask.

Upper bound (proved). Per head, with dQK, dVO the merged differences and p, p' the target
and source attention rows: ||p X W_VO - p' X S_VO|| <= ||(p - p') X|| ||W_VO|| + ||p' X|| ||dVO||.
The logits differ by |x_i^T dQK x_k| <= alpha^2 ||dQK|| <= alpha^2 d1 e_QK =: delta, so by the
Lemma 8 supremum ||(p - p') X|| <= 2 alpha tanh(delta / 2); ||W_VO|| <= ||W_V|| ||W_O|| <= 1;
||p' X|| <= alpha (a convex combination of tokens); ||dVO|| <= ||dVO||_F <= sqrt(d1 d2) e_VO. Summing
over heads:  U = H alpha (2 tanh(alpha^2 d1 e_QK / 2) + sqrt(d1 d2) e_VO).

Attainment. With e_QK = 0 (value slice) U = H alpha sqrt(d1 d2) e_VO is attained (one token
alpha u, u = 1/sqrt(d1), target W_V = W_O = 0 and source S_VO = e_VO 1 1^T in every head); with
e_VO = 0 (softmax slice) U = 2 H alpha tanh(alpha^2 d1 e_QK / 2) is attained (tokens +-alpha u,
W_QK = -(d1 e_QK / 2) u u^T, S_QK = W_QK + d1 e_QK u u^T, W_VO = S_VO = u w^T with w = 1/sqrt(d2)),
since the logit perturbations are then +-delta and the rows are at Lemma 8's extremal point.
Both slices are closed forms. With both errors positive the two maximisers conflict (the
softmax term wants p_1 = 1/(1 + e^delta), the value term a point mass); the lower bound is the
best instance of the family "tokens +-alpha u, W_QK = (t/alpha^2) u u^T (|t| <= alpha^2 so that
||W_QK|| <= 1), W_VO = u w^T, S_VO = W_VO + s e_VO 1 1^T", whose value
H alpha |2 (sigma(2t) - sigma(2t + 2 delta)) - s sqrt(d1 d2) e_VO (2 sigma(2t + 2 delta) - 1)|
is maximised over t and s = +-1 (scipy), so the bracket is [that, U].

Slack of the default (``as-proven``) bound H alpha (sqrt(d1) (e^{2 alpha^2 d1 e_QK} - 1) + d1 sqrt(d2) e_VO):
value slice sqrt(d1) exactly; softmax slice sqrt(d1) (e^{2 delta} - 1) / (2 tanh(delta / 2)) = slack_8(d1, delta)
(-> 2 sqrt(d1) for small delta, and delta = alpha^2 d1 e_QK grows with alpha).

Not derived here: Lemmas 12 and 13, Theorems 11 and 14 (their chains compose the above
with the FC and residual paths; no closed form is claimed and no search is run).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import optimize

CLOSED = "closed-form"
BRACKET = "bracket"
STATEMENTS = ("lemma5", "lemma8", "theorem9")


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _nonneg(name: str, value: object, upper: float | None = None) -> float:
    allowed = f"in [0, {upper}]" if upper is not None else ">= 0"
    if not isinstance(value, (int, float, np.floating)) or isinstance(value, bool):
        raise ValueError(f"{name} must be a finite number {allowed}, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < 0 or (upper is not None and number > upper):
        raise ValueError(f"{name} must be a finite number {allowed}, got {value!r}")
    return number


def _sigmoid(x: float) -> float:
    return 0.5 * (1 + math.tanh(x / 2))


def _unit(d: int) -> np.ndarray:
    """1/sqrt(d) in every entry, shrunk by ulps until its norm is <= 1 exactly (in rationals)."""
    u = np.full(d, 1 / math.sqrt(d))
    while sum(Fraction(float(x)) ** 2 for x in u) > 1:
        u = u * (1 - 2.0**-52)
    return u


def _least_alpha(d1: int, d2: int) -> float:
    """The smallest float64 alpha with alpha >= max(sqrt d1, sqrt d2) exactly."""
    m = max(d1, d2)
    alpha = math.sqrt(m)
    while Fraction(alpha) ** 2 < m:
        alpha = math.nextafter(alpha, math.inf)
    return alpha


def _tokens(alpha: float, d1: int, signs: tuple[int, ...]) -> np.ndarray:
    """Tokens sign * alpha u, shrunk by ulps until every float64 norm is <= alpha exactly."""
    from sltcheck import precision

    X = np.array([s * alpha * _unit(d1) for s in signs])
    for _ in range(8):
        with precision.working_precision(60):
            norms = precision.vector_norm(precision.to_mp(X, 60), axis=-1)
            import mpmath

            if max(norms) <= mpmath.mpf(alpha):
                return X
        X = X * (1 - 2.0**-52)
    return X


# --- Lemma 8 / Lemma 5 ----------------------------------------------------------------------------


def lemma8_supremum_value(alpha: float, eps_max: float) -> float:
    return 2 * alpha * math.tanh(eps_max / 2)


def lemma8_instance(d1: int, alpha: float, eps_max: float) -> dict[str, Any]:
    X = _tokens(alpha, d1, (1, -1))
    logits = np.array([[0.0, eps_max], [0.0, eps_max]])
    pert = np.array([[eps_max, -eps_max], [eps_max, -eps_max]])
    return {"alpha": float(alpha), "d1": d1, "X": X, "logits": logits, "mask": np.ones((2, 2), dtype=np.int8),
            "perturbation": pert, "eps_max": float(eps_max)}


def _lemma(statement: str, d1: int = 1, alpha: float = 1.0, eps_max: float = 0.1) -> dict[str, Any]:
    d1 = _positive_int("d1", d1)
    alpha = _nonneg("alpha", alpha)
    eps_max = _nonneg("eps_max", eps_max, 0.5 if statement == "lemma5" else None)
    value = lemma8_supremum_value(alpha, eps_max)
    if statement == "lemma5":
        bound = 4 * math.sqrt(d1) * alpha * eps_max
    else:
        bound = math.sqrt(d1) * alpha * math.expm1(2 * eps_max)
    return {"statement": statement, "kind": CLOSED, "value": value, "lower": value, "upper": value,
            "instance": lemma8_instance(d1, alpha, eps_max), "measured_by": "lemma8",
            "bound": bound, "slack": bound / value if value > 0 else float("nan"),
            "params": {"d1": d1, "alpha": alpha, "eps_max": eps_max}}


# --- Theorem 9 ------------------------------------------------------------------------------------


def theorem9_upper(H: int, d1: int, d2: int, alpha: float, e_qk: float, e_vo: float) -> float:
    return H * alpha * (2 * math.tanh(alpha**2 * d1 * e_qk / 2) + math.sqrt(d1 * d2) * e_vo)


def theorem9_as_proven(H: int, d1: int, d2: int, alpha: float, e_qk: float, e_vo: float) -> float:
    return H * alpha * (math.sqrt(d1) * math.expm1(2 * alpha**2 * d1 * e_qk) + d1 * math.sqrt(d2) * e_vo)


def _family_value(t: float, s: int, delta: float, k: float) -> float:
    p1, q1 = _sigmoid(2 * t), _sigmoid(2 * t + 2 * delta)
    return abs(2 * (p1 - q1) - s * k * (2 * q1 - 1))


def _rank_one(matrix_scale: float, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) with A (d, 1), B (1, d') and A @ B = matrix_scale * left right^T."""
    root = math.sqrt(abs(matrix_scale))
    return root * left[:, None], (math.copysign(root, matrix_scale) if matrix_scale else 0.0) * right[None, :]


def theorem9_instance(H: int, d1: int, d2: int, alpha: float, e_qk: float, e_vo: float, t: float, s: int,
                      single_token: bool = False) -> dict[str, Any]:
    from sltcheck.statements import theorem9 as t9
    from sltcheck.weights import MHAWeights

    u, w = _unit(d1), _unit(d2)
    c = t / alpha**2
    W_Q, W_Kt = _rank_one(c, u, u)  # W_Q W_K^T = c u u^T (d_K = 1)
    S_Q, S_Kt = _rank_one(c + d1 * e_qk, u, u)  # source merged QK: W_QK + d1 e_qk u u^T (entries + e_qk)
    if single_token:  # value slice: target W_VO = 0, source S_VO = e_vo 1 1^T
        W_V, W_O = np.zeros((d1, 1)), np.zeros((1, d2))
        S_V, S_O = _rank_one(e_vo * math.sqrt(d1 * d2), u, w)
    else:  # W_VO = u w^T; S_VO = u w^T + s e_vo 1 1^T = (1 + s e_vo sqrt(d1 d2)) u w^T
        W_V, W_O = u[:, None], w[None, :]
        S_V, S_O = _rank_one(1 + s * e_vo * math.sqrt(d1 * d2), u, w)
    stack = lambda m: np.repeat(m[None], H, axis=0)  # noqa: E731
    target = MHAWeights(stack(W_Q), stack(W_Kt.T), stack(W_V), stack(W_O))
    source = MHAWeights(stack(S_Q), stack(S_Kt.T), stack(S_V), stack(S_O))
    X = _tokens(alpha, d1, (1,) if single_token else (1, -1))
    mask = np.ones((len(X), len(X)), dtype=np.int8)
    return t9.make_instance(target, source, X, mask, alpha)


def _theorem9(H: int = 1, d1: int = 1, d2: int = 1, alpha: float | None = None, e_qk: float = 0.0,
              e_vo: float = 0.0) -> dict[str, Any]:
    H, d1, d2 = _positive_int("H", H), _positive_int("d1", d1), _positive_int("d2", d2)
    least = _least_alpha(d1, d2)
    alpha = least if alpha is None else _nonneg("alpha", alpha)
    if Fraction(alpha) ** 2 < max(d1, d2):
        raise ValueError(f"alpha must be >= max(sqrt(d1), sqrt(d2)) = {least:.6g}, got {alpha!r}")
    e_qk, e_vo = _nonneg("e_qk", e_qk), _nonneg("e_vo", e_vo)
    delta, k = alpha**2 * d1 * e_qk, math.sqrt(d1 * d2) * e_vo
    upper = theorem9_upper(H, d1, d2, alpha, e_qk, e_vo)
    if e_qk == 0:
        kind, lower, inst = CLOSED, upper, theorem9_instance(H, d1, d2, alpha, 0.0, e_vo, 0.0, 1, single_token=True)
    elif e_vo == 0:
        kind, lower, inst = CLOSED, upper, theorem9_instance(H, d1, d2, alpha, e_qk, 0.0, -delta / 2, 1)
    else:
        best = (-1.0, 0.0, 1)
        limit = alpha**2
        for s in (1, -1):
            grid = np.linspace(-limit, limit, 401)
            values = [_family_value(t, s, delta, k) for t in grid]
            t0 = float(grid[int(np.argmax(values))])
            step = 2 * limit / 400
            res = optimize.minimize_scalar(lambda t: -_family_value(t, s, delta, k),  # noqa: B023
                                           bounds=(max(-limit, t0 - step), min(limit, t0 + step)), method="bounded")
            for t in (t0, float(res.x)):
                v = _family_value(t, s, delta, k)
                if v > best[0]:
                    best = (v, t, s)
        lower = H * alpha * best[0]
        kind = BRACKET
        inst = theorem9_instance(H, d1, d2, alpha, e_qk, e_vo, best[1], best[2])
        if lower >= upper * (1 - 1e-12):
            kind = CLOSED
    bound = theorem9_as_proven(H, d1, d2, alpha, e_qk, e_vo)
    value = upper if kind == CLOSED else lower
    return {"statement": "theorem9", "kind": kind, "value": value, "lower": lower, "upper": upper,
            "instance": inst, "measured_by": "theorem9", "bound": bound,
            "slack": bound / upper if upper > 0 else float("nan"),
            "slack_range": [bound / upper, bound / lower] if lower > 0 else None,
            "params": {"H": H, "d1": d1, "d2": d2, "alpha": alpha, "e_qk": e_qk, "e_vo": e_vo}}


# --- public ---------------------------------------------------------------------------------------


def supremum(statement: str, **params: Any) -> dict[str, Any]:
    """The supremum of ``statement``'s measured side (see the module docstring).

    Returns value, lower, upper, kind ("closed-form" or "bracket"), instance (evaluate it with
    ``sltcheck.statements.<measured_by>.measured``), bound (the default variant's bound at
    these parameters) and slack (bound / upper; for a bracket also slack_range).
    lemma5/lemma8 take d1, alpha, eps_max; theorem9 takes H, d1, d2, alpha, e_qk, e_vo.
    """
    if statement in ("lemma5", "lemma8"):
        unknown = set(params) - {"d1", "alpha", "eps_max"}
        if unknown:
            raise ValueError(f"params for {statement} are d1, alpha, eps_max; got unknown {sorted(unknown)}")
        return _lemma(statement, **params)
    if statement == "theorem9":
        unknown = set(params) - {"H", "d1", "d2", "alpha", "e_qk", "e_vo"}
        if unknown:
            raise ValueError(f"params for theorem9 are H, d1, d2, alpha, e_qk, e_vo; got unknown {sorted(unknown)}")
        return _theorem9(**params)
    raise ValueError(f"statement must be one of {', '.join(STATEMENTS)} (worst cases derived here), got {statement!r}")


def slack(statement: str, **params: Any) -> float:
    return float(supremum(statement, **params)["slack"])


def slack_table() -> list[dict[str, Any]]:
    """Slack factors over a grid of parameters (for the report's "Slack factors" table)."""
    rows = []
    for d1 in (1, 4, 16):
        for eps in (1e-3, 0.1, 0.5):
            for name in ("lemma8", "lemma5"):
                r = supremum(name, d1=d1, alpha=math.sqrt(d1), eps_max=eps)
                rows.append({"statement": name, "params": r["params"], "kind": r["kind"], "supremum": r["value"],
                             "bound": r["bound"], "slack": r["slack"]})
    for d1 in (1, 4):
        for e_qk, e_vo in ((0.0, 1e-3), (1e-3, 0.0), (1e-3, 1e-3), (1e-2, 1e-2)):
            r = supremum("theorem9", H=2, d1=d1, d2=d1, e_qk=e_qk, e_vo=e_vo)
            rows.append({"statement": "theorem9", "params": r["params"], "kind": r["kind"], "supremum": r["upper"],
                         "lower": r["lower"], "bound": r["bound"], "slack": r["slack"],
                         "slack_range": r["slack_range"]})
    return rows
