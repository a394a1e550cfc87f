"""Small, dependency-free SVG plots for the self-contained HTML report.

Every label passes through ``html.escape``; the output is a single ``<svg>``
element with an explicit width and height, so it renders offline, in a mail
attachment, with no scripts or fonts fetched.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f")


@dataclass
class Series:
    label: str
    x: list[float]
    y: list[float]
    yerr: list[float] | None = None
    dashed: bool = False
    markers: bool = True
    color: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
    # False: a reference curve (e.g. a bound of 1e166) that must not stretch the axis; its
    # points beyond the data's range are drawn as labelled arrows at the plot's edge
    scales_axis: bool = True


def _ticks(low: float, high: float, log: bool) -> list[float]:
    if log:
        first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
        decades = max(1, int(last - first) // 6)
        return [10.0**k for k in range(first, last + 1, decades)]
    if high == low:
        return [low]
    raw = (high - low) / 5
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw), default=raw)
    start = math.ceil(low / step) * step
    return [start + i * step for i in range(int((high - start) / step) + 1)]


def _frame(title: str, width: int, height: int, *, title_x: float | None = None, title_y: int = 16,
           title_size: int = 12) -> list[str]:
    """The opening of every plot: the <svg> element (its title as the accessible label), a white
    background and the title (centred unless ``title_x`` is given); :func:`_close` ends it."""
    centre = width / 2 if title_x is None else title_x
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" class="plot">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        f'<text x="{centre:.0f}" y="{title_y}" text-anchor="middle" font-size="{title_size}" font-weight="bold">'
        f'{escape(title)}</text>',
    ]


def _close(parts: list[str]) -> str:
    return "".join([*parts, "</svg>"])


def _fmt(value: float) -> str:
    return f"{value:.0e}" if (abs(value) >= 1e4 or 0 < abs(value) < 1e-2) else f"{value:g}"


@dataclass(frozen=True)
class _Axes:
    """A line plot's data ranges, scales and margins: maps data to SVG coordinates."""

    x0: float
    x1: float
    y0: float
    y1: float
    logx: bool
    logy: bool
    width: int
    height: int
    left: int = 70
    right: int = 170
    top: int = 30
    bottom: int = 50

    def tx(self, x: float) -> float:
        if self.logx:
            fraction = (math.log10(x) - math.log10(self.x0)) / (math.log10(self.x1) - math.log10(self.x0))
        else:
            fraction = (x - self.x0) / (self.x1 - self.x0)
        return self.left + fraction * (self.width - self.left - self.right)

    def ty(self, y: float) -> float:
        if self.logy:
            y = max(y, self.y0)
            fraction = (math.log10(y) - math.log10(self.y0)) / (math.log10(self.y1) - math.log10(self.y0))
        else:
            fraction = (y - self.y0) / (self.y1 - self.y0)
        return self.height - self.bottom - fraction * (self.height - self.top - self.bottom)


def _data_ranges(series: list[Series], logx: bool, logy: bool) -> tuple[float, float, float, float] | None:
    """(x0, x1, y0, y1) over the series that scale the axis (error bars included; log axes to whole
    decades, a degenerate range widened by 1 each way); None when nothing can be drawn."""
    scaling = [s for s in series if s.scales_axis] or series
    xs = [x for s in series for x in s.x]
    ys = [y for s in scaling for y in s.y]
    for s in scaling:
        if s.yerr:
            ys += [y + e for y, e in zip(s.y, s.yerr, strict=True)]
            ys += [y - e for y, e in zip(s.y, s.yerr, strict=True) if not logy or y - e > 0]
    if logy:
        ys = [y for y in ys if y > 0 and math.isfinite(y)]
    if logx:
        xs = [x for x in xs if x > 0]
    if not xs or not ys:
        return None
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if logy:
        y0, y1 = 10 ** math.floor(math.log10(y0)), 10 ** math.ceil(math.log10(y1))
    elif y0 == y1:
        y0, y1 = y0 - 1, y1 + 1
    if x0 == x1:
        x0, x1 = x0 - 1, x1 + 1
    return x0, x1, y0, y1


def _axis_parts(axes: _Axes, title: str, xlabel: str, ylabel: str) -> list[str]:
    """The frame, the two axes with their ticks and grid lines, and the axis labels."""
    left, right, top, bottom, width, height = axes.left, axes.right, axes.top, axes.bottom, axes.width, axes.height
    tx, ty = axes.tx, axes.ty
    parts = [
        *_frame(title, width, height, title_x=width / 2 - right / 2 + left / 2, title_y=18, title_size=14),
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
    ]
    for tick in _ticks(axes.y0, axes.y1, axes.logy):
        if axes.y0 <= tick <= axes.y1:
            parts.append(f'<line x1="{left - 4}" y1="{ty(tick):.1f}" x2="{width - right}" y2="{ty(tick):.1f}" '
                         f'stroke="#ddd"/><text x="{left - 6}" y="{ty(tick) + 4:.1f}" text-anchor="end" '
                         f'font-size="11">{escape(_fmt(tick))}</text>')
    for tick in _ticks(axes.x0, axes.x1, axes.logx):
        if axes.x0 <= tick <= axes.x1:
            parts.append(f'<line x1="{tx(tick):.1f}" y1="{height - bottom}" x2="{tx(tick):.1f}" '
                         f'y2="{height - bottom + 4}" stroke="black"/><text x="{tx(tick):.1f}" '
                         f'y="{height - bottom + 17}" text-anchor="middle" font-size="11">{escape(_fmt(tick))}</text>')
    parts.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 10}" text-anchor="middle" '
                 f'font-size="12">{escape(xlabel)}</text>')
    parts.append(f'<text x="16" y="{(top + height - bottom) / 2:.0f}" text-anchor="middle" font-size="12" '
                 f'transform="rotate(-90 16 {(top + height - bottom) / 2:.0f})">{escape(ylabel)}</text>')
    return parts


def _series_parts(s: Series, index: int, axes: _Axes) -> list[str]:
    """One series: its line, markers, error bars and legend entry (points beyond the axis of a
    series that does not scale it as labelled arrows at the edge)."""
    logx, logy, y0, y1, tx, ty = axes.logx, axes.logy, axes.y0, axes.y1, axes.tx, axes.ty
    color = s.color or PALETTE[index % len(PALETTE)]
    points = [(x, y) for x, y in zip(s.x, s.y, strict=True)
              if (not logy or y > 0) and (not logx or x > 0) and (math.isfinite(y) or not s.scales_axis)]
    if not points:
        return []
    parts: list[str] = []
    dash = ' stroke-dasharray="6 4"' if s.dashed else ""
    if not s.scales_axis:
        parts += _off_scale_markers([p for p in points if not y0 <= p[1] <= y1], tx, ty, y0, y1, color)
        points = [p for p in points if y0 <= p[1] <= y1]
        if not points:
            parts.append(_legend(axes.width, axes.right, axes.top, index, color, dash, f"{s.label} (off scale)"))
            return parts
    path = " ".join(f"{tx(x):.1f},{ty(y):.1f}" for x, y in points)
    parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.8"{dash}/>')
    if s.markers:
        parts += [f'<circle cx="{tx(x):.1f}" cy="{ty(y):.1f}" r="3" fill="{color}"/>' for x, y in points]
    if s.yerr:
        for x, y, e in zip(s.x, s.y, s.yerr, strict=True):
            low = y - e if (not logy or y - e > 0) else y0
            parts.append(f'<line x1="{tx(x):.1f}" y1="{ty(low):.1f}" x2="{tx(x):.1f}" '
                         f'y2="{ty(y + e):.1f}" stroke="{color}" stroke-width="1"/>')
    parts.append(_legend(axes.width, axes.right, axes.top, index, color, dash, s.label))
    return parts


def line_plot(series: list[Series], *, title: str, xlabel: str, ylabel: str, logy: bool = False,
              logx: bool = False, width: int = 560, height: int = 340) -> str:
    """A line plot with optional error bars (mean ± std) and log axes."""
    ranges = _data_ranges(series, logx, logy)
    if ranges is None:
        return _empty(title, width, height)
    axes = _Axes(*ranges, logx=logx, logy=logy, width=width, height=height)
    parts = _axis_parts(axes, title, xlabel, ylabel)
    for index, s in enumerate(series):
        parts += _series_parts(s, index, axes)
    return _close(parts)


def _legend(width: int, right: int, top: int, index: int, color: str, dash: str, label: str) -> str:
    legend_y = top + 16 * index + 10
    return (f'<line x1="{width - right + 10}" y1="{legend_y}" x2="{width - right + 30}" '
            f'y2="{legend_y}" stroke="{color}" stroke-width="2"{dash}/>'
            f'<text x="{width - right + 34}" y="{legend_y + 4}" font-size="11">'
            f'{escape(label[:30])}</text>')


def _off_scale_markers(points: list[tuple[float, float]], tx, ty, y0: float, y1: float,
                       color: str) -> list[str]:
    """An arrow at the top (or bottom) edge for each point beyond the axis, labelled with its value."""
    out = []
    for x, y in points:
        above = y > y1
        edge = ty(y1) if above else ty(y0)
        tip, base, text_y = (edge, edge + 8, edge + 19) if above else (edge, edge - 8, edge - 11)
        label = _fmt(y) if math.isfinite(y) else "> 1e308"
        out.append(f'<polygon points="{tx(x) - 4:.1f},{base:.1f} {tx(x) + 4:.1f},{base:.1f} {tx(x):.1f},{tip:.1f}" '
                   f'fill="{color}" class="off-scale"><title>{escape(label)}</title></polygon>'
                   f'<text x="{tx(x):.1f}" y="{text_y:.1f}" text-anchor="middle" font-size="9" fill="{color}">'
                   f'{escape(label)}</text>')
    return out


def histogram(values: list[float], *, title: str, xlabel: str, bins: int = 20, width: int = 360,
              height: int = 200, marker: float | None = 1.0) -> str:
    """Counts of ``values`` in equal bins on [0, max(values, marker)]; a red line at ``marker``."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return _empty(title, width, height)
    high = max(max(finite), marker or 0.0) or 1.0
    counts = [0] * bins
    for v in finite:
        counts[min(bins - 1, max(0, int(v / high * bins)))] += 1
    left, bottom, top = 40, 40, 28
    plot_w, plot_h = width - left - 10, height - top - bottom
    peak = max(counts) or 1
    parts = _frame(title, width, height)
    for i, count in enumerate(counts):
        bar_h = plot_h * count / peak
        parts.append(f'<rect x="{left + i * plot_w / bins:.1f}" y="{top + plot_h - bar_h:.1f}" '
                     f'width="{plot_w / bins - 1:.1f}" height="{bar_h:.1f}" fill="#1f77b4"/>')
    if marker is not None:
        mx = left + plot_w * marker / high
        parts.append(f'<line x1="{mx:.1f}" y1="{top}" x2="{mx:.1f}" y2="{top + plot_h}" stroke="#d62728" '
                     f'stroke-width="2"/>')
    parts.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="black"/>')
    parts.append(f'<text x="{left}" y="{top + plot_h + 14}" font-size="10">0</text>'
                 f'<text x="{left + plot_w}" y="{top + plot_h + 14}" font-size="10" text-anchor="end">'
                 f'{escape(_fmt(high))}</text>'
                 f'<text x="{left + plot_w / 2:.0f}" y="{height - 8}" text-anchor="middle" font-size="11">'
                 f'{escape(xlabel)} (n = {len(finite)}, peak bin {peak})</text>')
    return _close(parts)


def _empty(title: str, width: int, height: int) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" class="plot">'
            f'<rect width="{width}" height="{height}" fill="#f6f6f6"/><text x="{width / 2}" y="{height / 2}" '
            f'text-anchor="middle" font-size="12">{escape(title)}: no data</text></svg>')


@dataclass
class Bar:
    """One row of :func:`bar_chart`: a bar from ``low`` (the axis start when None) to ``high``."""

    label: str
    high: float
    low: float | None = None
    color: str = PALETTE[0]


def _bar(bar: Bar, y: float, row: int, left: int, tx: Callable[[float], float], origin: float, logx: bool,
         clip: float | None) -> list[str]:
    """One row of a bar chart: its label, its bar and, past the axis' cut, an arrow with its value."""
    start = tx(bar.low) if bar.low is not None else tx(origin)
    end = tx(bar.high) if math.isfinite(bar.high) and (bar.high > 0 or not logx) else start
    beyond = clip is not None and math.isfinite(bar.high) and bar.high > clip
    if beyond and bar.low is not None and clip is not None and bar.low > clip:
        start = end - 10  # a range wholly beyond the cut: a stub at the edge (its arrow gives the value)
    parts = [f'<text x="{left - 4}" y="{y + row * 0.7:.1f}" text-anchor="end" font-size="10">{escape(bar.label)}</text>'
             f'<rect x="{min(start, end):.1f}" y="{y + 2}" width="{max(abs(end - start), 1.5):.1f}" '
             f'height="{row - 4}" fill="{bar.color}"/>']
    if beyond:
        parts.append(f'<polygon points="{end:.1f},{y + 1} {end + 7:.1f},{y + row / 2:.1f} {end:.1f},{y + row - 1}" '
                     f'fill="{bar.color}" class="clipped"/><text x="{end + 9:.1f}" y="{y + row * 0.7:.1f}" '
                     f'font-size="9">{escape(_fmt(bar.high))}</text>')
    return parts


def _bar_range(values: list[float], logx: bool) -> tuple[float, float]:
    """The bar chart's axis: from 0 (or the smallest value's decade) to the largest value (its decade)."""
    x0 = min(values) if logx else min(0.0, min(values))
    x1 = max(values)
    if logx:
        x0, x1 = 10.0 ** math.floor(math.log10(x0)), 10.0 ** math.ceil(math.log10(x1))
    return (x0, x1) if x1 > x0 else (x0, x0 + 1)


# Pixels per character of a 10 px label (a bar's name must not be cut at the plot's left edge).
CHAR_WIDTH = 6.0


def bar_chart(bars: list[Bar], *, title: str, xlabel: str, logx: bool = False, marker: float | None = None,
              marker_label: str = "", width: int = 360, row: int = 16, clip: float | None = None) -> str:
    """Horizontal bars, one per row (ranges drawn from ``low`` to ``high``), a red line at ``marker``.
    The left margin fits the longest label. With ``clip``, the axis ends there: a bar beyond it runs to
    the edge, ends in an arrow and carries its value, so one huge row cannot swallow the others."""
    values = [v for b in bars for v in (b.high, b.low) if v is not None and math.isfinite(v) and (v > 0 or not logx)]
    if clip is not None:
        values = [min(v, clip) for v in values]
    if marker is not None:
        values.append(marker)
    if not bars or not values:
        return _empty(title, width, 80)
    clipped = clip is not None and any(math.isfinite(b.high) and b.high > clip for b in bars)
    left = int(max(60, CHAR_WIDTH * max(len(b.label) for b in bars) + 10))
    right = 70 if clipped else 16
    width = max(width, left + right + 200)
    top, bottom = 28, 54 if clipped else 40
    height = top + bottom + row * len(bars)
    x0, x1 = _bar_range(values, logx)

    def tx(x: float) -> float:
        x = min(x, x1)
        if logx:
            x = max(x, x0)
            fraction = (math.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0))
        else:
            fraction = (x - x0) / (x1 - x0)
        return left + fraction * (width - left - right)

    parts = _frame(title, width, height)
    for tick in _ticks(x0, x1, logx):
        if x0 <= tick <= x1:
            parts.append(f'<line x1="{tx(tick):.1f}" y1="{top}" x2="{tx(tick):.1f}" y2="{height - bottom + 4}" '
                         f'stroke="#ddd"/><text x="{tx(tick):.1f}" y="{height - bottom + 16}" '
                         f'text-anchor="middle" font-size="10">{escape(_fmt(tick))}</text>')
    for index, bar in enumerate(bars):
        parts += _bar(bar, top + index * row, row, left, tx, x0 if logx else 0.0, logx, clip)
    if marker is not None:
        mx = tx(marker)
        # the marker's label on the side with room: left of a marker in the right half, right of one in the left
        anchor, shift = ("end", -3) if mx > (left + width - right) / 2 else ("start", 3)
        parts.append(f'<line x1="{mx:.1f}" y1="{top - 4}" x2="{mx:.1f}" y2="{height - bottom}" stroke="#d62728" '
                     f'stroke-width="1.5" stroke-dasharray="4 3"/><text x="{mx + shift:.1f}" y="{top - 6}" '
                     f'font-size="10" text-anchor="{anchor}" fill="#d62728">{escape(marker_label)}</text>')
    centre = (left + width - right) / 2
    parts.append(f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" '
                 f'stroke="black"/><text x="{centre:.0f}" y="{height - bottom + 30}" text-anchor="middle" '
                 f'font-size="11">{escape(xlabel)}</text>')
    if clipped and clip is not None:
        parts.append(f'<text x="{width - 4}" y="{height - 6}" text-anchor="end" font-size="9">'
                     f'{escape(f"axis cut at {_fmt(clip)}: a longer bar ends in an arrow and its value")}</text>')
    return _close(parts)
