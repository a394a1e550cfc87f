"""Success frequencies, width slack and the C trend (sltcheck/pruning/probability.py)."""

import json

import numpy as np
import pytest

from sltcheck.cli import main
from sltcheck.executors import InProcessExecutor
from sltcheck.pruning import probability
from sltcheck.pruning.probability import Setting


@pytest.mark.parametrize(
    ("setting", "groups", "expected"),
    [
        # wide enough: every entry's optimal subset sum meets eps/(d1 d2) = 0.025
        (Setting("lemma7", 0.1, 2, 2), {"n": 24}, "confirmed-or-inconclusive"),
        # one product per entry cannot meet 0.025: the statement is refuted at this width
        (Setting("lemma7", 0.1, 2, 2), {"n": 1}, "refuted"),
        (Setting("theorem9", 0.5, 1, 1), {"n_K": 1, "n_V": 1}, "refuted"),
        (Setting("theorem9", 0.5, 1, 1), {"n_K": 16, "n_V": 16}, "confirmed-or-inconclusive"),
    ],
)
def test_frequency_verdicts(setting: Setting, groups: dict, expected: str) -> None:
    row = probability.frequency_at(setting, groups, trials=12, seed=0)
    assert row["ci_low"] <= row["frequency"] <= row["ci_high"]
    if expected == "refuted":
        assert row["verdict"] == "refuted"
    else:
        assert row["verdict"] != "refuted"
        assert row["successes"] >= 10


@pytest.mark.lemma2
def test_same_seed_same_result_on_any_executor() -> None:
    setting = Setting("lemma2", 0.5, 1, 1)
    first = probability.frequency_at(setting, {"n": 6}, trials=6, seed=3)
    second = probability.frequency_at(setting, {"n": 6}, trials=6, seed=3, executor=InProcessExecutor())
    for key in ("successes", "worst_error", "median_error"):
        assert first[key] == second[key]


def test_the_search_beats_random_inputs() -> None:
    """worst_input_error on ||A x|| over the unit ball must reach ||A|| (a random input does not)."""
    A = np.array([[3.0, 1.0], [0.0, 1.0]])
    value, x = probability.worst_input_error(
        lambda X: float(np.linalg.norm(A @ X[0])), (1, 2), 1.0, np.random.default_rng(0), starts=2, maxiter=30
    )
    assert value == pytest.approx(np.linalg.norm(A, 2), rel=1e-6)
    assert np.linalg.norm(x) <= 1.0 + 1e-15


@pytest.mark.lemma7
@pytest.mark.theorem9
@pytest.mark.theorem14
def test_prescribed_widths_follow_the_width_calculator() -> None:
    assert probability.prescribed(Setting("lemma7", 0.1, 2, 2), 1.0)["groups"] == {"n": 4}  # ceil(log 40)
    t9 = probability.prescribed(Setting("theorem9", 0.5, 1, 1), 1.0)["groups"]
    assert t9 == {"n_K": 3, "n_V": 2}  # ceil(log 16), ceil(log 4)
    t14 = probability.prescribed(Setting("theorem14", 0.5, 1, 1, B=2), 1.0)["groups"]
    assert set(t14) == {"n_MHA[1]", "n_FC[1]", "n_MHA[2]", "n_FC[2]"}


def test_lemma7_smallest_width_is_monotone_in_eps() -> None:
    loose = probability.smallest_width(Setting("lemma7", 0.5, 1, 1), trials=200)
    tight = probability.smallest_width(Setting("lemma7", 0.1, 1, 1), trials=200)
    assert loose["n_prime"] is not None
    assert tight["n_prime"] is not None
    assert loose["n_prime_low"] <= loose["n_prime"] < tight["n_prime"]


@pytest.mark.parametrize(("slope", "grows"), [(2.0, ["log_d1"]), (0.0, [])])
def test_fit_trend_finds_a_planted_slope(slope: float, grows: list) -> None:
    rng = np.random.default_rng(0)
    rows = [
        {
            "log_d1": np.log(d),
            "log_H": 0.0,
            "log_inv_eps": np.log(1 / e),
            "C_needed": 3.0 + slope * np.log(d) + 0.01 * rng.standard_normal(),
        }
        for d in (1, 2, 3, 4)
        for e in (0.5, 0.1, 0.02)
    ]
    fit = probability.fit_trend(rows)
    assert fit["grows_with"] == grows
    assert fit["slopes"]["log_d1"]["ci"][0] <= slope <= fit["slopes"]["log_d1"]["ci"][1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"statement": "lemma9", "eps": 0.1}, "statement must be one of"),
        ({"statement": "lemma7", "eps": 1.5}, "eps must be a number in"),
        ({"statement": "theorem14", "eps": 0.1, "B": 1}, "B must be an integer >= 2"),
        ({"statement": "theorem9", "eps": 0.1, "H": 0}, "H must be an integer >= 1"),
    ],
)
def test_bad_settings(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Setting(**kwargs)


@pytest.mark.lemma7
def test_bad_trials_and_C() -> None:
    with pytest.raises(ValueError, match="trials must be an integer"):
        probability.frequency_at(Setting("lemma7", 0.1), {"n": 2}, trials=0)
    with pytest.raises(ValueError, match="C must be a finite number"):
        probability.success_frequency(Setting("lemma7", 0.1), -1.0, trials=2)


def test_widths_allocation_command_writes_strict_json(tmp_path, capsys) -> None:
    out = tmp_path / "allocation.json"
    assert main(["widths", "--allocation", "--out", str(out)]) == 0
    data = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert all(row["holds"] for row in data["allocation"]["allocations"])
    assert "16/32" in capsys.readouterr().out


def test_widths_without_parameters_is_an_error(capsys) -> None:
    assert main(["widths"]) == 2
    assert "--eps, --heads and --d1 are required" in capsys.readouterr().err


TINY = {"grid": {"frequencies": (Setting("theorem9", 0.5, 1, 1),), "slack": (Setting("lemma7", 0.5, 1, 1),)},
        "trials": 4, "slack_trials": 4, "lemma7_trials": 40, "search": probability.CI_SEARCH}


@pytest.mark.lemma8
def test_check_writes_the_probability_halves_and_the_report_shows_them(tmp_path, monkeypatch) -> None:
    from sltcheck.report import page

    monkeypatch.setitem(probability.PROFILES, "ci", TINY)
    out = tmp_path / "run"
    assert main(["check", "--only", "lemma8", "--probability", "--no-mutants", "--no-search", "--out", str(out)]) == 0
    data = json.loads((out / "findings.json").read_text())
    assert data["complete"]
    assert "probability" in data["done"]
    halves = data["probability"]
    assert {"allocation", "frequencies", "width_slack", "C_trend"} <= set(halves)
    assert halves["frequencies"][0]["C"] == 1.0
    assert len(halves["frequencies"]) == 2
    inputs = {"findings": [data], "synthetic": [], "lm": []}
    html = page.render(page.build(inputs))
    assert "Probability statements" in html
    assert "16/32" in html
    assert "Width slack" in html
