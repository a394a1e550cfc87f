"""Ctrl-C always ends a command with exit status 130 (issue 42: one Ctrl-C in 12 landed in
Hypothesis's garbage-collector callback, where Python drops the KeyboardInterrupt, and the run
went on to exit 0). Each case starts a command in a subprocess, waits until it stands at the point
named, sends SIGINT and expects 130, the one "interrupted" line and no traceback."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from package_env import ENV

from sltcheck.cli.interrupts import watching

# `sltcheck widths` whose calculation first stands at POINT (writing MARKER when it is there), then works
# for 20 s: an interrupt that is dropped instead of ending the command shows as that wait, then exit 0.
CHILD = textwrap.dedent("""
    import gc, signal, sys, time
    from pathlib import Path

    signal.signal(signal.SIGINT, signal.default_int_handler)  # as an interactive shell starts a command
    from sltcheck import cli
    from sltcheck.pruning import widths

    marker, point, calculate = Path(sys.argv[1]), sys.argv[2], widths.widths

    def there():
        if not marker.exists():
            marker.write_text("there")
            time.sleep(30)  # SIGINT arrives here

    def collecting(phase, info):  # a callback like Hypothesis's (it times every collection)
        if phase == "start":
            there()

    class Finalised:
        def __del__(self):
            there()

    def work(*args, **kwargs):
        if point == "in a gc callback" or point == "in a gc callback at the end":
            gc.callbacks.insert(0, collecting)
            gc.collect()
        elif point == "in a finaliser":
            Finalised()
        elif point == "in the work":
            marker.write_text("there")
        if point != "in a gc callback at the end" and not marker.read_text().endswith("worked"):
            marker.write_text("there, worked")
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                sum(range(1000))
        return calculate(*args, **kwargs)

    widths.widths = work
    sys.exit(cli.main(["widths", "--eps", "0.1", "--heads", "1", "--d1", "1"]))
""")


@pytest.mark.parametrize("point", ["in the work", "in a gc callback", "in a finaliser", "in a gc callback at the end"])
def test_ctrl_c_ends_a_command_with_130_wherever_it_lands(point: str, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    process = subprocess.Popen([sys.executable, "-c", CHILD, str(marker), point], env=ENV, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert marker.exists(), process.communicate()
        time.sleep(0.1)  # into the sleep at the point
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=50)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, (out, err)
    assert "Traceback" not in err, err
    assert "Exception ignored" not in err, err
    assert [line for line in err.splitlines() if line.strip()] == [
        "interrupted: finished results are kept; rerun the same command to resume"], err


def test_watching_leaves_other_dropped_exceptions_and_the_handler_as_they_were() -> None:
    # Python's own handler, as in a command started from a shell (a background job's test run ignores SIGINT)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    seen: list[BaseException] = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: seen.append(unraisable.exc_value)
    try:
        with watching() as interrupts:
            assert signal.getsignal(signal.SIGINT) == interrupts.handle

            class Failing:
                def __del__(self) -> None:
                    raise ValueError("dropped")

            Failing()
            assert [str(e) for e in seen] == ["dropped"]
            assert not interrupts.seen
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        sys.unraisablehook = previous
        signal.signal(signal.SIGINT, handler)
