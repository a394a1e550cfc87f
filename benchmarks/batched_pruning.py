"""A whole source pruned by Lemma 7: its subset-sum problems one by one vs batched vs in processes.

For each width n' (candidates per problem) a target MHA (one head, d_in = d_out =
d_K = d_V = d) and a theory source with n_K = n_V = d n' are drawn; pruning it
solves d^2 problems for W_QK and d^2 for W_VO. Side by side in one process, on
the same source:

* ``one-by-one``: every entry's problem its own ``solve_subset_sum`` call (the
  construction with its batch split up);
* ``batched``: one call per matrix, all its d^2 problems at once (the default);
* ``workers=N``: the same calls, the problems shared by N worker processes (the
  pool is started, untimed, before).

Each line gives the wall time of the whole ``prune`` (masks and the errors
recomputed in mpmath), the time inside the subset-sum solver, and the
per-problem solver time; every mode must give the same masks (checked). The
machine's load average is printed with the numbers: a benchmark, not a test.

Usage: ``python benchmarks/batched_pruning.py [--d 8] [--widths 32,256,1024]
[--solver fast] [--workers 2] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from sltcheck.pruning import construction, product_approximation, sources
from sltcheck.pruning.subset_sum import solve_subset_sum


def _one_by_one(solver_time: list[float]) -> Callable[..., Any]:
    """solve_subset_sum with its batch split into single problems (the same arguments otherwise)."""
    from sltcheck.pruning import subset_sum

    def solve(targets: np.ndarray, candidates: np.ndarray, solver: str, **kwargs: Any) -> Any:
        parts = []
        for p in range(targets.size):
            tick = time.perf_counter()
            parts.append(solve_subset_sum(targets[p:p + 1], candidates[p:p + 1], solver, **kwargs))
            solver_time[0] += time.perf_counter() - tick
        return subset_sum.SubsetSumResult(
            masks=np.concatenate([r.masks for r in parts]),
            errors=np.concatenate([r.errors for r in parts]),
            proven_optimal=np.concatenate([r.proven_optimal for r in parts]),
            optimality_exact=parts[0].optimality_exact, solver=solver,
            wall_time=sum(r.wall_time for r in parts),
            problem_times=np.concatenate([r.problem_times for r in parts]),
            solver_objective=np.concatenate([r.solver_objective for r in parts]),
            exact_errors=tuple(e for r in parts for e in r.exact_errors),
            certificates=tuple(c for r in parts for c in r.certificates),
            floors=tuple(f for r in parts for f in r.floors),
            lower_bounds=tuple(b for r in parts for b in r.lower_bounds),
        )

    return solve


def _timed_batched(solver_time: list[float]) -> Callable[..., Any]:
    def solve(*args: Any, **kwargs: Any) -> Any:
        tick = time.perf_counter()
        result = solve_subset_sum(*args, **kwargs)
        solver_time[0] += time.perf_counter() - tick
        return result

    return solve


def _prune(target: Any, source: Any, solver: str, workers: int, split: bool) -> tuple[float, float, list[bytes]]:
    solver_time = [0.0]
    original = product_approximation.solve_subset_sum  # what Solve.run calls
    product_approximation.solve_subset_sum = _one_by_one(solver_time) if split else _timed_batched(solver_time)
    try:
        tick = time.perf_counter()
        pruned = construction.prune_mha(target, source, solver, workers=workers)
        total = time.perf_counter() - tick
    finally:
        product_approximation.solve_subset_sum = original
    return total, solver_time[0], [m.tobytes() for m in pruned._mask_arrays()]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=8, help="target width d (d^2 problems per matrix)")
    parser.add_argument("--widths", default="32,256,1024", help="comma-separated n' (candidates per problem)")
    parser.add_argument("--solver", default="fast")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="runs per mode; the median is reported")
    args = parser.parse_args(argv)
    widths = [int(w) for w in args.widths.split(",")]
    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; load average {os.getloadavg()[0]:.2f}; "
          f"{os.cpu_count()} CPUs; python {' '.join(sys.argv)}")
    solve_subset_sum(np.zeros(2), np.ones((2, max(widths))), args.solver, workers=args.workers)  # warm-up, pool start
    target = sources.target_mha(0, heads=1, d_in=args.d, d_key=args.d, d_value=args.d, d_out=args.d)
    print(f"{'n_prime':>7} {'problems':>8} {'mode':<11} {'prune s':>9} {'solver s':>9} {'per problem':>12} "
          f"{'speed-up':>9} {'same masks':>10} {'load':>5}")
    for width in widths:
        source = sources.source_like(target, "theory", 1, n_key=args.d * width, n_value=args.d * width)
        problems = 2 * args.d * args.d
        modes = [("one-by-one", 1, True), ("batched", 1, False), (f"workers={args.workers}", args.workers, False)]
        reference_solver = None
        reference_masks = None
        for name, workers, split in modes:
            runs = [_prune(target, source, args.solver, workers, split) for _ in range(args.repeats)]
            total = statistics.median(r[0] for r in runs)
            solver = statistics.median(r[1] for r in runs)
            masks = runs[0][2]
            reference_solver = reference_solver or solver
            reference_masks = reference_masks or masks
            same = all(r[2] == reference_masks for r in runs)
            print(f"{width:>7} {problems:>8} {name:<11} {total:>9.3f} {solver:>9.3f} {solver / problems:>12.2e} "
                  f"{reference_solver / solver:>8.1f}x {same!s:>10} {os.getloadavg()[0]:>5.2f}", flush=True)
            if not same:
                print("masks differ between modes: this is a bug", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
