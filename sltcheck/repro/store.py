"""A run directory that loses nothing.

``RUN_DIR/config.json`` holds the full configuration, seeds and versions;
``RUN_DIR/results.sqlite`` holds one row per finished unit of work, written
and committed the moment it finishes (SQLite's journal makes that safe
against kill -9). Rerunning the same command skips every finished key, so a
run resumes without recomputing or duplicating anything. A run directory
refuses a different configuration instead of mixing two experiments.
"""

from __future__ import annotations

import json
import platform
import sqlite3
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

VERSIONED_PACKAGES = ("numpy", "scipy", "mpmath", "torch", "gurobipy", "highspy", "cvxpy", "sltcheck")


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    try:
        import gurobipy

        found["gurobi"] = ".".join(map(str, gurobipy.gurobi.version()))
    except Exception:  # noqa: BLE001 - any failure means "no usable Gurobi"
        found["gurobi"] = "not available"
    return found


class RunDirectory:
    """``config`` identifies the experiment; opening an existing directory with a
    different one raises ``ValueError``."""

    def __init__(self, path: str | Path, config: dict[str, object]) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        config_file = self.path / "config.json"
        if config_file.exists():
            recorded = json.loads(config_file.read_text())
            if recorded["config"] != json.loads(json.dumps(config)):
                raise ValueError(
                    f"out {str(self.path)!r} holds a run with a different configuration; "
                    "use a new directory (or the same options) to resume"
                )
        else:
            payload = {"config": config, "versions": versions()}
            temporary = config_file.with_suffix(".tmp")
            temporary.write_text(json.dumps(payload, indent=2, sort_keys=True))
            temporary.replace(config_file)
        self.config = config
        self._db = sqlite3.connect(self.path / "results.sqlite")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, record TEXT NOT NULL)"
        )
        self._db.commit()

    def done(self) -> set[str]:
        return {row[0] for row in self._db.execute("SELECT key FROM results")}

    def add(self, key: str, record: dict[str, object]) -> None:
        """Store one finished result at once; a key already stored is left untouched."""
        self._db.execute(
            "INSERT OR IGNORE INTO results (key, record) VALUES (?, ?)",
            (key, json.dumps(record, sort_keys=True)),
        )
        self._db.commit()

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(row[0]) for row in self._db.execute("SELECT record FROM results ORDER BY key")]

    def write_json(self, name: str, payload: object) -> Path:
        target = self.path / name
        temporary = target.with_suffix(".tmp")
        temporary.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str))
        temporary.replace(target)
        return target

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> RunDirectory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def pending(keys: Iterable[str], done: set[str]) -> Iterator[str]:
    return (key for key in keys if key not in done)
