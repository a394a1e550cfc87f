"""``sltcheck certify``: prove "held" (or a counterexample) over whole families of instances.

    sltcheck certify [--only NAME ...] [--family NAME ...] [--budget SECONDS] [--rounds N] [--out DIR]
                     [--backend arb|mpmath|arrays] [--tolerance T] [--workers N] [--cluster local | --scheduler ADDR]
                     [--findings FILE] [--seeds FILE] [--no-search] [--no-climb] [--list]

Runs the interval branch-and-bound (:mod:`sltcheck.certify`) on each selected family for at most
``--budget`` seconds (each), resuming what ``DIR/boxes.sqlite`` holds; writes ``DIR/certified.json``
(every family's verdict, bracket of the supremum, proven volume, boxes/s, progress over time) and
``DIR/counterexamples.json`` (replay with ``sltcheck check --replay``). ``--findings FILE`` adds the
results to a findings.json of ``sltcheck check`` under the key ``certified_over_family``.

A fresh family seeds its lower bound itself: the worst-case search restricted to the family's shape
(where the family says how), then a local climb after every rise of the lower bound; every seed's
source is recorded (``seeds``, ``best_source``, and a counterexample's ``found_by``). Boxes a family's
arguments proved (where its bound is attained, :mod:`sltcheck.certify.arguments`) are recorded per
argument (``proved_by_argument``: the share of the volume).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

KEY = "certified_over_family"


def register(cli: Any) -> None:
    cli.command("certify", "prove held (or a counterexample) over whole families of instances (branch-and-bound)",
                run, arguments=_arguments, validate=validate)


MAX_BUDGET = 10**7  # seconds per family (~4 months)
MAX_ROUNDS = 10**9


def _arguments(parser: argparse.ArgumentParser) -> None:
    from sltcheck.certify import families
    from sltcheck.cli.options import INPUT_FILE, OUT_DIRECTORY, SCHEDULER, WORKERS, Choice, Integer, Number, readme

    known = list(families().values())
    parser.add_argument("--only", nargs="+", metavar="NAME", type=Choice(dict.fromkeys(f.statement for f in known)),
                        help="statements (default: every one with a family)")
    parser.add_argument("--family", nargs="+", metavar="NAME",
                        type=Choice(dict.fromkeys([f.name for f in known] + [f.key for f in known]),
                                    "a family's name or key (sltcheck certify --list shows them)"),
                        help="families by name (d1-T2) or key (lemma13/d1-T4/as-stated)")
    parser.add_argument("--budget", type=Number(0, MAX_BUDGET, low_open=True), default=60.0, metavar="SECONDS",
                        help="seconds per family in this run (default 60; a resumed run continues)")
    parser.add_argument("--rounds", type=Integer(1, MAX_ROUNDS), default=None, metavar="N",
                        help="stop each family after N rounds in all (a result that does not depend on speed)")
    parser.add_argument("--out", type=OUT_DIRECTORY, default="runs/certify",
                        help="run directory (resumed if it exists)")
    parser.add_argument("--backend", choices=("arb", "mpmath", "arrays"), default=None,
                        help="enclosures: arb (python-flint, sltcheck[certify]), mpmath.iv, or arrays (numpy "
                             "intervals, thousands of boxes at once; vectorised families only) (default: "
                             "arrays for the vectorised families, else arb if installed)")
    parser.add_argument("--tolerance", type=Number(0, 1, low_open=True, high_open=True), default=0.01,
                        help="relative gap of the supremum's bracket at which a family stops (default 0.01)")
    parser.add_argument("--findings", metavar="FILE", type=INPUT_FILE,
                        help="add the results to this findings.json (refused while its check runs)")
    parser.add_argument("--seeds", metavar="FILE", type=INPUT_FILE,
                        help="a findings.json of sltcheck check: its worst instances seed the lower bounds")
    parser.add_argument("--no-search", action="store_true",
                        help="do not seed a fresh family with the worst-case search restricted to it")
    parser.add_argument("--no-climb", action="store_true",
                        help="no local climb of the lower bound after each rise of it")
    parser.add_argument("--readme", metavar="FILE", type=readme(README_START, README_END),
                        help="rewrite the generated section of this file (between its certify markers; "
                             "docs/results/certify.md) with "
                             "the table of this run's families")
    parser.add_argument("--list", action="store_true", help="list the families and exit")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    where = parser.add_argument_group("where the boxes are enclosed")
    where.add_argument("--workers", type=WORKERS, default=None, metavar="N",
                       help="local processes (default 1: in this process); with --cluster local, Dask workers")
    scheduler = where.add_mutually_exclusive_group()
    scheduler.add_argument("--scheduler", type=SCHEDULER, default=None, metavar="ADDRESS",
                           help="a running Dask scheduler")
    scheduler.add_argument("--cluster", choices=("local",), default=None, help="start a Dask LocalCluster")


def validate(args: argparse.Namespace) -> None:
    """What needs several options, or the machine, before any box is enclosed or file written: the
    families the options select, the enclosures' backend, the findings file (readable, not changed by
    hand, its check not running) and the seeds."""
    from sltcheck.certify import default_backend, select
    from sltcheck.errors import UsageError
    from sltcheck.numerics.balls import backend

    try:
        args.chosen = select(args.only, args.family)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if not args.chosen:
        raise UsageError(f"--family {' '.join(args.family or [])} selects no family of --only "
                         f"{' '.join(args.only or [])}")
    try:
        args.arith = backend(args.backend)
        for family in args.chosen:
            default_backend(family, args.backend)  # arrays only for the vectorised families
    except ValueError as error:
        raise UsageError(f"--backend: {error}") from None
    if args.findings and not args.list:
        _findings_file(Path(args.findings))
    args.seed_instances = search_seeds(Path(args.seeds)) if args.seeds and not args.list else {}


def _findings_file(path: Path) -> dict[str, Any]:
    """The findings.json that --findings names, read while holding its directory's lock (its check's):
    refused while that check runs."""
    from sltcheck.errors import RunInUseError
    from sltcheck.rundir import DirectoryLock

    try:
        with DirectoryLock(path.parent):
            return _findings_file_locked(path)
    except RunInUseError as error:
        raise RunInUseError(f"--findings {str(path)!r}: the check that writes it is still running ({error}); add the "
                            "results when it has finished") from None


def add_to_findings(path: Path, entries: list[dict[str, Any]], backend_name: str, out: Path) -> None:
    """Merge this run's families into ``path`` under KEY, holding the lock of its check's directory, so
    neither a running check nor another certify can drop what the other finished (families finished
    earlier and kept under KEY stay, unless this run has them again)."""
    from sltcheck.errors import RunInUseError
    from sltcheck.jsonfiles import seal, write_json_atomic
    from sltcheck.rundir import DirectoryLock
    from sltcheck.schema import SCHEMA_VERSION, json_safe

    try:
        with DirectoryLock(path.parent):
            data = _findings_file_locked(path)
            earlier = {e["key"]: e for e in (data.get(KEY) or {}).get("families", []) if isinstance(e, dict)}
            earlier.update({e["key"]: e for e in entries})
            _refuse_unproved_caps(list(earlier.values()), path)
            data[KEY] = {"schema_version": SCHEMA_VERSION, "backend": backend_name, "families": list(earlier.values())}
            write_json_atomic(path, seal(json_safe(data)))
    except RunInUseError as error:
        raise RunInUseError(f"--findings {str(path)!r}: its check started meanwhile ({error}); the results are kept in "
                            f"{str(out / 'certified.json')!r}: rerun this command when the check has finished to add "
                            "them (it resumes at once)") from None


def _refuse_unproved_caps(merged: list[dict[str, Any]], path: Path) -> None:
    """A merge that would keep a capped family beside another run's capping family with a larger upper end (its
    cap no longer proved there) is refused before anything is written (the file would be refused when read)."""
    from sltcheck.certificates import family_problems
    from sltcheck.errors import UsageError

    problems = [p for p in family_problems(merged) if "capped_by" in p]
    if problems:
        raise UsageError(f"--findings {str(path)!r}: adding these families would leave {problems[0]}; add the capped "
                         "family and its capping family from the same run directory")


def _findings_file_locked(path: Path) -> dict[str, Any]:
    """The findings.json, refused if it was changed by hand since sltcheck wrote it (a legitimate
    writer, check or certify, seals what it writes), carries no digest, or disagrees with itself
    (:mod:`sltcheck.certificates`): certify seals what it writes back, so it must not seal an edit."""
    from sltcheck.certificates import checked, findings_problems, require_sealed
    from sltcheck.records import FindingsFile
    from sltcheck.schema import load as load_file

    data = dict(load_file(path, FindingsFile, "--findings"))
    require_sealed(data, "--findings findings", path)
    checked(findings_problems(data), "--findings findings", path)
    return data


def run(args: argparse.Namespace) -> int:
    from sltcheck.certify import session

    if not hasattr(args, "chosen"):  # called without the command line's validation (a test)
        validate(args)
    if args.list:
        for family in args.chosen:
            print(f"{family.key:<40} {family.expected or '-':<15} {'arrays' if family.vectorised else '':<7} "
                  f"{family.description}")
        return 0
    began = time.perf_counter()
    config = session.CertifyConfig(
        only=tuple(args.only or ()), family=tuple(args.family or ()), budget=args.budget, rounds=args.rounds,
        out=args.out, backend=args.backend, tolerance=args.tolerance, search=not args.no_search,
        climb=not args.no_climb, seeds=args.seed_instances, workers=args.workers, scheduler=args.scheduler,
        cluster=args.cluster)
    data = session.run(config, report=None if args.quiet else print)
    entries = [e for e in data["families"] if e["key"] in data["this_run"]]
    out, where = Path(config.out), data["enclosed"]
    if args.findings:
        add_to_findings(Path(args.findings), entries, args.arith.name, out)
        print(f"added {KEY} to {args.findings}")
    if args.readme:
        import sys

        from sltcheck.readme_section import rewrite_section

        argv = sys.argv[2:] if sys.argv[1:2] == ["certify"] else sys.argv[1:]
        command = "sltcheck certify " + " ".join(without_readme(argv))
        command += f" (the table holds every family in {out}, this run's and earlier ones')"
        context = f"{os.cpu_count()} cores; {_duration(time.perf_counter() - began)} in all, boxes enclosed {where}"
        rewrite_section(Path(args.readme), README_START, README_END,
                        readme_table(data["families"], command, context))
        print(f"rewrote the certified families' section of {args.readme}")
    print(table(data["families"]))
    print(f"\nwrote {out / 'certified.json'}" + (f" and {out / 'counterexamples.json'} (sltcheck check --replay)"
                                                 if data["counterexamples"] else ""))
    return 0


def without_readme(argv: list[str]) -> list[str]:
    """The command's arguments less ``--readme PAGE`` (where the table went is not part of its numbers)."""
    shown: list[str] = []
    skip = False
    for part in argv:
        if skip:
            skip = False
        elif part == "--readme":
            skip = True
        elif not part.startswith("--readme="):
            shown.append(part)
    return shown


def search_seeds(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Statement -> the instances a findings.json records (each variant's worst, mutants' counterexamples)."""
    from sltcheck.harness.replay import decode
    from sltcheck.records import FindingsFile
    from sltcheck.schema import load as load_file

    data = load_file(path, FindingsFile, "--seeds")
    found: dict[str, list[dict[str, Any]]] = {}
    for index, entry in enumerate(data["findings"]):
        instance = entry["instance"]
        if instance:
            found.setdefault(entry["statement"], []).append(
                decode(instance, path, f"findings[{index}].instance", "--seeds"))
    for index, mutant in enumerate(data["mutants"]):
        counterexample = mutant["counterexample"]
        if counterexample:
            found.setdefault(mutant["statement"], []).append(
                decode(counterexample, path, f"mutants[{index}].counterexample", "--seeds"))
    return found


README_START = "<!-- sltcheck certify --readme: generated, do not edit -->"
README_END = "<!-- end of sltcheck certify --readme -->"


def _end(value: float | None) -> str:
    """A bracket's end: 6 digits, but an end a few ulps above 1 says so (never printed as 1)."""
    if value is not None and value != 1.0 and f"{value:.6g}" == "1":
        return f"1 {'+' if value > 1 else '-'} {abs(value - 1):.1e}"
    return _number(value)


def outcome(entry: dict[str, Any]) -> str:
    """One family's outcome in words: what the enclosures prove, and nothing more."""
    bracket = f"[{_end(entry['sup_lower'])}, {_end(entry['sup_upper'])}]"
    if entry["verdict"] == "counterexample":
        found = entry["counterexample"]
        source = found.get("found_by", "")
        source = "search seed" if source.startswith("search_worst_case") else source
        return (f"**counterexample**, ratio >= {found['certified_ratio'][0]:.6g} "
                f"({source}; decided by {found.get('decided_by', 'interval')})")
    argued = entry.get("proved_by_argument") or {}
    by = "".join(f"; {name} on {100 * share:.1f}%" for name, share in argued.items() if share > 0)
    if entry["verdict"] == "held":
        return f"**held** (proved on 100%{by}), sup measured / bound in {bracket}"
    return f"undecided: {100 * entry['proven_fraction']:.1f}% of the volume proved{by}, sup in {bracket}"


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def readme_table(entries: list[dict[str, Any]], command: str, context: str = "") -> str:
    """The README's table of certified families (generated from a run's results); ``context``: the
    machine's cores, how long the run took, on how many workers (not the machine's load: a page states
    its command and date, and the times are the machine's)."""
    import datetime

    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    under = f": {context}" if context else ""
    lines = [f"Generated by `{command}` on {when} (boxes/s and seconds on the machine it ran on{under}).", "",
             "| statement | family | variant | expected | outcome | known sup | rounds | boxes | boxes/s | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for e in entries:
        stopped = "finished" if e["finished"] else "budget"
        lines.append(f"| {e['statement']} | `{e['family']}` | {e['variant']} | {e['expected'] or '-'} | {outcome(e)} | "
                     f"{_number(e['known_supremum'])} | {e['rounds']} | {e['boxes']} | "
                     f"{_number(e['boxes_per_second'])} | {e['seconds']:.0f} ({stopped}) |")
    return "\n".join(lines) + "\n"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def table(entries: list[dict[str, Any]]) -> str:
    lines = [f"{'family':<28} {'verdict':<15} {'sup >=':>10} {'sup <=':>10} {'proven':>8} {'boxes':>8} "
             f"{'boxes/s':>8} {'known':>10}"]
    for e in entries:
        proven = "-" if e["proven_fraction"] is None else f"{e['proven_fraction']:.4f}"
        lines.append(f"{e['key']:<28} {e['verdict']:<15} {_number(e['sup_lower']):>10} {_number(e['sup_upper']):>10} "
                     f"{proven:>8} {e['boxes']:>8} {_number(e['boxes_per_second']):>8} "
                     f"{_number(e['known_supremum']):>10}")
    return "\n".join(lines)
