"""``sltcheck check`` end to end: the installed command, a tiny run, its findings.json, its replay and
the report built from those real findings.

The run is ``sltcheck check --only lemma8`` at the ci profile (50 examples, the worst-case search,
4 mutants; ~10 s of CPU). Lemma 8 has a closed-form worst case, so the findings are compared with
values derived here, not with what the code printed.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sltcheck.assumptions import violations
from sltcheck.harness import decode_instance, evaluate
from sltcheck.registry import load
from sltcheck.report import page as report

TIMEOUT = 900  # seconds, for a loaded 2-core machine


def _sltcheck(*args: str) -> subprocess.CompletedProcess[str]:
    """The console script installed beside this interpreter (what a user runs)."""
    script = Path(sys.executable).with_name("sltcheck")
    # Without the script, ``python -m sltcheck.cli`` (which exits with main's status; ``-c "main()"`` exits 0).
    command = [str(script)] if script.exists() else [sys.executable, "-m", "sltcheck.cli"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=TIMEOUT)


def _without_timings(value: Any) -> Any:
    """``value`` with every wall-time field left out (the only fields a rerun may change)."""
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in {"seconds", "examples_per_second"}}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("check")
    done = _sltcheck("check", "--only", "lemma8", "--profile", "ci", "--seed", "0", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"wrote {out / 'findings.json'}" in done.stdout
    return out


@pytest.fixture(scope="module")
def findings(run: Path) -> dict[str, Any]:
    return json.loads((run / "findings.json").read_text())


@pytest.mark.lemma8
def test_findings_name_the_run_and_every_variant(findings: dict[str, Any]) -> None:
    assert (findings["profile"], findings["seed"]) == ("ci", 0)
    module = load("lemma8")
    assert [(f["statement"], f["variant"]) for f in findings["findings"]] == [("lemma8", v) for v in module.VARIANTS]
    entry = findings["findings"][0]
    assert entry["default"]
    assert not entry["violated"]
    assert entry["violations"] == 0
    # The ci profile's 50 Hypothesis examples, each one valid, undecided or filtered and counted.
    assert entry["examples"] == 50
    assert len(entry["ratios"]) == 50
    assert entry["filtered"] >= 0
    assert 0 <= entry["undecided"] <= entry["examples"]


def test_worst_ratio_is_lemma8s_known_supremum(findings: dict[str, Any]) -> None:
    """measured <= 2 alpha tanh(eps/2) (the two-token supremum) and bound = sqrt(d1) alpha (e^{2 eps} - 1)
    >= 2 alpha eps, so measured / bound <= tanh(eps/2) / eps < 1/2, with 1/2 approached as eps -> 0:
    a search that finds the worst case reports a ratio just under 1/2."""
    entry = findings["findings"][0]
    assert 0.49 < entry["worst_ratio"] <= 0.5
    assert 0.49 < entry["search"]["ratio"] <= 0.5
    # The recorded worst instance replays to the recorded ratio (exact hex floats in the JSON).
    instance = decode_instance(entry["instance"])
    assert not violations("lemma8", instance)
    assert evaluate("lemma8", "as-stated", instance).ratio == pytest.approx(entry["worst_ratio"], rel=1e-12)


@pytest.mark.lemma8
def test_every_mutant_is_refuted_by_a_replayable_counterexample(findings: dict[str, Any]) -> None:
    mutants = {m.name: m for m in load("lemma8").MUTANTS}
    assert sorted(row["mutant"] for row in findings["mutants"]) == sorted(mutants)
    for row in findings["mutants"]:
        assert row["refuted"], row
        mutant = mutants[row["mutant"]]
        instance = decode_instance(row["counterexample"])
        verdict = evaluate("lemma8", mutant.name, instance, bound=mutant.bound)
        assert verdict.violated
        assert verdict.ratio == pytest.approx(row["ratio"], rel=1e-12)
        # The counterexample as found, before sltcheck.harness.simplify, is recorded and refutes too.
        raw = evaluate("lemma8", mutant.name, decode_instance(row["raw_counterexample"]), bound=mutant.bound)
        assert raw.violated
        assert raw.ratio == pytest.approx(row["raw_ratio"], rel=1e-12)


@pytest.mark.lemma8
def test_replay_redecides_the_findings(run: Path) -> None:
    done = _sltcheck("check", "--replay", str(run / "findings.json"), "--dps", "60")
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"lemma8 as-stated: measured .* at 60 digits: holds", done.stdout)


@pytest.mark.lemma8
def test_same_seed_same_findings(run: Path, findings: dict[str, Any], tmp_path: Path) -> None:
    again = _sltcheck("check", "--only", "lemma8", "--profile", "ci", "--seed", "0", "--no-mutants",
                      "--out", str(tmp_path))
    assert again.returncode == 0, again.stderr[-3000:]
    second = json.loads((tmp_path / "findings.json").read_text())
    assert _without_timings(second["findings"]) == _without_timings(findings["findings"])


@pytest.mark.lemma8
def test_worker_processes_give_the_same_findings(run: Path, findings: dict[str, Any], tmp_path: Path) -> None:
    """``--workers 2`` runs the units in two processes, in another order: the same findings, mutants
    and unit list, stored in the planned order."""
    again = _sltcheck("check", "--only", "lemma8", "--profile", "ci", "--seed", "0", "--workers", "2",
                      "--out", str(tmp_path))
    assert again.returncode == 0, again.stderr[-3000:]
    second = json.loads((tmp_path / "findings.json").read_text())
    assert second["complete"]
    assert second["done"] == second["planned"] == findings["planned"]
    assert _without_timings(second["findings"]) == _without_timings(findings["findings"])
    assert _without_timings(second["mutants"]) == _without_timings(findings["mutants"])


@pytest.mark.lemma8
def test_report_is_built_from_the_real_findings(run: Path, tmp_path: Path) -> None:
    content = report.build(report.load_inputs([str(run)]))
    assert content["glance"]["held"] == 1
    assert not content["glance"]["violated"]
    assert (content["glance"]["mutants"], content["glance"]["mutants_refuted"]) == (4, 4)
    page = report.write(content, str(tmp_path / "report.html"))
    text = html.unescape(re.sub(r"<[^>]+>", " ", page.read_text()))
    for name in ("lemma8", "as-stated", *(m.name for m in load("lemma8").MUTANTS)):
        assert name in text, name


@pytest.mark.lemma8
def test_refuted_mutants_counterexamples_are_certified(findings: dict[str, Any]) -> None:
    """Each counterexample of a mutant whose bound is enclosed is proved violated in interval arithmetic."""
    from sltcheck.harness import interval_verdict as certified

    enclosed = [m for m in findings["mutants"] if m["refuted"] and m["mutant"] in certified.supported()["lemma8"]]
    assert enclosed  # exponent-quartered
    for m in enclosed:
        assert m["certified_outcome"] == "violated", m
        assert m["certified_backend"] in ("arb", "mpmath"), m


@pytest.mark.lemma8
def test_findings_name_the_kernels_and_builds_they_ran_with(findings: dict[str, Any]) -> None:
    """Issue 41: a ratio's last digits depend on the float64 kernels and the torch build, so the file
    records them (sltcheck.versions.kernels), once for a run that was not resumed elsewhere."""
    from importlib import metadata

    (environment,) = findings["environments"]
    try:
        torch = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch = "not installed"
    assert environment["torch"] == torch
    assert environment["machine"]
    assert isinstance(environment["numpy_dispatch"], list | str)
