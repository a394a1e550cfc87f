"""The paper's attention objects, exactly as defined, in two precisions.

Each function takes ``dps``: ``None`` evaluates in numpy float64 (vectorised
over tokens and heads), an integer evaluates the same expressions in mpmath at
that many decimal digits (see :mod:`sltcheck.numerics.precision`). Shapes follow
:mod:`sltcheck.model.weights`: X is (T, d1), the attention mask A is (T, T) with
A[i, j] = 1 when token i attends to token j.
"""

from __future__ import annotations

import numpy as np

from sltcheck.model.weights import BlockWeights, FCWeights, MergedMHA, MHAWeights, TransformerWeights
from sltcheck.numerics import precision
from sltcheck.numerics.validation import check_array, check_attention_mask, check_binary


def masked_softmax(
    logits: np.ndarray, mask: np.ndarray, dps: int | None = None, multiplicity: np.ndarray | None = None
) -> np.ndarray:
    """sigma(x; a)_j = a_j exp(x_j) / sum_k a_k exp(x_k) along the last axis (Section 2.2).

    Stable in both precisions: the largest attended logit is subtracted before
    exponentiation, and unattended logits never reach ``exp``. ``multiplicity`` (positive, one
    per entry of the last axis) weighs entry j as n_j copies of itself: n_j a_j exp(x_j) / sum_k
    n_k a_k exp(x_k), the softmax of a sequence in which token j appears n_j times (the worst-case
    search's sequence structure, :mod:`sltcheck.harness.sequence`); None is n = 1.
    """
    logits = check_array("logits", logits, ndim=(1, 2, 3))
    mask = np.broadcast_to(np.asarray(mask), logits.shape)
    if logits.shape[-1] == 0:
        raise ValueError("logits must have at least one entry along the last axis, got 0")
    attended = _binary_rows("mask", mask)
    with precision.working_precision(dps):
        x = precision.as_precision(logits, dps)
        lowest = precision.as_precision(np.array(-np.inf), dps)
        peak = np.where(attended, x, lowest).max(axis=-1, keepdims=True)
        zero = precision.as_precision(np.array(0.0), dps)
        weights = np.where(attended, precision.exp(np.where(attended, x - peak, zero)), zero)
        if multiplicity is not None:
            weights = weights * precision.as_precision(_multiplicity(multiplicity, logits.shape[-1]), dps)
        return weights / weights.sum(axis=-1, keepdims=True)


def _multiplicity(multiplicity: np.ndarray, length: int) -> np.ndarray:
    n = check_array("multiplicity", multiplicity, ndim=1)
    if n.shape[0] != length or not bool(np.all(n > 0)):
        raise ValueError(f"multiplicity must hold {length} positive numbers (one per token), got {n.tolist()!r}")
    return n


def _binary_rows(name: str, mask: np.ndarray) -> np.ndarray:
    flat = mask.reshape(-1, mask.shape[-1])
    return check_binary(name, flat, require_nonzero_rows=True).reshape(mask.shape)


def attention_probabilities(
    X: np.ndarray, mask: np.ndarray, W_QK: np.ndarray, dps: int | None = None
) -> np.ndarray:
    """p_i^(j) = sigma(x_i^T W_QK^(j) X^T; a_i) for every head j and token i: (H, T, T)."""
    with precision.working_precision(dps):
        X = precision.as_precision(X, dps)
        logits = X @ precision.as_precision(W_QK, dps) @ X.T
        return masked_softmax(logits, mask[None], dps)


def mha(
    X: np.ndarray, mask: np.ndarray, weights: MHAWeights, dps: int | None = None,
    multiplicity: np.ndarray | None = None,
) -> np.ndarray:
    """Attn(x_i; X, W_{Q:O}^{(1:H)}) for every token i, per-head form (Section 2.2): (T, d2).

    head_i^(j) = sigma(q_i^(j) K^(j)T / sqrt(d_K); a_i) V^(j), Attn = sum_j head^(j) W_O^(j).
    A pruned source MHA is ``mha(X, A, source.pruned(masks))``: its key
    dimension is n_K, so the scaling is 1/sqrt(n_K) as in Eq. (4). ``multiplicity``: token k
    stands for n_k copies of itself (see :func:`masked_softmax`).
    """
    X, mask = _sequence(X, mask, weights.d_in)
    with precision.working_precision(dps):
        X = precision.as_precision(X, dps)
        W_Q, W_K, W_V, W_O = (precision.as_precision(w, dps) for w in weights.tensors())
        queries, keys, values = X @ W_Q, X @ W_K, X @ W_V  # (H, T, d_K), (H, T, d_K), (H, T, d_V)
        scale = precision.sqrt(precision.as_precision(np.array(weights.d_key), dps))
        scores = queries @ keys.transpose(0, 2, 1) / scale
        heads = masked_softmax(scores, mask[None], dps, multiplicity) @ values
        return (heads @ W_O).sum(axis=0)


def mha_merged(X: np.ndarray, mask: np.ndarray, merged: MergedMHA, dps: int | None = None) -> np.ndarray:
    """Attn_T(x_i) = sum_j sigma(x_i^T W_QK^(j) X^T; a_i) X W_VO^(j) (proof of Theorem 9): (T, d2)."""
    X, mask = _sequence(X, mask, merged.d_in)
    with precision.working_precision(dps):
        probabilities = attention_probabilities(X, mask, merged.W_QK, dps)
        X = precision.as_precision(X, dps)
        return (probabilities @ X @ precision.as_precision(merged.W_VO, dps)).sum(axis=0)


def fc(x: np.ndarray, weights: FCWeights, dps: int | None = None) -> np.ndarray:
    """F(x) = W_L ReLU(W_{L-1} ... ReLU(W_1 x)) on row-stored inputs x of shape (..., d_1)."""
    x = check_array("x", x, ndim=(1, 2))
    if x.shape[-1] != weights.d_in:
        raise ValueError(f"x must have {weights.d_in} features (last axis), got shape {x.shape}")
    with precision.working_precision(dps):
        h = precision.as_precision(x, dps)
        zero = precision.as_precision(np.array(0.0), dps)
        for index, layer in enumerate(weights.layers):
            h = h @ precision.as_precision(layer, dps).T
            if index < len(weights.layers) - 1:
                h = np.where(h > zero, h, zero)
        return h


def two_layer(x: np.ndarray, W1: np.ndarray, W2: np.ndarray, dps: int | None = None) -> np.ndarray:
    """F_S(x) = W_2 ReLU(W_1 x), the source network of Lemma 2 (pass W ⊙ M for a pruned one)."""
    return fc(x, FCWeights((W1, W2)), dps)


def block(
    X: np.ndarray, mask: np.ndarray, weights: BlockWeights, dps: int | None = None,
    multiplicity: np.ndarray | None = None,
) -> np.ndarray:
    """Blk(x_i) = F(Attn(x_i)^T + x_i) + Attn(x_i)^T + x_i, normalisation-free (Section 3.3)."""
    with precision.working_precision(dps):
        residual = mha(X, mask, weights.attention, dps, multiplicity) + precision.as_precision(X, dps)
        return fc(residual, weights.fc, dps) + residual


def transformer(
    X: np.ndarray, mask: np.ndarray, weights: TransformerWeights, dps: int | None = None,
    multiplicity: np.ndarray | None = None,
) -> np.ndarray:
    """Tf(x_i) = Blk^(B)(Blk^(B-1)(... Blk^(1)(x_i))) (Section 3.3). With a full mask every copy of
    a token stays a copy through the blocks, so ``multiplicity`` weighs each block's keys."""
    with precision.working_precision(dps):
        for layer in weights.blocks:
            X = block(X, mask, layer, dps, multiplicity)
        return X


def block_inputs(
    X: np.ndarray, mask: np.ndarray, weights: TransformerWeights, dps: int | None = None
) -> list[np.ndarray]:
    """x^(1), ..., x^(B), Tf(x): the input of every block and the final output (proof of Theorem 14)."""
    with precision.working_precision(dps):
        states = [precision.as_precision(X, dps)]
        for layer in weights.blocks:
            states.append(block(states[-1], mask, layer, dps))
        return states


def _sequence(X: np.ndarray, mask: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    X = check_array("X", X, ndim=2)
    if X.shape[0] == 0:
        raise ValueError("X must hold at least one token (T >= 1), got T = 0")
    if X.shape[1] != width:
        raise ValueError(f"X must have {width} features per token, got shape {X.shape}")
    return X, check_attention_mask("mask", mask, X.shape[0])
