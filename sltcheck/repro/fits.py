"""Exponential-decay fits eps = gamma exp(-delta n), as Section 4.2 fits them, and the other
readings of "the fit" the paper leaves open.

The paper reports eps = 0.8 exp(-0.06 n_K) for Figure 4 (the workshop
version: 0.77 exp(-0.055 n_K)); for Figure 6 it fits delta on the first block
and only gamma per block. Section 4.2 says "we fit the empirical results to the function" with
SciPy and no more: on the per-width means or on every source's point, on the linear or the log
scale, over every width or a range. Each is a named fit (``FITS``):

- ``linear``: scipy's ``curve_fit`` of gamma exp(-delta n) to the per-width means (least squares
  on the linear scale, the default: what "fit with SciPy" most directly means);
- ``per-source``: the same model fitted to every source's own error (n repeated per source), so
  the intervals reflect the spread over sources, not only the scatter of the means;
- ``log-linear``: ordinary least squares of log(mean) on n (every width weighs the same, however
  small its error: a slow tail counts as much as the first drop).

A fit's intervals are 95% Student-t intervals from its covariance. A delta that was not fitted
(Figure 6's later blocks share the first block's) has no interval: ``delta_fixed`` says so.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

PAPER_FIT = {"gamma": 0.8, "delta": 0.06}
WORKSHOP_FIT = {"gamma": 0.77, "delta": 0.055}
FITS = ("linear", "per-source", "log-linear")


@dataclass(frozen=True)
class DecayFit:
    """A fit and its 95% intervals; an interval is None where the data cannot identify it
    (as many points as fitted parameters, or a singular covariance), never [nan, nan], and
    for a delta given rather than fitted (``delta_fixed``)."""

    gamma: float
    delta: float
    gamma_interval: tuple[float, float] | None
    delta_interval: tuple[float, float] | None
    points: int
    delta_fixed: bool = False

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def __call__(self, n: np.ndarray) -> np.ndarray:
        return self.gamma * np.exp(-self.delta * np.asarray(n, dtype=float))


def _interval(value: float, variance: float, dof: int, level: float = 0.95) -> tuple[float, float] | None:
    if dof <= 0 or not np.isfinite(variance):
        return None
    from scipy import stats  # here: the report imports interval_text, and --help must not load scipy
    half = float(stats.t.ppf(0.5 + level / 2, dof)) * float(np.sqrt(max(variance, 0.0)))
    return (float(value) - half, float(value) + half)


def interval_text(fit: dict[str, object], parameter: str) -> str:
    """"0.8 [0.7, 0.9]", "0.06 (fixed, not fitted)" or "0.8, interval not identifiable (2 points)",
    for a fit's as_dict()."""
    value = fit.get(parameter)
    interval = fit.get(f"{parameter}_interval")
    head = f"{float(value):.4g}" if isinstance(value, (int, float)) else "?"
    if parameter == "delta" and fit.get("delta_fixed"):
        return f"{head} (shared, not fitted)"
    if isinstance(interval, (list, tuple)) and len(interval) == 2 and all(
            isinstance(v, (int, float)) and np.isfinite(v) for v in interval):
        return f"{head} [{float(interval[0]):.3g}, {float(interval[1]):.3g}]"
    return f"{head}, interval not identifiable ({fit.get('points', '?')} points)"


def inside(fit: dict[str, object], parameter: str, value: float) -> bool | None:
    """Whether ``value`` lies in the fit's 95% interval of ``parameter`` (None: no interval)."""
    interval = fit.get(f"{parameter}_interval")
    if fit.get(f"{parameter}_fixed") or not isinstance(interval, (list, tuple)) or len(interval) != 2:
        return None
    return bool(float(interval[0]) <= value <= float(interval[1]))


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
    return DecayFit(float(gamma), float(delta), _interval(gamma, cov[0, 0], n.size - 1), None, n.size,
                    delta_fixed=True)


def fit_log_linear(n: np.ndarray, eps: np.ndarray) -> DecayFit:
    """Ordinary least squares of log(eps) = log(gamma) - delta n; gamma's interval is the
    exponential of log(gamma)'s. Every eps must be positive."""
    n, eps = np.asarray(n, dtype=float), np.asarray(eps, dtype=float)
    if n.shape != eps.shape or n.ndim != 1 or n.size < 2:
        raise ValueError(f"n and eps must be 1-d of equal length >= 2, got {n.shape} and {eps.shape}")
    if not np.all(eps > 0):
        raise ValueError("a log-linear fit needs every error > 0")
    logs = np.log(eps)
    (slope, intercept), unscaled = np.polyfit(n, logs, 1, cov="unscaled")
    dof = n.size - 2
    residual = logs - (slope * n + intercept)
    variance = float(residual @ residual) / dof if dof > 0 else float("nan")
    log_gamma = _interval(float(intercept), float(unscaled[1, 1]) * variance, dof)
    delta = _interval(float(-slope), float(unscaled[0, 0]) * variance, dof)
    gamma_interval = (float(np.exp(log_gamma[0])), float(np.exp(log_gamma[1]))) if log_gamma else None
    return DecayFit(float(np.exp(intercept)), float(-slope), gamma_interval, delta, n.size)


def fit(kind: str, widths: np.ndarray, means: np.ndarray, per_source: list[np.ndarray] | None = None,
        delta: float | None = None) -> DecayFit:
    """The fit ``kind`` (``FITS``) of the means at ``widths`` (``per_source``: every width's
    source errors, for ``per-source``); ``delta`` given: only gamma is fitted (linear fits)."""
    if kind not in FITS:
        raise ValueError(f"fit must be one of {', '.join(FITS)}, got {kind!r}")
    if kind == "log-linear":
        if delta is not None:
            raise ValueError("a log-linear fit cannot hold delta fixed")
        return fit_log_linear(widths, means)
    if kind == "per-source":
        if per_source is None:
            raise ValueError("a per-source fit needs every source's errors")
        n = np.concatenate([np.full(len(errors), w, dtype=float) for w, errors in zip(widths, per_source, strict=True)])
        return fit_decay(n, np.concatenate(per_source), delta)
    return fit_decay(widths, means, delta)


# The last half's decay rate counts as small below this fraction of the first half's rate, or
# below SMALL_RATE per unit of width (a factor 1.1 over ten widths), whichever is larger.
PLATEAU_SLOPE_FRACTION = 0.2
SMALL_RATE = 0.01
# Where a plateau starts: the first width from which every mean is within this factor of the level.
PLATEAU_FACTOR = 1.5
# Each half needs this many widths for its rate to have an interval.
HALF_WIDTHS = 3


def regime(widths: np.ndarray, means: np.ndarray) -> dict[str, object]:
    """How the mean error behaves with the width, from log-linear fits of the first and the last
    half of the widths (each of at least HALF_WIDTHS widths, sharing the middle one), decided on
    the last half's 95% interval, so that noise is never read as a plateau:

    - "exponential": the last half still decays (its rate's interval lies above 0) at a rate of at
      least PLATEAU_SLOPE_FRACTION of the first half's and at least SMALL_RATE; "slow decay" where
      that rate is under SMALL_RATE (a factor under 1.1 per ten widths);
    - the last half is flat (its rate's whole interval lies under max(PLATEAU_SLOPE_FRACTION x the
      first half's rate, SMALL_RATE)) at ``level`` (the geometric mean of its means): a "plateau"
      where the smallest width's mean lies above PLATEAU_FACTOR x level (``starts_at``: the first
      width from which every mean is within that factor of the level), else "no decay";
    - "undetermined" otherwise: the interval neither excludes decay nor shows it (too few sources);

    with both rates and their intervals, so the label can be checked against its numbers."""
    widths, means = np.asarray(widths, dtype=float), np.asarray(means, dtype=float)
    if widths.size < 2 * HALF_WIDTHS - 1 or not np.all(means > 0):
        return {"regime": "undetermined",
                "reason": f"fewer than {2 * HALF_WIDTHS - 1} widths, or a mean error of 0"}
    half = widths.size // 2
    early = fit_log_linear(widths[: half + 1], means[: half + 1])
    late = fit_log_linear(widths[half:], means[half:])
    rates = {"early_delta": early.delta, "early_delta_interval": early.delta_interval,
             "late_delta": late.delta, "late_delta_interval": late.delta_interval}
    small = max(PLATEAU_SLOPE_FRACTION * early.delta, SMALL_RATE)
    low, high = late.delta_interval or (late.delta, late.delta)
    level = float(np.exp(np.mean(np.log(means[half:]))))
    if low > 0 and late.delta >= PLATEAU_SLOPE_FRACTION * early.delta:
        return {"regime": "exponential" if late.delta >= SMALL_RATE else "slow decay", **rates}
    if high >= small:
        return {"regime": "undetermined", "reason": f"the last half's decay rate lies in [{low:.3g}, {high:.3g}]",
                **rates}
    if means[0] <= PLATEAU_FACTOR * level:
        return {"regime": "no decay", "level": level, **rates}
    within = np.abs(np.log(means / level)) <= np.log(PLATEAU_FACTOR)
    # the first half's end where the noise puts even the last means outside the factor
    start = next((float(widths[i]) for i in range(widths.size) if within[i:].all()), float(widths[half]))
    return {"regime": "plateau", "level": level, "starts_at": start, **rates}
