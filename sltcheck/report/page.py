"""The HTML bound report: one self-contained page (and the same content as JSON).

Inputs are run directories (or files) written by ``sltcheck check``
(``findings.json``), ``sltcheck repro fig4|fig5|fig6`` (``summary.json``) and
``sltcheck repro fig7|fig8`` (``results.json``). The page carries its plots as
inline SVG and has no scripts, fonts or links to fetch; every string that
comes from a run is HTML-escaped. Violations come first.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from html import escape
from pathlib import Path
from typing import Any

from sltcheck import __version__
from sltcheck.report.plots import Series, histogram, line_plot
from sltcheck.repro.store import versions

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:2px solid #eee;padding-bottom:.2em;margin-top:1.8em}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}td,th{border:1px solid #ddd;padding:.25em .55em;
text-align:left;vertical-align:top}th{background:#f5f5f5}.ok{color:#1a7f37;font-weight:bold}
.bad{color:#c62828;font-weight:bold}.warn{color:#a86b00;font-weight:bold}
.card{border:1px solid #ddd;border-radius:6px;padding:.8em 1em;margin:1em 0}
.violation{border:2px solid #c62828;background:#fff5f5}pre{background:#f7f7f7;padding:.6em;overflow-x:auto;
font-size:.82em;max-height:22em}pre.statement{white-space:pre-wrap;max-height:none;font-size:.85em}.plots{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
.muted{color:#666;font-size:.9em}code{background:#f3f3f3;padding:0 .2em}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _ratio(value: Any) -> str:
    if value is None:
        return "—"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return _e(value)
    return "—" if math.isnan(number) else f"{number:.4g}"


# --- loading ------------------------------------------------------------------------


def load_inputs(paths: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Sort every given run directory or file into findings, synthetic and lm results."""
    found: dict[str, list[dict[str, Any]]] = {"findings": [], "synthetic": [], "lm": []}
    for raw in paths:
        path = Path(raw)
        candidates = [path] if path.is_file() else sorted(path.rglob("*.json")) if path.is_dir() else []
        if not candidates:
            raise ValueError(f"--in {raw!r} is neither a run directory nor a results file")
        for file in candidates:
            name = file.name
            if name not in ("findings.json", "summary.json", "results.json"):
                continue
            payload = json.loads(file.read_text())
            payload["_source"] = str(file)
            kind = {"findings.json": "findings", "summary.json": "synthetic", "results.json": "lm"}[name]
            found[kind].append(payload)
    return found


def _entries(findings: dict[str, Any]) -> list[dict[str, Any]]:
    for key in ("entries", "findings", "results"):
        if isinstance(findings.get(key), list):
            return findings[key]
    return []


def _mutant_entries(findings: dict[str, Any]) -> list[dict[str, Any]]:
    """``sltcheck check`` lists mutants apart from the statements' variants."""
    return [
        {"statement": m.get("statement"), "variant": m.get("mutant"), "mutant": True, "why": m.get("why"),
         "refuted": m.get("refuted"), "instance": m.get("counterexample"), "message": m.get("message")}
        for m in findings.get("mutants", []) if isinstance(m, dict)
    ]


# --- building -------------------------------------------------------------------------


def build(inputs: dict[str, list[dict[str, Any]]], label: str = "sltcheck report") -> dict[str, Any]:
    """The report's content as one JSON-serialisable dict."""
    entries = [e for f in inputs["findings"] for e in _entries(f) + _mutant_entries(f)]
    statements = [e for e in entries if not e.get("mutant")]
    mutants = [e for e in entries if e.get("mutant")]
    violated = [e for e in statements if e.get("violated")]
    tightest = max(statements, key=lambda e: float(e.get("worst_ratio") or 0.0), default=None)
    synthetic_violations = [v for s in inputs["synthetic"] for v in s.get("violations", [])]
    return {
        "label": label,
        "created": _dt.datetime.now().isoformat(timespec="seconds"),
        "sltcheck": __version__,
        "environment": versions(),
        "settings": [
            {k: f.get(k) for k in ("profile", "dps", "seed", "examples_per_property", "_source") if k in f}
            for f in inputs["findings"]
        ],
        "glance": {
            "statements_checked": len(statements),
            "held": len(statements) - len(violated),
            "violated": [f"{e.get('statement')} [{e.get('variant')}]" for e in violated],
            "tightest": None if tightest is None else {
                "statement": tightest.get("statement"), "variant": tightest.get("variant"),
                "ratio": tightest.get("worst_ratio")},
            "mutants": len(mutants),
            "mutants_refuted": sum(bool(m.get("refuted", m.get("violated"))) for m in mutants),
            "reproductions": [
                {"figure": s.get("figure"), "checked": s.get("checked"),
                 "violations": len(s.get("violations", [])), "worst_ratio": s.get("worst_ratio"),
                 "source": s.get("_source")}
                for s in inputs["synthetic"]
            ],
            "lm_runs": [{"figure": r.get("figure"), "preset": r.get("preset"), "runs": len(r.get("runs", [])),
                         "source": r.get("_source")} for r in inputs["lm"]],
            "synthetic_violations": len(synthetic_violations),
        },
        "statements": entries,
        # Slack factors (bound / exact supremum): the top-level "slack" list of a findings.json,
        # rows as written by sltcheck.worst_case.slack_table().
        "slack": [row for f in inputs["findings"] for row in f.get("slack", []) if isinstance(row, dict)],
        "synthetic": inputs["synthetic"],
        "lm": inputs["lm"],
    }


# --- rendering ------------------------------------------------------------------------


def _glance_html(report: dict[str, Any]) -> str:
    g = report["glance"]  # type: dict[str, Any]
    violated = g["violated"]
    tight = g["tightest"]
    rows = [
        ("statements and variants checked", str(g["statements_checked"])),
        ("held", f'<span class="ok">{g["held"]}</span>'),
        ("violated", f'<span class="bad">{_e(", ".join(violated))}</span>' if violated
         else '<span class="ok">none</span>'),
        ("tightest measured / bound", "—" if not tight else
         f"{_ratio(tight['ratio'])} ({_e(tight['statement'])} [{_e(tight['variant'])}])"),
        ("mutants refuted", f"{g['mutants_refuted']} of {g['mutants']}"),
    ]
    for rep in g["reproductions"]:
        state = ('<span class="ok">every measured error under its bound</span>' if not rep["violations"]
                 else f'<span class="bad">{rep["violations"]} above their bound</span>')
        rows.append((f"reproduction {_e(rep['figure'])}",
                     f"{_e(rep['checked'])} pruned sources checked; {state}; worst ratio {_ratio(rep['worst_ratio'])}"))
    for run in g["lm_runs"]:
        rows.append((f"language model {_e(run['figure'])}", f"{_e(run['runs'])} runs, preset {_e(run['preset'])}"))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    env = report["environment"]
    env_html = ", ".join(f"{_e(k)} {_e(v)}" for k, v in env.items())
    settings = "; ".join(", ".join(f"{_e(k)}={_e(v)}" for k, v in s.items()) for s in report["settings"])
    return (f"<h2>At a glance</h2><table>{body}</table>"
            f'<p class="muted">Environment: {env_html}.<br>Checks: {settings or "none"}.</p>')


def _violations_html(report: dict[str, Any]) -> str:
    cards = []
    for e in report["statements"]:
        if e.get("violated") and not e.get("mutant"):
            verdict = e.get("verdict") or {}
            certified = e.get("certified_outcome") or (e.get("search") or {}).get("certified")
            in_intervals = ", certified in interval arithmetic" if certified == "violated" else ""
            cards.append(
                f'<div class="card violation"><b class="bad">Violated:</b> {_e(e.get("statement"))} '
                f'[{_e(e.get("variant"))}] — measured {_e(verdict.get("measured"))} &gt; bound '
                f'{_e(verdict.get("bound"))}, measured/bound = {_ratio(e.get("worst_ratio"))} at '
                f'{_e(verdict.get("dps"))} digits{in_intervals}'
                f', seed {_e(e.get("seed"))}. Replay: <code>sltcheck check --replay findings.json</code>.'
                f'<br>{_e(e.get("explanation") or _finding_text(str(e.get("statement"))))}'
                f'<pre>{_e(json.dumps(e.get("instance"), indent=1)[:4000])}</pre></div>')
    for s in report["synthetic"]:
        for v in s.get("violations", [])[:20]:
            cards.append(
                f'<div class="card violation"><b class="bad">Violated in {_e(s.get("figure"))}:</b> source '
                f'{_e(v.get("source"))} (seed {_e(v.get("seed"))}), width {_e(v.get("width"))}, T = '
                f'{_e(v.get("length"))}, B = {_e(v.get("blocks"))}: measured {_e(v.get("measured"))} &gt; bound '
                f'{_e(v.get("bound"))}.</div>')
    return "<h2>Violations</h2>" + "".join(cards) if cards else ""


def _finding_text(name: str) -> str:
    """The "Finding:" paragraph of a statement's docstring (where a violation is explained)."""
    from sltcheck.statements import STATEMENT_MODULES, load

    if name not in STATEMENT_MODULES:
        return ""
    paragraphs = [" ".join(p.split()) for p in (load(name).__doc__ or "").split("\n\n")]
    return next((p for p in paragraphs if p.startswith("Finding:")), "")


def _statement_text(name: str) -> dict[str, Any]:
    """Title, statement (the module docstring up to its first blank line after the
    statement) and assumption texts of a registered statement module."""
    from sltcheck.assumptions import ASSUMPTIONS
    from sltcheck.statements import STATEMENT_MODULES, load

    if name not in STATEMENT_MODULES:
        return {}
    module = load(name)
    paragraphs = [p.strip() for p in (module.__doc__ or "").split("\n\n") if p.strip()]
    return {
        "title": paragraphs[0].splitlines()[0] if paragraphs else name,
        "text": "\n\n".join(paragraphs[:3]),
        "assumptions": [ASSUMPTIONS[a].text for a in getattr(module, "ASSUMPTIONS", ()) if a in ASSUMPTIONS],
    }


def _mutant_outcome(mutant: dict[str, Any]) -> str:
    refuted = mutant.get("refuted", mutant.get("violated"))
    return '<span class="ok">refuted</span>' if refuted else '<span class="bad">survived</span>'


def _statements_html(report: dict[str, Any]) -> str:
    groups: dict[str, list[dict[str, Any]]] = {}
    for e in report["statements"]:
        groups.setdefault(str(e.get("statement")), []).append(e)
    if not groups:
        return "<h2>Statements</h2><p>No statement checks in this report.</p>"
    out = ["<h2>Statements</h2>"]
    for name, items in groups.items():
        variants = [e for e in items if not e.get("mutant")]
        mutants = [e for e in items if e.get("mutant")]
        head = {**_statement_text(name), **items[0]}
        out.append(f'<div class="card"><h3>{_e(head.get("title") or name)}</h3>')
        if head.get("text"):
            out.append(f'<pre class="statement">{_e(head["text"])}</pre>')
        if head.get("assumptions"):
            out.append(f"<p><b>Assumptions:</b> {_e(', '.join(map(str, head['assumptions'])))}</p>")
        rows = "".join(
            f"<tr><td>{_e(v.get('variant'))}</td><td>{_e(v.get('examples'))}</td>"
            f"<td>{_ratio(v.get('worst_ratio'))}</td><td>{_e(v.get('undecided', 0))}</td>"
            f"<td>{'<span class=bad>violated</span>' if v.get('violated') else '<span class=ok>held</span>'}"
            f"{' (certified)' if v.get('certified') else ''}</td><td>{_e(v.get('seed'))}</td></tr>"
            for v in variants)
        out.append("<table><tr><th>variant</th><th>examples</th><th>worst measured/bound</th>"
                   f"<th>undecided</th><th>verdict</th><th>seed</th></tr>{rows}</table>")
        plots = [histogram([float(r) for r in v["ratios"]], title=f"{name} [{v.get('variant')}]",
                           xlabel="measured / bound") for v in variants if v.get("ratios")]
        if plots:
            out.append(f'<div class="plots">{"".join(plots)}</div>')
        if mutants:
            mrows = "".join(
                f"<tr><td>{_e(m.get('variant'))}</td><td>{_e(m.get('why', ''))}</td>"
                f"<td>{_mutant_outcome(m)}"
                f"</td><td><code>{_e(json.dumps(m.get('instance'))[:300])}</code></td></tr>" for m in mutants)
            out.append("<p><b>Mutants</b> (known-false variants the search must refute):</p><table><tr><th>mutant</th>"
                       f"<th>why it is false</th><th>outcome</th><th>shrunk counterexample</th></tr>{mrows}</table>")
        for v in variants:
            out.append(f"<details><summary>worst instance of [{_e(v.get('variant'))}] (replayable)</summary>"
                       f"<pre>{_e(json.dumps(v.get('instance'), indent=1)[:6000])}</pre></details>")
        out.append("</div>")
    return "".join(out)


def _synthetic_html(summary: dict[str, Any]) -> str:
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
                                 dashed=True, markers=False))
        if figure == "fig4" and paper and points:
            x = sorted({float(p["width"]) for p in points})
            series.append(Series("paper 0.8e^-0.06n", x, [paper["gamma"] * math.exp(-paper["delta"] * v) for v in x],
                                 dashed=True, markers=False, color="#7f7f7f"))
        plot = line_plot(series, title=f"{figure}: approximation error vs width", xlabel=xlabel,
                         ylabel="max_i ||S(x_i) - T(x_i)||", logy=True)
    else:
        for width in sorted({p["width"] for p in points}):
            chosen = sorted((p for p in points if p["width"] == width), key=lambda p: p["length"])
            series.append(Series(f"n = {width}", [float(p["length"]) for p in chosen],
                                 [float(p["mean"]) for p in chosen], [float(p["std"]) for p in chosen]))
        plot = line_plot(series, title="fig5: approximation error vs sequence length", xlabel="T",
                         ylabel="max_i ||S(x_i) - T(x_i)||", logy=True, logx=True)
    rows = "".join(
        f"<tr><td>{_e(p['blocks'])}</td><td>{_e(p['length'])}</td><td>{_e(p['width'])}</td><td>{_e(p['sources'])}</td>"
        f"<td>{float(p['mean']):.4g}</td><td>{float(p['std']):.3g}</td><td>{float(p['mean_bound']):.3g}</td>"
        f"<td>{_ratio(p['max_ratio'])}</td></tr>" for p in points)
    fit_rows = "".join(
        f"<tr><td>{_e(name)}</td>"
        f"<td>{fit['gamma']:.4g} [{fit['gamma_interval'][0]:.3g}, {fit['gamma_interval'][1]:.3g}]</td>"
        f"<td>{fit['delta']:.4g} [{fit['delta_interval'][0]:.3g}, {fit['delta_interval'][1]:.3g}]</td></tr>"
        for name, fit in fits.items() if isinstance(fit, dict) and "gamma" in fit)
    config = summary.get("config", {})  # type: dict[str, Any]
    return (f'<div class="card"><h3>{_e(figure)} — mode {_e(config.get("mode"))}, solver {_e(config.get("solver"))}, '
            f'initialisation {_e(config.get("init"))}, preset {_e(config.get("preset"))}</h3>'
            f'<p>{_e(summary.get("checked"))} pruned sources, each checked against the a-posteriori bound of its '
            f'proof: {len(summary.get("violations", []))} violations, worst measured/bound '
            f'{_ratio(summary.get("worst_ratio"))}. Targets: norm policy {_e(summary.get("norm_policy"))}.</p>'
            f'<div class="plots">{plot}</div>'
            f"<table><tr><th>fit</th><th>gamma [95% CI]</th><th>delta [95% CI]</th></tr>{fit_rows}"
            f"<tr><td>paper</td><td>0.8</td><td>0.06</td></tr><tr><td>workshop</td><td>0.77</td><td>0.055</td></tr></table>"
            f"<table><tr><th>B</th><th>T</th><th>n</th><th>sources</th><th>mean error</th><th>std</th>"
            f"<th>mean bound</th><th>max measured/bound</th></tr>{rows}</table>"
            f'<p class="muted">run: {_e(summary.get("_source"))}</p></div>')


def _lm_html(result: dict[str, Any]) -> str:
    """Figure 7 (loss vs nonzero parameters, with and without query/key scaling) or
    Figure 8 (loss vs the query/key scale s), mean ± std over seeds."""
    summary: list[dict[str, Any]] = result.get("summary", [])
    figure = str(result.get("figure"))
    config = result.get("config", {})
    theory = config.get("theory_scale")
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
            label = "dense" if p.get("mode") != "edge-popup" else f"s = {float(p['scale']):.3g}"
            groups.setdefault(label, []).append(p)
        for label, chosen in groups.items():
            chosen.sort(key=lambda p: float(p["nonzero_params"]))
            series.append(Series(label, [float(p["nonzero_params"]) for p in chosen],
                                 [float(p["best_val_loss_mean"]) for p in chosen],
                                 [float(p.get("best_val_loss_std") or 0.0) for p in chosen]))
        xlabel = "nonzero parameters"
    plot = line_plot(series, title=f"{figure}: best validation loss", xlabel=xlabel, ylabel="validation loss")
    columns = ("mode", "scale", "keep_fraction", "n_seeds", "best_val_loss_mean", "best_val_loss_std",
               "nonzero_params")
    rows = "".join("<tr>" + "".join(f"<td>{_e(p.get(c))}</td>" for c in columns) + "</tr>" for p in summary)
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    model = config.get("model", {})
    return (f'<div class="card"><h3>{_e(figure)} — preset {_e(result.get("preset"))}</h3>'
            f'<p>GPT-2 with {_e(model.get("n_layer"))} layers, width {_e(model.get("n_embd"))}, '
            f'{_e(model.get("n_head"))} heads; n_K^(1/4) = {_e(theory)}; data: '
            f'{_e(config.get("data", {}).get("splits"))}.</p>'
            f'<div class="plots">{plot}</div><table><tr>{head}</tr>{rows}</table>'
            f'<p class="muted">run: {_e(result.get("_source"))}</p></div>')


def _slack_html(report: dict[str, Any]) -> str:
    """The "Slack factors" table: each deterministic bound over its exact supremum (or bracket)."""
    rows = report.get("slack") or []
    if not rows:
        return ""

    def supremum(r: dict[str, Any]) -> str:
        if r.get("kind") == "bracket" and r.get("lower") is not None:
            return f"{_ratio(r.get('lower'))} … {_ratio(r.get('supremum'))}"
        return _ratio(r.get("supremum"))

    def params(r: dict[str, Any]) -> str:
        given = r.get("params")
        if not isinstance(given, dict):
            return _e(given)
        shown = lambda v: ", ".join(_ratio(x) for x in v) if isinstance(v, list) else _ratio(v)  # noqa: E731
        return ", ".join(f"{_e(k)} = {shown(v)}" for k, v in given.items())

    def slack(r: dict[str, Any]) -> str:
        ends = r.get("slack_range")
        if isinstance(ends, list) and len(ends) == 2:
            return f"{_ratio(ends[0])} … {_ratio(ends[1])}"
        return _ratio(r.get("slack"))

    body = "".join(
        f"<tr><td>{_e(r.get('statement'))}</td><td>{params(r)}</td><td>{_e(r.get('kind'))}</td>"
        f"<td>{supremum(r)}</td><td>{_ratio(r.get('bound'))}</td><td>{slack(r)}</td></tr>"
        for r in rows)
    return ("<h2>Slack factors</h2><p>The default bound over the supremum of the measured side under the "
            "statement's assumptions (closed-form: proved and attained; bracket: best instance found … "
            "proved upper bound, so the slack lies in the range shown). Derivations: "
            "<code>sltcheck/worst_case/</code>.</p>"
            "<table><tr><th>statement</th><th>parameters</th><th>kind</th><th>supremum</th><th>bound</th>"
            f"<th>slack</th></tr>{body}</table>")


def render(report: dict[str, Any]) -> str:
    synthetic = "".join(_synthetic_html(s) for s in report["synthetic"])
    lm = "".join(_lm_html(r) for r in report["lm"])
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{_e(report['label'])}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_e(report['label'])}</h1><p class=\"muted\">sltcheck {_e(report['sltcheck'])}, "
        f"{_e(report['created'])}. Checks of Otsuka et al., \"The Strong Lottery Ticket Hypothesis for "
        "Multi-Head Attention Mechanisms\" (arXiv 2511.04217, AAAI 2026).</p>"
        + _violations_html(report) + _glance_html(report) + _statements_html(report) + _slack_html(report)
        + "<h2>Reproductions</h2>" + (synthetic or "<p>No synthetic reproduction in this report.</p>")
        + (lm and "<h2>Language models</h2>" + lm) + "</body></html>"
    )


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
    target.with_suffix(".json").write_text(json.dumps(report, indent=1, sort_keys=True, default=str))
    target.write_text(render(report))
    return target
