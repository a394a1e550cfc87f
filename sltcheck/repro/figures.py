"""The synthetic figures drawn as the paper draws them, as files beside the results.

Figures 4 and 6: the mean approximation error over the sources against the width (log scale),
standard deviations as error bars, each fit dashed in its curve's colour, and for Figure 4 the
paper's fit 0.8 exp(-0.06 n) in grey; Figure 5: the mean error against T, one curve per width.
:func:`write` puts ``figure.svg`` and ``figure.png`` into a run directory; :func:`write_overlay`
puts every reading of a ``repro readings`` run into one plot beside the paper's fit. Both are
deterministic (no dates, a fixed SVG id salt), and the HTML report embeds the same files.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sltcheck.repro.fits import PAPER_FIT

FORMATS = ("svg", "png")
PAPER_COLOUR = "0.45"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    matplotlib.rcParams["svg.hashsalt"] = "sltcheck"  # element ids from a fixed salt: same bytes each run
    import matplotlib.pyplot as plt

    return plt


def _save(figure: Any, folder: Path, stem: str) -> list[Path]:
    written = []
    for suffix in FORMATS:
        path = folder / f"{stem}.{suffix}"
        temporary = path.with_name(f".{path.name}.tmp")
        metadata = {"Date": None} if suffix == "svg" else {"Software": None}
        figure.savefig(temporary, format=suffix, dpi=120, bbox_inches="tight", metadata=metadata)
        temporary.replace(path)
        written.append(path)
    return written


def _fit_curve(fit: object, widths: Sequence[float]) -> list[float] | None:
    if not isinstance(fit, dict) or not isinstance(fit.get("gamma"), float):
        return None
    return [fit["gamma"] * math.exp(-fit["delta"] * n) for n in widths]


def _paper_line(axes: Any, widths: Sequence[float]) -> None:
    span = [min(widths), max(widths)]
    axes.plot(span, [PAPER_FIT["gamma"] * math.exp(-PAPER_FIT["delta"] * n) for n in span], color=PAPER_COLOUR,
              linestyle="--", linewidth=2, label="paper: 0.8 exp(-0.06 n)")


# On the log axis a lower error bar ends at this fraction of its mean where mean - std <= 0 (it would
# otherwise run off the bottom of the plot, below the axis); such bars end in a caret.
LOG_FLOOR = 0.1


def _log_errors(means: Sequence[float], stds: Sequence[float]) -> tuple[list[list[float]], list[bool]]:
    """Asymmetric error bars for a log axis: [lower, upper] lengths, and which lower ones were cut."""
    cut = [m - s <= 0 for m, s in zip(means, stds, strict=True)]
    lower = [m * (1 - LOG_FLOOR) if c else s for m, s, c in zip(means, stds, cut, strict=True)]
    return [lower, list(stds)], cut


def _errorbar(axes: Any, x: Sequence[float], means: Sequence[float], stds: Sequence[float], label: str) -> Any:
    """Mean +- std on the log axis, never below it: a cut lower bar ends at LOG_FLOOR x its mean, marked."""
    yerr, cut = _log_errors(means, stds)
    line = axes.errorbar(x, means, yerr=yerr, marker="o", capsize=3, label=label)
    ends = [(xi, m * LOG_FLOOR) for xi, m, c in zip(x, means, cut, strict=True) if c]
    if ends:
        axes.plot(*zip(*ends, strict=True), linestyle="none", marker="v", color=line[0].get_color(), markersize=5)
    return line


def draw(summary: dict[str, Any], error: str = "max", title: str | None = None) -> Any:
    """A matplotlib figure of one run's summary (the error definition ``error``)."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6.4, 4.4))
    points = summary["points"]
    kind = summary["figure"]

    def mean_std(p: dict[str, Any]) -> tuple[float, float]:
        chosen = p.get("errors", {}).get(error) or {"mean": p["mean"], "std": p["std"]}
        return float(chosen["mean"]), float(chosen["std"])

    if kind in ("fig4", "fig6"):
        for blocks in sorted({p["blocks"] for p in points}):
            chosen = [p for p in points if p["blocks"] == blocks]
            widths = [float(p["width"]) for p in chosen]
            means, stds = zip(*(mean_std(p) for p in chosen), strict=True)
            label = "mean error" if kind == "fig4" else f"B = {blocks}"
            line = _errorbar(axes, widths, means, stds, label)
            curve = _fit_curve(summary["fits"].get("all" if kind == "fig4" else f"B={blocks}"), widths)
            if curve is not None:
                axes.plot(widths, curve, linestyle=":", color=line[0].get_color(), label=f"fit, {label}")
        if kind == "fig4" and points:
            _paper_line(axes, [float(p["width"]) for p in points])
        axes.set_xlabel("source width n (n_K = n_V)" if kind == "fig4" else "source width n (n_MHA = n_FC)")
    else:
        for width in sorted({p["width"] for p in points}):
            chosen = sorted((p for p in points if p["width"] == width), key=lambda p: p["length"])
            means, stds = zip(*(mean_std(p) for p in chosen), strict=True)
            _errorbar(axes, [float(p["length"]) for p in chosen], means, stds, f"n = {width}")
        axes.set_xscale("log")
        axes.set_xlabel("sequence length T")
    axes.set_yscale("log")
    axes.set_ylabel(f"approximation error ({error})")
    axes.set_title(title or f"{kind}: approximation error, mean and std over sources\n"
                   f"(a lower bar that would reach 0 stops at {LOG_FLOOR:g} x the mean, marked v)", fontsize="medium")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")
    return figure


def write(summary: dict[str, Any], folder: Path, error: str = "max") -> list[Path]:
    """``figure.svg`` and ``figure.png`` of one run in ``folder`` (and ``input-space.svg``/``.png`` where
    the run bracketed its sources' worst errors: :func:`draw_input_space`)."""
    figure = draw(summary, error)
    try:
        written = _save(figure, folder, "figure")
    finally:
        _pyplot().close(figure)
    if summary.get("input_space"):
        figure = draw_input_space(summary)
        try:
            written += _save(figure, folder, "input-space")
        finally:
            _pyplot().close(figure)
    return written


INPUT_SPACE_CURVES = (("test_max", "test set max", "o"), ("task", "worst over the task, proved upper end", "s"),
                      ("ball", "worst over the alpha-ball, proved upper end", "^"),
                      ("bound", "the theorem's bound", "D"), ("trivial", "trivial bound over the ball", "x"))
INPUT_SPACE_AXES = {"width": "source width n", "length": "sequence length T", "blocks": "blocks B"}


def draw_input_space(summary: dict[str, Any]) -> Any:
    """The medians over sources of the test set's max, the proved worst errors over the task and the ball,
    the bound and the trivial bound, against whichever of width, T and B the run varies most (one curve
    per value of the others). A bound far above the rest is drawn at the top edge with its value."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7.2, 4.8))
    points = summary["input_space"]["points"]
    along = max(INPUT_SPACE_AXES, key=lambda key: len({p[key] for p in points}))
    others = [key for key in INPUT_SPACE_AXES if key != along]
    groups = sorted({tuple(p[k] for k in others) for p in points})
    shown = [float(p[f]) for p in points for f in ("test_max", "task", "ball", "trivial")
             if p[f] is not None and math.isfinite(float(p[f]))]
    top = max(shown) * 100 if shown else 1.0
    styles = ("-", "--", ":", "-.")
    for index, group in enumerate(groups):
        chosen = sorted((p for p in points if tuple(p[k] for k in others) == group), key=lambda p: p[along])
        x = [float(p[along]) for p in chosen]
        varied = [f"{k[0] if k != 'width' else 'n'} = {v}" for k, v in zip(others, group, strict=True)
                  if len({p[k] for p in points}) > 1]
        suffix = f" ({', '.join(varied)})" if varied else ""
        for colour, (field, label, marker) in enumerate(INPUT_SPACE_CURVES):
            y = [float(p[field]) if p[field] is not None else math.nan for p in chosen]
            clipped = [min(v, top) for v in y]
            axes.plot(x, clipped, marker=marker, color=f"C{colour}", linestyle=styles[index % len(styles)],
                      label=label + suffix if index == 0 or len(groups) <= 2 else None)
            for xi, v in zip(x, y, strict=True):
                if not v <= top:
                    axes.annotate(f"{v:.2g}" if math.isfinite(v) else "inf", (xi, top), textcoords="offset points",
                                  xytext=(4, -10), fontsize="x-small", color=f"C{colour}")
    axes.set_yscale("log")
    if along == "length":
        axes.set_xscale("log")
    ticks = sorted({float(p[along]) for p in points})
    axes.set_xticks(ticks, labels=[f"{t:g}" for t in ticks])
    axes.set_xticks([], minor=True)
    axes.set_xlabel(INPUT_SPACE_AXES[along])
    axes.set_ylabel("max_i ||S(x_i) - T(x_i)|| (median over sources)")
    axes.set_title(f"{summary['figure']}: the test set against every input (a bound beyond the plot at its top "
                   "edge, its value beside it)", fontsize="small")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="x-small", loc="best")
    return figure


def write_overlay(figure_name: str, readings: list[dict[str, Any]], folder: Path) -> list[Path]:
    """``readings.svg`` and ``readings.png``: every reading's mean error curve (Figure 4: against
    the width, with the paper's fit; Figure 5: against T at the reading's largest width; Figure 6:
    against the width at the largest B) in one plot."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(8.0, 5.2))
    widths_seen: list[float] = []
    for reading in readings:
        curve = reading.get("curve") or []
        if not curve:
            continue
        x = [float(c["x"]) for c in curve]
        axes.plot(x, [float(c["mean"]) for c in curve], marker=".", linewidth=1, label=reading["name"])
        widths_seen += x
    if figure_name == "fig4" and widths_seen:
        _paper_line(axes, widths_seen)
    axes.set_yscale("log")
    if figure_name == "fig5":
        axes.set_xscale("log")
    axes.set_xlabel({"fig4": "source width n (n_K = n_V)", "fig5": "sequence length T (largest width)",
                     "fig6": "source width n (largest B)"}[figure_name])
    axes.set_ylabel("mean approximation error")
    axes.set_title(f"{figure_name}: every reading")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="x-small", ncol=2, loc="best")
    try:
        return _save(figure, folder, "readings")
    finally:
        plt.close(figure)
