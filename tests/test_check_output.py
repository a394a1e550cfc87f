"""What ``sltcheck check`` prints: a progress bar per statement on stderr, results through logging
(``-q``: warnings only; ``-v``: a line per variant and mutant), ``--replay --only``."""

from __future__ import annotations

from pathlib import Path

import pytest

from sltcheck.cli import main
from sltcheck.console import StatementProgress

QUICK = ["check", "--only", "lemma8", "--profile", "ci", "--no-search", "--no-mutants"]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("check")
    assert main([*QUICK, "--out", str(out), "-q"]) == 0
    return out / "findings.json"


@pytest.mark.lemma8
def test_default_prints_a_progress_bar_per_statement_and_the_table(tmp_path, capfd):
    assert main([*QUICK, "--out", str(tmp_path)]) == 0
    out, err = capfd.readouterr()
    assert "lemma8" in err
    assert "ex/s" in err
    assert "100%" in err
    assert "worst ratio" in out
    assert "wrote" in out


def test_quiet_prints_nothing_for_a_run_that_holds(tmp_path, capfd):
    assert main([*QUICK, "--out", str(tmp_path), "-q"]) == 0
    out, err = capfd.readouterr()
    assert out == ""
    assert err == ""


@pytest.mark.lemma8
def test_verbose_adds_a_line_per_variant(tmp_path, capfd):
    assert main([*QUICK, "--out", str(tmp_path), "-v"]) == 0
    out, _ = capfd.readouterr()
    assert "lemma8 [as-stated]: 50 examples, worst ratio" in out


@pytest.mark.lemma8
@pytest.mark.lemma13
def test_replay_only_replays_the_named_statement(findings, capfd):
    assert main(["check", "--replay", str(findings), "--only", "lemma8", "--dps", "30"]) == 0
    out, _ = capfd.readouterr()
    assert out.startswith("lemma8 as-stated: measured")
    assert "holds" in out
    # nothing of lemma13 recorded: nothing replayed is exit status 1 with a message (issue 18)
    assert main(["check", "--replay", str(findings), "--only", "lemma13", "--dps", "30"]) == 1
    assert "nothing to replay" in capfd.readouterr().out


@pytest.mark.lemma8
def test_a_tasks_ticks_stop_at_its_share_and_its_end_fills_it():
    progress = StatementProgress("lemma8", [10, 5], enabled=True)
    progress.task("as-stated", 10)
    for _ in range(25):  # a search that overshoots its estimate
        progress.tick()
    assert progress._bar.n == 10
    progress.task("mutant", 5)  # the previous task is filled, this one starts
    progress.tick()
    assert progress._bar.n == 11
    progress.close()
    assert progress._bar.n == 15


@pytest.mark.lemma8
def test_a_surviving_mutant_is_exit_status_1_with_its_name(tmp_path, capfd, monkeypatch):
    """A check whose mutant survives checks nothing: the run says so and exits 1 (issue 18, item 4)."""
    from sltcheck.harness import mutants

    monkeypatch.setattr(mutants, "refute", lambda statement, mutant, **_: mutants.Refutation(
        statement, mutant.name, False, None, None, "no counterexample found"))
    assert main(["check", "--only", "lemma8", "--profile", "ci", "--no-search", "--out", str(tmp_path), "-q"]) == 1
    out, _ = capfd.readouterr()
    assert "needs attention (exit status 1): mutant lemma8:" in out
    assert "survived" in out


def test_a_violated_variant_is_exit_status_1(findings):
    from sltcheck.checking import status as _status
    from sltcheck.jsonfiles import read_json

    state = read_json(findings)
    assert _status(state) == 0
    state["findings"][0]["violated"] = True
    assert _status(state) == 1
