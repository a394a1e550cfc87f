"""Versioned, validated result files: typed records as the schema.

Every JSON file sltcheck writes for later reading (``findings.json``,
``summary.json``, ``config.json``, the report's JSON) carries
``schema_version``; :func:`load` reads one with :func:`sltcheck.jsonfiles.read_json`,
checks the version and validates the payload against a :class:`typing.TypedDict`
(the same type the writer is annotated with), so a wrong, old or hand-edited file
is one clear :class:`~sltcheck.errors.StoredResultError` instead of a ``KeyError``
deep in a report. Extra keys are allowed (a newer writer may add fields within one
version); a missing required key or a value of the wrong type is not.

``TIMING_FIELDS`` are the keys whose values are wall-clock measurements (and the
``digest`` that covers them, :func:`sltcheck.jsonfiles.seal`): the only ones allowed to differ
between two runs with the same seed.
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints, is_typeddict

from sltcheck.errors import StoredResultError
from sltcheck.jsonfiles import read_json

SCHEMA_VERSION = 1
TIMING_FIELDS = frozenset({"seconds", "examples_per_second", "created", "median_time_s", "max_time_s",
                           "times_s", "elapsed", "wall_seconds", "source_seconds", "wall_seconds_all", "digest"})

T = TypeVar("T")


def _name(kind: Any) -> str:
    names = {type(None): "null", float: "a number", int: "an integer", str: "a string", bool: "true/false"}
    return names.get(kind) or getattr(kind, "__name__", None) or str(kind).replace("typing.", "")


def _problem(value: Any, kind: Any, where: str) -> str | None:
    """Why ``value`` is not of ``kind`` (``None`` when it is)."""
    if kind is Any or kind is object:
        return None
    if kind is None or kind is type(None):
        return None if value is None else f"{where} must be null, got {_show(value)}"
    origin = get_origin(kind)
    if origin in (Union, types.UnionType):
        return _union_problem(value, kind, where)
    if origin is Literal:
        return None if value in get_args(kind) else f"{where} must be one of {get_args(kind)}, got {_show(value)}"
    if is_typeddict(kind):
        return _typeddict_problem(value, kind, where)
    if origin in (list, tuple) or kind in (list, tuple):
        return _list_problem(value, kind, where)
    if origin is dict or kind is dict:
        return _dict_problem(value, kind, where)
    return _scalar_problem(value, kind, where)


def _union_problem(value: Any, kind: Any, where: str) -> str | None:
    """None when one option fits; else the one nested problem, or that none of the options fits."""
    problems = [_problem(value, option, where) for option in get_args(kind)]
    if any(p is None for p in problems):
        return None
    options = " or ".join(_name(option) for option in get_args(kind))
    nested = [p for p in problems if p and not p.endswith(f"got {_show(value)}")]
    return nested[0] if len(nested) == 1 else f"{where} must be {options}, got {_show(value)}"


def _typeddict_problem(value: Any, kind: Any, where: str) -> str | None:
    """An object with every required key, each key present of its type."""
    if not isinstance(value, dict):
        return f"{where} must be an object ({kind.__name__}), got {_show(value)}"
    hints = get_type_hints(kind)
    for key in sorted(kind.__required_keys__):
        if key not in value:
            return f"{where} lacks the required key {key!r}"
    for key, hint in hints.items():
        if key in value:
            found = _problem(value[key], hint, f"{where}.{key}")
            if found:
                return found
    return None


def _list_problem(value: Any, kind: Any, where: str) -> str | None:
    """A list (JSON has no tuples), each item of the first type argument if any."""
    if not isinstance(value, list):
        return f"{where} must be a list, got {_show(value)}"
    args = get_args(kind)
    if args:
        for index, item in enumerate(value):
            found = _problem(item, args[0], f"{where}[{index}]")
            if found:
                return found
    return None


def _dict_problem(value: Any, kind: Any, where: str) -> str | None:
    """An object, each value of the second type argument if any."""
    if not isinstance(value, dict):
        return f"{where} must be an object, got {_show(value)}"
    args = get_args(kind)
    if args:
        for key, item in value.items():
            found = _problem(item, args[1], f"{where}.{key}")
            if found:
                return found
    return None


def _scalar_problem(value: Any, kind: Any, where: str) -> str | None:
    """A JSON scalar: true/false, an integer, a number (an integer too) or a string."""
    if kind is bool:
        return None if isinstance(value, bool) else f"{where} must be true or false, got {_show(value)}"
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else f"{where} must be an integer, got {_show(value)}"
    if kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return None if ok else f"{where} must be a number, got {_show(value)}"
    if kind is str:
        return None if isinstance(value, str) else f"{where} must be a string, got {_show(value)}"
    raise TypeError(f"schema type {kind!r} at {where} is not supported")  # a bug in a record type


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(value: Any, kind: type[T], where: str = "file") -> T:
    """``value`` if it matches ``kind`` (a TypedDict or a type built from list, dict, unions,
    Literal and the JSON scalars); otherwise :class:`~sltcheck.errors.StoredResultError` naming the first mismatch."""
    problem = _problem(value, kind, where)
    if problem:
        raise StoredResultError(problem)
    return typing.cast(T, value)


def check_version(payload: Any, where: str, expected: int = SCHEMA_VERSION) -> None:
    if not isinstance(payload, dict):
        raise StoredResultError(f"{where} must hold a JSON object, got {type(payload).__name__}")
    found = payload.get("schema_version")
    if found is None:
        raise StoredResultError(f"{where} has no schema_version (written by an sltcheck older than schema "
                                f"{expected}); rerun the command that wrote it")
    if found != expected:
        raise StoredResultError(f"{where} has schema_version {found!r}; this sltcheck reads version {expected} "
                                "(rerun the command that wrote it, or use the sltcheck that did)")


def load(path: str | Path, kind: type[T], what: str) -> T:
    """Read ``path``, check its schema_version and validate it as ``kind``."""
    where = f"{what} {str(path)!r}"
    payload = read_json(path, what)
    check_version(payload, where)
    return validate(payload, kind, where)


def without_timing(value: Any) -> Any:
    """``value`` with every ``TIMING_FIELDS`` key removed, at any depth."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING_FIELDS}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def json_safe(value: Any) -> Any:
    """``value`` with non-finite floats as the strings "nan", "inf", "-inf" (strict JSON has none)."""
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value
