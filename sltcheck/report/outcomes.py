"""What one checked variant of a findings file shows: held, violated, undecided or not measured.

A variant "held" only when something was measured (a worst ratio exists) and its worst
instance was decided at the declared precision; the report and the README's findings
section count from this one place.
"""

from __future__ import annotations

import math
from typing import Any

OUTCOMES: tuple[str, ...] = ("violated", "held", "undecided", "not measured")


def outcome(entry: dict[str, Any]) -> str:
    if entry.get("violated"):
        return "violated"
    ratio = entry.get("worst_ratio")
    if ratio is None or ratio == "nan" or (isinstance(ratio, float) and math.isnan(ratio)):
        return "not measured"  # strict JSON stores a NaN ratio as "nan": no measurement
    if (entry.get("verdict") or {}).get("undecided"):
        return "undecided"
    return "held"


def attained(entry: dict[str, Any]) -> bool:
    """A held variant whose worst ratio is exactly 1: its bound is an identity on some instance."""
    ratio = entry.get("worst_ratio")
    return outcome(entry) == "held" and isinstance(ratio, int | float) and math.isclose(ratio, 1.0, rel_tol=1e-12)
