"""What every run directory guarantees, whatever writes it.

- :class:`DirectoryLock`: one writer at a time (an ``flock`` on ``DIR/.lock``, released by
  the kernel when its process ends, kill -9 included); a second writer is refused at once;
- :func:`bind_configuration`: ``DIR/config.json`` is created atomically (exclusive create)
  and names the one configuration the directory holds, with its fingerprint; opening the
  directory with another configuration is refused with a message naming each differing option;
- :func:`ensure_writable_directory` / :func:`ensure_writable_file`: an output that cannot be
  written is an error *before* any work is done.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any, TypedDict

from sltcheck.errors import RunInUseError, StoredResultError, UsageError
from sltcheck.jsonfiles import create_json_exclusive, fingerprint
from sltcheck.schema import SCHEMA_VERSION, load


class ConfigFile(TypedDict):
    schema_version: int
    fingerprint: str
    config: dict[str, Any]
    versions: dict[str, str]


def ensure_writable_directory(path: str | Path, option: str = "--out") -> Path:
    """Create ``path`` if needed and prove it writable (a probe file), or raise :class:`UsageError`."""
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


class DirectoryLock:
    """An exclusive, non-blocking lock on ``DIR/.lock`` for the lifetime of this object."""

    def __init__(self, directory: str | Path) -> None:
        import fcntl

        self.path = Path(directory) / ".lock"
        self._file = open(self.path, "a+")  # noqa: SIM115 - held open for the lock's lifetime
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            self._file.seek(0)
            holder = self._file.read().strip() or "another process"
            self._file.close()
            if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise RunInUseError(f"run directory {str(Path(directory))!r} is in use by {holder}; wait for it "
                                    "to finish (or stop it), then rerun to resume") from None
            raise
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"sltcheck process {os.getpid()}\n")
        self._file.flush()

    def release(self) -> None:
        if not self._file.closed:
            self._file.close()  # closing releases the flock

    def __enter__(self) -> DirectoryLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def option_name(key: str) -> str:
    return "--" + key.replace("_", "-")


def differences(recorded: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """``key: recorded -> wanted`` for every key whose value differs."""
    keys = sorted(set(recorded) | set(wanted))
    return [f"{option_name(k)} (this directory: {recorded.get(k)!r}, this command: {wanted.get(k)!r})"
            for k in keys if recorded.get(k) != wanted.get(k)]


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
