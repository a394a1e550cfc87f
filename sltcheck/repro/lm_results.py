"""Figures 7-8's ``results.json``, torch-free: its summary per point (mean and sample standard deviation
over seeds), the Figure 7 series a point belongs to, and the check every reader applies (the summary
derived again from the runs, each run against its sealed run file). The report and ``repro readme``
read a results file without the ``lm`` extra; :mod:`sltcheck.repro.lm.sweeps` writes it.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from sltcheck.jsonfiles import read_json, require_sealed
from sltcheck.repro.verify import differ
from sltcheck.schema import json_safe


def series_label(entry: dict, theory: float) -> str:
    """The Figure 7 series a summary entry belongs to: dense, s = 1 or s = n_K^(1/4)."""
    if entry["mode"] == "dense":
        return "dense (trained)"
    if abs(float(entry["scale"]) - theory) < 1e-9:
        return "s = n_K^(1/4)"
    return f"s = {float(entry['scale']):g}"


def _mean_std(values: list[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (None for one value; NaN where a diverged run's
    loss is not finite: ``statistics.stdev`` raises on an infinity)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None
    return mean, (statistics.stdev(values) if all(math.isfinite(v) for v in values) else math.nan)


def summarize(runs: list[dict]) -> list[dict]:
    """Mean and sample standard deviation (None for one seed) per point."""
    groups: dict[tuple, list[dict]] = {}
    for run in runs:
        groups.setdefault((run["mode"], run["scale"], run["keep_fraction"]), []).append(run)
    summary = []
    for (mode, scale, keep), members in sorted(groups.items(), key=lambda kv: kv[0]):
        # float(): a stored diverged run reads back as "inf"/"nan" (strict JSON)
        best_mean, best_std = _mean_std([float(r["best_val_loss"]) for r in members])
        final_mean, final_std = _mean_std([float(r["final_val_loss"]) for r in members])
        summary.append({
            "mode": mode,
            "scale": scale,
            "keep_fraction": keep,
            "n_seeds": len(members),
            "seeds": sorted(r["seed"] for r in members),
            "best_val_loss_mean": best_mean,
            "best_val_loss_std": best_std,
            "final_val_loss_mean": final_mean,
            "final_val_loss_std": final_std,
            "nonzero_params": statistics.fmean(r["nonzero_params"] for r in members),
        })
    return summary


def results_differences(document: dict, path: Path) -> list[str]:
    """Where a ``results.json`` disagrees with what it derives from: its ``summary`` re-derived from its
    ``runs`` (per size for Figure 7's combined file), ``complete`` from ``missing``, and each run against
    the sealed ``runs/<run_id>.json`` beside it where the directory holds one."""
    where = f"{path}"
    runs, config = document.get("runs") or [], document.get("config") or {}
    try:
        if "sizes" in config:
            derived = []
            for size in config["sizes"]:
                own = [{k: v for k, v in run.items() if k != "size"} for run in runs if run.get("size") == size]
                theory = float(config["theory_scale"][size])
                derived += [{**entry, "size": size, "series": series_label(entry, theory)} for entry in summarize(own)]
            derived.sort(key=lambda e: (e["series"], e["nonzero_params"]))
        else:
            derived = summarize(runs)
    except (KeyError, TypeError, ValueError) as error:
        return [f"{where}: its summary cannot be derived from its runs ({type(error).__name__}: {error})"]
    found = differ(document.get("summary"), json_safe(derived), f"{where} summary")
    if "complete" in document and document["complete"] != (not document.get("missing")):
        found.append(f"{where} complete: recorded {document['complete']}, derived {not document.get('missing')} "
                     f"(missing {document.get('missing')})")
    for run in runs:
        stored = path.parent / "runs" / f"{run.get('run_id')}.json"
        if stored.is_file():
            found += differ(run, read_run(stored).get("result"), f"{where} runs[{run.get('run_id')}]")
    return found


def read_run(path: Path) -> dict:
    """One finished run's file (``OUT/runs/<run_id>.json``), refused where it is not as sltcheck sealed it."""
    stored = read_json(path, "run result")
    require_sealed(stored, "run result", path)
    return stored
