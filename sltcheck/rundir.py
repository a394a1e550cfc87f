"""What every run directory guarantees, whatever writes it.

- :class:`DirectoryLock`: one writer at a time (an ``flock`` on ``DIR/.lock``, released by
  the kernel when its process ends, kill -9 included, and the file removed on a clean release);
  a second writer is refused at once;
  given the writing command's name, it also claims the directory for that command
  (``DIR/.sltcheck-command``): one directory holds one command's outputs, never ``check``
  beside ``repro`` beside ``certify``;
- :func:`bind_configuration`: ``DIR/config.json`` is created atomically (exclusive create)
  and names the one configuration the directory holds, with its fingerprint; opening the
  directory with another configuration is refused with a message naming each differing option;
- :func:`ensure_writable_directory` / :func:`ensure_writable_file`: an output that cannot be
  written is an error *before* any work is done;
- :func:`store_error`: a failing SQLite store as one line naming the file: full (the disk, or
  a quota) apart from damaged.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from typing import IO, Any, TypedDict

from sltcheck.errors import RunInUseError, StoredResultError, UsageError
from sltcheck.jsonfiles import create_json_exclusive, fingerprint
from sltcheck.schema import SCHEMA_VERSION, load


class ConfigFile(TypedDict):
    schema_version: int
    fingerprint: str
    config: dict[str, Any]
    versions: dict[str, str]


def ensure_writable_directory(path: str | Path, option: str = "--out") -> Path:
    """Create ``path`` if needed and prove it writable (a probe file), or raise :class:`~sltcheck.errors.UsageError`."""
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{option} {str(directory)!r} is a file; give a directory (a new one or a run to resume)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise UsageError(f"{option} {str(directory)!r} cannot be written ({error.strerror or error}); "
                         "give a writable directory") from None
    return directory


def ensure_writable_file(path: str | Path, option: str = "--out") -> Path:
    """Prove that ``path`` (a file) can be created or replaced, before the work that fills it."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{option} {str(target)!r} is a directory; give a file name")
    parent = target.parent
    if parent.exists() and not parent.is_dir():
        raise UsageError(f"{option} {str(target)!r} cannot be written: {str(parent)!r} is a file, not a directory")
    ensure_writable_directory(parent, f"the directory of {option}")
    if target.exists() and not os.access(target, os.W_OK):
        raise UsageError(f"{option} {str(target)!r} is not writable")
    return target


OWNER_FILE = ".sltcheck-command"
# What wrote a directory before OWNER_FILE existed, told by its files (the command group only).
_OUTPUTS_OF = {"findings.json": "check", "boxes.sqlite": "certify", "certified.json": "certify",
               "config.json": "repro", "results.sqlite": "repro", "summary.json": "repro", "results.json": "repro"}


def refuse_other_command(directory: str | Path, command: str) -> None:
    """Refuse ``directory`` if it holds the outputs of another command than ``sltcheck COMMAND``
    (``check``, ``certify``, ``repro fig4``, ...); reads only. A directory written before
    OWNER_FILE existed is told by its files (its command group)."""
    directory = Path(directory)
    marker = directory / OWNER_FILE
    if marker.is_file():
        owner: str | None = marker.read_text(encoding="utf-8", errors="replace").strip()
        same = owner == command
    else:
        owner = next((group for name, group in _OUTPUTS_OF.items() if (directory / name).exists()), None)
        same = owner is None or command.split()[0] == owner
    if not same:
        raise StoredResultError(f"run directory {str(directory)!r} holds the outputs of `sltcheck {owner}`, and a "
                                f"run directory holds one command's outputs: give `sltcheck {command}` another --out")


def claim(directory: str | Path, command: str) -> None:
    """Record that ``directory`` holds the outputs of ``sltcheck COMMAND``, or refuse it if it holds
    another command's (:func:`refuse_other_command`). Call it holding the directory's lock."""
    refuse_other_command(directory, command)
    marker = Path(directory) / OWNER_FILE
    if not marker.is_file():
        marker.write_text(f"{command}\n", encoding="utf-8")


class DirectoryLock:
    """An exclusive, non-blocking lock on ``DIR/.lock`` for the lifetime of this object; with
    ``command``, the directory is claimed for that command's outputs (:func:`claim`).

    The lock file is removed on release (a clean exit leaves no ``.lock`` behind); it is removed
    while still locked, and a process that locked a file since removed retries on the new one, so
    two writers never hold "the" lock on two different files."""

    def __init__(self, directory: str | Path, command: str | None = None) -> None:
        self.path = Path(directory) / ".lock"
        self._file = self._locked()
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"sltcheck process {os.getpid()}\n")
        self._file.flush()
        if command is not None:
            try:
                claim(directory, command)
            except BaseException:
                self.release()
                raise

    def _locked(self) -> IO[str]:
        """The open lock file, flocked, and still the one at ``self.path``."""
        import fcntl

        while True:
            file = open(self.path, "a+")  # noqa: SIM115 - held open for the lock's lifetime
            try:
                fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                file.seek(0)
                holder = file.read().strip() or "another process"
                file.close()
                if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise RunInUseError(f"run directory {str(self.path.parent)!r} is in use by {holder}; wait for "
                                        "it to finish (or stop it), then rerun to resume") from None
                raise
            try:
                current = os.stat(self.path)
            except FileNotFoundError:  # released (and removed) between our open and our flock
                file.close()
                continue
            if os.path.samestat(os.fstat(file.fileno()), current):
                return file
            file.close()  # another writer's file replaced the one we locked

    def release(self) -> None:
        if not self._file.closed:
            self.path.unlink(missing_ok=True)  # while still holding the lock: see the class
            self._file.close()  # closing releases the flock

    def __enter__(self) -> DirectoryLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


# SQLite's primary result codes (sqlite3.h) for a store that cannot be written or read.
_SQLITE_FULL, _SQLITE_IOERR, _SQLITE_CORRUPT, _SQLITE_NOTADB = 13, 10, 11, 26


def store_error(error: sqlite3.Error, path: str | Path, what: str = "results store") -> Exception:
    """``error`` of the SQLite file ``path`` as what the user can act on: a full disk (or quota) is
    an ``OSError`` ENOSPC naming the file (one line from the command line, not "corrupted");
    an unreadable or damaged file a :class:`~sltcheck.errors.StoredResultError` saying how to recover."""
    code = getattr(error, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(error)
    if primary == _SQLITE_FULL or "database or disk is full" in text:
        return OSError(errno.ENOSPC, f"the disk is full (SQLite: {text}); free some space and rerun to resume",
                       str(path))
    if primary == _SQLITE_IOERR or "disk I/O error" in text:
        return OSError(errno.EIO, f"{what} {str(path)!r} cannot be written or read (SQLite: {text}); "
                       "check the disk, then rerun to resume")
    return StoredResultError(f"{what} {str(path)!r} is corrupted or not an SQLite file ({text}); move it away to "
                             "start over, or give another --out")


def option_name(key: str) -> str:
    return "--" + key.replace("_", "-")


def differences(recorded: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """``key: recorded -> wanted`` for every key whose value differs; a ``*_engine`` key is the version of the
    code that computed the results (no option: another sltcheck wrote the directory)."""
    keys = sorted(set(recorded) | set(wanted))
    return [f"{describe(k)} (this directory: {recorded.get(k)!r}, this command: {wanted.get(k)!r})"
            for k in keys if recorded.get(k) != wanted.get(k)]


def describe(key: str) -> str:
    return f"{key} (the code's version, not an option)" if key.endswith("_engine") else option_name(key)


def refuse_other_configuration(directory: Path, recorded: dict[str, Any], wanted: dict[str, Any]) -> None:
    differing = differences(recorded, wanted)
    if differing:
        raise StoredResultError(f"run directory {str(directory)!r} holds a run with a different configuration: "
                                f"{'; '.join(differing)}. Rerun with the same options to resume, or give "
                                "another --out")


def bind_configuration(directory: str | Path, config: dict[str, Any], versions: dict[str, str]) -> str:
    """Bind ``directory`` to ``config`` (JSON-able) and return its fingerprint.

    The first caller creates ``config.json`` atomically; every later one must ask for the
    same configuration. Call it while holding the directory's :class:`DirectoryLock`."""
    directory = Path(directory)
    wanted = _plain(config)
    mark = fingerprint(wanted)
    target = directory / "config.json"
    payload = {"schema_version": SCHEMA_VERSION, "fingerprint": mark, "config": wanted, "versions": versions}
    if create_json_exclusive(target, payload, indent=2, sort_keys=True):
        return mark
    recorded = load(target, ConfigFile, "run configuration")
    refuse_other_configuration(directory, recorded["config"], wanted)
    if recorded["fingerprint"] != mark:
        raise StoredResultError(f"run configuration {str(target)!r} has fingerprint {recorded['fingerprint']} "
                                f"but its content hashes to {mark} (edited by hand?); move the directory away")
    return mark


def _plain(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` as JSON gives it back (tuples as lists), so a comparison sees what is stored."""
    import json

    return dict(json.loads(json.dumps(config, allow_nan=False)))
