"""Where the per-source work of a sweep runs: in-process, local processes, or Dask.

Every executor does one thing, :meth:`Executor.map_unordered`: call
``fn(shared, *args)`` for every ``(key, args)`` task and yield
``(key, result)`` pairs *as they complete*, in any order. The driver (the
process that called it) writes each result to the run directory the moment it
arrives, so results never depend on where or in which order tasks ran, and an
interrupted run resumes exactly as on one machine.

``shared`` is shipped to each worker once, not with every task:

- :class:`InProcessExecutor` calls ``fn`` in the calling process, in order
  (``--workers 1``, the default; monkeypatching and pdb work as usual);
- :class:`ProcessExecutor` runs a spawn-context :class:`~concurrent.futures.ProcessPoolExecutor`
  of N processes (``--workers N``), kept for the next map with the same ``shared``; ``shared``
  travels once per process via the pool's initializer, so ``fn`` must be a picklable top-level function;
- :class:`DaskExecutor` submits one Dask task per key to an existing scheduler
  (``--scheduler tcp://host:8786``) or to a :class:`distributed.LocalCluster` it
  starts (``--cluster local --workers N``). ``shared`` becomes one task of its
  own on which all others depend, so Dask moves it to each worker once and can
  recompute it if every worker holding it dies. A worker that dies mid-task
  has its tasks rescheduled by Dask; the driver sees exactly one result per key.

Workers must import the same ``sltcheck`` and the same numerical libraries as
the driver (results are bit-identical only then): :meth:`DaskExecutor.check_versions`
compares them before any work is sent.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Generator, Sequence
from typing import Any, Self

# (key, args): fn(shared, *args) is computed for each.
Task = tuple[str, tuple[Any, ...]]
WorkFunction = Callable[..., Any]

# How long a client waits for a scheduler (--scheduler) to answer before the command is refused.
CONNECT_TIMEOUT = "20s"
# Versions that must agree between the driver and every worker for identical results.
MATCHED_PACKAGES = ("python", "numpy", "scipy", "mpmath", "torch", "sltcheck")


class Executor:
    """Runs tasks and yields their results as they complete; a context manager
    that releases whatever it started (pools, clusters) on exit."""

    description = "executor"

    def map_unordered(self, fn: WorkFunction, shared: Any, tasks: Sequence[Task]) -> Generator[tuple[str, Any]]:
        raise NotImplementedError

    def connect(self) -> None:
        """Start or reach what runs the tasks now, so an unusable one is refused before the command
        writes anything (nothing to do by default)."""

    def close(self) -> None:
        """Release what this executor started (nothing by default)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InProcessExecutor(Executor):
    """Tasks run one after another in the calling process, in the given order."""

    description = "in-process"

    def map_unordered(self, fn: WorkFunction, shared: Any, tasks: Sequence[Task]) -> Generator[tuple[str, Any]]:
        for key, args in tasks:
            yield key, fn(shared, *args)


# --- local processes ------------------------------------------------------------

_WORKER_SHARED: Any = None


PARENT_POLL_SECONDS = 0.5


def die_with_parent(parent: int, poll: float = PARENT_POLL_SECONDS) -> None:
    """End this process as soon as ``parent`` is no longer its parent (the driver died, kill -9
    included: the orphan is re-parented), so no worker outlives its driver."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll)
        os._exit(70)

    threading.Thread(target=watch, name="sltcheck-parent-watch", daemon=True).start()


def _install_shared(shared: Any, parent: int | None = None) -> None:
    """Pool initializer: keep ``shared`` for this process's tasks; die with the driver; one torch
    thread per process (the processes are the parallelism; oversubscribed intra-op threads
    only slow a loaded machine down, and results do not depend on them)."""
    global _WORKER_SHARED
    _WORKER_SHARED = shared
    if parent is not None:
        die_with_parent(parent)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - torch is a dependency
        pass


def _call_with_shared(fn: WorkFunction, args: tuple[Any, ...]) -> Any:
    return fn(_WORKER_SHARED, *args)


class ProcessExecutor(Executor):
    """``workers`` spawned processes on this machine. The pool is kept from one map to the next while the
    ``shared`` value is the same (``sltcheck certify`` maps every round: a spawned process imports sltcheck and
    torch, seconds that a round of boxes does not last), and started afresh for another one, and after a map
    that did not run to its end (a task's error, a dead process, a consumer that stopped early)."""

    def __init__(self, workers: int) -> None:
        if int(workers) < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.workers = int(workers)
        self.description = f"{self.workers} local processes"
        self._pool: Any = None
        self._shared: bytes | None = None  # the pickled ``shared`` the pool's processes hold

    def map_unordered(self, fn: WorkFunction, shared: Any, tasks: Sequence[Task]) -> Generator[tuple[str, Any]]:
        from concurrent.futures import FIRST_COMPLETED, wait

        if not tasks:
            return
        pool = self._pool_holding(shared)
        pending = {pool.submit(_call_with_shared, fn, args): key for key, args in tasks}
        ended = False
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    key = pending.pop(future)
                    yield key, future.result()  # a task's exception (or a dead process) ends the map
            ended = True
        finally:
            if not ended:
                self.close()

    def _pool_holding(self, shared: Any) -> Any:
        import multiprocessing
        import pickle
        from concurrent.futures import ProcessPoolExecutor

        pickled = pickle.dumps(shared)
        if self._pool is None or pickled != self._shared:
            self.close()
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_install_shared, initargs=(shared, os.getpid()))
            self._shared = pickled
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool, self._shared = None, None


# --- Dask distributed -------------------------------------------------------------


def _identity(value: Any) -> Any:
    return value


def _call_shared_first(fn: WorkFunction, shared: Any, *args: Any) -> Any:
    return fn(shared, *args)


def _versions() -> dict[str, str]:
    from sltcheck.versions import versions

    found = versions()
    return {name: found.get(name, "unknown") for name in MATCHED_PACKAGES}


class DaskExecutor(Executor):
    """One Dask task per key on a distributed cluster.

    Exactly one of ``address`` (an existing scheduler, e.g. ``tcp://10.0.0.5:8786``),
    ``client`` (a :class:`distributed.Client` the caller owns and closes) or
    ``local_workers`` (start a :class:`distributed.LocalCluster` of that many
    single-threaded worker processes, closed with this executor).
    """

    def __init__(self, address: str | None = None, *, client: Any = None, local_workers: int | None = None,
                 check_versions: bool = True, silence_logs: int = logging.ERROR) -> None:
        if sum(option is not None for option in (address, client, local_workers)) != 1:
            raise ValueError("give exactly one of address, client or local_workers")
        if local_workers is not None and int(local_workers) < 1:
            raise ValueError(f"workers must be a positive integer, got {local_workers!r}")
        self.address, self.local_workers = address, local_workers
        self._client: Any = client
        self._owned: list[Any] = []
        self._checked = not check_versions
        self.silence_logs = silence_logs
        if address is not None:
            self.description = f"Dask scheduler {address}"
        elif client is not None:
            self.description = "Dask client"
        else:
            self.description = f"Dask LocalCluster of {local_workers} workers"

    @property
    def client(self) -> Any:
        """The :class:`distributed.Client`, connected (or the cluster started) on first use."""
        if self._client is None:
            from distributed import Client, LocalCluster

            if self.address is not None:
                self._client = Client(self.address, timeout=CONNECT_TIMEOUT)
            else:
                cluster = LocalCluster(n_workers=self.local_workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=self.silence_logs)
                self._owned.append(cluster)
                self._client = Client(cluster)
            self._owned.insert(0, self._client)
        return self._client

    def connect(self) -> None:
        """Connect to the scheduler (or start the LocalCluster) and compare the workers' libraries;
        an unreachable scheduler is a :class:`~sltcheck.errors.UsageError` naming it."""
        from sltcheck.errors import UsageError

        try:
            client = self.client
        except Exception as error:  # whatever stops the connection, the address is the user's
            if self.address is None:
                raise UsageError(f"--cluster local: the Dask LocalCluster did not start ({type(error).__name__}: "
                                 f"{error})") from None
            raise UsageError(f"--scheduler {self.address}: no Dask scheduler answered within {CONNECT_TIMEOUT} "
                             f"({type(error).__name__}: {error}); start one there, or give another address") from None
        if not self._checked and client is not None:
            self.check_versions()

    def check_versions(self) -> None:
        """Raise a :class:`~sltcheck.errors.SltcheckError` naming every worker whose libraries differ from
        the driver's (one line from the command line: the cluster's to fix, not a bug)."""
        from sltcheck.errors import SltcheckError

        mine = _versions()
        theirs = self.client.run(_versions)
        wrong = {worker: {name: (found[name], mine[name]) for name in MATCHED_PACKAGES if found[name] != mine[name]}
                 for worker, found in theirs.items()}
        wrong = {worker: differences for worker, differences in wrong.items() if differences}
        if wrong:
            details = "; ".join(f"{worker}: " + ", ".join(f"{name} {got} (driver {want})"
                                                          for name, (got, want) in differences.items())
                                for worker, differences in sorted(wrong.items()))
            raise SltcheckError(f"Dask workers run other library versions than the driver, so their results "
                                f"would not be identical: {details}")
        self._checked = True

    def map_unordered(self, fn: WorkFunction, shared: Any, tasks: Sequence[Task]) -> Generator[tuple[str, Any]]:
        from distributed import as_completed

        if not tasks:
            return
        client = self.client
        if not self._checked:
            self.check_versions()
        run = uuid.uuid4().hex[:8]
        shared_future = client.submit(_identity, shared, key=f"sltcheck-shared-{run}", pure=False)
        futures = {client.submit(_call_shared_first, fn, shared_future, *args, key=f"sltcheck-{run}-{key}",
                                 pure=False): key
                   for key, args in tasks}
        try:
            for future, result in as_completed(list(futures), with_results=True):
                key = futures.pop(future)
                future.release()
                yield key, result
        finally:
            if futures:  # interrupted or failed: do not leave work running on a shared cluster
                client.cancel(list(futures))
            shared_future.release()

    def close(self) -> None:
        for resource in self._owned:
            resource.close()
        if self._owned:
            self._client = None
        self._owned = []


def make_executor(workers: int | None = None, scheduler: str | None = None, cluster: str | None = None) -> Executor:
    """The executor the command-line options name.

    ``scheduler``: connect to that Dask scheduler; ``cluster='local'``: start a
    LocalCluster of ``workers`` (default: one per CPU); otherwise ``workers``
    local processes (1 or ``None``: in-process).
    """
    if workers is not None and int(workers) < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if scheduler is not None and cluster is not None:
        raise ValueError("give either a scheduler address or --cluster local, not both")
    if scheduler is not None or cluster is not None:
        from sltcheck.extras import require

        require("distributed", "cluster", "--scheduler and --cluster local (Dask)")
    if scheduler is not None:
        return DaskExecutor(scheduler)
    if cluster is not None:
        if cluster != "local":
            raise ValueError(f"cluster must be one of local, got {cluster!r}")
        return DaskExecutor(local_workers=workers or os.cpu_count() or 1)
    if workers is None or int(workers) == 1:
        return InProcessExecutor()
    return ProcessExecutor(int(workers))


__all__ = ["DaskExecutor", "Executor", "InProcessExecutor", "ProcessExecutor", "Task", "make_executor"]
