"""S(x) - T(x) for a pruned source S and its target T, computed as a difference, never as S minus T.

The difference of two attention layers whose merged weights differ by E_QK = W_QK^S - W_QK^T and
E_VO = W_VO^S - W_VO^T (the merged forms of Eqs. 10-11) is written so that the small quantities stay
small: with l_ik = x_i^T W_QK^T x_k the target's logits, p = softmax(l) and
delta_ik = x_i^T E_QK x_k (plus the input's own difference, between blocks),

    p^S_ik - p_ik = p_ik (expm1(delta_ik) - s_i) / (1 + s_i),   s_i = sum_m p_im expm1(delta_im),

and S(x_i) - T(x_i) = sum_k (p^S_ik - p_ik) v^S_k + p_ik (v^S_k - v_k), summed over heads. Every term is
of the size of the weight errors, so an enclosure of it (outward-rounded intervals,
:mod:`sltcheck.numerics.interval_arrays`) is as tight relative to the error as it is relative to the
inputs; enclosing S and T separately would lose everything below the enclosures' width. A transformer
block (Section 3.3) carries the pair (x, x^S - x) through its residuals and its FC layers:
F_S(r^S) - F_T(r) = [F_S(r^S) - F_S(r)] (the source's ReLU net at two near inputs, as a difference) +
[F_S(r) - F_T(r)] (two nets at one input: the source's FC is another architecture, enclosed each).

Every function takes float64 arrays (a point: the search's fast evaluation),
:class:`~sltcheck.numerics.interval_arrays.Intervals` (an enclosure over a box of inputs),
:class:`~sltcheck.numerics.jets.Jet` (enclosures of the values and their gradients over a box) or
:class:`~sltcheck.numerics.affine_arrays.Affine` (affine forms in the box's parameters) alike.
Shapes: X is (N, T, d) (N inputs or boxes at once), weights as :mod:`sltcheck.model.weights`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from sltcheck.model.weights import FCWeights, MHAWeights, TransformerWeights
from sltcheck.numerics.affine_arrays import Affine
from sltcheck.numerics.affine_arrays import stack as affine_stack
from sltcheck.numerics.interval_arrays import (
    Intervals,
    all_finite,
    clip,
    contract,
    exp,
    expm1,
    intersect,
    relu,
    relu_change,
    sqrt,
    square,
    total,
    upper_ends,
)
from sltcheck.numerics.jets import Jet, stack

MERGE_DPS = 40  # the merged weights and their differences, before they are rounded to float64 (outward)


@dataclass(frozen=True)
class MergedDifference:
    """One attention layer's target merged weights and the source's differences from them, per head
    (arrays of (H, d1, d1) and (H, d1, d2)): float64 nearest values, or intervals containing the exact
    reals (the merged forms hold 1/sqrt(n_K), which no float is)."""

    qk: Any
    qk_error: Any
    vo: Any
    vo_error: Any

    @property
    def heads(self) -> int:
        return int(self.qk.shape[0])


def merged_difference(target: MHAWeights, source: MHAWeights, intervals: bool) -> MergedDifference:
    """The merged weights of ``target`` and ``source`` - ``target``'s, from the float64 weights taken
    exactly, computed at ``MERGE_DPS`` digits; each is then rounded to the nearest float64
    (``intervals`` False) or enclosed by that float moved one ulp out either way."""
    with mpmath.workdps(MERGE_DPS):
        merged_target, merged_source = target.merged(MERGE_DPS), source.merged(MERGE_DPS)
        values = (merged_target.W_QK, merged_source.W_QK - merged_target.W_QK,
                  merged_target.W_VO, merged_source.W_VO - merged_target.W_VO)
        nearest = [np.vectorize(float, otypes=[np.float64])(v) for v in values]
    if not intervals:
        return MergedDifference(*nearest)
    return MergedDifference(*(Intervals(np.nextafter(v, -np.inf), np.nextafter(v, np.inf)) for v in nearest))


def bilinear(a: Any, weight: Any, b: Any) -> Any:
    """a_i^T W b_k for every i, k: a (N, T, d), W (d, d), b (N, T, d) -> (N, T, T)."""
    left = contract(a, weight)
    result = left[:, :, None, 0] * b[:, None, :, 0]
    for c in range(1, left.shape[-1]):
        result = result + left[:, :, None, c] * b[:, None, :, c]
    return result


def mixture(weights: Any, values: Any) -> Any:
    """sum_k w_ik v_k: weights (N, T, T), values (N, T, e) -> (N, T, e)."""
    result = weights[:, :, 0, None] * values[:, None, 0, :]
    for k in range(1, weights.shape[-1]):
        result = result + weights[:, :, k, None] * values[:, None, k, :]
    return result


ENCLOSURES = (Intervals, Jet, Affine)  # what encloses values over boxes (the rest are float points)

# Up to this many tokens an enclosure takes the centred softmax (tighter over a box, T^3 work); beyond it,
# and at points, the shifted one (T^2 work).
CENTRED_UP_TO = 8


def softmax_rows(logits: Any) -> Any:
    """p_ik = 1 / sum_m exp(l_im - l_ik) (the centred form: no overflow, and tighter over a box), or
    p_ik = exp(l_ik - c_i) / sum_m exp(l_im - c_i) with c_i the largest upper end of row i (points, and
    enclosures of more than ``CENTRED_UP_TO`` tokens)."""
    length = logits.shape[-1]
    if not isinstance(logits, ENCLOSURES) or length > CENTRED_UP_TO:
        peak = np.max(logits if not isinstance(logits, ENCLOSURES) else upper_ends(
            logits.value if isinstance(logits, Jet) else logits), axis=-1, keepdims=True)
        peak = np.where(np.isfinite(peak), peak, 0.0)
        weights = exp(logits - peak)
        return weights / total(weights, axis=-1)[:, :, None]
    rows = [1.0 / total(exp(logits - logits[:, :, k, None]), axis=-1) for k in range(length)]
    if isinstance(rows[0], Jet):
        return stack(rows)
    if isinstance(rows[0], Affine):
        return affine_stack(rows)
    if isinstance(rows[0], Intervals):
        return Intervals(np.stack([r.lo for r in rows], axis=-1), np.stack([r.hi for r in rows], axis=-1))
    return np.stack(rows, axis=-1)


def mha_difference(X: Any, dX: Any | None, weights: MergedDifference) -> tuple[Any, Any]:
    """(T(x_i), S(x_i^S) - T(x_i)) for every token, x^S = x + dX (dX None: the same input)."""
    XS = X if dX is None else X + dX
    output = difference = None
    for j in range(weights.heads):
        qk, qk_error, vo, vo_error = weights.qk[j], weights.qk_error[j], weights.vo[j], weights.vo_error[j]
        logits = bilinear(X, qk, X)
        probabilities = clip(softmax_rows(logits), 0.0, 1.0)
        delta = bilinear(X, qk_error, X)  # (X + dX) W^S (X + dX)^T - X W X^T, W^S = W + E:
        if dX is not None:
            delta = delta + bilinear(dX, qk + qk_error, XS) + bilinear(X, qk + qk_error, dX)
        grown = expm1(delta)
        shift = total(probabilities * grown, axis=-1)[:, :, None]  # s_i
        change = probabilities * (grown - shift) / (1.0 + shift)  # p^S - p
        if not all_finite(change):  # logits' errors beyond exp's range: p^S - p of the two softmaxes, in [-1, 1]
            direct = clip(softmax_rows(logits + delta), 0.0, 1.0) - probabilities
            change = intersect(change, direct) if isinstance(change, ENCLOSURES) else np.where(
                np.isfinite(change), change, direct)
        values = contract(X, vo)
        value_change = contract(X, vo_error) if dX is None else contract(X, vo_error) + contract(dX, vo + vo_error)
        head = mixture(probabilities, values)
        head_change = mixture(change, values + value_change) + mixture(probabilities, value_change)
        output = head if output is None else output + head
        difference = head_change if difference is None else difference + head_change
    return output, difference


def fc_forward(x: Any, weights: FCWeights) -> Any:
    """F(x) = W_L ReLU(... W_1 x) on rows x (..., d)."""
    for index, layer in enumerate(weights.layers):
        x = contract(x, layer.T)
        if index < len(weights.layers) - 1:
            x = relu(x)
    return x


def fc_change(x: Any, dx: Any, weights: FCWeights) -> Any:
    """F(x + dx) - F(x) for one ReLU net, carried as a difference through its layers."""
    for index, layer in enumerate(weights.layers):
        x, dx = contract(x, layer.T), contract(dx, layer.T)
        if index < len(weights.layers) - 1:
            dx = relu_change(x, dx)
            x = relu(x)
    return dx


def transformer_difference(X: Any, target: TransformerWeights, source: TransformerWeights,
                           attention: list[MergedDifference]) -> tuple[Any, Any]:
    """(Tf_T(x_i), Tf_S(x_i) - Tf_T(x_i)): each block Blk(x) = F(Attn(x) + x) + Attn(x) + x carries the pair."""
    dX = None
    for block_t, block_s, merged in zip(target.blocks, source.blocks, attention, strict=True):
        A, dA = mha_difference(X, dX, merged)
        R = A + X
        dR = dA if dX is None else dA + dX
        F_T = fc_forward(R, block_t.fc)
        dF = fc_forward(R, block_s.fc) - F_T + fc_change(R, dR, block_s.fc)
        X, dX = F_T + R, dF + dR
    return X, dX


def token_norms(difference: Any) -> Any:
    """||S(x_i) - T(x_i)|| for every token: (N, T)."""
    return sqrt(total(square(difference), axis=-1))
