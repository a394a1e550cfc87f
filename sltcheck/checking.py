"""The check of every statement: its properties, the worst-case search and the mutants, as a library.

:func:`run` is what ``sltcheck check`` (:mod:`sltcheck.cli.check`, a thin layer over it) and
:func:`sltcheck.api.check` run: for each statement and variant the Hypothesis property at the profile's
budget, the worst-case search of :mod:`sltcheck.harness.search`, the mutants' refutations, the
search-power table, the theorems' worst instance in their regime (:mod:`sltcheck.regime`) and the
probability halves, each a *unit* stored in ``OUT/findings.json`` the
moment it finishes (an interrupted run resumes; a finished one is left as it is). ``workers > 1``
runs the units in that many processes; each unit is seeded on its own, so the findings are those
of one worker (a test compares them).

The properties run programmatically (not through pytest) with an explicit Hypothesis seed, so the
same seed gives the same findings. For every statement and variant, ``findings.json`` holds a
:class:`~sltcheck.records.FindingRecord` (statement, variant, default, examples, worst_ratio,
violated, violations, undecided, attained (examples whose sides are equal, proved in exact
arithmetic: held, not undecided), filtered, the worst instance as exact JSON with floats as
``float.hex``, seed, examples_per_second, and the search: its ratio, evaluations, seconds, shape and,
for a violation, the replay at twice the digits and the interval outcome); and, per statement, the
mutants refuted with their counterexamples (:class:`~sltcheck.records.MutantRecord`); once the run is
complete, ``repaired_constants`` (:mod:`sltcheck.repaired`: per false or loose variant, the smallest
constant c with measured <= c x bound, its lower end certified on the run's worst instance).
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sltcheck import findings
from sltcheck.schema import SCHEMA_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable

    from sltcheck.harness.runner import Record
    from sltcheck.records import CheckRun, FindingRecord, FindingsFile, MutantRecord, SearchRecord, VerdictRecord
    from sltcheck.statement_types import Instance

LOG = logging.getLogger("sltcheck")
MAX_SEED = 2**32 - 1


@dataclass(frozen=True)
class CheckConfig:
    """What ``sltcheck check`` runs, as plain values (each checked: a bad one is a ``ValueError``
    naming the field, the value and what is allowed).

    ``profile``: ``ci``, ``ci-random`` (ci at a seed drawn at random unless ``seed`` is given, recorded
    as ``ci`` with that seed), ``dev`` or ``deep``; ``only``: statement folders (default every one);
    ``seed``: the Hypothesis and search seed (default 0); ``search``, ``mutants``: the worst-case
    search and the mutant refutations; ``power``: the search-power table (default: on except at
    ``ci``); ``probability``: the probability halves (default: on unless ``only``); ``workers``:
    processes for the units; ``out``: the run directory (``OUT/findings.json``).
    """

    profile: str = "ci"
    only: tuple[str, ...] = ()
    seed: int | None = None
    search: bool = True
    mutants: bool = True
    power: bool | None = None
    probability: bool | None = None
    workers: int = 1
    out: str | Path = "findings"

    def __post_init__(self) -> None:
        from sltcheck.harness.profiles import PROFILES
        from sltcheck.registry import STATEMENT_MODULES

        if self.profile not in PROFILES:
            raise ValueError(f"profile: {self.profile!r} is not one of {', '.join(PROFILES)}")
        if isinstance(self.only, str):
            raise ValueError(f"only: give a sequence of statement names, not the string {self.only!r}")
        object.__setattr__(self, "only", tuple(self.only))
        unknown = [name for name in self.only if name not in STATEMENT_MODULES]
        if unknown:
            raise ValueError(f"only: {unknown[0]!r} is not a statement; allowed: {', '.join(STATEMENT_MODULES)}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)
                                      or not 0 <= self.seed <= MAX_SEED):
            raise ValueError(f"seed: must be an integer from 0 to {MAX_SEED}, got {self.seed!r}")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"workers: must be an integer >= 1, got {self.workers!r}")
        for name in ("search", "mutants", "power", "probability"):
            value, optional = getattr(self, name), name in ("power", "probability")
            if not isinstance(value, bool) and not (value is None and optional):
                raise ValueError(f"{name}: must be true or false{' (or None: the default)' if optional else ''}, "
                                 f"got {value!r}")
        if isinstance(self.out, bool) or not isinstance(self.out, str | Path) or not str(self.out):
            raise ValueError(f"out: must name a directory (a str or pathlib.Path), got {self.out!r}")


@dataclass(frozen=True)
class Settings:
    """A :class:`CheckConfig` resolved for one run: the profile and seed it records, and how it reports."""

    profile: str
    seed: int
    names: tuple[str, ...]
    no_search: bool
    no_mutants: bool
    workers: int = 1
    verbosity: int = -1  # -1: warnings only (no bars); 0: results and a bar per statement; 1: every step


def statement_names(only: tuple[str, ...] | list[str] | None) -> list[str]:
    """``only``'s names (each valid), each once, in the paper's order (``only=(a, b)`` and ``(b, a)``
    are one configuration: one run directory, one fingerprint)."""
    from sltcheck.registry import STATEMENT_MODULES

    given = set(only or STATEMENT_MODULES)
    return [name for name in STATEMENT_MODULES if name in given]


def resolve(config: CheckConfig, verbosity: int = -1) -> Settings:
    """``ci-random``: the ci budget with a seed drawn at random (unless ``seed``), logged and recorded
    as ``ci`` with that seed (which replays it); otherwise the seed defaults to 0."""
    profile, seed = config.profile, config.seed
    if profile == "ci-random":
        if seed is None:
            import secrets

            seed = secrets.randbelow(MAX_SEED + 1)
            LOG.info("ci-random: seed %s drawn at random; the run is recorded as --profile ci --seed %s "
                     "(rerun that to resume or repeat it)", seed, seed)
        profile = "ci"
    elif seed is None:
        seed = 0
    return Settings(profile, seed, tuple(statement_names(config.only)), not config.search, not config.mutants,
                    config.workers, verbosity)


def planned(names: list[str], run_config: CheckRun) -> list[str]:
    """The run's units of work in order: ``statement/variant``, ``statement/mutants``, ``power``, ``regime``,
    ``probability`` (:func:`sltcheck.certificates.planned_units`, the list a replay holds the file to)."""
    from sltcheck.certificates import planned_units

    return planned_units({**run_config, "only": list(names)})


def run(config: CheckConfig, verbosity: int = -1) -> FindingsFile:
    """Run (or resume) the check ``config`` describes in its run directory and return the findings
    it holds (``OUT/findings.json``, written after every unit); ``verbosity`` as the command's
    ``-q``/``-v`` (-1: warnings only, the default here; 0: results and a bar per statement)."""
    from tqdm.contrib.logging import logging_redirect_tqdm

    from sltcheck.harness.profiles import profile_settings
    from sltcheck.harness.runner import RECORDER
    from sltcheck.jsonfiles import fingerprint
    from sltcheck.rundir import DirectoryLock, ensure_writable_directory

    run = resolve(config, verbosity)
    names = list(run.names)
    run_config: CheckRun = {
        "profile": run.profile, "seed": run.seed, "only": names if config.only else [],
        "no_search": run.no_search, "no_mutants": run.no_mutants,
        "power": bool(config.power or (config.power is None and run.profile != "ci")),
        "probability": bool(config.probability or (config.probability is None and not config.only)),
    }
    out = ensure_writable_directory(config.out)
    with DirectoryLock(out, "check"):
        previous = findings.resume(out, run_config)
        units = planned(names, run_config)
        state: FindingsFile = previous or {
            "schema_version": SCHEMA_VERSION, "profile": run.profile, "seed": run.seed, "run": run_config,
            "fingerprint": fingerprint(dict(run_config)), "complete": False, "planned": units, "done": [],
            "findings": [], "mutants": [], "slack": [], "power": [],
        }
        if previous is not None:
            todo = [unit for unit in units if unit not in previous["done"]]  # a complete run may lack a newer unit
            LOG.info("%s", f"resuming {out / 'findings.json'}: {len(units) - len(todo)} of {len(units)} units done"
                     if todo else f"{out / 'findings.json'} is complete; nothing to do")
        settings = profile_settings(run.profile, seeded=True)
        RECORDER.clear()
        RECORDER.seed = run.seed
        slack_names = tuple(names) if config.only else None
        if run.workers > 1:
            _run_in_processes(run, state, lambda unit: findings.save(out, state, unit, slack_names))
        with logging_redirect_tqdm(loggers=[LOG]):  # log lines go above the bars, not through them
            for name in names:
                _check_statement(name, run, settings, state, units, lambda unit: findings.save(out, state, unit,
                                                                                          slack_names))
        if "power" in units and "power" not in state["done"]:
            from sltcheck.harness import power as search_power

            LOG.info("search power: the search against every known supremum ...")
            state["power"] = search_power.table(run.profile, run.seed, tuple(names))
            findings.save(out, state, "power", slack_names)
        if "regime" in units and "regime" not in state["done"]:
            from sltcheck import regime

            LOG.info("the theorems' worst instance in their regime (T >= 2, eps* < 1) ...")
            state["regime"] = regime.table(run.profile, run.seed, tuple(names))
            findings.save(out, state, "regime", slack_names)
        if "probability" in units and "probability" not in state["done"]:
            from sltcheck.pruning import allocation, probability

            LOG.info("probability statements: the proofs' allocation of eps, frequencies at the prescribed widths ...")
            state["probability"] = {"allocation": allocation.check_all(),
                                    **probability.run("full" if run.profile == "deep" else "ci", run.seed)}
            findings.save(out, state, "probability", slack_names)
        if not state["complete"]:
            findings.save(out, state, None, slack_names)
    return state


def log_summary(state: FindingsFile, out: Path) -> None:
    """The tables ``sltcheck check`` prints at the end: search power, the probability halves, the findings."""
    if state["power"]:
        from sltcheck.harness import power as search_power

        LOG.info("%s\n", search_power.format_table(state["power"]))
    if state.get("probability"):
        from sltcheck.pruning import allocation, probability

        LOG.info("%s\n", allocation.format_table(state["probability"]["allocation"]))
        LOG.info("%s\n", probability.format_tables(state["probability"]))
    LOG.info("%s", findings.table(state["findings"], state["mutants"]))
    LOG.info("\nwrote %s", out / "findings.json")


def _run_unit(run: Settings, unit: str) -> Any:
    """One unit of the run in a worker process, as the in-process path computes it: a variant's
    finding, a statement's mutant rows, the power table or the probability halves."""
    from sltcheck.console import configure
    from sltcheck.harness.profiles import profile_settings
    from sltcheck.harness.runner import RECORDER
    from sltcheck.registry import load

    configure(-1)  # the driver logs each result as it arrives
    RECORDER.seed = run.seed
    if unit == "power":
        from sltcheck.harness import power as search_power

        return search_power.table(run.profile, run.seed, run.names)
    if unit == "regime":
        from sltcheck import regime

        return regime.table(run.profile, run.seed, run.names)
    if unit == "probability":
        from sltcheck.pruning import allocation, probability

        return {"allocation": allocation.check_all(),
                **probability.run("full" if run.profile == "deep" else "ci", run.seed)}
    name, part = unit.split("/", 1)
    module = load(name)
    if part == "mutants":
        return [_refute(name, mutant, run) for mutant in module.MUTANTS]
    return check_variant(name, part, module.DEFAULT_VARIANT, profile_settings(run.profile, seeded=True), run)


def _longest_first(units: list[str]) -> list[str]:
    """The order units are handed to the processes: the probability grid and the power table
    (single long units), then the statements from the last (the theorems' searches are the
    longest), so no process idles at the end. The findings are stored in the planned order."""
    whole = [unit for unit in ("probability", "power", "regime") if unit in units]
    return whole + [unit for unit in reversed(units) if unit not in whole]


def _run_in_processes(run: Settings, state: FindingsFile, finish: Callable[[str], None]) -> None:
    """Every unfinished unit in ``workers`` spawned processes; each result is stored (and
    findings.json written) the moment it arrives, so an interrupted run loses no finished unit."""
    from tqdm import tqdm

    from sltcheck.executors import ProcessExecutor

    pending = [unit for unit in state["planned"] if unit not in state["done"]]
    tasks = [(unit, (unit,)) for unit in _longest_first(pending)]
    bar = tqdm(total=len(tasks), desc="units", unit=" unit", file=sys.stderr,
               disable=run.verbosity < 0, dynamic_ncols=True)
    with ProcessExecutor(run.workers) as executor:
        for unit, result in executor.map_unordered(_run_unit, run, tasks):
            if unit in ("power", "probability", "regime"):
                state[unit] = result  # type: ignore[literal-required]
            elif unit.endswith("/mutants"):
                state["mutants"] += result
                for row in result:
                    _log_mutant(row)
            else:
                state["findings"].append(result)
                _log_variant(result)
            finish(unit)
            bar.set_postfix_str(unit, refresh=False)
            bar.update(1)
    bar.close()


def status(state: FindingsFile) -> int:
    """1 when a result needs attention (a violated variant, a mutant that survived), with a warning
    naming each; 0 otherwise (as ``--replay`` decides for the same findings)."""
    attention = [f"{f['statement']} [{f['variant']}] violated" for f in state["findings"] if f["violated"]]
    attention += [f"mutant {m['statement']}:{m['mutant']} survived" for m in state["mutants"] if not m["refuted"]]
    if attention:
        LOG.warning("needs attention (exit status 1): %s", "; ".join(attention))
        return 1
    return 0


def _check_statement(
    name: str, run: Settings, settings: object, state: FindingsFile, units: list[str],
    finish: Callable[[str], None],
) -> None:
    """One statement's unfinished variants and mutants under one progress bar; findings.json after every unit."""
    from sltcheck.console import StatementProgress
    from sltcheck.harness.budget import planned_evaluations
    from sltcheck.harness.profiles import PROFILES
    from sltcheck.harness.runner import RECORDER
    from sltcheck.registry import load

    module = load(name)
    variants = [v for v in module.VARIANTS if f"{name}/{v}" not in state["done"]]
    mutant_unit = f"{name}/mutants"
    mutants = module.MUTANTS if mutant_unit in units and mutant_unit not in state["done"] else ()
    if not variants and not mutants:
        return
    examples = PROFILES[run.profile]
    search = {v: 0 if run.no_search else planned_evaluations(name, run.profile, v) for v in variants}
    progress = StatementProgress(name, [examples + search[v] for v in variants] + [examples] * len(mutants),
                                 enabled=run.verbosity >= 0)
    RECORDER.on_example = progress.tick
    try:
        for variant in variants:
            progress.task(variant, examples + search[variant])
            state["findings"].append(check_variant(name, variant, module.DEFAULT_VARIANT, settings, run,
                                                   progress.tick))
            finish(f"{name}/{variant}")
            _log_variant(state["findings"][-1])
        rows = []
        for mutant in mutants:
            progress.task(f"mutant {mutant.name}", examples)
            rows.append(_refute(name, mutant, run))
            _log_mutant(rows[-1])
        if mutants:
            state["mutants"] += rows
            finish(mutant_unit)
    finally:
        RECORDER.on_example = None
        progress.close()


def _refute(name: str, mutant: Any, run: Settings) -> MutantRecord:
    from sltcheck.harness.mutants import refute
    from sltcheck.harness.profiles import profile_settings
    from sltcheck.harness.serialise import encode_instance

    start = time.perf_counter()
    result = refute(name, mutant, settings=profile_settings(run.profile), profile=run.profile)
    row: MutantRecord = {
        "statement": name,
        "mutant": mutant.name,
        "why": mutant.why,
        "refuted": result.refuted,
        "ratio": result.verdict.ratio if result.verdict else None,
        "counterexample": encode_instance(result.instance) if result.instance else None,
        "raw_counterexample": encode_instance(result.raw_instance) if result.raw_instance else None,
        "raw_ratio": result.raw_verdict.ratio if result.raw_verdict else None,
        "simplification": result.simplification,
        "message": result.message,
        "seconds": round(time.perf_counter() - start, 3),
    }
    if result.refuted and result.instance is not None:
        _certify_counterexample(row, name, mutant, result.instance)
    return row


def _certify_counterexample(row: MutantRecord, name: str, mutant: Any, instance: Instance) -> None:
    """The counterexample's verdict in interval arithmetic, where the mutant's bound is enclosed
    (its own, or the variant's whose bound it keeps while dropping an assumption)."""
    from sltcheck.harness import interval_verdict as certified
    from sltcheck.registry import load

    enclosed = certified.supported().get(name, ())
    bound = mutant.name if mutant.name in enclosed else next(
        (v for v, f in load(name).VARIANTS.items() if f is mutant.bound and v in enclosed), None)
    if bound is None:
        return
    result = certified.evaluate(name, instance, bound)
    row["certified_outcome"] = str(result["outcome"])
    row["certified_backend"] = str(result["backend"])


def _log_variant(entry: FindingRecord) -> None:
    shown = findings.shown(entry["worst_ratio"])
    if entry["violated"]:
        LOG.warning("%s [%s] VIOLATED: worst measured/bound %s", entry["statement"], entry["variant"], shown)
    search: dict[str, Any] = dict(entry["search"] or {})
    LOG.debug("%s [%s]: %s examples, worst ratio %s, %s search evaluations, %ss", entry["statement"],
              entry["variant"], entry["examples"], shown, search.get("evaluations", 0), entry["seconds"])


def _log_mutant(row: MutantRecord) -> None:
    if not row["refuted"]:
        LOG.warning("mutant %s:%s SURVIVED (%s)", row["statement"], row["mutant"], row["message"])
    LOG.debug("mutant %s:%s refuted in %ss: %s", row["statement"], row["mutant"], row["seconds"], row["message"])


def check_variant(
    name: str, variant: str, default: str, settings: object, run: Settings,
    progress: Callable[[], None] | None = None,
) -> FindingRecord:
    """One variant: its property at the profile's budget, then the worst-case search; the worst
    instance certified in interval arithmetic where :mod:`sltcheck.harness.interval_verdict` covers it."""
    from hypothesis import seed as hypothesis_seed

    from sltcheck.harness.runner import RECORDER, property_test
    from sltcheck.harness.search import search_worst_case

    record = RECORDER.record(name, variant)
    test = property_test(name, variant, settings=settings)  # type: ignore[arg-type]
    test = hypothesis_seed(run.seed)(test)
    start = time.perf_counter()
    failure = ""
    try:
        test()
    except AssertionError as error:
        failure = str(error).splitlines()[0]
    wall = time.perf_counter() - start
    search: SearchRecord | None = None
    if not run.no_search:
        result = search_worst_case(name, variant, profile=run.profile, seed=run.seed, progress=progress)
        search = {
            "ratio": result.ratio,
            "violated": result.verdict.violated,
            "shape": result.shape,
            "starts": result.starts,
            "evaluations": result.evaluations,
            "seconds": round(result.seconds, 3),
            "replay": result.replay.as_dict() if result.replay else None,
            "certified": result.certified,
            "gradients": result.gradients,
        }
        found = (result.verdict.violated, result.ratio)
        if found > (bool(record.violations), record.worst_ratio):
            record.worst_ratio, record.worst_instance = result.ratio, result.instance
            record.worst_verdict = result.verdict
        record.violations += int(result.verdict.violated)
    entry = entry_of(record, default, wall, failure, search)
    _certify(entry, name, variant, record.worst_instance)
    return entry


def _certify(entry: FindingRecord, name: str, variant: str, instance: Instance | None) -> None:
    """Add the worst instance's verdict in interval arithmetic, where sltcheck.harness.interval_verdict covers it."""
    from sltcheck.harness import interval_verdict as certified

    if instance is None or variant not in certified.supported().get(name, ()):
        return
    result = certified.as_dict(certified.evaluate(name, instance, variant))
    entry["certified"] = bool(result["certified"])
    entry["certified_outcome"] = str(result["outcome"])
    entry["certified_backend"] = str(result["backend"])  # arb (python-flint) or mpmath (mpmath.iv)
    entry["interval"] = result


def entry_of(
    record: Record, default: str, wall: float, failure: str, search: SearchRecord | None
) -> FindingRecord:
    from sltcheck.harness.serialise import encode_instance

    verdict = record.worst_verdict
    return {
        "statement": record.statement,
        "variant": record.variant,
        "default": record.variant == default,
        "examples": record.examples,
        # None when nothing was measured: neither an example nor the search decided an instance.
        "worst_ratio": record.worst_ratio if record.worst_verdict is not None else None,
        "violated": bool(record.violations),
        "violations": record.violations,
        "undecided": record.undecided,
        "attained": record.attained,
        "filtered": record.filtered,
        "verdict": cast("VerdictRecord", verdict.as_dict()) if verdict else None,
        "instance": encode_instance(record.worst_instance) if record.worst_instance else None,
        "seed": record.seed,
        "examples_per_second": round(record.examples / wall, 2) if wall > 0 else None,
        "seconds": round(wall, 3),
        "failure": failure,
        "search": search,
        "ratios": [round(r, 6) for r in record.ratios],
    }
