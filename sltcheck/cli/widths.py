"""``sltcheck widths`` (the width calculator) and ``sltcheck calibrate`` (Lemma 7's constant C)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

MAX_CLI_BLOCKS = 200
MAX_NUMBER = 1e150  # alpha and C: the sensitivities double them and the formulas square them
MAX_TRIALS = 10_000_000  # Lemma 7's trials: ~1e4 per second per core


def handle_probability(args: argparse.Namespace) -> int:
    """``sltcheck widths --frequencies`` / ``--allocation``: the probability halves of the theorems."""
    from sltcheck.errors import UsageError
    from sltcheck.jsonfiles import write_json_atomic
    from sltcheck.pruning import allocation, calibration, probability
    from sltcheck.rundir import ensure_writable_file
    from sltcheck.schema import SCHEMA_VERSION, json_safe

    if args.out:
        ensure_writable_file(args.out)
    result: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if args.allocation:
        result["allocation"] = allocation.check_all()
        print(allocation.format_table(result["allocation"]), end="\n\n")
    if args.frequencies:
        from sltcheck.executors import make_executor

        try:
            C = None if args.calibrated in (None, "default") else calibration.load_C(args.calibrated)
            with make_executor(args.workers, args.scheduler, args.cluster) as executor:
                executor.connect()
                result["probability"] = probability.run(args.profile, args.seed, C, executor,
                                                        progress=lambda line: print(line, file=sys.stderr))
        except ValueError as error:
            raise UsageError(str(error)) from None
        print(probability.format_tables(result["probability"]))
    if args.out:
        write_json_atomic(args.out, json_safe(result))
        print(f"written to {args.out}")
    return 0


def validate_widths(args: argparse.Namespace) -> None:
    from sltcheck.errors import UsageError

    if args.frequencies or args.allocation:
        return
    if args.eps is None or args.heads is None or args.d1 is None:
        raise UsageError("--eps, --heads and --d1 are required (unless --frequencies or --allocation)")
    if args.C is not None and args.calibrated is not None:
        raise UsageError("--C / --calibrated: give at most one of them")


def handle_widths(args: argparse.Namespace) -> int:
    from sltcheck.errors import UsageError
    from sltcheck.jsonfiles import dumps, write_json_atomic
    from sltcheck.pruning import calibration, widths
    from sltcheck.rundir import ensure_writable_file
    from sltcheck.schema import SCHEMA_VERSION, json_safe

    if args.frequencies or args.allocation:
        return handle_probability(args)
    validate_widths(args)
    if args.out:
        ensure_writable_file(args.out)
    try:
        if args.calibrated is not None:
            C = calibration.load_C(None if args.calibrated == "default" else args.calibrated)
            source = calibration.STORED_SOURCE if args.calibrated == "default" else args.calibrated
        else:
            C = 1.0 if args.C is None else args.C
            source = "--C" if args.C is not None else "default C = 1"
        params = dict(eps=args.eps, H=args.heads, d1=args.d1, d2=args.d2, alpha=args.alpha, L=args.layers,
                      B=args.blocks, C=C)
        result = widths.widths(**params)
        result["growth"] = widths.growth(**params)
        result["C_source"] = source
    except ValueError as error:
        raise UsageError(str(error)) from None
    document = json_safe({"schema_version": SCHEMA_VERSION, **result})  # strict: an overflowing log is "inf"
    if args.out:
        write_json_atomic(args.out, document, indent=2)
    if args.json:
        print(dumps(document, indent=2))
        return 0
    p = result["parameters"]
    print(f"eps={p['eps']} H={p['H']} d1={p['d1']} d2={p['d2']} alpha={p['alpha']:.6g} L={p['L']} B={p['B']} "
          f"C={p['C']:.6g} ({source})")
    print(widths.table(result))
    print("\nsensitivities d n / d log(p):")
    for name, row in result["growth"]["derivative"].items():
        print(f"  {name:<22}" + "  ".join(f"{k}={v:.4g}" for k, v in row.items()))
    print("\nwidths (real bounds) when a parameter doubles:")
    for change, row in result["growth"]["doubled"].items():
        print(f"  {change:<8}" + "  ".join(f"{k.split('.')[-1]}={v:.2f}" for k, v in row.items()))
    if args.out:
        print(f"written to {args.out}")
    return 0


def handle_calibrate(args: argparse.Namespace) -> int:
    from sltcheck.errors import UsageError
    from sltcheck.jsonfiles import write_json_atomic
    from sltcheck.pruning import calibration
    from sltcheck.rundir import ensure_writable_file
    from sltcheck.schema import SCHEMA_VERSION, json_safe

    if args.out:
        ensure_writable_file(args.out)
    try:
        result = calibration.calibrate(trials=args.trials, seed=args.seed, n_max=args.n_max,
                                       decay_trials=args.decay_trials)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if args.out:
        write_json_atomic(args.out, json_safe({"schema_version": SCHEMA_VERSION, **result}), indent=2)
    for row in result["configs"]:
        interval = ", ".join("none" if c is None else f"{c:.3f}" for c in row["C_interval"])
        print(f"d1={row['d1']} d2={row['d2']} eps={row['eps']}: n'={row['n_prime']} C={row['C']} "
              f"[{interval}] (point {row['C_point']})")
    print(f"universal C (max over configurations): {result['C']}")
    if result["decay"]:
        d = result["decay"]
        print(f"decay: log E[error] slope {d['fit_log_mean']['slope']:.3f}/n', median slope "
              f"{d['fit_log_median']['slope']:.3f}/n', E[log error] slope {d['fit_mean_log']['slope']:.3f}/n' "
              f"(Lueker 2^-n': {d['lueker_slope']:.3f})")
    if args.out:
        print(f"written to {args.out}")
    return 0


def register(cli: Any) -> None:
    cli.command("widths", "source widths required by Theorems 3/9, 11 and 6/14", handle_widths,
                arguments=_widths_arguments, validate=validate_widths)
    cli.command("calibrate", "estimate Lemma 7's constant C from the exact subset-sum construction",
                handle_calibrate, arguments=_calibrate_arguments)


def _calibration_file(text: str) -> str:
    from sltcheck.pruning import calibration

    if text != "default":
        calibration.load_C(text)
    return text


def _widths_arguments(sub: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import JSON_OUT, SCHEDULER, SEED, WORKERS, Checked, Choice, Integer, Number
    from sltcheck.pruning.widths import MAX_SIZE

    # The sensitivities double every parameter: the largest values are half of what the formulas take.
    size = Integer(1, MAX_SIZE // 2)
    sub.add_argument("--eps", type=Number(0, 1, low_open=True, high_open=True), default=None,
                     help="target error, in (0, 1)")
    sub.add_argument("--heads", type=size, default=None, help="number of heads H")
    sub.add_argument("--d1", type=size, default=None, help="input dimension d1")
    sub.add_argument("--d2", type=size, default=None, help="output dimension d2 (default d1)")
    sub.add_argument("--alpha", type=Number(0, MAX_NUMBER, low_open=True), default=None,
                     help="token norm bound (default max(sqrt d1, sqrt d2))")
    sub.add_argument("--layers", type=size, default=1, help="FC layers L (Theorems 11, 14)")
    sub.add_argument("--blocks", type=Integer(2, MAX_CLI_BLOCKS), default=None,
                     help=f"blocks B from 2 to {MAX_CLI_BLOCKS} (Theorem 14; the per-block table grows as B^2)")
    sub.add_argument("--C", type=Number(0, MAX_NUMBER, low_open=True), default=None, help="the constant C (default 1)")
    sub.add_argument("--calibrated", nargs="?", const="default", default=None, metavar="FILE",
                     type=Checked(_calibration_file, "a JSON file written by sltcheck calibrate", "default"),
                     help="use the calibrated C (from FILE written by 'sltcheck calibrate', or the stored default)")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub.add_argument("--frequencies", action="store_true",
                     help="success frequencies at the prescribed widths, width slack and the C trend")
    sub.add_argument("--allocation", action="store_true",
                     help="the proofs' allocation of eps, in exact rationals, as written and corrected")
    sub.add_argument("--profile", type=Choice(("ci", "full")), default="ci",
                     help="grid and trials of --frequencies (full: ~the opt-in grid, run it with --workers)")
    sub.add_argument("--seed", type=SEED, default=0, help="seed of --frequencies")
    sub.add_argument("--out", type=JSON_OUT, default=None, help="JSON output file (the widths, or --frequencies / "
                                                                "--allocation)")
    sub.add_argument("--workers", type=WORKERS, default=None, help="local processes (or Dask workers with --cluster)")
    where = sub.add_mutually_exclusive_group()
    where.add_argument("--cluster", choices=["local"], default=None, help="a Dask LocalCluster of --workers workers")
    where.add_argument("--scheduler", type=SCHEDULER, default=None, help="an existing Dask scheduler address")


def _calibrate_arguments(cal: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import JSON_OUT, SEED, Integer
    from sltcheck.pruning import calibration

    cal.add_argument("--trials", type=Integer(1, MAX_TRIALS), default=calibration.DEFAULT_TRIALS)
    cal.add_argument("--seed", type=SEED, default=calibration.DEFAULT_SEED)
    cal.add_argument("--n-max", type=Integer(1, 48), default=calibration.DEFAULT_N_MAX, help="largest n' scanned")
    cal.add_argument("--decay-trials", type=Integer(0, MAX_TRIALS), default=calibration.DECAY_TRIALS)
    cal.add_argument("--out", type=JSON_OUT, default=None, help="JSON output file")
