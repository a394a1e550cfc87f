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
it sees ``report`` (the JSON content) and ``view`` (display values computed here by
the functions of ``VIEWS``, e.g. plots).
"""

from __future__ import annotations

import base64
import datetime as _dt
import functools
import json
import math
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from markupsafe import Markup

from sltcheck import __version__
from sltcheck.jsonfiles import write_json_atomic
from sltcheck.records import ReportFile
from sltcheck.report import probability_section
from sltcheck.report.inputs import settings as run_settings
from sltcheck.report.outcomes import outcome
from sltcheck.report.plots import Bar, Series, bar_chart, histogram, line_plot
from sltcheck.repro.fits import interval_text
from sltcheck.schema import SCHEMA_VERSION, json_safe, validate
from sltcheck.versions import versions

# The page's sections, in order (each a template in templates/sections/).
SECTIONS: tuple[str, ...] = (
    "violations", "glance", "findings", "statements", "power", "repaired", "slack", "probability", "reproductions",
    "lm",
)

# Fields of an array shown in decimal before "… (k more)"; the JSON keeps all of them exactly.
SHOWN_VALUES = 64


def _short_number(value: Any) -> str:
    """Any number to 4 significant digits ("—" for none or NaN; a non-number as its text)."""
    if value is None:
        return "—"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if isinstance(value, str) and math.isinf(number) and "inf" not in value.lower():
        return value  # a decimal string beyond float64's range (e.g. a bound of 1e400)
    return "—" if math.isnan(number) else f"{number:.4g}"


def attained(entry: dict[str, Any]) -> bool:
    """A held variant whose worst ratio is exactly 1: its bound is an identity on some instance."""
    ratio = entry.get("worst_ratio")
    return outcome(entry) == "held" and isinstance(ratio, int | float) and math.isclose(ratio, 1.0, rel_tol=1e-12)


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
    violated = [e for e in statements if e.get("violated")]
    below_one = [e for e in statements if outcome(e) == "held" and not attained(e)]
    tightest = max(below_one, key=lambda e: float(e.get("worst_ratio") or 0.0), default=None)
    synthetic_violations = [v for s in inputs["synthetic"] for v in s.get("violations", [])]
    return {
        "label": label,
        "created": _dt.datetime.now().isoformat(timespec="seconds"),
        "sltcheck": __version__,
        "environment": versions(),
        "schema_version": SCHEMA_VERSION,
        "settings": [run_settings(f) for f in inputs["findings"]],
        "notes": list(inputs.get("notes", [])),  # partial or unfinished runs
        "glance": {
            "statements_checked": len(statements),
            "held": sum(outcome(e) == "held" for e in statements),
            "undecided": [f"{e.get('statement')} [{e.get('variant')}]" for e in statements
                          if outcome(e) == "undecided"],
            "not_measured": [f"{e.get('statement')} [{e.get('variant')}]" for e in statements
                             if outcome(e) == "not measured"],
            "violated": [f"{e.get('statement')} [{e.get('variant')}]" for e in violated],
            # The closest call below 1; variants at exactly 1 (attained bounds) are listed apart.
            "tightest": None if tightest is None else {
                "statement": tightest.get("statement"), "variant": tightest.get("variant"),
                "ratio": tightest.get("worst_ratio")},
            "attained": [f"{e.get('statement')} [{e.get('variant')}]" for e in statements if attained(e)],
            "mutants": len(mutants),
            "mutants_refuted": sum(bool(m.get("refuted", m.get("violated"))) for m in mutants),
            "reproductions": [
                {"figure": s.get("figure"), "checked": s.get("checked"),
                 "violations": len(s.get("violations", [])), "worst_ratio": s.get("worst_ratio"),
                 "vacuous": s.get("vacuous"), "held": s.get("held"), "source": s.get("_source")}
                for s in inputs["synthetic"]
            ],
            "lm_runs": [{"figure": r.get("figure"), "preset": r.get("preset"), "runs": len(r.get("runs", [])),
                         "source": r.get("_source")} for r in inputs["lm"]],
            "synthetic_violations": len(synthetic_violations),
        },
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


# --- display values -------------------------------------------------------------------


def _decimal_values(value: Any) -> tuple[str, str]:
    """(shape, decimal text) of one instance field as findings.json stores it (floats as
    float.hex): each float as its shortest round-trip decimal, arrays as nested rows."""
    if isinstance(value, dict) and "float" in value:
        return "", repr(float.fromhex(value["float"]))
    if isinstance(value, dict) and "list" in value:
        parts = [_decimal_values(v) for v in value["list"]]
        return f"{len(parts)} × ({parts[0][0] if parts else ''})", "\n".join(f"[{i}] {text}"
                                                                          for i, (_, text) in enumerate(parts))
    if isinstance(value, dict) and "shape" in value and ("hex" in value or "int" in value):
        shape = [int(n) for n in value["shape"]]
        flat = ([repr(float.fromhex(h)) for h in value["hex"]] if "hex" in value
                else [str(int(v)) for v in value["int"]])
        more = len(flat) - SHOWN_VALUES
        flat = flat[:SHOWN_VALUES]
        text = _nested(flat, shape) if more <= 0 else ", ".join(flat) + f", … ({more} more in the JSON)"
        return " × ".join(map(str, shape)), text
    return "", str(value)


def _nested(flat: list[str], shape: list[int]) -> str:
    if len(shape) <= 1:
        return "[" + ", ".join(flat) + "]"
    step = len(flat) // shape[0] if shape[0] else 0
    rows = [_nested(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
    return "[" + ",\n ".join(rows) + "]"


def decimal_fields(instance: Any) -> list[dict[str, str]]:
    """An instance as rows of (field, shape, decimal value) for the page."""
    if not isinstance(instance, dict):
        return [] if instance is None else [{"name": "value", "shape": "", "value": str(instance)}]
    rows = []
    for name, value in instance.items():
        shape, text = _decimal_values(value)
        rows.append({"name": str(name), "shape": shape, "value": text})
    return rows


def _finding_text(name: str) -> Markup:
    """The "Finding:" paragraph of a statement's docstring (where a violation is explained), its
    markup rendered (:func:`sltcheck.report.formulas.docstring_html`)."""
    from sltcheck.report.formulas import docstring_html
    from sltcheck.statements import STATEMENT_MODULES, load

    if name not in STATEMENT_MODULES:
        return Markup("")
    paragraphs = [" ".join(p.split()) for p in (load(name).__doc__ or "").split("\n\n")]
    found = next((p for p in paragraphs if p.startswith("Finding:")), "")
    return docstring_html(found) if found else Markup("")


def _statement_text(name: str) -> dict[str, Any]:
    """Title, statement (the module docstring's first three paragraphs, markup rendered), its
    assumptions (words and MathML) and formulas (the paper's form beside each variant's encoded one)."""
    from sltcheck.report.formulas import assumption_formulas, docstring_html, plain, statement_formulas
    from sltcheck.statements import STATEMENT_MODULES, load

    if name not in STATEMENT_MODULES:
        return {}
    module = load(name)
    paragraphs = [p.strip("\n") for p in (module.__doc__ or "").split("\n\n") if p.strip()]
    paragraphs = [paragraphs[0].strip()] + paragraphs[1:] if paragraphs else []
    return {
        "title": plain(" ".join(paragraphs[0].split())) if paragraphs else name,
        "text": docstring_html("\n\n".join(paragraphs[1:3])) if len(paragraphs) > 1 else Markup(""),
        "assumptions": assumption_formulas(tuple(module.ASSUMPTIONS)),
        "formulas": statement_formulas(name),
    }


def _shape_text(search: Any) -> str:
    shape = (search or {}).get("shape") if isinstance(search, dict) else None
    return ", ".join(f"{k} = {v}" for k, v in shape.items()) if isinstance(shape, dict) else ""


def _violations_view(report: dict[str, Any]) -> dict[str, Any]:
    cards = []
    for e in report["statements"]:
        if not e.get("violated") or e.get("mutant"):
            continue
        verdict = e.get("verdict") or {}
        certified = e.get("certified_outcome") or (e.get("search") or {}).get("certified")
        cards.append({
            "statement": e.get("statement"), "variant": e.get("variant"), "measured": verdict.get("measured"),
            "bound": verdict.get("bound"), "ratio": e.get("worst_ratio"), "dps": verdict.get("dps"),
            "certified_violated": certified == "violated", "seed": e.get("seed"),
            "shape": _shape_text(e.get("search")),
            "explanation": _finding_text(str(e.get("statement"))),
            "replay": e.get("replay_command"), "fields": decimal_fields(e.get("instance")),
        })
    synthetic = [{**v, "figure": s.get("figure")} for s in report["synthetic"] for v in s.get("violations", [])[:20]]
    return {"violations": cards, "synthetic_violations": synthetic}


def _rank(entry: dict[str, Any]) -> tuple[int, float]:
    """Violations first, then held variants closest to their bound, attained (ratio 1) and unmeasured last."""
    ratio = entry.get("worst_ratio")
    if entry.get("violated"):
        return (0, -float(ratio or 0.0))
    if attained(entry):
        return (2, 0.0)
    if outcome(entry) != "held" or not isinstance(ratio, int | float):
        return (3, 0.0)
    return (1, -float(ratio))


def _findings_view(report: dict[str, Any]) -> dict[str, Any]:
    variants = [{**e, "attained": attained(e), "outcome": outcome(e)} for e in report["statements"]
                if not e.get("mutant")]
    overview = sorted(variants, key=_rank)
    colours = {0: "#d62728", 1: "#1f77b4", 2: "#9e9e9e", 3: "#9e9e9e"}
    bars = [Bar(f"{e.get('statement')} {e.get('variant')}", float(e["worst_ratio"]), color=colours[_rank(e)[0]])
            for e in overview if isinstance(e.get("worst_ratio"), int | float)]
    shown = {str(e.get("statement")) for e in variants if e.get("violated")}
    explained = [{"statement": name, "text": text} for name in dict.fromkeys(str(e.get("statement")) for e in variants)
                 if name not in shown and (text := _finding_text(name))]
    return {"overview": overview, "explained": explained,
            "overview_plot": Markup(bar_chart(bars, title="worst measured / bound", xlabel="measured / bound",
                                              marker=1.0, marker_label="bound"))}


def _statements_view(report: dict[str, Any]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for e in report["statements"]:
        groups.setdefault(str(e.get("statement")), []).append(e)
    statements = []
    for name, items in groups.items():
        variants = [{**e, "attained": attained(e), "outcome": outcome(e), "fields": decimal_fields(e.get("instance")),
                     "replay": e.get("replay_command")} for e in items if not e.get("mutant")]
        mutants = [{**m, "refuted": m.get("refuted", m.get("violated")), "fields": decimal_fields(m.get("instance"))}
                   for m in items if m.get("mutant")]
        head = _statement_text(name)
        plots = [Markup(histogram([float(r) for r in v["ratios"]], title=f"{name} [{v.get('variant')}]",
                                  xlabel="measured / bound")) for v in variants if v.get("ratios")]
        formulas = head.get("formulas") or {}
        for variant in variants:
            variant["formula"] = next((f["math"] for f in formulas.get("encoded", ()) if f["variant"] == variant.get(
                "variant")), None)
        statements.append({"title": head.get("title") or name, "text": head.get("text"),
                           "assumptions": head.get("assumptions") or [], "formulas": formulas,
                           "variants": variants, "mutants": mutants, "plots": plots})
    return {"statements": statements}


def _fixed_text(given: Any) -> str:
    if not isinstance(given, dict):
        return "" if given is None else str(given)
    shown = lambda v: (", ".join(_short_number(x) for x in v)  # noqa: E731
                       if isinstance(v, list) else _short_number(v))
    return ", ".join(f"{k} = {shown(v)}" for k, v in given.items())


def _power_view(report: dict[str, Any]) -> dict[str, Any]:
    rows = [{**r, "fixed": _fixed_text(r.get("fixed"))} for r in report.get("power") or []]
    bars = [Bar(f"{r.get('statement')} {i + 1}", float(r["power"])) for i, r in enumerate(rows)
            if isinstance(r.get("power"), int | float)]
    return {"power": rows, "power_plot": Markup(bar_chart(bars, title="search power (best found / known)",
                                                          xlabel="power", marker=1.0, marker_label="known"))}


def _repaired_view(report: dict[str, Any]) -> dict[str, Any]:
    from sltcheck.report.findings_text import repair_constant, repair_lower, repair_upper

    return {"repaired": [{"statement": r.get("statement"), "variant": r.get("variant"), "constant": repair_constant(r),
                          "lower": repair_lower(r), "upper": repair_upper(r).replace("`", ""),
                          "attained": "yes" if r.get("attained") else "approached, not attained", "why": r.get("why")}
                         for r in report.get("repaired_constants") or []]}


def _slack_view(report: dict[str, Any]) -> dict[str, Any]:
    rows, bars = [], []
    for r in report.get("slack") or []:
        ends = r.get("slack_range")
        ranged = isinstance(ends, list) and len(ends) == 2
        if r.get("kind") == "bracket" and r.get("lower") is not None:
            supremum = f"{_short_number(r.get('lower'))} … {_short_number(r.get('supremum'))}"
        else:
            supremum = _short_number(r.get("supremum"))
        rows.append({**r, "params": _fixed_text(r.get("params")), "supremum": supremum,
                     "slack": (f"{_short_number(ends[0])} … {_short_number(ends[1])}" if ranged
                               else _short_number(r.get("slack")))})
        high = ends[1] if ranged else r.get("slack")
        if isinstance(high, int | float) and high > 0:
            bars.append(Bar(f"{r.get('statement')} {len(rows)}", float(high),
                            low=float(ends[0]) if ranged else None, color="#ff7f0e" if ranged else "#1f77b4"))
    return {"slack": rows, "slack_plot": Markup(bar_chart(bars, title="slack: bound / supremum (row number)",
                                                          xlabel="slack (log; orange: bracketed range)", logx=True,
                                                          marker=1.0, marker_label="tight"))}


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


def _synthetic_view(report: dict[str, Any]) -> dict[str, Any]:
    shown = []
    for summary in report["synthetic"]:
        fits = [{"name": name,
                 "gamma": interval_text(fit, "gamma"), "delta": interval_text(fit, "delta")}
                for name, fit in summary.get("fits", {}).items() if isinstance(fit, dict) and "gamma" in fit]
        points = [(p["blocks"], p["length"], p["width"], p["sources"], f"{float(p['mean']):.4g}",
                   f"{float(p['std']):.3g}", f"{float(p['mean_bound']):.3g}", _short_number(p["max_ratio"]))
                  for p in summary.get("points", [])]
        source = Path(str(summary.get("_source", "")))
        image = _figure_image(source.parent, "figure") if summary.get("_source") else None
        shown.append({"figure": summary.get("figure"), "config": summary.get("config", {}),
                      "checked": summary.get("checked"), "violations": len(summary.get("violations", [])),
                      "vacuous": summary.get("vacuous"), "held": summary.get("held"),
                      "least_over_trivial": summary.get("least_bound_over_trivial"),
                      "worst_ratio": summary.get("worst_ratio"), "norm_policy": summary.get("norm_policy"),
                      "plot": image or Markup(_synthetic_plot(summary)), "fits": fits, "points": points,
                      "seconds": summary.get("source_seconds"), "source": summary.get("_source")})
    return {"synthetic": shown, "side_by_side": _side_by_side(report["synthetic"]),
            "readings": [_readings_view(document) for document in report.get("readings", [])]}


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


def _lm_view(report: dict[str, Any]) -> dict[str, Any]:
    shown = []
    for result in report["lm"]:
        config = result.get("config", {})
        shown.append({"figure": result.get("figure"), "preset": result.get("preset"), "model": config.get("model", {}),
                      "theory": config.get("theory_scale"), "splits": config.get("data", {}).get("splits"),
                      "plot": Markup(_lm_plot(result)), "columns": LM_COLUMNS,
                      "rows": [[p.get(c) for c in LM_COLUMNS] for p in result.get("summary", [])],
                      "source": result.get("_source")})
    return {"lm": shown}


# Display values per section (sections without one see only ``report``).
VIEWS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "violations": _violations_view,
    "findings": _findings_view,
    "statements": _statements_view,
    "power": _power_view,
    "repaired": _repaired_view,
    "slack": _slack_view,
    "probability": probability_section.view,
    "reproductions": _synthetic_view,
    "lm": _lm_view,
}


@functools.cache
def environment() -> Any:
    """The Jinja2 environment over the templates shipped in the package (autoescaping on)."""
    from jinja2 import Environment, PackageLoader

    env = Environment(loader=PackageLoader("sltcheck.report", "templates"), autoescape=True,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["short_number"] = _short_number
    return env


def render(report: dict[str, Any]) -> str:
    env = environment()
    view: dict[str, Any] = {}
    for section in SECTIONS:
        if section in VIEWS:
            view.update(VIEWS[section](report))
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
