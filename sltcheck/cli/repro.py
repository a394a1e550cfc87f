"""``sltcheck repro fig4|fig5|fig6``: the synthetic reproductions."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def _print_summary(summary: dict[str, Any]) -> None:
    from sltcheck.repro.fits import interval_text

    points = summary["points"]
    print(f"\n{summary['figure']}: {summary['checked']} pruned sources checked against their "
          f"a-posteriori bound, {len(summary['violations'])} violations, "
          f"{summary['undecided']} undecided, worst measured/bound = {summary['worst_ratio'] or 0:.3g}")
    print(f"{'B':>3} {'T':>5} {'n':>5} {'sources':>8} {'mean error':>12} {'std':>10} {'max ratio':>10}")
    for p in points:
        print(f"{p['blocks']:>3} {p['length']:>5} {p['width']:>5} {p['sources']:>8} "
              f"{p['mean']:>12.4g} {p['std']:>10.3g} {p['max_ratio']:>10.3g}")
    paper, workshop = summary["paper_fit"], summary["workshop_fit"]
    print(f"fits eps = gamma exp(-delta n)   (paper: gamma={paper['gamma']}, delta={paper['delta']}; "
          f"workshop: gamma={workshop['gamma']}, delta={workshop['delta']})")
    for name, fit in summary["fits"].items():
        if not fit or "error" in fit:
            print(f"  {name}: no fit ({fit.get('error') if fit else 'too few points'})")
            continue
        print(f"  {name}: gamma = {interval_text(fit, 'gamma')}, delta = {interval_text(fit, 'delta')}")
    for violation in summary["violations"][:10]:
        print(f"  VIOLATION: {violation}")


def _handler(figure: str):
    def handle(args: argparse.Namespace) -> int:
        from sltcheck.executors import InProcessExecutor, make_executor
        from sltcheck.repro import synthetic

        overrides = {}
        for name in ("solver", "init", "sources", "seed", "norm_policy", "regression_token", "bound"):
            value = getattr(args, name)
            if value is not None:
                overrides[name] = value
        config = synthetic.preset_config(figure, args.preset, args.mode, **overrides)
        out = args.out or str(Path("runs") / f"{figure}-{args.preset}-{args.mode}")
        with make_executor(args.workers, args.scheduler, args.cluster) as executor:
            executor.connect()  # an unreachable scheduler is refused before anything is written
            if not args.no_progress and not isinstance(executor, InProcessExecutor):
                print(f"sources run on {executor.description}")
            summary = synthetic.run(config, out, progress=not args.no_progress, executor=executor)
        _print_summary(summary)
        print(f"\nresults: {out}/results.sqlite, summary: {out}/summary.json")
        return 1 if summary["violations"] else 0

    return handle


def register(cli) -> None:  # noqa: ANN001 - sltcheck.cli.CommandLine
    helps = {
        "fig4": "Figure 4: MHA approximation error vs n_K = n_V at T = 4",
        "fig5": "Figure 5: MHA approximation error vs sequence length T for several widths",
        "fig6": "Figure 6: transformer approximation error vs n_MHA = n_FC for B blocks",
    }
    for figure, help_text in helps.items():
        cli.command(figure, help_text, _handler(figure), group="repro", arguments=_arguments)
    cli.command("readme", "write the README's reproduction section from run directories", _readme,
                group="repro", arguments=_readme_arguments)


def _readme(args: argparse.Namespace) -> int:
    from sltcheck.repro import readme

    text = readme.render(readme.load(args.inputs))
    if args.readme:
        readme.rewrite(Path(args.readme), text)
        print(f"rewrote the reproduction section of {args.readme}")
    else:
        print(text)
    return 0


def _readme_arguments(parser: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import InputPath, readme
    from sltcheck.repro.readme import END, START, result_files

    parser.add_argument("--in", dest="inputs", nargs="+", required=True,
                        type=InputPath("path", result_files, "a run directory with summary.json or results.json",
                                       "{}\n"),
                        help="run directories (summary.json of fig4-6, results.json of fig7/fig8)")
    parser.add_argument("--readme", default=None, type=readme(START, END),
                        help="README to rewrite between its repro markers (default: print the section)")


def _arguments(parser: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import OUT_DIRECTORY, SCHEDULER, SEED, WORKERS, Choice, Integer
    from sltcheck.extras import MissingExtra

    try:
        from sltcheck.repro import synthetic
    except MissingExtra as error:
        parser.error(str(error))
    from sltcheck.pruning.solver_names import SOLVERS
    from sltcheck.pruning.sources import INITS
    from sltcheck.repro.bounds import BOUNDS
    from sltcheck.repro.targets import NORM_POLICIES, REGRESSION_TOKENS

    parser.add_argument("--preset", type=Choice(synthetic.PRESETS), default="quick")
    parser.add_argument("--mode", type=Choice(synthetic.MODES), default="theory",
                        help="paper: Gurobi + Xavier sources; theory: exact solver + Section 3.1 sources")
    parser.add_argument("--solver", type=Choice(SOLVERS), default=None, help="override the mode's subset-sum solver")
    parser.add_argument("--init", type=Choice(INITS), default=None, help="override the mode's source initialisation")
    parser.add_argument("--sources", type=Integer(1, synthetic.MAX_SOURCES), default=None,
                        help="random sources per point")
    parser.add_argument("--seed", type=SEED, default=None)
    parser.add_argument("--norm-policy", dest="norm_policy", type=Choice(NORM_POLICIES), default=None,
                        help="targets above the theorems' norm limits: rescale (theory mode's default) "
                             "or keep (paper mode's default)")
    parser.add_argument("--regression-token", dest="regression_token", type=Choice(REGRESSION_TOKENS),
                        default=None, help="the trained target's regression token: learned from zero "
                                           "(B.1, default) or fixed at zero")
    parser.add_argument("--bound", type=Choice(BOUNDS), default=None,
                        help="the bound each source is checked against: auto (default: as-proven where the "
                             "target meets the norm assumptions, else the chain with the actual norms)")
    parser.add_argument("--out", type=OUT_DIRECTORY, default=None, help="run directory (resumed if it exists)")
    parser.add_argument("--no-progress", action="store_true")
    where = parser.add_argument_group("where the sources run (the target is built by this process)")
    where.add_argument("--workers", type=WORKERS, default=None, metavar="N",
                       help="local processes (default 1: in this process); with --cluster local, "
                            "the LocalCluster's workers (default: one per CPU)")
    scheduler = where.add_mutually_exclusive_group()
    scheduler.add_argument("--scheduler", type=SCHEDULER, default=None, metavar="ADDRESS",
                           help="a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (needs sltcheck[cluster])")
    scheduler.add_argument("--cluster", choices=("local",), default=None,
                           help="start a Dask LocalCluster of --workers single-threaded processes")
