"""Which reading of the paper gives its numbers: a grid of readings of one figure, side by side.

Appendix B.1 and Section 4 leave open, or contradict themselves on, what a reproduction of
Figures 4-6 must choose. Each choice is an axis (:data:`AXES`); a reading is one value on each:

- ``init``: the sources' initialisation (``theory``: Section 3.1; ``theory-inverse``: Section
  4.1's U[-n_K^(-1/4), n_K^(-1/4)]; ``xavier``: Appendix B.1);
- ``solver``: the subset-sum solver (``exact``, ``fast``, ``gurobi`` with ``--mip-gap``,
  ``--time-limit``, ``--threads``);
- ``token``: the regression token, learned from zero with the target or fixed at zero (Figures 4,
  5; Figure 6's targets are untrained);
- ``norms``: the target kept as trained or drawn, or rescaled onto the theorems' assumptions;
- ``error``: what "the approximation error" of a source is (:data:`sltcheck.repro.sweep_config.ERRORS`);
- ``fit``: how the decay is fitted (:data:`sltcheck.repro.fits.FITS`), over every width or a range.

The first four change what is computed: each of their combinations is one run directory under
``DIR/runs/`` (an ordinary ``repro`` run: resumable, with its own summary and figure). The last
two only read those runs. The trained target of each (seed, token) is trained once, cached in
``DIR/targets/`` by its fingerprint and read back by every reading that uses it.

``readings.json`` holds one entry per reading with its options, its fit (gamma, delta, 95%
intervals), whether the paper's and the workshop version's values lie inside, the mean error at
the smallest and largest width, the regime (plateau or exponential), and the reading's wall time;
then a ``conclusion`` the code writes from those numbers. ``readings.svg``/``.png`` draw every
reading's curve beside the paper's fit.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from sltcheck.errors import UsageError
from sltcheck.executors import Executor
from sltcheck.jsonfiles import read_json, seal, write_json_atomic
from sltcheck.repro import figures, sweep_config, sweep_summary, synthetic
from sltcheck.repro.dataset import angular_velocity
from sltcheck.repro.fits import FITS, PAPER_FIT, WORKSHOP_FIT, inside, regime
from sltcheck.repro.readings_text import conclusion
from sltcheck.repro.store import RunDirectory, versions
from sltcheck.rundir import DirectoryLock, bind_configuration, ensure_writable_directory
from sltcheck.schema import SCHEMA_VERSION, json_safe

COMPUTED = ("init", "solver", "token", "norms")  # the axes that change what is computed
DEFAULTS: dict[str, tuple[str, ...]] = {
    "init": ("theory", "theory-inverse", "xavier"),
    "solver": ("exact",),
    "token": ("learned", "fixed-zero"),
    "norms": ("keep", "rescale"),
    "error": ("max",),
    "fit": ("linear",),
}
NORMS = {"keep": "keep", "rescale": "rescale"}  # the axis's values are the norm policies
# Quick preset widths per figure (Figure 4 reaches 32, where the Xavier plateau shows).
QUICK_WIDTHS = {"fig4": tuple(range(4, 33, 4))}


@dataclass(frozen=True)
class ReadingsConfig:
    figure: str
    preset: str
    grid: dict[str, tuple[str, ...]]  # axis -> values
    fit_widths: tuple[tuple[int, int] | None, ...] = (None,)  # None: every width
    widths: tuple[int, ...] | None = None  # None: the preset's
    sources: int | None = None  # None: the preset's
    test_samples: int | None = None  # None: the preset's
    target_epochs: int | None = None  # None: the preset's
    seed: int = 0
    solver_options: dict[str, Any] = field(default_factory=dict)
    input_space: bool = False  # every run brackets its sources' worst errors (sltcheck.repro.input_space)

    def as_record(self) -> dict[str, Any]:
        return sweep_config.omit_unset(asdict(self), ("input_space",))

    def run_config(self, init: str, solver: str, token: str, norms: str) -> sweep_config.SweepConfig:
        overrides: dict[str, Any] = {"solver": solver, "init": init, "norm_policy": NORMS[norms],
                                     "regression_token": token, "seed": self.seed,
                                     "solver_options": dict(self.solver_options), "input_space": self.input_space}
        widths = self.widths or QUICK_WIDTHS.get(self.figure) if self.preset == "quick" else self.widths
        if widths:
            overrides["widths"] = tuple(widths)
        for name in ("sources", "test_samples", "target_epochs"):
            if getattr(self, name) is not None:
                overrides[name] = getattr(self, name)
        return synthetic.preset_config(self.figure, self.preset, "theory", **overrides)

    def runs(self) -> list[tuple[str, sweep_config.SweepConfig]]:
        """(name, configuration) of every computed combination, in grid order."""
        out = []
        for init, solver, token, norms in itertools.product(*(self.grid[axis] for axis in COMPUTED)):
            name = f"{init}+{solver}+{token}+{norms}" if self.figure != "fig6" else f"{init}+{solver}+{norms}"
            out.append((name, self.run_config(init, solver, token, norms)))
        return out


def make_config(figure: str, preset: str, grid: dict[str, tuple[str, ...] | None] | None = None,
                **options: Any) -> ReadingsConfig:
    """A validated configuration: ``grid`` gives the values of any axis (others: :data:`DEFAULTS`)."""
    if figure not in sweep_config.FIGURES:
        raise UsageError(f"figure must be one of {', '.join(sweep_config.FIGURES)}, got {figure!r}")
    chosen = _chosen_axes(figure, grid)
    _check_axis_values(chosen)
    config = ReadingsConfig(figure, preset, chosen, **options)
    for _, run_config in config.runs():  # every computed combination checked before any work
        sweep_config.validate_config(run_config)
    for span in config.fit_widths:
        if span is not None and not (isinstance(span, tuple) and len(span) == 2 and 1 <= span[0] < span[1]):
            raise UsageError(f"--fit-widths must be ranges LO:HI with 1 <= LO < HI, got {span!r}")
    return config


def _chosen_axes(figure: str, grid: dict[str, tuple[str, ...] | None] | None) -> dict[str, tuple[str, ...]]:
    """Every axis's values: ``grid``'s (duplicates dropped) where given, else :data:`DEFAULTS`'s;
    Figure 6's token is always ``learned``."""
    chosen = {axis: tuple(values) for axis, values in DEFAULTS.items()}
    for axis, values in (grid or {}).items():
        if axis not in DEFAULTS:
            raise UsageError(f"axis must be one of {', '.join(DEFAULTS)}, got {axis!r}")
        if values is not None:
            chosen[axis] = tuple(dict.fromkeys(values))
    if figure == "fig6":
        if grid and grid.get("token") is not None:
            raise UsageError("--tokens: Figure 6's targets are untrained (no regression token to choose)")
        chosen["token"] = ("learned",)
    return chosen


def _check_axis_values(chosen: dict[str, tuple[str, ...]]) -> None:
    """Every axis names at least one value, and the error, fit and norms axes only allowed ones."""
    allowed = {"error": tuple(sweep_config.ERRORS), "fit": FITS, "norms": tuple(NORMS)}
    for axis, values in chosen.items():
        if not values:
            raise UsageError(f"--{axis}s must name at least one value")
        for value in values:
            if axis in allowed and value not in allowed[axis]:
                raise UsageError(f"--{axis}s must name values from {', '.join(allowed[axis])}, got {value!r}")


@dataclass(frozen=True)
class Computed:
    """One computed combination: its run's summary and records, and its wall time here."""

    name: str
    options: dict[str, str]
    config: sweep_config.SweepConfig
    summary: dict[str, Any]
    records: list[dict[str, Any]]
    seconds: float


def run(config: ReadingsConfig, out: str | Path, progress: bool = True,
        executor: Executor | None = None) -> dict[str, Any]:
    """Run (or resume) every computed combination into ``out/runs/NAME``, then write
    ``out/readings.json`` and the overlay plot; returns the readings document."""
    directory = ensure_writable_directory(out)
    fresh = not (directory / "config.json").exists()
    lock = DirectoryLock(directory, "repro readings")
    computed: list[Computed] = []
    invoked = time.perf_counter()
    try:
        bind_configuration(directory, json_safe(config.as_record()), versions())
        earlier = _earlier_wall_seconds(directory / "readings.json")
        runs = config.runs()
        for index, (name, run_config) in enumerate(runs, 1):
            if progress:
                print(f"reading {index}/{len(runs)}: {name}", flush=True)
            run_began = time.perf_counter()
            summary = synthetic.run(run_config, str(directory / "runs" / name), progress=progress,
                                    executor=executor, targets_cache=directory / "targets")
            with RunDirectory(directory / "runs" / name, run_config.as_record()) as stored:
                records = sweep_summary.stored_records(stored.rows(), str(stored.path / "results.sqlite"))
            options = dict(zip(COMPUTED, _options_of(name, config.figure), strict=True))
            computed.append(Computed(name, options, run_config, summary, records, time.perf_counter() - run_began))
            # after every run, so an interrupted grid still shows (as partial) what it finished
            document = readings_document(config, computed, planned=len(runs))
            document["wall_seconds_all"] = earlier + time.perf_counter() - invoked
            write_json_atomic(directory / "readings.json", seal(json_safe(document)), indent=2, sort_keys=True)
        figures.write_overlay(config.figure, [r for r in document["readings"] if r["curve"]], directory)
        return document
    except BaseException:
        if fresh and not computed and not (directory / "readings.json").exists():
            (directory / "config.json").unlink(missing_ok=True)  # nothing finished: a corrected command may start
        raise
    finally:
        lock.release()


def _earlier_wall_seconds(path: Path) -> float:
    """The wall time earlier invocations spent on this grid (0 for a new one)."""
    if not path.exists():
        return 0.0
    return float(read_json(path, "readings").get("wall_seconds_all", 0.0))


def _options_of(name: str, figure: str) -> tuple[str, ...]:
    parts = name.split("+")
    return tuple(parts) if figure != "fig6" else (parts[0], parts[1], "untrained", parts[2])


# --- the readings' table ------------------------------------------------------------------------


def readings_document(config: ReadingsConfig, computed: list[Computed], planned: int | None = None) -> dict[str, Any]:
    """The readings of the runs in ``computed``; ``complete`` only where every one of the
    ``planned`` runs (default: those given) is there and complete."""
    rows = []
    for run in computed:
        for error, kind, span in itertools.product(config.grid["error"], config.grid["fit"], config.fit_widths):
            rows.append(_reading(config, run, error, kind, span))
    complete = all(run.summary.get("complete") for run in computed) and len(computed) == (planned or len(computed))
    document = {
        "schema_version": SCHEMA_VERSION, "figure": config.figure, "preset": config.preset,
        "config": config.as_record(), "complete": complete,
        "paper_fit": PAPER_FIT, "workshop_fit": WORKSHOP_FIT,
        "readings": rows,
        "target": _target_facts(computed),
        "setting": _setting(computed[0].config) if computed else {},
        "runs_planned": planned or len(computed), "runs_done": len(computed),
        "wall_seconds": sum(run.seconds for run in computed),
        "source_seconds": sum(float(run.summary.get("source_seconds") or 0.0) for run in computed),
    }
    document["conclusion"] = conclusion(document)
    return document


def _setting(run_config: sweep_config.SweepConfig) -> dict[str, Any]:
    """What every reading shares (the preset's counts, or the ones given)."""
    return {key: getattr(run_config, key) for key in ("sources", "widths", "lengths", "blocks", "test_samples",
                                                      "target_epochs", "seed")}


def _target_facts(computed: list[Computed]) -> list[dict[str, Any]]:
    """Each trained target's training loss beside Var(omega): what it learned, if anything."""
    facts: dict[str, dict[str, Any]] = {}
    for run in computed:
        loss = run.summary.get("target_train_loss")
        if loss is None or run.options["token"] in facts:
            continue
        omega = angular_velocity("train", run.config.seed).omega
        variance = float(np.var(omega))
        facts[run.options["token"]] = {"token": run.options["token"], "train_loss": float(loss),
                                       "omega_variance": variance, "explained": 1.0 - float(loss) / variance}
    return list(facts.values())


def _name(run: Computed, error: str, kind: str, span: tuple[int, int] | None) -> str:
    fit_part = kind + ("" if span is None else f"[{span[0]}:{span[1]}]")
    return f"{run.name} / {error} / {fit_part}"


def _curve(figure: str, points: list[dict[str, Any]], error: str) -> list[dict[str, float]]:
    def chosen(p: dict[str, Any]) -> dict[str, float]:
        return p.get("errors", {}).get(error) or {"mean": p["mean"], "std": p["std"]}

    if figure == "fig4":
        selected, x = points, "width"
    elif figure == "fig5":
        widest = max(p["width"] for p in points)
        selected, x = [p for p in points if p["width"] == widest], "length"
    else:
        most = max(p["blocks"] for p in points)
        selected, x = [p for p in points if p["blocks"] == most], "width"
    return [{"x": float(p[x]), "mean": chosen(p)["mean"], "std": chosen(p)["std"]}
            for p in sorted(selected, key=lambda p: p[x])]


def _reading(config: ReadingsConfig, run: Computed, error: str, kind: str,
             span: tuple[int, int] | None) -> dict[str, Any]:
    summary = run.summary
    points = summary["points"]
    fits = sweep_summary.fits_of(run.config, points, run.records, error, kind, span)
    row: dict[str, Any] = {
        "name": _name(run, error, kind, span), "run": f"runs/{run.name}",
        "options": {**run.options, "error": error, "fit": kind,
                    "fit_widths": "all" if span is None else [span[0], span[1]]},
        "fits": fits,
        "checked": summary["checked"], "violations": len(summary["violations"]),
        "vacuous": summary.get("vacuous", 0), "held": summary.get("held"), "undecided": summary["undecided"],
        "complete": bool(summary.get("complete")),
        "seconds": run.seconds, "source_seconds": summary.get("source_seconds"),
        "curve": _curve(config.figure, points, error),
    }
    if config.figure == "fig4":
        row.update(_fig4_facts(fits.get("all"), row["curve"]))
    elif config.figure == "fig5":
        row.update(_fig5_facts(points, error))
    else:
        row.update(_fig6_facts(run.config, points, run.records, error, kind, span, fits))
    return row


def _fit_summary(fit: dict[str, Any] | None) -> dict[str, Any]:
    if not isinstance(fit, dict) or "gamma" not in fit:
        return {"gamma": None, "delta": None, "gamma_interval": None, "delta_interval": None,
                "fit_error": (fit or {}).get("error", "too few points")}
    return {key: fit.get(key) for key in ("gamma", "delta", "gamma_interval", "delta_interval", "points")}


def _inside(fit: dict[str, Any] | None, reference: dict[str, float]) -> dict[str, bool | None]:
    if not isinstance(fit, dict) or "gamma" not in fit:
        return {"gamma": None, "delta": None, "both": None}
    gamma, delta = inside(fit, "gamma", reference["gamma"]), inside(fit, "delta", reference["delta"])
    both = None if gamma is None or delta is None else gamma and delta
    return {"gamma": gamma, "delta": delta, "both": both}


def _fig4_facts(fit: dict[str, Any] | None, curve: list[dict[str, float]]) -> dict[str, Any]:
    widths = np.array([c["x"] for c in curve])
    means = np.array([c["mean"] for c in curve])
    return {
        **_fit_summary(fit),
        "paper_inside": _inside(fit, PAPER_FIT), "workshop_inside": _inside(fit, WORKSHOP_FIT),
        "smallest_width": {"width": float(widths[0]), "mean": float(means[0])},
        "largest_width": {"width": float(widths[-1]), "mean": float(means[-1])},
        "regime": regime(widths, means),
    }


def _fig5_facts(points: list[dict[str, Any]], error: str) -> dict[str, Any]:
    """Per width: how the mean error moves with T (largest / smallest over T, and the slope of
    log error on log T with its 95% interval: 0 inside means no growth detected)."""
    from sltcheck.repro.fits import fit_log_linear

    per_width = []
    for width in sorted({p["width"] for p in points}):
        chosen = sorted((p for p in points if p["width"] == width), key=lambda p: p["length"])
        lengths = np.array([p["length"] for p in chosen], dtype=float)
        means = np.array([(p.get("errors", {}).get(error) or p)["mean"] for p in chosen], dtype=float)
        entry: dict[str, Any] = {"width": width, "largest_over_smallest": float(means.max() / means.min())
                                 if means.min() > 0 else None}
        if lengths.size >= 2 and np.all(means > 0):
            slope = fit_log_linear(np.log(lengths), means)  # log eps = c - delta log T: slope = -delta
            entry["slope"] = -slope.delta
            entry["slope_interval"] = None if slope.delta_interval is None else \
                [-slope.delta_interval[1], -slope.delta_interval[0]]
        per_width.append(entry)
    grows = [e for e in per_width if e.get("slope_interval") and e["slope_interval"][0] > 0]
    return {"over_length": per_width, "grows_with_length": bool(grows),
            "bounded_in_length": not grows}


def _fig6_facts(run_config: sweep_config.SweepConfig, points: list[dict[str, Any]], records: list[dict[str, Any]],
                error: str, kind: str, span: tuple[int, int] | None, fits: dict[str, Any]) -> dict[str, Any]:
    """Does the error accumulate with B (the mean error at the largest width, per B), and is
    delta shared (each B's delta fitted on its own, beside the first block's)?"""
    widest = max(p["width"] for p in points)
    at_widest = {p["blocks"]: (p.get("errors", {}).get(error) or p)["mean"] for p in points if p["width"] == widest}
    blocks = sorted(at_widest)
    increasing = all(at_widest[a] < at_widest[b] for a, b in itertools.pairwise(blocks))
    free = {}
    for b in blocks:
        single = replace(run_config, blocks=(b,))
        fit = sweep_summary.fits_of(single, [p for p in points if p["blocks"] == b], records, error, kind, span)
        free[f"B={b}"] = _fit_summary(fit.get(f"B={b}"))
    first = free[f"B={blocks[0]}"]
    shared = []
    for b in blocks[1:]:
        own = free[f"B={b}"]
        a, c = first.get("delta_interval"), own.get("delta_interval")
        shared.append({"blocks": b, "delta": own.get("delta"), "overlaps_first": None if not (a and c)
                       else bool(a[0] <= c[1] and c[0] <= a[1])})
    return {
        "largest_width": widest, "mean_at_largest_width": {f"B={b}": at_widest[b] for b in blocks},
        "accumulates_with_blocks": increasing, "free_fits": free, "delta_shared": shared,
        **_fit_summary(fits.get(f"B={blocks[0]}")),
    }
