"""The angular-velocity dataset of Appendix B.1.

A sample is a pair (omega, theta_0) with omega ~ U[-pi, pi] and
theta_0 ~ U[0, pi]; at length T it becomes a zero regression token followed by
x_t = (cos(omega t + theta_0), sin(omega t + theta_0)), t = 1..T, and its label
is omega. Tokens have norm at most 1, so alpha = sqrt(2) satisfies both
alpha >= sqrt(d) and ||x_i|| <= alpha for d = 2 (Section 3.1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SPLITS = ("train", "validation", "test")
ALPHA = float(np.sqrt(2.0))
SAMPLES_PER_SPLIT = 10_000


@dataclass(frozen=True)
class AngularVelocity:
    omega: np.ndarray  # (N,)
    theta0: np.ndarray  # (N,)

    def tokens(self, length: int, rows: slice | np.ndarray = slice(None)) -> np.ndarray:
        """(N, length + 1, 2) sequences, the regression token first."""
        if int(length) < 1:
            raise ValueError(f"length must be a positive number of tokens, got {length!r}")
        omega, theta0 = self.omega[rows], self.theta0[rows]
        angles = omega[:, None] * np.arange(1, length + 1)[None, :] + theta0[:, None]
        out = np.zeros((omega.shape[0], length + 1, 2))
        out[:, 1:, 0], out[:, 1:, 1] = np.cos(angles), np.sin(angles)
        return out

    def __len__(self) -> int:
        return self.omega.shape[0]


def angular_velocity(split: str, seed: int, samples: int = SAMPLES_PER_SPLIT) -> AngularVelocity:
    """The ``split`` of the dataset drawn from ``seed`` (splits are independent streams)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    if int(samples) < 1:
        raise ValueError(f"samples must be a positive integer, got {samples!r}")
    rng = np.random.default_rng([seed, SPLITS.index(split)])
    return AngularVelocity(rng.uniform(-np.pi, np.pi, samples), rng.uniform(0.0, np.pi, samples))


def full_attention(length: int) -> np.ndarray:
    """Every token attends to every token, the regression token included: (T+1, T+1)."""
    return np.ones((length + 1, length + 1), dtype=bool)
