"""Readable figures: fits without intervals say so, off-scale bounds do not flatten the data."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from sltcheck.report.plots import Series, line_plot
from sltcheck.repro.fits import fit_decay, interval_text


def tick_labels(svg: str) -> list[str]:
    return re.findall(r'text-anchor="end" font-size="11">([^<]+)</text>', svg)


def test_an_off_scale_bound_keeps_the_axis_on_the_data():
    data = Series("B = 3", [8, 16, 24], [0.5, 0.1, 0.02])
    bound = Series("bound B = 3", [8, 16, 24], [1e166, 1e150, float("1e400")], dashed=True, markers=False,
                   scales_axis=False)
    svg = line_plot([data, bound], title="fig6", xlabel="n", ylabel="error", logy=True)
    assert "1e+166" not in "".join(tick_labels(svg))
    assert max(float(t) for t in tick_labels(svg)) <= 1.0
    assert svg.count('class="off-scale"') == 3  # one labelled arrow per off-scale bound point
    assert ">1e+166</text>" in svg
    assert "&gt; 1e308</text>" in svg
    assert "(off scale)" in svg


def test_a_reference_within_the_data_is_drawn_as_a_line():
    data = Series("error", [1, 2, 3], [1.0, 2.0, 3.0])
    bound = Series("bound", [1, 2, 3], [1.5, 2.5, 3.0], scales_axis=False)
    svg = line_plot([data, bound], title="t", xlabel="x", ylabel="y")
    assert svg.count("<polyline") == 2
    assert 'class="off-scale"' not in svg


def test_stretching_series_still_scale_the_axis():
    svg = line_plot([Series("a", [1, 2], [1.0, 1e6])], title="t", xlabel="x", ylabel="y", logy=True)
    assert "1e+06" in tick_labels(svg)


@pytest.mark.parametrize(("points", "identifiable"), [(2, False), (5, True)])
def test_fit_intervals_are_intervals_or_say_not_identifiable(points, identifiable):
    n = np.arange(1, points + 1, dtype=float) * 8
    fit = fit_decay(n, 0.8 * np.exp(-0.06 * n) * (1 + 0.05 * np.cos(n))).as_dict()
    text = json.dumps(fit, allow_nan=False)  # strict JSON: no NaN anywhere
    assert "nan" not in text.lower()
    gamma = interval_text(fit, "gamma")
    if identifiable:
        assert re.fullmatch(r"\S+ \[\S+, \S+\]", gamma)
    else:
        assert gamma.endswith(f", interval not identifiable ({points} points)")
        assert fit["gamma_interval"] is None


def test_one_huge_bar_does_not_swallow_the_others_and_no_label_is_cut():
    """The slack plot: 38 rows between 1 and 75 and Theorem 14's 1e120 row. Cut at 1e3, every bar keeps
    a visible length; the huge one ends in an arrow with its value; the left margin fits each label."""
    from sltcheck.report.plots import CHAR_WIDTH, Bar, bar_chart

    bars = [Bar(f"theorem11 lemma13-as-stated {i}", 1.0 + i * 2) for i in range(38)]
    bars.append(Bar("theorem14 39", 1.08e123, low=2.43e120))
    svg = bar_chart(bars, title="slack", xlabel="slack", logx=True, marker=1.0, clip=1e3)
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="\d+" width="([\d.]+)" height="12"', svg)]
    assert len(widths) == 39
    assert sorted(widths)[1] >= 10  # beyond the row at 1: the others are bars, not slivers
    assert svg.count('class="clipped"') == 1
    assert ">1e+123</text>" in svg
    left = min(float(x) for x in re.findall(r'<rect x="([\d.]+)" y="\d+" width="[\d.]+" height="12"', svg))
    longest = max(len(b.label) for b in bars)
    assert left >= CHAR_WIDTH * longest  # the labels end left of the bars, inside the plot
    assert "theorem11 lemma13-as-stated 37</text>" in svg  # never truncated
    unclipped = bar_chart(bars, title="slack", xlabel="slack", logx=True, marker=1.0)
    assert 'class="clipped"' not in unclipped


def test_the_run_figures_error_bars_stay_above_the_log_axis():
    from sltcheck.repro.figures import LOG_FLOOR, _log_errors

    (lower, upper), cut = _log_errors([1.0, 0.1], [0.5, 0.3])
    assert cut == [False, True]
    assert lower == [0.5, pytest.approx(0.1 * (1 - LOG_FLOOR))]  # ends at LOG_FLOOR x the mean, above 0
    assert upper == [0.5, 0.3]
