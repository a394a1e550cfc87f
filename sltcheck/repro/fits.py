"""Exponential-decay fits eps = gamma exp(-delta n), as Section 4.2 fits them.

The paper reports eps = 0.8 exp(-0.06 n_K) for Figure 4 (the workshop
version: 0.77 exp(-0.055 n_K)); for Figure 6 it fits delta on the first block
and only gamma per block.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

PAPER_FIT = {"gamma": 0.8, "delta": 0.06}
WORKSHOP_FIT = {"gamma": 0.77, "delta": 0.055}


@dataclass(frozen=True)
class DecayFit:
    """A fit and its 95% intervals; an interval is None where the data cannot identify it
    (as many points as fitted parameters, or a singular covariance): never [nan, nan]."""

    gamma: float
    delta: float
    gamma_interval: tuple[float, float] | None
    delta_interval: tuple[float, float] | None
    points: int

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def __call__(self, n: np.ndarray) -> np.ndarray:
        return self.gamma * np.exp(-self.delta * np.asarray(n, dtype=float))


def _interval(value: float, variance: float, dof: int, level: float = 0.95) -> tuple[float, float] | None:
    if dof <= 0 or not np.isfinite(variance):
        return None
    from scipy import stats  # here: the report imports interval_text, and --help must not load scipy
    half = stats.t.ppf(0.5 + level / 2, dof) * float(np.sqrt(max(variance, 0.0)))
    return (value - half, value + half)


def interval_text(fit: dict[str, object], parameter: str) -> str:
    """"0.8 [0.7, 0.9]", or "0.8, interval not identifiable (2 points)", for a fit's as_dict()."""
    value = fit.get(parameter)
    interval = fit.get(f"{parameter}_interval")
    head = f"{float(value):.4g}" if isinstance(value, (int, float)) else "?"
    if isinstance(interval, (list, tuple)) and len(interval) == 2 and all(
            isinstance(v, (int, float)) and np.isfinite(v) for v in interval):
        return f"{head} [{float(interval[0]):.3g}, {float(interval[1]):.3g}]"
    return f"{head}, interval not identifiable ({fit.get('points', '?')} points)"


def fit_decay(n: np.ndarray, eps: np.ndarray, delta: float | None = None) -> DecayFit:
    """Least-squares fit of eps = gamma exp(-delta n) on the linear scale (scipy's
    curve_fit, started from a log-linear fit); with ``delta`` given, only gamma is fitted.
    Intervals are 95% Student-t intervals from the covariance."""
    from scipy import optimize

    n, eps = np.asarray(n, dtype=float), np.asarray(eps, dtype=float)
    if n.shape != eps.shape or n.ndim != 1 or n.size < (1 if delta is not None else 2):
        raise ValueError(f"n and eps must be 1-d of equal length >= 2, got {n.shape} and {eps.shape}")
    positive = eps > 0
    if delta is None:
        slope, intercept = np.polyfit(n[positive], np.log(eps[positive]), 1)
        (gamma, fitted_delta), cov = optimize.curve_fit(
            lambda x, g, d: g * np.exp(-d * x), n, eps, p0=(np.exp(intercept), -slope), maxfev=20000
        )
        dof = n.size - 2
        return DecayFit(float(gamma), float(fitted_delta), _interval(gamma, cov[0, 0], dof),
                        _interval(fitted_delta, cov[1, 1], dof), n.size)
    shape = np.exp(-delta * n)
    (gamma,), cov = optimize.curve_fit(lambda x, g: g * np.exp(-delta * x), n, eps,
                                       p0=(float(eps @ shape / (shape @ shape)),))
    return DecayFit(float(gamma), float(delta), _interval(gamma, cov[0, 0], n.size - 1),
                    (float(delta), float(delta)), n.size)  # delta given: a point interval
