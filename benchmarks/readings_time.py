"""Wall and CPU time of ``sltcheck repro readings``, run the way a user runs it (a fresh process,
a fresh folder that is deleted afterwards).

Usage: ``python benchmarks/readings_time.py [READINGS OPTIONS ...]``; the default is the quick
Figure 4 grid the README times: ``fig4 --workers 2`` (12 readings, 5 sources, widths 4..32).
Prints one line: the options, the wall seconds, the CPU seconds of the whole process tree, the
machine's load before and after (other jobs inflate the wall time, not the CPU time).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def main(argv: list[str]) -> int:
    options = argv or ["fig4", "--workers", "2"]
    folder = tempfile.mkdtemp(prefix="sltcheck-readings-")
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "sltcheck", "repro", "readings", *options, "--out",
                               os.path.join(folder, "run"), "--no-progress"], stdout=subprocess.DEVNULL)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    wall = time.perf_counter() - began
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"repro readings {' '.join(options)}: exit {done.returncode}, wall {wall:.1f} s, "
          f"CPU {usage.ru_utime + usage.ru_stime:.1f} s, load {load_before:.1f} -> {os.getloadavg()[0]:.1f}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
