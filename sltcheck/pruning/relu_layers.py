"""Pensia et al.'s two layers for one (our Theorem 10): masks with (W2 ⊙ M2) ReLU((W1 ⊙ M1) x) ≈ W x.

The units of group j (block structure of Lemma 7's M1) split by the sign of u_k into two independent
subset-sum problems per entry, over v u^+ and v u^- (see :mod:`sltcheck.pruning.construction`'s
docstring); :func:`relu_layer_parts` gives the two matrices A, B with (W2 ⊙ M2) ReLU((W1 ⊙ M1) x) =
A ReLU(x) - B ReLU(-x), and the error max(||W - A||_max, ||W - B||_max) is recomputed from them in mpmath.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from sltcheck.numerics import precision
from sltcheck.numerics.validation import check_dps
from sltcheck.pruning.product_approximation import Solve, as_float, checked_layers, exact_dot_mp
from sltcheck.pruning.subset_sum import MIPOptions, SubsetSumResult


@dataclass(frozen=True)
class ReLULayerApproximation:
    """Masks for W ≈ (W2⊙M2) ReLU((W1⊙M1) x), split by the sign of u (module docstring)."""

    M1: np.ndarray  # bool (n, d_in)
    M2: np.ndarray  # bool (d_out, n)
    group_size: int
    error: float  # max(||W - A||_max, ||W - B||_max), recomputed in mpmath
    error_mp: Any
    solves: tuple[SubsetSumResult, ...]


def approximate_relu_layer(
    W: object,
    W1: object,
    W2: object,
    solver: str = "mitm",
    *,
    remainder: str = "error",
    options: MIPOptions | None = None,
    fallback: str | None = None,
    dps: int = 40,
    workers: int = 1,
) -> ReLULayerApproximation:
    """Pensia et al.'s two-layers-for-one: masks so that W2⊙M2 ReLU(W1⊙M1 x) ≈ W x."""
    how = Solve(solver, options, fallback, remainder, check_dps(dps), workers)
    return relu_layer_masks(W, W1, W2, how)


def relu_layer_masks(
    W: object, W1: object, W2: object, how: Solve, width_name: str = "n (rows of W1)"
) -> ReLULayerApproximation:
    target, first, second, size = checked_layers(W, W1, W2, how.remainder, width_name)
    d_out, d_in = target.shape
    n = first.shape[0]
    wanted = as_float(target)

    M1 = np.zeros((n, d_in), dtype=bool)
    M2 = np.zeros((d_out, n), dtype=bool)
    solves = []
    for j in range(d_in):
        group = np.arange(j * size, (j + 1) * size)
        M1[group, j] = True
        u = first[group, j]
        for units in (group[u > 0], group[u < 0]):  # ReLU(x_j) part, ReLU(-x_j) part
            if units.size == 0:
                continue  # this part stays 0; its error |W[:, j]| is recorded below
            solve = how.run(wanted[:, j], second[:, units] * first[units, j][None])
            M2[:, units] = solve.masks
            solves.append(solve)
    error_mp = _relu_layer_error_mp(target, first, second, M1, M2, how.dps)
    return ReLULayerApproximation(M1, M2, size, float(error_mp), error_mp, tuple(solves))


def relu_layer_parts(
    W1: np.ndarray, W2: np.ndarray, M1: np.ndarray, M2: np.ndarray, dps: int = 40
) -> tuple[np.ndarray, np.ndarray]:
    """A, B (mpmath) with (W2⊙M2) ReLU((W1⊙M1) x) = A ReLU(x) - B ReLU(-x) for block-structured M1.

    A[i, j] = sum over kept k with u_k > 0 of W2[i,k] u_k, B the same over u_k < 0.
    """
    d_out, d_in = W2.shape[0], W1.shape[1]
    with mpmath.workdps(check_dps(dps)):
        parts = np.empty((2, d_out, d_in), dtype=object)
        for j in range(d_in):
            column = np.flatnonzero(M1[:, j])
            for i in range(d_out):
                kept = column[M2[i, column]]
                positive, negative = kept[W1[kept, j] > 0], kept[W1[kept, j] < 0]
                parts[0, i, j] = exact_dot_mp(W2[i, positive], W1[positive, j])
                parts[1, i, j] = exact_dot_mp(W2[i, negative], W1[negative, j])
        return parts[0], parts[1]


def _relu_layer_error_mp(
    W: np.ndarray, W1: np.ndarray, W2: np.ndarray, M1: np.ndarray, M2: np.ndarray, dps: int
) -> Any:
    if np.any(M1.sum(axis=1) > 1):
        raise ValueError("M1 must keep at most one input per hidden unit (the block structure of Eq. (6))")
    positive, negative = relu_layer_parts(W1, W2, M1, M2, dps)
    with mpmath.workdps(dps):
        target = precision.to_mp(W, dps)
        errors: list[Any] = [precision.max_norm(target - positive), precision.max_norm(target - negative)]
        return max(errors)
