"""A synthetic sweep's results checked against what they derive from (``sltcheck repro verify RUN_DIR``).

- :func:`summary_differences`: ``summary.json`` re-derived from the sealed rows of ``results.sqlite``
  beside it (:func:`sltcheck.repro.sweep_summary.summarise`: points, fits, counts, violations, the
  worst ratio, complete); every reader of a summary runs it (the report, ``repro readme``);
- :func:`readings_differences`: ``readings.json``'s conclusion re-written from its own table, and each
  reading's counts against the summary of its run (``runs/NAME/summary.json``, itself re-derived);
- :func:`verify`: the above, and then the sources themselves recomputed (all of them or a sample,
  ``sltcheck.repro.synthetic.source_records``, with the targets rebuilt from the seed) and compared
  with the stored records, field by field, as ``sltcheck check --replay`` does for the statements.

Each returns one line per difference, naming the file and the field (empty: none). Floats are compared
to :data:`RELATIVE`: the same machine gives the same bits, another machine's float64 kernels may not.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

from sltcheck.errors import StoredResultError

#: Floats compared with a relative tolerance: the same machine gives the same bits, another machine may not.
RELATIVE = 1e-9
# The summary's fields derived from the rows (the rest: the run's options, timings, the target's facts).
DERIVED = ("figure", "points", "fits", "checked", "violations", "undecided", "vacuous", "held",
           "least_bound_over_trivial", "worst_ratio", "bound_variants", "complete", "input_space")


def differ(recorded: Any, derived: Any, where: str, tolerance: float = RELATIVE) -> list[str]:
    """Where ``recorded`` and ``derived`` (plain JSON values) differ: numbers beyond ``tolerance``
    (relative), anything else at all; one line per differing leaf (at most a few)."""
    if isinstance(derived, dict) and isinstance(recorded, dict):
        found = []
        for key in dict.fromkeys([*derived, *recorded]):
            found += differ(recorded.get(key), derived.get(key), f"{where}.{key}", tolerance)
        return found[:5]
    if isinstance(derived, list) and isinstance(recorded, list) and len(derived) == len(recorded):
        found = []
        for index, (a, b) in enumerate(zip(recorded, derived, strict=True)):
            found += differ(a, b, f"{where}[{index}]", tolerance)
        return found[:5]
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (recorded, derived))
    if numbers and math.isclose(recorded, derived, rel_tol=tolerance, abs_tol=1e-300):
        return []
    if recorded == derived:
        return []
    return [f"{where}: recorded {_short(recorded)}, derived {_short(derived)}"]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _config(summary: dict[str, Any]) -> Any:
    from sltcheck.repro.sweep_config import SweepConfig

    given = dict(summary["config"])
    given.pop("input_space_engine", None)  # derived from input_space (the records name theirs: other_engines)
    for name in ("widths", "lengths", "blocks"):
        given[name] = tuple(given.get(name) or ())
    try:
        return SweepConfig(**given)
    except TypeError as error:
        raise StoredResultError(f"its config is not a sweep's ({error})") from None


def stored_rows(directory: Path, fingerprint: str) -> list[tuple[str, dict[str, Any]]]:
    """The sealed rows of ``directory/results.sqlite`` of ``fingerprint``, read without taking the
    directory (a reader, not a writer)."""
    from sltcheck.repro.store import STORE, read_rows

    store = directory / STORE
    if not store.is_file():
        raise StoredResultError(f"results store {str(store)!r} does not exist: the summary beside it cannot be "
                                "re-derived (copy the run directory whole)")
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise StoredResultError(f"results store {str(store)!r} cannot be opened ({error})") from None
    try:
        return read_rows(db, store, fingerprint)
    finally:
        db.close()


def summary_differences(summary: dict[str, Any], path: Path) -> list[str]:
    """``summary.json`` (``path``) against its re-derivation from the rows beside it."""
    from sltcheck.repro.sweep_config import units
    from sltcheck.repro.sweep_summary import stored_records, summarise
    from sltcheck.schema import json_safe

    directory = path.parent
    rows = stored_rows(directory, str(summary.get("fingerprint")))
    config = _config(summary)
    records = stored_records(rows, str(directory / "results.sqlite"))
    norms = {int(b): n for b, n in (summary.get("target_norms") or {}).items()}
    derived = json_safe(summarise(config, records, norms))
    derived["complete"] = {key for key, _ in rows} == {key for key, *_ in units(config)}
    found = []
    for name in DERIVED:
        found += differ(summary.get(name), derived.get(name), name)
    return [f"{path}: {line}" for line in found]


def readings_differences(document: dict[str, Any], path: Path) -> list[str]:
    """``readings.json`` (``path``): its conclusion re-written from its table, its counts against its runs."""
    from sltcheck.jsonfiles import read_json
    from sltcheck.repro.readings_text import conclusion

    found = []
    if document.get("conclusion") != conclusion(document):
        found.append(f"{path}: conclusion: not the conclusion its own table gives (edited by hand?)")
    for index, reading in enumerate(document.get("readings") or []):
        summary_path = path.parent / str(reading.get("run")) / "summary.json"
        if not summary_path.is_file():
            continue
        summary = read_json(summary_path, "sweep summary")
        for field in ("checked", "vacuous", "complete"):
            if reading.get(field) != (bool(summary.get(field)) if field == "complete" else summary.get(field, 0)):
                found.append(f"{path}: readings[{index}].{field}: recorded {reading.get(field)!r}, its run's "
                             f"summary {summary.get(field)!r}")
        if reading.get("violations") != len(summary.get("violations") or []):
            found.append(f"{path}: readings[{index}].violations: recorded {reading.get('violations')!r}, its run's "
                         f"summary {len(summary.get('violations') or [])}")
    return found


def verify(directory: Path, sample: int | None = None, seed: int = 0, progress: bool = False) -> list[str]:
    """Every difference of the sweep in ``directory``: its summary against its rows, then ``sample``
    of its sources (None: all) recomputed and compared with their stored records."""
    from sltcheck.certificates import require_sealed
    from sltcheck.jsonfiles import read_json
    from sltcheck.schema import check_version

    path = directory / "summary.json"
    summary = read_json(path, "sweep summary")
    check_version(summary, f"sweep summary {str(path)!r}")
    found = []
    try:
        require_sealed(summary, "sweep summary", path)
    except StoredResultError as error:
        found.append(str(error))
    found += summary_differences(summary, path)
    return found + source_differences(directory, summary, sample, seed, progress)


def source_differences(directory: Path, summary: dict[str, Any], sample: int | None, seed: int,
                       progress: bool) -> list[str]:
    """``sample`` stored sources (None: all, in key order; else drawn with ``seed``) recomputed."""
    import numpy as np

    from sltcheck.repro import synthetic, targets
    from sltcheck.repro.dataset import angular_velocity
    from sltcheck.schema import json_safe, without_timing

    config = _config(summary)
    stored = dict(stored_rows(directory, str(summary["fingerprint"])))
    keys = sorted(stored)
    if sample is not None and sample < len(keys):
        keys = sorted(np.random.default_rng(seed).choice(keys, size=sample, replace=False).tolist())
    built = synthetic.build_targets(config, progress)
    prepared = {b: targets.apply_norm_policy(t, config.norm_policy) for b, t in built.weights.items()}
    context = synthetic.SourceContext(config, prepared, angular_velocity("test", config.seed, config.test_samples),
                                      built.token)
    where = {key: (blocks, width, index) for key, blocks, width, index in synthetic.units(config)}
    found = []
    for key in keys:
        if key not in where:
            found.append(f"{directory / 'results.sqlite'}: the row {key!r} is not a source of this configuration")
            continue
        again = synthetic.source_records(context, *where[key])
        recorded, derived = without_timing(stored[key]["records"]), without_timing(json_safe(again))
        lines = other_engines(recorded, derived, f"row {key!r}.records")
        found += [f"{directory / 'results.sqlite'}: {line}" for line in
                  lines + differ(recorded, derived, f"row {key!r}.records")]
    return found


def other_engines(recorded: list[Any], derived: list[Any], where: str) -> list[str]:
    """A line for each recorded ``input_space`` bracketed by another engine than this sltcheck's (its brackets
    cannot be recomputed here: not a mismatch, and not verified), whose brackets are then left out of both
    sides (the rest of the record is still compared)."""
    from sltcheck.repro.input_space import ENGINE

    found = []
    for index, (old, new) in enumerate(zip(recorded, derived, strict=False)):
        if not (isinstance(old, dict) and isinstance(old.get("input_space"), dict) and isinstance(new, dict)):
            continue
        engine = old["input_space"].get("engine", 1)
        if engine != ENGINE:
            found.append(f"{where}[{index}].input_space: bracketed by input-space engine {engine!r}, this "
                         f"sltcheck's is {ENGINE}, so it cannot be recomputed here (run the figure again with "
                         "--input-space into a new --out)")
            old.pop("input_space")
            new.pop("input_space", None)
    return found


# --- every reader of a result file ---------------------------------------------------------------------


def verify_input(payload: dict[str, Any], file: Path, what: str = "--in") -> None:
    """The rule every reader of a result file applies (the report, ``repro readme``): sealed, and
    consistent with itself (a findings file), with the rows it derives from (a sweep's summary), or
    with its runs and its own table (readings), Figures 7-8's ``results.json`` with its runs."""
    from sltcheck.certificates import checked, findings_problems, require_sealed

    require_sealed(payload, f"{what} {file.name.removesuffix('.json')}", file)
    if file.name == "results.json":
        from sltcheck.repro.lm_results import results_differences

        checked(results_differences(payload, file), f"{what} results", file)
    if file.name == "findings.json" or "planned" in payload:
        checked(findings_problems(payload), f"{what} findings", file)
    elif file.name == "summary.json":
        checked(summary_differences(payload, file), f"{what} summary", file)
    elif file.name == "readings.json":
        checked(readings_differences(payload, file), f"{what} readings", file)
