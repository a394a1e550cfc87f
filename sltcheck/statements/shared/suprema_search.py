"""Best-instance search for the brackets: multi-start L-BFGS-B over unconstrained parameters that a
builder maps onto instances satisfying the statement's assumptions (projections onto the allowed
sets, :mod:`sltcheck.harness.projection`), so every point the optimiser visits is admissible and the best
value is a valid lower bound."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import optimize


def pad(matrix: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """``matrix`` embedded top-left in zeros of shape (..., rows, cols)."""
    out = np.zeros((*matrix.shape[:-2], rows, cols))
    out[..., : matrix.shape[-2], : matrix.shape[-1]] = matrix
    return out


class Unpacker:
    """Takes consecutive blocks of a flat parameter vector, shaped."""

    def __init__(self, z: np.ndarray) -> None:
        self.z, self.at = z, 0

    def take(self, *shape: int) -> np.ndarray:
        size = int(np.prod(shape))
        out = self.z[self.at : self.at + size].reshape(shape)
        self.at += size
        return out


def best_instance(build: Callable[[np.ndarray], dict[str, Any]], value: Callable[[dict[str, Any]], float],
                  size: int, starts: Sequence[np.ndarray] = (), random_starts: int = 4, seed: int = 0,
                  max_iter: int = 150) -> tuple[float, dict[str, Any] | None]:
    """The best (value, instance) over local maximisations from ``starts`` and seeded random starts
    ((-inf, None) when there is no start at all)."""
    rng = np.random.default_rng(seed)
    points = [np.asarray(s, dtype=np.float64) for s in starts] + [rng.normal(size=size) for _ in range(random_starts)]

    def loss(z: np.ndarray) -> float:
        v = value(build(z))
        return -v if np.isfinite(v) else 0.0

    best: tuple[float, np.ndarray | None] = (-np.inf, None)
    for z0 in points:
        found = optimize.minimize(loss, z0, method="L-BFGS-B", options={"maxiter": max_iter})
        for z in (z0, found.x):
            v = -loss(z)
            if v > best[0]:
                best = (v, np.array(z))
    return best[0], (None if best[1] is None else build(best[1]))
