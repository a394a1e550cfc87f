"""Compare two findings.json files field by field, timing aside: python .ci/compare_findings.py A B.

A refactor must not change what ``sltcheck check`` finds: run the same command (same profile, seed,
options) before and after, then compare. Every field must be equal except those that measure time or
seal the file: ``seconds``, ``examples_per_second`` and ``digest`` (the seal covers the timings). Exit 0
when equal, 1 naming each path that differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

TIMING = frozenset({"seconds", "examples_per_second", "digest"})


def differences(a: Any, b: Any, path: str = "$", ignored: frozenset[str] = TIMING) -> list[str]:
    """Every path at which ``a`` and ``b`` differ, ignoring keys in ``ignored`` at any depth."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b)):
            if key in ignored:
                continue
            if key not in a or key not in b:
                found.append(f"{path}.{key}: only in {'the second' if key not in a else 'the first'}")
            else:
                found += differences(a[key], b[key], f"{path}.{key}", ignored)
        return found
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items against {len(b)}"]
        return [found for i, (x, y) in enumerate(zip(a, b, strict=True))
                for found in differences(x, y, f"{path}[{i}]", ignored)]
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} against {b!r}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    args = parser.parse_args(argv)
    found = differences(json.loads(args.first.read_text()), json.loads(args.second.read_text()))
    for line in found:
        print(line)
    print(f"{'equal' if not found else f'{len(found)} differences'} (timing fields aside: {', '.join(sorted(TIMING))})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
