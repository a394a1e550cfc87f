"""The HTML report: from autoescaped templates, violations first with decimal counterexamples and their
replay command, a plot beside every table of numbers, renders in a real browser, loads from an installed
package."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from html import unescape
from pathlib import Path
from typing import get_type_hints

import pytest

from sltcheck.harness.pytest_plugin import every_statement
from sltcheck.records import FindingRecord, FindingsFile
from sltcheck.report import page as report
from sltcheck.schema import SCHEMA_VERSION, validate
from sltcheck.statements.lemma13 import COUNTEREXAMPLES

HOSTILE = "<script>alert(1)</script>"


def finding(statement: str, variant: str, ratio: float | None, instance: dict[str, object] | None, seed: int,
            violated: bool = False, verdict: dict[str, object] | None = None,
            **extra: object) -> dict[str, object]:
    """One variant exactly as ``sltcheck check`` writes it (every key of FindingRecord, no other)."""
    return {"statement": statement, "variant": variant, "default": True, "examples": 40, "worst_ratio": ratio,
            "violated": violated, "violations": int(violated), "undecided": 0, "filtered": 0, "verdict": verdict,
            "instance": instance, "seed": seed, "examples_per_second": 100.0, "seconds": 0.4, "failure": "",
            "search": None, "ratios": [] if ratio is None else [0.1, 0.5, ratio], **extra}


def fake_inputs(violated: bool = False, label: str = "run") -> dict[str, list[dict[str, object]]]:
    """Hand-made inputs for the escaping and layout checks (hostile strings, a violation on demand), in
    the shape of a real findings.json (validated below); the report built from a real ``sltcheck check``
    run is tested in tests/test_check_cli.py."""
    verdict = {"measured": "6.5202e-5", "bound": "6.3810e-5", "ratio": 1.02 if violated else 0.4, "dps": 40,
               "holds": not violated, "undecided": False}
    findings = {
        "schema_version": SCHEMA_VERSION, "profile": "ci", "seed": 0,
        "run": {"profile": "ci", "seed": 0, "only": [], "no_search": False, "no_mutants": False, "power": True},
        "fingerprint": "0" * 16, "complete": True, "planned": [], "done": [],
        "findings": [
            finding("lemma8", "as-stated", 0.93, {"alpha": 1.5, "note": HOSTILE}, 1),
            finding("lemma13", "as-stated", 1.02 if violated else 0.4, COUNTEREXAMPLES["as-stated"], 7,
                    violated=violated, verdict=verdict,
                    certified=violated, certified_outcome="violated" if violated else "holds",
                    certified_backend="arb"),
            finding("lemma2", "as-proven", 1.0, {"alpha": {"float": (1.25).hex(), "repr": "1.25"}}, 3, attained=3),
        ],
        "mutants": [{"statement": "lemma8", "mutant": "bound-halved", "why": "drops a factor 2", "refuted": True,
                     "ratio": 1.7, "counterexample": {"alpha": 2.0}, "message": "", "seconds": 0.1}],
        "power": [{"statement": "lemma8", "fixed": {"d1": 1}, "kind": "closed-form", "best": 1.0, "known": 1.0,
                   "power": 0.98, "evaluations": 100, "seconds": 1.0}],
        "slack": [{"statement": "lemma8", "params": {"d1": 1, "alpha": 1.0}, "kind": "closed-form", "supremum": 0.5,
                   "bound": 1.0, "slack": 2.0},
                  {"statement": "lemma12", "params": {"H": 1}, "kind": "bracket", "lower": 0.2, "supremum": 0.3,
                   "bound": 1.0, "slack": 3.3, "slack_range": [3.3, 5.0]}],
    }
    validate(findings, FindingsFile, "fake findings")
    for record in findings["findings"]:
        assert set(record) <= set(get_type_hints(FindingRecord)), set(record) - set(get_type_hints(FindingRecord))
    findings["_source"] = f"/tmp/{label}/findings.json"  # what sltcheck.report.inputs adds
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


@pytest.mark.lemma13
def test_the_page_leads_with_what_is_false_in_the_papers_terms_and_its_smallest_certified_counterexample():
    from sltcheck.statements.lemma13 import FINDINGS

    html = report.render(report.build(fake_inputs(violated=True)))
    first_section = html.index("<h2")
    assert html[first_section:].startswith('<h2 id="lead">What is false, what is proved, what cannot fail</h2>')
    lead = unescape(re.sub(r"<[^>]+>", " ", html[first_section:html.index('<h2 id="violations">')]))
    assert "Lemma 13 [as-stated]" in " ".join(lead.split())
    assert " ".join(FINDINGS["as-stated"].split()) in " ".join(lead.split())
    assert "Smallest certified counterexample: 4 tokens" in " ".join(lead.split())
    assert "2 distinct of 4: [-1.0000017] × 3, [1.0000017] × 1" in lead  # tokens summarised, not listed
    assert 'href="#violations"' in html  # the table of contents
    assert html.index("Lemma 13") < html.index('<h2 id="glance">')


# The lemma 13 counterexample's alpha (0x1.00001bd82f52bp+0) and first token, as shortest decimals.
ALPHA = repr(float.fromhex("0x1.00001bd82f52bp+0"))
TOKEN = repr(float.fromhex("-0x1.00001bd82f51bp+0"))


@pytest.mark.lemma13
def test_a_violation_shows_its_counterexample_in_decimal_with_its_replay_command():
    html = report.render(report.build(fake_inputs(violated=True, label="my run")))
    card = html[html.index('<h2 id="violations">'):html.index('<h2 id="glance">')]
    assert ALPHA in card
    assert TOKEN in card
    assert "sltcheck check --replay &#39;/tmp/my run/findings.json&#39; --only lemma13" in card
    assert "0x1." not in html  # exact hex stays in the JSON


@pytest.mark.lemma13
def test_the_json_keeps_the_exact_hex_and_the_replay_command(tmp_path):
    page = report.write(report.build(fake_inputs(violated=True)), str(tmp_path / "r.html"))
    data = json.loads(page.with_suffix(".json").read_text())
    (entry,) = [e for e in data["statements"] if e["statement"] == "lemma13"]
    assert entry["instance"]["alpha"] == {"float": "0x1.00001bd82f52bp+0"}
    assert entry["replay_command"] == "sltcheck check --replay /tmp/run/findings.json --only lemma13"


@pytest.mark.lemma2
@pytest.mark.lemma8
@pytest.mark.lemma13
def test_findings_lead_with_violations_and_close_calls_and_end_with_attained_bounds():
    content = report.build(fake_inputs(violated=True))
    html = report.render(content)
    overview = html[html.index('<h2 id="findings">'):html.index('<h2 id="statements">')]
    rows = re.findall(r"<tr><td>(\w+)</td><td>([\w-]+)", overview)
    assert rows == [("lemma13", "as-stated"), ("lemma8", "as-stated"), ("lemma2", "as-proven")]
    assert content["glance"]["tightest"]["statement"] == "lemma8"  # not lemma2 at ratio 1
    assert content["glance"]["attained"] == ["lemma2 [as-proven]"]  # equality proved on 3 examples


@pytest.mark.theorem9
def test_a_ratio_that_prints_as_1_is_not_attained_without_a_proof_nor_a_closest_call():
    """The mislabel of issue 43: theorem9 as-proven at 0.9999999999999966 with the certificate "holds" was
    listed as "bound attained exactly" and tables said "held, bound attained"."""
    inputs = fake_inputs()
    inputs["findings"][0]["findings"].append(finding("theorem9", "as-proven", 0.9999999999999966, None, 2,
                                                     certified_outcome="holds", attained=0))
    content = report.build(inputs)
    assert content["glance"]["attained"] == ["lemma2 [as-proven]"]
    assert content["glance"]["near"] == ["theorem9 [as-proven]"]
    assert content["glance"]["tightest"]["statement"] == "lemma8"
    html = report.render(content)
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())
    assert "theorem9 as-proven * 1 - 3.4e-15 held, within 1e-09 of its bound" in text
    assert text.count("held, bound attained") == 2  # lemma2's rows: the overview and its statement card


@pytest.mark.parametrize("section", ["findings", "power", "slack"])
def test_a_table_of_numbers_has_a_plot_beside_it(section):
    html = report.render(report.build(fake_inputs(violated=True)))
    start = html.index(f'<h2 id="{section}">')
    body = html[start:html.index("<h2", start + 1)]
    assert "<table" in body
    assert body.count("<svg") == 1


def test_the_page_comes_from_templates_not_hand_escaping():
    assert not hasattr(report, "_e")
    assert report.environment().autoescape is True
    for section in report.SECTIONS:
        report.environment().get_template(f"sections/{section}.html.j2")


def test_no_violation_section_without_violations():
    html = report.render(report.build(fake_inputs()))
    assert '<h2 id="violations">' not in html
    assert html.index("At a glance") < html.index("Statements")


def test_report_is_self_contained_and_never_overwritten(tmp_path):
    content = report.build(fake_inputs())
    first = report.write(content, str(tmp_path / "r.html"))
    second = report.write(content, str(tmp_path / "r.html"))
    assert first != second
    assert first.exists()
    assert second.exists()
    assert json.loads(first.with_suffix(".json").read_text())["glance"]["held"] == 3
    html = first.read_text()
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assert html.count("<svg") >= 3


def test_a_sweep_whose_fits_have_no_interval_renders(tmp_path):
    """Figure 5's quick preset has two widths per length: two points fit two parameters with no
    degree of freedom left, so the 95% intervals are not identifiable (stored as null) and said so."""
    from sltcheck.repro import synthetic
    from sltcheck.schema import json_safe

    config = synthetic.preset_config("fig5", "quick", "theory")
    assert len(config.widths) == 2
    records = [{"blocks": 1, "length": length, "width": width, "error": 0.5 * 2.0 ** -width, "ratio": 0.01,
                "bound": 1.0, "holds": True, "violated": False, "undecided": False}
               for length in config.lengths for width in config.widths for _ in range(2)]
    summary = json.loads(json.dumps(json_safe(synthetic.summarise(config, records, {}))))
    assert summary["fits"]["T=4"]["gamma_interval"] is None
    inputs = {"findings": [], "synthetic": [{**summary, "_source": "fig5/summary.json"}], "lm": []}
    text = unescape(re.sub(r"<[^>]+>", " ", report.render(report.build(inputs))))
    assert "interval not identifiable (2 points)" in text


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(ValueError, match="neither a run directory nor a results file"):
        report.load_inputs([str(tmp_path / "missing")])
    with pytest.raises(ValueError, match=r"out must name an \.html file"):
        report.write(report.build(fake_inputs()), str(tmp_path / "r.txt"))


def _chromium() -> str | None:
    """Debian's chromium (.ci/run installs it where it is missing; a test never installs anything)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--enable-logging=stderr", "--v=0"]

# Appended to a copy of the report (the report itself carries no script): records
# the rendered size of every plot where --dump-dom can read it.
PROBE = ("<script>document.body.setAttribute('data-plot-sizes', JSON.stringify("
         "[...document.querySelectorAll('svg')].map(s => {const r = s.getBoundingClientRect();"
         " return [r.width, r.height];})));"
         # What a reader sees of the first violation: its replay command and decimal values, with their
         # places on the page (inside the screenshot's window).
         "const card = document.querySelector('.violation'); const code = card.querySelector('code.replay');"
         "const cell = card.querySelector('td.value');"
         "document.body.setAttribute('data-violation', JSON.stringify({replay: code.innerText,"
         " replay_box: [code.getBoundingClientRect().top, code.getBoundingClientRect().height],"
         " text: card.innerText, all: card.textContent,"
         " value_box: [cell.getBoundingClientRect().top, cell.getBoundingClientRect().height]}));"
         "</script>")


@pytest.mark.lemma13
def test_report_renders_in_headless_chromium(tmp_path):
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install chromium (.ci/run does: apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run installs it in CI)")
    inputs = fake_inputs(violated=True)
    inputs["findings"][0]["_source"] = str(tmp_path / "run/findings.json")
    page = report.write(report.build(inputs), str(tmp_path / "report.html"))
    profile = tempfile.mkdtemp()
    shot = Path(os.environ.get("SLTCHECK_SCREENSHOT_DIR", tmp_path)) / "report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={shot}",
         "--window-size=1200,2400", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.exists(), result.stderr[-2000:]
    assert shot.stat().st_size > 10_000, result.stderr[-2000:]
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console

    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", probed.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    sizes = json.loads(unescape(re.search(r"data-plot-sizes=\"([^\"]*)\"", dom).group(1)))
    assert len(sizes) >= 3
    assert all(width > 0 and height > 0 for width, height in sizes), sizes
    seen = json.loads(unescape(re.search(r"data-violation=\"([^\"]*)\"", dom).group(1)))
    assert seen["replay"] == f"sltcheck check --replay {tmp_path / 'run/findings.json'} --only lemma13"
    assert "2 distinct of 4: [-1.0000017] × 3, [1.0000017] × 1" in seen["text"]  # summarised where seen
    assert ALPHA in seen["all"]  # every digit folded below it
    assert TOKEN in seen["all"]
    assert "0x1." not in seen["all"]
    for top, height in (seen["replay_box"], seen["value_box"]):
        assert height > 0  # rendered, inside the screenshot
        assert 0 <= top < 2400


def test_the_report_json_is_validated_as_a_report_file(tmp_path):
    from sltcheck.records import ReportFile
    from sltcheck.schema import load

    page = report.write(report.build(fake_inputs()), str(tmp_path / "r.html"))
    assert load(page.with_suffix(".json"), ReportFile, "report")["glance"]["held"] == 3


@pytest.mark.lemma5
@pytest.mark.lemma12
def test_a_variant_without_a_measurement_is_not_counted_as_held():
    inputs = fake_inputs()
    unmeasured = finding("lemma5", "as-stated", None, None, 4)
    undecided = finding("lemma12", "as-stated", 0.99, {"alpha": 1.0}, 5,
                        verdict={"measured": "1", "bound": "1", "ratio": 0.99, "dps": 40, "holds": True,
                                 "undecided": True})
    inputs["findings"][0]["findings"] += [unmeasured, undecided]
    content = report.build(inputs)
    glance = content["glance"]
    assert (glance["statements_checked"], glance["held"]) == (5, 3)
    assert glance["not_measured"] == ["lemma5 [as-stated]"]
    assert glance["undecided"] == ["lemma12 [as-stated]"]
    text = unescape(re.sub(r"<[^>]+>", " ", report.render(content)))
    assert "not measured" in text
    assert "undecided" in text


def test_each_variant_shows_its_certified_verdict_and_backend():
    html = report.render(report.build(fake_inputs(violated=True)))
    assert "(certified violated, arb)" in html


# Appended to a copy of the report: what the browser made of the formulas (MathML elements, their rendered
# size) and whether any docstring markup reached the reader raw.
MATH_PROBE = ("<script>const maths = [...document.querySelectorAll('#statements ~ * math, .card math')];"
              "document.body.setAttribute('data-math', JSON.stringify({count: maths.length,"
              " sized: maths.filter(m => {const r = m.getBoundingClientRect(); return r.width > 0 && r.height > 0;})"
              ".length, cards: [...document.querySelectorAll('.card')].filter(c => c.querySelector('table.formulas'))"
              ".map(c => [c.querySelector('h3').innerText, c.querySelectorAll('table.formulas math').length]),"
              " text: document.body.innerText}));</script>")


def test_the_statements_show_typeset_formulas_in_chromium(tmp_path):
    """Each statement's printed inequality, assumptions and every variant's bound are MathML elements that
    Chromium lays out (the paper's form beside the encoded one), and no docstring markup shows raw."""
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install chromium (.ci/run does: apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run installs it in CI)")
    page = report.write(report.build(fake_inputs(violated=True)), str(tmp_path / "report.html"))
    html = page.read_text()
    assert "<math" in html  # MathML from the server side, no script to render it
    assert "<script" not in html
    probed = tmp_path / "probed.html"
    probed.write_text(html.replace("</body>", MATH_PROBE + "</body>"))
    dom = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tempfile.mkdtemp()}", "--dump-dom",
                          probed.as_uri()], capture_output=True, text=True, timeout=120).stdout
    seen = json.loads(unescape(re.search(r"data-math=\"([^\"]*)\"", dom).group(1)))
    cards = dict(seen["cards"])
    # lemma8 (one variant), lemma13 (two), lemma2 (one): the paper's form, measured <= bound per variant
    lemma8 = "Lemma 8 (appendix A.2; workshop version: Lemma 7): the softmax perturbation bound."
    assert cards.get(lemma8, 0) >= 2, cards
    assert len(cards) == 3, cards
    assert all(count >= 2 for count in cards.values()), cards
    assert seen["count"] >= 10, seen["count"]
    assert seen["sized"] == seen["count"], seen["count"]
    for raw in (":mod:`", ":func:`", "``"):
        assert raw not in seen["text"], raw


def test_docstring_markup_is_rendered_never_raw():
    from sltcheck.report.formulas import docstring_html, plain

    html = str(docstring_html("See :mod:`sltcheck.harness.search` and ``x <= 1``:\n\n    ||x|| <= alpha\n\n"
                              "- ``as-stated``: a <b>bound</b>"))
    assert "<code>sltcheck.harness.search</code>" in html
    assert "<code>x &lt;= 1</code>" in html
    assert '<pre class="formula">||x|| &lt;= alpha</pre>' in html
    assert "<li><code>as-stated</code>" in html
    assert ":mod:" not in html  # markup rendered, text escaped
    assert "``" not in html
    assert "<b>" not in html
    assert plain("the :func:`~sltcheck.api.check` of ``lemma8``") == "the sltcheck.api.check of lemma8"


@every_statement
def test_every_statement_has_its_formulas_for_every_variant():
    from sltcheck.registry import STATEMENT_MODULES, load
    from sltcheck.report.formulas import statement_formulas

    for name in STATEMENT_MODULES:
        formulas = statement_formulas(name)
        assert formulas, name
        assert "<math" in str(formulas["paper"]), name
        assert [f["variant"] for f in formulas["encoded"]] == list(load(name).VARIANTS), name


# Appended to a copy of the report: every table, formula box and plot that runs past its card (or the page).
OVERFLOW_PROBE = ("<script>const over = [];"
                  "if (document.documentElement.scrollWidth > window.innerWidth) over.push('page');"
                  "document.querySelectorAll('.card table, .card svg, .card img').forEach(t => {"
                  " const card = t.closest('.card').getBoundingClientRect(); const r = t.getBoundingClientRect();"
                  " if (r.right > card.right + 1)"
                  "  over.push(t.tagName + ' in ' + t.closest('.card').innerText.slice(0, 40));});"
                  "document.querySelectorAll('.encoded, .card').forEach(e => {"
                  " if (e.scrollWidth > e.clientWidth + 1) over.push('clipped: ' + e.innerText.slice(0, 40));});"
                  "document.body.setAttribute('data-over', JSON.stringify(over));</script>")


def test_no_formula_table_or_plot_is_clipped_in_chromium(tmp_path):
    """Every statement's card (the theorems' long chains, Lemma 4's table) and every plot fits its card at
    the width a reader's window gives (1400 px): nothing runs past it, nothing is hidden in a scroll box."""
    from sltcheck.registry import STATEMENT_MODULES, load

    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install chromium (.ci/run does: apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run installs it in CI)")
    inputs = fake_inputs(violated=True)
    inputs["findings"][0]["findings"] += [finding(name, variant, 0.5, None, 0) for name in STATEMENT_MODULES
                                          for variant in load(name).VARIANTS if name not in ("lemma8", "lemma13")]
    page = report.write(report.build(inputs), str(tmp_path / "report.html"))
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text().replace("</body>", OVERFLOW_PROBE + "</body>"))
    dom = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tempfile.mkdtemp()}", "--window-size=1400,2400",
                          "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert json.loads(unescape(re.search(r"data-over=\"([^\"]*)\"", dom).group(1))) == []
