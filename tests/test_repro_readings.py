"""``sltcheck repro readings``: a grid of readings of one figure, side by side; the error
definitions, fits and regimes it reads; vacuous checks never counted as held."""

from __future__ import annotations

import json
from pathlib import Path

import mpmath
import numpy as np
import pytest

from sltcheck.cli import main
from sltcheck.cli.repro import default_out
from sltcheck.records import ReadingsFile
from sltcheck.report.inputs import load_inputs
from sltcheck.repro import readings, synthetic, targets
from sltcheck.repro.fits import fit, fit_decay, fit_log_linear, inside, interval_text, regime
from sltcheck.repro.readings_text import conclusion
from sltcheck.schema import load, without_timing

SMALL_GRID = ["--sources", "2", "--widths", "4,8,12", "--test-samples", "30", "--target-epochs", "1",
              "--inits", "theory,xavier", "--tokens", "learned", "--norms", "keep",
              "--errors", "max,read-out", "--fits", "linear,log-linear", "--no-progress"]


@pytest.fixture(scope="module")
def small_readings(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """One small readings run (2 computed runs x 2 errors x 2 fits), counting target trainings."""
    out = tmp_path_factory.mktemp("readings") / "fig4"
    trainings = []
    real = targets.train_mha

    def counted(*args, **kwargs):
        trainings.append(1)
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(targets, "train_mha", counted)
        assert main(["repro", "readings", "fig4", *SMALL_GRID, "--out", str(out)]) == 0
    return out, len(trainings)


def test_every_reading_is_in_the_table(small_readings: tuple[Path, int]) -> None:
    out, _ = small_readings
    document = load(out / "readings.json", ReadingsFile, "readings")
    assert len(document["readings"]) == 2 * 2 * 2
    names = {r["name"] for r in document["readings"]}
    assert "xavier+exact+learned+keep / read-out / log-linear" in names
    for row in document["readings"]:
        assert set(row["options"]) == {"init", "solver", "token", "norms", "error", "fit", "fit_widths"}
        assert "paper_inside" in row
        assert "regime" in row
        assert row["seconds"] >= 0
        assert [c["x"] for c in row["curve"]] == [4.0, 8.0, 12.0]
    assert document["complete"]
    assert document["conclusion"]
    per_run = {r["run"]: r["seconds"] for r in document["readings"]}
    assert document["wall_seconds_all"] >= sum(per_run.values())


def test_the_target_is_trained_once_and_shared(small_readings: tuple[Path, int]) -> None:
    out, trainings = small_readings
    assert trainings == 1
    assert len(list((out / "targets").glob("target-*.json"))) == 1
    tokens = {json.dumps(json.loads((run / "summary.json").read_text())["regression_token"])
              for run in (out / "runs").iterdir()}
    assert len(tokens) == 1


def test_figures_are_files_beside_the_results(small_readings: tuple[Path, int]) -> None:
    out, _ = small_readings
    for suffix in ("svg", "png"):
        assert (out / f"readings.{suffix}").stat().st_size > 1000
        for run in (out / "runs").iterdir():
            assert (run / f"figure.{suffix}").stat().st_size > 1000


def test_rerunning_resumes_and_gives_the_same_readings(small_readings: tuple[Path, int]) -> None:
    out, _ = small_readings
    before = without_timing(json.loads((out / "readings.json").read_text()))
    assert main(["repro", "readings", "fig4", *SMALL_GRID, "--out", str(out)]) == 0
    assert without_timing(json.loads((out / "readings.json").read_text())) == before


def test_another_grid_is_refused_in_the_same_directory(small_readings: tuple[Path, int],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = small_readings
    other = [*SMALL_GRID[:-1], "--seed", "1", "--no-progress"]
    assert main(["repro", "readings", "fig4", *other, "--out", str(out)]) == 2
    assert "--seed" in capsys.readouterr().err


def test_the_report_shows_readings_not_every_run(small_readings: tuple[Path, int]) -> None:
    out, _ = small_readings
    inputs = load_inputs([str(out)])
    assert len(inputs["readings"]) == 1
    assert inputs["synthetic"] == []


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--inits", "theory,nosuch"], "--inits"),
        (["--widths", "8,4"], "--widths"),
        (["--widths", "0"], "--widths"),
        (["--fit-widths", "9:3"], "--fit-widths"),
        (["--errors", "median"], "--errors"),
        (["--mip-gap", "nan"], "--mip-gap"),
        (["--time-limit", "-1"], "--time-limit"),
        (["--sources", "0"], "--sources"),
    ],
)
def test_bad_options_are_one_line_before_any_work(argv: list[str], fragment: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never"
    assert main(["repro", "readings", "fig4", *argv, "--out", str(out)]) == 2  # main returns the parser's status
    assert fragment in capsys.readouterr().err
    assert not out.exists()


def test_figure6_has_no_token_axis() -> None:
    with pytest.raises(ValueError, match="untrained"):
        readings.make_config("fig6", "quick", {"token": ("fixed-zero",)})
    assert next(name for name, _ in readings.make_config("fig6", "quick").runs()) == "theory+exact+keep"


def test_options_that_change_results_name_the_default_folder() -> None:
    class Args:
        inits = ("xavier",)
        sources = 7
        seed = None

    assert default_out("readings-fig4-quick", Args(), ("inits", "sources", "seed")) == \
        str(Path("runs") / "readings-fig4-quick-inits-xavier-sources-7")


# --- vacuous checks ---------------------------------------------------------------------------------


def test_a_bound_above_the_trivial_bound_is_vacuous() -> None:
    assert synthetic.vacuity(2.0, 1.0) == {"trivial_bound": 1.0, "vacuous": True, "bound_over_trivial": 2.0}
    assert not synthetic.vacuity(0.5, 1.0)["vacuous"]
    beyond = synthetic.vacuity(mpmath.mpf("1e400"), 3.0)
    assert beyond["vacuous"]
    assert isinstance(beyond["bound_over_trivial"], str)
    assert mpmath.mpf(beyond["bound_over_trivial"]) > mpmath.mpf("1e399")


def test_figure6_checks_beyond_one_block_are_vacuous(tmp_path: Path) -> None:
    """The issue's finding: Theorem 14's chain for B >= 2 is astronomically above what the outputs
    can differ by, so those checks cannot fail; they are counted vacuous, never held."""
    config = synthetic.preset_config("fig6", "quick", "theory", widths=(8,), blocks=(2, 3), sources=1,
                                     test_samples=20)
    summary = synthetic.run(config, str(tmp_path / "fig6"), progress=False)
    assert summary["checked"] == 2
    assert summary["vacuous"] == 2
    assert summary["held"] == 0
    assert mpmath.mpf(summary["least_bound_over_trivial"]) > 1e10


def test_summary_counts_only_non_vacuous_passes_as_held() -> None:
    config = synthetic.preset_config("fig4", "quick", "theory", widths=(4,), sources=2)
    records = [{"blocks": 1, "length": 4, "width": 4, "error": 0.1, "ratio": 0.1, "bound": 1.0, "holds": True,
                "violated": False, "undecided": False, **synthetic.vacuity(bound, 0.5)} for bound in (1.0, 0.2)]
    summary = synthetic.summarise(config, records, {})
    assert (summary["vacuous"], summary["held"]) == (1, 1)


# --- fits and regimes ----------------------------------------------------------------------------------

WIDTHS = np.arange(4, 33, 4, dtype=float)


def test_log_linear_fit_recovers_a_known_decay() -> None:
    found = fit_log_linear(WIDTHS, 0.8 * np.exp(-0.06 * WIDTHS) * (1 + 0.01 * np.sin(WIDTHS)))
    assert abs(found.gamma - 0.8) < 0.02
    assert abs(found.delta - 0.06) < 0.002
    assert inside(found.as_dict(), "delta", 0.06)
    assert inside(found.as_dict(), "gamma", 0.8)
    assert not inside(found.as_dict(), "delta", 0.08)


def test_per_source_fit_uses_every_point() -> None:
    per_source = [np.array([0.9, 1.1]) * 0.8 * np.exp(-0.06 * n) for n in WIDTHS]
    found = fit("per-source", WIDTHS, np.array([p.mean() for p in per_source]), per_source)
    assert found.points == 2 * WIDTHS.size
    assert abs(found.delta - 0.06) < 1e-3


def test_a_shared_delta_is_shown_as_fixed_not_as_a_point_interval() -> None:
    shared = fit_decay(WIDTHS, 2.0 * np.exp(-0.06 * WIDTHS), delta=0.06).as_dict()
    assert shared["delta_interval"] is None
    assert shared["delta_fixed"]
    assert interval_text(shared, "delta") == "0.06 (shared, not fitted)"
    assert inside(shared, "delta", 0.06) is None


@pytest.mark.parametrize(
    ("curve", "expected"),
    [
        (0.8 * np.exp(-0.06 * WIDTHS), "exponential"),
        (np.maximum(0.8 * np.exp(-0.3 * WIDTHS), 0.12), "plateau"),
        (np.full(WIDTHS.size, 0.5), "no decay"),
        (0.8 * np.exp(-0.06 * WIDTHS[:4]), "undetermined"),
    ],
)
def test_regimes_are_told_apart(curve: np.ndarray, expected: str) -> None:
    wobble = 1 + 0.02 * np.cos(np.arange(curve.size))
    assert regime(WIDTHS[: curve.size], curve * wobble)["regime"] == expected


def test_a_plateau_says_its_level_and_where_it_starts() -> None:
    found = regime(WIDTHS, np.maximum(0.8 * np.exp(-0.3 * WIDTHS), 0.12))
    assert found["starts_at"] == 8.0
    assert found["level"] == pytest.approx(0.12)


def test_the_conclusion_backs_each_claim_with_its_numbers() -> None:
    row = {"name": "xavier+exact+learned+keep / max / linear", "run": "runs/x", "checked": 4, "violations": 0,
           "vacuous": 3, "gamma": 0.5, "delta": 0.01, "gamma_interval": [0.4, 0.6], "delta_interval": [0.0, 0.02],
           "paper_inside": {"both": False}, "workshop_inside": {"both": False},
           "smallest_width": {"width": 4.0, "mean": 0.3}, "largest_width": {"width": 32.0, "mean": 0.12},
           "regime": {"regime": "plateau", "level": 0.12, "starts_at": 12.0, "early_delta": 0.1,
                      "early_delta_interval": [0.05, 0.15], "late_delta": 0.001, "late_delta_interval": [-0.01, 0.01]}}
    text = conclusion({"figure": "fig4", "complete": True, "readings": [row],
                       "target": [{"token": "learned", "train_loss": 3.28, "omega_variance": 3.29,
                                   "explained": 1 - 3.28 / 3.29}]})
    assert "No reading of the 1" in text
    assert "from n = 12 at 0.12" in text
    assert "0.1 [0.05, 0.15]" in text
    assert "3 vacuous" in text
    assert "0.3%" in text


def test_an_interrupted_grid_says_it_is_partial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = readings.make_config("fig4", "quick", {"init": ("theory", "xavier"), "token": ("fixed-zero",),
                                                    "norms": ("rescale",)},
                                  widths=(4, 8), sources=1, test_samples=10, target_epochs=1)
    real, calls = synthetic.run, []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(synthetic, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        readings.run(config, tmp_path / "grid", progress=False)
    partial = json.loads((tmp_path / "grid" / "readings.json").read_text())
    assert not partial["complete"]
    assert (partial["runs_done"], partial["runs_planned"]) == (1, 2)
    assert partial["conclusion"].startswith("PARTIAL: 1 of 2 runs finished")
    monkeypatch.setattr(synthetic, "run", real)
    assert readings.run(config, tmp_path / "grid", progress=False)["complete"]


def test_a_decay_under_the_small_rate_is_slow_not_exponential() -> None:
    assert regime(WIDTHS, 0.4 * np.exp(-0.006 * WIDTHS))["regime"] == "slow decay"
