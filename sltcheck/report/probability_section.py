"""The report's "Probability statements" section: display values from the ``probability`` key of a
findings.json (written by ``sltcheck check``; see :mod:`sltcheck.pruning.probability` and
:mod:`sltcheck.pruning.allocation`). The template is ``templates/sections/probability.html.j2``.
"""

from __future__ import annotations

from typing import Any


def _num(value: Any, fmt: str = ".3g") -> str:
    return "–" if value is None else format(value, fmt)


def _setting(s: dict[str, Any]) -> str:
    keys = ["eps", "d1", "d2"] + (["H", "T"] if s["statement"].startswith("theorem") else [])
    keys += ["L"] if s["statement"] in ("theorem11", "theorem14") else []
    keys += ["B"] if s["statement"] == "theorem14" else []
    return ", ".join(f"{k} = {s[k]}" for k in keys)


def view(report: dict[str, Any]) -> dict[str, Any]:
    """Rows of the frequency, width-slack, C-trend and allocation tables (empty when absent)."""
    probability = report.get("probability")
    if not probability:
        return {"probability": None}
    frequencies = [{
        "statement": r["setting"]["statement"], "setting": _setting(r["setting"]), "C": _num(r["C"]),
        "widths": ", ".join(f"{k} = {v}" for k, v in r["groups"].items()) + (" (cut)" if r.get("truncated") else ""),
        "successes": f"{r['successes']}/{r['trials']}", "interval": f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]",
        "target": _num(r["target"]), "verdict": r["verdict"],
    } for r in probability.get("frequencies", [])]
    slack = [{
        "statement": r["setting"]["statement"], "setting": _setting(r["setting"]),
        "needed": r["needed_n_prime"] if r["needed_n_prime"] is not None else f"> {r['n_max']}",
        "c1": max(r["prescribed_C1"].values()), "slack_c1": _num(r["slack_C1"]),
        "cal": max(r["prescribed_calibrated"].values()), "slack_cal": _num(r["slack_calibrated"]),
        "C": f"{_num(r['C_needed_low'])} … {_num(r['C_needed'])}",
    } for r in probability.get("width_slack", [])]
    trends = []
    for statement, fit in probability.get("C_trend", {}).items():
        if not fit.get("slopes"):
            trends.append(f"{statement}: {fit.get('note', 'no fit')} ({fit['points']} points)")
            continue
        slopes = "; ".join(f"{k} {v['slope']:+.3f} [{v['ci'][0]:+.3f}, {v['ci'][1]:+.3f}]"
                           for k, v in fit["slopes"].items())
        grows = ", ".join(fit["grows_with"]) or "nothing (no slope interval lies above 0)"
        trends.append(f"{statement} ({fit['points']} points): {slopes}. C grows with: {grows}.")
    allocation = probability.get("allocation") or {}
    return {"probability": {
        "C_calibrated": _num(probability.get("C_calibrated"), ".4g"), "frequencies": frequencies, "slack": slack,
        "trends": trends, "allocations": allocation.get("allocations", []),
        "steps": allocation.get("theorem14_steps", []),
    }}
