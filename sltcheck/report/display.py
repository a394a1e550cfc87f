"""Numbers as the report page shows them: 4 significant digits, instances field by field in decimal.

The JSON beside the page keeps every number exactly (floats as float.hex); these are only its display.
"""

from __future__ import annotations

import math
from typing import Any

# Fields of an array shown in decimal before "… (k more)"; the JSON keeps all of them exactly.
SHOWN_VALUES = 64


def short_number(value: Any) -> str:
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


def fixed_text(given: Any) -> str:
    """Fixed parameters as "k = v, …", each number to 4 significant digits."""
    if not isinstance(given, dict):
        return "" if given is None else str(given)
    shown = lambda v: (", ".join(short_number(x) for x in v)  # noqa: E731
                       if isinstance(v, list) else short_number(v))
    return ", ".join(f"{k} = {shown(v)}" for k, v in given.items())


# --- instances summarised: what a reader takes in at once (the full decimals stay folded below) --------------

DISTINCT_SHOWN = 6  # distinct rows listed with their counts before "… (k more distinct)"
SUMMARY_DIGITS = 8  # significant digits of a value in a summary (the table below it has every digit)


def _scalar(value: float) -> str:
    from sltcheck.report.labels import scientific

    return scientific(value, SUMMARY_DIGITS)


def _rows(value: dict[str, Any]) -> tuple[list[int], list[str]]:
    """(shape, one text per row of the first axis) of a stored array."""
    shape = [int(n) for n in value["shape"]]
    flat = ([_scalar(float.fromhex(h)) for h in value["hex"]] if "hex" in value
            else [str(int(v)) for v in value["int"]])
    if not shape:
        return shape, flat
    step = len(flat) // shape[0] if shape[0] else 0
    return shape, [("[" + ", ".join(flat[i * step:(i + 1) * step]) + "]") if len(shape) > 1 else flat[i]
                   for i in range(shape[0])]


def _mask_summary(value: dict[str, Any]) -> str | None:
    """A 0/1 mask of shape (T, T) in words: full, causal, or how many ones."""
    shape = [int(n) for n in value["shape"]]
    if "int" not in value or len(shape) != 2 or shape[0] != shape[1]:
        return None
    size = shape[0]
    ones = [int(v) for v in value["int"]]
    if all(ones):
        return f"full ({size} × {size} ones: every token attends to every token)"
    if ones == [int(j <= i) for i in range(size) for j in range(size)]:
        return f"causal ({size} × {size}, lower triangle)"
    return f"{sum(ones)} ones of {size * size}"


def summarise(value: Any) -> str:
    """One stored field in a line: a number at 8 digits, an array as its distinct rows with their
    counts ("3 distinct of 49: [1.0000066] × 9, ..."), a mask in words, a list field by field."""
    if isinstance(value, dict) and "float" in value:
        return _scalar(float.fromhex(value["float"]))
    if isinstance(value, dict) and "list" in value:
        parts = [summarise(v) for v in value["list"]]
        return parts[0] if len(parts) == 1 else " | ".join(f"#{i + 1}: {part}" for i, part in enumerate(parts))
    if isinstance(value, dict) and "shape" in value and ("hex" in value or "int" in value):
        mask = _mask_summary(value)
        if mask is not None:
            return mask
        shape, rows = _rows(value)
        if len(rows) <= 1 or (len(shape) <= 1 and len(rows) <= 4):
            return ", ".join(rows) if len(shape) <= 1 else rows[0] if rows else "[]"
        counts: dict[str, int] = {}
        for row in rows:
            counts[row] = counts.get(row, 0) + 1
        if len(counts) == len(rows) and len(rows) <= DISTINCT_SHOWN:
            return ", ".join(rows)
        shown = ", ".join(f"{row} × {count}" for row, count in list(counts.items())[:DISTINCT_SHOWN])
        more = len(counts) - DISTINCT_SHOWN
        return f"{len(counts)} distinct of {len(rows)}: {shown}" + (f", … ({more} more distinct)" if more > 0 else "")
    return str(value)


def summary_fields(instance: Any) -> list[dict[str, str]]:
    """An instance as rows of (field, shape, summary): what the page shows before the folded decimals."""
    if not isinstance(instance, dict):
        return [] if instance is None else [{"name": "value", "shape": "", "value": str(instance)}]
    rows = []
    for name, value in instance.items():
        shape = " × ".join(str(n) for n in value["shape"]) if isinstance(value, dict) and "shape" in value else (
            f"{len(value['list'])} ×" if isinstance(value, dict) and "list" in value else "")
        rows.append({"name": str(name), "shape": shape, "value": summarise(value)})
    return rows


def compact_summary(instance: Any) -> str:
    """An instance in one paragraph, fields with the same value written once ("W_Q = W_K = W_V = [1]")."""
    groups: dict[str, list[str]] = {}
    for row in summary_fields(instance):
        groups.setdefault(row["value"], []).append(row["name"])
    return "; ".join(f"{' = '.join(names)}: {value}" if value[:1].isalpha() or "distinct" in value
                     else f"{' = '.join(names)} = {value}" for value, names in groups.items())
