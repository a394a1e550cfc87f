"""The summary of a sweep's input-space brackets (``summary.json``'s ``input_space``; torch-free).

Per source and length: the test set's max, the search's, the task and ball brackets, the bound and
the trivial bound (from :mod:`sltcheck.repro.input_space`). Per point (B, T, width): their medians
over sources. Per run, the two numbers the figures are read by:

- **underestimate**: how far the test set's max lies below the certified worst case, the largest
  (and median) over sources of task upper / test max and ball upper / test max;
- **looseness**: how far the theorem's bound lies above it, the smallest (and median) over sources
  of bound / ball upper (sources with a finite bound);

each over the sources whose bracket is certified (an undecided bracket's upper end may be no better
than the trivial bound).

and the counts: brackets certified, undecided, sources proved (ball upper <= bound) and violated
(ball lower > bound, decided in mpmath: a certified violation on a real pruned source).
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np

from sltcheck.repro.sweep_config import VERDICT_DPS
from sltcheck.repro.sweep_summary import json_number

SPACES = ("task", "ball")


def _ratio(top: Any, bottom: Any) -> Any:
    with mpmath.workdps(VERDICT_DPS):
        return mpmath.mpf(top) / mpmath.mpf(bottom) if mpmath.mpf(bottom) > 0 else mpmath.inf


def _spread(values: list[Any]) -> dict[str, Any] | None:
    """The least, median and largest of mpf values (as JSON numbers or decimal strings)."""
    if not values:
        return None
    with mpmath.workdps(VERDICT_DPS):
        ordered = sorted(mpmath.mpf(v) for v in values)
        middle = len(ordered) // 2
        median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2

        def number(value: Any) -> Any:
            return json_number(value) if mpmath.isfinite(value) else "inf"

        return {"least": number(ordered[0]), "median": number(median), "largest": number(ordered[-1])}


def summarise_input_space(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """``summary.json``'s ``input_space`` from the records (None where the run has no brackets)."""
    found = [r for r in records if isinstance(r.get("input_space"), dict)]
    if not found:
        return None
    rows = []
    for record in found:
        brackets = record["input_space"]
        rows.append({"blocks": record["blocks"], "length": record["length"], "width": record["width"],
                     "source": record["source"],
                     **{k: brackets[k] for k in ("test_max", "search_max", "bound", "trivial", "violated", "proved")},
                     **{space: {k: brackets[space][k] for k in ("lower", "upper", "certified", "instance")}
                        for space in SPACES}})
    groups: dict[tuple[int, int, int], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["blocks"], row["length"], row["width"]), []).append(row)
    points = []
    for (blocks, length, width), group in sorted(groups.items()):
        points.append({"blocks": blocks, "length": length, "width": width, "sources": len(group),
                       "test_max": float(np.median([float(r["test_max"]) for r in group])),
                       **{space: json_number(np.median([float(r[space]["upper"]) for r in group]))
                          for space in SPACES},
                       "bound": (_spread([r["bound"] for r in group]) or {}).get("median"),
                       "trivial": float(np.median([r["trivial"] for r in group]))})
    # Only a certified bracket measures the worst case (an undecided one's upper end may be the trivial bound).
    finite = [r for r in rows if r["ball"]["certified"] and mpmath.isfinite(mpmath.mpf(r["bound"]))]
    return {
        "rows": rows, "points": points,
        "underestimate": {space: _spread([_ratio(r[space]["upper"], r["test_max"]) for r in rows
                                          if r[space]["certified"]]) for space in SPACES},
        "looseness": _spread([_ratio(r["bound"], r["ball"]["upper"]) for r in finite]),
        "certified": {space: sum(bool(r[space]["certified"]) for r in rows) for space in SPACES},
        "undecided": {space: sum(not r[space]["certified"] for r in rows) for space in SPACES},
        "proved": sum(bool(r["proved"]) for r in rows),
        "violations": [r for r in rows if r["violated"]],
        "checked": len(rows),
    }
