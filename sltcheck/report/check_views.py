"""The report's sections on a ``sltcheck check`` run: display values from its findings.json.

The violations (each counterexample in decimal), the findings overview (closest calls first), each
statement with its wording, formulas, variants and mutants, the search power, the repaired constants and
the slack table. Each function takes the report's content (:func:`sltcheck.report.page.build`) and
returns the values its template (``templates/sections/NAME.html.j2``) sees as ``view``.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from sltcheck.report import labels
from sltcheck.report.display import compact_summary, decimal_fields, fixed_text, short_number, summary_fields
from sltcheck.report.plots import Bar, bar_chart, histogram


def _finding_text(name: str) -> Markup:
    """The "Finding:" paragraph of a statement's docstring (where a violation is explained), its
    markup rendered (:func:`sltcheck.report.formulas.docstring_html`)."""
    from sltcheck.registry import STATEMENT_MODULES, load
    from sltcheck.report.formulas import docstring_html

    if name not in STATEMENT_MODULES:
        return Markup("")
    paragraphs = [" ".join(p.split()) for p in (load(name).__doc__ or "").split("\n\n")]
    found = next((p for p in paragraphs if p.startswith("Finding:")), "")
    return docstring_html(found) if found else Markup("")


def _statement_text(name: str) -> dict[str, Any]:
    """Title, statement (the module docstring's first three paragraphs, markup rendered), its
    assumptions (words and MathML) and formulas (the paper's form beside each variant's encoded one)."""
    from sltcheck.registry import STATEMENT_MODULES, load
    from sltcheck.report.formulas import assumption_formulas, docstring_html, plain, statement_formulas

    if name not in STATEMENT_MODULES:
        return {}
    module = load(name)
    paragraphs = [p.strip("\n") for p in (module.__doc__ or "").split("\n\n") if p.strip()]
    paragraphs = [paragraphs[0].strip(), *paragraphs[1:]] if paragraphs else []
    return {
        "title": plain(" ".join(paragraphs[0].split())) if paragraphs else name,
        "text": docstring_html("\n\n".join(paragraphs[1:3])) if len(paragraphs) > 1 else Markup(""),
        "assumptions": assumption_formulas(tuple(module.ASSUMPTIONS)),
        "formulas": statement_formulas(name),
    }


def _shape_text(search: Any) -> str:
    shape = (search or {}).get("shape") if isinstance(search, dict) else None
    return ", ".join(f"{k} = {v}" for k, v in shape.items()) if isinstance(shape, dict) else ""


def _variant_formula(statement: str, variant: str) -> Markup | None:
    """The variant's encoded inequality (MathML), where its statement has formulas."""
    from sltcheck.registry import STATEMENT_MODULES
    from sltcheck.report.formulas import statement_formulas

    if statement not in STATEMENT_MODULES:
        return None
    return next((f["math"] for f in (statement_formulas(statement) or {}).get("encoded", ())
                 if f["variant"] == variant), None)


def _counterexample(entry: dict[str, Any]) -> dict[str, Any] | None:
    smallest = labels.smallest_counterexample(entry)
    if smallest is None:
        return None
    return {**smallest, "summary": summary_fields(smallest["instance"]), "fields": decimal_fields(smallest["instance"]),
            "compact": compact_summary(smallest["instance"]),
            "ratio": labels.scientific(smallest["ratio"], 6),
            "enclosure": None if smallest["enclosure"] is None else [labels.scientific(x, 8)
                                                                      for x in smallest["enclosure"]]}


def violations_view(report: dict[str, Any]) -> dict[str, Any]:
    cards = []
    for e in report["statements"]:
        if not e.get("violated") or e.get("mutant"):
            continue
        verdict = e.get("verdict") or {}
        digits = labels.telling_digits(verdict.get("measured"), verdict.get("bound"))
        statement, variant = labels.name(e)
        cards.append({
            "statement": statement, "variant": variant, "paper": labels.paper_name(statement),
            "sentence": labels.finding_sentence(e), "formula": _variant_formula(statement, variant),
            "measured": labels.scientific(verdict.get("measured"), digits),
            "bound": labels.scientific(verdict.get("bound"), digits),
            "ratio": labels.scientific(e.get("worst_ratio"), 6),
            "dps": verdict.get("dps"), "certified_violated": labels.certificate(e) == "violated", "seed": e.get("seed"),
            "shape": _shape_text(e.get("search")), "tokens": labels.tokens_of(e.get("instance")),
            "explanation": _finding_text(statement), "smallest": _counterexample(e),
            "replay": e.get("replay_command"), "summary": summary_fields(e.get("instance")),
            "fields": decimal_fields(e.get("instance")),
        })
    synthetic = [{**v, "figure": s.get("figure")} for s in report["synthetic"] for v in s.get("violations", [])[:20]]
    return {"violations": cards, "synthetic_violations": synthetic}


def _labelled(entry: dict[str, Any]) -> dict[str, Any]:
    return {**entry, "attained": labels.attained(entry), "near": labels.near(entry), "outcome": labels.outcome(entry),
            "label": labels.verdict(entry)}


def findings_view(report: dict[str, Any]) -> dict[str, Any]:
    variants = [_labelled(e) for e in report["statements"] if not e.get("mutant")]
    overview = sorted(variants, key=labels.rank)
    colours = {0: "#d62728", 1: "#1f77b4", 2: "#9e9e9e", 3: "#2ca02c", 4: "#9e9e9e"}
    bars = [Bar(f"{e.get('statement')} {e.get('variant')}", float(e["worst_ratio"]), color=colours[labels.rank(e)[0]])
            for e in overview if isinstance(e.get("worst_ratio"), int | float)]
    shown = {str(e.get("statement")) for e in variants if e.get("violated")}
    explained = [{"statement": name, "text": text} for name in dict.fromkeys(str(e.get("statement")) for e in variants)
                 if name not in shown and (text := _finding_text(name))]
    return {"overview": overview, "explained": explained, "near_tolerance": f"{labels.NEAR:g}",
            "overview_plot": Markup(bar_chart(bars, title="worst measured / bound", xlabel="measured / bound",
                                              marker=1.0, marker_label="bound"))}


def _regime_shown(row: dict[str, Any]) -> dict[str, Any]:
    """A theorem's regime row (:func:`sltcheck.report.labels.theorem_regimes`) with its numbers as shown."""
    return {**row, "ratio_text": labels.ratio_text(row.get("ratio")),
            "eps_text": labels.ratio_text(row.get("eps_star"), 4),
            "worst_text": labels.ratio_text(row.get("worst_ratio"))}


def lead_view(report: dict[str, Any]) -> dict[str, Any]:
    """The first screen: what is false (each finding in a sentence, its smallest certified counterexample),
    what is proved (bounds attained; the theorems in their regime) and what cannot fail (vacuous checks)."""
    regime = [_regime_shown(r) for r in report.get("regime") or []]
    glance = report["glance"]
    return {"regime": regime, "vacuous": [r for r in glance["reproductions"] if r.get("vacuous")],
            "closing": labels.closing_line(glance), "near_tolerance": f"{labels.NEAR:g}"}


def statements_view(report: dict[str, Any]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for e in report["statements"]:
        groups.setdefault(str(e.get("statement")), []).append(e)
    statements = []
    for name, items in groups.items():
        variants = [{**_labelled(e), "fields": decimal_fields(e.get("instance")), "summary": summary_fields(
            e.get("instance")), "replay": e.get("replay_command")} for e in items if not e.get("mutant")]
        mutants = [{**m, "refuted": m.get("refuted", m.get("violated")), "fields": decimal_fields(m.get("instance"))}
                   for m in items if m.get("mutant")]
        head = _statement_text(name)
        plots = [Markup(histogram([float(r) for r in v["ratios"]], title=f"{name} [{v.get('variant')}]",
                                  xlabel="measured / bound")) for v in variants if v.get("ratios")]
        formulas = head.get("formulas") or {}
        for variant in variants:
            variant["formula"] = next((f["math"] for f in formulas.get("encoded", ()) if f["variant"] == variant.get(
                "variant")), None)
        regime = [_regime_shown(r) for r in report.get("regime") or [] if r.get("statement") == name]
        statements.append({"title": head.get("title") or name, "text": head.get("text"), "regime": regime,
                           "assumptions": head.get("assumptions") or [], "formulas": formulas,
                           "variants": variants, "mutants": mutants, "plots": plots})
    return {"statements": statements}


def power_view(report: dict[str, Any]) -> dict[str, Any]:
    rows = [{**r, "fixed": fixed_text(r.get("fixed"))} for r in report.get("power") or []]
    bars = [Bar(f"{r.get('statement')} {i + 1}", float(r["power"])) for i, r in enumerate(rows)
            if isinstance(r.get("power"), int | float)]
    return {"power": rows, "power_plot": Markup(bar_chart(bars, title="search power (best found / known)",
                                                          xlabel="power", marker=1.0, marker_label="known"))}


def repaired_view(report: dict[str, Any]) -> dict[str, Any]:
    from sltcheck.report.findings_text import repair_constant, repair_lower, repair_upper

    return {"repaired": [{"statement": r.get("statement"), "variant": r.get("variant"), "constant": repair_constant(r),
                          "lower": repair_lower(r), "upper": repair_upper(r).replace("`", ""),
                          "attained": "yes" if r.get("attained") else "approached, not attained", "why": r.get("why")}
                         for r in report.get("repaired_constants") or []]}


# The slack plot's axis ends here: Theorem 14's slack at B = 3 (1e120) would leave every other bar a sliver.
SLACK_CLIP = 1e3


def slack_view(report: dict[str, Any]) -> dict[str, Any]:
    rows, bars = [], []
    for r in report.get("slack") or []:
        ends = r.get("slack_range")
        ranged = isinstance(ends, list) and len(ends) == 2
        if r.get("kind") == "bracket" and r.get("lower") is not None:
            supremum = f"{short_number(r.get('lower'))} … {short_number(r.get('supremum'))}"
        else:
            supremum = short_number(r.get("supremum"))
        rows.append({**r, "params": fixed_text(r.get("params")), "supremum": supremum,
                     "slack": (f"{short_number(ends[0])} … {short_number(ends[1])}" if ranged
                               else short_number(r.get("slack")))})
        high = ends[1] if ranged else r.get("slack")
        if isinstance(high, int | float) and high > 0:
            bars.append(Bar(f"{r.get('statement')} {len(rows)}", float(high),
                            low=float(ends[0]) if ranged else None, color="#ff7f0e" if ranged else "#1f77b4"))
    return {"slack": rows, "slack_plot": Markup(bar_chart(bars, title="slack: bound / supremum (row number)",
                                                          xlabel="slack (log; orange: bracketed range)", logx=True,
                                                          marker=1.0, marker_label="tight", clip=SLACK_CLIP))}
