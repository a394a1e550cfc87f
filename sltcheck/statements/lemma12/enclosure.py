"""Interval enclosure (see :mod:`sltcheck.harness.interval_verdict`) of Lemma 12:

``lemma12``: measured (max_i ||Attn_T(x_i; X) - Attn_T(x'_i; X')||), the bounds
  ``as-stated`` and ``key-scaled`` and the mutant ``value-term-only``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sltcheck.numerics.intervals import block, expm1, hull_max, mha, num, row_norms, scalar, sqrt


def input_shift(instance: dict[str, Any], with_block: bool) -> Any:
    """max_i ||Attn_T(x_i; X) - Attn_T(x'_i; X')|| (or Blk_T): ``_lipschitz.output_shift``."""
    from sltcheck.model.weights import BlockWeights
    from sltcheck.statements.shared import lipschitz as _lipschitz

    mask = np.asarray(instance["mask"])
    counts = instance.get("multiplicity")  # token k counted n_k times, as the point evaluation does
    attention = _lipschitz.target(instance)
    if with_block:
        weights = BlockWeights(attention, _lipschitz.fc(instance))
        outputs = [block(np.asarray(instance[k], dtype=np.float64), mask, weights, counts)
                   for k in ("X", "X_perturbed")]
    else:
        outputs = [mha(np.asarray(instance[k], dtype=np.float64), mask, attention, counts)
                   for k in ("X", "X_perturbed")]
    return hull_max(row_norms(outputs[0] - outputs[1]))


def measured(instance: dict[str, Any]) -> Any:
    return input_shift(instance, with_block=False)


def lipschitz_bound(factor: float, eps_weight: float, *, key_scaled: bool = False,
                     include_alpha_term: bool = True) -> Callable[[dict[str, Any]], Any]:
    """factor H sqrt(d1) (alpha (exp(4 alpha eps_max [/ sqrt(d_K)]) - 1) + w eps_max)
    (``_lipschitz.lipschitz_bound`` with its default exponent 4)."""

    def bound(instance: dict[str, Any]) -> Any:
        heads, _, d_key = np.asarray(instance["W_Q"]).shape
        d1, alpha, eps = (scalar(instance[k]) for k in ("d1", "alpha", "eps_max"))
        arg = 4 * alpha * eps / (sqrt(num(int(d_key))) if key_scaled else 1)
        soft = alpha * expm1(arg) if include_alpha_term else num(0)
        return num(factor) * heads * sqrt(d1) * (soft + num(eps_weight) * eps)

    return bound


BOUNDS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "as-stated": lipschitz_bound(1.0, 1.0),
    "key-scaled": lipschitz_bound(1.0, 1.0, key_scaled=True),
    "value-term-only": lipschitz_bound(1.0, 1.0, include_alpha_term=False),
}
