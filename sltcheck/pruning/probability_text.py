"""The probability statements' results as plain text: the frequency, width-slack and C-trend tables."""

from __future__ import annotations

from typing import Any


def _setting_text(s: dict[str, Any]) -> str:
    parts = [f"eps={s['eps']}", f"d1={s['d1']}"]
    if s["statement"] in ("lemma7", "lemma2", "theorem9"):
        parts.append(f"d2={s['d2']}")
    if s["statement"].startswith("theorem"):
        parts += [f"H={s['H']}", f"T={s['T']}"]
    if s["statement"] in ("theorem11", "theorem14"):
        parts.append(f"L={s['L']}")
    if s["statement"] == "theorem14":
        parts.append(f"B={s['B']}")
    return " ".join(parts)


def format_tables(result: dict[str, Any]) -> str:
    """The frequency, width-slack and C-trend tables of a :func:`~sltcheck.pruning.probability.run` result, as
    plain text."""
    lines = [
        f"Success frequencies at the prescribed widths (profile {result['profile']}, seed {result['seed']}; "
        f"worst inputs a search finds; 95% Clopper-Pearson):",
        f"{'statement':<10} {'setting':<30} {'C':>6} {'widths n_prime':<44} {'successes':>9} "
        f"{'interval':>15} {'1-eps':>6} verdict",
    ]
    for r in result["frequencies"]:
        groups = ", ".join(f"{k}={v}" for k, v in r["groups"].items()) + (" (cut)" if r["truncated"] else "")
        lines.append(
            f"{r['setting']['statement']:<10} {_setting_text(r['setting']):<30} {r['C']:>6.3g} {groups:<44} "
            f"{r['successes']:>4}/{r['trials']:<4} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] "
            f"{r['target']:>6.3g} {r['verdict']}"
        )
    lines += [
        "",
        "Width slack (per-group width n'; needed: smallest with success >= 1 - eps at 95% one-sided):",
        f"{'statement':<10} {'setting':<30} {'needed':>7} {'C=1':>5} {'slack':>6} {'C_cal':>6} {'slack':>6} "
        f"{'C needed':>17}",
    ]

    def num(value: Any, fmt: str = ".3g") -> str:
        return "-" if value is None else format(value, fmt)

    for r in result["width_slack"]:
        needed = num(r["needed_n_prime"], "d") if r["needed_n_prime"] is not None else f">{r['n_max']}"
        lines.append(
            f"{r['setting']['statement']:<10} {_setting_text(r['setting']):<30} {needed:>7} "
            f"{max(r['prescribed_C1'].values()):>5} {num(r['slack_C1']):>6} "
            f"{max(r['prescribed_calibrated'].values()):>6} {num(r['slack_calibrated']):>6} "
            f"{num(r['C_needed_low']):>7} .. {num(r['C_needed']):<7}"
        )
    lines += [
        "",
        f"Is C universal? C_needed = c0 + b . (log d1, log H, log 1/eps), least squares, 95% intervals "
        f"(calibrated C = {result['C_calibrated']:.4g}):",
    ]
    for statement, fit in result["C_trend"].items():
        if not fit.get("slopes"):
            lines.append(f"  {statement}: {fit.get('note', 'no fit')} ({fit['points']} points)")
            continue
        slopes = "; ".join(
            f"{k} {v['slope']:+.3f} [{v['ci'][0]:+.3f}, {v['ci'][1]:+.3f}]" for k, v in fit["slopes"].items()
        )
        grows = ", ".join(fit["grows_with"]) or "nothing (every interval reaches 0 or below)"
        lines.append(f"  {statement} ({fit['points']} points): {slopes}; C grows with: {grows}")
    return "\n".join(lines)
