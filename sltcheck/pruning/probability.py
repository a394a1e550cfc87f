"""The main results as the probability statements they are: success frequencies at the prescribed widths.

Every statement says: if the source is at least as wide as d1 C log(A / eps), then with
probability >= 1 - eps over the source there are masks with error <= eps. For one
configuration and one C, :func:`success_frequency` draws ``trials`` independent (target,
source) pairs, the source at the width the statement prescribes (:mod:`sltcheck.pruning.widths`;
rounded up to a multiple of d1, Lemma 7's n = d1 n'), prunes it by the proof's construction
with the exact meet-in-the-middle solver, and measures the error:

- ``lemma7``: ||W - (W2⊙M2)(W1⊙M1)||_max against eps / (d1 d2) (no inputs);
- ``lemma2``: sup over ||x|| <= 1 of ||W x - F_S(x)|| against eps;
- ``theorem9`` / ``theorem11`` / ``theorem14``: max_i ||S(x_i) - T(x_i)|| against eps, over
  T tokens with ||x_i|| <= alpha;

on the worst inputs a search finds (:func:`~sltcheck.pruning.probability_trial.worst_input_error`: random and
sphere starts, then L-BFGS-B on the float64 error, inputs kept in the ball by ``x = r z / sqrt(1 + |z|^2)``),
never on random ones. A trial succeeds when that error is <= eps (float64; trials within 1e-9 relative of the
threshold are counted in ``near_threshold``). The frequency comes with its two-sided 95% Clopper–Pearson
interval (:func:`sltcheck.pruning.calibration.clopper_pearson`) and a verdict against 1 - eps: ``confirmed``
(interval above), ``refuted`` (interval below) or ``inconclusive``. A search finds a lower bound of the sup,
so a trial it calls a success may still fail on an input it missed: frequencies are upper estimates,
``refuted`` is firm.

Widths beyond the exact solver's reach (a group of more than ``MAX_GROUP`` units) are cut
to MAX_GROUP units per group: pruning the rest entirely is one mask choice of the full source,
so the cut source's success implies the full one's; such rows say ``truncated`` and their
frequency is a lower estimate of the full width's.

:func:`smallest_width` scans the per-group width n' upward for the smallest at which the
success frequency is >= 1 - eps at 95% one-sided confidence (lower Clopper–Pearson end, 90%
two-sided); ``width_slack`` and ``c_table`` build the width-slack and C tables over a grid.
Every trial draws from ``SeedSequence([seed, statement index, *configuration, width, trial])``.

The parts: :mod:`~sltcheck.pruning.probability_trial` (the settings, their prescribed widths, one
trial and its worst-input search), :mod:`~sltcheck.pruning.probability_text` (the tables as text);
this module runs the trials into frequencies, width slack and the C trend over the profiles' grids.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import numpy as np
from scipy import stats

from sltcheck.pruning import calibration
from sltcheck.pruning.probability_text import format_tables  # noqa: F401 (re-exported: public here)
from sltcheck.pruning.probability_trial import (  # noqa: F401 (re-exported: public here)
    MAX_GROUP,
    NEAR,
    STATEMENTS,
    Setting,
    prescribed,
    trial,
    worst_input_error,
)


def _trial_task(
    shared: Any, setting: dict[str, Any], groups: dict[str, int], seed: list[int], search: dict[str, int]
) -> dict[str, Any]:
    return trial(Setting(**setting), groups, seed, search)


# --- frequencies ---------------------------------------------------------------------------------------

CI_SEARCH = {"starts": 2, "maxiter": 15}
FULL_SEARCH = {"starts": 4, "maxiter": 40}


def _seed(setting: Setting, seed: int, groups: dict[str, int], index: int) -> list[int]:
    s = setting
    config = [STATEMENTS.index(s.statement), round(s.eps * 1e6), s.d1, s.d2, s.H, s.L, s.B, s.T]
    return [seed, *config, *sorted(groups.values()), index]


def verdict(ci_low: float, ci_high: float, target: float, truncated: bool = False) -> str:
    """``confirmed`` / ``refuted`` / ``inconclusive`` against 1 - eps; a row whose widths were cut
    (a lower estimate) is never ``refuted``."""
    if ci_low >= target:
        return "confirmed"
    if ci_high < target:
        return "inconclusive (cut widths)" if truncated else "refuted"
    return "inconclusive"


def frequency_at(
    setting: Setting,
    groups: dict[str, int],
    trials: int,
    seed: int = 0,
    search: dict[str, int] | None = None,
    executor: Any = None,
) -> dict[str, Any]:
    """Success count and frequency over ``trials`` independent pairs at per-group widths ``groups``."""
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    search = dict(CI_SEARCH if search is None else search)
    start = time.perf_counter()
    tasks = [(str(i), (asdict(setting), groups, _seed(setting, seed, groups, i), search)) for i in range(trials)]
    if executor is None:
        results = [_trial_task(None, *args) for _, args in tasks]
    else:
        by_key = dict(executor.map_unordered(_trial_task, None, tasks))
        results = [by_key[str(i)] for i in range(trials)]
    successes = sum(r["success"] for r in results)
    low, high = calibration.clopper_pearson(successes, trials)
    truncated = any(v > MAX_GROUP for v in groups.values())
    return {
        "groups": dict(groups),
        "truncated": truncated,
        "trials": trials,
        "successes": successes,
        "frequency": successes / trials,
        "ci_low": low,
        "ci_high": high,
        "target": 1 - setting.eps,
        "verdict": verdict(low, high, 1 - setting.eps, truncated),
        "worst_error": max(r["error"] for r in results),
        "median_error": float(np.median([r["error"] for r in results])),
        "threshold": results[0]["threshold"],
        "near_threshold": sum(r["near"] for r in results),
        "seconds": time.perf_counter() - start,
    }


def success_frequency(
    setting: Setting, C: float, trials: int, seed: int = 0, search: dict[str, int] | None = None, executor: Any = None
) -> dict[str, Any]:
    """The frequency at the widths the statement prescribes for constant ``C``."""
    if not isinstance(C, (int, float)) or isinstance(C, bool) or not (C > 0 and math.isfinite(C)):
        raise ValueError(f"C must be a finite number > 0, got {C!r}")
    widths_at = prescribed(setting, C)
    row = frequency_at(setting, widths_at["groups"], trials, seed, search, executor)
    return {"setting": asdict(setting), "C": C, **row}


def one_sided_lower(successes: int, trials: int, confidence: float = 0.95) -> float:
    """The one-sided lower Clopper–Pearson bound of a success probability."""
    if successes == 0:
        return 0.0
    return float(stats.beta.ppf(1 - confidence, successes, trials - successes + 1))


def one_sided_upper(successes: int, trials: int, confidence: float = 0.95) -> float:
    if successes == trials:
        return 1.0
    return float(stats.beta.ppf(confidence, successes + 1, trials - successes))


LEMMA7_N_MAX = 40


def smallest_width(
    setting: Setting,
    trials: int,
    seed: int = 0,
    n_max: int = MAX_GROUP,
    search: dict[str, int] | None = None,
    executor: Any = None,
) -> dict[str, Any]:
    """The smallest common per-group width n' (every matrix of the statement pruned from groups of
    n' units) whose success frequency is >= 1 - eps at 95% one-sided confidence (``n_prime``;
    None if none up to n_max), and the smallest whose one-sided 95% upper end reaches 1 - eps
    (``n_prime_low``: below it the success probability is < 1 - eps at 95% confidence).

    Lemma 7 scans exactly: each trial's critical n' (the smallest at which the exact optimum of
    every entry meets eps/(d1 d2), :func:`sltcheck.pruning.calibration.critical_widths`), up to
    ``LEMMA7_N_MAX``. The others run :func:`frequency_at` per width and stop at n_prime."""
    target = 1 - setting.eps
    found: dict[str, int | None] = {"n_prime": None, "n_prime_low": None}
    scan = []

    def record(width: int, successes: int) -> bool:
        low, high = one_sided_lower(successes, trials), one_sided_upper(successes, trials)
        scan.append({"n_prime": width, "successes": successes, "one_sided_low": low, "one_sided_high": high})
        if found["n_prime_low"] is None and high >= target:
            found["n_prime_low"] = width
        if low >= target:
            found["n_prime"] = width
            return True
        return False

    if setting.statement == "lemma7":
        rng = np.random.default_rng(np.random.SeedSequence(_seed(setting, seed, {}, trials)))
        critical, _ = calibration.critical_widths(setting.d1, setting.d2, setting.eps, trials, rng, LEMMA7_N_MAX)
        for width in range(1, LEMMA7_N_MAX + 1):
            if record(width, int((critical <= width).sum())):
                break
        return {**found, "n_max": LEMMA7_N_MAX, "scan": scan}
    keys = list(prescribed(setting, 1.0)["groups"])
    for width in range(1, n_max + 1):
        row = frequency_at(setting, dict.fromkeys(keys, width), trials, seed, search, executor)
        if record(width, row["successes"]):
            break
    return {**found, "n_max": n_max, "scan": scan}


def width_slack(
    setting: Setting,
    trials: int,
    C_calibrated: float,
    seed: int = 0,
    search: dict[str, int] | None = None,
    executor: Any = None,
) -> dict[str, Any]:
    """Needed per-group width beside the prescribed ones at C = 1 and the calibrated C."""
    needed = smallest_width(setting, trials, seed, search=search, executor=executor)
    out: dict[str, Any] = {
        "setting": asdict(setting),
        "needed_n_prime": needed["n_prime"],
        "needed_n_prime_low": needed["n_prime_low"],
        "n_max": needed["n_max"],
        "scan": needed["scan"],
    }
    log_term = math.log(setting.log_argument)
    for label, C in (("C1", 1.0), ("calibrated", C_calibrated)):
        groups = prescribed(setting, C)["groups"]
        widest = max(groups.values())
        out[f"prescribed_{label}"] = groups
        out[f"slack_{label}"] = None if needed["n_prime"] is None else widest / needed["n_prime"]
    # C that the needed width corresponds to in the statement's first width formula: n' = C log(A/eps)
    out["C_needed"] = None if needed["n_prime"] is None else needed["n_prime"] / log_term
    out["C_needed_low"] = None if needed["n_prime_low"] is None else needed["n_prime_low"] / log_term
    out["log_term"] = log_term
    return out


def _slack_task(shared: Any, setting: dict[str, Any], trials: int, C_calibrated: float, seed: int,
                search: dict[str, int]) -> dict[str, Any]:
    row = width_slack(Setting(**setting), trials, C_calibrated, seed, search)
    row["trials"] = trials
    row.update(_regressors(Setting(**setting)))
    return row


def fit_trend(
    rows: list[dict[str, Any]], regressors: tuple[str, ...] = ("log_d1", "log_H", "log_inv_eps")
) -> dict[str, Any]:
    """Least squares C_needed = c0 + sum_k b_k x_k with 95% t-intervals of the slopes; which grow."""
    usable = [r for r in rows if r.get("C_needed") is not None]
    X_cols = []
    names = []
    for name in regressors:
        column = np.array([r[name] for r in usable], dtype=float)
        if column.size and np.ptp(column) > 0:
            X_cols.append(column)
            names.append(name)
    y = np.array([r["C_needed"] for r in usable], dtype=float)
    p = len(names) + 1
    if len(usable) <= p:
        return {"points": len(usable), "slopes": {}, "grows_with": [], "note": "too few points for a fit"}
    X = np.column_stack([np.ones(len(usable)), *X_cols])
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    residual = y - X @ coef
    dof = len(usable) - p
    sigma2 = float(residual @ residual) / dof
    cov = sigma2 * np.linalg.pinv(X.T @ X)
    t = float(stats.t.ppf(0.975, dof))
    slopes: dict[str, dict[str, Any]] = {}
    for k, name in enumerate(names, start=1):
        half = t * math.sqrt(max(cov[k, k], 0.0))
        slopes[name] = {"slope": float(coef[k]), "ci": [float(coef[k] - half), float(coef[k] + half)]}
    return {
        "points": len(usable),
        "intercept": float(coef[0]),
        "slopes": slopes,
        "grows_with": [n for n, v in slopes.items() if v["ci"][0] > 0],
        "shrinks_with": [n for n, v in slopes.items() if v["ci"][1] < 0],
    }


def _regressors(setting: Setting) -> dict[str, float]:
    return {"log_d1": math.log(setting.d1), "log_H": math.log(setting.H), "log_inv_eps": math.log(1 / setting.eps)}


# --- the grids -----------------------------------------------------------------------------------------

CI_GRID: dict[str, tuple[Setting, ...]] = {
    "frequencies": (
        Setting("lemma7", 0.1, 2, 2),
        Setting("lemma2", 0.1, 2, 2),
        Setting("theorem9", 0.5, 1, 1, H=1),
        Setting("theorem11", 0.5, 1, 1, H=1),
        Setting("theorem14", 0.5, 1, 1, H=1, B=2),
    ),
    "slack": (
        *(Setting("lemma7", eps, d, d) for d in (1, 2, 3) for eps in (0.5, 0.1, 0.02)),
        Setting("lemma2", 0.5, 1, 1),
        Setting("theorem9", 0.5, 1, 1),
        Setting("theorem9", 0.5, 1, 1, H=2),
    ),
}
FULL_GRID: dict[str, tuple[Setting, ...]] = {
    "frequencies": CI_GRID["frequencies"]
    + (
        Setting("lemma7", 0.01, 3, 3),
        Setting("lemma2", 0.02, 2, 2),
        Setting("theorem9", 0.1, 2, 2, H=2),
        Setting("theorem11", 0.2, 1, 1, H=2, L=2),
        Setting("theorem14", 0.2, 1, 1, H=1, B=3),
    ),
    "slack": tuple(Setting("lemma7", eps, d, d) for d in (1, 2, 3) for eps in (0.5, 0.2, 0.1, 0.05, 0.02))
    + tuple(Setting("lemma2", eps, d, d) for d in (1, 2) for eps in (0.5, 0.2))
    + tuple(Setting("theorem9", eps, 1, 1, H=H) for H in (1, 2) for eps in (0.5, 0.2))
    + (Setting("theorem9", 0.5, 2, 2, H=1), Setting("theorem11", 0.5, 1, 1, H=1)),
}
PROFILES: dict[str, dict[str, Any]] = {
    "ci": {"grid": CI_GRID, "trials": 20, "slack_trials": 30, "lemma7_trials": 200, "search": CI_SEARCH},
    "full": {"grid": FULL_GRID, "trials": 200, "slack_trials": 60, "lemma7_trials": 1000, "search": FULL_SEARCH},
}


def run(
    profile: str = "ci",
    seed: int = 0,
    C_calibrated: float | None = None,
    executor: Any = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Frequencies at C = 1 and the calibrated C, the width-slack table and the C trend, for a profile."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    config = PROFILES[profile]
    C_cal = calibration.STORED_C if C_calibrated is None else C_calibrated
    say = progress or (lambda _: None)
    frequencies = []
    for setting in config["grid"]["frequencies"]:
        for C in (1.0, C_cal):
            row = success_frequency(setting, C, config["trials"], seed, config["search"], executor)
            say(
                f"{setting.statement} eps={setting.eps} C={C:.3g}: "
            f"{row['successes']}/{row['trials']} ({row['verdict']})"
            )
            frequencies.append(row)
    tasks = []
    for index, setting in enumerate(config["grid"]["slack"]):
        trials = config["lemma7_trials"] if setting.statement == "lemma7" else config["slack_trials"]
        tasks.append((str(index), (asdict(setting), trials, C_cal, seed, config["search"])))
    # one task per row (each row runs serially inside its task)
    done = (executor.map_unordered(_slack_task, None, tasks) if executor is not None
            else ((key, _slack_task(None, *args)) for key, args in tasks))
    by_index: dict[int, dict[str, Any]] = {}
    for key, row in done:
        by_index[int(key)] = row
        s = row["setting"]
        say(f"slack {s['statement']} eps={s['eps']} d1={s['d1']} H={s['H']}: needed n' = {row['needed_n_prime']}")
    slack = [by_index[i] for i in range(len(tasks))]
    trends = {}
    for statement in sorted({r["setting"]["statement"] for r in slack}):
        trends[statement] = fit_trend([r for r in slack if r["setting"]["statement"] == statement])
    return {
        "profile": profile,
        "seed": seed,
        "C_calibrated": C_cal,
        "C_calibrated_source": calibration.STORED_SOURCE if C_calibrated is None else "given",
        "max_group": MAX_GROUP,
        "frequencies": frequencies,
        "width_slack": slack,
        "C_trend": trends,
    }
