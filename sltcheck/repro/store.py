"""A run directory that loses nothing and never mixes two experiments.

``RUN_DIR/config.json`` holds the full configuration, its fingerprint, seeds and
versions, created atomically by the first run (:func:`sltcheck.rundir.bind_configuration`);
``RUN_DIR/results.sqlite`` holds one row per finished unit of work, each tagged with
that fingerprint, written and committed the moment it finishes (SQLite's journal
makes that safe against kill -9). Each row is sealed (:func:`sltcheck.jsonfiles.seal` over its key,
fingerprint and record): a row edited, moved to another key or written without a digest is refused
where it is read (a resumed run, the readings, ``repro verify``), naming the file and the key.
Rerunning the same command skips every finished
key, so a run resumes without recomputing or duplicating anything. A run directory
refuses a different configuration (naming the differing options), rows of another
fingerprint (config.json deleted and the command rerun with other options), a second
writer at the same time (``RUN_DIR/.lock``) and a corrupted store, each with one
clear :class:`~sltcheck.errors.SltcheckError`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sltcheck.errors import StoredResultError
from sltcheck.jsonfiles import fingerprint as fingerprint_of
from sltcheck.jsonfiles import seal, seal_state, write_json_atomic
from sltcheck.rundir import OWNER_FILE, DirectoryLock, bind_configuration, ensure_writable_directory, store_error
from sltcheck.schema import json_safe
from sltcheck.versions import versions

STORE = "results.sqlite"


class RunDirectory:
    """``config`` identifies the experiment; opening a directory that holds another one
    raises :class:`~sltcheck.errors.StoredResultError` (a ``SltcheckError``) naming the
    differing options. Holds the directory's lock until closed; ``command`` (``repro fig4``)
    claims the directory for that command's outputs. A run that fails or is interrupted before
    its first result leaves no configuration behind (the corrected command must not be refused)."""

    def __init__(self, path: str | Path, config: dict[str, object], command: str | None = None) -> None:
        self.path = ensure_writable_directory(path)
        self._created = [name for name in ("config.json", STORE, OWNER_FILE) if not (self.path / name).exists()]
        self._lock = DirectoryLock(self.path, command)
        self._db: sqlite3.Connection | None = None
        try:
            self.fingerprint = fingerprint_of(json.loads(json.dumps(config)))
            if (self.path / "config.json").exists():  # a differing option is named before the store is read
                bind_configuration(self.path, config, versions())
                self._db = self._open_store()
            else:  # rows of another configuration refuse the run before a config.json is written
                self._db = self._open_store()
                bind_configuration(self.path, config, versions())
        except BaseException:
            self.close()
            raise
        self.config = config

    def _open_store(self) -> sqlite3.Connection:
        store = self.path / STORE
        where = f"results store {str(store)!r}"
        try:
            db = sqlite3.connect(store)
            db.execute("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, "
                       "record TEXT NOT NULL)")
            db.commit()
            columns = [row[1] for row in db.execute("PRAGMA table_info(results)")]
            if "fingerprint" not in columns:
                raise StoredResultError(f"{where} was written by an older sltcheck whose rows carry no "
                                        "configuration fingerprint; give another --out (or move this one away)")
            others = [row[0] for row in db.execute("SELECT DISTINCT fingerprint FROM results")
                      if row[0] != self.fingerprint]
        except sqlite3.Error as error:
            raise store_error(error, store) from None
        if others:
            db.close()
            raise StoredResultError(
                f"{where} holds results of another configuration (fingerprint {', '.join(others)}; this command's "
                f"is {self.fingerprint}), so config.json was removed or replaced; rerun with that run's options "
                "(restore its config.json) or give another --out")
        return db

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoredResultError(f"run directory {str(self.path)!r} is closed")
        return self._db

    def done(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT key FROM results WHERE fingerprint = ?",
                                                  (self.fingerprint,))}

    def add(self, key: str, record: dict[str, object]) -> None:
        """Store one finished result at once; a key already stored is left untouched."""
        try:
            self.db.execute(
                "INSERT OR IGNORE INTO results (key, fingerprint, record) VALUES (?, ?, ?)",
                (key, self.fingerprint, json.dumps(sealed_row(key, self.fingerprint, record), sort_keys=True,
                                                   allow_nan=False)),
            )
            self.db.commit()
        except sqlite3.Error as error:  # a full disk names the store (finished rows are kept: rerun to resume)
            raise store_error(error, self.path / STORE) from None

    def records(self) -> list[dict[str, Any]]:
        """Every finished row's record, in key order, each verified against its seal."""
        return [record for _, record in self.rows()]

    def rows(self) -> list[tuple[str, dict[str, Any]]]:
        """(key, record) of every finished row, in key order, each verified against its seal."""
        return read_rows(self.db, self.path / STORE, self.fingerprint)

    def write_json(self, name: str, payload: object) -> Path:
        """Write ``RUN_DIR/name`` atomically as strict JSON."""
        return write_json_atomic(self.path / name, json_safe(payload), indent=2, sort_keys=True)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self._lock.release()

    def __enter__(self) -> RunDirectory:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        if kind is not None:
            self._forget_if_empty()
        self.close()

    def _forget_if_empty(self) -> None:
        """After a failure before the first result: remove the configuration (and empty store) this
        run created, so the directory refuses nothing (a corrected command starts afresh)."""
        try:
            if self._db is None or self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0]:
                return
            self._db.close()
            self._db = None
            for name in self._created:
                (self.path / name).unlink(missing_ok=True)
        except (sqlite3.Error, OSError):
            pass  # a store that cannot be read keeps what it holds


def pending(keys: Iterable[str], done: set[str]) -> Iterator[str]:
    return (key for key in keys if key not in done)


def sealed_row(key: str, fingerprint: str, record: dict[str, object]) -> dict[str, Any]:
    """A row as stored: its key, its configuration's fingerprint and its record, sealed together
    (a row copied to another key or another configuration no longer matches its digest)."""
    return seal(json_safe({"key": key, "fingerprint": fingerprint, "record": record}))


def read_rows(db: sqlite3.Connection, store: Path, fingerprint: str) -> list[tuple[str, dict[str, Any]]]:
    """(key, record) of every row of ``fingerprint``, in key order; a row that is not JSON, carries no
    digest, does not match it, or names another key or fingerprint is one error naming the file and the key."""
    try:
        rows = list(db.execute("SELECT key, record FROM results WHERE fingerprint = ? ORDER BY key", (fingerprint,)))
    except sqlite3.Error as error:
        raise store_error(error, store) from None
    found = []
    for key, text in rows:
        where = f"results store {str(store)!r}: the row {key!r}"
        try:
            row = json.loads(text)
        except json.JSONDecodeError:
            raise StoredResultError(f"{where} is not valid JSON (edited by hand?); move the store away to start "
                                    "over") from None
        state = seal_state(row)
        if state != "sealed" or not isinstance(row.get("record"), dict):
            why = ("carries no digest (written by hand, or by an sltcheck before rows were sealed)"
                   if state == "unsealed" else "was changed after sltcheck wrote it (its digest does not match)")
            raise StoredResultError(f"{where} {why}; sltcheck repro verify recomputes its source: move the store "
                                    "away (or give another --out) to start over")
        if row.get("key") != key or row.get("fingerprint") != fingerprint:
            raise StoredResultError(f"{where} was sealed as the row {row.get('key')!r} of the configuration "
                                    f"{row.get('fingerprint')!r} (moved by hand?); move the store away to start over")
        found.append((key, row["record"]))
    return found
