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

on the worst inputs a search finds (:func:`worst_input_error`: random and sphere starts, then
L-BFGS-B on the float64 error, inputs kept in the ball by ``x = r z / sqrt(1 + |z|^2)``), never on
random ones. A trial succeeds when that error is <= eps (float64; trials within 1e-9 relative
of the threshold are counted in ``near_threshold``). The frequency comes with its two-sided 95%
Clopper–Pearson interval (:func:`sltcheck.pruning.calibration.clopper_pearson`) and a verdict
against 1 - eps: ``confirmed`` (interval above), ``refuted`` (interval below) or
``inconclusive``. A search finds a lower bound of the sup, so a trial it calls a success may
still fail on an input it missed: frequencies are upper estimates, ``refuted`` is firm.

Widths beyond the exact solver's reach (a group of more than ``MAX_GROUP`` units) are cut
to MAX_GROUP units per group: pruning the rest entirely is one mask choice of the full source,
so the cut source's success implies the full one's; such rows say ``truncated`` and their
frequency is a lower estimate of the full width's.

:func:`smallest_width` scans the per-group width n' upward for the smallest at which the
success frequency is >= 1 - eps at 95% one-sided confidence (lower Clopper–Pearson end, 90%
two-sided); ``width_slack`` and ``c_table`` build the width-slack and C tables over a grid.
Every trial draws from ``SeedSequence([seed, statement index, *configuration, width, trial])``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import optimize, stats

from sltcheck.model import reference
from sltcheck.model.weights import TransformerWeights
from sltcheck.pruning import calibration, construction, sources, widths

STATEMENTS = ("lemma7", "lemma2", "theorem9", "theorem11", "theorem14")
MAX_GROUP = 32  # units per group the exact solver takes here (2^16 sums per half)
NEAR = 1e-9


@dataclass(frozen=True)
class Setting:
    """One configuration of one statement (d2 = d1 for the blocks and transformers)."""

    statement: str
    eps: float
    d1: int = 1
    d2: int = 1
    H: int = 1
    L: int = 1
    B: int = 2
    T: int = 2

    def __post_init__(self) -> None:
        if self.statement not in STATEMENTS:
            raise ValueError(f"statement must be one of {', '.join(STATEMENTS)}, got {self.statement!r}")
        if not isinstance(self.eps, (int, float)) or isinstance(self.eps, bool) or not 0 < self.eps < 1:
            raise ValueError(f"eps must be a number in (0, 1), got {self.eps!r}")
        for name in ("d1", "d2", "H", "L", "T"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if isinstance(self.B, bool) or not isinstance(self.B, int) or self.B < 2:
            raise ValueError(f"B must be an integer >= 2 (Theorem 14), got {self.B!r}")

    @property
    def alpha(self) -> float:
        return math.sqrt(max(self.d1, self.d2))

    @property
    def log_argument(self) -> float:
        """A / eps of the statement's main width (for C = n / (d1 log(A / eps)))."""
        return prescribed(self, 1.0)["log_argument"]


def _group(n_real: float, d: int) -> int:
    return max(1, math.ceil(n_real / d))


def prescribed(setting: Setting, C: float) -> dict[str, Any]:
    """The per-group widths n' (n = d1 n') the statement prescribes at constant C, and the log
    argument A / eps of its first width."""
    s, d1 = setting, setting.d1
    if s.statement == "lemma7":
        arg = d1 * s.d2 / s.eps
        return {"groups": {"n": _group(d1 * C * math.log(arg), d1)}, "log_argument": arg}
    if s.statement == "lemma2":
        arg = 2 * d1 * s.d2 / s.eps
        return {"groups": {"n": _group(d1 * C * math.log(arg), d1)}, "log_argument": arg}
    w = widths.widths(
        s.eps,
        s.H,
        d1,
        s.d2 if s.statement == "theorem9" else d1,
        s.alpha,
        s.L,
        s.B if s.statement == "theorem14" else None,
        C,
    )
    if s.statement == "theorem9":
        t = w["theorem9"]
        return {
            "groups": {"n_K": _group(t["n_K"]["bound"], d1), "n_V": _group(t["n_V"]["bound"], d1)},
            "log_argument": t["n_K"]["log_argument"],
        }
    if s.statement == "theorem11":
        t = w["theorem11"]
        return {
            "groups": {"n_MHA": _group(t["n_MHA"]["bound"], d1), "n_FC": _group(t["n_FC"]["bound"], d1)},
            "log_argument": t["n_MHA"]["log_argument"],
        }
    blocks = w["theorem14"]["blocks"]
    groups = {}
    for block in blocks:
        groups[f"n_MHA[{block['b']}]"] = _group(block["n_MHA"]["bound"], d1)
        groups[f"n_FC[{block['b']}]"] = _group(block["n_FC"]["bound"], d1)
    return {"groups": groups, "log_argument": blocks[0]["n_MHA"]["log_argument"]}


# --- the worst inputs a search finds ------------------------------------------------------------------


def worst_input_error(
    error: Callable[[np.ndarray], float],
    shape: tuple[int, ...],
    radius: float,
    rng: np.random.Generator,
    starts: int = 4,
    maxiter: int = 40,
) -> tuple[float, np.ndarray]:
    """max over inputs (rows of norm <= radius) of ``error``, as far as a short search finds it.

    Starts: ``starts`` random directions on the sphere and as many inside; the best half climbs
    with L-BFGS-B (finite differences) on z, the input being ``radius z / sqrt(1 + |z|^2)`` per row.
    """

    def inputs(z: np.ndarray) -> np.ndarray:
        z = z.reshape(shape)
        return radius * z / np.sqrt(1.0 + (z * z).sum(axis=-1, keepdims=True))

    candidates = []
    for k in range(2 * starts):
        direction = rng.standard_normal(shape)
        direction /= np.maximum(np.linalg.norm(direction, axis=-1, keepdims=True), 1e-300)
        scale = 30.0 if k < starts else float(rng.uniform(0.3, 3.0))  # ~sphere, or inside
        z = (direction * scale).ravel()
        candidates.append((error(inputs(z)), z))
    candidates.sort(key=lambda c: -c[0])
    best_value, best_z = candidates[0]
    best_x = inputs(best_z)
    for _, z in candidates[: max(1, starts // 2)]:
        result = optimize.minimize(lambda v: -error(inputs(v)), z, method="L-BFGS-B", options={"maxiter": maxiter})
        climbed = inputs(result.x)
        # the map never reaches the sphere itself: try the climbed rows pushed onto it too
        norms = np.maximum(np.linalg.norm(climbed, axis=-1, keepdims=True), 1e-300)
        for x in (climbed, climbed * (radius / norms)):
            value = error(x)
            if value > best_value:
                best_value, best_x = value, x
    return float(best_value), best_x


# --- one trial -----------------------------------------------------------------------------------------


def _full_mask(T: int) -> np.ndarray:
    return np.ones((T, T), dtype=bool)


def _fc_widths(setting: Setting) -> tuple[int, ...]:
    return (setting.d1,) * (setting.L + 1)


def trial(setting: Setting, groups: dict[str, int], seed: Iterable[int], search: dict[str, int]) -> dict[str, Any]:
    """One (target, source) pair at the given per-group widths: its worst error found and success."""
    s = setting
    rng = np.random.default_rng(np.random.SeedSequence(list(seed)))
    cut = {k: min(v, MAX_GROUP) for k, v in groups.items()}
    d1 = s.d1
    if s.statement == "lemma7":
        n = d1 * cut["n"]
        W = rng.uniform(-1, 1, (s.d2, d1))
        approx = construction.approximate_product(W, rng.uniform(-1, 1, (n, d1)), rng.uniform(-1, 1, (s.d2, n)), "mitm")
        value, threshold = float(approx.error), s.eps / (d1 * s.d2)
    elif s.statement == "lemma2":
        n = d1 * cut["n"]
        W = sources.spectrally_bounded(rng, (s.d2, d1))
        W1, W2 = rng.uniform(-1, 1, (n, d1)), rng.uniform(-1, 1, (s.d2, n))
        layer = construction.approximate_relu_layer(W, W1, W2, "mitm")
        A1, A2 = W1 * layer.M1, W2 * layer.M2

        def lemma2_error(x: np.ndarray) -> float:
            return float(np.linalg.norm(W @ x[0] - A2 @ np.maximum(A1 @ x[0], 0.0)))

        value, _ = worst_input_error(lemma2_error, (1, d1), 1.0, rng, **search)
        threshold = s.eps
    else:
        if s.statement == "theorem9":
            target: Any = sources.target_mha(rng, heads=s.H, d_in=d1, d_key=d1, d_value=d1, d_out=s.d2)
            source: Any = sources.source_mha(
                "theory", rng, heads=s.H, d_in=d1, d_out=s.d2, n_key=d1 * cut["n_K"], n_value=d1 * cut["n_V"]
            )
            forward: Callable[..., np.ndarray] = reference.mha
        elif s.statement == "theorem11":
            target = sources.target_block(rng, d=d1, heads=s.H, d_key=d1, d_value=d1, fc_widths=_fc_widths(s))
            source = sources.source_block(
                "theory", rng, d=d1, heads=s.H, n_mha=d1 * cut["n_MHA"], n_fc=d1 * cut["n_FC"], fc_widths=_fc_widths(s)
            )
            forward = reference.block
        else:
            target = sources.target_transformer(
                rng, blocks=s.B, d=d1, heads=s.H, d_key=d1, d_value=d1, fc_widths=_fc_widths(s)
            )
            source = TransformerWeights(
                tuple(
                    sources.source_block(
                        "theory",
                        rng,
                        d=d1,
                        heads=s.H,
                        n_mha=d1 * cut[f"n_MHA[{b}]"],
                        n_fc=d1 * cut[f"n_FC[{b}]"],
                        fc_widths=_fc_widths(s),
                    )
                    for b in range(1, s.B + 1)
                )
            )
            forward = reference.transformer
        pruned = construction.prune(target, source, "mitm").weights
        mask = _full_mask(s.T)

        def module_error(X: np.ndarray) -> float:
            difference = forward(X, mask, pruned) - forward(X, mask, target)
            return float(np.linalg.norm(difference, axis=-1).max())

        value, _ = worst_input_error(module_error, (s.T, d1), s.alpha, rng, **search)
        threshold = s.eps
    return {
        "error": value,
        "threshold": threshold,
        "success": bool(value <= threshold),
        "near": bool(abs(value - threshold) <= NEAR * threshold),
    }


def _trial_task(
    shared: Any, setting: dict[str, Any], groups: dict[str, int], seed: list[int], search: dict[str, int]
) -> dict[str, Any]:
    return trial(Setting(**setting), groups, seed, search)


# --- frequencies ---------------------------------------------------------------------------------------

CI_SEARCH = {"starts": 2, "maxiter": 15}
FULL_SEARCH = {"starts": 4, "maxiter": 40}


def _seed(setting: Setting, seed: int, groups: dict[str, int], index: int) -> list[int]:
    s = setting
    config = [STATEMENTS.index(s.statement), int(round(s.eps * 1e6)), s.d1, s.d2, s.H, s.L, s.B, s.T]
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
        row = frequency_at(setting, {k: width for k in keys}, trials, seed, search, executor)
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
    "slack": tuple(Setting("lemma7", eps, d, d) for d in (1, 2, 3) for eps in (0.5, 0.1, 0.02))
    + (
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


# --- text ----------------------------------------------------------------------------------------------


def _setting_text(s: dict[str, Any]) -> str:
    parts = [f"eps={s['eps']}", f"d1={s['d1']}"]
    if s["statement"] in ("lemma7", "lemma2", "theorem9"):
        parts.append(f"d2={s['d2']}")
    if s["statement"].startswith("theorem"):
        parts += [f"H={s['H']}", f"T={s['T']}"]
    if s["statement"] in ("theorem11", "theorem14"):
        parts.append(f"L={s['L']}")
    if s["statement"] == "theorem14":
        parts.append(f"B={s['B']}")
    return " ".join(parts)


def format_tables(result: dict[str, Any]) -> str:
    """The frequency, width-slack and C-trend tables of a :func:`run` result, as plain text."""
    lines = [
        f"Success frequencies at the prescribed widths (profile {result['profile']}, seed {result['seed']}; "
        f"worst inputs a search finds; 95% Clopper-Pearson):",
        f"{'statement':<10} {'setting':<30} {'C':>6} {'widths n_prime':<44} {'successes':>9} "
        f"{'interval':>15} {'1-eps':>6} verdict",
    ]
    for r in result["frequencies"]:
        groups = ", ".join(f"{k}={v}" for k, v in r["groups"].items()) + (" (cut)" if r["truncated"] else "")
        lines.append(
            f"{r['setting']['statement']:<10} {_setting_text(r['setting']):<30} {r['C']:>6.3g} {groups:<44} "
            f"{r['successes']:>4}/{r['trials']:<4} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] "
            f"{r['target']:>6.3g} {r['verdict']}"
        )
    lines += [
        "",
        "Width slack (per-group width n'; needed: smallest with success >= 1 - eps at 95% one-sided):",
        f"{'statement':<10} {'setting':<30} {'needed':>7} {'C=1':>5} {'slack':>6} {'C_cal':>6} {'slack':>6} "
        f"{'C needed':>17}",
    ]

    def num(value: Any, fmt: str = ".3g") -> str:
        return "-" if value is None else format(value, fmt)

    for r in result["width_slack"]:
        needed = num(r["needed_n_prime"], "d") if r["needed_n_prime"] is not None else f">{r['n_max']}"
        lines.append(
            f"{r['setting']['statement']:<10} {_setting_text(r['setting']):<30} {needed:>7} "
            f"{max(r['prescribed_C1'].values()):>5} {num(r['slack_C1']):>6} "
            f"{max(r['prescribed_calibrated'].values()):>6} {num(r['slack_calibrated']):>6} "
            f"{num(r['C_needed_low']):>7} .. {num(r['C_needed']):<7}"
        )
    lines += [
        "",
        f"Is C universal? C_needed = c0 + b . (log d1, log H, log 1/eps), least squares, 95% intervals "
        f"(calibrated C = {result['C_calibrated']:.4g}):",
    ]
    for statement, fit in result["C_trend"].items():
        if not fit.get("slopes"):
            lines.append(f"  {statement}: {fit.get('note', 'no fit')} ({fit['points']} points)")
            continue
        slopes = "; ".join(
            f"{k} {v['slope']:+.3f} [{v['ci'][0]:+.3f}, {v['ci'][1]:+.3f}]" for k, v in fit["slopes"].items()
        )
        grows = ", ".join(fit["grows_with"]) or "nothing (every interval reaches 0 or below)"
        lines.append(f"  {statement} ({fit['points']} points): {slopes}; C grows with: {grows}")
    return "\n".join(lines)
