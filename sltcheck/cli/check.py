"""``sltcheck check``: run every statement's properties, the worst-case search and the mutants::

    sltcheck check [--profile ci|dev|deep] [--only NAME ...] [--out DIR] [--seed N]
                   [--no-search] [--no-mutants] [--workers N]
    sltcheck check --replay FILE [--only NAME ...] [--dps 100] [--allow-unsealed]

``-q`` prints warnings only, ``-v`` a line per variant and mutant; by default a progress
bar per statement (examples/s and ETA) runs on stderr and the table is printed at the end.
``--workers N`` runs the units (a variant, a statement's mutants, the power table, the
probability halves) in N processes, with one bar of units; each unit is seeded on its own, so
the findings are those of ``--workers 1`` (a test compares them).

The check itself is :func:`sltcheck.checking.run` (also :func:`sltcheck.api.check`): this module turns
the options into a :class:`~sltcheck.checking.CheckConfig` and prints what it found.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sltcheck.console import LOG, add_verbosity, configure
from sltcheck.numerics.defaults import REPLAY_DPS

MAX_REPLAY_DPS = 10_000


def register(cli: Any) -> None:
    cli.command("check", "check the paper's statements as properties; write findings.json", run,
                arguments=_arguments)
    cli.command("findings", "write the findings page (docs/results/findings.md) from a findings.json", run_findings,
                arguments=_findings_arguments)


def _arguments(parser: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import INPUT_FILE, OUT_DIRECTORY, SEED, WORKERS, Choice, Integer
    from sltcheck.harness.profiles import PROFILES
    from sltcheck.registry import STATEMENT_MODULES

    parser.add_argument("--profile", type=Choice(PROFILES), default="ci",
                        help=f"{', '.join(PROFILES)} (default ci; ci-random: ci with a seed drawn at random, "
                             "printed and recorded, unless --seed is given)")
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", type=Choice(STATEMENT_MODULES),
        help="statements to check or replay (default: all)"
    )
    parser.add_argument("--out", type=OUT_DIRECTORY, default="findings", help="output directory (default: ./findings)")
    parser.add_argument("--seed", type=SEED, default=None, help="Hypothesis seed (default 0)")
    parser.add_argument(
        "--no-search", action="store_true", help="skip the worst-case search (Hypothesis examples only)"
    )
    parser.add_argument("--no-mutants", action="store_true", help="skip the mutant refutations")
    parser.add_argument(
        "--replay", metavar="FILE", type=INPUT_FILE,
        help="re-decide every instance and number recorded in FILE instead of searching"
    )
    parser.add_argument("--allow-unsealed", action="store_true",
                        help="with --replay: accept a file that carries no digest (its numbers are re-decided "
                             "all the same); without it such a file makes the replay exit 1")
    parser.add_argument("--dps", type=Integer(15, MAX_REPLAY_DPS), default=REPLAY_DPS,
                        help=f"digits for --replay (default {REPLAY_DPS})")
    parser.add_argument("--probability", action=argparse.BooleanOptionalAction, default=None,
                        help="the probability halves: the proofs' allocation of eps (exact) and success "
                             "frequencies at the prescribed widths (ci grid, ~1 min; the full grid: "
                             "sltcheck widths --frequencies --profile full); default: on unless --only")
    parser.add_argument("--power", action=argparse.BooleanOptionalAction, default=None,
                        help="the search-power table (default: on, except at the ci profile, which stays short)")
    parser.add_argument("--workers", type=WORKERS, default=1,
                        help="processes to run the units (variants, mutants, power, probability) in; the "
                             "findings do not depend on it (default 1: in this process, a bar per statement)")
    add_verbosity(parser)


def _findings_arguments(parser: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import INPUT_FILE, readme
    from sltcheck.report.findings_text import END, HEADLINE_END, HEADLINE_START, START

    parser.add_argument("--in", dest="source", required=True, metavar="FILE", type=INPUT_FILE,
                        help="a findings.json of sltcheck check")
    parser.add_argument("--readme", metavar="FILE", type=readme(START, END),
                        help="rewrite the generated section of this file between its markers, e.g. "
                             "docs/results/findings.md (else print)")
    parser.add_argument("--headline", metavar="FILE", type=readme(HEADLINE_START, HEADLINE_END),
                        help="also rewrite the few lines of findings between this file's headline markers, "
                             "e.g. README.md (they link to the findings page)")


def run(args: argparse.Namespace) -> int:
    from sltcheck import checking

    configure(getattr(args, "verbosity", 0))
    if args.replay:
        from sltcheck.rederive import replay

        names = checking.statement_names(args.only)
        return replay(Path(args.replay), args.dps, tuple(names if args.only else ()),
                      allow_unsealed=getattr(args, "allow_unsealed", False))
    config = checking.CheckConfig(
        profile=args.profile, only=tuple(args.only or ()), seed=args.seed, search=not args.no_search,
        mutants=not args.no_mutants, power=args.power, probability=args.probability,
        workers=getattr(args, "workers", 1), out=args.out)
    out = Path(config.out)
    state = checking.run(config, verbosity=getattr(args, "verbosity", 0))
    checking.log_summary(state, out)
    return checking.status(state)


def run_findings(args: argparse.Namespace) -> int:
    import datetime

    from sltcheck.findings import load_complete
    from sltcheck.report import findings_text

    configure(getattr(args, "verbosity", 0))
    source = Path(args.source)
    data = load_complete(source)
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    text = findings_text.render(dict(data), source.name, date=today)
    if args.headline:
        findings_text.rewrite_headline(Path(args.headline), findings_text.headline(dict(data)))
        LOG.info("rewrote the headline findings of %s", args.headline)
    if args.readme:
        findings_text.rewrite(Path(args.readme), text)
        LOG.info("rewrote the findings section of %s", args.readme)
    elif not args.headline:
        print(text, end="")  # the section itself is the output
    return 0
