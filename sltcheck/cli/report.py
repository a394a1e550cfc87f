"""``sltcheck report``: build the HTML bound report (running the quick checks first if asked)."""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from pathlib import Path

from sltcheck.extras import available

QUICK_REPRODUCTIONS = ("fig4", "fig5", "fig6")


def _run_quick(run_root: Path, with_lm: bool) -> list[str]:
    """The quick checks and quick reproductions, each into its own run directory."""
    from sltcheck.cli import main

    produced = []
    check_dir = run_root / "check"
    print(f"== sltcheck check --profile ci --out {check_dir}")
    main(["check", "--profile", "ci", "--out", str(check_dir)])
    produced.append(str(check_dir))
    if not available("torch"):
        print("skipping the quick reproductions (Figures 4-6 and 8): they need torch, which is not installed: "
              "pip install 'sltcheck[repro]'", file=sys.stderr)
        return produced
    for figure in QUICK_REPRODUCTIONS:
        out = run_root / figure
        print(f"== sltcheck repro {figure} --preset quick --out {out}")
        main(["repro", figure, "--preset", "quick", "--out", str(out)])
        produced.append(str(out))
    if with_lm:
        out = run_root / "fig8"
        print(f"== sltcheck repro fig8 --preset cpu-tiny --out {out}")
        main(["repro", "fig8", "--preset", "cpu-tiny", "--out", str(out)])
        produced.append(str(out))
    return produced


def handle(args: argparse.Namespace) -> int:
    from sltcheck.report import page as report
    from sltcheck.report.inputs import note_label
    from sltcheck.rundir import ensure_writable_directory, ensure_writable_file

    if args.out is not None:
        ensure_writable_file(args.out)
    else:
        ensure_writable_directory("reports", "the reports directory")
    inputs = list(args.inputs or [])
    if not inputs:
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        inputs = _run_quick(Path(args.runs) / stamp, args.lm)
    loaded = report.load_inputs(inputs)
    content = report.build(loaded, label=args.label)
    path = report.write(content, args.out)
    glance = content["glance"]
    print(f"\n{glance['held']} of {glance['statements_checked']} statement variants held; "
          f"{glance['synthetic_violations']} reproduction violations.")
    for note in loaded.get("notes", []):
        print(f"{note_label(note)}: {note}")
    print(f"report: {path.resolve()}")
    print(f"json:   {path.with_suffix('.json').resolve()}")
    return 0


def register(cli) -> None:  # sltcheck.cli.CommandLine
    from sltcheck.cli.options import OUT_DIRECTORY, InputPath, OutputPath, Text

    parser = cli.command(
        "report", "write the self-contained HTML bound report (without --in: run the quick checks "
        "and quick reproductions first)", handle)
    parser.add_argument("--in", dest="inputs", nargs="+", metavar="RUN_DIR", type=InputPath("path"),
                        help="run directories or files (findings.json, summary.json, results.json)")
    parser.add_argument("--out", type=OutputPath("file", (".html",)), default=None,
                        help="HTML file (default: reports/sltcheck-report-DATE.html)")
    parser.add_argument("--runs", type=OUT_DIRECTORY, default="runs",
                        help="where the quick runs go when --in is not given")
    parser.add_argument("--lm", action="store_true", help="also run the cpu-tiny GPT-2 Figure 8 sweep")
    parser.add_argument("--label", type=Text(200), default="sltcheck bound report")
