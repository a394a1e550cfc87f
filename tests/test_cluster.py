"""Executors: the same sweep gives the same store in-process, on local processes,
on a Dask LocalCluster, after an interruption, and after a Dask worker is killed."""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import time
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from sltcheck.executors import (
    DaskExecutor,
    Executor,
    InProcessExecutor,
    ProcessExecutor,
    Task,
    WorkFunction,
    make_executor,
)
from sltcheck.repro import synthetic

TIMEOUT = 180  # seconds; generous for a loaded 2-core machine


def tiny(**overrides: Any) -> synthetic.SweepConfig:
    settings: dict[str, Any] = dict(widths=(4, 8), sources=2, test_samples=40, train_target=False, lengths=(4,))
    settings.update(overrides)
    return synthetic.preset_config("fig4", "quick", "theory", **settings)


def store_rows(run_dir: Path) -> list[tuple[str, str]]:
    if not (run_dir / "results.sqlite").exists():
        return []
    with sqlite3.connect(run_dir / "results.sqlite", timeout=30) as db:
        return list(db.execute("SELECT key, record FROM results ORDER BY key"))


def without_timing(rows: list[tuple[str, str]]) -> list[tuple[str, dict[str, Any]]]:
    """Records minus wall-clock seconds, the one field that may differ between runs."""
    cleaned = []
    for key, record in rows:
        payload = json.loads(record)["record"]  # the row as sealed: key, fingerprint, record, digest
        for r in payload["records"]:
            r.pop("seconds")
        cleaned.append((key, payload))
    return cleaned


class Interrupted(Executor):
    """Wraps an executor and raises KeyboardInterrupt after ``after`` results (a driver's ^C)."""

    def __init__(self, inner: Executor, after: int) -> None:
        self.inner, self.after = inner, after

    def map_unordered(self, fn: WorkFunction, shared: Any, tasks: Sequence[Task]) -> Generator[tuple[str, Any]]:
        results = self.inner.map_unordered(fn, shared, tasks)
        try:
            for count, item in enumerate(results, start=1):
                yield item
                if count == self.after:
                    raise KeyboardInterrupt
        finally:
            results.close()


class Counting(Executor):
    """Wraps an executor and remembers every key it hands to the driver."""

    def __init__(self, inner: Executor) -> None:
        self.inner, self.keys = inner, []  # type: ignore[var-annotated]

    def map_unordered(self, fn: WorkFunction, shared: Any, tasks: Sequence[Task]) -> Generator[tuple[str, Any]]:
        for key, result in self.inner.map_unordered(fn, shared, tasks):
            self.keys.append(key)
            yield key, result


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, dict[str, Any]]]:
    """The tiny sweep run in-process, as on one machine."""
    out = tmp_path_factory.mktemp("reference")
    synthetic.run(tiny(), str(out), progress=False)
    return without_timing(store_rows(out))


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A LocalCluster of 2 single-threaded worker processes (nannies restart killed workers)."""
    # Only the Dask tests need the optional 'cluster' extra (CI installs it: extras = all).
    distributed = pytest.importorskip("distributed", reason="the 'cluster' extra (dask[distributed]) is not installed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
    with distributed.Client(cluster, timeout=TIMEOUT) as connected:
        connected.wait_for_workers(2, timeout=TIMEOUT)
        yield connected
    cluster.close(timeout=60)


def test_options_choose_the_executor() -> None:
    assert isinstance(make_executor(), InProcessExecutor)
    assert isinstance(make_executor(1), InProcessExecutor)
    assert isinstance(make_executor(3), ProcessExecutor)
    assert make_executor(3).workers == 3  # type: ignore[attr-defined]
    remote = make_executor(4, scheduler="tcp://10.0.0.5:8786")
    assert isinstance(remote, DaskExecutor)
    assert remote.address == "tcp://10.0.0.5:8786"
    local = make_executor(2, cluster="local")
    assert isinstance(local, DaskExecutor)
    assert local.local_workers == 2
    with pytest.raises(ValueError, match="not both"):
        make_executor(2, scheduler="tcp://x:1", cluster="local")
    with pytest.raises(ValueError, match="positive"):
        make_executor(0)
    with pytest.raises(ValueError, match="exactly one"):
        DaskExecutor()


def test_cli_options_reach_the_executor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from sltcheck.cli import CommandLine
    from sltcheck.cli import repro as cli

    command_line = CommandLine()
    cli.register(command_line)
    seen: dict[str, Any] = {}

    def fake_run(config: synthetic.SweepConfig, out: str, progress: bool = True,
                 executor: Executor | None = None) -> dict[str, Any]:
        seen["executor"] = executor
        return {"figure": "fig4", "points": [], "checked": 0, "violations": [], "undecided": 0, "worst_ratio": 0.0,
                "held": 0, "vacuous": 0, "wall_seconds": 0.0, "source_seconds": 0.0,
                "paper_fit": {"gamma": 1, "delta": 1}, "workshop_fit": {"gamma": 1, "delta": 1}, "fits": {}}

    monkeypatch.setattr(synthetic, "run", fake_run)
    monkeypatch.setattr(DaskExecutor, "connect", lambda self: None)  # no scheduler at that address here
    for options, kind in ((["--workers", "2"], ProcessExecutor), ([], InProcessExecutor),
                          (["--scheduler", "tcp://10.0.0.5:8786"], DaskExecutor)):
        args = command_line.parser.parse_args(["repro", "fig4", "--out", str(tmp_path), "--no-progress", *options])
        assert args.handler(args) == 0
        assert isinstance(seen["executor"], kind)
    with pytest.raises(SystemExit):
        command_line.parser.parse_args(["repro", "fig4", "--scheduler", "tcp://x:1", "--cluster", "local"])
    with pytest.raises(SystemExit):
        command_line.parser.parse_args(["repro", "fig4", "--workers", "0"])


def test_local_processes_give_the_same_store(tmp_path: Path, reference: list[Any]) -> None:
    with ProcessExecutor(2) as executor:
        synthetic.run(tiny(), str(tmp_path), progress=False, executor=executor)
    assert without_timing(store_rows(tmp_path)) == reference


def test_local_processes_are_kept_for_maps_that_share_the_same_value() -> None:
    with ProcessExecutor(2) as executor:  # max(shared, task): a picklable top-level function
        assert dict(executor.map_unordered(max, 1, [("a", (0,)), ("b", (5,))])) == {"a": 1, "b": 5}
        pool = executor._pool
        assert dict(executor.map_unordered(max, 1, [("c", (3,))])) == {"c": 3}
        assert executor._pool is pool  # certify maps every round: no process started again
        assert dict(executor.map_unordered(max, 4, [("d", (3,))])) == {"d": 4}
        assert executor._pool is not pool  # another shared value: other processes
        with pytest.raises(TypeError):
            dict(executor.map_unordered(max, 4, [("e", ("x",))]))
        assert executor._pool is None  # a map that failed leaves no pool behind
    assert executor._pool is None


def test_local_cluster_gives_the_same_store(tmp_path: Path, reference: list[Any], client: Any) -> None:
    executor = Counting(DaskExecutor(client=client))
    summary = synthetic.run(tiny(), str(tmp_path), progress=False, executor=executor)
    assert without_timing(store_rows(tmp_path)) == reference
    assert sorted(executor.keys) == [key for key, _ in reference]
    assert summary["checked"] == len(reference)


@pytest.mark.parametrize("resume_on", ["in-process", "cluster"])
def test_interrupted_cluster_run_resumes_to_the_same_store(tmp_path: Path, reference: list[Any], client: Any,
                                                           resume_on: str) -> None:
    with pytest.raises(KeyboardInterrupt):
        synthetic.run(tiny(), str(tmp_path), progress=False, executor=Interrupted(DaskExecutor(client=client), 2))
    partial = store_rows(tmp_path)
    assert len(partial) == 2
    # the interrupted run left no task of its own behind on the shared cluster
    deadline = time.time() + 60
    while client.processing() and any(client.processing().values()) and time.time() < deadline:
        time.sleep(0.05)
    resumed = Counting(DaskExecutor(client=client) if resume_on == "cluster" else InProcessExecutor())
    synthetic.run(tiny(), str(tmp_path), progress=False, executor=resumed)
    assert len(resumed.keys) == len(reference) - 2  # finished sources are not recomputed
    assert without_timing(store_rows(tmp_path)) == reference
    assert set(partial) <= set(store_rows(tmp_path))


class KillsItsWorkerOnce:
    """A work function that SIGKILLs the worker process running it, once, when it is handed the task
    ``victim``: the first call to create ``marker`` kills (O_EXCL: exactly one call on any worker wins),
    every later call works. The kill happens inside the task, so a worker is always caught running a
    source, whatever the load (a thread that watched for a busy worker missed it under load ~10)."""

    def __init__(self, fn: WorkFunction, victim: str, marker: Path) -> None:
        self.fn, self.victim, self.marker = fn, victim, marker

    def __call__(self, shared: Any, key: str, *args: Any) -> Any:
        if key == self.victim:
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return self.fn(shared, *args)


class KillingOnce(Executor):
    """Wraps an executor; its work function kills its worker once, on the ``index``-th task."""

    def __init__(self, inner: Executor, index: int, marker: Path) -> None:
        self.inner, self.index, self.marker, self.victim = inner, index, marker, ""

    def map_unordered(self, fn: WorkFunction, shared: Any, tasks: Sequence[Task]) -> Generator[tuple[str, Any]]:
        self.victim = tasks[self.index][0]
        keyed = [(key, (key, *args)) for key, args in tasks]
        yield from self.inner.map_unordered(KillsItsWorkerOnce(fn, self.victim, self.marker), shared, keyed)


def test_a_killed_worker_loses_nothing(tmp_path: Path, client: Any) -> None:
    """SIGKILL a worker process while it runs a source: Dask reruns its task elsewhere
    (or on the restarted worker), and the store is the reference, one row per key."""
    config = tiny(widths=(40,), sources=6)
    synthetic.run(config, str(tmp_path / "reference"), progress=False)
    expected = without_timing(store_rows(tmp_path / "reference"))
    marker = tmp_path / "killed-once"
    executor = Counting(KillingOnce(DaskExecutor(client=client), 1, marker))
    synthetic.run(config, str(tmp_path / "killed"), progress=False, executor=executor)
    assert marker.exists(), "the victim task never ran: the test would prove nothing"
    rows = store_rows(tmp_path / "killed")
    assert len(rows) == len(expected) == len({key for key, _ in rows})
    assert sorted(executor.keys) == [key for key, _ in expected]  # each key handed to the driver once
    assert without_timing(rows) == expected
    # the task that was running on the killed worker was started again
    scheduler = client.cluster.scheduler  # the LocalCluster's scheduler lives in this process
    starts = sum(1 for entry in scheduler.transition_log
                 if str(entry[0]).endswith(f"-{executor.inner.victim}") and entry[2] == "processing")
    print(f"victim {executor.inner.victim}: {starts} processing transitions")
    assert starts >= 2
