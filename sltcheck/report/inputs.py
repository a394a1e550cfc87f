"""The report's inputs, read and validated: what ran, what is partial, what is missing.

Every ``--in`` is a run directory or one of the result files
(``findings.json`` of ``sltcheck check``, ``summary.json`` of ``sltcheck repro
fig4|fig5|fig6``, ``readings.json`` of ``sltcheck repro readings``, ``results.json`` of
``sltcheck repro fig7|fig8``). A readings directory shows as its readings (its runs under
``runs/`` are read only when given themselves). Each file is read
with its schema version checked and its shape validated (:mod:`sltcheck.schema`); the
same file given twice is read once; a run that never finished is named in ``notes``
(statements that never ran, a sweep without its summary) so the report never turns a
killed run into "N of N held". Every file is verified as :func:`sltcheck.repro.verify.verify_input`
says: one changed after sltcheck wrote it (its digest does not match), one without a digest, and
one that disagrees with itself (or a summary with its results.sqlite) is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sltcheck.errors import UsageError
from sltcheck.records import FindingsFile, LMResultsFile, ReadingsFile, SummaryFile
from sltcheck.repro.verify import verify_input
from sltcheck.schema import load

KINDS: dict[str, tuple[str, type[Any], str]] = {
    "findings.json": ("findings", FindingsFile, "findings"),
    "summary.json": ("synthetic", SummaryFile, "sweep summary"),
    "readings.json": ("readings", ReadingsFile, "readings"),
    "results.json": ("lm", LMResultsFile, "language-model results"),
}
SWEEP_STORE = "results.sqlite"  # a sweep's rows; without summary.json beside it the sweep never finished


def load_inputs(paths: list[str]) -> dict[str, list[Any]]:
    """Sort every given run directory or file into findings, synthetic and lm results, and
    ``notes`` (one line per partial or unfinished run)."""
    found: dict[str, list[Any]] = {"findings": [], "synthetic": [], "readings": [], "lm": [], "notes": []}
    seen: set[Path] = set()
    for raw in paths:
        for file in _candidates(raw, found["notes"]):
            resolved = file.resolve()
            if resolved in seen:
                continue
            seen.add(resolved)
            kind, record_type, what = KINDS[file.name]
            payload = dict(load(file, record_type, what))
            found["notes"] += _unsealed(payload, file)
            payload["_source"] = str(file)
            found[kind].append(payload)
            note = _partial(kind, payload, file)
            if note:
                found["notes"].append(note)
    return found


def _candidates(raw: str, notes: list[str]) -> list[Path]:
    path = Path(raw)
    if path.is_file():
        if path.name not in KINDS:
            raise UsageError(f"--in {raw!r} is not a result file: give a run directory or a file named "
                             f"{', '.join(KINDS)}")
        return [path]
    if not path.is_dir():
        raise UsageError(f"--in {raw!r} is neither a run directory nor a results file (it does not exist)")
    readings = [p.parent for p in path.rglob("readings.json")]
    files = sorted(p for p in path.rglob("*.json") if p.name in KINDS and p.parent.name != "runs"
                   and not any(root / "runs" in p.parents for root in readings))
    for store in sorted(s for s in path.rglob(SWEEP_STORE) if not any(root / "runs" in s.parents for root in readings)):
        if not (store.parent / "summary.json").exists():
            notes.append(f"{store.parent}: a sweep that never finished (no summary.json); rerun its "
                         "sltcheck repro command to resume it")
    if not files and not notes:
        raise UsageError(f"--in {raw!r} holds no {', '.join(KINDS)}: not a run directory of sltcheck "
                         "(or a run killed before its first result)")
    return files


UNSEALED = "carries no digest"


def note_label(note: str) -> str:
    """How the command line labels a note: PARTIAL for a run that did not finish, NOTE otherwise."""
    return "NOTE" if UNSEALED in note else "PARTIAL"


def _unsealed(payload: dict[str, Any], file: Path) -> list[str]:
    """Every file is verified where it is read (:mod:`sltcheck.certificates`): sealed, and consistent
    with itself (a summary with the rows of its results.sqlite); an unsealed one is refused."""
    verify_input(payload, file)
    return []


def _partial(kind: str, payload: dict[str, Any], file: Path) -> str | None:
    if kind == "findings" and not payload["complete"]:
        missing = [unit for unit in payload["planned"] if unit not in payload["done"]]
        shown = ", ".join(missing[:6]) + (", ..." if len(missing) > 6 else "")
        return (f"{file}: a partial check run: {len(missing)} of {len(payload['planned'])} units never ran "
                f"({shown}); rerun its sltcheck check to finish it")
    if kind in ("synthetic", "readings") and not payload["complete"]:
        return f"{file}: a partial sweep; rerun its sltcheck repro command to finish it"
    return None


def settings(findings: dict[str, Any]) -> dict[str, Any]:
    """What a findings.json says about how it was made (shown beside the glance table)."""
    run = findings.get("run") or {}
    return {"profile": findings.get("profile"), "seed": findings.get("seed"),
            "statements": ", ".join(run.get("only") or []) or "all",
            "search": not run.get("no_search", False), "mutants": not run.get("no_mutants", False),
            "complete": findings.get("complete"), "source": findings.get("_source")}
