"""Shared evaluation of the input-Lipschitz lemmas (Lemmas 12 and 13): rows of
Attn_T (or Blk_T) at X and at the perturbed X', compared row by row."""

from __future__ import annotations

import math

import mpmath
import numpy as np

from sltcheck.model import reference
from sltcheck.model.weights import BlockWeights, FCWeights, MHAWeights
from sltcheck.numerics import precision
from sltcheck.statement_types import Instance, multiplicity_of


def target(instance: Instance) -> MHAWeights:
    return MHAWeights(
        *(np.asarray(instance[k], dtype=np.float64) for k in ("W_Q", "W_K", "W_V", "W_O"))
    )


def fc(instance: Instance) -> FCWeights:
    return FCWeights(tuple(np.asarray(w, dtype=np.float64) for w in instance["fc_layers"]))  # type: ignore[attr-defined]


def _rows_mha(
    X: np.ndarray, mask: np.ndarray, w: MHAWeights, rows: np.ndarray, dps: int, multiplicity: np.ndarray | None = None
) -> np.ndarray:
    """Attn(x_i; X) for the given rows only, in mpmath (per-head form, Section 2.2; token k counted
    ``multiplicity[k]`` times)."""
    with mpmath.workdps(dps):
        Xm = precision.to_mp(X, dps)
        out = None
        scale = mpmath.sqrt(w.d_key)
        for j in range(w.heads):
            Q = Xm[rows] @ precision.to_mp(w.W_Q[j], dps)
            K = Xm @ precision.to_mp(w.W_K[j], dps)
            V = Xm @ precision.to_mp(w.W_V[j], dps)
            p = reference.masked_softmax(Q @ K.T / scale, mask[rows], dps, multiplicity)
            head = (p @ V) @ precision.to_mp(w.W_O[j], dps)
            out = head if out is None else out + head
        return out  # type: ignore[return-value]


def output_shift(instance: Instance, dps: int | None, *, with_block: bool) -> object:
    """max_i ||Attn_T(x_i) - Attn_T(x'_i)|| (or Blk_T), exact rows in mpmath.

    All rows in float64 first; the rows that can hold the max (at most a few)
    are re-evaluated at dps plus the digits lost to the cancellation
    (about log10(alpha / eps_max)).
    """
    from sltcheck.harness import deciding_rows

    X = np.asarray(instance["X"], dtype=np.float64)
    Xp = np.asarray(instance["X_perturbed"], dtype=np.float64)
    mask = np.asarray(instance["mask"])
    w = target(instance)
    counts = multiplicity_of(instance)
    if with_block:
        weights = BlockWeights(w, fc(instance))
        at_x, at_xp = (reference.block(Y, mask, weights, None, counts) for Y in (X, Xp))
    else:
        at_x, at_xp = (reference.mha(Y, mask, w, None, counts) for Y in (X, Xp))
    scores = np.linalg.norm(at_x - at_xp, axis=1)
    if dps is None:
        return float(scores.max())
    if np.array_equal(X, Xp):
        return mpmath.mpf(0)
    # the scores difference two rounded outputs: where they are at rounding-noise level they
    # cannot tell which rows hold the max, so every row goes to mpmath
    noise = 1e-12 * max(1.0, float(np.abs(at_x).max(initial=0.0)))
    rows = deciding_rows(scores) if scores.max(initial=0.0) > noise else np.arange(len(X))
    alpha, eps = float(instance["alpha"]), float(instance["eps_max"])  # type: ignore[arg-type]
    lost = min(400, max(0, math.ceil(math.log10(alpha) - math.log10(eps)))) if eps > 0 else 0
    work = dps + lost + 5
    with mpmath.workdps(work):
        a = _rows_mha(X, mask, w, rows, work, counts)
        b = _rows_mha(Xp, mask, w, rows, work, counts)
        if with_block:
            ra = a + precision.to_mp(X[rows], work)
            rb = b + precision.to_mp(Xp[rows], work)
            fcw = fc(instance)
            a = reference.fc(ra, fcw, work) + ra
            b = reference.fc(rb, fcw, work) + rb
        worst = max(precision.vector_norm(a - b, axis=-1))
    with mpmath.workdps(dps):
        return +worst


def lipschitz_bound(
    instance: Instance,
    dps: int | None,
    *,
    factor: float,
    eps_weight: float,
    exponent: float = 4.0,
    key_scaled: bool = False,
    include_alpha_term: bool = True,
) -> object:
    """factor H sqrt(d1) (alpha (exp(c alpha eps_max [/ sqrt(d_K)]) - 1) + w eps_max),
    c = ``exponent``, w = ``eps_weight``."""
    H = np.asarray(instance["W_Q"]).shape[0]
    dK = np.asarray(instance["W_Q"]).shape[2]
    if dps is None:
        d1, alpha, eps = float(instance["d1"]), float(instance["alpha"]), float(instance["eps_max"])  # type: ignore[arg-type]
        arg = exponent * alpha * eps / (math.sqrt(dK) if key_scaled else 1.0)
        soft = alpha * (math.expm1(arg) if arg < 700 else math.inf) if include_alpha_term else 0.0
        return factor * H * math.sqrt(d1) * (soft + eps_weight * eps)
    with mpmath.workdps(dps):
        d1, alpha, eps = (mpmath.mpf(instance[k]) for k in ("d1", "alpha", "eps_max"))
        arg = exponent * alpha * eps / (mpmath.sqrt(dK) if key_scaled else 1)
        soft = alpha * mpmath.expm1(arg) if include_alpha_term else 0
        return factor * H * mpmath.sqrt(d1) * (soft + eps_weight * eps)


def supremum_bound(instance: Instance, dps: int | None, *, fraction: float = 1.0, with_block: bool = False) -> object:
    """``fraction`` x the supremum of the measured side at d1 = 1 (proved in
    :mod:`sltcheck.statements.lemma12.worst_case`): H eps_max phi(t) for Lemma 12, 2 eps_max (H phi(t) + 1)
    for Lemma 13 (``with_block``), t = alpha^2 / sqrt(d_K), phi(t) = max(1 + t, 2 t + 1 / (8 t)). An upper
    bound at every eps_max there, the limit as eps_max -> 0: the power table's closed form and, at 0.97,
    the edge mutants (at d1 >= 2 it is a number, not a proved supremum)."""
    H = np.asarray(instance["W_Q"]).shape[0]
    dK = np.asarray(instance["W_Q"]).shape[2]
    if dps is None:
        alpha, eps = float(instance["alpha"]), float(instance["eps_max"])  # type: ignore[arg-type]
        t = alpha * alpha / math.sqrt(dK)
        phi = max(1 + t, 2 * t + 1 / (8 * t))
        return fraction * (2 * eps * (H * phi + 1) if with_block else H * eps * phi)
    with mpmath.workdps(dps):
        alpha, eps = (mpmath.mpf(instance[k]) for k in ("alpha", "eps_max"))
        t = alpha * alpha / mpmath.sqrt(dK)
        phi = max(1 + t, 2 * t + 1 / (8 * t))
        return mpmath.mpf(fraction) * (2 * eps * (H * phi + 1) if with_block else H * eps * phi)
