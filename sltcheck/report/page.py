"""The HTML bound report: one self-contained page (and the same content as JSON).

Inputs are run directories (or files) written by ``sltcheck check``
(``findings.json``), ``sltcheck repro fig4|fig5|fig6`` (``summary.json``) and
``sltcheck repro fig7|fig8`` (``results.json``). The page comes from the Jinja2
templates in ``templates/`` (autoescaped: every string from a run is HTML-escaped),
carries its plots as inline SVG and its style inline, and has no scripts, fonts or
links to fetch. It leads with the violations (each counterexample in decimal with the
command that replays it; the exact float.hex stays in the JSON), then what the checks
found, closest calls first and bounds attained exactly (ratio 1) last.

A section is a template ``templates/sections/NAME.html.j2`` named in ``SECTIONS``;
it sees ``report`` (the JSON content) and ``view`` (display values computed by the
functions of ``VIEWS``, e.g. plots).

The parts: :mod:`~sltcheck.report.check_views` (the sections on a ``sltcheck check`` run),
:mod:`~sltcheck.report.reproduction_views` (Figures 4-8), :mod:`~sltcheck.report.probability_section`,
:mod:`~sltcheck.report.display` (numbers as shown); this module builds the content, renders and writes.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from markupsafe import Markup

from sltcheck import __version__
from sltcheck.jsonfiles import write_json_atomic
from sltcheck.records import ReportFile
from sltcheck.report import check_views, labels, probability_section, reproduction_views
from sltcheck.report.display import (  # noqa: F401 (SHOWN_VALUES, decimal_fields re-exported: public here)
    SHOWN_VALUES,
    decimal_fields,
    short_number,
)
from sltcheck.report.inputs import settings as run_settings
from sltcheck.schema import SCHEMA_VERSION, json_safe, validate
from sltcheck.versions import versions

# The page's sections, in order (each a template in templates/sections/).
SECTIONS: tuple[str, ...] = (
    "lead", "violations", "glance", "findings", "statements", "power", "repaired", "slack", "probability",
    "reproductions", "lm",
)
# The headings of the sections after the lead, for its table of contents.
TITLES: dict[str, str] = {
    "violations": "Violations", "glance": "At a glance", "findings": "What the checks found",
    "statements": "Statements", "power": "Search power", "repaired": "Repaired constants", "slack": "Slack factors",
    "probability": "Probability statements", "reproductions": "Reproductions", "lm": "Language models",
}


# --- loading ------------------------------------------------------------------------


def load_inputs(paths: list[str]) -> dict[str, list[Any]]:
    """Read and validate the inputs (:func:`sltcheck.report.inputs.load_inputs`)."""
    from sltcheck.report.inputs import load_inputs as read

    return read(paths)


def _entries(findings: dict[str, Any]) -> list[dict[str, Any]]:
    return list(findings["findings"])


def _mutant_entries(findings: dict[str, Any]) -> list[dict[str, Any]]:
    """``sltcheck check`` lists mutants apart from the statements' variants."""
    return [
        {"statement": m.get("statement"), "variant": m.get("mutant"), "mutant": True, "why": m.get("why"),
         "refuted": m.get("refuted"), "instance": m.get("counterexample"), "message": m.get("message")}
        for m in findings.get("mutants", []) if isinstance(m, dict)
    ]


# --- building -------------------------------------------------------------------------


def replay_command(findings: str, statement: object) -> str:
    """The one command that re-decides ``statement``'s recorded instances in the findings file."""
    return f"sltcheck check --replay {shlex.quote(str(findings))} --only {shlex.quote(str(statement))}"


def build(inputs: dict[str, list[dict[str, Any]]], label: str = "sltcheck report") -> dict[str, Any]:
    """The report's content as one JSON-serialisable dict."""
    entries = []
    for f in inputs["findings"]:
        for e in _entries(f) + _mutant_entries(f):
            entries.append({**e, "replay_command": replay_command(f.get("_source", "findings.json"),
                                                                  e.get("statement"))})
    statements = [e for e in entries if not e.get("mutant")]
    mutants = [e for e in entries if e.get("mutant")]
    found = labels.derive(statements)
    synthetic_violations = [v for s in inputs["synthetic"] for v in s.get("violations", [])]

    def names(chosen: list[dict[str, Any]]) -> list[str]:
        return [f"{e.get('statement')} [{e.get('variant')}]" for e in chosen]

    return {
        "label": label,
        "created": _dt.datetime.now().isoformat(timespec="seconds"),
        "sltcheck": __version__,
        "environment": versions(),
        "schema_version": SCHEMA_VERSION,
        "settings": [run_settings(f) for f in inputs["findings"]],
        "notes": list(inputs.get("notes", [])),  # partial or unfinished runs
        # Every label from sltcheck.report.labels (the findings page and the README's headline read the same).
        "glance": {
            "statements_checked": len(statements),
            "held": len(found.held),
            "undecided": names(found.undecided),
            "not_measured": names(found.not_measured),
            "violated": names(found.violated),
            # The closest call: the largest ratio among the held variants neither attained nor within NEAR of 1.
            "tightest": None if found.closest is None else {
                "statement": found.closest.get("statement"), "variant": found.closest.get("variant"),
                "ratio": found.closest.get("worst_ratio")},
            "attained": names(found.attained),  # equality proved, never read off a ratio
            "near": names(found.near),  # within labels.NEAR of 1, equality not proved
            "mutants": len(mutants),
            "mutants_refuted": sum(bool(m.get("refuted", m.get("violated"))) for m in mutants),
            "reproductions": [labels.reproduction(s) for s in inputs["synthetic"]],
            "lm_runs": [{"figure": r.get("figure"), "preset": r.get("preset"), "runs": len(r.get("runs", [])),
                         "source": r.get("_source")} for r in inputs["lm"]],
            "synthetic_violations": len(synthetic_violations),
        },
        "regime": labels.theorem_regimes(inputs["findings"]),
        "statements": entries,
        # Slack factors (bound / exact supremum): the top-level "slack" list of a findings.json,
        # rows as written by sltcheck.suprema.slack_table().
        "slack": [row for f in inputs["findings"] for row in f.get("slack", []) if isinstance(row, dict)],
        # The probability halves: the "probability" key of a findings.json (sltcheck check).
        "probability": next((f["probability"] for f in inputs["findings"] if f.get("probability")), None),
        # Search power (best found / known supremum): rows of sltcheck.harness.power.table().
        "power": [row for f in inputs["findings"] for row in f.get("power", []) if isinstance(row, dict)],
        # The smallest constants of the false or loose variants: rows of sltcheck.repaired.table().
        "repaired_constants": [row for f in inputs["findings"] for row in f.get("repaired_constants") or []
                               if isinstance(row, dict)],
        # `sltcheck certify --findings`: verdicts proved over whole families (sltcheck.certify)
        "certified_over_family": [
            {k: e.get(k) for k in ("key", "verdict", "sup_lower", "sup_upper", "proven_fraction", "expected")}
            for f in inputs["findings"] for e in (f.get("certified_over_family") or {}).get("families", [])],
        "synthetic": inputs["synthetic"],
        "readings": inputs.get("readings", []),
        "lm": inputs["lm"],
    }


# Display values per section (sections without one see only ``report``).
def contents(report: dict[str, Any], view: dict[str, Any]) -> list[tuple[str, str]]:
    """(id, heading) of every section after the lead that the page shows."""
    shown = {"violations": bool(view.get("violations") or view.get("synthetic_violations")),
             "findings": bool(view.get("overview")), "power": bool(view.get("power")),
             "repaired": bool(view.get("repaired")), "slack": bool(view.get("slack")),
             "probability": bool(view.get("probability")), "lm": bool(view.get("lm"))}
    return [(section, TITLES[section]) for section in SECTIONS[1:] if shown.get(section, True)]


VIEWS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "lead": check_views.lead_view,
    "violations": check_views.violations_view,
    "findings": check_views.findings_view,
    "statements": check_views.statements_view,
    "power": check_views.power_view,
    "repaired": check_views.repaired_view,
    "slack": check_views.slack_view,
    "probability": probability_section.view,
    "reproductions": reproduction_views.synthetic_view,
    "lm": reproduction_views.lm_view,
}


@functools.cache
def environment() -> Any:
    """The Jinja2 environment over the templates shipped in the package (autoescaping on)."""
    from jinja2 import Environment, PackageLoader

    env = Environment(loader=PackageLoader("sltcheck.report", "templates"), autoescape=True,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["short_number"] = short_number
    env.filters["ratio"] = labels.ratio_text
    return env


def render(report: dict[str, Any]) -> str:
    env = environment()
    view: dict[str, Any] = {}
    for section in SECTIONS:
        if section in VIEWS:
            view.update(VIEWS[section](report))
    view["contents"] = contents(report, view)
    style = Markup(env.loader.get_source(env, "style.css")[0])
    return env.get_template("report.html.j2").render(report=report, view=view, sections=SECTIONS, style=style)


def write(report: dict[str, Any], out: str | None = None, directory: str = "reports") -> Path:
    """Write the HTML and the JSON beside it; never overwrite an earlier report."""
    if out is None:
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        target = Path(directory) / f"sltcheck-report-{stamp}.html"
    else:
        target = Path(out)
    if target.suffix != ".html":
        raise ValueError(f"out must name an .html file, got {str(target)!r}")
    target.parent.mkdir(parents=True, exist_ok=True)
    stem, counter = target.with_suffix(""), 1
    while target.exists() or target.with_suffix(".json").exists():
        counter += 1
        target = Path(f"{stem}-{counter}.html")
    payload = validate(json_safe(json.loads(json.dumps(report, default=str))), ReportFile, "the report")
    write_json_atomic(target.with_suffix(".json"), payload, sort_keys=True)
    target.write_text(render(report))
    return target
