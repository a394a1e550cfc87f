"""Theorem 14 (the deterministic chain of a B-block transformer, per achieved errors): the supremum of
measured / bound for the default (as-proven) chain, proved; the measured side's own supremum, a bracket.

The as-proven chain is tight: sup measured / bound = 1, approached, never attained.

Claim. For every admissible instance (any B >= 2, H, d1, L, T, mask, errors), measured <= the as-proven
chain (:func:`sltcheck.statements.theorem14.chain`); and on the family :func:`tight_instance` (B = 2,
d1 = H = L = 1, one token at alpha, targets W_QK = 0, W_VO = 1, FC layer 1; block 1's source
S_VO = 1 + e_1 with e_1 >= 2, block 2's S_VO = 1 + e_2, everything else exact) the ratio is

    (2 e_2 alpha_2 + 4 Delta_2) / (2 e_2 alpha_2 + L13(beta_2, Delta_2)) -> 1 as e_2 -> infinity,

with beta_2 = 4 alpha, Delta_2 = 2 alpha e_1 >= beta_2, alpha_2 = beta_2 + Delta_2 and
L13(beta, Delta) = 2 (beta (e^{4 beta Delta} - 1) + 2 Delta) > 4 Delta (so it is never 1).

Proof. Write x^(b), x'^(b) for the inputs of the b-th target and source blocks and Delta_b for the chain's
value (Delta_1 = 0), beta_b = alpha (4 H sqrt(d1))^{b-1}, alpha_b = max(2 beta_b, beta_b + Delta_b) (b >= 2).
(1) ||x_k^(b)|| <= beta_b: ||Blk_T(x)|| <= ||F_T(z)|| + ||z|| <= 2 ||z|| (layers of norm <= 1, F_T(0) = 0),
||z|| <= ||Attn_T(x)|| + ||x|| <= (H + 1) max_k ||x_k|| <= 4 H sqrt(d1) max_k ||x_k|| / 2.
(2) Row by row, ||x_i^(b+1) - x_i'^(b+1)||
<= ||Blk_T(x^(b))_i - Blk_T(x'^(b))_i|| + ||Blk_T(x'^(b))_i - Blk_S(x'^(b))_i||.
(3) The first term, by induction ||x_k - x'_k|| <= Delta_b and ||x'_k|| <= beta_b + Delta_b: the logits move
by at most 2 beta Delta + Delta^2 (not 2 beta Delta: the gap :mod:`sltcheck.statements.theorem14` notes), so
Lemma 8's supremum and the block's doubling give :func:`block_lipschitz`:
2 (H (2 beta tanh(beta Delta + Delta^2 / 2) + Delta) + Delta). With tanh u <= u, and
2 beta^2 Delta + beta Delta^2 <= beta (4 beta Delta + 8 beta^2 Delta^2) <= beta (e^{4 beta Delta} - 1) (as
8 beta^2 >= 1: beta >= alpha >= 1) and (H + 1) Delta <= 2 H sqrt(d1) Delta, this is at most Lemma 13 as
proven, 2 H sqrt(d1) (beta (e^{4 beta Delta} - 1) + 2 Delta): the gap is absorbed by the proof's slack.
(4) The second term is Theorem 11's for inputs of norm <= beta_b + Delta_b <= alpha_b, at most its
as-proven chain at alpha_b (:mod:`sltcheck.statements.theorem11.worst_case`: that chain bounds U_11 from
above), which increases with the token bound.
(5) Both terms increase with Delta_b, so by induction the actual error stays below Delta_{b+1} at every
block, and measured <= Delta_{B+1}, the chain: sup <= 1.
(6) The family. With one token and d1 = 1 everything is a number: x^(2) = Blk_T(alpha) = 4 alpha = beta_2,
x'^(2) = 2 (2 + e_1) alpha, so Delta_2 = 2 alpha e_1 (block 1's chain is exactly that: Theorem 11's as-proven
chain is attained on e_QK = e_FC = 0 at d1 = 1), and with e_1 >= 2, Delta_2 >= beta_2 so
alpha_2 = beta_2 + Delta_2 = ||x'^(2)||. The output gap is 2 (2 + e_2) x'^(2) - 4 x^(2) = 2 e_2 alpha_2 + 4 Delta_2,
and the chain is L13(beta_2, Delta_2) + 2 e_2 alpha_2 (Theorem 11's chain at alpha_2, the value term only):
the ratio above. It tends to 1 as e_2 grows (at e_1 = 2, alpha = 1: 1 - 3e-13 at e_2 = 1e40), but only
once 2 e_2 alpha_2 dwarfs L13 ~ beta_2 e^{4 beta_2 Delta_2} >= 4 alpha e^{64 alpha^2}: the search's
best instances have source weights ~1e20 off their targets and more. With Delta_2 < beta_2 (a small
block-1 error) alpha_2 = 2 beta_2 > ||x'^(2)|| and the ratio tends to (beta_2 + Delta_2) / (2 beta_2) < 1
instead: the source-input bound 2 beta_b is loose unless block 1's error is as large as beta_2.  []

With Lemma 13 as printed (variant ``lemma13-as-stated``: the chain with Lemma 13's factor 1, not the proof's
2) and B = 2 blocks (the theorem assumes B >= 2): measured <= (34/33) x that chain, and the smallest such
constant lies in [1, 34/33].

Proof. By steps (2) and (4) above, measured <= P + Th_2 with P the first term of (2) at block 2 and Th_2
Theorem 11's chain at alpha_2; the chain with Lemma 13 as printed is L + Th_2, with
L = H sqrt(d1) (beta (e^{4 beta Delta} - 1) + 2 Delta), beta = beta_2 = 4 H sqrt(d1) alpha >= 4 H (alpha >= 1)
and Delta = Delta_2 (block 1's Theorem 11 chain: block 1's Lemma 13 term is 0 at Delta_1 = 0 whatever its
factor, so Delta_2, alpha_2 and Th_2 are the same in both chains). By (3) with tanh u <= u,
P <= 2 (H (2 beta^2 Delta + beta Delta^2 + Delta) + Delta) = 4 H beta^2 Delta + 2 H beta Delta^2 +
2 (H + 1) Delta, and with e^x - 1 >= x + x^2 / 2 and sqrt(d1) >= 1, L >= H (4 beta^2 Delta + 8 beta^3 Delta^2
+ 2 Delta). So for c >= 1

    c L - P >= Delta (4 (c - 1) H beta^2 + 2 (c - 1) H - 2) + Delta^2 H beta (8 c beta^2 - 2),

whose second term is >= 0 and whose first is >= 0 once c - 1 >= 1 / (2 H beta^2 + H), largest at H = 1,
beta = 4: c = 1 + 1/33. Then measured <= c L + Th_2 <= c (L + Th_2). The lower end: on the family
:func:`tight_instance` the ratio to the printed chain is (2 e_2 alpha_2 + 4 Delta_2) / (2 e_2 alpha_2 + L),
below 1 (L > 4 Delta_2 there) and tending to 1 as e_2 grows.  []

What the argument does not give: the printed chain's own step may be short by its first-order term 2 Delta
(P against L as Delta -> 0), so below 34/33 this proof says nothing, and on the family B2-d1-T2
``sltcheck certify`` proves c = 1. For B >= 3 the Lemma 13 step itself carries over (P at c Delta is at most
c (1 + 1 / (2 H beta^2 + H)) times L at Delta), but Theorem 11's term does not: the chain applies it at
alpha_3 = max(2 beta_3, beta_3 + Delta_3), while block 3's source inputs may reach beta_3 + c Delta_3 > alpha_3
once Delta_3 > beta_3 / c, and that chain grows like exp(alpha^2 e_QK) in its token bound. So no constant
follows: the smallest c for B >= 3 is open.

The edge mutant ``supremum-0.97`` is 0.97 times the as-proven chain; the power table holds the search to
the supremum 1 (``POWER_CASES``).

The measured side itself (a bracket, for the slack table):

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

from sltcheck.harness.projection import INSIDE
from sltcheck.statements.shared.suprema import BRACKET, alpha_for, nonneg, positive_int, result, tokens
from sltcheck.statements.shared.suprema_search import pad
from sltcheck.statements.theorem11 import worst_case as w11

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


def tight_instance(alpha: float, e_first: float, e_last: float, H: int = 1) -> dict[str, Any]:
    """The docstring's family on which measured / the as-proven chain -> 1: B = 2, d1 = L = 1, one token at
    alpha, the one-token ray blocks of :mod:`sltcheck.statements.theorem11.worst_case` with value errors
    ``e_first`` (block 1; >= 2 makes the source input reach alpha_2) and ``e_last`` (block 2)."""
    from sltcheck.model.weights import BlockWeights, TransformerWeights
    from sltcheck.statements import theorem14 as t14

    pairs = []
    for e_vo in (e_first, e_last):
        (t_attn, s_attn), (t_fc, s_fc) = w11.ray_attention(H, 1, 0.0, e_vo), w11.ray_fc(1, [0.0])
        pairs.append((BlockWeights(t_attn, t_fc), BlockWeights(s_attn, s_fc)))
    target = TransformerWeights(tuple(t for t, _ in pairs))
    source = TransformerWeights(tuple(s for _, s in pairs))
    return t14.make_instance(target, source, tokens(alpha, 1, (1,)), np.ones((1, 1), dtype=np.int8), alpha)


def tight_ratio(alpha: float, e_first: float, e_last: float) -> float:
    """The docstring's closed form of measured / bound on :func:`tight_instance` (H = 1, e_first >= 2)."""
    import mpmath

    with mpmath.workdps(40):
        beta, delta = 4 * mpmath.mpf(alpha), 2 * mpmath.mpf(alpha) * e_first
        top = beta + delta
        lemma13 = 2 * (beta * mpmath.expm1(4 * beta * delta) + 2 * delta)
        return float((2 * e_last * top + 4 * delta) / (2 * e_last * top + lemma13))


# The supremum of measured / the as-proven chain over every instance (the docstring's claim).
SUPREMUM = 1.0


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
