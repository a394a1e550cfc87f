"""The angular-velocity dataset of Appendix B.1.

A sample is a pair (omega, theta_0) with omega ~ U[-pi, pi] and
theta_0 ~ U[0, pi]; at length T it becomes the regression token followed by
x_t = (cos(omega t + theta_0), sin(omega t + theta_0)), t = 1..T, and its label
is omega. The regression token is a vector r in R^2 shared by every sequence
(B.1: "the model is trained to predict angular velocity by the regression token
initialized to zero"; learned with the target, see :mod:`sltcheck.repro.targets`);
it is zero unless given. The other tokens have norm 1, so
alpha = max(sqrt(2), ||r||) satisfies both alpha >= sqrt(d) and ||x_i|| <= alpha
for d = 2 (Section 3.1): :func:`alpha_for`.
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

    def tokens(self, length: int, rows: slice | np.ndarray = slice(None),
               token: np.ndarray | None = None) -> np.ndarray:
        """(N, length + 1, 2) sequences, the regression token ``token`` (default 0) first."""
        if int(length) < 1:
            raise ValueError(f"length must be a positive number of tokens, got {length!r}")
        omega, theta0 = self.omega[rows], self.theta0[rows]
        angles = omega[:, None] * np.arange(1, length + 1)[None, :] + theta0[:, None]
        out = np.zeros((omega.shape[0], length + 1, 2))
        if token is not None:
            token = np.asarray(token, dtype=np.float64)
            if token.shape != (2,) or not np.all(np.isfinite(token)):
                raise ValueError(f"token must be a finite vector of shape (2,), got {token!r}")
            out[:, 0] = token
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


def alpha_for(token: np.ndarray | None) -> float:
    """The smallest alpha with alpha >= sqrt(d) and every token (the regression token
    included) of norm <= alpha (Section 3.1)."""
    if token is None:
        return ALPHA
    return max(ALPHA, float(np.linalg.norm(np.asarray(token, dtype=np.float64))))


def token_bound(token: np.ndarray | None) -> float:
    """The largest token norm the sequences can have: the unit-circle tokens and ``token``."""
    if token is None:
        return 1.0
    return max(1.0, float(np.linalg.norm(np.asarray(token, dtype=np.float64))))


def full_attention(length: int) -> np.ndarray:
    """Every token attends to every token, the regression token included: (T+1, T+1)."""
    return np.ones((length + 1, length + 1), dtype=bool)
