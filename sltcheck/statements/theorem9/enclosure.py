"""Interval enclosure (see :mod:`sltcheck.harness.interval_verdict`) of Theorem 9:

``theorem9``: measured (max_i ||Attn_S(x_i) - Attn_T(x_i)||, the per-head MHA of
  ``reference.mha`` re-stated here for intervals) and the bounds ``as-proven`` and
  ``as-stated`` (the chain of the module docstring, from the merged deltas computed in
  intervals (:func:`~sltcheck.numerics.intervals.merged`): max-norms, sqrt, exp).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sltcheck.numerics.intervals import (
    as_interval,
    chain_expm1,
    hull_max,
    instance_gap,
    intervals,
    merged,
    merged_errors,
    mha,
    num,
    power,
    row_norms,
    scalar,
    spectral_norm,
    sqrt,
    stated_or_proven,
)


def measured(instance: dict[str, Any]) -> Any:
    from sltcheck.statements import theorem9 as t9

    return instance_gap(mha, instance, t9.target_of(instance), t9.source_of(instance))


def chain(target: Any, source: Any, token_bound: Any) -> Any:
    """Theorem 9's as-proven chain (``theorem9.chain``, "total") at token bound ``token_bound``
    (an interval): sum_j sqrt(d1) a (exp(2 a^2 d1 e_QK^(j)) - 1) + d1 sqrt(d2) a e_VO^(j)."""
    e_qk, e_vo = merged_errors(target, source)
    a = as_interval(token_bound)
    d1, d2 = num(target.d_in), num(target.d_out)
    total = num(0)
    for qk, vo in zip(e_qk, e_vo, strict=True):
        eps_j = a * a * d1 * qk
        total += sqrt(d1) * a * chain_expm1(2 * eps_j) + d1 * sqrt(d2) * a * vo
    return total


def eps_star(target: Any, source: Any, alpha: Any) -> Any:
    """``theorem9.eps_star``: max(8 H a^3 d1^{3/2} max_j e_QK, 2 H a d1 sqrt(d2) max_j e_VO)."""
    e_qk, e_vo = merged_errors(target, source)
    a, h = as_interval(alpha), num(target.heads)
    d1, d2 = num(target.d_in), num(target.d_out)
    qk = 8 * h * power(a, 3) * d1 * sqrt(d1) * largest(e_qk)
    vo = 2 * h * a * d1 * sqrt(d2) * largest(e_vo)
    return hull_max([qk, vo])


def largest(errors: list[Any]) -> Any:
    return hull_max(errors) if errors else num(0)  # no heads: max(..., default=0)


def bound(variant: str) -> Callable[[dict[str, Any]], Any]:
    def bound(instance: dict[str, Any]) -> Any:
        from sltcheck.statements import theorem9 as t9

        target, source, alpha = t9.target_of(instance), t9.source_of(instance), scalar(instance["alpha"])

        def proven() -> Any:
            return chain(target, source, alpha)

        if variant == "as-stated":
            return stated_or_proven(eps_star(target, source, alpha), proven)
        return proven()

    return bound


def spectral_chain(target: Any, source: Any, token_bound: Any, with_root: bool) -> Any:
    """``theorem9.chain`` in mode "tight" (``with_root``) or "sharp": per head
    [sqrt(d1)] a (exp(2 a^2 ||dW_QK||) - 1) ||W_VO|| + [sqrt(d1)] a ||dW_VO||, spectral norms enclosed
    by :func:`~sltcheck.numerics.singular_values.spectral_norm` (arb)."""
    (t_qk, t_vo), (s_qk, s_vo) = merged(target), merged(source)
    a = as_interval(token_bound)
    root = sqrt(num(target.d_in)) if with_root else num(1)
    total = num(0)
    for j in range(target.heads):
        same_qk = np.array_equal(target.W_Q[j], source.W_Q[j]) and np.array_equal(target.W_K[j], source.W_K[j])
        same_vo = np.array_equal(target.W_V[j], source.W_V[j]) and np.array_equal(target.W_O[j], source.W_O[j])
        qk = num(0) if same_qk else spectral_norm(t_qk[j] - s_qk[j])
        vo = num(0) if same_vo else spectral_norm(t_vo[j] - s_vo[j])
        total += root * a * chain_expm1(2 * a * a * qk) * spectral_norm(t_vo[j]) + root * a * vo
    return total


def largest_token_norm(instance: dict[str, Any]) -> Any:
    return hull_max(row_norms(intervals(np.asarray(instance["X"], dtype=np.float64))))


def spectral_bound(with_root: bool) -> Callable[[dict[str, Any]], Any]:
    def bound(instance: dict[str, Any]) -> Any:
        from sltcheck.statements import theorem9 as t9

        return spectral_chain(t9.target_of(instance), t9.source_of(instance), largest_token_norm(instance), with_root)

    return bound


BOUNDS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "as-proven": bound("as-proven"), "as-stated": bound("as-stated"),
    "tight": spectral_bound(True), "sharp": spectral_bound(False),
}
