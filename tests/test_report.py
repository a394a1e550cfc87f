"""The HTML report: escaped, violations first, renders in a real browser."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from sltcheck.report import page as report

HOSTILE = "<script>alert(1)</script>"


def fake_inputs(violated: bool = False, label: str = "run") -> dict[str, list[dict[str, object]]]:
    findings = {
        "profile": "ci", "dps": 50, "seed": 0, "_source": f"/tmp/{label}/findings.json",
        "entries": [
            {"statement": "lemma8", "variant": "as-proven", "examples": 40, "worst_ratio": 0.93,
             "violated": False, "instance": {"alpha": 1.5, "note": HOSTILE}, "seed": 1,
             "ratios": [0.1, 0.5, 0.93], "title": "Lemma 8 " + HOSTILE},
            {"statement": "lemma8", "variant": "bound-halved", "mutant": True, "refuted": True,
             "why": "drops a factor 2", "instance": {"alpha": 2.0}, "examples": 3, "worst_ratio": 1.7},
            {"statement": "lemma13", "variant": "as-stated", "examples": 40, "worst_ratio": 1.4 if violated else 0.4,
             "violated": violated, "instance": {"alpha": 2.0}, "seed": 7,
             "explanation": "the statement drops the proof's factor 2"},
        ],
    }
    summary = {
        "figure": "fig4", "_source": f"/tmp/{label}/summary.json", "checked": 4, "violations": [],
        "worst_ratio": 0.01, "undecided": 0, "norm_policy": "rescale",
        "config": {"mode": "theory", "solver": "mitm", "init": "theory", "preset": label},
        "points": [{"blocks": 1, "length": 4, "width": w, "sources": 2, "mean": 0.5 * 2.0 ** -w, "std": 0.1 * 2.0 ** -w,
                    "max_ratio": 0.01, "mean_bound": 40 * 2.0 ** -w} for w in (4, 8, 12)],
        "fits": {"all": {"gamma": 0.5, "delta": 0.69, "gamma_interval": [0.4, 0.6], "delta_interval": [0.6, 0.8],
                         "points": 3}},
        "paper_fit": {"gamma": 0.8, "delta": 0.06}, "workshop_fit": {"gamma": 0.77, "delta": 0.055},
    }
    lm = {"figure": "fig8", "preset": "cpu-tiny", "_source": "/tmp/lm/results.json", "runs": [{}],
          "config": {"theory_scale": 2.83, "model": {"n_layer": 2, "n_embd": 128, "n_head": 4}},
          "summary": [{"mode": "edge-popup", "scale": s, "keep_fraction": 0.3, "n_seeds": 2,
                       "best_val_loss_mean": 5 + (s - 2.8) ** 2, "best_val_loss_std": 0.1, "nonzero_params": 1000}
                      for s in (1.0, 2.0, 2.83, 4.0)]}
    return {"findings": [findings], "synthetic": [summary], "lm": [lm]}


def test_every_string_from_a_run_is_escaped():
    html = report.render(report.build(fake_inputs(label=HOSTILE), label=HOSTILE))
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script" not in html.lower()


def test_a_violation_is_shown_first():
    html = report.render(report.build(fake_inputs(violated=True)))
    first_section = html.index("<h2>")
    assert html[first_section:].startswith("<h2>Violations</h2>")
    assert html.index("lemma13") < html.index("At a glance")


def test_no_violation_section_without_violations():
    html = report.render(report.build(fake_inputs()))
    assert "<h2>Violations</h2>" not in html
    assert html.index("At a glance") < html.index("Statements")


def test_report_is_self_contained_and_never_overwritten(tmp_path):
    content = report.build(fake_inputs())
    first = report.write(content, str(tmp_path / "r.html"))
    second = report.write(content, str(tmp_path / "r.html"))
    assert first != second and first.exists() and second.exists()
    assert json.loads(first.with_suffix(".json").read_text())["glance"]["held"] == 2
    html = first.read_text()
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assert html.count("<svg") >= 3


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(ValueError, match="neither a run directory nor a results file"):
        report.load_inputs([str(tmp_path / "missing")])
    with pytest.raises(ValueError, match="out must name an .html file"):
        report.write(report.build(fake_inputs()), str(tmp_path / "r.txt"))


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = ["apt-get", "install", "-y", "-q", "chromium"]
        if subprocess.run(install, capture_output=True, timeout=900, env=env).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], capture_output=True, timeout=600, env=env)
            subprocess.run(install, capture_output=True, timeout=900, env=env)
        return shutil.which("chromium")
    return None


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--enable-logging=stderr", "--v=0"]

# Appended to a copy of the report (the report itself carries no script): records
# the rendered size of every plot where --dump-dom can read it.
PROBE = ("<script>document.body.setAttribute('data-plot-sizes', JSON.stringify("
         "[...document.querySelectorAll('svg')].map(s => {const r = s.getBoundingClientRect();"
         " return [r.width, r.height];})));</script>")


def test_report_renders_in_headless_chromium(tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("Debian's chromium is not installed and could not be installed (needs root and apt-get)")
    page = report.write(report.build(fake_inputs(violated=True)), str(tmp_path / "report.html"))
    profile = tempfile.mkdtemp()
    shot = Path(os.environ.get("SLTCHECK_SCREENSHOT_DIR", tmp_path)) / "report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={shot}",
         "--window-size=1200,2400", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 10_000, result.stderr[-2000:]
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console

    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", probed.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    sizes = json.loads(re.search(r"data-plot-sizes=\"([^\"]*)\"", dom).group(1).replace("&quot;", '"'))
    assert len(sizes) >= 3
    assert all(width > 0 and height > 0 for width, height in sizes), sizes
