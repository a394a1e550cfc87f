"""``sltcheck report``: build the HTML bound report (running the quick checks first if asked).

Without ``--in`` it runs the quick checks and the quick reproductions into ``RUNS/quick`` (one
directory per command), so a rerun resumes them where they stopped and reuses what finished;
Ctrl-C stops it at once (exit 130), keeping what finished.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sltcheck.extras import available

QUICK_REPRODUCTIONS = ("fig4", "fig5", "fig6")
# The directory under --runs that the quick runs fill: the same on every rerun, so a rerun resumes.
QUICK_RUN = "quick"
# How long the quick start took on 2 busy cores (load 3.5-8): the measurement issue 43 reports.
QUICK_MINUTES = 17
INTERRUPTED = 130
# Statuses of a step after which the next one runs: done, or a finding that needs attention
# (``sltcheck check`` exits 1 while a variant is violated; its findings are written).
CARRY_ON = (0, 1)


class StepFailed(Exception):
    """A quick run stopped (interrupted, or a bad input or output): ``status`` is its exit status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _step(argv: list[str]) -> None:
    """Run one ``sltcheck`` command; stop the report where it did not finish."""
    from sltcheck.cli import main

    print(f"== sltcheck {' '.join(argv)}")
    status = main(argv)
    if status not in CARRY_ON:
        raise StepFailed(status)


def _run_quick(run_root: Path, with_lm: bool, workers: int) -> list[str]:
    """The quick checks and quick reproductions, each into its own run directory under ``run_root``."""
    produced = []
    check_dir = run_root / "check"
    _step(["check", "--profile", "ci", "--workers", str(workers), "--out", str(check_dir)])
    produced.append(str(check_dir))
    if not available("torch"):
        print("skipping the quick reproductions (Figures 4-6 and 8): they need torch, which is not installed: "
              "pip install 'sltcheck[repro]'", file=sys.stderr)
        return produced
    for figure in QUICK_REPRODUCTIONS:
        out = run_root / figure
        _step(["repro", figure, "--preset", "quick", "--workers", str(workers), "--out", str(out)])
        produced.append(str(out))
    if with_lm:
        out = run_root / "fig8"
        _step(["repro", "fig8", "--preset", "cpu-tiny", "--out", str(out)])
        produced.append(str(out))
    return produced


def handle(args: argparse.Namespace) -> int:
    from sltcheck.report import page as report
    from sltcheck.report.inputs import note_label
    from sltcheck.report.labels import closing_line
    from sltcheck.rundir import ensure_writable_directory, ensure_writable_file

    if args.out is not None:
        ensure_writable_file(args.out)
    else:
        ensure_writable_directory("reports", "the reports directory")
    inputs = list(args.inputs or [])
    if not inputs:
        try:
            inputs = _run_quick(Path(args.runs) / QUICK_RUN, args.lm, args.workers)
        except StepFailed as stopped:
            if stopped.status == INTERRUPTED:
                print(f"report: interrupted; rerun the same command to resume {Path(args.runs) / QUICK_RUN}",
                      file=sys.stderr)
            else:
                print("report: not written: a quick run above stopped", file=sys.stderr)
            return stopped.status
    loaded = report.load_inputs(inputs)
    content = report.build(loaded, label=args.label)
    path = report.write(content, args.out)
    print()
    print(closing_line(content["glance"]))
    for note in loaded.get("notes", []):
        print(f"{note_label(note)}: {note}")
    print(f"report: {path.resolve()}")
    print(f"json:   {path.with_suffix('.json').resolve()}")
    return 0


def register(cli) -> None:  # sltcheck.cli.CommandLine
    from sltcheck.cli.options import OUT_DIRECTORY, WORKERS, InputPath, OutputPath, Text

    parser = cli.command(
        "report", "write the self-contained HTML bound report (without --in: run the quick checks and quick "
        f"reproductions first, into RUNS/{QUICK_RUN}: about {QUICK_MINUTES} min on 2 busy cores; a rerun "
        "resumes them, Ctrl-C stops with exit 130)", handle)
    parser.add_argument("--in", dest="inputs", nargs="+", metavar="RUN_DIR", type=InputPath("path"),
                        help="run directories or files (findings.json, summary.json, results.json)")
    parser.add_argument("--out", type=OutputPath("file", (".html",)), default=None,
                        help="HTML file (default: reports/sltcheck-report-DATE.html)")
    parser.add_argument("--runs", type=OUT_DIRECTORY, default="runs",
                        help=f"where the quick runs go when --in is not given (RUNS/{QUICK_RUN}/check, "
                             f"RUNS/{QUICK_RUN}/fig4, ...; a rerun resumes them; give another --runs to start afresh)")
    parser.add_argument("--workers", type=WORKERS, default=1, metavar="N",
                        help="processes for the quick check's units and the reproductions' sources (default 1)")
    parser.add_argument("--lm", action="store_true", help="also run the cpu-tiny GPT-2 Figure 8 sweep")
    parser.add_argument("--label", type=Text(200), default="sltcheck bound report")
