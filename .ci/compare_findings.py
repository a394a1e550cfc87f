"""Compare two sltcheck outputs field by field, timing aside: python .ci/compare_findings.py A B.

A refactor must not change what sltcheck computes: run the same command (same profile, seed, options)
before and after, then compare. A and B are two ``findings.json`` files (``sltcheck check``) or two run
directories (``sltcheck repro``): there the JSON files beside each other (``summary.json``,
``config.json``, ...) and every record of ``results.sqlite`` (one per pruned source) are compared.
Every field must be equal except those that measure time or seal the file: ``seconds``, any
``*_seconds``, ``examples_per_second`` and ``digest`` (the seal covers the timings). Exit 0 when equal,
1 naming each path that differs.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

TIMING = frozenset({"seconds", "examples_per_second", "digest"})


def _timing(key: str) -> bool:
    return key in TIMING or key.endswith("_seconds")


def differences(a: Any, b: Any, path: str = "$") -> list[str]:
    """Every path at which ``a`` and ``b`` differ, ignoring timing keys at any depth."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b)):
            if _timing(key):
                continue
            if key not in a or key not in b:
                found.append(f"{path}.{key}: only in {'the second' if key not in a else 'the first'}")
            else:
                found += differences(a[key], b[key], f"{path}.{key}")
        return found
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items against {len(b)}"]
        return [found for i, (x, y) in enumerate(zip(a, b, strict=True))
                for found in differences(x, y, f"{path}[{i}]")]
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} against {b!r}"]


def _records(path: Path) -> dict[str, Any]:
    """The stored results of a run directory: key -> {fingerprint, record}."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT key, fingerprint, record FROM results").fetchall()
    return {key: {"fingerprint": fingerprint, "record": json.loads(record)} for key, fingerprint, record in rows}


def _contents(path: Path) -> dict[str, Any]:
    """What a findings file or a run directory holds, as one comparable value."""
    if path.is_file():
        return json.loads(path.read_text())
    if not path.is_dir():
        raise SystemExit(f"{path}: neither a findings file nor a run directory")
    contents: dict[str, Any] = {p.name: json.loads(p.read_text()) for p in sorted(path.glob("*.json"))}
    if (path / "results.sqlite").is_file():
        contents["results.sqlite"] = _records(path / "results.sqlite")
    return contents


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    args = parser.parse_args(argv)
    found = differences(_contents(args.first), _contents(args.second))
    for line in found:
        print(line)
    print(f"{'equal' if not found else f'{len(found)} differences'} "
          f"(timing fields aside: {', '.join(sorted(TIMING))}, *_seconds)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
