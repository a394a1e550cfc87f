"""Calibrating the "universal constant" C of Lemma 7 from the exact construction.

Lemma 7 (Lemma 4 in the main text): for W in [-1, 1]^{d2 x d1}, W~1 (n x d1), W~2 (d2 x n)
with i.i.d. U[-1, 1] entries, "n >= d1 C log(d1 d2 / eps)  =>  with probability >= 1 - eps
there are masks with ||W - (W~2 ⊙ M2)(W~1 ⊙ M1)||_max <= eps / (d1 d2)". Its proof uses
n = d1 n': hidden unit group j (n' units) reads input j only (Eq. 6), and entry (i, j) is
the subset sum sum_k m_k v_{i,j,k} u_{j,k} over the n' products of group j (Eq. 8).

What is measured here. For one trial: W ~ U[-1, 1]^{d2 x d1}, and a pool of n'_max pairs
(u_{j,k}, v_{i,j,k}) per entry, all i.i.d. U[-1, 1]. The width-n source of the proof at
n' is exactly the first n' pairs of the pool (the rows of W~1 outside the block structure
and the columns of W~2 outside group j are pruned, so their values never matter). Entry
(i, j) succeeds at n' when the OPTIMAL subset sum of its first n' products (exact
meet-in-the-middle, :func:`sltcheck.pruning.subset_sum.solve_subset_sum` with ``solver="mitm"``,
error recomputed exactly in rationals) is within eps/(d1 d2) of W[i, j]. Adding products
never hurts the optimum, so each entry has a critical n'_ij and the trial succeeds exactly
for n' >= n'* = max_ij n'_ij. (The pools couple the widths of one trial; across trials
everything is independent, so at every fixed n' the failure indicator is an i.i.d.
Bernoulli sample of the construction's failure probability at that width.)

The float64 products v u are rounded (relative error <= 2^-53); an entry whose exact error
lies within n' 2^-52 max|v u| of the threshold is counted in ``near_threshold`` (none in
the default run).

C from the frequencies. With k(n') failures in N trials, the two-sided 95% Clopper–Pearson
interval [lo(n'), hi(n')] bounds the failure probability p(n'). With L = log(d1 d2 / eps):

- ``C`` (calibrated) = n'_up / L, n'_up = the smallest n' with hi(n') <= eps (scanning upward):
  at that width the failure probability is <= eps at 97.5% one-sided confidence;
- ``C_point`` = n'_hat / L, n'_hat = the smallest n' with k(n')/N <= eps;
- ``C_lower`` = n'_low / L, n'_low = the smallest n' with lo(n') <= eps: below it the failure
  probability exceeds eps at 97.5% confidence, so no C < C_lower works at this (d1, d2, eps).
  [C_lower, C] is the reported confidence interval (the scan looks at many n', so the
  simultaneous coverage is not exactly 95%; failures are monotone in n' per trial, which
  limits the effect).

Note that the lemma's condition is n' >= C L with n' an integer, so any C in ``((n'* - 1)/L, n'*/L]``
gives the same smallest width; C = n'/L is the upper end, as the brief defines it.

Decay rate. For d1 = d2 = 1 the optimal error E_{n'} over n' = 2..n'_max is fitted as
log E[error] = a + b n' (least squares; also the median and E[log error]), and compared with
Lueker's rate 2^{-n'} (slope -log 2 = -0.693). The mean is dominated by a heavy tail (targets
out of reach of the few positive or negative products), so its slope is shallower than the
median's.

Reproducible: every configuration draws from ``SeedSequence([seed, index])``.
"""

from __future__ import annotations

import json
import math
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from sltcheck.pruning.subset_sum import solve_subset_sum

DEFAULT_CONFIGS: tuple[tuple[int, int, float], ...] = (
    (1, 1, 0.1), (1, 1, 0.01), (2, 2, 0.1), (2, 2, 0.02), (3, 3, 0.1), (2, 4, 0.05), (4, 4, 0.1),
)
DEFAULT_TRIALS = 1000
DEFAULT_SEED = 0
DEFAULT_N_MAX = 40
DECAY_TRIALS = 400
DECAY_RANGE = (2, 22)
CONFIDENCE = 0.95

# The calibrated constant of the default run (``sltcheck calibrate``: seed 0, 1000 trials,
# DEFAULT_CONFIGS; about 75 s on 2 cores): the largest calibrated C over the configurations,
# i.e. the smallest C for which Lemma 7's statement held at every configuration with 97.5%
# one-sided confidence. It is set by (d1, d2, eps) = (1, 1, 0.01): n' = 25, C = 25 / log(100).
# Per configuration (C_lower, C_point, C): (1,1,.1) 4.343 4.777 5.212; (1,1,.01) 3.692 4.126
# 5.429; (2,2,.1) 4.066 4.337 4.608; (2,2,.02) 3.775 3.964 4.341; (3,3,.1) 4.000 4.222 4.445;
# (2,4,.05) 4.138 4.138 4.532; (4,4,.1) 3.941 4.138 4.138.
STORED_C = 25 / math.log(100)  # 5.42868...
MAX_C = 1e150  # the largest C the width formulas take (sltcheck widths --C has the same cap)
STORED_SOURCE = "sltcheck calibrate --trials 1000 --seed 0 (DEFAULT_CONFIGS)"


def clopper_pearson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Two-sided Clopper–Pearson interval for a binomial proportion with k successes in n."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    tail = (1 - confidence) / 2
    low = 0.0 if k == 0 else float(stats.beta.ppf(tail, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - tail, k + 1, n - k))
    return low, high


def _check_config(d1: object, d2: object, eps: object) -> None:
    for name, value in (("d1", d1), ("d2", d2)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 1:
        raise ValueError(f"eps must be a number in (0, 1), got {eps!r}")


def critical_widths(
    d1: int, d2: int, eps: float, trials: int, rng: np.random.Generator, n_max: int = DEFAULT_N_MAX
) -> tuple[np.ndarray, int]:
    """Per trial the smallest n' at which Lemma 7's construction succeeds (n_max + 1 if none),
    and the number of entries decided within rounding distance of the threshold."""
    threshold = Fraction(float(eps)) / (d1 * d2)
    W = rng.uniform(-1, 1, (trials, d2, d1))
    u = rng.uniform(-1, 1, (trials, d1, n_max))
    v = rng.uniform(-1, 1, (trials, d2, d1, n_max))
    products = (v * u[:, None]).reshape(trials * d2 * d1, n_max)  # entry (t, i, j): v_{i,j,k} u_{j,k}
    targets = W.reshape(-1)
    critical = np.full(targets.size, n_max + 1)
    open_ = np.arange(targets.size)
    near = 0
    for width in range(1, n_max + 1):
        if open_.size == 0:
            break
        result = solve_subset_sum(targets[open_], products[open_, :width], solver="mitm")
        slack = Fraction(width * 2.0**-52) * Fraction(float(np.abs(products[open_, :width]).max()))
        done = np.array([e <= threshold for e in result.exact_errors], dtype=bool)
        near += sum(1 for e in result.exact_errors if abs(e - threshold) <= slack)
        critical[open_[done]] = width
        open_ = open_[~done]
    return critical.reshape(trials, d2 * d1).max(axis=1), near


def calibrate_config(
    d1: int, d2: int, eps: float, trials: int, rng: np.random.Generator, n_max: int = DEFAULT_N_MAX
) -> dict[str, Any]:
    _check_config(d1, d2, eps)
    start = time.perf_counter()
    critical, near = critical_widths(d1, d2, eps, trials, rng, n_max)
    L = math.log(d1 * d2 / eps)
    scan = []
    found: dict[str, int | None] = {"up": None, "hat": None, "low": None}
    for width in range(1, n_max + 1):
        failures = int((critical > width).sum())
        low, high = clopper_pearson(failures, trials)
        scan.append({"n_prime": width, "failures": failures, "frequency": failures / trials,
                     "ci_low": low, "ci_high": high})
        for key, value in (("up", high), ("hat", failures / trials), ("low", low)):
            if found[key] is None and value <= eps:
                found[key] = width

    def c(width: int | None) -> float | None:
        return None if width is None else width / L

    return {
        "d1": d1, "d2": d2, "eps": eps, "trials": trials, "log_term": L,
        "n_prime": found["up"], "n_prime_point": found["hat"], "n_prime_lower": found["low"],
        "C": c(found["up"]), "C_point": c(found["hat"]), "C_lower": c(found["low"]),
        "C_interval": [c(found["low"]), c(found["up"])],
        "n_prime_max": n_max, "censored": int((critical > n_max).sum()), "near_threshold": near,
        "critical_quantiles": {q: float(np.quantile(critical, q)) for q in (0.5, 0.9, 0.99)},
        "scan": [row for row in scan if row["n_prime"] <= (found["up"] or n_max) + 1],
        "seconds": time.perf_counter() - start,
    }


def decay(trials: int, rng: np.random.Generator, widths: tuple[int, int] = DECAY_RANGE) -> dict[str, Any]:
    """Optimal subset-sum error of one entry (d1 = d2 = 1) against n', with log-linear fits."""
    lo, hi = widths
    ns = np.arange(lo, hi + 1)
    targets = rng.uniform(-1, 1, trials)
    products = rng.uniform(-1, 1, (trials, hi)) * rng.uniform(-1, 1, (trials, hi))
    rows = []
    for width in ns:
        result = solve_subset_sum(targets, products[:, :width], solver="mitm")
        errors = np.array([float(e) for e in result.exact_errors])
        positive = errors[errors > 0]
        rows.append({"n_prime": int(width), "mean": float(errors.mean()), "median": float(np.median(errors)),
                     "mean_log": float(np.log(positive).mean()) if positive.size else float("-inf"),
                     "zero_errors": int((errors == 0).sum())})

    def fit(key: str, transform: Any) -> dict[str, float]:
        y = np.array([transform(r[key]) for r in rows])
        slope, intercept = np.polyfit(ns.astype(float), y, 1)
        return {"slope": float(slope), "intercept": float(intercept), "base2_rate": float(-slope / math.log(2)),
                "prefactor": float(math.exp(intercept))}

    return {
        "trials": trials, "n_prime": [int(n) for n in ns], "rows": rows,
        "fit_log_mean": fit("mean", math.log),
        "fit_log_median": fit("median", math.log),
        "fit_mean_log": fit("mean_log", float),
        "lueker_slope": -math.log(2),
    }


def calibrate(
    configs: tuple[tuple[int, int, float], ...] = DEFAULT_CONFIGS,
    trials: int = DEFAULT_TRIALS,
    seed: int = DEFAULT_SEED,
    n_max: int = DEFAULT_N_MAX,
    decay_trials: int = DECAY_TRIALS,
    decay_range: tuple[int, int] = DECAY_RANGE,
) -> dict[str, Any]:
    """The full calibration: one entry per (d1, d2, eps), the universal C (max over them) and the decay fit."""
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if isinstance(n_max, bool) or not isinstance(n_max, int) or not 1 <= n_max <= 48:
        raise ValueError(f"n_max must be an integer in 1..48, got {n_max!r}")
    results = []
    for index, (d1, d2, eps) in enumerate(configs):
        rng = np.random.default_rng(np.random.SeedSequence([seed, index]))
        results.append(calibrate_config(d1, d2, eps, trials, rng, n_max))
    decay_rng = np.random.default_rng(np.random.SeedSequence([seed, 10_000]))
    found = [r["C"] for r in results]
    universal = None if not found or any(c is None for c in found) else max(c for c in found if c is not None)
    return {
        "seed": seed, "trials": trials, "confidence": CONFIDENCE, "solver": "mitm",
        "configs": results,
        "C": universal,
        "decay": decay(decay_trials, decay_rng, decay_range) if decay_trials > 0 else None,
    }


def load_C(path: str | None = None) -> float:
    """The calibrated C of a ``sltcheck calibrate`` JSON file, or ``STORED_C``."""
    if path is None:
        return STORED_C
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"calibrated must be a readable calibration JSON file, got {path!r}: {error}") from error
    value = data.get("C") if isinstance(data, dict) else None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
        raise ValueError(f"calibrated file {path!r} has no positive 'C' (got {value!r}); rerun with more --trials")
    if not value <= MAX_C:
        raise ValueError(f"calibrated file {path!r} has C = {value!r}, above {MAX_C:g}: not a constant sltcheck "
                         "calibrate writes (the widths scale with C; such a C makes them overflow)")
    return float(value)
