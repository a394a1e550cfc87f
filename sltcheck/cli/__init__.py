"""The ``sltcheck`` command line.

Each module here contributes its commands through a ``register(cli)``
function; :class:`CommandLine` hands out top-level commands (``check``) and
grouped ones (``repro fig4``, ``bench solvers``) so modules never touch each
other's parsers. A command's arguments are added by its ``arguments`` function
only when the command is used, and its handler imports what it needs, so
``sltcheck --help`` imports no command's dependencies (torch, scipy, hypothesis).

Every option is checked while it is parsed (:mod:`sltcheck.cli.options`): a bad value is one
line, ``sltcheck: error: --OPTION: ...``, exit status 2, before the command's handler runs.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

# Modules that register commands; each defines register(cli: CommandLine).
COMMAND_MODULES: tuple[str, ...] = (
    "sltcheck.cli.check",
    "sltcheck.cli.repro",
    "sltcheck.cli.report",
    "sltcheck.cli.bench",
    "sltcheck.cli.lm",
    "sltcheck.cli.widths",
    "sltcheck.cli.certify",
)

Handler = Callable[[argparse.Namespace], int]
Arguments = Callable[[argparse.ArgumentParser], None]
Validate = Callable[[argparse.Namespace], None]
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def usage_message(message: str) -> str:
    """argparse's ``argument -q/--quiet: X`` as ``--quiet: X`` (the project's one-line form)."""
    found = re.match(r"argument ([^:]+): (.*)", message, re.S)
    if found:
        name = max(found[1].split("/"), key=len)
        message = f"{name}: {found[2]}"
    return " ".join(message.split())


class _OneLineParser(argparse.ArgumentParser):
    """A parser whose errors are one line on stderr, ``sltcheck: error: --OPTION: ...``, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"sltcheck: error: {usage_message(message)}\n")


class _LazyParser(_OneLineParser):
    """A parser whose arguments are added the first time it parses or prints its help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deferred: list[Arguments] = []

    def defer(self, arguments: Arguments) -> None:
        self._deferred.append(arguments)

    def _build(self) -> None:
        from sltcheck.cli.options import harden

        deferred, self._deferred = self._deferred, []
        for arguments in deferred:
            arguments(self)
        harden(self)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._build()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._build()
        return super().format_help()

    def format_usage(self) -> str:
        self._build()
        return super().format_usage()


class CommandLine:
    def __init__(self) -> None:
        self.parser = _OneLineParser(
            prog="sltcheck",
            description="Executable checks of the strong lottery ticket hypothesis for "
            "multi-head attention (Otsuka et al., AAAI 2026).",
        )
        self._top = self.parser.add_subparsers(
            dest="command", metavar="COMMAND", required=True, parser_class=_LazyParser
        )
        self._groups: dict[str, argparse._SubParsersAction] = {}

    def command(
        self, name: str, help: str, handler: Handler, group: str | None = None, arguments: Arguments | None = None,
        validate: Validate | None = None,
    ) -> argparse.ArgumentParser:
        """Add ``sltcheck NAME`` (or ``sltcheck GROUP NAME``) running ``handler``; ``arguments(parser)``
        adds its arguments when the command is used; ``validate(args)`` checks what needs several
        options at once (or the machine) after parsing, before the handler, raising a UsageError."""
        parent = self._top if group is None else self._group(group)
        # argparse formats a subcommand's help (not its description) with %
        sub = parent.add_parser(name, help=help.replace("%", "%%"), description=help)
        sub.set_defaults(handler=handler, validate=validate)
        if arguments is not None:
            assert isinstance(sub, _LazyParser)
            sub.defer(arguments)
        return sub

    def _group(self, group: str) -> argparse._SubParsersAction:
        if group not in self._groups:
            helps = {"repro": "reproduce the paper's experiments", "bench": "run a benchmark"}
            sub = self._top.add_parser(group, help=helps.get(group, group))
            self._groups[group] = sub.add_subparsers(
                dest=f"{group}_command", metavar="NAME", required=True, parser_class=_LazyParser
            )
        return self._groups[group]


def build_parser() -> argparse.ArgumentParser:
    cli = CommandLine()
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(cli)
    return cli.parser


def complete_parser() -> argparse.ArgumentParser:
    """The parser with every command's arguments added (they are otherwise added when the command is
    used): what the documentation's CLI reference (sphinx-argparse) reads. A command whose arguments
    need a missing extra (the GPT-2 commands without torch) is listed with a note instead."""
    import contextlib
    import io

    from sltcheck.errors import SltcheckError

    parser = build_parser()
    pending = [parser]
    while pending:
        for action in pending.pop()._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    if isinstance(sub, _LazyParser):
                        try:
                            with contextlib.redirect_stderr(io.StringIO()):
                                sub._build()
                        except (SystemExit, SltcheckError):  # its arguments need an extra not installed here
                            sub.description = (f"{sub.description or ''} (Its options are listed where its extra "
                                               f"is installed: {sub.prog} --help.)")
                    pending.append(sub)
    return parser


# Operating-system errors that are the environment's, not a bug: reported as one line.
_ENVIRONMENT_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT,
                                 errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG, errno.EFBIG, errno.EIO})


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Exit status: 0 done, 1 a finding that needs attention (a violation,
    an unrefuted mutant, nothing done), 2 a bad option, input or output (one line on stderr:
    a bad option from the parser, else a :class:`~sltcheck.errors.SltcheckError`, a full or
    read-only disk, a missing extra, a closed output pipe), 130 interrupted. Any other exception
    is a bug and keeps its traceback."""
    from sltcheck.cli.interrupts import watching

    with watching() as interrupts:
        try:
            status = _parse_and_run(argv)
        except KeyboardInterrupt:
            status = EXIT_INTERRUPTED
        interrupts.stop()  # a Ctrl-C from here on is counted, not raised
        if interrupts.seen or status == EXIT_INTERRUPTED:  # a dropped interrupt too (sltcheck.cli.interrupts)
            print("\ninterrupted: finished results are kept; rerun the same command to resume", file=sys.stderr)
            status = EXIT_INTERRUPTED
    return status


def _parse_and_run(argv: Sequence[str] | None) -> int:
    from sltcheck.errors import SltcheckError

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # --help (0) or a bad option (2, its line already printed)
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    except SltcheckError as error:  # a command whose arguments need a missing extra
        return _one_line(str(error))
    try:
        return _dispatch(args)
    except BrokenPipeError:
        # The reader of our output went away (``| head``): no more output, one line on stderr.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return _one_line("standard output was closed before everything was written (broken pipe)")
    except SltcheckError as error:
        return _one_line(str(error))
    except OSError as error:
        if error.errno not in _ENVIRONMENT_ERRNOS:
            raise
        where = f" {str(error.filename)!r}" if error.filename else ""
        return _one_line(f"cannot write or read{where}: {error.strerror or error}")


def _dispatch(args: argparse.Namespace) -> int:
    """The checks that need several options (``validate``), then the command itself."""
    if getattr(args, "validate", None) is not None:
        args.validate(args)
    status = int(args.handler(args) or 0)
    sys.stdout.flush()  # a closed pipe shows here, where it is reported, not at exit
    return status


def _one_line(message: str) -> int:
    print(f"sltcheck: error: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
