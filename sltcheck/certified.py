"""Certified verdicts: "measured <= bound" decided by interval arithmetic, never by rounding.

Both sides are enclosed in outward-rounded intervals (``mpmath.iv``, through the interval mode
of :mod:`sltcheck.precision`): every float64 field of an instance is converted exactly to a
point interval, every +, -, *, /, exp, sqrt rounds outward, so each computed interval contains
the exact real value of the side. Then (:func:`decide_interval`):

- "holds"     if sup(measured) <= inf(bound): measured <= bound is proved;
- "violated"  if inf(measured) >  sup(bound): measured > bound is proved;
- "undecided" otherwise (the intervals overlap: the sides are too close for this precision,
  or equal as real numbers, as on the instance built in the tests to sit on the bound).

What is enclosed (``evaluate(statement, instance, variant, dps)``):

- ``lemma8``: measured (max over rows of ||(sigma(l_i) - sigma(l_i + eps_i)) X||) and the
  bound ``as-stated`` and the mutant ``exponent-quartered``.
- ``theorem9``: measured (max_i ||Attn_S(x_i) - Attn_T(x_i)||, the per-head MHA of
  ``reference.mha`` re-stated here for intervals) and the bounds ``as-proven`` and
  ``as-stated`` (the chain of the module docstring, from the merged deltas computed in
  intervals (:func:`merged`): max-norms, sqrt, exp).

The softmax and the MHA are re-stated here (:func:`softmax`, :func:`mha`) rather than run
through ``reference`` in interval mode because ``validation.check_array`` rejects intervals of
positive width (``mpmath.isfinite`` refuses them; so does ``MergedMHA``), and
``reference.masked_softmax`` does run in the interval mode on point inputs (tested).
- Not enclosed: Theorem 9's ``tight``/``sharp`` (they need spectral norms: an enclosure of the
  largest singular value, e.g. Rayleigh quotient below and Ostrowski + Gershgorin above, is not
  implemented), and Theorems 11/14 (``reference.fc`` applies ReLU through a comparison, which
  an interval that straddles 0 cannot decide; an interval ReLU hook, ``max(0, x)`` as
  ``[max(0, lo), max(0, hi)]``, in ``reference.fc`` would make them feasible), and Lemmas 5, 12,
  13 (modules not present when this was written).

Norms are enclosed as sqrt(sum x_k^2) with x_k^2 evaluated as an interval square (never
negative); max over rows as the interval hull [max of lower ends, max of upper ends].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np
from mpmath import iv, libmp

from sltcheck import precision
from sltcheck.validation import check_dps

DEFAULT_DPS = 30
OUTCOMES = ("holds", "violated", "undecided")


def _as_interval(value: object) -> Any:
    if isinstance(value, iv.mpf):
        return value
    if isinstance(value, (tuple, list)) and len(value) == 2:
        lo, hi = iv.mpf(value[0]), iv.mpf(value[1])
        return iv.mpf([lo.a, hi.b])
    return iv.mpf(value)


def decide_interval(measured_interval: object, bound_interval: object) -> str:
    """"holds" | "violated" | "undecided" from enclosures of the two sides.

    Each argument is an ``mpmath.iv.mpf``, a (low, high) pair, or a number (a point interval).
    """
    m, b = _as_interval(measured_interval), _as_interval(bound_interval)
    (m_lo, m_hi), (b_lo, b_hi) = m._mpi_, b._mpi_  # raw endpoints: compared exactly
    for name, ends in (("measured_interval", (m_lo, m_hi)), ("bound_interval", (b_lo, b_hi))):
        if any(e in (libmp.finf, libmp.fninf, libmp.fnan) for e in ends):
            raise ValueError(f"{name} must be a finite interval, got {m if name.startswith('m') else b}")
    if libmp.mpf_le(m_hi, b_lo):
        return "holds"
    if libmp.mpf_gt(m_lo, b_hi):
        return "violated"
    return "undecided"


# --- interval helpers -----------------------------------------------------------------------------


def ends(x: object) -> tuple[Any, Any]:
    """The endpoints of an interval as mpf, exactly (at the precision of their mantissas)."""
    lo, hi = _as_interval(x)._mpi_
    bits = max(lo[3], hi[3], 53) + 10
    with mpmath.workprec(bits):
        return mpmath.mpf(lo), mpmath.mpf(hi)


def hull_max(values: Sequence[Any]) -> Any:
    """An enclosure of max(x_1, ..., x_n) for intervals x_k: [max lower ends, max upper ends]."""
    values = [_as_interval(v) for v in values]
    if not values:
        raise ValueError("hull_max needs at least one interval")
    pairs = [ends(v) for v in values]
    low, high = max(p[0] for p in pairs), max(p[1] for p in pairs)
    return iv.mpf([low, high])


def square(x: Any) -> Any:
    return x**2  # iv power: [0, .] for an interval straddling zero


def norm(vector: np.ndarray) -> Any:
    """Enclosure of the Euclidean norm of a 1-D object array of intervals."""
    total = iv.mpf(0)
    for x in vector:
        total += square(x)
    return iv.sqrt(total)


def row_norms(matrix: np.ndarray) -> list[Any]:
    return [norm(row) for row in np.asarray(matrix, dtype=object).reshape(-1, matrix.shape[-1])]


def max_abs(array: np.ndarray) -> Any:
    return hull_max([abs(x) for x in np.asarray(array, dtype=object).flat]) if array.size else iv.mpf(0)


def expm1(x: Any) -> Any:
    return iv.exp(x) - 1


def width_digits(x: Any) -> float:
    """Relative width of an interval, as a number of correct significant digits."""
    lo, hi = ends(x)
    if lo == hi:
        return float("inf")
    with mpmath.workdps(30):
        scale = max(abs(lo), abs(hi))
        return float(-mpmath.log10((hi - lo) / scale)) if scale > 0 else 0.0


# --- statements -----------------------------------------------------------------------------------


def softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Interval enclosure of the masked softmax along the last axis (Section 2.2).

    Shifted by the midpoint of the first attended logit's enclosure (any shift gives the
    same real value; a point shift keeps the enclosure tight)."""
    logits = np.asarray(logits, dtype=object)
    attended = np.broadcast_to(np.asarray(mask).astype(bool), logits.shape)
    out = np.empty(logits.shape, dtype=object)
    for index in np.ndindex(logits.shape[:-1]):
        row, keep = logits[index], attended[index]
        if not keep.any():
            raise ValueError(f"mask row {index} attends to no token")
        lo, hi = ends(row[np.flatnonzero(keep)[0]])
        shift = iv.mpf((lo + hi) / 2)
        weights = [iv.exp(x - shift) if k else iv.mpf(0) for x, k in zip(row, keep, strict=True)]
        total = sum(weights[1:], weights[0])
        out[index] = [w / total for w in weights]
    return out


def mha(X: np.ndarray, mask: np.ndarray, weights: Any) -> np.ndarray:
    """Interval enclosure of ``reference.mha`` (per-head form, Eqs. 1, 2): (T, d2)."""
    Xi = precision.to_iv(np.asarray(X, dtype=np.float64))
    Q, K, V, O = (precision.to_iv(np.asarray(w, dtype=np.float64)) for w in weights.tensors())
    scale = iv.sqrt(iv.mpf(weights.d_key))
    heads = []
    for j in range(weights.heads):
        scores = (Xi @ Q[j]) @ (Xi @ K[j]).T / scale
        heads.append(softmax(scores, mask) @ (Xi @ V[j]) @ O[j])
    return np.asarray(sum(heads[1:], heads[0]), dtype=object)


def _lemma8_measured(instance: dict[str, Any]) -> Any:
    logits = precision.to_iv(np.asarray(instance["logits"], dtype=np.float64))
    mask = np.asarray(instance["mask"])
    pert = precision.to_iv(np.asarray(instance["perturbation"], dtype=np.float64))
    X = precision.to_iv(np.asarray(instance["X"], dtype=np.float64))
    p = softmax(logits, mask)
    q = softmax(logits + pert, mask)
    return hull_max(row_norms((p - q) @ X))


def _lemma8_bound(factor: float, exponent: float) -> Callable[[dict[str, Any]], Any]:
    def bound(instance: dict[str, Any]) -> Any:
        d1, alpha, e = (iv.mpf(float(instance[k])) for k in ("d1", "alpha", "eps_max"))
        return iv.mpf(factor) * iv.sqrt(d1) * alpha * expm1(iv.mpf(exponent) * e)

    return bound


def _t9_parts(instance: dict[str, Any]) -> tuple[Any, Any, np.ndarray, np.ndarray]:
    from sltcheck.statements import theorem9 as t9

    target, source = t9.target_of(instance), t9.source_of(instance)
    (t_qk, t_vo), (s_qk, s_vo) = merged(target), merged(source)
    return target, source, t_qk - s_qk, t_vo - s_vo


def merged(weights: Any) -> tuple[np.ndarray, np.ndarray]:
    """Interval enclosures of W_QK = W_Q W_K^T / sqrt(d_K) and W_VO = W_V W_O (Eqs. 10, 11), (H, ., .)."""
    Q, K, V, O = (precision.to_iv(np.asarray(w, dtype=np.float64)) for w in weights.tensors())
    scale = iv.sqrt(iv.mpf(weights.d_key))
    return Q @ K.transpose(0, 2, 1) / scale, V @ O


def _t9_measured(instance: dict[str, Any]) -> Any:
    from sltcheck.statements import theorem9 as t9

    X = np.asarray(instance["X"], dtype=np.float64)
    mask = np.asarray(instance["mask"])
    gap = mha(X, mask, t9.source_of(instance)) - mha(X, mask, t9.target_of(instance))
    return hull_max(row_norms(gap))


def _t9_as_proven(instance: dict[str, Any]) -> Any:
    target, _, dqk, dvo = _t9_parts(instance)
    a = iv.mpf(float(instance["alpha"]))
    d1, d2 = iv.mpf(target.d_in), iv.mpf(target.d_out)
    total = iv.mpf(0)
    for j in range(target.heads):
        eps_j = a * a * d1 * max_abs(dqk[j])
        total += iv.sqrt(d1) * a * expm1(2 * eps_j) + d1 * iv.sqrt(d2) * a * max_abs(dvo[j])
    return total


def _t9_as_stated(instance: dict[str, Any]) -> Any:
    target, _, dqk, dvo = _t9_parts(instance)
    a, h = iv.mpf(float(instance["alpha"])), iv.mpf(target.heads)
    d1, d2 = iv.mpf(target.d_in), iv.mpf(target.d_out)
    qk = 8 * h * a**3 * d1 * iv.sqrt(d1) * hull_max([max_abs(m) for m in dqk])
    vo = 2 * h * a * d1 * iv.sqrt(d2) * hull_max([max_abs(m) for m in dvo])
    star = hull_max([qk, vo])
    lo, hi = ends(star)
    if hi < 1:
        return star
    if lo >= 1:
        return _t9_as_proven(instance)
    # undecided whether eps* < 1: the variant is one of the two; enclose both
    other = _t9_as_proven(instance)
    o_lo, o_hi = ends(other)
    return iv.mpf([min(lo, o_lo), max(hi, o_hi)])


MEASURED: dict[str, Callable[[dict[str, Any]], Any]] = {"lemma8": _lemma8_measured, "theorem9": _t9_measured}
BOUNDS: dict[str, dict[str, Callable[[dict[str, Any]], Any]]] = {
    "lemma8": {"as-stated": _lemma8_bound(1.0, 2.0), "exponent-quartered": _lemma8_bound(1.0, 0.5)},
    "theorem9": {"as-proven": _t9_as_proven, "as-stated": _t9_as_stated},
}


def supported() -> dict[str, tuple[str, ...]]:
    """Statement -> the variants (and mutants) whose bound is enclosed here."""
    return {name: tuple(bounds) for name, bounds in BOUNDS.items()}


def evaluate(statement: str, instance: dict[str, Any], variant: str | None = None,
             dps: int = DEFAULT_DPS) -> dict[str, Any]:
    """Enclosures of measured and bound for ``instance`` and the certified outcome.

    ``variant`` defaults to the statement module's DEFAULT_VARIANT (as-stated for lemma8).
    """
    if statement not in BOUNDS:
        raise ValueError(f"statement must be one of {', '.join(BOUNDS)} (interval evaluation), got {statement!r}")
    if variant is None:
        variant = "as-stated" if statement == "lemma8" else "as-proven"
    if variant not in BOUNDS[statement]:
        raise ValueError(f"variant must be one of {', '.join(BOUNDS[statement])} for {statement}, got {variant!r}")
    dps = check_dps(dps)
    with precision.interval_arithmetic(dps):
        m = MEASURED[statement](instance)
        b = BOUNDS[statement][variant](instance)
        outcome = decide_interval(m, b)
    return {"statement": statement, "variant": variant, "dps": dps, "measured": m, "bound": b,
            "outcome": outcome, "certified": outcome != "undecided",
            "measured_digits": width_digits(m), "bound_digits": width_digits(b)}


def as_dict(result: dict[str, Any]) -> dict[str, Any]:
    """JSON-ready: intervals as [low, high] strings (20 digits, outward)."""
    def pair(x: Any) -> list[str]:
        lo, hi = ends(x)
        return [mpmath.nstr(lo, 20), mpmath.nstr(hi, 20)]  # display only (nstr rounds to nearest)

    out = {k: v for k, v in result.items() if k not in ("measured", "bound")}
    out["measured_interval"] = pair(result["measured"])
    out["bound_interval"] = pair(result["bound"])
    return out
