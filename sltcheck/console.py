"""What the commands print: logging at the chosen verbosity and one progress bar per statement.

``-q`` leaves warnings only (no bars, no tables); the default adds the results and the bars;
``-v`` adds a line per variant and mutant. Results go to stdout, bars to stderr.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

LOG = logging.getLogger("sltcheck")


class _StdoutHandler(logging.StreamHandler):
    """Results on stdout; a closed pipe (``| head``) ends the command (one line, from
    :func:`sltcheck.cli.main`) instead of a logging traceback per line."""

    def handleError(self, record: logging.LogRecord) -> None:
        if isinstance(sys.exc_info()[1], BrokenPipeError):
            raise  # re-raise the error being handled
        super().handleError(record)


def configure(verbosity: int) -> None:
    """-1 (``-q``): warnings; 0: results and progress; 1 (``-v``): every step."""
    level = {-1: logging.WARNING, 0: logging.INFO}.get(verbosity, logging.DEBUG)
    for handler in list(LOG.handlers):
        LOG.removeHandler(handler)
    handler = _StdoutHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(message)s"))
    LOG.addHandler(handler)
    LOG.setLevel(level)
    LOG.propagate = False


def add_verbosity(parser: Any) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=-1, default=0,
                       help="warnings only: no progress bars, no tables")
    group.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const=1,
                       help="also a line per variant and mutant")


class StatementProgress:
    """One tqdm bar for a statement's work: its variants' examples and search evaluations and its mutants.

    Each task (a variant, a mutant) is given a planned share of the bar; ticks inside a task
    stop at its share and the task's end fills it, so the bar never runs ahead of finished work
    and its rate (examples/s: every instance evaluated) and ETA come from tqdm.
    """

    def __init__(self, name: str, planned: list[int], enabled: bool) -> None:
        from tqdm import tqdm

        self._bar = tqdm(total=sum(planned), desc=f"{name:<10}", unit=" ex", unit_scale=True, disable=not enabled,
                         file=sys.stderr, mininterval=0.5 if sys.stderr.isatty() else 30.0, dynamic_ncols=True,
                         leave=True)
        self._limit = 0

    def task(self, label: str, planned: int) -> None:
        """Start a task whose share of the bar is ``planned`` (the previous one is filled)."""
        self.finish_task()
        self._limit = self._bar.n + planned
        self._bar.set_postfix_str(label, refresh=False)

    def tick(self) -> None:
        if self._bar.n < self._limit:
            self._bar.update(1)

    def finish_task(self) -> None:
        if self._bar.n < self._limit:
            self._bar.update(self._limit - self._bar.n)

    def close(self) -> None:
        self.finish_task()
        self._bar.set_postfix_str("done", refresh=False)
        self._bar.close()
