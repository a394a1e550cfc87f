"""Interval enclosure (see :mod:`sltcheck.harness.interval_verdict`) of Lemma 8:

``lemma8``: measured (max over rows of ||(sigma(l_i) - sigma(l_i + eps_i)) X||), the bound
  ``as-stated`` and the mutant ``exponent-quartered``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sltcheck.numerics.intervals import expm1, hull_max, intervals, num, row_norms, scalar, softmax, sqrt


def measured(instance: dict[str, Any]) -> Any:
    logits = intervals(np.asarray(instance["logits"], dtype=np.float64))
    mask = np.asarray(instance["mask"])
    pert = intervals(np.asarray(instance["perturbation"], dtype=np.float64))
    X = intervals(np.asarray(instance["X"], dtype=np.float64))
    counts = instance.get("multiplicity")  # token k counted n_k times, as the point evaluation does
    p = softmax(logits, mask, counts)
    q = softmax(logits + pert, mask, counts)
    return hull_max(row_norms((p - q) @ X))


def bound(factor: float, exponent: float) -> Callable[[dict[str, Any]], Any]:
    def bound(instance: dict[str, Any]) -> Any:
        d1, alpha, e = (scalar(instance[k]) for k in ("d1", "alpha", "eps_max"))
        return num(factor) * sqrt(d1) * alpha * expm1(num(exponent) * e)

    return bound


BOUNDS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "as-stated": bound(1.0, 2.0),
    "exponent-quartered": bound(1.0, 0.5),
}
