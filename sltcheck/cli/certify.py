"""``sltcheck certify``: prove "held" (or a counterexample) over whole families of instances.

    sltcheck certify [--only NAME ...] [--family NAME ...] [--budget SECONDS] [--rounds N] [--out DIR]
                     [--backend arb|mpmath] [--tolerance T] [--workers N] [--cluster local | --scheduler ADDR]
                     [--findings FILE] [--seeds FILE] [--no-search] [--no-climb] [--list]

Runs the interval branch-and-bound (:mod:`sltcheck.certify`) on each selected family for at most
``--budget`` seconds (each), resuming what ``DIR/boxes.sqlite`` holds; writes ``DIR/certified.json``
(every family's verdict, bracket of the supremum, proven volume, boxes/s, progress over time) and
``DIR/counterexamples.json`` (replay with ``sltcheck check --replay``). ``--findings FILE`` adds the
results to a findings.json of ``sltcheck check`` under the key ``certified_over_family``.

A fresh family seeds its lower bound itself: the worst-case search restricted to the family's shape
(where the family says how), then a local climb after every rise of the lower bound; every seed's
source is recorded (``seeds``, ``best_source``, and a counterexample's ``found_by``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

KEY = "certified_over_family"


def register(cli: Any) -> None:
    cli.command("certify", "prove held (or a counterexample) over whole families of instances (branch-and-bound)",
                run, arguments=_arguments)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--only", nargs="+", metavar="NAME", help="statements (default: every one with a family)")
    parser.add_argument("--family", nargs="+", metavar="NAME",
                        help="families by name (d1-T2) or key (lemma13/d1-T4/as-stated)")
    parser.add_argument("--budget", type=_seconds, default=60.0, metavar="SECONDS",
                        help="seconds per family in this run (default 60; a resumed run continues)")
    parser.add_argument("--rounds", type=_positive, default=None, metavar="N",
                        help="stop each family after N rounds in all (a result that does not depend on speed)")
    parser.add_argument("--out", default="runs/certify", help="run directory (resumed if it exists)")
    parser.add_argument("--backend", choices=("arb", "mpmath"), default=None,
                        help="enclosures: arb (python-flint, sltcheck[certify]) or mpmath.iv "
                             "(default: arb if installed)")
    parser.add_argument("--tolerance", type=float, default=0.01,
                        help="relative gap of the supremum's bracket at which a family stops (default 0.01)")
    parser.add_argument("--findings", metavar="FILE", help="add the results to this findings.json")
    parser.add_argument("--seeds", metavar="FILE",
                        help="a findings.json of sltcheck check: its worst instances seed the lower bounds")
    parser.add_argument("--no-search", action="store_true",
                        help="do not seed a fresh family with the worst-case search restricted to it")
    parser.add_argument("--no-climb", action="store_true",
                        help="no local climb of the lower bound after each rise of it")
    parser.add_argument("--readme", metavar="FILE",
                        help="rewrite the generated section of this README (between its certify markers) with "
                             "the table of this run's families")
    parser.add_argument("--list", action="store_true", help="list the families and exit")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    where = parser.add_argument_group("where the boxes are enclosed")
    where.add_argument("--workers", type=_positive, default=None, metavar="N",
                       help="local processes (default 1: in this process); with --cluster local, Dask workers")
    scheduler = where.add_mutually_exclusive_group()
    scheduler.add_argument("--scheduler", default=None, metavar="ADDRESS", help="a running Dask scheduler")
    scheduler.add_argument("--cluster", choices=("local",), default=None, help="start a Dask LocalCluster")


def write_json(path: Path, data: Any) -> None:
    """Strict JSON (no NaN), written atomically (a temporary file renamed over the target)."""
    from sltcheck.jsonfiles import write_json_atomic

    write_json_atomic(path, data)


def replay_file(counterexamples: list[dict[str, Any]]) -> dict[str, Any]:
    """The counterexamples as a findings.json (``FindingsFile``) that ``sltcheck check --replay`` reads:
    a variant's under ``findings``, a mutant's (a known-false bound) under ``mutants``."""
    from sltcheck.records import FindingRecord, FindingsFile, MutantRecord
    from sltcheck.schema import SCHEMA_VERSION
    from sltcheck.statements import load

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
         "seconds": 0.0}
        for c in counterexamples if not is_variant(c)]
    data: FindingsFile = {
        "schema_version": SCHEMA_VERSION, "profile": "certify", "seed": 0,
        "run": {"profile": "certify", "seed": 0, "only": sorted({c["statement"] for c in counterexamples}),
                "no_search": True, "no_mutants": not mutants, "power": False},
        "fingerprint": "", "complete": True, "planned": [], "done": [], "findings": findings, "mutants": mutants,
        "slack": [], "power": []}
    return dict(data)


def run(args: argparse.Namespace) -> int:
    from sltcheck.certify import select
    from sltcheck.certify.run import Store, certify_family
    from sltcheck.executors import InProcessExecutor, make_executor
    from sltcheck.numerics.balls import backend
    from sltcheck.schema import SCHEMA_VERSION

    if not 0 < args.tolerance < 1:
        raise SystemExit(f"--tolerance must be in (0, 1), got {args.tolerance}")
    try:
        chosen = select(args.only, args.family)
        arith = backend(args.backend)
    except ValueError as error:
        raise SystemExit(str(error)) from None
    if args.list:
        for family in chosen:
            print(f"{family.key:<28} {family.expected or '-':<15} {family.description}")
        return 0
    seeds = search_seeds(Path(args.seeds)) if args.seeds else {}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    report = None if args.quiet else print
    with make_executor(args.workers, args.scheduler, args.cluster) as executor:
        if not isinstance(executor, InProcessExecutor) and report:
            report(f"boxes are enclosed on {executor.description}")
        store = Store(out / "boxes.sqlite")
        try:
            for family in chosen:
                try:
                    entries.append(certify_family(family, store, backend_name=arith.name, budget=args.budget,
                                                  seeds=seeds.get(family.statement, []),
                                                  tolerance=args.tolerance, executor=executor, report=report,
                                                  rounds=args.rounds, search=not args.no_search,
                                                  climb=not args.no_climb))
                except ValueError as error:
                    raise SystemExit(str(error)) from None
                _write(out, entries, arith.name)
        finally:
            store.close()
    data = _write(out, entries, arith.name)
    if args.findings:
        from sltcheck.records import FindingsFile
        from sltcheck.schema import load as load_file

        path = Path(args.findings)
        findings = dict(load_file(path, FindingsFile, "--findings"))
        findings[KEY] = {"schema_version": SCHEMA_VERSION, "backend": arith.name, "families": entries}
        write_json(path, findings)
        print(f"added {KEY} to {path}")
    if args.readme:
        import sys

        from sltcheck.report.readme_section import rewrite_section

        command = "sltcheck certify " + " ".join(sys.argv[2:] if sys.argv[1:2] == ["certify"] else sys.argv[1:])
        command += f" (the table holds every family in {out}, this run's and earlier ones')"
        rewrite_section(Path(args.readme), README_START, README_END, readme_table(data["families"], command))
        print(f"rewrote the certified families' section of {args.readme}")
    print(table(data["families"]))
    print(f"\nwrote {out / 'certified.json'}" + (f" and {out / 'counterexamples.json'} (sltcheck check --replay)"
                                                 if data["counterexamples"] else ""))
    return 0


def search_seeds(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Statement -> the instances a findings.json records (each variant's worst, mutants' counterexamples)."""
    from sltcheck.harness.serialise import decode_instance
    from sltcheck.records import FindingsFile
    from sltcheck.schema import load as load_file

    if not path.is_file():
        raise SystemExit(f"--seeds must name a findings.json of sltcheck check, got {str(path)!r}")
    data = load_file(path, FindingsFile, "--seeds")
    found: dict[str, list[dict[str, Any]]] = {}
    for entry in data["findings"]:
        instance = entry["instance"]
        if instance:
            found.setdefault(entry["statement"], []).append(decode_instance(instance))
    for mutant in data["mutants"]:
        counterexample = mutant["counterexample"]
        if counterexample:
            found.setdefault(mutant["statement"], []).append(decode_instance(counterexample))
    return found


def _write(out: Path, entries: list[dict[str, Any]], backend_name: str) -> dict[str, Any]:
    """certified.json and counterexamples.json of the run directory: this run's families, and those
    an earlier run in the same directory finished (kept, never overwritten by another family's run)."""
    import json

    from sltcheck.schema import SCHEMA_VERSION

    merged: dict[str, dict[str, Any]] = {}
    previous = out / "certified.json"
    if previous.is_file():
        merged = {e["key"]: e for e in json.loads(previous.read_text()).get("families", [])}
    merged.update({e["key"]: e for e in entries})
    families = list(merged.values())
    counterexamples = [e["counterexample"] for e in families if e["counterexample"]]
    data = {"schema_version": SCHEMA_VERSION, "backend": backend_name, "families": families,
            "counterexamples": len(counterexamples)}
    write_json(out / "certified.json", data)
    write_json(out / "counterexamples.json", replay_file(counterexamples))
    return data


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
    if entry["verdict"] == "held":
        return f"**held** (proved on 100%), sup measured / bound in {bracket}"
    return f"undecided: {100 * entry['proven_fraction']:.1f}% of the volume proved, sup in {bracket}"


def readme_table(entries: list[dict[str, Any]], command: str) -> str:
    """The README's table of certified families (generated from a run's results)."""
    import datetime

    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"Generated by `{command}` on {when} (boxes/s and seconds on the machine it ran on, under its load).", "",
             "| statement | family | variant | expected | outcome | known sup | boxes | boxes/s | seconds |",
             "|---|---|---|---|---|---|---|---|---|"]
    for e in entries:
        stopped = "finished" if e["finished"] else "budget"
        lines.append(f"| {e['statement']} | `{e['family']}` | {e['variant']} | {e['expected'] or '-'} | {outcome(e)} | "
                     f"{_number(e['known_supremum'])} | {e['boxes']} | {_number(e['boxes_per_second'])} | "
                     f"{e['seconds']:.0f} ({stopped}) |")
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
