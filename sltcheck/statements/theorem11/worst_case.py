"""Theorem 11 (the deterministic chain of a block, per achieved errors): closed form on the slice
e_QK = 0, a bracket elsewhere.

Parameters: H, d1 (= d2), L, alpha, e_QK, e_VO (every head's max-norm errors, as for Theorem 9) and
e_FC (per FC layer l: the max-norm errors of the source pair's positive and negative parts,
max(||P_l - W_l||_max, ||N_l - W_l||_max), Theorem 10's deterministic form). The measured side is
max_i ||Blk_S(x_i) - Blk_T(x_i)|| over targets with spectral norms <= 1 (attention and FC layers),
sources with those errors (FC pairs of Pensia's single-input form), tokens with ||x_k|| <= alpha, any mask.

Upper bound (proved). With delta_l = d1 e_FC,l and U_9 = H alpha (2 tanh(alpha^2 d1 e_QK / 2) + d1 e_VO)
(:mod:`sltcheck.statements.theorem9.worst_case`, d2 = d1):

    U_11 = r (prod_l (1 + delta_l) - 1) + 2 U_9,    r = alpha (H + 1) + U_9.

Write z = Attn_T(x)^T + x, z' = Attn_S(x)^T + x. Then Blk_S - Blk_T = [F_S(z') - F_T(z')] + [F_T(z') - F_T(z)]
+ (z' - z). ||z' - z|| <= U_9 (Theorem 9's bound); F_T is 1-Lipschitz; and ||z'|| <= ||Attn_T(x)|| + U_9 +
alpha <= r, because ||Attn_T(x)|| <= sum_j ||p X|| ||W_VO^(j)|| <= H alpha (the proof's Eq. 19 has
alpha H sqrt(d1): ||p X|| <= alpha is enough). The FC term: a source pair computes
P ReLU(h) - N ReLU(-h) and the target W h = W ReLU(h) - W ReLU(-h), so their difference has entries
<= e_l ||h||_1 <= e_l sqrt(d1) ||h|| and norm <= delta_l ||h||; with g_l the gap after l layers,
g_{l+1} <= ||W_l|| g_l + delta_l (||h_l|| + g_l), ReLU being 1-Lipschitz, hence
||F_S(z') - F_T(z')|| <= r (prod (1 + delta_l) - 1).

Attainment on e_QK = 0 (closed form). One token x = alpha u (u = 1/sqrt(d1) in every entry), every head
W_VO = u u^T and S_VO = u u^T + e_VO 1 1^T (S_QK = W_QK + e_QK 1 1^T is irrelevant with one token), FC
layers W_l = u u^T and source pairs with P_l = W_l + e_FC,l 1 1^T, N_l = W_l (A_1 = [I; -I], A_2 = [P, -N]).
Everything stays on the ray of u, where each ReLU is the identity: z = alpha (H + 1) u,
z' = (alpha (H + 1) + U_9) u = r u, F_T(z) = z, F_S(z') = prod (1 + delta_l) z', so
Blk_S - Blk_T = (prod (1 + delta_l) - 1) z' + 2 (z' - z), of norm U_11. Hence sup = U_11 when e_QK = 0.

With e_QK > 0 the lower end is the best of that instance and Theorem 9's two-token family (tokens +-alpha u,
target logit offset t, value error sign s) completed by the same FC layers with error sign +-1, over a grid
of t; the upper end is U_11.

Slack of the default (as-proven) bound: FC term r_19 (prod (1 + delta_l) - 1) with
r_19 = max(3 alpha H sqrt(d1), A + alpha (H sqrt(d1) + 1)) and A Theorem 9's as-proven chain, plus 2 A.
On e_QK = e_FC = 0 the slack is sqrt(d1) exactly (2 A / 2 U_9); with FC errors it approaches
r_19 / r -> 3 H sqrt(d1) / (H + 1) as e_FC dominates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sltcheck.statements.shared.suprema import BRACKET, CLOSED, alpha_for, nonneg, positive_int, rank_one, result, unit
from sltcheck.statements.theorem9 import worst_case as w9

PARAMS = ("H", "d1", "L", "alpha", "e_qk", "e_vo", "e_fc")


def fc_errors(L: int, e_fc: float | Sequence[float]) -> list[float]:
    values = [e_fc] * L if isinstance(e_fc, (int, float, np.floating)) else list(e_fc)
    if len(values) != L:
        raise ValueError(f"e_fc must be a number or a sequence of L = {L} numbers, got {e_fc!r}")
    return [nonneg("e_fc", v) for v in values]


def fc_growth(d1: int, e_fc: Sequence[float]) -> float:
    """prod_l (1 + delta_l) - 1 with delta_l = d1 e_FC,l."""
    return math.prod(1 + d1 * e for e in e_fc) - 1


def upper(H: int, d1: int, alpha: float, e_qk: float, e_vo: float, e_fc: Sequence[float]) -> float:
    u9 = w9.upper(H, d1, d1, alpha, e_qk, e_vo)
    return (alpha * (H + 1) + u9) * fc_growth(d1, e_fc) + 2 * u9


def block_upper(target: Any, source: Any, token_bound: object, dps: int = 30) -> Any:
    """U_11 at a block's achieved errors (mpmath): the FC term by ``theorem11.fc_bound`` in its
    as-proven (Pensia) form, which is the recursion of the docstring, at r = a (H + 1) + U_9."""
    import mpmath

    from sltcheck.statements import theorem11 as t11

    with mpmath.workdps(dps + 10):
        u9 = w9.upper_of_heads(target.attention, source.attention, token_bound, dps + 10)
        r = mpmath.mpf(token_bound) * (target.attention.heads + 1) + u9
        total = t11.fc_bound(target.fc, source.fc, r, dps + 10) + 2 * u9
    with mpmath.workdps(dps):
        return +total


def upper_of(instance: dict[str, Any], dps: int = 30) -> Any:
    from sltcheck.statements import theorem11 as t11

    return block_upper(t11.target_of(instance), t11.source_of(instance), instance["alpha"], dps)


def single_input_pair(W: np.ndarray, P: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A_1, A_2) with A_2 ReLU(A_1 h) = P ReLU(h) - N ReLU(-h): one unit per input and sign."""
    d = W.shape[1]
    return np.vstack([np.eye(d), -np.eye(d)]), np.hstack([P, -N])


def ray_fc(d1: int, e_fc: Sequence[float], sign: int = 1) -> tuple[Any, Any]:
    """Target layers u u^T and source pairs with P = W + sign e 1 1^T, N = W (the docstring's FC)."""
    from sltcheck.model.weights import FCWeights

    u = unit(d1)
    W = np.outer(u, u)
    target: list[np.ndarray] = []
    source: list[np.ndarray] = []
    for e in e_fc:
        target.append(W)
        source.extend(single_input_pair(W, W + sign * e * np.ones((d1, d1)), W))
    return FCWeights(tuple(target)), FCWeights(tuple(source))


def ray_attention(H: int, d1: int, e_qk: float, e_vo: float) -> tuple[Any, Any]:
    """One-token attention: W_VO = u u^T, S_VO = W_VO + e_VO 1 1^T, S_QK = W_QK + e_QK 1 1^T (W_QK = 0)."""
    from sltcheck.model.weights import MHAWeights

    u = unit(d1)
    stack = lambda m: np.repeat(m[None], H, axis=0)  # noqa: E731
    zero_q, zero_k = np.zeros((d1, 1)), np.zeros((1, d1))
    S_Q, S_Kt = rank_one(d1 * e_qk, u, u)
    S_V, S_O = rank_one(1 + d1 * e_vo, u, u)
    target = MHAWeights(stack(zero_q), stack(zero_k.T), stack(u[:, None]), stack(u[None, :]))
    source = MHAWeights(stack(S_Q), stack(S_Kt.T), stack(S_V), stack(S_O))
    return target, source


def ray_instance(H: int, d1: int, alpha: float, e_qk: float, e_vo: float, e_fc: Sequence[float]) -> dict[str, Any]:
    from sltcheck.model.weights import BlockWeights
    from sltcheck.statements import theorem11 as t11
    from sltcheck.statements.shared.suprema import tokens

    (t_attn, s_attn), (t_fc, s_fc) = ray_attention(H, d1, e_qk, e_vo), ray_fc(d1, e_fc)
    X = tokens(alpha, d1, (1,))
    return t11.make_instance(BlockWeights(t_attn, t_fc), BlockWeights(s_attn, s_fc), X,
                             np.ones((1, 1), dtype=np.int8), alpha)


def two_token_instances(H: int, d1: int, alpha: float, e_qk: float, e_vo: float,
                        e_fc: Sequence[float]) -> list[dict[str, Any]]:
    from sltcheck.model.weights import BlockWeights
    from sltcheck.statements import theorem11 as t11

    out = []
    for t in np.linspace(-alpha**2, alpha**2, 41):
        for s in (1, -1):
            target, source, X = w9.family_heads(H, d1, d1, alpha, e_qk, e_vo, float(t), s)
            for sign in (1, -1):
                t_fc, s_fc = ray_fc(d1, e_fc, sign)
                out.append(t11.make_instance(BlockWeights(target, t_fc), BlockWeights(source, s_fc), X,
                                             np.ones((2, 2), dtype=np.int8), alpha))
    return out


def supremum(H: int = 1, d1: int = 1, L: int = 1, alpha: float | None = None, e_qk: float = 0.0,
             e_vo: float = 0.0, e_fc: float | Sequence[float] = 0.0) -> dict[str, Any]:
    from sltcheck import assumptions
    from sltcheck.statements import theorem11 as t11

    H, d1, L = positive_int("H", H), positive_int("d1", d1), positive_int("L", L)
    alpha = alpha_for(d1, d1, alpha)
    e_qk, e_vo, errors = nonneg("e_qk", e_qk), nonneg("e_vo", e_vo), fc_errors(L, e_fc)
    nominal = upper(H, d1, alpha, e_qk, e_vo, errors)
    candidates = [ray_instance(H, d1, alpha, e_qk, e_vo, errors)]
    if e_qk > 0:
        candidates += two_token_instances(H, d1, alpha, e_qk, e_vo, errors)
    instance = max(candidates, key=lambda i: float(t11.measured(i, None)))
    assumptions.require("theorem11", instance)
    lower = float(t11.measured(instance, 30))
    kind = CLOSED if e_qk == 0 else BRACKET
    # the bound and the upper end at the instance's achieved errors (rounding moves them off the
    # nominal ones by ulps), so that the slack compares like with like
    bound = float(t11.VARIANTS[t11.DEFAULT_VARIANT](instance, 30))
    top = float(upper_of(instance))
    out = result("theorem11", kind, lower, top, instance, bound,
                 {"H": H, "d1": d1, "L": L, "alpha": alpha, "e_qk": e_qk, "e_vo": e_vo, "e_fc": errors})
    out["nominal_upper"] = nominal
    return out


# The report's slack table, rows (statement, params).
SLACK_ROWS = [("theorem11", dict(H=2, d1=d1, L=2, e_qk=e_qk, e_vo=e_vo, e_fc=e_fc))
              for d1 in (1, 2) for e_qk, e_vo, e_fc in ((0.0, 1e-3, 0.0), (0.0, 1e-3, 1e-3), (1e-3, 1e-3, 1e-3))]
