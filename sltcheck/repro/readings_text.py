"""The readings' table and conclusion as text, from a ``readings.json`` document alone (no torch:
the report and the README's generator read it)."""

from __future__ import annotations

from typing import Any

from sltcheck.repro.fits import PAPER_FIT

# --- the conclusion ------------------------------------------------------------------------------


def _number(value: object) -> str:
    return f"{float(value):.3g}" if isinstance(value, (int, float)) else "—"


def _interval(row: dict[str, Any], key: str) -> str:
    value, interval = row.get(key), row.get(f"{key}_interval")
    if value is None:
        return "no fit"
    return f"{_number(value)} [{_number(interval[0])}, {_number(interval[1])}]" if interval else \
        f"{_number(value)} (no interval)"


def conclusion(document: dict[str, Any]) -> str:
    """A few sentences written from the table: each claim carries its number."""
    figure, rows = document["figure"], document["readings"]
    lines = []
    if not document["complete"]:
        lines.append(f"PARTIAL: {document.get('runs_done', '?')} of {document.get('runs_planned', '?')} runs finished; "
                     "the numbers below cover what finished (rerun the same command to resume).")
    if figure == "fig4":
        lines += _fig4_conclusion(rows)
    elif figure == "fig5":
        lines += _fig5_conclusion(rows)
    else:
        lines += _fig6_conclusion(rows)
    for fact in document["target"]:
        lines.append(f"The target trained with the {fact['token']} regression token ends at training MSE "
                     f"{_number(fact['train_loss'])} against Var(omega) = {_number(fact['omega_variance'])}: it "
                     f"explains {100 * fact['explained']:.1f}% of omega's variance, so the readings compare sources "
                     "to a target that predicts little.")
    checked = sum(r["checked"] for r in _distinct_runs(rows))
    vacuous = sum(r["vacuous"] for r in _distinct_runs(rows))
    violations = sum(r["violations"] for r in _distinct_runs(rows))
    lines.append(f"Bounds: {checked} pruned sources checked, {violations} violations, {vacuous} vacuous "
                 "(bound at or above the trivial bound max_i ||S(x_i)|| + ||T(x_i)||: such a check cannot fail).")
    return "\n".join(lines)


def _rate(found: dict[str, Any], half: str) -> str:
    interval = found.get(f"{half}_delta_interval")
    text = _number(found.get(f"{half}_delta"))
    return f"{text} [{_number(interval[0])}, {_number(interval[1])}]" if interval else text


def _distinct_runs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list({r["run"]: r for r in rows}.values())


def _fig4_conclusion(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    consistent = [r for r in rows if r["paper_inside"]["both"]]
    workshop = [r for r in rows if r["workshop_inside"]["both"]]
    if consistent:
        lines.append("Consistent with the paper's (gamma, delta) = (0.8, 0.06) (both inside the 95% intervals): "
                     + "; ".join(f"{r['name']} (gamma {_interval(r, 'gamma')}, delta {_interval(r, 'delta')})"
                                 for r in consistent) + ".")
    else:
        lines.append(f"No reading of the {len(rows)} puts the paper's (gamma, delta) = (0.8, 0.06) inside both "
                     "95% intervals.")
    if workshop:
        lines.append("Consistent with the workshop version's (0.77, 0.055): "
                     + "; ".join(r["name"] for r in workshop) + ".")
    plateaus = [r for r in rows if r["regime"].get("regime") == "plateau"]
    exponential = [r for r in rows if r["regime"].get("regime") == "exponential"]
    for r in (r for r in rows if r["regime"].get("regime") == "no decay"):
        lines.append(f"No decay: {r['name']} stays near {_number(r['regime']['level'])} (decay rate "
                     f"{_rate(r['regime'], 'early')} over the first half of the widths), mean error "
                     f"{_number(r['smallest_width']['mean'])} at n = {r['smallest_width']['width']:g} and "
                     f"{_number(r['largest_width']['mean'])} at n = {r['largest_width']['width']:g}.")
    for r in plateaus:
        lines.append(f"Plateau: {r['name']} stops falling from n = {r['regime']['starts_at']:g} at "
                     f"{_number(r['regime']['level'])} (decay rate {_rate(r['regime'], 'early')} over the "
                     f"first half of the widths, {_rate(r['regime'], 'late')} over the second), so its "
                     f"fitted delta {_interval(r, 'delta')} mixes the first drop with the plateau.")
    for r in (r for r in rows if r["regime"].get("regime") == "undetermined"):
        lines.append(f"Undetermined: {r['name']}: {r['regime'].get('reason', '')} (more sources or widths would "
                     "tell a plateau from a decay).")
    for r in (r for r in rows if r["regime"].get("regime") == "slow decay"):
        lines.append(f"Slow decay: {r['name']} still falls over the last half of the widths, at "
                     f"{_rate(r['regime'], 'late')} per unit of width (under 0.01: less than a factor 1.1 per ten "
                     f"widths), after {_rate(r['regime'], 'early')} over the first half; delta "
                     f"{_interval(r, 'delta')}; mean error {_number(r['smallest_width']['mean'])} at "
                     f"n = {r['smallest_width']['width']:g} to {_number(r['largest_width']['mean'])} at "
                     f"n = {r['largest_width']['width']:g}.")
    for r in exponential:
        ratio = r["delta"] / PAPER_FIT["delta"] if isinstance(r.get("delta"), float) else None
        lines.append(f"Exponential to the widest width: {r['name']}, delta {_interval(r, 'delta')}"
                     + (f", {ratio:.2g} times the paper's 0.06" if ratio is not None else "")
                     + f"; mean error {_number(r['smallest_width']['mean'])} at n = {r['smallest_width']['width']:g} "
                     f"to {_number(r['largest_width']['mean'])} at n = {r['largest_width']['width']:g}.")
    return lines


def _fig5_conclusion(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    for r in rows:
        growth = "; ".join(f"n = {e['width']}: largest/smallest over T {_number(e['largest_over_smallest'])}"
                           + (f", slope of log error on log T {_number(e.get('slope'))} "
                              f"[{_number(e['slope_interval'][0])}, {_number(e['slope_interval'][1])}]"
                              if e.get("slope_interval") else "") for e in r["over_length"])
        verdict = "grows with T" if r["grows_with_length"] else "no growth with T detected"
        lines.append(f"{r['name']}: {verdict} ({growth}).")
    return lines


def _fig6_conclusion(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    for r in rows:
        at = ", ".join(f"{k}: {_number(v)}" for k, v in r["mean_at_largest_width"].items())
        shared = ", ".join(f"B={s['blocks']}: delta {_number(s['delta'])} "
                           + ("overlaps" if s["overlaps_first"] else "does not overlap" if s["overlaps_first"]
                              is False else "cannot be compared with") + " the first block's"
                           for s in r["delta_shared"])
        lines.append(f"{r['name']}: the mean error at n = {r['largest_width']} "
                     + ("grows" if r["accumulates_with_blocks"] else "does not grow monotonically")
                     + f" with B ({at}); each block's own delta: {shared or 'one block only'}.")
    return lines


# --- the table, as text (the CLI's printout and the README's generated section) ----------------


def _yes(value: object) -> str:
    return "yes" if value is True else "no" if value is False else "—"


def _regime_text(row: dict[str, Any]) -> str:
    found = row.get("regime", {})
    if found.get("regime") == "plateau":
        return f"plateau {_number(found['level'])} from n = {found['starts_at']:g}"
    return str(found.get("regime", "—"))


def table(document: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The readings' table: a header and one row of cells per reading."""
    figure = document["figure"]
    if figure == "fig4":
        header = ["reading (init+solver+token+norms / error / fit)", "gamma [95%]", "delta [95%]", "paper inside",
                  "workshop inside", "error at smallest n", "at largest n", "regime", "seconds"]
        rows = [[r["name"], _interval(r, "gamma"), _interval(r, "delta"), _yes(r["paper_inside"]["both"]),
                 _yes(r["workshop_inside"]["both"]),
                 f"{_number(r['smallest_width']['mean'])} (n = {r['smallest_width']['width']:g})",
                 f"{_number(r['largest_width']['mean'])} (n = {r['largest_width']['width']:g})",
                 _regime_text(r), f"{r['seconds']:.0f}"] for r in document["readings"]]
    elif figure == "fig5":
        header = ["reading", "error vs T", "largest/smallest over T (per width)", "seconds"]
        rows = [[r["name"], "grows" if r["grows_with_length"] else "no growth detected",
                 ", ".join(f"n = {e['width']}: {_number(e['largest_over_smallest'])}" for e in r["over_length"]),
                 f"{r['seconds']:.0f}"] for r in document["readings"]]
    else:
        header = ["reading", "mean error at the largest width, per B", "grows with B", "delta of B = 1 [95%]",
                  "later blocks' own delta overlaps", "seconds"]
        rows = [[r["name"], ", ".join(f"{k}: {_number(v)}" for k, v in r["mean_at_largest_width"].items()),
                 _yes(r["accumulates_with_blocks"]), _interval(r, "delta"),
                 ", ".join(f"B={s['blocks']}: {_yes(s['overlaps_first'])}" for s in r["delta_shared"]) or "—",
                 f"{r['seconds']:.0f}"] for r in document["readings"]]
    return header, rows


def table_lines(document: dict[str, Any]) -> list[str]:
    header, rows = table(document)
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    return [" | ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
            for line in (header, *rows)]
