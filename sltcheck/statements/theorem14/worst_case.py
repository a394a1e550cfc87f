"""Theorem 14 (the deterministic chain of a B-block transformer, per achieved errors): a bracket.

Parameters: those of Theorem 11 (the same errors in every block) and B >= 2. The measured side is
max_i ||Tf_S(x_i) - Tf_T(x_i)|| over targets and sources as in Theorem 11, block by block.

Upper bound (proved). With beta_1 = alpha, beta_{b+1} = 2 (H + 1) beta_b (a bound on the b-th target
block's input: ||Blk_T(x)|| <= 2 ||z|| <= 2 (H beta + beta)), Delta_1 = 0 and

    Delta_{b+1} = 2 (H (2 beta_b tanh(beta_b Delta_b + Delta_b^2 / 2) + Delta_b) + Delta_b) + U_11(beta_b + Delta_b),

sup <= Delta_{B+1}, with U_11(a) the bound of :mod:`sltcheck.statements.theorem11.worst_case` at token bound a.
Proof: as in the paper (Eqs. 20-28),
Delta_{b+1} <= ||Blk_T(x^(b)) - Blk_T(x'^(b))|| + ||Blk_T(x'^(b)) - Blk_S(x'^(b))||.
The second term is Theorem 11's, for source inputs of norm <= beta_b + Delta_b. The first is Lemma 13's
for inputs x (norm <= beta) and x' (norm <= beta + Delta, not beta: the gap noted in
:mod:`sltcheck.statements.theorem14`): the logits move by |x_i^T W (x_k - x'_k)| + |(x_i - x'_i)^T W x'_k|
<= beta Delta + Delta (beta + Delta), so Lemma 8's supremum gives
||(p - p') X|| <= 2 beta tanh(beta Delta + Delta^2 / 2) (tokens X of the target side, norm <= beta),
||p' (X - X')|| <= Delta, and the block doubles the residual's change (as in lemma13's worst case).

Lower bound (the best of two structured families; errors at most the given ones).

- A ray: every block is Theorem 11's one-token extremal block (W_VO = u u^T, FC layers u u^T,
  source errors along 1 1^T): the network acts on the ray of u, block b multiplying the target by
  c = 2 (H + 1) (so beta_b is attained) and the source by c' = (1 + prod (1 + delta_l)) (1 + H (1 + d1 e_VO)),
  and the measured side is alpha (c'^B - c^B). It realises the growth of the errors through the blocks
  but not the softmax term of the Lipschitz step (one token has no attention to move).
- A swap chain (d1 >= 2, only e_VO used): tokens +-alpha e_1; block 1 attends mostly to itself
  (W_Q = W_K = I, d_K = 2) with W_VO = I and S_VO = I + e_VO e_1 e_2^T, so the two tokens leave it
  moved by opposite multiples of e_2 (tangent to their ray); the later blocks are Lemma 12's swap
  construction (:mod:`sltcheck.statements.lemma12.worst_case`: W_K the swap of e_1, e_2, so row 1 sits at p = (1/2, 1/2)
  and its logits move by +-2 beta Delta / sqrt 2), FC layers the identity. This is the softmax term at
  work: at B = 2 it reaches 4 to 13 times the ray's value, about a quarter of the upper end.

The upper end's beta_b assumes the target grows by 2 (H + 1) per block and the softmax term at that
beta_b at once; no instance here does both, so the bracket stays wide for B >= 3 (ratio ~1e-3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sltcheck.statements.theorem11 import worst_case as w11
from sltcheck.worst_case._common import BRACKET, alpha_for, nonneg, positive_int, result, tokens
from sltcheck.worst_case._search import INSIDE, pad

PARAMS = ("H", "d1", "L", "B", "alpha", "e_qk", "e_vo", "e_fc")


def block_lipschitz(H: int, beta: float, delta: float) -> float:
    """sup ||Blk_T(x) - Blk_T(x')|| for ||x|| <= beta, ||x'|| <= beta + delta, ||x - x'|| <= delta."""
    return 2 * (H * (2 * beta * math.tanh(beta * delta + delta**2 / 2) + delta) + delta)


def upper(H: int, d1: int, B: int, alpha: float, e_qk: float, e_vo: float, e_fc: Sequence[float]) -> float:
    beta, delta = alpha, 0.0
    for _ in range(B):
        delta = block_lipschitz(H, beta, delta) + w11.upper(H, d1, beta + delta, e_qk, e_vo, e_fc)
        beta = 2 * (H + 1) * beta
    return delta


def upper_of(instance: dict[str, Any], dps: int = 30) -> Any:
    """The recursion at an instance's achieved errors, block by block (mpmath)."""
    import mpmath

    from sltcheck.statements import theorem14 as t14

    target, source = t14.target_of(instance), t14.source_of(instance)
    H = target.blocks[0].attention.heads
    with mpmath.workdps(dps + 10):
        beta, delta = mpmath.mpf(instance["alpha"]), mpmath.mpf(0)
        for t_block, s_block in zip(target.blocks, source.blocks, strict=True):
            lipschitz = 2 * (H * (2 * beta * mpmath.tanh(beta * delta + delta**2 / 2) + delta) + delta)
            delta = lipschitz + w11.block_upper(t_block, s_block, beta + delta, dps + 10)
            beta = 2 * (H + 1) * beta
    with mpmath.workdps(dps):
        return +delta


def ray_instance(H: int, d1: int, B: int, alpha: float, e_qk: float, e_vo: float,
                 e_fc: Sequence[float]) -> dict[str, Any]:
    from sltcheck.model.weights import BlockWeights, TransformerWeights
    from sltcheck.statements import theorem14 as t14

    (t_attn, s_attn), (t_fc, s_fc) = w11.ray_attention(H, d1, e_qk, e_vo), w11.ray_fc(d1, e_fc)
    target = TransformerWeights(tuple(BlockWeights(t_attn, t_fc) for _ in range(B)))
    source = TransformerWeights(tuple(BlockWeights(s_attn, s_fc) for _ in range(B)))
    return t14.make_instance(target, source, tokens(alpha, d1, (1,)), np.ones((1, 1), dtype=np.int8), alpha)


def swap_instance(H: int, d1: int, L: int, B: int, alpha: float, e_vo: float, sign: int = 1,
                  later: str = "swap", self_attention: float = 1.0) -> dict[str, Any]:
    """The docstring's swap chain (d1 >= 2): blocks after the first use the swap keys ("swap") or
    self-attention ("self"); ``sign`` flips their value error, ``self_attention`` scales block 1's W_Q."""
    from sltcheck.model.weights import BlockWeights, FCWeights, MHAWeights, TransformerWeights
    from sltcheck.statements import theorem14 as t14

    identity, swap = np.eye(2) * INSIDE, np.array([[0.0, 1.0], [1.0, 0.0]]) * INSIDE
    error = np.zeros((2, 2))
    error[0, 1] = e_vo
    heads = lambda m, rows, cols: np.repeat(pad(m, rows, cols)[None], H, axis=0)  # noqa: E731
    W = pad(identity, d1, d1)
    target_fc = FCWeights(tuple(W for _ in range(L)))
    source_fc = FCWeights(tuple(m for _ in range(L) for m in w11.single_input_pair(W, W, W)))
    targets, sources = [], []
    for b in range(B):
        W_Q, W_K = (identity * self_attention, identity) if b == 0 or later == "self" else (identity, swap)
        S_V, S_O = np.hstack([identity, np.eye(2)]), np.vstack([identity, (sign if b else 1) * error])
        q, k = heads(W_Q, d1, 2), heads(W_K, d1, 2)
        targets.append(BlockWeights(MHAWeights(q, k, heads(identity, d1, 2), heads(identity, 2, d1)), target_fc))
        sources.append(BlockWeights(MHAWeights(q, k, heads(S_V, d1, 4), heads(S_O, 4, d1)), source_fc))
    X = np.zeros((2, d1))
    X[0, 0], X[1, 0] = alpha * INSIDE, -alpha * INSIDE
    return t14.make_instance(TransformerWeights(tuple(targets)), TransformerWeights(tuple(sources)), X,
                             np.ones((2, 2), dtype=np.int8), alpha)


def supremum(H: int = 1, d1: int = 1, L: int = 1, B: int = 2, alpha: float | None = None, e_qk: float = 0.0,
             e_vo: float = 0.0, e_fc: float | Sequence[float] = 0.0) -> dict[str, Any]:
    from sltcheck import assumptions
    from sltcheck.statements import theorem14 as t14

    H, d1, L, B = (positive_int(k, v) for k, v in (("H", H), ("d1", d1), ("L", L), ("B", B)))
    if B < 2:
        raise ValueError(f"B must be an integer >= 2 (Theorem 14 assumes B >= 2), got {B!r}")
    alpha = alpha_for(d1, d1, alpha)
    e_qk, e_vo, errors = nonneg("e_qk", e_qk), nonneg("e_vo", e_vo), w11.fc_errors(L, e_fc)
    ray = ray_instance(H, d1, B, alpha, e_qk, e_vo, errors)
    candidates = [ray]
    if d1 >= 2 and e_vo > 0:
        candidates += [swap_instance(H, d1, L, B, alpha, e_vo, sign, later, scale)
                       for later in ("swap", "self") for sign in (1, -1) for scale in (1.0, 0.5, 0.0)]
    instance = max(candidates, key=lambda i: float(t14.measured(i, None)))
    assumptions.require("theorem14", instance)
    lower = float(t14.measured(instance, 30))
    # the bound and the upper end at the ray's achieved errors: the given ones up to rounding (the swap
    # chain leaves some errors at 0, which would understate both)
    bound = float(t14.VARIANTS[t14.DEFAULT_VARIANT](ray, 30))
    out = result("theorem14", BRACKET, lower, float(upper_of(ray)), instance, bound,
                 {"H": H, "d1": d1, "L": L, "B": B, "alpha": alpha, "e_qk": e_qk, "e_vo": e_vo, "e_fc": errors})
    out["nominal_upper"] = upper(H, d1, B, alpha, e_qk, e_vo, errors)
    return out


# The report's slack table, rows (statement, params).
SLACK_ROWS = [("theorem14", dict(H=1, d1=d1, L=1, B=B, e_vo=1e-4, e_fc=1e-4)) for d1, B in ((1, 2), (2, 2), (2, 3))]
