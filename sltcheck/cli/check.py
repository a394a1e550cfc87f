"""``sltcheck check``: run every statement's properties, the worst-case search and the mutants.

    sltcheck check [--profile ci|dev|deep] [--only NAME ...] [--out DIR] [--seed N]
                   [--no-search] [--no-mutants]
    sltcheck check --replay FILE [--only NAME ...] [--dps 100]

``-q`` prints warnings only, ``-v`` a line per variant and mutant; by default a progress
bar per statement (examples/s and ETA) runs on stderr and the table is printed at the end.

The properties run programmatically (not through pytest) with an explicit
Hypothesis seed, so the same seed gives the same findings. For every
statement and variant, ``findings.json`` holds: statement, variant,
default (bool), examples, worst_ratio, violated, violations, undecided,
instance (exact JSON: floats as float.hex), seed, examples_per_second,
search (the worst-case search of :mod:`sltcheck.harness.search` at the profile's
budget: its ratio, evaluations, seconds, shape and, for a violation, the replay at
twice the digits and the interval outcome); and, per statement, the mutants refuted
with their counterexamples.
"""

from __future__ import annotations

import argparse
import functools
import json
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sltcheck.cli.output import LOG, StatementProgress, add_verbosity, configure
from sltcheck.numerics.defaults import REPLAY_DPS

if TYPE_CHECKING:
    from collections.abc import Callable

    from sltcheck.harness.runner import Record
    from sltcheck.statements import Instance

def register(cli: Any) -> None:
    cli.command("check", "check the paper's statements as properties; write findings.json", run,
                arguments=_arguments)
    cli.command("findings", "write the README's 'What the checks found' from a findings.json", run_findings,
                arguments=_findings_arguments)


def _arguments(parser: argparse.ArgumentParser) -> None:
    from sltcheck.harness.profiles import PROFILES

    parser.add_argument("--profile", choices=list(PROFILES), default="ci")
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="statements to check or replay (default: all)"
    )
    parser.add_argument("--out", default="findings", help="output directory (default: ./findings)")
    parser.add_argument("--seed", type=int, default=0, help="Hypothesis seed (default 0)")
    parser.add_argument(
        "--no-search", action="store_true", help="skip the worst-case search (Hypothesis examples only)"
    )
    parser.add_argument("--no-mutants", action="store_true", help="skip the mutant refutations")
    parser.add_argument(
        "--replay", metavar="FILE", help="replay the findings in FILE instead of searching"
    )
    parser.add_argument("--dps", type=int, default=REPLAY_DPS, help=f"digits for --replay (default {REPLAY_DPS})")
    parser.add_argument("--power", action=argparse.BooleanOptionalAction, default=None,
                        help="the search-power table (default: on, except at the ci profile, which stays short)")
    add_verbosity(parser)


def _findings_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--in", dest="source", required=True, metavar="FILE", help="a findings.json of sltcheck check")
    parser.add_argument("--readme", metavar="FILE", help="rewrite the generated section of this README (else print)")


def run(args: argparse.Namespace) -> int:
    from tqdm.contrib.logging import logging_redirect_tqdm

    from sltcheck.harness.profiles import profile_settings
    from sltcheck.harness.runner import RECORDER
    from sltcheck.statements import STATEMENT_MODULES, load

    configure(getattr(args, "verbosity", 0))
    names = args.only or list(STATEMENT_MODULES)
    for name in names:
        load(name)  # validates the name
    if args.replay:
        return replay(Path(args.replay), args.dps, tuple(args.only or ()))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    settings = profile_settings(args.profile, seeded=True)
    findings: list[dict[str, object]] = []
    mutant_rows: list[dict[str, object]] = []
    RECORDER.clear()
    RECORDER.seed = args.seed
    with logging_redirect_tqdm(loggers=[LOG]):  # log lines go above the bars, not through them
        for name in names:
            _check_statement(name, args, settings, findings, mutant_rows)
    power: list[dict[str, object]] = []
    if args.power or (args.power is None and args.profile != "ci"):
        from sltcheck.harness import power as search_power

        LOG.info("search power: the search against every known supremum ...")
        power = search_power.table(args.profile, args.seed, tuple(names))
        _write(out, findings, mutant_rows, args, power)
        LOG.info("%s\n", search_power.format_table(power))
    LOG.info("%s", _table(findings, mutant_rows))
    LOG.info("\nwrote %s", out / "findings.json")
    return 0


def _check_statement(
    name: str, args: argparse.Namespace, settings: object, findings: list[dict[str, object]],
    mutant_rows: list[dict[str, object]],
) -> None:
    """One statement's variants and mutants under one progress bar; findings.json after every step."""
    from sltcheck.harness.mutants import refute
    from sltcheck.harness.profiles import PROFILES, profile_settings
    from sltcheck.harness.runner import RECORDER
    from sltcheck.harness.search import planned_evaluations
    from sltcheck.harness.serialise import encode_instance
    from sltcheck.statements import load

    out = Path(args.out)
    module = load(name)
    examples = PROFILES[args.profile]
    search = 0 if args.no_search else planned_evaluations(name, args.profile)
    mutants = () if args.no_mutants else module.MUTANTS
    progress = StatementProgress(name, [examples + search] * len(module.VARIANTS) + [examples] * len(mutants),
                                 enabled=getattr(args, "verbosity", 0) >= 0)
    RECORDER.on_example = progress.tick
    try:
        for variant in module.VARIANTS:
            progress.task(variant, examples + search)
            findings.append(_check_variant(name, variant, module.DEFAULT_VARIANT, settings, args, progress.tick))
            _write(out, findings, mutant_rows, args)
            _log_variant(findings[-1])
        for mutant in mutants:
            progress.task(f"mutant {mutant.name}", examples)
            start = time.perf_counter()
            result = refute(name, mutant, settings=profile_settings(args.profile), profile=args.profile)
            mutant_rows.append(
                {
                    "statement": name,
                    "mutant": mutant.name,
                    "why": mutant.why,
                    "refuted": result.refuted,
                    "ratio": result.verdict.ratio if result.verdict else None,
                    "counterexample": encode_instance(result.instance) if result.instance else None,
                    "message": result.message,
                    "seconds": round(time.perf_counter() - start, 3),
                }
            )
            _log_mutant(mutant_rows[-1])
        if mutants:
            _write(out, findings, mutant_rows, args)
    finally:
        RECORDER.on_example = None
        progress.close()


def _replay_command(findings: Path, statement: str) -> str:
    """The one command that re-decides ``statement``'s recorded instances in ``findings``."""
    return f"sltcheck check --replay {shlex.quote(str(findings))} --only {shlex.quote(statement)}"


def _log_variant(entry: dict[str, object]) -> None:
    ratio = entry["worst_ratio"]
    shown = "-" if ratio is None else f"{ratio:.6g}"
    if entry["violated"]:
        LOG.warning("%s [%s] VIOLATED: worst measured/bound %s", entry["statement"], entry["variant"], shown)
    search = entry.get("search") or {}
    assert isinstance(search, dict)
    LOG.debug("%s [%s]: %s examples, worst ratio %s, %s search evaluations, %ss", entry["statement"],
              entry["variant"], entry["examples"], shown, search.get("evaluations", 0), entry["seconds"])


def _log_mutant(row: dict[str, object]) -> None:
    if not row["refuted"]:
        LOG.warning("mutant %s:%s SURVIVED (%s)", row["statement"], row["mutant"], row["message"])
    LOG.debug("mutant %s:%s refuted in %ss: %s", row["statement"], row["mutant"], row["seconds"], row["message"])


def run_findings(args: argparse.Namespace) -> int:
    from sltcheck.report import findings_text

    configure(getattr(args, "verbosity", 0))
    source = Path(args.source)
    if not source.is_file():
        raise SystemExit(f"--in must name a findings.json written by sltcheck check, got {str(source)!r}")
    text = findings_text.render(json.loads(source.read_text()), source.name)
    if args.readme:
        findings_text.rewrite(Path(args.readme), text)
        LOG.info("rewrote the findings section of %s", args.readme)
    else:
        print(text, end="")  # the section itself is the output
    return 0


def _check_variant(
    name: str, variant: str, default: str, settings: object, args: argparse.Namespace,
    progress: Callable[[], None] | None = None,
) -> dict[str, object]:
    from hypothesis import seed as hypothesis_seed

    from sltcheck.harness.runner import RECORDER, property_test
    from sltcheck.harness.search import search_worst_case

    record = RECORDER.record(name, variant)
    test = property_test(name, variant, settings=settings)  # type: ignore[arg-type]
    test = hypothesis_seed(args.seed)(test)
    start = time.perf_counter()
    failure = ""
    try:
        test()
    except AssertionError as error:
        failure = str(error).splitlines()[0]
    wall = time.perf_counter() - start
    search: dict[str, object] | None = None
    if not args.no_search:
        result = search_worst_case(name, variant, profile=args.profile, seed=args.seed, progress=progress)
        search = {
            "ratio": result.ratio,
            "violated": result.verdict.violated,
            "shape": result.shape,
            "starts": result.starts,
            "evaluations": result.evaluations,
            "seconds": round(result.seconds, 3),
            "replay": result.replay.as_dict() if result.replay else None,
            "certified": result.certified,
        }
        found = (result.verdict.violated, result.ratio)
        if found > (bool(record.violations), record.worst_ratio):
            record.worst_ratio, record.worst_instance = result.ratio, result.instance
            record.worst_verdict = result.verdict
        record.violations += int(result.verdict.violated)
    entry = _entry(record, default, wall, failure, search)
    entry.update(_certify(name, variant, record.worst_instance))
    return entry


def _certify(name: str, variant: str, instance: Instance | None) -> dict[str, object]:
    """The worst instance's verdict in interval arithmetic, where sltcheck.certified covers it."""
    from sltcheck import certified

    if instance is None or variant not in certified.supported().get(name, ()):
        return {}
    result = certified.as_dict(certified.evaluate(name, instance, variant))
    return {"certified": result["certified"], "certified_outcome": result["outcome"], "interval": result}


def _entry(
    record: Record, default: str, wall: float, failure: str, search: dict[str, object] | None
) -> dict[str, object]:
    from sltcheck.harness.serialise import encode_instance

    verdict = record.worst_verdict
    return {
        "statement": record.statement,
        "variant": record.variant,
        "default": record.variant == default,
        "examples": record.examples,
        "worst_ratio": record.worst_ratio if record.examples else None,
        "violated": bool(record.violations),
        "violations": record.violations,
        "undecided": record.undecided,
        "verdict": verdict.as_dict() if verdict else None,
        "instance": encode_instance(record.worst_instance) if record.worst_instance else None,
        "seed": record.seed,
        "examples_per_second": round(record.examples / wall, 2) if wall > 0 else None,
        "seconds": round(wall, 3),
        "failure": failure,
        "search": search,
        "ratios": [round(r, 6) for r in record.ratios],
    }


@functools.cache
def _slack_rows(names: tuple[str, ...] | None) -> list[dict[str, object]]:
    """The slack table of the checked statements, computed once per process (~15 s for all:
    Lemmas 12/13 need a search)."""
    from sltcheck.worst_case import slack_table

    return slack_table(statements=names)


def _write(
    out: Path,
    findings: list[dict[str, object]],
    mutants: list[dict[str, object]],
    args: argparse.Namespace,
    power: list[dict[str, object]] | None = None,
) -> None:
    data = {"profile": args.profile, "seed": args.seed, "findings": findings, "mutants": mutants,
            "slack": _slack_rows(tuple(args.only) if args.only else None),
            "power": power or []}
    (out / "findings.json").write_text(json.dumps(data, indent=1))


def _table(findings: list[dict[str, object]], mutants: list[dict[str, object]]) -> str:
    lines = [
        f"{'statement':<11} {'variant':<22} {'examples':>8} {'worst ratio':>14} {'violated':>8} "
        f"{'undecided':>9} {'ex/s':>8}"
    ]
    for f in findings:
        ratio = f["worst_ratio"]
        lines.append(
            f"{f['statement']:<11} {str(f['variant']) + (' *' if f['default'] else ''):<22} "
            f"{f['examples']:>8} "
            f"{(f'{ratio:.6g}' if ratio is not None else '-'):>14} "
            f"{('YES' if f['violated'] else 'no'):>8} "
            f"{f['undecided']:>9} {f['examples_per_second'] or '-':>8}"
        )
    if mutants:
        refuted = sum(bool(m["refuted"]) for m in mutants)
        lines.append(f"\nmutants refuted: {refuted}/{len(mutants)}")
        for m in mutants:
            if not m["refuted"]:
                lines.append(f"  SURVIVED {m['statement']}:{m['mutant']} ({m['message']})")
    lines.append("(* = default variant, the one the proofs use)")
    return "\n".join(lines)


def replay(path: Path, dps: int, only: tuple[str, ...] = ()) -> int:
    """Re-decide every recorded instance (findings and mutant counterexamples) at ``dps`` digits;
    ``only``: those of these statements."""
    import mpmath

    from sltcheck.assumptions import violations
    from sltcheck.harness.runner import evaluate
    from sltcheck.harness.serialise import decode_instance
    from sltcheck.statements import load

    data = json.loads(path.read_text())
    entries = (
        data["findings"]
        if isinstance(data, dict) and "findings" in data
        else (data if isinstance(data, list) else [data])
    )
    status = 0
    for entry in entries:
        if not entry.get("instance") or (only and entry.get("statement") not in only):
            continue
        instance = decode_instance(entry["instance"])
        name, variant = entry["statement"], entry["variant"]
        broken = violations(name, instance)
        verdict = evaluate(name, variant, instance, dps=dps)
        state = "VIOLATED" if verdict.violated else ("undecided" if verdict.undecided else "holds")
        LOG.info(
            "%s", f"{name} {variant}: measured {mpmath.nstr(verdict.measured, 25)} bound "
            f"{mpmath.nstr(verdict.bound, 25)} ratio {verdict.ratio:.17g} at {dps} digits: {state}"
            + (f"; assumptions violated: {'; '.join(map(str, broken))}" if broken else "")
        )
        recorded = entry.get("violated")
        if recorded is not None and bool(recorded) != verdict.violated:
            LOG.warning("  differs from the recorded verdict (violated=%s)", recorded)
            status = 1
    for mutant in data.get("mutants", []) if isinstance(data, dict) else []:
        if not mutant.get("counterexample") or (only and mutant.get("statement") not in only):
            continue
        module = load(mutant["statement"])
        match = [m for m in module.MUTANTS if m.name == mutant["mutant"]]
        if not match:
            continue
        verdict = evaluate(
            mutant["statement"],
            mutant["mutant"],
            decode_instance(mutant["counterexample"]),
            dps=dps,
            bound=match[0].bound,
        )
        LOG.info(
            "%s", f"{mutant['statement']} mutant {mutant['mutant']}: "
            f"ratio {verdict.ratio:.17g} at {dps} digits: "
            f"{'refuted' if verdict.violated else 'NOT refuted'}"
        )
    return status
