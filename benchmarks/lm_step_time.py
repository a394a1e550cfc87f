"""Time per training step, edge-popup vs dense GPT-2 (same as ``sltcheck bench lm-step``).

Usage: ``python benchmarks/lm_step_time.py [--preset cpu-tiny] [--out FILE]``.
"""

from __future__ import annotations

import sys

from sltcheck.cli import CommandLine
from sltcheck.cli import lm as lm_cli


def main(argv: list[str]) -> int:
    cli = CommandLine()
    lm_cli.register(cli)
    args = cli.parser.parse_args(["bench", "lm-step", *argv])
    return int(args.handler(args) or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
