"""Interval enclosure (see :mod:`sltcheck.harness.interval_verdict`) of Lemma 7 (and Lemma 4, which reuses it):

``lemma7``: every side is the error of binary masks, recomputed here from the masks exactly in
the backend's arithmetic (the solvers only choose the masks; their objectives are never used):

- measured, min over ALL masks of ||W - (W2⊙M2)(W1⊙M1)||_max: [the enumeration's certified lower
  bound (``brute_force.best_error_lower_bound``, a rounding analysis of the float64 optimum), the
  enclosed error of the masks attaining that optimum (``brute_force.best_masks``)];
- ``construction`` (default): the error of the construction's masks (``lemma7.masks``);
- the mutants ``bound-halved``, ``supremum-0.97`` (that error x 0.5, x 0.97) and
  ``no-structured-mask`` (per entry the solver's best subset of all n products, its error
  |W[i, j] - sum of the subset| enclosed, the max over entries).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sltcheck.numerics.intervals import ends, hull_max, intervals, max_abs, num, up_to


def mask_error(W: np.ndarray, W1: np.ndarray, W2: np.ndarray, M1: np.ndarray, M2: np.ndarray) -> Any:
    """Enclosure of ||W - (W2⊙M2)(W1⊙M1)||_max (masks rounded to {0, 1} first)."""
    M1, M2 = (np.rint(np.asarray(m, dtype=np.float64)).clip(0, 1) for m in (M1, M2))
    return max_abs(intervals(W) - intervals(W2 * M2) @ intervals(W1 * M1))


def measured(instance: dict[str, Any]) -> Any:
    from sltcheck.statements.lemma7 import _arrays, brute_force

    W, W1, W2 = _arrays(instance)
    best = mask_error(W, W1, W2, *brute_force.best_masks(W, W1, W2))
    upper = ends(best)[1]
    lower = min(ends(num(brute_force.best_error_lower_bound(W, W1, W2)))[0], upper)
    return up_to(lower, best)


def construction(instance: dict[str, Any]) -> Any:
    from sltcheck.statements.lemma7 import _arrays, masks

    return mask_error(*_arrays(instance), *masks(instance))


def scaled(factor: float) -> Callable[[dict[str, Any]], Any]:
    def bound(instance: dict[str, Any]) -> Any:
        return num(factor) * construction(instance)

    return bound


def unstructured(instance: dict[str, Any]) -> Any:
    """``lemma7.unstructured_optimum``: per entry the solver's subset of the n products W2[i, k] W1[k, j]."""
    from sltcheck.pruning.subset_sum import solve_subset_sum
    from sltcheck.statements.lemma7 import _arrays

    W, W1, W2 = _arrays(instance)
    d2, d1 = W.shape
    pairs = [(i, j) for i in range(d2) for j in range(d1)]
    products = np.array([W2[i, :] * W1[:, j] for i, j in pairs]).reshape(len(pairs), W1.shape[0])
    chosen = solve_subset_sum(np.array([W[i, j] for i, j in pairs]), products, solver="mitm").masks
    errors = []
    for p, (i, j) in enumerate(pairs):
        keep = np.rint(np.asarray(chosen[p], dtype=np.float64)).clip(0, 1)
        total = (intervals(W2[i, :] * keep) * intervals(W1[:, j])).sum() if keep.any() else num(0)
        errors.append(abs(num(float(W[i, j])) - total))
    return hull_max(errors) if errors else num(0)


BOUNDS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "construction": construction,
    "bound-halved": scaled(0.5),
    "supremum-0.97": scaled(0.97),
    "no-structured-mask": unstructured,
}
