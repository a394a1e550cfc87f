"""Overhead of Dask: the quick Figure 4 preset on a 2-worker LocalCluster vs locally.

Runs ``preset_config('fig4', 'quick', 'theory')`` into fresh run directories,
side by side in one process, after an untimed warm-up run in the driver:
in-process (the default executor; with torch's default threads and with one
thread, as workers run), on 2 local processes, and on a Dask LocalCluster of 2
single-threaded workers (its start-up timed separately). Every timing includes
building (training) the target on the driver. Prints each wall time and its
overhead against in-process with one thread, and checks that all stores hold
the same records.

Usage: ``python benchmarks/cluster_overhead.py [--workers 2] [--figure fig4]``
(needs ``sltcheck[cluster]``). A benchmark, not a test: timings depend on the
machine and its load.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import torch

from sltcheck.executors import DaskExecutor, Executor, InProcessExecutor, ProcessExecutor
from sltcheck.repro import synthetic


def _records(run_dir: Path) -> list[tuple[str, object]]:
    with sqlite3.connect(run_dir / "results.sqlite") as db:
        rows = list(db.execute("SELECT key, record FROM results ORDER BY key"))
    cleaned = []
    for key, record in rows:
        payload = json.loads(record)
        for r in payload["records"]:
            r.pop("seconds")
        cleaned.append((key, payload))
    return cleaned


def _timed(config: synthetic.SweepConfig, out: Path, executor: Executor) -> float:
    started = time.perf_counter()
    synthetic.run(config, str(out), progress=False, executor=executor)
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--figure", choices=synthetic.FIGURES, default="fig4")
    args = parser.parse_args(argv)
    config = synthetic.preset_config(args.figure, "quick", "theory")
    units = config.sources * len(config.widths) * len(config.blocks)
    print(f"{args.figure} quick preset (theory): {units} sources, {config.test_samples} test sequences, "
          f"target trained for {config.target_epochs if config.train_target else 0} epochs on the driver")
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        # warm-up (untimed): the driver's one-time imports and torch/mpmath set-up, so no executor pays them
        warm = synthetic.preset_config(args.figure, "quick", "theory", widths=config.widths[:1], sources=1,
                                       test_samples=20, target_epochs=1)
        synthetic.run(warm, str(root / "warm-up"), progress=False)
        threads = torch.get_num_threads()
        times[f"in-process ({threads} torch threads)"] = _timed(config, root / "in-process", InProcessExecutor())
        torch.set_num_threads(1)  # as every worker runs
        times["in-process (1 torch thread)"] = _timed(config, root / "in-process-1", InProcessExecutor())
        torch.set_num_threads(threads)
        with ProcessExecutor(args.workers) as processes:
            times[f"{args.workers} local processes"] = _timed(config, root / "processes", processes)
        started = time.perf_counter()
        with DaskExecutor(local_workers=args.workers) as dask:
            dask.client.wait_for_workers(args.workers, timeout=300)
            dask.check_versions()
            startup = time.perf_counter() - started
            times[f"LocalCluster, {args.workers} workers"] = _timed(config, root / "dask", dask)
        same = (_records(root / "in-process") == _records(root / "in-process-1") == _records(root / "processes")
                == _records(root / "dask"))
    baseline = times["in-process (1 torch thread)"]
    print(f"{'executor':<32} {'seconds':>8} {'vs in-process, 1 thread':>24}")
    for name, seconds in times.items():
        print(f"{name:<32} {seconds:>8.2f} {seconds - baseline:>+15.2f} s {seconds / baseline:>5.2f}x")
    print(f"(LocalCluster start-up, not included above: {startup:.2f} s)")
    print(f"identical stores (without timing): {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
