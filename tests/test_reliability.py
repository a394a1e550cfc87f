"""Run directories never lie: one configuration per directory, nothing finished overwritten,
partial runs say so, bad input and unwritable outputs are one line with exit status 2
before any work, workers die with their driver, same seed same bytes.

Each test encodes a defect of issue 18; the slow ones (a real ``repro`` run killed at a
random point) are marked ``slow``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from package_env import ENV, imported_in_subprocess, installed_package

from sltcheck.cli import main
from sltcheck.errors import RunInUseError, SltcheckError, StoredResultError, UsageError
from sltcheck.jsonfiles import create_json_exclusive, read_json, seal, seal_state, write_json_atomic
from sltcheck.records import FindingsFile
from sltcheck.repro import synthetic
from sltcheck.repro.store import RunDirectory
from sltcheck.rundir import DirectoryLock
from sltcheck.schema import SCHEMA_VERSION, load, validate, without_timing

README_START_UNIFORM = "<!-- sltcheck bench solvers: start -->"
README_END_UNIFORM = "<!-- sltcheck bench solvers: end -->"
# A check run of a few seconds: two statements, no search, no mutants.
QUICK_CHECK = ["check", "--only", "lemma8", "lemma5", "--profile", "ci", "--no-search", "--no-mutants"]


PRESET_CONFIG = synthetic.preset_config  # as defined (tests replace the module's to shrink a command's sweep)


def tiny_config(**overrides: Any) -> synthetic.SweepConfig:
    settings: dict[str, Any] = dict(widths=(4, 8), sources=2, test_samples=40, train_target=False, lengths=(4,))
    settings.update(overrides)
    return PRESET_CONFIG("fig4", "quick", "theory", **settings)


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("sltcheck: error: "), lines
    return lines[0]


@pytest.fixture(scope="module")
def quick_findings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("quick-check")
    assert main([*QUICK_CHECK, "--out", str(out)]) == 0
    return out / "findings.json"


def test_subprocesses_run_the_installed_package_not_the_checkout() -> None:
    """Under tox the wheel is installed: a subprocess started from the checkout must import it."""
    installed = installed_package()
    imported = imported_in_subprocess()
    if installed is not None:
        assert imported == installed
    else:  # the dev setup: the code the test process runs
        import sltcheck

        assert imported == Path(sltcheck.__file__).resolve()


# --- 1. one configuration per run directory ---------------------------------------------------

_WRITER = """
import sys, time
from sltcheck.errors import SltcheckError
from sltcheck.repro.store import RunDirectory
seed = int(sys.argv[2])
try:
    with RunDirectory(sys.argv[1], {"seed": seed, "figure": "fig4"}) as run:
        for index in range(5):
            run.add(f"k{index}", {"seed": seed})
            time.sleep(0.05)
    print("wrote")
except SltcheckError as error:
    print("refused:", error)
"""


def test_concurrent_writers_never_mix_two_configurations(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(run_dir), str(seed)], env=ENV,
                                stdout=subprocess.PIPE, text=True) for seed in range(6)]
    outputs = [writer.communicate(timeout=120)[0] for writer in writers]
    assert any(o.startswith("wrote") for o in outputs)
    assert all(o.startswith(("wrote", "refused:")) for o in outputs), outputs
    recorded = read_json(run_dir / "config.json")
    with sqlite3.connect(run_dir / "results.sqlite") as db:
        rows = list(db.execute("SELECT fingerprint, record FROM results"))
    assert {fingerprint for fingerprint, _ in rows} == {recorded["fingerprint"]}
    assert {json.loads(record)["record"]["seed"] for _, record in rows} == {recorded["config"]["seed"]}


def test_a_second_writer_is_refused_while_the_first_holds_the_directory(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with DirectoryLock(tmp_path):
        with pytest.raises(RunInUseError, match="in use"):
            RunDirectory(tmp_path, {"seed": 0})
        assert main(["repro", "fig4", "--sources", "1", "--out", str(tmp_path), "--no-progress"]) == 2
        assert "in use by sltcheck process" in error_line(capsys)
        assert main([*QUICK_CHECK, "--out", str(tmp_path)]) == 2
        assert "in use" in error_line(capsys)
    assert not (tmp_path / "config.json").exists()


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_result_files_take_the_permissions_the_umask_allows(tmp_path: Path, umask: int, mode: int) -> None:
    """findings.json, summary.json, config.json are readable by the group as the umask allows (mkstemp's
    0600 made them private whatever the umask)."""
    previous = os.umask(umask)
    try:
        write_json_atomic(tmp_path / "findings.json", {"a": 1})
        assert create_json_exclusive(tmp_path / "config.json", {"b": 2})
        write_json_atomic(tmp_path / "findings.json", {"a": 2})  # a rewrite keeps them
    finally:
        os.umask(previous)
    for name in ("findings.json", "config.json"):
        assert (tmp_path / name).stat().st_mode & 0o777 == mode, name


def test_a_clean_release_leaves_no_lock_file_and_the_next_writer_locks_again(tmp_path: Path) -> None:
    with DirectoryLock(tmp_path):
        assert (tmp_path / ".lock").exists()
        with pytest.raises(RunInUseError, match="in use"):
            DirectoryLock(tmp_path)
    assert not (tmp_path / ".lock").exists()
    with DirectoryLock(tmp_path, "check"), pytest.raises(RunInUseError, match="in use"):
        DirectoryLock(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".sltcheck-command"]


def test_another_configuration_is_refused_naming_the_option(tmp_path: Path) -> None:
    with RunDirectory(tmp_path, {"seed": 0, "sources": 2}) as run:
        run.add("a", {"x": 1})
    with pytest.raises(StoredResultError, match=r"--seed \(this directory: 0, this command: 1\)"):
        RunDirectory(tmp_path, {"seed": 1, "sources": 2})


def test_every_row_carries_the_fingerprint_so_a_deleted_config_cannot_relabel_results(tmp_path: Path) -> None:
    with RunDirectory(tmp_path, {"seed": 0}) as run:
        run.add("a", {"x": 1})
        fingerprint = run.fingerprint
    (tmp_path / "config.json").unlink()
    with pytest.raises(StoredResultError, match="another configuration"):
        RunDirectory(tmp_path, {"seed": 1})
    assert not (tmp_path / "config.json").exists()  # nothing written by the refused run
    with RunDirectory(tmp_path, {"seed": 0}) as run:  # the right options resume it
        assert run.done() == {"a"}
        assert run.fingerprint == fingerprint
    assert read_json(tmp_path / "config.json")["fingerprint"] == fingerprint


def test_config_is_created_exclusively(tmp_path: Path) -> None:
    target = tmp_path / "config.json"
    assert create_json_exclusive(target, {"a": 1})
    assert not create_json_exclusive(target, {"a": 2})
    assert read_json(target) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["config.json"]  # no temporary left behind


# --- 2. options validated before anything is written ---------------------------------------------


REPRO, CHECK = ["repro", "fig4", "--no-progress"], ["check", "--only", "lemma8"]


@pytest.mark.parametrize(("command", "options", "fragment"), [
    (REPRO, ["--solver", "foo"], "--solver: must be one of"),
    (REPRO, ["--init", "foo"], "--init: must be one of"),
    (REPRO, ["--sources", "0"], "--sources: must be an integer from 1"),
    (REPRO, ["--seed", "-1"], "--seed: must be an integer from 0"),
    (CHECK, ["--workers", "0"], "--workers: must be an integer from 1 to 1024, got '0'"),
    (CHECK, ["--seed", "-1"], "--seed: must be an integer from 0"),
    (CHECK, ["--dps", "5"], "--dps: must be an integer from 15 to"),
])
def test_bad_options_fail_before_the_run_directory_exists(tmp_path: Path, command: list[str], options: list[str],
                                                          fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main([*command, *options, "--out", str(out)]) == 2
    assert fragment in error_line(capsys)
    assert not out.exists()


# --- 3. findings never overwritten; partial runs say so -------------------------------------------


def test_check_refuses_to_overwrite_findings_of_another_run(quick_findings: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    before = quick_findings.read_bytes()
    assert main([*QUICK_CHECK, "--seed", "1", "--out", str(quick_findings.parent)]) == 2
    assert "--seed (this directory: 0, this command: 1)" in error_line(capsys)
    assert main([*QUICK_CHECK, "--out", str(quick_findings.parent)]) == 0  # same run: nothing to do
    assert "complete; nothing to do" in capsys.readouterr().out
    assert quick_findings.read_bytes() == before


@pytest.mark.lemma8
def test_check_counts_a_repeated_statement_once(tmp_path: Path) -> None:
    assert main(["check", "--only", "lemma8", "lemma8", "--no-search", "--no-mutants", "--out", str(tmp_path)]) == 0
    data = load(tmp_path / "findings.json", FindingsFile, "findings")
    assert [(f["statement"], f["variant"]) for f in data["findings"]] == [("lemma8", "as-stated")]
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["complete"]


def _killed_check(out: Path, rng: random.Random) -> None:
    """Run QUICK_CHECK in a subprocess and kill -9 it at a random moment after its first unit."""
    process = subprocess.Popen([sys.executable, "-m", "sltcheck.cli", *QUICK_CHECK, "--out", str(out)], env=ENV,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None:
        try:
            if read_json(out / "findings.json")["done"]:
                break
        except SltcheckError:
            pass
        time.sleep(0.02)
    time.sleep(rng.uniform(0, 0.5))
    process.send_signal(signal.SIGKILL)
    process.wait()


@pytest.mark.parametrize("seed", [0, 1])
def test_check_killed_at_a_random_point_resumes_to_the_same_findings(quick_findings: Path, tmp_path: Path,
                                                                      seed: int,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "killed"
    _killed_check(out, random.Random(seed))
    partial = load(out / "findings.json", FindingsFile, "findings")  # a kill never leaves half a file
    if not partial["complete"]:
        assert main(["report", "--in", str(out), "--out", str(tmp_path / "r.html")]) == 0
        assert "PARTIAL" in capsys.readouterr().out
        report = read_json(tmp_path / "r.json")
        assert report["notes"]
        assert "never ran" in report["notes"][0]
    assert main([*QUICK_CHECK, "--out", str(out)]) == 0
    resumed = read_json(out / "findings.json")
    assert without_timing(resumed) == without_timing(read_json(quick_findings))


def test_report_counts_each_input_once_and_rejects_unknown_files(quick_findings: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = str(quick_findings.parent)
    assert main(["report", "--in", run, run, str(quick_findings), "--out", str(tmp_path / "r.html")]) == 0
    report = read_json(tmp_path / "r.json")
    assert report["glance"]["statements_checked"] == 3  # lemma8 (1 variant) + lemma5 (2), once each
    assert report["schema_version"] == SCHEMA_VERSION
    assert report["notes"] == []
    wrong = tmp_path / "mine.json"
    wrong.write_text("{}")
    assert main(["report", "--in", str(wrong)]) == 2
    assert "not a result file" in error_line(capsys)
    legacy = tmp_path / "legacy" / "findings.json"
    legacy.parent.mkdir()
    legacy.write_text(json.dumps({"profile": "ci", "findings": []}))
    assert main(["report", "--in", str(legacy.parent)]) == 2
    assert "no schema_version" in error_line(capsys)


def test_report_names_a_sweep_that_never_finished(quick_findings: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    sweep = tmp_path / "fig4"
    with RunDirectory(sweep, {"seed": 0}) as run:
        run.add("a", {"x": 1})
    assert main(["report", "--in", str(quick_findings.parent), str(sweep), "--out", str(tmp_path / "r.html")]) == 0
    assert "never finished" in capsys.readouterr().out


# --- 4. exit codes that tell the truth --------------------------------------------------------------


def _findings_with(quick_findings: Path, tmp_path: Path, **changes: Any) -> Path:
    """The quick findings with ``changes``, sealed again (a digest that matches: only the numbers tell)."""
    data = read_json(quick_findings)
    data.update(changes)
    path = tmp_path / "findings.json"
    write_json_atomic(path, seal(data))
    return path


@pytest.mark.lemma8
def test_replay_exits_1_on_a_verdict_that_differs_or_an_unrefuted_mutant(quick_findings: Path,
                                                                         tmp_path: Path) -> None:
    assert main(["check", "--replay", str(quick_findings), "--dps", "30"]) == 0
    entry = read_json(quick_findings)["findings"][0]
    flipped = _findings_with(quick_findings, tmp_path, findings=[{**entry, "violated": True}])
    assert main(["check", "--replay", str(flipped), "--dps", "30"]) == 1
    # A mutant that only drops an assumption keeps the bound: an admissible instance does not refute it.
    mutant = {"statement": "lemma8", "mutant": "no-token-norm", "why": "", "refuted": True, "ratio": 1.0,
              "counterexample": entry["instance"], "message": "", "seconds": 0.0}
    unrefuted = _findings_with(quick_findings, tmp_path, findings=[], mutants=[mutant])
    assert main(["check", "--replay", str(unrefuted), "--dps", "30"]) == 1


def test_replay_of_nothing_exits_1(quick_findings: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = _findings_with(quick_findings, tmp_path, findings=[], mutants=[])
    assert main(["check", "--replay", str(empty)]) == 1
    captured = capsys.readouterr()
    assert "nothing to replay" in captured.out + captured.err


def test_bench_with_nothing_to_run_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "solvers", "--sizes", "60", "--solvers", "brute,mitm"]) == 2
    assert "nothing to run" in error_line(capsys)


# --- 6. one line, exit 2, nothing computed ------------------------------------------------------------


@pytest.mark.parametrize(("content", "fragment"), [
    (None, "does not exist"),
    ("", "is empty"),
    ('{"schema_version": 1, "findings": [', "not valid JSON"),
    ('{"findings": []}', "no schema_version"),
    ('{"schema_version": 99}', "schema_version 99"),
    ("[1, 2]", "must hold a JSON object"),
    ('{"schema_version": 1, "profile": "ci"}', "lacks the required key"),
    ("NaN", "not strict JSON"),
])
def test_replay_of_a_bad_file_is_one_line(tmp_path: Path, content: str | None, fragment: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "findings.json"
    if content is not None:
        path.write_text(content)
    assert main(["check", "--replay", str(path)]) == 2
    assert fragment in error_line(capsys)


def test_replay_of_a_wrong_shaped_entry_is_one_line(quick_findings: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    entry = read_json(quick_findings)["findings"][0]
    bad = _findings_with(quick_findings, tmp_path, findings=[{**entry, "worst_ratio": [1]}])
    assert main(["check", "--replay", str(bad)]) == 2
    assert "findings[0].worst_ratio" in error_line(capsys)


@pytest.mark.parametrize(("argv", "fragment"), [
    (["check", "--only", "nosuch"], "--only: must be one of lemma2"),
    (["bench", "solvers", "--problems", "0"], "--problems: must be an integer from 1"),
    (["widths", "--eps", "0.01", "--heads", "2", "--d1", "4", "--blocks", "100000000"], "--blocks: must be"),
])
def test_bad_options_are_one_line(argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert fragment in capsys.readouterr().err


def test_an_unreadable_findings_json_is_kept_and_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    legacy = tmp_path / "findings.json"
    legacy.write_text(json.dumps({"profile": "ci", "seed": 0, "findings": []}))
    before = legacy.read_bytes()
    assert main([*QUICK_CHECK, "--out", str(tmp_path)]) == 2
    assert "move it away or give another --out" in error_line(capsys)
    assert legacy.read_bytes() == before


@pytest.mark.parametrize(("argv", "fragment"), [
    (["repro", "fig4", "--workers", "100000"], "from 1 to 1024"),
    (["bench", "solvers", "--sizes", "8,100000000"], "an integer from 1 to 10000"),
    (["calibrate", "--trials", "1000000000"], "--trials: must be an integer from 1 to 10000000"),
])
def test_absurd_sizes_are_refused_by_the_parser(argv: list[str], fragment: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert fragment in error_line(capsys)


def test_corrupted_store_and_config_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "results.sqlite").write_bytes(b"not a database, really" * 100)
    assert main(["repro", "fig4", "--sources", "1", "--out", str(store), "--no-progress"]) == 2
    assert "is corrupted" in error_line(capsys)
    config = tmp_path / "config"
    with RunDirectory(config, asdict(synthetic.preset_config("fig4", "quick", "theory", sources=1))):
        pass
    text = (config / "config.json").read_text()
    (config / "config.json").write_text(text[: len(text) // 2])
    assert main(["repro", "fig4", "--sources", "1", "--out", str(config), "--no-progress"]) == 2
    assert "not valid JSON" in error_line(capsys)
    old = tmp_path / "old"
    old.mkdir()
    with sqlite3.connect(old / "results.sqlite") as db:
        db.execute("CREATE TABLE results (key TEXT PRIMARY KEY, record TEXT NOT NULL)")
    assert main(["repro", "fig4", "--sources", "1", "--out", str(old), "--no-progress"]) == 2
    assert "older sltcheck" in error_line(capsys)


@pytest.mark.parametrize(("argv", "work"), [
    (["check", "--only", "lemma8", "--out", "{file}"], "sltcheck.checking.check_variant"),
    (["check", "--only", "lemma8", "--out", "{file}/sub"], "sltcheck.checking.check_variant"),
    (["repro", "fig4", "--sources", "1", "--out", "{file}"], "sltcheck.repro.synthetic.build_targets"),
    (["calibrate", "--trials", "1", "--out", "{file}/c.json"], "sltcheck.pruning.calibration.calibrate"),
    (["bench", "solvers", "--sizes", "4", "--solvers", "mitm", "--out", "{file}/b.json"],
     "sltcheck.cli.bench.benchmark_solvers"),
    (["report", "--in", "{file}", "--out", "{file}/r.html"], "sltcheck.report.page.build"),
])
def test_an_unwritable_output_is_one_line_before_any_work(tmp_path: Path, argv: list[str], work: str,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    started: list[str] = []
    module, name = work.rsplit(".", 1)
    monkeypatch.setattr(f"{module}.{name}", lambda *args, **kwargs: started.append(name) or pytest.fail(
        f"{name} ran before the unwritable output was refused"))
    assert main([part.replace("{file}", str(blocker)) for part in argv]) == 2
    assert str(blocker) in error_line(capsys)
    assert started == []  # refused before the work, not after it


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tmp_path.chmod(0o500)
    try:
        assert main([*QUICK_CHECK, "--out", str(tmp_path / "out")]) == 2
        assert "cannot be written" in error_line(capsys)
    finally:
        tmp_path.chmod(0o700)


def _sysfs_refuses_writes() -> bool:
    try:
        Path("/sys/sltcheck-probe").mkdir()
    except OSError:
        return Path("/sys").is_dir()
    Path("/sys/sltcheck-probe").rmdir()
    return False


@pytest.mark.skipif(not _sysfs_refuses_writes(), reason="needs a directory that refuses writes even to root")
@pytest.mark.parametrize("argv", [
    [*QUICK_CHECK, "--out", "/sys/sltcheck-out"],
    ["repro", "fig4", "--sources", "1", "--out", "/sys/sltcheck-out", "--no-progress"],
    ["calibrate", "--trials", "1", "--out", "/sys/sltcheck-out/c.json"],
])
def test_an_output_the_system_refuses_is_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "cannot be written" in error_line(capsys)


def test_a_real_bug_keeps_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    from sltcheck.cli import widths

    def broken(args: Any) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(widths, "handle_calibrate", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["calibrate"])


# --- 5. workers die with their driver -----------------------------------------------------------------

_DRIVER = """
import time
from sltcheck.executors import ProcessExecutor
with ProcessExecutor(2) as executor:
    for _ in executor.map_unordered(time.sleep, 600, [("a", ()), ("b", ())]):
        pass
"""


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_workers_die_with_a_killed_driver() -> None:
    driver = subprocess.Popen([sys.executable, "-c", _DRIVER], env=ENV)
    deadline = time.time() + 60
    workers: set[int] = set()
    while time.time() < deadline and len(workers) < 2:
        # the spawn context starts a resource tracker too; the workers are the ones running sltcheck's initializer
        workers = {pid for pid in _children(driver.pid)
                   if "multiprocessing.spawn" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace")}
        time.sleep(0.2)
    assert len(workers) >= 2
    time.sleep(3)  # the workers have imported sltcheck and run the initializer
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    deadline = time.time() + 15
    while time.time() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in workers)


# --- 7. the language-model data ----------------------------------------------------------------------


def test_missing_lm_data_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from sltcheck.repro.lm.data import find_data_dir

    monkeypatch.delenv("SLTCHECK_WIKITEXT_DIR", raising=False)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    with pytest.raises(UsageError, match="give --data DIR or set SLTCHECK_WIKITEXT_DIR"):
        find_data_dir()
    monkeypatch.setenv("SLTCHECK_WIKITEXT_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(UsageError, match="SLTCHECK_WIKITEXT_DIR="):
        find_data_dir()
    assert find_data_dir(tmp_path) == tmp_path
    assert main(["repro", "fig8", "--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")]) == 2
    assert "--data" in error_line(capsys)


# --- files: strict, atomic, validated, same seed same bytes ---------------------------------------------


def test_json_files_are_strict_and_validated(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant: nan"):
        write_json_atomic(tmp_path / "x.json", {"ratio": float("nan")})
    assert not list(tmp_path.iterdir())  # no partial or temporary file left
    with pytest.raises(StoredResultError, match=r"file.findings\[0\] must be an object"):
        validate({"findings": [1]}, dict[str, list[dict[str, int]]], "file")


def test_same_seed_same_bytes_except_timing(quick_findings: Path, tmp_path: Path) -> None:
    assert main([*QUICK_CHECK, "--out", str(tmp_path / "again")]) == 0
    assert without_timing(read_json(tmp_path / "again" / "findings.json")) == without_timing(read_json(quick_findings))
    for name in ("a", "b"):
        synthetic.run(tiny_config(), str(tmp_path / name), progress=False)
    for file in ("summary.json", "config.json"):
        first, second = (read_json(tmp_path / name / file) for name in ("a", "b"))
        assert without_timing(first) == without_timing(second)
    summary = read_json(tmp_path / "a" / "summary.json")
    assert summary["schema_version"] == SCHEMA_VERSION
    assert summary["complete"]


_SWEEP = """
import sys
from sltcheck.repro import synthetic
config = synthetic.preset_config('fig4', 'quick', 'theory', widths=(4, 8, 12), sources=2, test_samples=40,
                                 train_target=False, lengths=(4,))
synthetic.run(config, sys.argv[1], progress=False)
"""


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_repro_killed_at_a_random_point_resumes_to_the_same_results(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    subprocess.run([sys.executable, "-c", _SWEEP, str(whole)], env=ENV, check=True)
    process = subprocess.Popen([sys.executable, "-c", _SWEEP, str(killed)], env=ENV)
    time.sleep(rng.uniform(1.0, 8.0))
    process.send_signal(signal.SIGKILL)
    process.wait()
    subprocess.run([sys.executable, "-c", _SWEEP, str(killed)], env=ENV, check=True)

    def rows(run_dir: Path) -> list[Any]:
        with sqlite3.connect(run_dir / "results.sqlite") as db:
            return [(key, fingerprint, without_timing(json.loads(record)))
                    for key, fingerprint, record in db.execute("SELECT * FROM results ORDER BY key")]

    assert rows(killed) == rows(whole)
    assert without_timing(read_json(killed / "summary.json")) == without_timing(read_json(whole / "summary.json"))


def test_optional_keys_of_a_finding_may_be_absent(quick_findings: Path) -> None:
    """A statement that interval arithmetic does not cover has no 'certified' keys: its findings.json
    is valid (under postponed annotations Python 3.11's TypedDict made every NotRequired key required,
    and sltcheck report refused the quick start's own findings)."""
    from sltcheck.records import FindingRecord

    assert {"filtered", "certified", "certified_outcome", "interval"} <= FindingRecord.__optional_keys__
    entry = read_json(quick_findings)["findings"][0]
    bare = {k: v for k, v in entry.items() if k not in FindingRecord.__optional_keys__}
    assert validate(bare, FindingRecord, "finding") == bare
    with pytest.raises(StoredResultError, match="lacks the required key 'statement'"):
        validate({k: v for k, v in bare.items() if k != "statement"}, FindingRecord, "finding")


# --- every JSON file: strict and schema-versioned ------------------------------------------------------


def _strict(text: str) -> Any:
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))


@pytest.mark.parametrize("argv", [
    ["widths", "--allocation", "--out", "{dir}/w.json"],
    ["calibrate", "--trials", "20", "--n-max", "12", "--decay-trials", "0", "--out", "{dir}/c.json"],
    ["bench", "solvers", "--sizes", "4", "--problems", "1", "--solvers", "mitm", "--no-memory",
     "--out", "{dir}/b.json"],
])
def test_every_json_output_carries_the_schema_version(tmp_path: Path, argv: list[str]) -> None:
    assert main([part.replace("{dir}", str(tmp_path)) for part in argv]) == 0
    (written,) = tmp_path.glob("*.json")
    assert _strict(written.read_text())["schema_version"] == SCHEMA_VERSION


def test_bench_solvers_rewrites_the_readme_section_with_command_and_date_not_load(tmp_path: Path) -> None:
    from sltcheck.cli.bench import README_END, README_START

    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{README_START}\nold numbers\n{README_END}\nafter\n")
    argv = ["bench", "solvers", "--sizes", "4", "--problems", "1", "--solvers", "mitm", "--no-memory",
            "--readme", str(readme)]
    assert main(argv) == 0
    text = readme.read_text()
    assert "old numbers" not in text
    assert text.endswith(f"{README_END}\nafter\n")
    assert "Generated by `sltcheck bench solvers --sizes 4 --problems 1 --seed 0 --solvers mitm" in text
    assert "load average" not in text  # kept in the JSON; a results page states its command and date
    assert " UTC, " in text
    assert "      4 mitm" in text
    readme.write_text("no markers\n")
    assert main(argv) == 2
    assert readme.read_text() == "no markers\n"


def test_bench_solvers_xavier_counts_every_certificate_and_region(tmp_path: Path) -> None:
    from sltcheck.cli.bench import readme_markers
    from sltcheck.pruning.solver_names import CERTIFICATES
    from sltcheck.pruning.subset_sum import available_solvers

    solvers = "exact,fast" + (",gurobi" if available_solvers()["gurobi"] is None else "")
    start, end = readme_markers("xavier")
    readme = tmp_path / "README.md"
    readme.write_text(f"{README_START_UNIFORM}\nuniform\n{README_END_UNIFORM}\n{start}\nstale numbers\n{end}\n")
    argv = ["bench", "solvers", "--distribution", "xavier", "--sizes", "16,20", "--problems", "3", "--solvers",
            solvers, "--no-memory", "--out", str(tmp_path / "b.json"), "--readme", str(readme)]
    assert main(argv) == 0
    report = _strict((tmp_path / "b.json").read_text())
    assert report["distribution"] == "xavier"
    assert "Xavier" in report["instances"]
    assert report["max_rss_mb"] > 0
    for row in report["results"]:
        assert set(row["certificates"]) == set(CERTIFICATES)
        assert row["regions"] == ["inside", "near", "beyond"]
        if row["solver"] == "exact":
            assert row["certificates"]["none"] == row["certificates"]["gap"] == 0
            assert row["worse_than_exact"] == 0
    text = readme.read_text()
    assert "\nuniform\n" in text
    assert "stale numbers" not in text
    assert "--distribution xavier --sizes 16,20" in text
    if "gurobi" in solvers:
        ratios = report["over_gurobi"]["exact"]["16"]
        assert ratios["problems"] == 3
        assert ratios["error_not_worse"] == 3
        assert set(ratios["median_of_ratios_by_region"]) <= {"inside", "near", "beyond"}


def test_widths_json_is_strict_where_a_log_argument_overflows(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["widths", "--eps", "1e-300", "--heads", "1000000", "--d1", "1000000", "--blocks", "200",
            "--layers", "100", "--json"]
    assert main(argv) == 0
    data = _strict(capsys.readouterr().out)
    assert data["schema_version"] == SCHEMA_VERSION
    assert "inf" in json.dumps(data)


@pytest.mark.parametrize(("argv", "fragment"), [
    (["widths"], "--eps, --heads and --d1 are required"),
    (["widths", "--eps", "2", "--heads", "1", "--d1", "1"], "--eps: must be a number > 0 and < 1"),
    (["widths", "--eps", "0.1", "--heads", "1", "--d1", "4", "--alpha", "1"], "alpha must be a finite number >= "),
])
def test_widths_and_calibrate_errors_carry_the_common_prefix(argv: list[str], fragment: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert fragment in error_line(capsys)


@pytest.mark.lemma5
@pytest.mark.lemma8
def test_only_in_another_order_is_the_same_configuration(quick_findings: Path) -> None:
    """--only lemma8 lemma5 and --only lemma5 lemma8 are one configuration: the second resumes
    the first's run directory (in the paper's order), it is not refused as another one."""
    before = read_json(quick_findings)
    assert before["run"]["only"] == ["lemma5", "lemma8"]
    swapped = ["check", "--only", "lemma5", "lemma8", *QUICK_CHECK[4:]]
    assert swapped[1:4] != QUICK_CHECK[1:4]
    assert main([*swapped, "--out", str(quick_findings.parent)]) == 0
    assert read_json(quick_findings)["fingerprint"] == before["fingerprint"]


def test_bench_lm_step_out_carries_the_schema_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from sltcheck.repro.lm import bench

    monkeypatch.setattr(bench, "bench_lm_step", lambda *args, **kwargs: {"rows": [], "timing": float("inf")})
    monkeypatch.setattr(bench, "format_bench", lambda result: "table")
    out = tmp_path / "step.json"
    assert main(["bench", "lm-step", "--preset", "cpu-tiny", "--out", str(out)]) == 0
    data = _strict(out.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["timing"] == "inf"


# --- issue 34: results nobody can quietly change -------------------------------------------------------------


def _edited(quick_findings: Path, tmp_path: Path, edit: Any, reseal: bool) -> Path:
    data = read_json(quick_findings)
    edit(data)
    path = tmp_path / "edited" / "findings.json"
    path.parent.mkdir(exist_ok=True)
    write_json_atomic(path, seal(data) if reseal else data)
    return path


def _set(*path: Any, value: Any) -> Any:
    def edit(data: Any) -> None:
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value
    return edit


@pytest.mark.parametrize(("edit", "fields"), [
    (lambda d: (_set("findings", 0, "worst_ratio", value=0.1)(d),
                _set("findings", 0, "verdict", "ratio", value=0.1)(d)), ["worst_ratio", "verdict.ratio", "ratios"]),
    (_set("findings", 0, "verdict", "measured", value="1e5"), ["verdict.measured"]),
    (_set("findings", 0, "verdict", "bound", value="8.0000000000001e-15"), ["verdict.bound"]),
    (_set("findings", 0, "verdict", "holds", value=False), ["verdict.holds"]),
    (_set("findings", 0, "verdict", "undecided", value=True), ["verdict.undecided"]),
    (_set("findings", 0, "violations", value=3), ["violations"]),
    (_set("findings", 0, "ratios", value=[0.2, 0.9]), ["ratios"]),
    (_set("findings", 0, "worst_ratio", value="nan"), ["worst_ratio"]),
])
def test_replay_re_decides_every_recorded_number(quick_findings: Path, tmp_path: Path, edit: Any, fields: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34, case 1: worst_ratio and verdict.ratio edited to 0.1 (the true value 0.25), or measured to
    1e5, replayed "as recorded" with exit 0. The file is sealed again here, so only the numbers can tell."""
    assert main(["check", "--replay", str(quick_findings), "--dps", "30"]) == 0
    capsys.readouterr()
    path = _edited(quick_findings, tmp_path, edit, reseal=True)
    assert main(["check", "--replay", str(path), "--dps", "30"]) == 1
    output = "".join(capsys.readouterr())
    entry = read_json(quick_findings)["findings"][0]
    for field in fields:
        assert f"findings[0] {entry['statement']} [{entry['variant']}] {field}:" in output, output
    assert f"{entry['statement']} [{entry['variant']}] differs from its record in" in output
    assert "digest" not in output  # the untouched entries replay as recorded
    assert "findings[1]" not in output


def test_report_findings_and_replay_refuse_a_findings_file_changed_by_hand(quick_findings: Path, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert seal_state(read_json(quick_findings)) == "sealed"
    path = _edited(quick_findings, tmp_path, _set("findings", 0, "examples", value=999), reseal=False)
    for argv in (["report", "--in", str(path), "--out", str(tmp_path / "r.html")], ["findings", "--in", str(path)]):
        assert main(argv) == 2
        assert "was changed after sltcheck wrote it" in error_line(capsys)
    assert not (tmp_path / "r.html").exists()
    assert main(["check", "--replay", str(path)]) == 1  # the numbers replay; the digest does not
    assert "digest does not match its content" in "".join(capsys.readouterr())
    unsealed = _edited(quick_findings, tmp_path, lambda d: d.pop("digest"), reseal=False)
    assert main(["report", "--in", str(unsealed), "--out", str(tmp_path / "r.html")]) == 2
    assert "carries no digest" in error_line(capsys)  # no digest is no legacy path (tests/test_certificates.py)


def test_replay_of_an_instance_with_a_nan_is_one_line(quick_findings: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    for alpha in ({"float": "nan", "repr": "nan"}, "nan"):
        path = _edited(quick_findings, tmp_path, _set("findings", 0, "instance", "alpha", value=alpha), reseal=True)
        assert main(["check", "--replay", str(path)]) == 2
        assert "findings[0].instance.alpha is not finite" in error_line(capsys)


CERTIFY = ["certify", "--only", "lemma8", "--family", "d1-T3", "--no-search", "--quiet"]


def _certified(out: Path, rounds: int = 2, *more: str) -> int:
    return main([*CERTIFY, "--rounds", str(rounds), "--out", str(out), *more])


@pytest.mark.lemma5
@pytest.mark.lemma8
def test_certify_adds_to_findings_only_while_its_check_is_not_running(quick_findings: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34, case 2: certify --findings wrote into a running check's findings.json, and the check's
    next write dropped it. Now the check's lock refuses it (before the work, and again when it writes),
    and what certify adds is merged under that lock: nothing finished is dropped."""
    import shutil

    from sltcheck.certify import run as certify_run
    from sltcheck.cli.certify import KEY

    run = tmp_path / "check"
    shutil.copytree(quick_findings.parent, run)
    findings, out = run / "findings.json", tmp_path / "certify"
    before = findings.read_bytes()
    with DirectoryLock(run):  # the check is running
        assert _certified(out, 2, "--findings", str(findings)) == 2
        assert "the check that writes it is still running" in error_line(capsys)
    assert findings.read_bytes() == before  # refused before any box was enclosed
    assert not out.exists()
    held: list[DirectoryLock] = []
    real = certify_run.certify_family

    def check_starts_meanwhile(*args: Any, **kwargs: Any) -> Any:
        held.append(DirectoryLock(run))
        return real(*args, **kwargs)

    monkeypatch.setattr(certify_run, "certify_family", check_starts_meanwhile)
    assert _certified(out, 2, "--findings", str(findings)) == 2
    assert "its check started meanwhile" in error_line(capsys)
    assert (out / "certified.json").exists()
    held[0].release()
    monkeypatch.setattr(certify_run, "certify_family", real)
    assert findings.read_bytes() == before
    assert _certified(out, 2, "--findings", str(findings)) == 0  # resumes at once, adds the results
    added = read_json(findings)
    assert seal_state(added) == "sealed"
    assert [e["key"] for e in added[KEY]["families"]] == ["lemma8/d1-T3/as-stated"]
    assert main(["certify", "--only", "lemma5", "--family", "d1-T2", "--no-search", "--quiet", "--rounds", "2",
                 "--out", str(tmp_path / "other"), "--findings", str(findings)]) == 0
    keys = [e["key"] for e in read_json(findings)[KEY]["families"]]
    assert keys == ["lemma8/d1-T3/as-stated", "lemma5/d1-T2/as-stated", "lemma5/d1-T2/via-lemma8"]
    assert main(["report", "--in", str(run), "--out", str(tmp_path / "r.html")]) == 0  # still sealed, accepted


_CHECK_THEN_CERTIFY = """
import subprocess, sys, time
from pathlib import Path
run, out = Path(sys.argv[1]), sys.argv[2]
check = subprocess.Popen([sys.executable, "-m", "sltcheck.cli", "check", "--only", "lemma8", "lemma5", "--profile",
                          "ci", "--no-search", "--no-mutants", "-q", "--out", str(run)])
while not (run / "findings.json").exists() and check.poll() is None:
    time.sleep(0.01)
from sltcheck.cli import main
status = main(["certify", "--only", "lemma5", "--family", "d1-T2", "--rounds", "2", "--no-search", "--quiet",
               "--out", out, "--findings", str(run / "findings.json")])
print()
print("statuses", status, check.wait())
"""


def test_a_check_and_a_certify_on_one_findings_file_lose_nothing(tmp_path: Path) -> None:
    """The race of case 2 as the user ran it: whichever wins, nothing finished is lost."""
    done = subprocess.run([sys.executable, "-c", _CHECK_THEN_CERTIFY, str(tmp_path / "check"),
                           str(tmp_path / "certify")], env=ENV, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    certify_status, check_status = (int(v) for v in done.stdout.splitlines()[-1].split()[1:])
    final = read_json(tmp_path / "check" / "findings.json")
    assert check_status == 0
    assert final["complete"]
    assert seal_state(final) == "sealed"
    if certify_status == 0:
        assert "certified_over_family" in final
    else:
        assert certify_status == 2
        assert "still running" in done.stderr


@pytest.fixture(scope="module")
def certified_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("certified") / "run"
    assert _certified(out) == 0
    with sqlite3.connect(out / "boxes.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM box").fetchone()[0] > 0  # open boxes to tamper with
    return out


@pytest.mark.parametrize(("damage", "fragment"), [
    ("DELETE FROM box", "accounts for 0.0 of its volume"),
    ("DROP TABLE box", "accounts for 0.0 of its volume"),
    ("DELETE FROM box WHERE seq = (SELECT MAX(seq) FROM box)", "of its volume, not all of it"),
    ("UPDATE box SET upper = upper / 2", "does not match the digest written with its open boxes"),
    ("UPDATE family SET state = replace(state, '\"rounds\": 2', '\"rounds\": 1')", "does not match the digest"),
    ("DROP TABLE family", "open boxes but no row of its own"),
    ("UPDATE family SET state = '{\"nonsense\": 1}'", "has rows that are not what sltcheck writes"),
])
def test_a_resumed_proof_refuses_a_store_edited_by_hand(certified_run: Path, tmp_path: Path, damage: str,
                                                        fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34, case 3: open boxes deleted from boxes.sqlite (or its table dropped), then resumed: "held, sup
    <= 0.32" where the untouched store proves only 0.48. Every such edit is now refused, naming the file."""
    import shutil

    out = tmp_path / "run"
    shutil.copytree(certified_run, out)
    with sqlite3.connect(out / "boxes.sqlite") as db:
        opened = db.execute("SELECT COUNT(*) FROM box").fetchone()[0]
        db.execute(damage)
    before = (out / "certified.json").read_bytes()
    assert _certified(out, 4) == 2
    line = error_line(capsys)
    assert fragment in line
    assert str(out / "boxes.sqlite") in line
    assert "DROP TABLE family" not in damage or f"has {opened} open boxes" in line
    assert (out / "certified.json").read_bytes() == before


def test_a_resumed_proof_says_it_rests_on_the_store(certified_run: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "run"
    shutil.copytree(certified_run, out)
    (first,) = read_json(out / "certified.json")["families"]
    assert first["rests_on_store"] is None  # every round in one process
    assert _certified(out, 4) == 0
    (resumed,) = read_json(out / "certified.json")["families"]
    assert resumed["rounds"] == 4
    assert resumed["rests_on_store"]["resumed_at_round"] == 2
    assert resumed["rests_on_store"]["verified"].startswith("the digest chained per round")
    assert resumed["rests_on_store"]["file"] == str(out / "boxes.sqlite")


@pytest.mark.parametrize(("file", "content", "fragment"), [
    ("boxes.sqlite", b"SQLite format 3\x00" + b"\x07" * 2000, "is corrupted or not an SQLite file"),
    ("certified.json", b'{"families": [', "is not valid JSON"),
    ("certified.json", b'{"families": [1]}', "are not what sltcheck certify writes"),
])
def test_a_damaged_certify_file_is_one_line_naming_it(certified_run: Path, tmp_path: Path, file: str, content: bytes,
                                                      fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    out = tmp_path / "run"
    shutil.copytree(certified_run, out)
    (out / file).write_bytes(content)
    assert _certified(out, 3) == 2
    line = error_line(capsys)
    assert fragment in line
    assert str(out / file) in line


def test_certify_holds_its_run_directory_and_names_a_changed_option(certified_run: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34, case 4: two certify runs on one --out ended in sqlite3.IntegrityError; a configuration
    mismatch was two JSON dumps on one line, exit 1."""
    import shutil

    out = tmp_path / "run"
    shutil.copytree(certified_run, out)
    with DirectoryLock(out):
        assert _certified(out, 3) == 2
        assert "is in use by sltcheck process" in error_line(capsys)
    assert _certified(out, 3, "--tolerance", "0.02") == 2
    assert "--tolerance (this directory: 0.01, this command: 0.02)" in error_line(capsys)


def test_two_identical_certify_runs_at_once_never_crash(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "sltcheck.cli", *CERTIFY, "--rounds", "3", "--out", str(tmp_path / "run")]
    runs = [subprocess.Popen(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for _ in range(3)]
    results = [(run.wait(timeout=300), run.stderr.read()) for run in runs if run.stderr]
    assert all(status in (0, 2) and "Traceback" not in err for status, err in results), results
    assert all("in use" in err for status, err in results if status == 2)
    assert any(status == 0 for status, _ in results)
    assert _certified(tmp_path / "run", 3) == 0  # the store is whole


def test_a_run_directory_holds_one_commands_outputs(quick_findings: Path, certified_run: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    check_dir, certify_dir = tmp_path / "check", tmp_path / "certify"
    shutil.copytree(quick_findings.parent, check_dir)
    shutil.copytree(certified_run, certify_dir)
    for argv, owner in ((["repro", "fig4", "--sources", "1", "--no-progress", "--out", str(check_dir)], "check"),
                        ([*CERTIFY, "--out", str(check_dir)], "check"),
                        ([*QUICK_CHECK, "--out", str(certify_dir)], "certify"),
                        (["repro", "fig4", "--sources", "1", "--no-progress", "--out", str(certify_dir)], "certify")):
        assert main(argv) == 2
        assert f"holds the outputs of `sltcheck {owner}`" in error_line(capsys)
    assert sorted(p.name for p in check_dir.iterdir()) == sorted(p.name for p in quick_findings.parent.iterdir())


def _tiny_store(opened: Any) -> Any:
    """``opened``'s connection limited to the pages it has: the next page it needs finds the disk full
    (SQLite's own SQLITE_FULL, as on a full disk)."""
    def limited(*args: Any, **kwargs: Any) -> Any:
        db = opened(*args, **kwargs)
        connection = getattr(db, "db", db)
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {max(pages, 2)}")
        return db
    return limited


def test_a_full_disk_is_one_line_naming_the_file_and_the_run_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34, case 6: a full disk mid-run was an sqlite3.OperationalError traceback, and a 16 KiB disk
    was called "corrupted"."""
    import errno

    from sltcheck.certify import store as certify_store
    from sltcheck.cli import repro as repro_cli  # noqa: F401 - the command's module, patched below

    monkeypatch.setattr(synthetic, "preset_config", lambda *args, **kwargs: tiny_config(widths=(4, 8, 12, 16)))
    out = tmp_path / "sweep"
    with monkeypatch.context() as patch:
        patch.setattr(RunDirectory, "_open_store", _tiny_store(RunDirectory._open_store))
        assert main(["repro", "fig4", "--out", str(out), "--no-progress"]) == 2
    line = error_line(capsys)
    assert "disk is full" in line
    assert str(out / "results.sqlite") in line
    assert "corrupted" not in line
    assert main(["repro", "fig4", "--out", str(out), "--no-progress"]) == 0  # resumes
    assert main(["repro", "fig4", "--out", str(tmp_path / "whole"), "--no-progress"]) == 0
    assert without_timing(read_json(out / "summary.json")) == without_timing(read_json(tmp_path / "whole" /
                                                                                       "summary.json"))
    capsys.readouterr()
    boxes = tmp_path / "boxes"
    boxes.mkdir()
    with sqlite3.connect(boxes / "boxes.sqlite") as db:  # small pages: the state's row soon needs more of them
        db.execute("PRAGMA page_size = 512")
        db.execute("VACUUM")
    with monkeypatch.context() as patch:
        patch.setattr(certify_store, "Store", _tiny_store(certify_store.Store))
        assert _certified(boxes, 6) == 2
    line = error_line(capsys)
    assert "disk is full" in line
    assert str(boxes / "boxes.sqlite") in line
    assert _certified(boxes, 6) == 0

    def full(fileno: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr("sltcheck.jsonfiles.os.fsync", full)
        assert main([*QUICK_CHECK, "-q", "--out", str(tmp_path / "check")]) == 2
    line = error_line(capsys)
    assert "No space left on device" in line
    assert str(tmp_path / "check" / "findings.json") in line
    assert not [p for p in (tmp_path / "check").iterdir() if p.name.endswith(".tmp")]


_WITHOUT = """
import sys
blocked = sys.argv[1].split(",")
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in blocked):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Blocker())
from sltcheck.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize(("blocked", "argv", "extra"), [
    ("torch", ["repro", "fig7"], "sltcheck[lm]"),
    ("torch", ["bench", "lm-step"], "sltcheck[lm]"),
    ("dask,distributed", ["repro", "fig4", "--cluster", "local", "--sources", "1"], "sltcheck[cluster]"),
    ("flint", [*CERTIFY, "--backend", "arb"], "sltcheck[certify]"),
])
def test_a_missing_extra_is_one_line_naming_it_before_any_file(tmp_path: Path, blocked: str, argv: list[str],
                                                               extra: str) -> None:
    """Issue 34, case 7: without torch, repro fig7 raised MissingExtra as a traceback; without dask,
    --cluster local an ImportError naming no extra, after writing files."""
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", _WITHOUT, blocked, *argv, "--out", str(out)], env=ENV,
                          capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("sltcheck: error: "), done.stderr
    assert extra in lines[0]
    assert not out.exists()


def test_a_closed_pipe_is_one_line(tmp_path: Path) -> None:
    """``sltcheck ... | head`` ended in BrokenPipeError tracebacks."""
    process = subprocess.Popen([sys.executable, "-m", "sltcheck.cli", "certify", "--list"], env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout
    assert process.stderr
    process.stdout.close()
    err = process.stderr.read()
    assert process.wait(timeout=60) == 2
    assert err == "sltcheck: error: standard output was closed before everything was written (broken pipe)\n"


def test_an_unreachable_scheduler_is_one_line_before_any_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``--scheduler tcp://127.0.0.1:1`` waited 60 s, then a traceback, files left."""
    pytest.importorskip("distributed")
    from sltcheck import executors

    monkeypatch.setattr(executors, "CONNECT_TIMEOUT", "1s")
    for argv in (["repro", "fig4", "--sources", "1", "--no-progress"], CERTIFY):
        assert main([*argv, "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "out")]) == 2
        assert "--scheduler tcp://127.0.0.1:1: no Dask scheduler answered" in error_line(capsys)
        assert not (tmp_path / "out").exists()


def test_a_bound_the_target_cannot_meet_leaves_nothing_that_refuses_the_rerun(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch,
                                                                              capsys: pytest.CaptureFixture[str]
                                                                              ) -> None:
    """``repro fig4 --mode paper --bound as-proven`` on a target above the norm limits left a config.json
    that refused the corrected command."""
    out = tmp_path / "run"
    monkeypatch.setattr(synthetic, "preset_config",
                        lambda *args, **kwargs: tiny_config(norm_policy="keep", bound="as-proven"))
    assert main(["repro", "fig4", "--out", str(out), "--no-progress"]) == 2
    assert "--bound as-proven: bound 'as-proven' assumes every target matrix" in error_line(capsys)
    assert sorted(p.name for p in out.iterdir()) == []  # no lock file left behind either
    monkeypatch.setattr(synthetic, "preset_config", lambda *args, **kwargs: tiny_config(norm_policy="keep"))
    assert main(["repro", "fig4", "--out", str(out), "--no-progress"]) == 0


@pytest.mark.lemma8
def test_ci_random_draws_a_seed_records_it_and_replays_as_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """``check --profile ci-random`` (a listed choice) crashed after the work and was not random."""
    import secrets

    monkeypatch.setattr(secrets, "randbelow", lambda n: 12345)
    argv = ["check", "--only", "lemma8", "--no-search", "--no-mutants"]
    assert main([*argv, "--profile", "ci-random", "--out", str(tmp_path / "random")]) == 0
    assert "seed 12345 drawn at random" in capsys.readouterr().out
    recorded = read_json(tmp_path / "random" / "findings.json")
    assert (recorded["profile"], recorded["seed"]) == ("ci", 12345)
    assert main([*argv, "--profile", "ci", "--seed", "12345", "--out", str(tmp_path / "again")]) == 0
    assert without_timing(read_json(tmp_path / "again" / "findings.json")) == without_timing(recorded)


def test_a_resumed_check_does_not_mix_gradient_backends(quick_findings: Path, tmp_path: Path) -> None:
    """A check resumed with torch after a run without it mixed autograd and finite-difference climbs."""
    from sltcheck.findings import resume
    from sltcheck.harness.gradients import FINITE_DIFFERENCES, backend_name, differentiable

    data = read_json(quick_findings)
    entry = next((e for e in data["findings"] if backend_name(differentiable(e["statement"], e["variant"]))
                  != FINITE_DIFFERENCES), None)
    if entry is None:
        pytest.skip("torch is not installed: every climb here uses finite differences")
    entry["search"] = {"ratio": 0.0, "violated": False, "shape": {}, "starts": 1, "evaluations": 1, "seconds": 0.0,
                       "replay": None, "certified": None, "gradients": FINITE_DIFFERENCES}
    (tmp_path / "findings.json").write_text(json.dumps(seal(data)))
    with pytest.raises(StoredResultError, match="climbed with finite-differences gradients, this environment "
                                                "would use autograd"):
        resume(tmp_path, data["run"])


def test_widths_writes_its_json_where_out_says(tmp_path: Path) -> None:
    """``widths --json --out x.json`` wrote nothing, silently."""
    out = tmp_path / "w.json"
    assert main(["widths", "--eps", "0.1", "--heads", "1", "--d1", "2", "--json", "--out", str(out)]) == 0
    assert _strict(out.read_text())["parameters"]["d1"] == 2
