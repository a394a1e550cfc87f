"""Interval enclosure (see :mod:`sltcheck.harness.interval_verdict`) of Theorem 11:

``theorem11``: measured (max_i ||Blk_S(x_i) - Blk_T(x_i)||), the bounds ``as-proven``,
  ``theorem10-literal``, ``theorem10-scaled`` and ``as-stated`` (Theorem 9's as-proven chain,
  Eq. 19's r, Theorem 10 in Pensia's deterministic form or the two readings, F_T 1-Lipschitz),
  ``tight`` and ``sharp`` (Theorem 9's spectral chain at the largest token norm, the per-layer
  spectral errors, prod_l ||W_l||: spectral norms enclosed by
  :func:`~sltcheck.numerics.singular_values.spectral_norm`), and the mutants ``half``,
  ``single-attention-term``, ``no-fc-term``, ``fc-input-alpha``. A source FC pair that is not
  single-input takes Theorem 10's generic delta ||A_2|| ||A_1|| + ||W_l||, spectral too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sltcheck.numerics.intervals import (
    as_interval,
    block,
    chain_expm1,
    hull_max,
    hull_min,
    instance_gap,
    intervals,
    max_abs,
    merged,
    merged_errors,
    num,
    power,
    scalar,
    spectral_norm,
    sqrt,
    stated_or_proven,
)
from sltcheck.statements.theorem9.enclosure import chain as t9_chain
from sltcheck.statements.theorem9.enclosure import largest, largest_token_norm, spectral_chain


def fc_layer_errors(target: Any, source: Any, mode: str = "as-proven") -> list[dict[str, Any]]:
    """Per target layer, as ``theorem11.fc_layer_errors``: "e" (for a single-input source pair
    max(||P - W_l||_max, ||N - W_l||_max), else Theorem 10's generic ||A_2|| ||A_1|| + ||W_l||)
    and the relative errors "delta" (mode "as-proven": sqrt(d_l d_{l+1}) e) or "delta_first" /
    "delta_later" (modes "tight", "sharp": the spectral norms of [P - W, N - W] and of P - W,
    each capped by its max-norm estimate, as the point code takes the min).

    Spectral norms need python-flint (:class:`~sltcheck.numerics.enclosures.NotEnclosed` without it). Raises
    ValueError for a source that is not 2L layers of matching shapes."""
    from sltcheck.statements import theorem11 as t11

    if len(source.layers) != 2 * len(target.layers):
        raise ValueError(f"pruned_source must have 2L = {2 * len(target.layers)} layers, got {len(source.layers)}")
    errors = []
    for index, W in enumerate(target.layers):
        A1, A2 = (np.asarray(m, dtype=np.float64) for m in source.layers[2 * index: 2 * index + 2])
        if A1.shape[1] != W.shape[1] or A2.shape[0] != W.shape[0]:
            raise ValueError(f"source layers {2 * index}, {2 * index + 1} must map {W.shape[1]} to {W.shape[0]}, "
                             f"got {A1.shape} and {A2.shape}")
        if not t11.single_input(A1, A2):
            generic = spectral_norm(A2) * spectral_norm(A1) + spectral_norm(W)
            errors.append({"e": generic, "delta": generic, "delta_first": generic, "delta_later": generic})
            continue
        # A_2 ReLU(A_1 x) = P ReLU(x) - N ReLU(-x): units of positive / negative incoming weight
        positive, negative = intervals(np.where(A1 > 0, A1, 0.0)), intervals(np.where(A1 < 0, A1, 0.0))
        a2, w = intervals(A2), intervals(W)
        plus, minus = a2 @ positive - w, a2 @ negative - w
        e_plus = max_abs(plus)
        e = hull_max([e_plus, max_abs(minus)])
        root = sqrt(num(W.shape[0] * W.shape[1]))
        entry = {"e": e, "delta": root * e}
        if mode != "as-proven":
            entry["delta_first"] = hull_min([spectral_norm(np.concatenate([plus, minus], axis=1)), root * e])
            entry["delta_later"] = hull_min([spectral_norm(plus), root * e_plus])
        errors.append(entry)
    return errors


def fc_bound(target: Any, source: Any, input_norm: Any, reading: str = "pensia", mode: str = "as-proven") -> Any:
    """``theorem11.fc_bound``: sup over ||z|| <= input_norm of ||F_S(z) - F_T(z)||."""
    errors = fc_layer_errors(target, source, mode)
    r = as_interval(input_norm)
    if reading != "pensia":
        L = len(target.layers)
        e10 = hull_max([4 * L * W.shape[0] * W.shape[1] * err["e"]
                        for W, err in zip(target.layers, errors, strict=True)])
        if reading == "theorem10-literal":
            return chain_expm1(r * e10 / 2)
        return r * chain_expm1(e10 / 2)
    gap, norm = num(0), r
    for index, (W, err) in enumerate(zip(target.layers, errors, strict=True)):
        if mode == "as-proven":
            s, delta = num(1), err["delta"]  # ||W_l|| <= 1: the input norm stays r
        else:
            s, delta = spectral_norm(W), err["delta_first"] if index == 0 else err["delta_later"]
        gap = s * gap + delta * (norm + gap)
        norm = s * norm
    return gap


def fc_lipschitz(target: Any, mode: str) -> Any:
    """F_T's Lipschitz constant as the chain takes it: 1 (as-proven), else prod_l ||W_l||."""
    out = num(1)
    if mode != "as-proven":
        for W in target.layers:
            out = out * spectral_norm(W)
    return out


def chain(target: Any, source: Any, token_bound: Any, reading: str = "pensia",
          mode: str = "as-proven") -> dict[str, Any]:
    """``theorem11.chain``: A (Theorem 9), r (Eq. 19, or a + A + [sqrt(d1)] a sum_j ||W_VO^(j)||
    in modes "tight"/"sharp"), the FC term, total = FC + A + Lip(F_T) A."""
    a = as_interval(token_bound)
    H, root = target.attention.heads, sqrt(num(target.attention.d_in))
    if mode == "as-proven":
        A = t9_chain(target.attention, source.attention, token_bound)
        r = hull_max([3 * a * H * root, A + a * (H * root + 1)])  # Eq. 19
    else:
        A = spectral_chain(target.attention, source.attention, a, mode == "tight")
        _, vo = merged(target.attention)
        values = sum((spectral_norm(m) for m in vo), num(0))
        r = a + A + (root if mode == "tight" else num(1)) * a * values
    fc_term = fc_bound(target.fc, source.fc, r, reading, mode)
    lip = fc_lipschitz(target.fc, mode)
    return {"attention": A, "fc_input": r, "fc": fc_term, "lipschitz": lip, "total": fc_term + A + lip * A}


def eps_star(target: Any, source: Any, alpha: Any) -> Any:
    """``theorem11.eps_star``: max(32 H a^3 d1^{3/2} e_QK, 8 H a d1^{3/2} e_VO, 24 a L H sqrt(d1) d_l d_{l+1} e_l)."""
    e_qk, e_vo = merged_errors(target.attention, source.attention)
    errors = [err["e"] for err in fc_layer_errors(target.fc, source.fc)]
    a = as_interval(alpha)
    H, L = target.attention.heads, len(target.fc.layers)
    d1, d2 = num(target.attention.d_in), num(target.attention.d_out)
    root = sqrt(d1)
    qk = 32 * H * power(a, 3) * d1 * root * largest(e_qk)
    vo = 8 * H * a * d1 * sqrt(d2) * largest(e_vo)
    ff = hull_max([24 * a * L * H * root * W.shape[0] * W.shape[1] * e
                   for W, e in zip(target.fc.layers, errors, strict=True)])
    return hull_max([qk, vo, ff])


def measured(instance: dict[str, Any]) -> Any:
    from sltcheck.statements import theorem11 as t11

    return instance_gap(block, instance, t11.target_of(instance), t11.source_of(instance))


def bound(variant: str) -> Callable[[dict[str, Any]], Any]:
    """A variant (or mutant) of ``theorem11``: the chain's parts combined as the module does."""

    def bound(instance: dict[str, Any]) -> Any:
        from sltcheck.statements import theorem11 as t11

        target, source, alpha = t11.target_of(instance), t11.source_of(instance), scalar(instance["alpha"])
        if variant.startswith("theorem10-"):
            return chain(target, source, alpha, variant)["total"]
        if variant in ("tight", "sharp"):
            return chain(target, source, largest_token_norm(instance), mode=variant)["total"]
        parts = chain(target, source, alpha)
        if variant == "as-stated":
            return stated_or_proven(eps_star(target, source, alpha), lambda: parts["total"])
        if variant == "half":
            return parts["total"] / 2
        if variant == "single-attention-term":
            return parts["fc"] + parts["attention"]
        if variant == "no-fc-term":
            return 2 * parts["attention"]
        if variant == "fc-input-alpha":
            return fc_bound(target.fc, source.fc, alpha) + 2 * parts["attention"]
        return parts["total"]  # as-proven

    return bound


BOUNDS: dict[str, Callable[[dict[str, Any]], Any]] = {name: bound(name) for name in (
    "as-proven", "theorem10-literal", "theorem10-scaled", "as-stated", "tight", "sharp",
    "half", "single-attention-term", "no-fc-term", "fc-input-alpha")}
