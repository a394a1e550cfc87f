"""Worker processes for :func:`sltcheck.pruning.subset_sum.solve_subset_sum` with ``workers`` > 1.

The problems are split in contiguous chunks, each solved on its own in a spawned process; the pools
are kept for the next call (a start costs about a second) and shut down at exit.
"""

from __future__ import annotations

import atexit
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from sltcheck.pruning.solver_types import MIPOptions, SubsetSumResult

_POOLS: dict[int, ProcessPoolExecutor] = {}  # worker processes by count, started once: a start costs ~1 s


def _pool(workers: int) -> ProcessPoolExecutor:
    """The pool of ``workers`` spawned processes, started on first use and kept."""
    if workers not in _POOLS:
        # spawn: a forked child would inherit numba's and BLAS's threads in an unknown state
        _POOLS[workers] = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        if len(_POOLS) == 1:
            atexit.register(_close_pools)
    return _POOLS[workers]


def _close_pools() -> None:
    """Shut every kept pool down (at exit)."""
    for pool in _POOLS.values():
        pool.shutdown(cancel_futures=True)
    _POOLS.clear()


def run_in_processes(
    run: Callable[..., SubsetSumResult], solver: str, w: np.ndarray, a: np.ndarray, options: MIPOptions,
    return_mp: bool, dps: int, workers: int,
) -> SubsetSumResult:
    """``run`` on ``workers`` contiguous chunks of the problems in worker processes, joined in order
    (``run`` is pickled by name: a module-level function)."""
    start = time.perf_counter()
    chunks = [c for c in np.array_split(np.arange(w.size), min(workers, w.size)) if c.size]
    futures = [_pool(workers).submit(run, solver, w[c], a[c], options, return_mp, dps) for c in chunks]
    parts = [future.result() for future in futures]
    join = np.concatenate
    return SubsetSumResult(
        masks=join([p.masks for p in parts]),
        errors=join([p.errors for p in parts]),
        proven_optimal=join([p.proven_optimal for p in parts]),
        optimality_exact=parts[0].optimality_exact,
        solver=solver,
        wall_time=time.perf_counter() - start,
        problem_times=join([p.problem_times for p in parts]),
        solver_objective=join([p.solver_objective for p in parts]),
        errors_mp=tuple(e for p in parts for e in (p.errors_mp or ())) if return_mp else None,
        exact_errors=tuple(e for p in parts for e in p.exact_errors),
        certificates=tuple(c for p in parts for c in p.certificates),
        floors=tuple(f for p in parts for f in p.floors),
        lower_bounds=tuple(b for p in parts for b in p.lower_bounds),
    )
