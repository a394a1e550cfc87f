"""Ctrl-C always ends a command with exit status 130, even where Python swallows the interrupt.

Python raises ``KeyboardInterrupt`` wherever the main thread is when SIGINT arrives. Where that is a
garbage-collector callback (Hypothesis times every collection with one), a finaliser (``__del__``) or
a weakref callback, the interpreter prints "Exception ignored in ..." and drops the exception: a run
interrupted there went on and exited 0. :func:`watching` therefore

- records every SIGINT before raising ``KeyboardInterrupt`` (so :func:`sltcheck.cli.main` returns 130
  when one arrived, whatever became of the exception);
- raises a dropped one again from a point where it propagates: Python hands a dropped exception to
  ``sys.unraisablehook``, which runs inside the collector, so the hook asks a helper thread to
  interrupt the main thread again a moment later (:data:`REDELIVER_AFTER`); a second drop repeats this.
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

#: Seconds before a dropped interrupt is raised again: long enough for the collector (or finaliser) that
#: dropped it to return, short for a user.
REDELIVER_AFTER = 0.05


class Interrupts:
    """The SIGINTs seen while :func:`watching`; ``stop()`` makes a later one only counted (the
    command is already ending), so it cannot interrupt the line that reports the interruption."""

    def __init__(self) -> None:
        self.seen = 0
        self.raising = True
        self._lock = threading.Lock()

    def stop(self) -> None:
        with self._lock:
            self.raising = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        self.seen += 1
        if self.raising:
            raise KeyboardInterrupt

    def redeliver(self) -> None:
        """Interrupt the main thread again, unless the command is already ending (helper thread)."""
        with self._lock:
            if not self.raising:
                return
            if hasattr(signal, "pthread_kill"):  # a real signal: it also ends a blocking wait
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
            else:
                _thread.interrupt_main(signal.SIGINT)

    def unraisable(self, previous: Any, unraisable: Any) -> None:
        """``sys.unraisablehook``: a dropped interrupt is raised again shortly; anything else as before."""
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and self.seen:
            timer = threading.Timer(REDELIVER_AFTER, self.redeliver)
            timer.daemon = True
            timer.start()
            return
        previous(unraisable)


@contextlib.contextmanager
def watching() -> Iterator[Interrupts]:
    """Watch SIGINT for the duration of a command (only in the main thread, and only where SIGINT has
    Python's default handler: an ignored SIGINT, a background job's, stays ignored)."""
    interrupts = Interrupts()
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield interrupts
        return
    previous_hook = sys.unraisablehook
    signal.signal(signal.SIGINT, interrupts.handle)
    sys.unraisablehook = lambda unraisable: interrupts.unraisable(previous_hook, unraisable)
    try:
        yield interrupts
    finally:
        interrupts.stop()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a pending SIGINT is counted first
        sys.unraisablehook = previous_hook
