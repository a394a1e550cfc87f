"""Interval enclosure (see :mod:`sltcheck.certified`) of Theorem 11:

``theorem11``: measured (max_i ||Blk_S(x_i) - Blk_T(x_i)||), the bounds ``as-proven``,
  ``theorem10-literal``, ``theorem10-scaled`` and ``as-stated`` (Theorem 9's as-proven chain,
  Eq. 19's r, Theorem 10 in Pensia's deterministic form or the two readings, F_T 1-Lipschitz),
  and the mutants ``half``, ``single-attention-term``, ``no-fc-term``, ``fc-input-alpha``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sltcheck.numerics.intervals import (
    NotEnclosed,
    as_interval,
    block,
    chain_expm1,
    gap,
    hull_max,
    intervals,
    max_abs,
    merged_errors,
    num,
    power,
    scalar,
    sqrt,
    stated_or_proven,
)
from sltcheck.statements.theorem9.enclosure import chain as t9_chain
from sltcheck.statements.theorem9.enclosure import largest


def fc_layer_errors(target: Any, source: Any) -> list[Any]:
    """Per target layer, an enclosure of e_l = max(||P - W_l||_max, ||N - W_l||_max)
    (``theorem11.fc_layer_errors`` for single-input source pairs).

    Raises :class:`NotEnclosed` for a pair that is not single-input: its generic delta is
    spectral. Raises ValueError for a source that is not 2L layers of matching shapes."""
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
            raise NotEnclosed(f"source FC layers {2 * index}, {2 * index + 1} are not single-input: Theorem 10's "
                              "generic delta ||A_2|| ||A_1|| + ||W_l|| needs spectral norms, not enclosed here")
        # A_2 ReLU(A_1 x) = P ReLU(x) - N ReLU(-x): units of positive / negative incoming weight
        positive, negative = intervals(np.where(A1 > 0, A1, 0.0)), intervals(np.where(A1 < 0, A1, 0.0))
        a2, w = intervals(A2), intervals(W)
        errors.append(hull_max([max_abs(a2 @ positive - w), max_abs(a2 @ negative - w)]))
    return errors


def fc_bound(target: Any, source: Any, input_norm: Any, reading: str = "pensia") -> Any:
    """``theorem11.fc_bound`` in mode "as-proven": sup over ||z|| <= input_norm of ||F_S(z) - F_T(z)||."""
    errors = fc_layer_errors(target, source)
    r = as_interval(input_norm)
    if reading != "pensia":
        L = len(target.layers)
        e10 = hull_max([4 * L * W.shape[0] * W.shape[1] * e for W, e in zip(target.layers, errors, strict=True)])
        if reading == "theorem10-literal":
            return chain_expm1(r * e10 / 2)
        return r * chain_expm1(e10 / 2)
    gap = num(0)
    for W, e in zip(target.layers, errors, strict=True):
        delta = sqrt(num(W.shape[0] * W.shape[1])) * e  # sqrt(d_l d_{l+1}) e_l
        gap = gap + delta * (r + gap)  # ||W_l|| <= 1: the input norm stays r
    return gap


def chain(target: Any, source: Any, token_bound: Any, reading: str = "pensia") -> dict[str, Any]:
    """``theorem11.chain`` in mode "as-proven": A (Theorem 9), r (Eq. 19), the FC term, total = FC + 2A."""
    A = t9_chain(target.attention, source.attention, token_bound)
    a = as_interval(token_bound)
    H, root = target.attention.heads, sqrt(num(target.attention.d_in))
    r = hull_max([3 * a * H * root, A + a * (H * root + 1)])  # Eq. 19
    fc_term = fc_bound(target.fc, source.fc, r, reading)
    return {"attention": A, "fc_input": r, "fc": fc_term, "total": fc_term + A + A}  # F_T 1-Lipschitz


def eps_star(target: Any, source: Any, alpha: Any) -> Any:
    """``theorem11.eps_star``: max(32 H a^3 d1^{3/2} e_QK, 8 H a d1^{3/2} e_VO, 24 a L H sqrt(d1) d_l d_{l+1} e_l)."""
    e_qk, e_vo = merged_errors(target.attention, source.attention)
    errors = fc_layer_errors(target.fc, source.fc)
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

    X = np.asarray(instance["X"], dtype=np.float64)
    mask = np.asarray(instance["mask"])
    return gap(lambda w: block(X, mask, w), t11.target_of(instance), t11.source_of(instance))


def bound(variant: str) -> Callable[[dict[str, Any]], Any]:
    """A variant (or mutant) of ``theorem11``: the chain's parts combined as the module does."""

    def bound(instance: dict[str, Any]) -> Any:
        from sltcheck.statements import theorem11 as t11

        target, source, alpha = t11.target_of(instance), t11.source_of(instance), scalar(instance["alpha"])
        if variant.startswith("theorem10-"):
            return chain(target, source, alpha, variant)["total"]
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
    "as-proven", "theorem10-literal", "theorem10-scaled", "as-stated",
    "half", "single-attention-term", "no-fc-term", "fc-input-alpha")}
