"""``sltcheck report`` without ``--in``: its quick runs go to one directory a rerun resumes, Ctrl-C stops
it with exit 130 (never running on to fail about an --in nobody gave), ``--workers`` reaches every step."""

from __future__ import annotations

from pathlib import Path

import pytest

import sltcheck.cli
from sltcheck.cli import main


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The quick runs ``sltcheck report`` starts, recorded instead of run; each answers with
    ``STATUS[command]`` (0 unless set)."""
    seen: list[list[str]] = []

    def step(argv: list[str]) -> int:
        seen.append(list(argv))
        return STATUS.get(" ".join(argv[:2]) if argv[0] == "repro" else argv[0], 0)

    monkeypatch.setattr(sltcheck.cli, "main", step)
    STATUS.clear()
    return seen


STATUS: dict[str, int] = {}


def test_ctrl_c_during_the_check_stops_the_report_with_130(tmp_path: Path, steps: list[list[str]],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    STATUS["check"] = 130  # what sltcheck.cli.main returns for a KeyboardInterrupt
    assert main(["report", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "r.html")]) == 130
    assert [argv[0] for argv in steps] == ["check"]  # no reproduction started after it
    err = capsys.readouterr().err
    assert "interrupted; rerun the same command to resume" in err
    assert "--in" not in err
    assert not (tmp_path / "r.html").exists()


def test_a_rerun_resumes_the_same_directories_and_workers_reach_every_step(tmp_path: Path,
                                                                           steps: list[list[str]]) -> None:
    pytest.importorskip("torch")  # the reproductions run only with torch
    STATUS["repro fig5"] = 2  # a step that fails stops the report (before it reads any input)
    runs = tmp_path / "runs"
    for _ in range(2):
        assert main(["report", "--runs", str(runs), "--workers", "3", "--out", str(tmp_path / "r.html")]) == 2
    first, second = steps[:3], steps[3:]
    assert first == second  # the same commands into the same directories: the rerun resumes them
    outs = [argv[argv.index("--out") + 1] for argv in first]
    assert outs == [str(runs / "quick" / name) for name in ("check", "fig4", "fig5")]
    assert all(argv[argv.index("--workers") + 1] == "3" for argv in first)


def test_the_help_says_how_long_the_quick_start_takes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "min on 2 busy cores" in text
    assert "a rerun resumes them" in text
    assert "--workers N" in text
