"""Theorem 9 (the deterministic chain, per achieved errors): a bracket, closed form on two slices.

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
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize

from sltcheck.statements.shared.suprema import (
    BRACKET,
    CLOSED,
    alpha_for,
    nonneg,
    positive_int,
    rank_one,
    result,
    sigmoid,
    tokens,
    unit,
)

PARAMS = ("H", "d1", "d2", "alpha", "e_qk", "e_vo")


def upper(H: int, d1: int, d2: int, alpha: float, e_qk: float, e_vo: float) -> float:
    return H * alpha * (2 * math.tanh(alpha**2 * d1 * e_qk / 2) + math.sqrt(d1 * d2) * e_vo)


def as_proven(H: int, d1: int, d2: int, alpha: float, e_qk: float, e_vo: float) -> float:
    return H * alpha * (math.sqrt(d1) * math.expm1(2 * alpha**2 * d1 * e_qk) + d1 * math.sqrt(d2) * e_vo)


def family_value(t: float, s: int, delta: float, k: float) -> float:
    """One head's value (over alpha) on the two-token family of the docstring."""
    p1, q1 = sigmoid(2 * t), sigmoid(2 * t + 2 * delta)
    return abs(2 * (p1 - q1) - s * k * (2 * q1 - 1))


def best_family_point(alpha: float, delta: float, k: float) -> tuple[float, float, int]:
    """(value, t, s) maximising ``family_value`` over |t| <= alpha^2 and s = +-1 (grid, then bounded search)."""
    best = (-1.0, 0.0, 1)
    limit = alpha**2
    for s in (1, -1):
        grid = np.linspace(-limit, limit, 401)
        values = [family_value(t, s, delta, k) for t in grid]
        t0 = float(grid[int(np.argmax(values))])
        step = 2 * limit / 400
        res = optimize.minimize_scalar(lambda t: -family_value(t, s, delta, k),  # noqa: B023
                                       bounds=(max(-limit, t0 - step), min(limit, t0 + step)), method="bounded")
        for t in (t0, float(res.x)):
            v = family_value(t, s, delta, k)
            if v > best[0]:
                best = (v, t, s)
    return best


def family_heads(H: int, d1: int, d2: int, alpha: float, e_qk: float, e_vo: float, t: float, s: int,
                 single_token: bool = False) -> tuple[Any, Any, np.ndarray]:
    """(target MHAWeights, source MHAWeights, X) of the docstring's families (every head alike)."""
    from sltcheck.model.weights import MHAWeights

    u, w = unit(d1), unit(d2)
    c = t / alpha**2
    W_Q, W_Kt = rank_one(c, u, u)  # W_Q W_K^T = c u u^T (d_K = 1)
    S_Q, S_Kt = rank_one(c + d1 * e_qk, u, u)  # source merged QK: W_QK + d1 e_qk u u^T (entries + e_qk)
    if single_token:  # value slice: target W_VO = 0, source S_VO = e_vo 1 1^T
        W_V, W_O = np.zeros((d1, 1)), np.zeros((1, d2))
        S_V, S_O = rank_one(e_vo * math.sqrt(d1 * d2), u, w)
    else:  # W_VO = u w^T; S_VO = u w^T + s e_vo 1 1^T = (1 + s e_vo sqrt(d1 d2)) u w^T
        W_V, W_O = u[:, None], w[None, :]
        S_V, S_O = rank_one(1 + s * e_vo * math.sqrt(d1 * d2), u, w)
    stack = lambda m: np.repeat(m[None], H, axis=0)  # noqa: E731
    target = MHAWeights(stack(W_Q), stack(W_Kt.T), stack(W_V), stack(W_O))
    source = MHAWeights(stack(S_Q), stack(S_Kt.T), stack(S_V), stack(S_O))
    return target, source, tokens(alpha, d1, (1,) if single_token else (1, -1))


def family_instance(H: int, d1: int, d2: int, alpha: float, e_qk: float, e_vo: float, t: float, s: int,
                    single_token: bool = False) -> dict[str, Any]:
    from sltcheck.statements import theorem9 as t9

    target, source, X = family_heads(H, d1, d2, alpha, e_qk, e_vo, t, s, single_token)
    return t9.make_instance(target, source, X, np.ones((len(X), len(X)), dtype=np.int8), alpha)


def supremum(H: int = 1, d1: int = 1, d2: int = 1, alpha: float | None = None, e_qk: float = 0.0,
             e_vo: float = 0.0) -> dict[str, Any]:
    H, d1, d2 = positive_int("H", H), positive_int("d1", d1), positive_int("d2", d2)
    alpha = alpha_for(d1, d2, alpha)
    e_qk, e_vo = nonneg("e_qk", e_qk), nonneg("e_vo", e_vo)
    delta, k = alpha**2 * d1 * e_qk, math.sqrt(d1 * d2) * e_vo
    top = upper(H, d1, d2, alpha, e_qk, e_vo)
    if e_qk == 0:
        kind, lower, inst = CLOSED, top, family_instance(H, d1, d2, alpha, 0.0, e_vo, 0.0, 1, single_token=True)
    elif e_vo == 0:
        kind, lower, inst = CLOSED, top, family_instance(H, d1, d2, alpha, e_qk, 0.0, -delta / 2, 1)
    else:
        value, t, s = best_family_point(alpha, delta, k)
        lower = H * alpha * value
        kind = CLOSED if lower >= top * (1 - 1e-12) else BRACKET
        inst = family_instance(H, d1, d2, alpha, e_qk, e_vo, t, s)
    return result("theorem9", kind, lower, top, inst, as_proven(H, d1, d2, alpha, e_qk, e_vo),
                  {"H": H, "d1": d1, "d2": d2, "alpha": alpha, "e_qk": e_qk, "e_vo": e_vo})


def upper_of_heads(target: Any, source: Any, token_bound: object, dps: int = 30) -> Any:
    """The docstring's upper bound U at an instance's achieved errors, per head (mpmath):
    sum_j a (2 tanh(a^2 ||dW_QK^(j)||_F / 2) + ||dW_VO^(j)||_F), the Frobenius norms bounding the
    spectral ones (d1 e_QK and sqrt(d1 d2) e_VO for errors of e in every entry)."""
    import mpmath

    from sltcheck.numerics import precision
    from sltcheck.statements import theorem9 as t9

    dqk, dvo, used = t9.merged_deltas(target, source, dps + 10)
    work = used or dps + 10
    with mpmath.workdps(work):
        a = mpmath.mpf(token_bound)
        frobenius = lambda m: mpmath.sqrt(mpmath.fsum(precision.to_mp(m, work).ravel() ** 2))  # noqa: E731
        total = mpmath.fsum(a * (2 * mpmath.tanh(a**2 * frobenius(dqk[j]) / 2) + frobenius(dvo[j]))
                            for j in range(target.heads))
    with mpmath.workdps(dps):
        return +total


def upper_of(instance: dict[str, Any], dps: int = 30) -> Any:
    from sltcheck.statements import theorem9 as t9

    return upper_of_heads(t9.target_of(instance), t9.source_of(instance), instance["alpha"], dps)


# The report's slack table, rows (statement, params).
SLACK_ROWS = [("theorem9", dict(H=2, d1=d1, d2=d1, e_qk=e_qk, e_vo=e_vo))
              for d1 in (1, 4) for e_qk, e_vo in ((0.0, 1e-3), (1e-3, 0.0), (1e-3, 1e-3), (1e-2, 1e-2))]
