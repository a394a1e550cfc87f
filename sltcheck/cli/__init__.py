"""The ``sltcheck`` command line.

Each feature module contributes its commands through a ``register(cli)``
function; :class:`CommandLine` hands out top-level commands (``check``) and
grouped ones (``repro fig4``, ``bench solvers``) so modules never touch each
other's parsers.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

# Modules that register commands; each defines register(cli: CommandLine).
COMMAND_MODULES: tuple[str, ...] = (
    "sltcheck.cli.check",
    "sltcheck.cli.repro",
    "sltcheck.cli.report",
    "sltcheck.cli.bench",
    "sltcheck.cli.lm",
    "sltcheck.cli.widths",
)

Handler = Callable[[argparse.Namespace], int]


class CommandLine:
    def __init__(self) -> None:
        self.parser = argparse.ArgumentParser(
            prog="sltcheck",
            description="Executable checks of the strong lottery ticket hypothesis for "
            "multi-head attention (Otsuka et al., AAAI 2026).",
        )
        self._top = self.parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
        self._groups: dict[str, argparse._SubParsersAction] = {}

    def command(self, name: str, help: str, handler: Handler, group: str | None = None) -> argparse.ArgumentParser:
        """Add ``sltcheck NAME`` (or ``sltcheck GROUP NAME``) running ``handler``."""
        parent = self._top if group is None else self._group(group)
        sub = parent.add_parser(name, help=help, description=help)
        sub.set_defaults(handler=handler)
        return sub

    def _group(self, group: str) -> argparse._SubParsersAction:
        if group not in self._groups:
            helps = {"repro": "reproduce the paper's experiments", "bench": "run a benchmark"}
            sub = self._top.add_parser(group, help=helps.get(group, group))
            self._groups[group] = sub.add_subparsers(dest=f"{group}_command", metavar="NAME", required=True)
        return self._groups[group]


def build_parser() -> argparse.ArgumentParser:
    cli = CommandLine()
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(cli)
    return cli.parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("\ninterrupted: finished results are kept; rerun the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
