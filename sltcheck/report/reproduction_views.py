"""The report's sections on the reproductions: display values from ``sltcheck repro`` runs.

Figures 4-6 (``summary.json``: the run's own figure or a plot drawn here, the fits, the points, runs
side by side), the readings of a figure, and Figures 7-8 (``results.json`` of the language model).
Each function takes the report's content (:func:`sltcheck.report.page.build`) and returns the values
its template sees as ``view``.
"""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path
from typing import Any

from markupsafe import Markup

from sltcheck.report.labels import scientific
from sltcheck.report.plots import Series, line_plot
from sltcheck.repro.fits import interval_text


def _synthetic_plot(summary: dict[str, Any]) -> str:
    figure = str(summary.get("figure"))
    points = summary.get("points", [])  # type: list[dict[str, Any]]
    fits = summary.get("fits", {})  # type: dict[str, Any]
    paper = summary.get("paper_fit", {})  # type: dict[str, float]
    series: list[Series] = []
    if figure in ("fig4", "fig6"):
        key, xlabel = "blocks", "source width n (n_K = n_V, or n_MHA = n_FC)"
        for value in sorted({p[key] for p in points}):
            chosen = [p for p in points if p[key] == value]
            x = [float(p["width"]) for p in chosen]
            label = "error" if figure == "fig4" else f"B = {value}"
            series.append(Series(label, x, [float(p["mean"]) for p in chosen],
                                 [float(p["std"]) for p in chosen]))
            fit = fits.get("all" if figure == "fig4" else f"B={value}")
            if isinstance(fit, dict) and "gamma" in fit:
                series.append(Series(f"fit {label}", x, [fit["gamma"] * math.exp(-fit["delta"] * v) for v in x],
                                     dashed=True, markers=False, color=series[-1].color))
            series.append(Series(f"bound {label}", x, [float(p["mean_bound"]) for p in chosen],
                                 dashed=True, markers=False, scales_axis=False))
        if figure == "fig4" and paper and points:
            x = sorted({float(p["width"]) for p in points})
            series.append(Series("paper 0.8e^-0.06n", x, [paper["gamma"] * math.exp(-paper["delta"] * v) for v in x],
                                 dashed=True, markers=False, color="#7f7f7f"))
        return line_plot(series, title=f"{figure}: approximation error vs width", xlabel=xlabel,
                         ylabel="max_i ||S(x_i) - T(x_i)||", logy=True)
    for width in sorted({p["width"] for p in points}):
        chosen = sorted((p for p in points if p["width"] == width), key=lambda p: p["length"])
        series.append(Series(f"n = {width}", [float(p["length"]) for p in chosen],
                             [float(p["mean"]) for p in chosen], [float(p["std"]) for p in chosen]))
    return line_plot(series, title="fig5: approximation error vs sequence length", xlabel="T",
                     ylabel="max_i ||S(x_i) - T(x_i)||", logy=True, logx=True)


def _figure_image(folder: Path, stem: str) -> Markup | None:
    """The run directory's own figure (``STEM.svg``, drawn by :mod:`sltcheck.repro.figures`) as an
    ``<img>`` with a data URI: the same file the run wrote, and an SVG inside ``<img>`` runs no script."""
    path = folder / f"{stem}.svg"
    if not path.is_file():
        return None
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return Markup('<img class="figure" alt="{}" src="data:image/svg+xml;base64,{}">').format(str(path), data)


# Configuration keys that name a run but do not change its results.
_NOT_AN_OPTION = ("extra",)


def _distinguishing(configs: list[dict[str, Any]]) -> list[str]:
    """The configuration keys whose values differ between the runs shown side by side."""
    keys = sorted({k for c in configs for k in c} - set(_NOT_AN_OPTION))
    return [k for k in keys if len({json.dumps(c.get(k), sort_keys=True) for c in configs}) > 1]


def _natural(name: str) -> list[Any]:
    """A fit's name as a sort key with its numbers as numbers: T=4 before T=16, B=2 before B=10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _beyond_float(value: Any) -> bool:
    """A mean bound of infinity (or a decimal beyond float64): the check cannot fail."""
    try:
        return math.isinf(float(value))
    except (TypeError, ValueError):
        return False


def _point_row(p: dict[str, Any]) -> tuple[Any, ...]:
    vacuous = _beyond_float(p["mean_bound"])
    bound = f"vacuous (bound = {scientific(p['mean_bound'], 3)})" if vacuous else scientific(p["mean_bound"], 3)
    ratio = "— (bound vacuous)" if vacuous else scientific(p["max_ratio"], 4)
    return (p["blocks"], p["length"], p["width"], p["sources"], scientific(p["mean"], 4), scientific(p["std"], 3),
            bound, ratio)


# What a quick preset's fit is (beside the paper's): too few widths and sources to estimate it.
QUICK_FIT_NOTE = ("The quick preset (a few small widths, 3-5 sources each) cannot reproduce the paper's fit: its "
                  "(gamma, delta) come from too few points to compare with (0.8, 0.06); run --preset paper for that.")


def synthetic_view(report: dict[str, Any]) -> dict[str, Any]:
    shown = []
    for summary in report["synthetic"]:
        fits = [{"name": name,
                 "gamma": interval_text(fit, "gamma"), "delta": interval_text(fit, "delta")}
                for name, fit in sorted(summary.get("fits", {}).items(), key=lambda item: _natural(item[0]))
                if isinstance(fit, dict) and "gamma" in fit]
        points = [_point_row(p) for p in summary.get("points", [])]
        source = Path(str(summary.get("_source", "")))
        image = _figure_image(source.parent, "figure") if summary.get("_source") else None
        shown.append({"figure": summary.get("figure"), "config": summary.get("config", {}),
                      **_input_space_view(summary, source),
                      "checked": summary.get("checked"), "violations": len(summary.get("violations", [])),
                      "vacuous": summary.get("vacuous"), "held": summary.get("held"),
                      "least_over_trivial": summary.get("least_bound_over_trivial"),
                      "worst_ratio": summary.get("worst_ratio"), "norm_policy": summary.get("norm_policy"),
                      "plot": image or Markup(_synthetic_plot(summary)), "fits": fits, "points": points,
                      "fit_note": QUICK_FIT_NOTE if (summary.get("config") or {}).get("preset") == "quick" else None,
                      "seconds": summary.get("source_seconds"), "source": summary.get("_source")})
    return {"synthetic": shown, "side_by_side": _side_by_side(report["synthetic"]),
            "readings": [_readings_view(document) for document in report.get("readings", [])]}


def _input_space_view(summary: dict[str, Any], source: Path) -> dict[str, Any]:
    """The run's input-space brackets (``--input-space``): its plot, a table per point, what they say."""
    if not summary.get("input_space"):
        return {"input_space": None}
    from sltcheck.repro import input_space_text

    return {"input_space": {"header": input_space_text.HEADER, "rows": input_space_text.point_rows(summary),
                            "sentences": input_space_text.sentences(summary),
                            "plot": _figure_image(source.parent, "input-space") if summary.get("_source") else None}}


def _side_by_side(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per figure with two runs or more: one row per run, the options that tell them apart, then
    every fit, the checks and the run time."""
    tables = []
    for figure in sorted({str(s.get("figure")) for s in summaries}):
        runs = [s for s in summaries if str(s.get("figure")) == figure]
        if len(runs) < 2:
            continue
        options = _distinguishing([s.get("config", {}) for s in runs])
        names = sorted({name for s in runs for name in s.get("fits", {})})
        rows = []
        for s in runs:
            fits = s.get("fits", {})
            cells = [json.dumps(s.get("config", {}).get(k)) for k in options]
            for name in names:
                fit = fits.get(name)
                cells.append(f"gamma {interval_text(fit, 'gamma')}; delta {interval_text(fit, 'delta')}"
                             if isinstance(fit, dict) and "gamma" in fit else "no fit")
            cells += [f"{s.get('checked')} checked, {len(s.get('violations', []))} violated, "
                      f"{s.get('vacuous', '?')} vacuous",
                      f"{float(s['source_seconds']):.0f}" if isinstance(s.get("source_seconds"), (int, float))
                      else "not recorded", str(s.get("_source"))]
            rows.append(cells)
        tables.append({"figure": figure, "header": [*options, *(f"fit {n}" for n in names), "checks",
                                                    "source seconds", "run"], "rows": rows})
    return tables


def _readings_view(document: dict[str, Any]) -> dict[str, Any]:
    from sltcheck.repro.readings_text import table

    header, rows = table(document)
    source = Path(str(document.get("_source", "")))
    return {"figure": document.get("figure"), "preset": document.get("preset"), "header": header, "rows": rows,
            "conclusion": str(document.get("conclusion", "")).splitlines(), "complete": document.get("complete"),
            "plot": _figure_image(source.parent, "readings"), "source": document.get("_source")}


LM_COLUMNS = ("mode", "scale", "keep_fraction", "n_seeds", "best_val_loss_mean", "best_val_loss_std", "nonzero_params")


def _lm_plot(result: dict[str, Any]) -> str:
    """Figure 7 (loss vs nonzero parameters, with and without query/key scaling) or
    Figure 8 (loss vs the query/key scale s), mean ± std over seeds."""
    summary: list[dict[str, Any]] = result.get("summary", [])
    figure = str(result.get("figure"))
    theory = result.get("config", {}).get("theory_scale")
    series: list[Series] = []
    if figure == "fig8":
        chosen = sorted((p for p in summary if p.get("mode") == "edge-popup"), key=lambda p: float(p["scale"]))
        series.append(Series("edge-popup", [float(p["scale"]) for p in chosen],
                             [float(p["best_val_loss_mean"]) for p in chosen],
                             [float(p.get("best_val_loss_std") or 0.0) for p in chosen]))
        if theory and chosen:
            losses = [float(p["best_val_loss_mean"]) for p in chosen]
            series.append(Series(f"s = n_K^(1/4) = {float(theory):.3g}", [float(theory)] * 2,
                                 [min(losses), max(losses)], dashed=True, markers=False, color="#7f7f7f"))
        xlabel = "query/key scale s"
    else:
        groups: dict[str, list[dict[str, Any]]] = {}
        for p in summary:
            label = p.get("series") or ("dense" if p.get("mode") != "edge-popup" else f"s = {float(p['scale']):.3g}")
            groups.setdefault(label, []).append(p)
        for label, chosen in groups.items():
            chosen.sort(key=lambda p: float(p["nonzero_params"]))
            series.append(Series(label, [float(p["nonzero_params"]) for p in chosen],
                                 [float(p["best_val_loss_mean"]) for p in chosen],
                                 [float(p.get("best_val_loss_std") or 0.0) for p in chosen]))
        xlabel = "nonzero parameters"
    return line_plot(series, title=f"{figure}: best validation loss", xlabel=xlabel, ylabel="validation loss")


def lm_view(report: dict[str, Any]) -> dict[str, Any]:
    shown = []
    for result in report["lm"]:
        config = result.get("config", {})
        shown.append({"figure": result.get("figure"), "preset": result.get("preset"), "model": config.get("model", {}),
                      "theory": config.get("theory_scale"), "splits": config.get("data", {}).get("splits"),
                      "plot": Markup(_lm_plot(result)), "columns": LM_COLUMNS,
                      "rows": [[p.get(c) for c in LM_COLUMNS] for p in result.get("summary", [])],
                      "source": result.get("_source")})
    return {"lm": shown}
