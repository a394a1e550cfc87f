"""Repaired statements: for every false or loose variant, the smallest constant c such that
measured <= c x (the printed right side) holds for every admissible instance.

A statement declares what is known in ``REPAIRED_CONSTANTS`` (a list of dicts): ``variant``, ``constant``
(c, a float; None where it is not known exactly), ``bracket`` (optional, instead of ``constant``: [low, high]
floats, c proved to lie between them), ``scope`` (optional: the instances the row is about, e.g. "B <= 2"),
``exact`` (c or its bracket as written, e.g. "25/24"), ``attained`` (whether some instance reaches c, or it
is only approached), ``upper`` (how c is known from above: ``"proof"`` with ``where`` the module whose
docstring proves it, ``"certified family"``, or ``"open"``) and ``why`` (one line). :func:`table` adds the
evidence from below: the worst instance ``sltcheck check`` found for that variant, its ratio decided in
mpmath and enclosed in interval arithmetic where :mod:`sltcheck.harness.interval_verdict` covers the
statement (a certified lower end: c >= that ratio), and the instance itself (exact JSON), so the row
replays on its own. ``sltcheck check`` writes the rows to
findings.json's ``repaired_constants``; the report and the README's generated findings show them.
"""

from __future__ import annotations

import math
from typing import Any

UPPER_KINDS = ("proof", "certified family", "open")


def declared(statement: str) -> list[dict[str, Any]]:
    """The statement's ``REPAIRED_CONSTANTS`` (checked)."""
    from sltcheck.contract import optional
    from sltcheck.registry import load

    module = load(statement)
    rows = list(optional(module, "REPAIRED_CONSTANTS"))
    for row in rows:
        if row.get("variant") not in module.VARIANTS:
            raise ValueError(f"REPAIRED_CONSTANTS of {statement} must name its variants "
                             f"({', '.join(module.VARIANTS)}), got {row.get('variant')!r}")
        if row.get("upper") not in UPPER_KINDS:
            raise ValueError(f"REPAIRED_CONSTANTS upper of {statement} must be one of {', '.join(UPPER_KINDS)}, "
                             f"got {row.get('upper')!r}")
        if row.get("constant") is not None and row.get("bracket") is not None:
            raise ValueError(f"REPAIRED_CONSTANTS of {statement} [{row['variant']}]: a constant or a bracket, not "
                             f"both, got {row['constant']!r} and {row['bracket']!r}")
        known = row.get("constant") is not None or row.get("bracket") is not None
        if known != (row["upper"] != "open"):
            raise ValueError(f"REPAIRED_CONSTANTS of {statement} [{row['variant']}]: a constant (or a bracket) is "
                             f"known when its upper end is, got constant {row.get('constant')!r}, bracket "
                             f"{row.get('bracket')!r} with {row['upper']!r}")
        bracket = row.get("bracket")
        if bracket is not None and not (len(bracket) == 2 and 0 < bracket[0] <= bracket[1]):
            raise ValueError(f"REPAIRED_CONSTANTS bracket of {statement} [{row['variant']}] must be [low, high] "
                             f"with 0 < low <= high, got {bracket!r}")
    return rows


def certified_ratio(statement: str, variant: str, instance: dict[str, Any]) -> dict[str, Any]:
    """measured / bound at ``instance``: enclosed in interval arithmetic where :mod:`sltcheck.harness.interval_verdict`
    covers the statement and variant (``certified``: [low, high], rounded outward), else None."""
    from sltcheck.harness import interval_verdict as certified
    from sltcheck.numerics.enclosures import ends

    if variant not in certified.supported().get(statement, ()):
        return {"certified": None, "outcome": None, "backend": None}
    result = certified.evaluate(statement, instance, variant)
    if result["bound"] is None:
        return {"certified": None, "outcome": str(result["outcome"]), "backend": str(result["backend"])}
    (m_lo, m_hi), (b_lo, b_hi) = ends(result["measured"]), ends(result["bound"])
    low = math.nextafter(float(m_lo / b_hi), -math.inf) if b_hi > 0 else None
    high = math.nextafter(float(m_hi / b_lo), math.inf) if b_lo > 0 else None
    return {"certified": [low, high], "outcome": str(result["outcome"]), "backend": str(result["backend"])}


def table(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per declared repair of the statements in ``findings`` (the run's finding records, whose
    worst instances give the lower ends), in the findings' order."""
    from sltcheck.harness.serialise import decode_instance

    rows = []
    seen: set[str] = set()
    for finding in findings:
        statement = finding["statement"]
        if statement in seen:
            continue
        seen.add(statement)
        for repair in declared(statement):
            match = next((f for f in findings if f["statement"] == statement and f["variant"] == repair["variant"]),
                         None)
            lower: dict[str, Any] | None = None
            if match is not None and match.get("instance"):
                instance = decode_instance(match["instance"])
                lower = {"ratio": match.get("worst_ratio"), "decided_dps": (match.get("verdict") or {}).get("dps"),
                         **certified_ratio(statement, repair["variant"], instance),
                         "shape": (match.get("search") or {}).get("shape"), "instance": match["instance"]}
            rows.append({
                "statement": statement, "variant": repair["variant"], "constant": repair.get("constant"),
                "bracket": _floats(repair.get("bracket")), "scope": repair.get("scope"),
                "exact": repair.get("exact"), "attained": bool(repair.get("attained")),
                "lower": lower,
                "upper": {"kind": repair["upper"], "where": repair.get("where"),
                          "value": repair.get("constant") if repair.get("bracket") is None else repair["bracket"][1]},
                "why": repair.get("why", ""),
            })
    return rows


def _floats(bracket: Any) -> list[float] | None:
    return None if bracket is None else [float(bracket[0]), float(bracket[1])]


__all__ = ["UPPER_KINDS", "certified_ratio", "declared", "table"]
