"""Enclosures for certified verdicts: the paper's objects in rigorous numbers.

The softmax, the MHA, the FC network and the block are re-stated here in enclosures (:func:`softmax`,
:func:`mha`, :func:`fc`, :func:`block`) rather than run through ``reference`` in interval mode:
``validation.check_array`` rejects intervals of positive width (``mpmath.isfinite`` refuses
them; so does ``MergedMHA``), and ``reference.fc`` applies ReLU through a comparison that an
interval straddling 0 cannot decide (:func:`relu` is the interval ReLU [max(0, lo), max(0, hi)]).
``reference.masked_softmax`` does run in the interval mode on point inputs (tested).

The numbers themselves, their backends (arb balls or ``mpmath.iv`` intervals) and every helper on them
(:func:`~sltcheck.numerics.enclosures.num`, :func:`~sltcheck.numerics.enclosures.ends`,
:func:`~sltcheck.numerics.enclosures.hull_max`, :func:`~sltcheck.numerics.enclosures.expm1`, ...) live in
:mod:`sltcheck.numerics.enclosures`, the largest singular value in :mod:`sltcheck.numerics.singular_values`;
this module re-exports them, so ``from sltcheck.numerics.intervals import ...`` reaches every one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sltcheck.numerics import exact as exactly
from sltcheck.numerics.enclosures import (  # noqa: F401 (re-exported: the helpers' public path)
    MAX_EXTRA_BITS,
    NotEnclosed,
    active,
    all_arb,
    all_exact,
    as_interval,
    chain_expm1,
    decide_interval,
    ends,
    exp,
    expm1,
    hull,
    hull_max,
    hull_min,
    interval_of,
    intervals,
    is_enclosure_array,
    log,
    max_abs,
    norm,
    num,
    owner,
    power,
    row_norms,
    scalar,
    sqrt,
    square,
    stated_or_proven,
    up_to,
    using,
    width_digits,
)
from sltcheck.numerics.singular_values import SPECTRAL_BITS, spectral_norm  # noqa: F401 (re-exported)


def softmax(logits: np.ndarray, mask: np.ndarray, multiplicity: Any = None) -> np.ndarray:
    """Interval enclosure of the masked softmax along the last axis (Section 2.2).

    ``multiplicity`` (positive, one per entry of the last axis; None: every entry once) weighs
    entry j as n_j copies of itself, n_j a_j exp(x_j) / sum_k n_k a_k exp(x_k), exactly as
    ``reference.masked_softmax`` does. Shifted by the midpoint of the first attended logit's
    enclosure (any shift gives the same real value; a point shift keeps the enclosure tight)."""
    logits = np.asarray(logits, dtype=object)
    attended = np.broadcast_to(np.asarray(mask).astype(bool), logits.shape)
    counts = _counts(multiplicity, logits.shape[-1])
    out = np.empty(logits.shape, dtype=object)
    for index in np.ndindex(logits.shape[:-1]):
        row, keep = logits[index], attended[index]
        if not keep.any():
            raise ValueError(f"mask row {index} attends to no token")
        live = [x for x, k in zip(row, keep, strict=True) if k]
        if all_exact(live) and all(x.value is not None and x.value.compare(live[0].value) == 0 for x in live):
            # equal logits: the weights are the counts' shares, exactly
            share = [n if k else num(0) for n, k in zip(counts, keep, strict=True)]
            total = sum(share[1:], share[0])
            out[index] = [n / total for n in share]
            continue
        lo, hi = ends(row[np.flatnonzero(keep)[0]])
        # any point gives the same real value; the logit itself where it is one (exp(0) = 1 exactly)
        shift = num(lo) if lo == hi else num((lo + hi) / 2)
        weights = [n * exp(x - shift) if k else num(0) for x, k, n in zip(row, keep, counts, strict=True)]
        total = sum(weights[1:], weights[0])
        out[index] = [w / total for w in weights]
    return out


def _counts(multiplicity: Any, length: int) -> list[Any]:
    """The multiplicities as exact points (a float64 converts exactly), 1 each where None."""
    if multiplicity is None:
        return [num(1)] * length
    n = np.asarray(multiplicity, dtype=np.float64)
    if n.shape != (length,) or not bool(np.all(np.isfinite(n) & (n > 0))):
        raise ValueError(f"multiplicity must hold {length} positive finite numbers (one per token), "
                         f"got {n.tolist()!r}")
    return [num(float(v)) for v in n]


def mha(X: np.ndarray, mask: np.ndarray, weights: Any, multiplicity: Any = None) -> np.ndarray:
    """Interval enclosure of ``reference.mha`` (per-head form, Eqs. 1, 2): (T, d2).

    ``X`` is float64 or an array of intervals (the output of an earlier block); ``multiplicity``:
    token k stands for n_k copies of itself (see :func:`softmax`)."""
    Xi = intervals(X)
    Q, K, V, O = (intervals(w) for w in weights.tensors())
    scale = sqrt(num(weights.d_key))
    heads = []
    for j in range(weights.heads):
        scores = (Xi @ Q[j]) @ (Xi @ K[j]).T / scale
        heads.append(softmax(scores, mask, multiplicity) @ (Xi @ V[j]) @ O[j])
    return np.asarray(sum(heads[1:], heads[0]), dtype=object)


def relu(x: Any) -> Any:
    """max(0, x) of an interval: [max(0, lo), max(0, hi)] (needs no comparison to be decided)."""
    if isinstance(x, exactly.Exact) and (positive := exactly.relu(x)) is not None:
        return positive
    if all_arb([x]):
        return x.max(active().number(0))
    lo, hi = ends(x)
    return interval_of(max(lo, 0), max(hi, 0))


def fc(rows: np.ndarray, layers: Sequence[np.ndarray]) -> np.ndarray:
    """Interval enclosure of ``reference.fc``: F(x) = W_L ReLU(... ReLU(W_1 x)) on row-stored x."""
    h = intervals(rows)
    for index, layer in enumerate(layers):
        h = h @ intervals(layer).T
        if index < len(layers) - 1:
            h = np.frompyfunc(relu, 1, 1)(h)
    return np.asarray(h, dtype=object)


def block(X: np.ndarray, mask: np.ndarray, weights: Any, multiplicity: Any = None) -> np.ndarray:
    """Interval enclosure of ``reference.block``: Blk(x_i) = F(Attn(x_i) + x_i) + Attn(x_i) + x_i."""
    residual = mha(X, mask, weights.attention, multiplicity) + intervals(X)
    return fc(residual, weights.fc.layers) + residual


def transformer(X: np.ndarray, mask: np.ndarray, weights: Any, multiplicity: Any = None) -> np.ndarray:
    """Interval enclosure of ``reference.transformer``: the blocks one after the other (a copy of a
    token stays a copy, so ``multiplicity`` weighs every block's keys, as in the reference)."""
    out = intervals(X)
    for layer in weights.blocks:
        out = block(out, mask, layer, multiplicity)
    return out


def merged(weights: Any) -> tuple[np.ndarray, np.ndarray]:
    """Interval enclosures of W_QK = W_Q W_K^T / sqrt(d_K) and W_VO = W_V W_O (Eqs. 10, 11), (H, ., .)."""
    Q, K, V, O = (intervals(np.asarray(w, dtype=np.float64)) for w in weights.tensors())
    scale = sqrt(num(weights.d_key))
    return Q @ K.transpose(0, 2, 1) / scale, V @ O


def merged_errors(target: Any, source: Any) -> tuple[list[Any], list[Any]]:
    """Per head, enclosures of e_QK^(j) = ||dW_QK^(j)||_max and e_VO^(j) = ||dW_VO^(j)||_max.

    A head whose two factors the source reproduces exactly has error exactly 0 (as in
    ``theorem9.merged_deltas``), not the width of two enclosures of the same product."""
    (t_qk, t_vo), (s_qk, s_vo) = merged(target), merged(source)
    e_qk, e_vo = [], []
    for j in range(target.heads):
        same_qk = np.array_equal(target.W_Q[j], source.W_Q[j]) and np.array_equal(target.W_K[j], source.W_K[j])
        same_vo = np.array_equal(target.W_V[j], source.W_V[j]) and np.array_equal(target.W_O[j], source.W_O[j])
        e_qk.append(num(0) if same_qk else max_abs(t_qk[j] - s_qk[j]))
        e_vo.append(num(0) if same_vo else max_abs(t_vo[j] - s_vo[j]))
    return e_qk, e_vo


def gap(run: Callable[[Any], np.ndarray], target: Any, source: Any) -> Any:
    """max_i ||run(source)_i - run(target)_i||."""
    return hull_max(row_norms(run(source) - run(target)))


def instance_gap(forward: Callable[..., np.ndarray], instance: dict[str, Any], target: Any, source: Any) -> Any:
    """``gap`` of ``forward(X, mask, weights, multiplicity)`` at the instance's tokens ``X``, ``mask``
    and token multiplicities (where it carries them: every field of the instance is honoured)."""
    X = np.asarray(instance["X"], dtype=np.float64)
    mask = np.asarray(instance["mask"])
    counts = instance.get("multiplicity")
    return gap(lambda w: forward(X, mask, w, counts), target, source)
