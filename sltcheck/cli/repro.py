"""``sltcheck repro fig4|fig5|fig6``: the synthetic reproductions."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sltcheck.cli.options import (
    OUT_DIRECTORY,
    SCHEDULER,
    SEED,
    WORKERS,
    Checked,
    Choice,
    Integer,
    Names,
    Number,
    Numbers,
)
from sltcheck.repro import RESULT_OPTIONS, default_out


def _print_summary(summary: dict[str, Any]) -> None:
    from sltcheck.repro.fits import interval_text

    points = summary["points"]
    print(f"\n{summary['figure']}: {summary['checked']} pruned sources checked against their "
          f"a-posteriori bound: {len(summary['violations'])} violations, {summary['held']} held, "
          f"{summary['vacuous']} vacuous, {summary['undecided']} undecided; worst measured/bound = "
          f"{summary['worst_ratio'] or 0:.3g}")
    if summary["vacuous"]:
        print(f"  vacuous: the bound is at or above the trivial bound max_i ||S(x_i)|| + ||T(x_i)|| (by "
              f"{_times(summary['least_bound_over_trivial'])} at least), so the check cannot fail: not a pass")
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
    if summary.get("input_space"):
        _print_input_space(summary)
    print(f"run time: {summary['wall_seconds']:.1f} s here, {summary['source_seconds']:.1f} s of sources in all")


def _print_input_space(summary: dict[str, Any]) -> None:
    from sltcheck.repro.input_space_text import HEADER, point_rows, sentences

    print("every input (--input-space; medians over sources):")
    print("  " + " | ".join(HEADER))
    for row in point_rows(summary):
        print("  " + " | ".join(row))
    for line in sentences(summary):
        print(f"  {line}")
    for row in summary["input_space"]["violations"][:10]:
        print(f"  CERTIFIED VIOLATION over the ball: width {row['width']}, T {row['length']}, B {row['blocks']}, "
              f"source {row['source']}: error {row['ball']['lower']!r} at the input {row['ball']['instance']} "
              f"above the bound {row['bound']}; recompute with `sltcheck repro verify RUN_DIR`")


def _times(value: object) -> str:
    """"1.2x", or "10^104x" for a factor beyond float64 (a decimal string)."""
    import mpmath

    if isinstance(value, str):
        return f"10^{float(mpmath.log10(mpmath.mpf(value))):.0f}x" if value != "inf" else "infinitely"
    return f"{float(value):.3g}x" if isinstance(value, (int, float)) else "?"


def _solver_options(args: argparse.Namespace) -> dict[str, Any]:
    chosen = {"mip_gap": args.mip_gap, "time_limit": args.time_limit, "threads": args.threads}
    return {name: value for name, value in chosen.items() if value is not None}


def _handler(figure: str):
    def handle(args: argparse.Namespace) -> int:
        from sltcheck import repro

        overrides: dict[str, Any] = {}
        for name in ("solver", "init", "sources", "seed", "norm_policy", "regression_token", "bound"):
            value = getattr(args, name)
            if value is not None:
                overrides[name] = value
        if args.widths is not None:
            overrides["widths"] = tuple(args.widths)
        if args.input_space:
            overrides["input_space"] = True
        overrides["solver_options"] = _solver_options(args)
        out = args.out or default_out(f"{figure}-{args.preset}-{args.mode}", args, RESULT_OPTIONS)
        result = repro.figure(figure, args.preset, args.mode, out=out, workers=args.workers,
                              scheduler=args.scheduler, cluster=args.cluster, progress=not args.no_progress,
                              report=None if args.no_progress else print, **overrides)
        summary = result.summary
        _print_summary(summary)
        print(f"\nresults: {out}/results.sqlite, summary: {out}/summary.json")
        return 1 if summary["violations"] or (summary.get("input_space") or {}).get("violations") else 0

    return handle


def register(cli) -> None:  # sltcheck.cli.CommandLine
    helps = {
        "fig4": "Figure 4: MHA approximation error vs n_K = n_V at T = 4",
        "fig5": "Figure 5: MHA approximation error vs sequence length T for several widths",
        "fig6": "Figure 6: transformer approximation error vs n_MHA = n_FC for B blocks",
    }
    for figure, help_text in helps.items():
        cli.command(figure, help_text, _handler(figure), group="repro", arguments=_arguments)
    cli.command("readme", "write the paper-beside-sltcheck page (docs/results/paper.md) from run directories", _readme,
                group="repro", arguments=_readme_arguments)
    cli.command("verify", "recompute a synthetic sweep's sources (all, or --sample N) and its summary, and "
                "compare them with what RUN_DIR stores", _verify, group="repro", arguments=_verify_arguments)
    cli.command("readings", "Figure 4, 5 or 6 under a grid of readings of the paper, side by side "
                "(readings.json, a plot of every reading, a conclusion)", _readings, group="repro",
                arguments=_readings_arguments)


def _readme(args: argparse.Namespace) -> int:
    from sltcheck.errors import UsageError
    from sltcheck.readme_section import section_problem
    from sltcheck.repro import input_space_text, readme

    documents = readme.load(args.inputs)
    # Runs made with --input-space fill the page's "every input" section only: their sweeps repeat the
    # quick ones, and a figure's table keeps the runs it was generated from.
    brackets = [d for d in documents if d.get("input_space")]
    others = [d for d in documents if not d.get("input_space")]
    if not args.readme:
        print(readme.render(others) if others else "", input_space_text.render(brackets), sep="\n")
        return 0
    problem = section_problem(Path(args.readme).read_text(), input_space_text.START, input_space_text.END)
    if brackets and problem is not None:
        raise UsageError(f"--readme {args.readme!r} {problem} (runs made with --input-space fill that section)")
    if others:
        readme.rewrite(Path(args.readme), readme.render(others))
        print(f"rewrote the reproduction section of {args.readme}")
    if brackets:
        input_space_text.rewrite(Path(args.readme), brackets)
        print(f"rewrote the every-input section of {args.readme}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    """Exit 0 when every recomputed source and the summary agree with the store, 1 naming each difference."""
    from sltcheck.errors import UsageError
    from sltcheck.repro.verify import verify

    if not (Path(args.run_dir) / "summary.json").is_file():
        raise UsageError(f"RUN_DIR: {args.run_dir!r} is not the run directory of a finished sweep (sltcheck repro "
                         "fig4|fig5|fig6): it holds no summary.json")
    differences = verify(Path(args.run_dir), args.sample, args.seed, progress=not args.quiet)
    for line in differences:
        print(f"DIFFERS {line}")
    what = "every source" if args.sample is None else f"{args.sample} sources drawn with seed {args.seed}"
    if differences:
        print(f"{args.run_dir}: {len(differences)} differences ({what} recomputed)")
        return 1
    print(f"{args.run_dir}: the summary and {what} recompute as stored")
    return 0


def _verify_arguments(parser: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import SEED, InputPath, Integer

    parser.add_argument("run_dir", metavar="RUN_DIR", type=InputPath("directory"),
                        help="the run directory of a sweep (sltcheck repro fig4|fig5|fig6), with its summary.json")
    parser.add_argument("--sample", type=Integer(1, 10**9), default=None, metavar="N",
                        help="recompute N sources drawn at random (default: every one)")
    parser.add_argument("--seed", type=SEED, default=0, help="the seed that draws the sample (default 0)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def _readme_arguments(parser: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import InputPath, readme
    from sltcheck.repro.readme import END, START, result_files

    parser.add_argument("--in", dest="inputs", nargs="+", required=True,
                        type=InputPath("path", result_files,
                                       "a run directory with summary.json, readings.json or results.json", "{}\n"),
                        help="run directories (summary.json of fig4-6, results.json of fig7/fig8)")
    parser.add_argument("--readme", default=None, type=readme(START, END),
                        help="the file to rewrite between its repro markers, e.g. docs/results/paper.md "
                             "(default: print the section)")


def _arguments(parser: argparse.ArgumentParser) -> None:
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
                        help="paper: Xavier sources, targets kept (B.1); theory: Section 3.1 sources, targets "
                             "rescaled; both with the exact subset-sum solver (--solver gurobi for B.1's Gurobi)")
    parser.add_argument("--solver", type=Choice(SOLVERS), default=None,
                        help="override the mode's subset-sum solver (default exact; gurobi as in B.1)")
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
    parser.add_argument("--widths", type=_widths, default=None, metavar="N,N,...",
                        help="source widths (n_K = n_V, or n_MHA = n_FC for fig6), e.g. 4,8,16 (default: the "
                             "preset's)")
    _input_space_argument(parser)
    _solver_arguments(parser)
    parser.add_argument("--out", type=OUT_DIRECTORY, default=None,
                        help="run directory (resumed if it exists; default: runs/ and a name made of the figure, "
                             "preset, mode and every option that changes results)")
    parser.add_argument("--no-progress", action="store_true")
    _where_arguments(parser)


def _input_space_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input-space", dest="input_space", action="store_true", default=None,
                        help="also bracket every source's worst error over every input, certified: over the task's "
                             "(omega, theta_0) and over every token of norm <= alpha (about a minute per source "
                             "and length at T = 4; see docs/explanation/input-space.md)")


def _solver_arguments(parser: argparse.ArgumentParser) -> None:
    mip = parser.add_argument_group("MIP solver settings (gurobi; exact and fast take --time-limit only)")
    mip.add_argument("--mip-gap", dest="mip_gap", type=_fraction, default=None, metavar="GAP",
                     help="relative MIP gap at which the solver stops (Gurobi's MIPGap; default its own, 1e-4)")
    mip.add_argument("--time-limit", dest="time_limit", type=_seconds, default=None, metavar="S",
                     help="seconds per subset-sum problem (Gurobi's TimeLimit; exact and fast stop there too, "
                          "certificate 'gap' with a proven lower bound; default none)")
    mip.add_argument("--threads", type=_positive, default=None, metavar="N", help="solver threads (default: its own)")


def _where_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_argument_group("where the sources run (the target is built by this process)")
    where.add_argument("--workers", type=WORKERS, default=None, metavar="N",
                       help="local processes (default 1: in this process); with --cluster local, "
                            "the LocalCluster's workers (default: one per CPU)")
    scheduler = where.add_mutually_exclusive_group()
    scheduler.add_argument("--scheduler", type=SCHEDULER, default=None, metavar="ADDRESS",
                           help="a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (needs sltcheck[cluster])")
    scheduler.add_argument("--cluster", choices=("local",), default=None,
                           help="start a Dask LocalCluster of --workers single-threaded processes")


def _readings(args: argparse.Namespace) -> int:
    from sltcheck.executors import make_executor
    from sltcheck.repro import readings

    grid = {"init": args.inits, "solver": args.solvers, "token": args.tokens, "norms": args.norms,
            "error": args.errors, "fit": args.fits}
    config = readings.make_config(
        args.figure, args.preset, grid, fit_widths=tuple(args.fit_widths) if args.fit_widths else (None,),
        widths=tuple(args.widths) if args.widths else None, sources=args.sources, test_samples=args.test_samples,
        target_epochs=args.target_epochs, seed=args.seed if args.seed is not None else 0,
        solver_options=_solver_options(args), input_space=bool(args.input_space))
    names = ("inits", "solvers", "tokens", "norms", "widths", "sources", "test_samples", "target_epochs", "seed",
             "mip_gap", "time_limit", "threads", "input_space")
    out = args.out or default_out(f"readings-{args.figure}-{args.preset}", args, names)
    with make_executor(args.workers, args.scheduler, args.cluster) as executor:
        executor.connect()
        document = readings.run(config, out, progress=not args.no_progress, executor=executor)
    _print_readings(document)
    print(f"\nreadings: {out}/readings.json, plot: {out}/readings.svg, runs: {out}/runs/")
    return 1 if any(r["violations"] for r in document["readings"]) else 0


def _print_readings(document: dict[str, Any]) -> None:
    from sltcheck.repro.readings_text import table_lines

    print()
    for line in table_lines(document):
        print(line)
    print("\nconclusion:")
    for line in document["conclusion"].splitlines():
        print(f"  {line}")


def _readings_arguments(parser: argparse.ArgumentParser) -> None:
    from sltcheck.extras import MissingExtra

    try:
        from sltcheck.pruning.sources import INITS
        from sltcheck.pruning.subset_sum import SOLVERS
        from sltcheck.repro import readings, synthetic
        from sltcheck.repro.fits import FITS
    except MissingExtra as error:
        parser.error(str(error))
    parser.add_argument("figure", choices=synthetic.FIGURES)
    parser.add_argument("--preset", choices=synthetic.PRESETS, default="quick")
    axes = parser.add_argument_group("the grid: every combination of these is a reading (defaults: "
                                     + "; ".join(f"{axis}s {','.join(v)}" for axis, v in readings.DEFAULTS.items())
                                     + ")")
    axes.add_argument("--inits", type=_names(INITS), default=None, metavar="A,B", help="source initialisations")
    axes.add_argument("--solvers", type=_names(SOLVERS), default=None, metavar="A,B", help="subset-sum solvers")
    axes.add_argument("--tokens", type=_names(("learned", "fixed-zero")), default=None, metavar="A,B",
                      help="regression tokens (fig4, fig5)")
    axes.add_argument("--norms", type=_names(tuple(readings.NORMS)), default=None, metavar="A,B",
                      help="target norms: keep (as trained or drawn) or rescale (onto spectral norm 1)")
    axes.add_argument("--errors", type=_names(tuple(synthetic.ERRORS)), default=None, metavar="A,B",
                      help="error definitions: " + "; ".join(f"{k}: {v[1]}" for k, v in synthetic.ERRORS.items()))
    axes.add_argument("--fits", type=_names(FITS), default=None, metavar="A,B",
                      help="fits: linear (curve_fit on per-width means), per-source (every source's point), "
                           "log-linear (least squares on log error)")
    axes.add_argument("--fit-widths", dest="fit_widths", type=_spans, default=None, metavar="all,LO:HI",
                      help="width ranges the fits use, e.g. all,4:20 (default: all)")
    parser.add_argument("--widths", type=_widths, default=None, metavar="N,N,...",
                        help="source widths (default: the preset's; quick fig4: 4,8,...,32)")
    parser.add_argument("--sources", type=_positive_count, default=None, help="random sources per point")
    parser.add_argument("--test-samples", dest="test_samples", type=_positive_count, default=None,
                        help="test sequences per source (default: the preset's; quick 500, paper 10,000)")
    parser.add_argument("--target-epochs", dest="target_epochs", type=_positive_count, default=None,
                        help="epochs of the trained target (fig4, fig5; default: the preset's, quick 3, paper 25)")
    parser.add_argument("--seed", type=_non_negative, default=None)
    _input_space_argument(parser)
    _solver_arguments(parser)
    parser.add_argument("--out", type=OUT_DIRECTORY, default=None,
                        help="readings directory (resumed if it exists; default: runs/ and a name made of the "
                             "figure, preset and every option given)")
    parser.add_argument("--no-progress", action="store_true")
    _where_arguments(parser)


def _names(allowed: tuple[str, ...]) -> Names:
    return Names(allowed)


def _parse_spans(text: str) -> tuple[tuple[int, int] | None, ...]:
    spans: list[tuple[int, int] | None] = []
    for part in text.split(","):
        if part.strip() == "all":
            spans.append(None)
            continue
        try:
            low, high = (int(v) for v in part.split(":"))
        except ValueError:
            low = high = 0
        if not 1 <= low < high:
            raise ValueError(f"must be 'all' or ranges LO:HI with 1 <= LO < HI, got {part!r}")
        spans.append((low, high))
    return tuple(spans)


MAX_WIDTH = 4096
# The options' validators (sltcheck.cli.options: each declares its domain, which tests/test_bad_input.py reads).
_widths = Numbers(Integer(1, MAX_WIDTH), increasing=True)
_spans = Checked(_parse_spans, "'all' or width ranges LO:HI with 1 <= LO < HI, comma-separated", "all")
_fraction = Number(0, 1, high_open=True)
_seconds = Number(0, 1e7, low_open=True)
_positive_count = Integer(1, 100_000)
_non_negative = SEED
_positive = WORKERS
