"""``OUT/findings.json`` of ``sltcheck check``: resumed (refusing another run's or an edited file),
written after every unit (in the planned order, sealed), read back complete, and printed as a table.

:mod:`sltcheck.checking` runs the units; this module owns the file they fill (its rows are the
:mod:`sltcheck.records` types).
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sltcheck.records import CheckRun, FindingRecord, FindingsFile, MutantRecord

LOG = logging.getLogger("sltcheck")


def resume(out: Path, run_config: CheckRun) -> FindingsFile | None:
    """The findings.json already in ``out`` (to resume), ``None`` if there is none; refuses
    another run's findings (naming the differing options), a file changed since sltcheck wrote it or
    without a digest, one that disagrees with itself (a unit without its record, ...), and finished
    searches whose gradients another environment computed (autograd beside finite
    differences: torch installed or removed since)."""
    from sltcheck.certificates import checked, findings_problems, require_sealed
    from sltcheck.errors import StoredResultError
    from sltcheck.harness.gradients import backend_name, differentiable
    from sltcheck.records import FindingsFile
    from sltcheck.rundir import refuse_other_configuration
    from sltcheck.schema import load

    path = out / "findings.json"
    if not path.exists():
        return None
    try:
        found = load(path, FindingsFile, "findings")
    except StoredResultError as error:  # never overwritten, even when unreadable
        raise StoredResultError(f"{error}; it is left as it is: move it away or give another --out") from None
    refuse_other_configuration(out, dict(found["run"]), dict(run_config))
    try:
        require_sealed(found, "findings", path)
        checked(findings_problems(dict(found)), "findings", path)
    except StoredResultError as error:
        raise StoredResultError(f"{error}; its finished units cannot be trusted: give another --out") from None
    for entry in found["findings"]:
        recorded = entry["search"]["gradients"] if entry["search"] else None
        here = backend_name(differentiable(entry["statement"], entry["variant"]))
        if recorded is not None and recorded != here:
            raise StoredResultError(
                f"findings {str(path)!r}: the finished search of {entry['statement']} [{entry['variant']}] climbed "
                f"with {recorded} gradients, this environment would use {here} (torch installed or removed "
                "since), and one run does not mix them: resume it where it started, or give another --out")
    return found


@functools.cache
def _slack_rows(names: tuple[str, ...] | None) -> list[dict[str, object]]:
    """The slack table of the checked statements, computed once per process (~15 s for all:
    Lemmas 12/13 need a search)."""
    from sltcheck.suprema import slack_table

    return slack_table(statements=names)


def save(out: Path, state: FindingsFile, unit: str | None, slack_names: tuple[str, ...] | None) -> None:
    """Mark ``unit`` done and write findings.json atomically (strict JSON, schema-versioned)."""
    from sltcheck.jsonfiles import seal, write_json_atomic
    from sltcheck.schema import json_safe

    record_environment(state)
    if unit is not None:
        state["done"].append(unit)
        _in_planned_order(state)
    state["complete"] = all(planned in state["done"] for planned in state["planned"])
    if not state["slack"]:
        state["slack"] = _slack_rows(slack_names)
    if state["complete"] and "repaired_constants" not in state:
        from sltcheck import repaired

        state["repaired_constants"] = repaired.table([dict(f) for f in state["findings"]])
    write_json_atomic(out / "findings.json", seal(json_safe(state)))


def record_environment(state: FindingsFile) -> None:
    """Adds this process's float64 kernels and builds (:func:`sltcheck.versions.kernels`) to the
    environments that wrote ``state``, where they differ from the last one (a resume elsewhere)."""
    from sltcheck.versions import kernels

    here = kernels()
    environments = state.setdefault("environments", [])
    if not environments or environments[-1] != here:
        environments.append(here)


def _in_planned_order(state: FindingsFile) -> None:
    """Done units, findings and mutant rows in the planned order, however the units were
    scheduled (a statement's mutants keep their module order: the sort is stable)."""
    rank = {unit: index for index, unit in enumerate(state["planned"])}
    state["done"].sort(key=lambda unit: rank.get(unit, len(rank)))
    state["findings"].sort(key=lambda f: rank.get(f"{f['statement']}/{f['variant']}", len(rank)))
    state["mutants"].sort(key=lambda m: rank.get(f"{m['statement']}/mutants", len(rank)))


def load_complete(source: Path) -> FindingsFile:
    """The complete findings.json ``source`` (the ``--in`` of ``sltcheck findings``): refuses a partial
    run, a file changed since sltcheck wrote it or without a digest, and one that disagrees with itself
    (:func:`sltcheck.certificates.findings_problems`)."""
    from sltcheck.certificates import checked, findings_problems, require_sealed
    from sltcheck.errors import StoredResultError
    from sltcheck.records import FindingsFile
    from sltcheck.schema import load

    data = load(source, FindingsFile, "--in findings")
    if not data["complete"]:
        missing = [unit for unit in data["planned"] if unit not in data["done"]]
        raise StoredResultError(f"--in {str(source)!r} is a partial run ({len(missing)} of {len(data['planned'])} "
                                f"units missing, from {missing[0]}); rerun its sltcheck check to finish it")
    require_sealed(data, "--in findings", source)
    checked(findings_problems(dict(data)), "--in findings", source)
    return data


def shown(ratio: object) -> str:
    """A ratio for the terminal: a number to 6 digits, "-" for none, "inf"/"nan" as stored."""
    return "-" if ratio is None else f"{ratio:.6g}" if isinstance(ratio, int | float) else str(ratio)


def table(findings: list[FindingRecord], mutants: list[MutantRecord]) -> str:
    lines = [
        f"{'statement':<11} {'variant':<22} {'examples':>8} {'worst ratio':>14} {'violated':>8} "
        f"{'undecided':>9} {'attained':>8} {'ex/s':>8}"
    ]
    for f in findings:
        ratio = f["worst_ratio"]
        lines.append(
            f"{f['statement']:<11} {str(f['variant']) + (' *' if f['default'] else ''):<22} "
            f"{f['examples']:>8} "
            f"{shown(ratio):>14} "
            f"{('YES' if f['violated'] else 'no'):>8} "
            f"{f['undecided']:>9} {f.get('attained', 0):>8} {f['examples_per_second'] or '-':>8}"
        )
    if mutants:
        refuted = sum(bool(m["refuted"]) for m in mutants)
        lines.append(f"\nmutants refuted: {refuted}/{len(mutants)}")
        for m in mutants:
            if not m["refuted"]:
                lines.append(f"  SURVIVED {m['statement']}:{m['mutant']} ({m['message']})")
    lines.append("(* = default variant, the one the proofs use)")
    return "\n".join(lines)
