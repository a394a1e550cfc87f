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
