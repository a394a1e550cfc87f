"""Projections onto the paper's assumptions, in float64 numpy: one home for every one of them.

Every instance module's ``project`` and every supremum search pulls a modified object back inside its
assumption with these: tokens into the alpha-ball (:func:`into_ball`), perturbed tokens back within
``eps`` of their originals (:func:`within`), weight matrices into the spectral unit ball
(:func:`scale_inside`, :func:`spectral_unit`). All of them land a relative ``INSIDE`` short of the
limit, since the assumption checks run in mpmath with no tolerance. Their torch counterparts, for the
autograd search, are ``shrink_rows``, ``within`` and ``into_unit_ball`` in
``sltcheck.harness.differentiable``.
"""

from __future__ import annotations

import numpy as np

# Relative amount by which "on the limit" objects are pulled inside it.
INSIDE = 1.0 - 2.0**-48


def scale_inside(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` rescaled to spectral norm 1 (a few ulps inside); zero stays zero.

    Divides by the largest entry first, so tiny (subnormal) matrices do not overflow; the strategies
    and the instance modules' projections use it."""
    peak = float(np.abs(matrix).max()) if matrix.size else 0.0
    if peak == 0.0 or not np.isfinite(peak):
        return np.zeros_like(matrix)
    matrix = matrix / peak  # avoids overflow for tiny (subnormal) matrices
    return matrix * (INSIDE / float(np.linalg.norm(matrix, 2)))


def spectral_unit(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` scaled into the spectral-norm unit ball, left alone if already inside.

    One multiplication by INSIDE / ||matrix||_2 (no division by the peak first: the supremum searches
    move O(1) matrices, where it cannot overflow)."""
    norm = float(np.linalg.norm(matrix, 2)) if matrix.size else 0.0
    return matrix * (INSIDE / norm if norm > INSIDE else 1.0)


def into_ball(rows: np.ndarray, limit: float) -> np.ndarray:
    """Each row (last axis) scaled onto the ball of radius ``limit`` where it lies outside; rows inside,
    zero rows included, unchanged (nonexpansive: distances never grow)."""
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return np.where(norms > limit, rows * (limit / np.where(norms > 0, norms, 1.0)), rows)


def within(X: np.ndarray, Xp: np.ndarray, radius: float) -> np.ndarray:
    """``Xp`` with each rounded step X' - X that ended up a hair beyond ``radius`` shortened."""
    Xp = Xp.copy()
    for _ in range(8):
        over = np.linalg.norm(Xp - X, axis=1) > radius * (1.0 - 2.0**-40)
        if not over.any():
            return Xp
        Xp[over] = X[over] + (Xp[over] - X[over]) * (1.0 - 2.0**-20)
    Xp[np.linalg.norm(Xp - X, axis=1) > radius * (1.0 - 2.0**-40)] = X[
        np.linalg.norm(Xp - X, axis=1) > radius * (1.0 - 2.0**-40)
    ]
    return Xp
