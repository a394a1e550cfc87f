"""Strict JSON files written atomically and read with a clear error.

- :func:`write_json_atomic` writes strict JSON (no NaN or infinity) to a temporary
  file in the target's directory, flushes it to disk and renames it over the target,
  so a reader (or a kill -9) sees the old file or the new one, never half of one;
- :func:`create_json_exclusive` does the same but only if the target does not
  exist yet (a hard link, which fails atomically when it does);
- :func:`read_json` turns a missing, empty, truncated or non-JSON file into a
  :class:`~sltcheck.errors.StoredResultError` naming the file;
- :func:`fingerprint` is a short hash of a value's canonical JSON;
- :func:`seal` adds a ``digest`` of a result file's content, which :func:`seal_state` checks:
  a file changed after sltcheck wrote it is told from one it wrote (the digest has no secret:
  it shows an edit, not a forgery; ``sltcheck check --replay`` re-decides the numbers themselves);
  :func:`require_sealed` is every reader's rule (an edited or unsealed file refused, naming it) and
  :func:`checked` raises the first of a reader's findings about a file (:mod:`sltcheck.certificates`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from sltcheck.errors import StoredResultError


def dumps(payload: object, *, indent: int | None = 1, sort_keys: bool = False) -> str:
    """Strict JSON: NaN and infinity are an error (``ValueError``), not ``NaN``."""
    return json.dumps(payload, indent=indent, sort_keys=sort_keys, allow_nan=False)


def canonical(payload: object) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)


def fingerprint(payload: object) -> str:
    """The first 16 hex digits of the SHA-256 of ``payload``'s canonical JSON."""
    return hashlib.sha256(canonical(payload).encode()).hexdigest()[:16]


DIGEST = "digest"


def _digest(payload: dict[str, Any]) -> str:
    return hashlib.sha256(canonical({k: v for k, v in payload.items() if k != DIGEST}).encode()).hexdigest()


def seal(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with its ``digest``: the SHA-256 of its canonical JSON without that key."""
    return {**{k: v for k, v in payload.items() if k != DIGEST}, DIGEST: _digest(payload)}


def seal_state(payload: Any) -> str:
    """"sealed" (the digest matches), "edited" (it does not) or "unsealed" (no digest: written by
    an sltcheck before digests, or by hand)."""
    if not isinstance(payload, dict) or DIGEST not in payload:
        return "unsealed"
    return "sealed" if payload[DIGEST] == _digest(payload) else "edited"


def _umask() -> int:
    """This process's umask, read without changing it where the system shows it (Linux), else set and restored."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
def require_sealed(payload: Any, what: str, path: str | Path, *, allow_unsealed: bool = False) -> str:
    """``payload``'s seal state; a :class:`~sltcheck.errors.StoredResultError` naming the file if its digest
    does not match, or if it has none (unless ``allow_unsealed``: the caller re-derives every number)."""
    state = seal_state(payload)
    if state == "edited":
        raise StoredResultError(f"{what} {str(path)!r} was changed after sltcheck wrote it (its digest does not "
                                "match its content)" + _replay_hint(what, path))
    if state == "unsealed" and not allow_unsealed:
        raise StoredResultError(f"{what} {str(path)!r} carries no digest (written by hand, or by an sltcheck before "
                                "it sealed this file), so nothing shows it is what sltcheck wrote"
                                + _replay_hint(what, path, unsealed=True))
    return state


def _replay_hint(what: str, path: str | Path, unsealed: bool = False) -> str:
    if "findings" in what or "counterexamples" in str(path):
        return (f"; sltcheck check --replay {str(path)!r}{' --allow-unsealed' if unsealed else ''} re-decides its "
                "numbers and names what differs")
    if "certified" in what:
        return ("; move it away and rerun sltcheck certify with the same --out: each family resumes from its "
                "boxes.sqlite")
    if "summary" in what or "readings" in what or "results" in what:
        return "; sltcheck repro verify RUN_DIR recomputes its sources, or rerun the command that wrote it"
    return "; rerun the command that wrote it"


def checked(problems: list[str], what: str, path: str | Path) -> None:
    """Raise the first of ``problems`` (one line naming the file and the field), if any."""
    if problems:
        first = problems[0].removeprefix(f"{path}: ")
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise StoredResultError(f"{what} {str(path)!r} does not agree with what it derives from: {first}{more}")


def _temporary(target: Path, text: str) -> Path:
    try:
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:
        raise _naming(error, target) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            # mkstemp creates 0600; a result file gets what open() would give it (0644 under umask 022)
            os.fchmod(file.fileno(), 0o666 & ~_umask())
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
    except OSError as error:  # a full disk names the file it could not write
        Path(name).unlink(missing_ok=True)
        raise _naming(error, target) from None
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def _naming(error: OSError, target: Path) -> OSError:
    """``error`` naming ``target`` (a write error names no file of its own)."""
    return OSError(error.errno, error.strerror or str(error), str(target))


def write_json_atomic(path: str | Path, payload: object, *, indent: int | None = 1, sort_keys: bool = False) -> Path:
    """Replace ``path`` by ``payload`` as strict JSON in one rename."""
    target = Path(path)
    text = dumps(payload, indent=indent, sort_keys=sort_keys) + "\n"
    temporary = _temporary(target, text)
    try:
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return target


def create_json_exclusive(path: str | Path, payload: object, *, indent: int | None = 1,
                          sort_keys: bool = False) -> bool:
    """Write ``payload`` to ``path`` only if no file is there; ``False`` if one was (left untouched)."""
    target = Path(path)
    temporary = _temporary(target, dumps(payload, indent=indent, sort_keys=sort_keys) + "\n")
    try:
        os.link(temporary, target)
    except FileExistsError:
        return False
    finally:
        temporary.unlink(missing_ok=True)
    return True


def read_json(path: str | Path, what: str = "file") -> Any:
    """The JSON in ``path``; a :class:`~sltcheck.errors.StoredResultError` (one line) if it is missing or not JSON."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StoredResultError(f"{what} {str(source)!r} does not exist") from None
    except IsADirectoryError:
        raise StoredResultError(f"{what} {str(source)!r} is a directory, not a file") from None
    except UnicodeDecodeError:
        raise StoredResultError(f"{what} {str(source)!r} is not a text (JSON) file") from None
    if not text.strip():
        raise StoredResultError(f"{what} {str(source)!r} is empty (an interrupted write?); "
                                "rerun the command that writes it")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise StoredResultError(f"{what} {str(source)!r} is not valid JSON ({error.msg} at line {error.lineno}, "
                                f"column {error.colno}; truncated or edited?)") from None
    except ValueError as error:
        raise StoredResultError(f"{what} {str(source)!r} is not strict JSON: {error}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in strict JSON")
