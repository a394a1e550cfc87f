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
