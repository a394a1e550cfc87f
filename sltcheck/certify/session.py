"""One ``sltcheck certify`` run as a library: the selected families' branch-and-bound in a run directory.

:func:`run` is what the command (:mod:`sltcheck.cli.certify`, a thin layer over it) and
:func:`sltcheck.certify` call: each family of :func:`sltcheck.certify.select` runs for at most
``budget`` seconds (or ``rounds`` rounds), resuming what ``OUT/boxes.sqlite`` holds, and
``OUT/certified.json`` (every family's verdict) and ``OUT/counterexamples.json`` (a findings file that
``sltcheck check --replay`` reads) are rewritten after each family.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CertifyConfig:
    """What ``sltcheck certify`` runs, as plain values (a bad one is a ``ValueError`` naming the field).

    ``only``: statements; ``family``: families by name (``d1-T2``) or key (``lemma13/d1-T4/as-stated``);
    ``budget``: seconds per family in this run; ``rounds``: stop each family after that many rounds in
    all (a result that does not depend on speed); ``backend``: ``arb``, ``mpmath`` or ``arrays`` (default:
    ``arrays`` for the vectorised families, arb where python-flint is installed for the others;
    :func:`sltcheck.certify.default_backend`); ``tolerance``: the relative gap of the supremum's bracket at which a
    family stops; ``search``, ``climb``: seed a fresh family's lower bound with the worst-case search,
    climb it after each rise; ``seeds``: statement -> instances that seed the lower bounds; ``workers``,
    ``scheduler``, ``cluster``: where the boxes are enclosed (:func:`sltcheck.executors.make_executor`).
    """

    only: tuple[str, ...] = ()
    family: tuple[str, ...] = ()
    budget: float = 60.0
    rounds: int | None = None
    out: str | Path = "runs/certify"
    backend: str | None = None
    tolerance: float = 0.01
    search: bool = True
    climb: bool = True
    seeds: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    workers: int | None = None
    scheduler: str | None = None
    cluster: str | None = None

    def __post_init__(self) -> None:
        for name in ("only", "family"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise ValueError(f"{name}: give a sequence of names, not the string {value!r}")
            object.__setattr__(self, name, tuple(value))
        if not (isinstance(self.budget, int | float) and not isinstance(self.budget, bool) and 0 < self.budget):
            raise ValueError(f"budget: must be a number of seconds > 0, got {self.budget!r}")
        if self.rounds is not None and (isinstance(self.rounds, bool) or not isinstance(self.rounds, int)
                                        or self.rounds < 1):
            raise ValueError(f"rounds: must be an integer >= 1 or None, got {self.rounds!r}")
        if not (isinstance(self.tolerance, int | float) and 0 < self.tolerance < 1):
            raise ValueError(f"tolerance: must be a number in (0, 1), got {self.tolerance!r}")
        if self.backend not in (None, "arb", "mpmath", "arrays"):
            raise ValueError(f"backend: must be 'arb', 'mpmath', 'arrays' or None, got {self.backend!r}")
        if self.cluster not in (None, "local"):
            raise ValueError(f"cluster: must be 'local' or None, got {self.cluster!r}")
        if self.workers is not None and (isinstance(self.workers, bool) or not isinstance(self.workers, int)
                                         or self.workers < 1):
            raise ValueError(f"workers: must be an integer >= 1 or None, got {self.workers!r}")

    def families(self) -> list[Any]:
        """The families the options select (a ``ValueError`` where they select none), each capped one after the
        family that caps it (added where not selected: its certified upper end is what caps the boxes)."""
        from sltcheck.certify import families, select

        chosen = select(list(self.only) or None, list(self.family) or None)
        if not chosen:
            raise ValueError(f"family: {' '.join(self.family)} selects no family of only {' '.join(self.only)}")
        ordered: dict[str, Any] = {}
        for family in chosen:
            for one in ((families()[family.capped_by],) if family.capped_by else ()) + (family,):
                ordered.setdefault(one.key, one)
        return list(ordered.values())


def run(config: CertifyConfig, report: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run (or resume) every family ``config`` selects; return what ``OUT/certified.json`` then holds
    (this run's families and those an earlier run in the same directory finished), with ``this_run``
    (the keys of this run's families) and ``enclosed`` (where the boxes were enclosed). ``report``, if
    given, gets one line per progress step."""
    from sltcheck.certify import default_backend
    from sltcheck.certify.run import certify_family
    from sltcheck.certify.store import Store
    from sltcheck.executors import InProcessExecutor, make_executor
    from sltcheck.numerics.balls import backend
    from sltcheck.rundir import DirectoryLock, ensure_writable_directory

    chosen = config.families()
    names = {family.key: default_backend(family, config.backend) for family in chosen}  # refused before any work
    arith = backend(None if config.backend == "arrays" else config.backend)  # the points' (and the file's default)
    entries: list[dict[str, Any]] = []
    with make_executor(config.workers, config.scheduler, config.cluster) as executor:
        executor.connect()  # an unreachable scheduler is refused before anything is written
        where = "in one process" if isinstance(executor, InProcessExecutor) else f"on {executor.description}"
        if not isinstance(executor, InProcessExecutor) and report:
            report(f"boxes are enclosed on {executor.description}")
        out = ensure_writable_directory(config.out)
        with DirectoryLock(out, "certify"):
            store = Store(out / "boxes.sqlite")
            try:
                earlier = earlier_families(out, store)  # checked before any work
                for family in chosen:
                    entry = certify_family(family, store, backend_name=names[family.key], budget=config.budget,
                                           seeds=config.seeds.get(family.statement, []),
                                           tolerance=config.tolerance, executor=executor, report=report,
                                           rounds=config.rounds, search=config.search, climb=config.climb)
                    entry["rests_on_store"] = store.provenance(family.key)
                    if entry["rests_on_store"] and report:
                        resumed = entry["rests_on_store"]
                        report(f"{family.key}: resumed at round {resumed['resumed_at_round']} from {resumed['file']} "
                               f"(verified: {resumed['verified']}); the certificate rests on that file")
                    entries.append(entry)
                    _write(out, earlier, entries, arith.name)
            finally:
                store.close()
            data = _write(out, earlier, entries, arith.name)
    data["this_run"] = [entry["key"] for entry in entries]  # (returned, not written: certified.json is as before)
    data["enclosed"] = where
    return data


def write_json(path: Path, data: Any) -> None:
    """Strict JSON (no NaN), written atomically (a temporary file renamed over the target)."""
    from sltcheck.jsonfiles import write_json_atomic

    write_json_atomic(path, data)


def replay_file(counterexamples: list[dict[str, Any]]) -> dict[str, Any]:
    """The counterexamples as a findings.json (``FindingsFile``) that ``sltcheck check --replay`` reads:
    a variant's under ``findings``, a mutant's (a known-false bound) under ``mutants``."""
    from sltcheck.records import FindingRecord, FindingsFile, MutantRecord
    from sltcheck.registry import load
    from sltcheck.schema import SCHEMA_VERSION

    def is_variant(c: dict[str, Any]) -> bool:
        return c["variant"] in load(c["statement"]).VARIANTS

    findings: list[FindingRecord] = [
        {"statement": c["statement"], "variant": c["variant"], "default": False, "examples": 0,
         "worst_ratio": c["certified_ratio"][0], "violated": True, "violations": 1, "undecided": 0,
         "verdict": None, "instance": c["instance"], "seed": None, "examples_per_second": None, "seconds": 0.0,
         "failure": f"certified counterexample of the family {c['family']} (sltcheck certify)",
         "search": None, "ratios": [], "filtered": 0, "certified": True, "certified_outcome": "violated",
         "interval": {"certified_ratio": c["certified_ratio"]}}
        for c in counterexamples if is_variant(c)]
    mutants: list[MutantRecord] = [
        {"statement": c["statement"], "mutant": c["variant"], "why": f"family {c['family']} (sltcheck certify)",
         "refuted": True, "ratio": c["certified_ratio"][0], "counterexample": c["instance"],
         "message": f"counterexample of the family {c['family']}, decided by {c.get('decided_by', 'interval')}",
         "seconds": 0.0, "interval": {"certified_ratio": c["certified_ratio"]}}
        for c in counterexamples if not is_variant(c)]
    data: FindingsFile = {
        "schema_version": SCHEMA_VERSION, "profile": "certify", "seed": 0,
        "run": {"profile": "certify", "seed": 0, "only": sorted({c["statement"] for c in counterexamples}),
                "no_search": True, "no_mutants": not mutants, "power": False},
        "fingerprint": "", "complete": True, "planned": [], "done": [], "findings": findings, "mutants": mutants,
        "slack": [], "power": []}
    return dict(data)


def earlier_families(out: Path, store: Any) -> dict[str, dict[str, Any]]:
    """The families ``OUT/certified.json`` holds from earlier runs, each checked where it is read: the
    file sealed, and each entry derived again from its family's definition and the state ``boxes.sqlite``
    verifies for it (:func:`rederived`: its verdict, bracket and counts are what that state gives)."""
    from sltcheck.errors import StoredResultError
    from sltcheck.jsonfiles import checked, read_json, require_sealed

    path = out / "certified.json"
    if not path.is_file():
        return {}
    earlier = read_json(path, "certified results")
    families = earlier.get("families") if isinstance(earlier, dict) else None
    if not isinstance(families, list) or not all(isinstance(e, dict) and "key" in e for e in families):
        raise StoredResultError(f"certified results {str(path)!r} are not what sltcheck certify writes (no "
                                "list of families with keys); move the file away to rewrite it from this run")
    require_sealed(earlier, "certified results", path)
    kept, problems = {}, []
    for entry in families:
        kept[entry["key"]], differ = rederived(entry, store)
        problems += differ
    checked(problems, "certified results", path)
    return kept


# The fields of a family's entry that its stored state determines (the best point's certified ratio is
# left out: it is enclosed again on whatever backend this machine has).
DERIVED = ("verdict", "finished", "sup_lower", "sup_upper", "proven_fraction", "proved_by_argument", "open_boxes",
           "boxes", "rounds", "seconds", "backend", "tolerance", "best_source", "seeds", "counterexample", "progress",
           "statement", "family", "variant", "dimensions", "arguments", "capped_by", "expected", "known_supremum")


def rederived(entry: dict[str, Any], store: Any) -> tuple[dict[str, Any], list[str]]:
    """A family's entry of certified.json against the entry derived again from its stored state: the
    entry and what differs; where the store went on after the entry was written (a later run of the
    family interrupted before it wrote its entry), the entry derived from the store, which is verified."""
    from sltcheck.certify import families
    from sltcheck.certify.run import summary

    family = families().get(entry["key"])
    found = store.recorded(entry["key"]) if family is not None else None
    if family is None or found is None:
        return entry, [f"families {entry['key']}: not in the box store {str(store.path)!r} it was proved in "
                       "(the store moved, or the entry was written by hand)"]
    config, state, opened = found
    again = summary(family, state, opened, config.get("backend"), config.get("tolerance"))
    unproved = _unproved_cap(family, state, store)
    if unproved:
        return entry, [f"families {entry['key']}: {unproved}"]
    if isinstance(entry.get("rounds"), int) and state.rounds > entry["rounds"]:
        return {**again, "rests_on_store": {"file": str(store.path), "resumed_at_round": state.rounds,
                                            "boxes_before": state.evaluated,
                                            "verified": "the digest chained per round and the volume"}}, []
    differ = [field for field in DERIVED if not _same(entry.get(field), again[field])]
    best, best_again = entry.get("best") or {}, again["best"] or {}
    differ += [f"best.{field}" for field in ("point", "choice", "instance") if best.get(field) != best_again.get(field)]
    return entry, [f"families {entry['key']}: {', '.join(differ)} differ from what its stored state in "
                   f"{str(store.path)!r} gives (verdict recorded {entry.get('verdict')!r}, derived "
                   f"{again['verdict']!r})"] if differ else []


def _unproved_cap(family: Any, state: Any, store: Any) -> str | None:
    """Why the cap a capped family's boxes took is not what the store proves (None where it is, or no cap was
    taken): every cap taken must be at least the capping family's upper end as its verified rows give it."""
    from sltcheck.certify.run import capping

    if state.cap is None:
        return None
    if family.capped_by is None:
        return f"its boxes took the cap {state.cap!r}, but the family has no capping family"
    proved = capping(family, store)
    if proved is None or proved > state.cap:
        return (f"its boxes took the cap {state.cap!r} from {family.capped_by}, but the box store "
                f"{str(store.path)!r} proves {'no cap' if proved is None else f'only {proved!r}'} for it")
    return None


def _same(recorded: Any, derived: Any) -> bool:
    """Equal, floats to 1e-9 relative (a sum of box volumes taken in the store's order, not the heap's)."""
    import math

    if isinstance(derived, float) and isinstance(recorded, int | float) and not isinstance(recorded, bool):
        return math.isclose(recorded, derived, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(derived, dict):
        return isinstance(recorded, dict) and recorded.keys() == derived.keys() and all(
            _same(recorded[k], v) for k, v in derived.items())
    if isinstance(derived, list | tuple):
        return isinstance(recorded, list | tuple) and len(recorded) == len(derived) and all(
            _same(r, d) for r, d in zip(recorded, derived, strict=True))
    return bool(recorded == derived)


def _write(out: Path, earlier: dict[str, dict[str, Any]], entries: list[dict[str, Any]],
           backend_name: str) -> dict[str, Any]:
    """certified.json (sealed) and counterexamples.json of the run directory: this run's families, and
    those an earlier run in the same directory finished (``earlier``: kept, never overwritten by
    another family's run)."""
    from sltcheck.jsonfiles import seal
    from sltcheck.schema import SCHEMA_VERSION

    merged = dict(earlier)
    merged.update({e["key"]: e for e in entries})
    families = list(merged.values())
    counterexamples = [e["counterexample"] for e in families if e["counterexample"]]
    data = {"schema_version": SCHEMA_VERSION, "backend": backend_name, "families": families,
            "counterexamples": len(counterexamples)}
    write_json(out / "certified.json", seal(data))
    write_json(out / "counterexamples.json", seal(replay_file(counterexamples)))
    return data
