"""Which bound each pruned source of a reproduction is checked against.

The theorems' a-posteriori chains (``as-proven``) assume what Section 3.1 assumes:
every target matrix of spectral norm <= 1 and every token of norm <= alpha. A target
kept as trained or drawn (paper mode: measured norms 1.2 to 3.7) breaks the first
assumption, and then ``as-proven`` is not a bound at all. Such a source is checked
against the chain below, valid for ANY target norms: the statements' ``tight`` variants
(``theorem9.chain``, ``theorem11.chain``, ``theorem14.chain`` with mode "tight"), whose
every step is proved here with the actual norms. ``bound="auto"`` (the default) uses
``as-proven`` where the prepared target meets the assumptions and this chain otherwise;
``"as-proven"`` refuses a target that breaks them.

Notation: a = the largest token norm of the inputs (here max(1, ||r||), r the regression
token), ||.|| the spectral norm, W_QK^(j) = W_Q^(j) W_K^(j)T / sqrt(d_K) and
W_VO^(j) = W_V^(j) W_O^(j) of the TARGET, dW_QK^(j), dW_VO^(j) the target's minus the
pruned source's, p_i, p'_i the target's and source's attention rows of token i.

**MHA (Theorem 9's chain with the actual norms).** For tokens with ||x_k|| <= a:

1. logits: |x_i^T dW_QK x_k| <= ||x_i|| ||dW_QK|| ||x_k|| <= a^2 ||dW_QK|| =: e_j
   (Cauchy-Schwarz; no norm of the target is used).
2. Lemma 8 (its proof uses only |logit change| <= e_j and ||x_k|| <= a):
   ||(p_i - p'_i) X|| <= sqrt(d1) a (exp(2 e_j) - 1).
3. ||Attn_S(x_i) - Attn_T(x_i)|| <= sum_j ||(p_i - p'_i) X W_VO^(j)|| + ||p'_i X dW_VO^(j)||
   <= sum_j ||(p_i - p'_i) X|| ||W_VO^(j)|| + ||p'_i X|| ||dW_VO^(j)||, and
   ||p'_i X|| <= a <= sqrt(d1) a (a convex combination of tokens).

   A := sum_j [ sqrt(d1) a (exp(2 a^2 ||dW_QK^(j)||) - 1) ||W_VO^(j)|| + sqrt(d1) a ||dW_VO^(j)|| ].

The paper's chain replaces ||W_VO^(j)|| by 1 (Eq. 13, from ||W_V||, ||W_O|| <= 1): with
||W_VO|| = 3 that step underestimates the softmax term three-fold.

**Block (Theorem 11's chain).** z = Attn_T(x)^T + x, z' = Attn_S(x)^T + x, so
||z' - z|| <= A and ||z'_i|| <= A + ||Attn_T(x_i)|| + a <= A + sqrt(d1) a sum_j ||W_VO^(j)|| + a =: r
(step 3's convex-combination bound). For the FC part F_T(z) = W_L ReLU(... ReLU(W_1 z)) and the
pruned F_S, let u_l, u'_l be the inputs of target layer l and of its source pair, g_l = ||u'_l - u_l||,
n_l a bound on ||u_l||. With delta_l := sup_{u != 0} ||S_l(u) - W_l u|| / ||u|| (the source
pair's relative error on its input set, computed by ``theorem11.fc_layer_errors``),
||S_l(u'_l) - W_l u_l|| <= ||S_l(u'_l) - W_l u'_l|| + ||W_l (u'_l - u_l)||
<= delta_l (n_l + g_l) + ||W_l|| g_l, and the ReLU between layers is 1-Lipschitz with ReLU(0) = 0,
so g_{l+1} <= ||W_l|| g_l + delta_l (n_l + g_l), n_{l+1} = ||W_l|| n_l, starting from
g_1 = 0, n_1 = r: ||F_S(z') - F_T(z')|| <= g_{L+1} =: FC. F_T is Lipschitz with constant
prod_l ||W_l||. Then
||Blk_S(x) - Blk_T(x)|| <= ||F_S(z') - F_T(z')|| + ||F_T(z') - F_T(z)|| + ||z' - z||
<= FC + prod_l ||W_l|| A + A.

**Transformer of B blocks (Theorem 14's chain).** With x^(b), x'^(b) the target's and source's
inputs of block b, Delta_b = max_i ||x_i^(b) - x_i'^(b)|| (Delta_1 = 0) and beta_b a bound on
||x^(b)_k|| (beta_1 = a):

- target growth: ||Blk_T(x)_i|| <= (1 + prod_l ||W_l||) (1 + sqrt(d1) sum_j ||W_VO^(j)||) beta_b
  (F_T(0) = 0; steps as above), which gives beta_{b+1};
- block Lipschitz for ||x_k|| <= beta, ||x_k - x'_k|| <= D (no bound on ||x'_k|| needed):
  the logit change is |x_i^T W_QK x_k - x'_i^T W_QK x'_k|
  <= ||W_QK|| (||x_i - x'_i|| ||x_k|| + ||x'_i|| ||x_k - x'_k||) <= ||W_QK|| (2 beta D + D^2),
  so ||p_i X - p'_i X'|| <= ||(p_i - p'_i) X|| + ||p'_i (X - X')||
  <= sqrt(d1) beta (exp(2 ||W_QK|| (2 beta D + D^2)) - 1) + D, each head times ||W_VO^(j)||, plus D
  for the residual, times (1 + prod_l ||W_l||) for the FC and its residual;
- Delta_{b+1} <= ||Blk_T(x^(b)) - Blk_T(x'^(b))|| + ||Blk_T(x'^(b)) - Blk_S(x'^(b))||
  = block Lipschitz (beta_b, Delta_b) + the block chain at token bound beta_b + Delta_b.

The bound is Delta_{B+1}. No step assumes a norm <= 1 or alpha >= sqrt(d1); each step is a
triangle inequality, Cauchy-Schwarz, a convex combination or Lemma 8 (which assumes only the
logit change and the token norms). :func:`actual_norm_bound_float` recomputes this chain
from the formulas above in plain float64, independently of the statements' code, and the
tests hold the two equal; ``tests/test_repro_bounds.py`` also shows ``as-proven`` refuted by a
measured error on targets with ||W_VO|| ~ 10^4, where this bound holds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sltcheck.model.weights import BlockWeights, MHAWeights, TransformerWeights
from sltcheck.numerics.validation import check_choice
from sltcheck.statements import theorem9, theorem11, theorem14

BOUNDS = ("auto", "as-proven", "actual-norms")
NORM_TOLERANCE = 1e-12  # float64 spectral norms of rescaled matrices land within this of 1


def _matrices(target: MHAWeights | BlockWeights | TransformerWeights) -> list[np.ndarray]:
    if isinstance(target, MHAWeights):
        return [w for stack in target.tensors() for w in stack]
    if isinstance(target, BlockWeights):
        return _matrices(target.attention) + list(target.fc.layers)
    return [w for block in target.blocks for w in _matrices(block)]


def meets_assumptions(target: MHAWeights | BlockWeights | TransformerWeights) -> bool:
    """Every target matrix of spectral norm <= 1 (Section 3.1), to float64's precision."""
    return all(float(np.linalg.norm(w, 2)) <= 1 + NORM_TOLERANCE for w in _matrices(target))


def variant_for(target: MHAWeights | BlockWeights | TransformerWeights, bound: str) -> str:
    """The statement variant a source of ``target`` is checked against ("as-proven" or "tight")."""
    check_choice("bound", bound, BOUNDS)
    holds = meets_assumptions(target)
    if bound == "as-proven" and not holds:
        raise ValueError("bound 'as-proven' assumes every target matrix of spectral norm <= 1, which this "
                         "target breaks; use bound 'actual-norms' or 'auto', or --norm-policy rescale")
    if bound == "actual-norms" or (bound == "auto" and not holds):
        return "tight"
    return "as-proven"


def source_bound(target: MHAWeights | BlockWeights | TransformerWeights,
                 pruned: MHAWeights | BlockWeights | TransformerWeights,
                 alpha: float, token_bound: float, bound: str, dps: int) -> tuple[str, Any]:
    """(variant, bound value) for one pruned source: ``as-proven`` at alpha, or the
    actual-norm chain at the actual largest token norm ``token_bound``."""
    variant = variant_for(target, bound)
    tokens = alpha if variant == "as-proven" else token_bound
    if isinstance(target, MHAWeights):
        assert isinstance(pruned, MHAWeights)
        value = theorem9.a_posteriori_bound(target, pruned, tokens, dps=dps, variant=variant)
    elif isinstance(target, BlockWeights):
        assert isinstance(pruned, BlockWeights)
        value = theorem11.a_posteriori_bound(target, pruned, tokens, dps=dps, variant=variant)
    else:
        assert isinstance(pruned, TransformerWeights)
        value = theorem14.a_posteriori_bound(target, pruned, tokens, dps=dps, variant=variant)
    name = "actual-norms" if variant == "tight" else variant
    return name, value


# --- the same chain in plain float64, from the docstring (the independent second computation) ---


def _spec(m: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(m, dtype=np.float64), 2))


def _mha_float(target: MHAWeights, pruned: MHAWeights, a: float) -> float:
    t, s = target.merged(None), pruned.merged(None)
    root = np.sqrt(target.d_in)
    total = 0.0
    for j in range(target.heads):
        e_j = a * a * _spec(t.W_QK[j] - s.W_QK[j])
        total += root * a * np.expm1(2 * e_j) * _spec(t.W_VO[j]) + root * a * _spec(t.W_VO[j] - s.W_VO[j])
    return float(total)


def _fc_float(target: BlockWeights, pruned: BlockWeights, r: float) -> float:
    errors = theorem11.fc_layer_errors(target.fc, pruned.fc, dps=None)  # delta_l: the source pairs' own
    gap, norm = 0.0, r
    for index, (W, err) in enumerate(zip(target.fc.layers, errors, strict=True)):
        delta = float(err["delta_tight_first"] if index == 0 else err["delta_tight_later"])
        gap = _spec(W) * gap + delta * (norm + gap)
        norm = _spec(W) * norm
    return gap


def _block_float(target: BlockWeights, pruned: BlockWeights, a: float) -> float:
    A = _mha_float(target.attention, pruned.attention, a)
    vo = target.attention.merged(None).W_VO
    r = A + np.sqrt(target.attention.d_in) * a * sum(_spec(m) for m in vo) + a
    lipschitz = float(np.prod([_spec(W) for W in target.fc.layers]))
    return float(_fc_float(target, pruned, r) + lipschitz * A + A)


def _block_lipschitz_float(block: BlockWeights, beta: float, D: float) -> float:
    merged = block.attention.merged(None)
    root = np.sqrt(block.attention.d_in)
    attention = sum(root * (beta * np.expm1(2 * _spec(qk) * (2 * beta * D + D * D)) + D) * _spec(vo)
                    for qk, vo in zip(merged.W_QK, merged.W_VO, strict=True))
    return float((1 + np.prod([_spec(W) for W in block.fc.layers])) * (attention + D))


def actual_norm_bound_float(target: MHAWeights | BlockWeights | TransformerWeights,
                            pruned: MHAWeights | BlockWeights | TransformerWeights, token_bound: float) -> float:
    """The docstring's chain in float64 (a cross-check of the mpmath ``tight`` chains)."""
    if isinstance(target, MHAWeights):
        assert isinstance(pruned, MHAWeights)
        return _mha_float(target, pruned, token_bound)
    if isinstance(target, BlockWeights):
        assert isinstance(pruned, BlockWeights)
        return _block_float(target, pruned, token_bound)
    assert isinstance(pruned, TransformerWeights)
    beta, delta = float(token_bound), 0.0
    for tgt, src in zip(target.blocks, pruned.blocks, strict=True):
        propagated = _block_lipschitz_float(tgt, beta, delta)
        error = _block_float(tgt, src, beta + delta)
        vo = tgt.attention.merged(None).W_VO
        growth = (1 + np.prod([_spec(W) for W in tgt.fc.layers])) * (
            1 + np.sqrt(tgt.attention.d_in) * sum(_spec(m) for m in vo))
        delta, beta = propagated + error, float(beta * growth)
    return delta
