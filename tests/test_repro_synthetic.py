"""The synthetic reproductions: data, targets, resumable sweeps, fits."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from package_env import ENV

from sltcheck.errors import SltcheckError
from sltcheck.repro import synthetic, targets
from sltcheck.repro.dataset import ALPHA, angular_velocity, full_attention
from sltcheck.repro.fits import fit_decay
from sltcheck.repro.store import RunDirectory

ROOT = Path(__file__).resolve().parents[1]


def tiny(figure: str = "fig4", **overrides):
    settings = dict(widths=(4, 8), sources=2, test_samples=40, train_target=False, lengths=(4,))
    if figure == "fig6":
        settings.update(widths=(4,), blocks=(1, 2))
    settings.update(overrides)
    return synthetic.preset_config(figure, "quick", "theory", **settings)


def store_rows(run_dir: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(run_dir / "results.sqlite") as db:
        return list(db.execute("SELECT key, record FROM results ORDER BY key"))


def without_timing(rows):
    """Records minus wall-clock seconds, the one field that may differ between runs."""
    cleaned = []
    for key, record in rows:
        payload = json.loads(record)["record"]  # the row as sealed: key, fingerprint, record, digest
        for r in payload["records"]:
            r.pop("seconds")
        cleaned.append((key, payload))
    return cleaned


def test_dataset_is_the_angular_velocity_task():
    data = angular_velocity("test", seed=3, samples=50)
    X = data.tokens(6)
    assert X.shape == (50, 7, 2)
    np.testing.assert_array_equal(X[:, 0], 0.0)  # the regression token
    np.testing.assert_allclose(np.linalg.norm(X[:, 1:], axis=-1), 1.0)
    assert np.all(np.linalg.norm(X, axis=-1) <= ALPHA)
    step = np.arctan2(X[:, 2, 1], X[:, 2, 0]) - np.arctan2(X[:, 1, 1], X[:, 1, 0])
    np.testing.assert_allclose(np.angle(np.exp(1j * step)), np.angle(np.exp(1j * data.omega)), atol=1e-12)
    assert np.all((-np.pi <= data.omega) & (data.omega <= np.pi))
    assert np.all((0 <= data.theta0) & (data.theta0 <= np.pi))
    assert full_attention(6).shape == (7, 7)
    np.testing.assert_array_equal(angular_velocity("test", 3, 50).omega, data.omega)
    assert not np.array_equal(angular_velocity("train", 3, 50).omega, data.omega)


def test_norm_policy_rescales_to_the_assumptions():
    rng = np.random.default_rng(0)
    raw = targets.theory_target_mha(rng, 2, 1, 8, 8)
    assert max(targets.spectral_norms(raw).values()) > 1
    rescaled = targets.apply_norm_policy(raw, "rescale")
    assert max(targets.spectral_norms(rescaled).values()) <= 1 + 1e-12
    assert targets.apply_norm_policy(raw, "keep") is raw
    with pytest.raises(ValueError, match="norm_policy must be one of"):
        targets.apply_norm_policy(raw, "clip")


def test_training_lowers_the_regression_loss():
    rng = np.random.default_rng(1)
    initial = targets.theory_target_mha(rng, 2, 1, 8, 8)
    data = angular_velocity("train", 0, 2048)
    trained = targets.train_mha(initial, data, targets.TrainingConfig(epochs=3, max_length=16), seed=0)
    assert (targets.regression_loss(trained.weights, data, 8, trained.token)
            < targets.regression_loss(initial, data, 8))


def test_learned_regression_token_lets_query_and_key_learn():
    """B.1's token starts at zero and is trained: the read-out's query r W_Q is then nonzero,
    so W_Q and W_K get gradients. With the token fixed at zero they get none: AdamW's
    decoupled decay is all that moves them, to the float32 rounding of (1 - lr wd)^steps."""
    rng = np.random.default_rng(1)
    initial = targets.theory_target_mha(rng, 2, 1, 8, 8)
    data = angular_velocity("train", 0, 2048)
    config = targets.TrainingConfig(epochs=4, batch_size=256, max_length=16)
    steps = config.epochs * (len(data) // config.batch_size)
    decay_only = initial.W_Q * (1 - config.lr * config.weight_decay) ** steps
    fixed = targets.train_mha(initial, data, config, seed=0, regression_token="fixed-zero")
    learned = targets.train_mha(initial, data, config, seed=0, regression_token="learned")
    np.testing.assert_array_equal(fixed.token, 0.0)
    np.testing.assert_allclose(fixed.weights.W_Q, decay_only, atol=1e-5)
    assert np.abs(learned.weights.W_Q - decay_only).max() > 1e-2
    assert np.abs(learned.weights.W_K - initial.W_K * (1 - config.lr * config.weight_decay) ** steps).max() > 1e-2
    assert np.linalg.norm(learned.token) > 0
    # it learns: below the initial loss and below predicting the mean (Var(omega)) on held-out data
    held_out = angular_velocity("validation", 0, 2048)
    loss = targets.regression_loss(learned.weights, held_out, 8, learned.token)
    assert loss < targets.regression_loss(initial, held_out, 8)
    assert loss < float(np.mean((held_out.omega - data.omega.mean()) ** 2))


def test_sources_read_the_targets_regression_token(tmp_path, monkeypatch):
    seen = []
    original = synthetic.mha_source

    def spy(config, target, width, index, test, token=None):
        seen.append(token)
        return original(config, target, width, index, test, token)

    monkeypatch.setattr(synthetic, "mha_source", spy)
    config = tiny(widths=(4,), sources=1, train_target=True, target_epochs=1, test_samples=20)
    summary = synthetic.run(config, str(tmp_path), progress=False)
    np.testing.assert_array_equal(seen[0], summary["regression_token"])
    assert np.linalg.norm(seen[0]) > 0
    assert summary["alpha"] == max(ALPHA, float(np.linalg.norm(seen[0])))
    assert summary["target_train_loss"] > 0


@pytest.mark.parametrize(("policy", "variant"), [("keep", "actual-norms"), ("rescale", "as-proven")])
def test_kept_targets_are_checked_with_their_actual_norms(tmp_path, policy, variant):
    summary = synthetic.run(tiny(norm_policy=policy), str(tmp_path), progress=False)
    assert summary["bound_variants"] == [variant]
    assert summary["violations"] == []
    if policy == "keep":
        assert max(summary["target_norms"]["1"].values()) > 1


def test_as_proven_refuses_a_target_above_norm_one(tmp_path):
    with pytest.raises(ValueError, match="bound 'as-proven' assumes every target matrix"):
        synthetic.run(tiny(norm_policy="keep", bound="as-proven", sources=1, widths=(4,)), str(tmp_path),
                      progress=False)


def test_paper_mode_keeps_the_targets():
    assert synthetic.preset_config("fig4", "quick", "paper").norm_policy == "keep"
    assert synthetic.preset_config("fig4", "quick", "theory").norm_policy == "rescale"


def test_paper_mode_solves_with_exact_and_takes_gurobi_on_request():
    # B.1 names Gurobi; paper mode solves exactly by default, Gurobi where asked (and usable).
    for figure in synthetic.FIGURES:
        assert synthetic.preset_config(figure, "paper", "paper").solver == "exact"
    from sltcheck.pruning.subset_sum import available_solvers

    if available_solvers()["gurobi"] is None:
        assert synthetic.preset_config("fig4", "paper", "paper", solver="gurobi").solver == "gurobi"


@pytest.mark.parametrize("figure", ["fig4", "fig5", "fig6"])
def test_every_source_is_checked_against_its_bound(tmp_path, figure):
    config = tiny(figure, lengths=(4, 8)) if figure == "fig5" else tiny(figure)
    summary = synthetic.run(config, str(tmp_path), progress=False)
    per_source = len(config.lengths) if figure == "fig5" else 1
    assert summary["checked"] == config.sources * len(config.widths) * len(config.blocks) * per_source
    assert summary["violations"] == []

    def no_constants(name):
        raise AssertionError(f"summary.json holds {name}: not strict JSON")

    stored = json.loads((tmp_path / "summary.json").read_text(), parse_constant=no_constants)
    from sltcheck import records, schema

    stored["points"][0]["mean_bound"] = "1.01328e+1093"  # Theorem 14 bounds beyond float64 (fig6)
    schema.validate(stored, records.SummaryFile)
    for record in (r for row in RunDirectory(tmp_path, json.loads(json.dumps(
            config.as_record()))).records() for r in row["records"]):
        assert float(record["measured"]) <= float(record["bound"])
        assert 0 < record["density"] <= 1
        assert record["weight_errors"]


def test_same_seed_same_store_content(tmp_path):
    config = tiny()
    synthetic.run(config, str(tmp_path / "a"), progress=False)
    synthetic.run(config, str(tmp_path / "b"), progress=False)
    assert without_timing(store_rows(tmp_path / "a")) == without_timing(store_rows(tmp_path / "b"))


def test_interrupted_run_resumes_without_recomputing(tmp_path, monkeypatch):
    config = tiny()
    synthetic.run(config, str(tmp_path / "whole"), progress=False)
    calls = {"n": 0}
    original = synthetic.mha_source

    def interrupted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(synthetic, "mha_source", interrupted)
    with pytest.raises(KeyboardInterrupt):
        synthetic.run(config, str(tmp_path / "resumed"), progress=False)
    assert len(store_rows(tmp_path / "resumed")) == 2
    monkeypatch.setattr(synthetic, "mha_source", original)
    calls["n"] = 0
    synthetic.run(config, str(tmp_path / "resumed"), progress=False)
    assert without_timing(store_rows(tmp_path / "resumed")) == without_timing(store_rows(tmp_path / "whole"))


def test_kill_minus_nine_loses_no_finished_source(tmp_path):
    config = tiny(widths=(4, 8, 12, 16), sources=3)
    script = (
        "import sys; from sltcheck.repro import synthetic; "
        "synthetic.run(synthetic.preset_config('fig4', 'quick', 'theory', widths=(4, 8, 12, 16), sources=3, "
        "test_samples=40, train_target=False), sys.argv[1], progress=False)"
    )
    run_dir = tmp_path / "killed"
    process = subprocess.Popen([sys.executable, "-c", script, str(run_dir)], cwd=ROOT, env=ENV)
    deadline = time.time() + 120
    while time.time() < deadline:
        if (run_dir / "results.sqlite").exists() and len(store_rows(run_dir)) >= 2:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    finished = store_rows(run_dir)
    assert 2 <= len(finished) < 12
    synthetic.run(config, str(run_dir), progress=False)
    rows = store_rows(run_dir)
    assert len(rows) == 12
    assert len({key for key, _ in rows}) == 12
    assert set(finished) <= set(rows)  # finished work is kept as it was, not recomputed


def test_a_run_directory_refuses_another_configuration(tmp_path):
    synthetic.run(tiny(), str(tmp_path), progress=False)
    with pytest.raises(SltcheckError, match=r"configuration: --sources \(this directory: 2, this command: 3\)"):
        synthetic.run(tiny(sources=3), str(tmp_path), progress=False)


def test_run_directory_records_config_and_versions(tmp_path):
    synthetic.run(tiny(), str(tmp_path), progress=False)
    recorded = json.loads((tmp_path / "config.json").read_text())
    assert recorded["config"]["seed"] == 0
    assert recorded["config"]["solver"] == "exact"
    assert {"python", "numpy", "torch", "gurobipy", "mpmath"} <= recorded["versions"].keys()


def test_fit_recovers_a_known_decay():
    n = np.arange(4, 65, 4, dtype=float)
    fit = fit_decay(n, 0.8 * np.exp(-0.06 * n) * (1 + 0.01 * np.sin(n)))
    assert abs(fit.gamma - 0.8) < 0.02
    assert abs(fit.delta - 0.06) < 0.002
    assert fit.delta_interval[0] < 0.06 < fit.delta_interval[1]
    shared = fit_decay(n, 2.0 * np.exp(-0.06 * n), delta=0.06)
    assert abs(shared.gamma - 2.0) < 1e-9


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: synthetic.preset_config("fig9", "quick", "theory"), "figure must be one of"),
        (lambda: synthetic.preset_config("fig4", "huge", "theory"), "preset must be one of"),
        (lambda: synthetic.preset_config("fig4", "quick", "practice"), "mode must be one of"),
        (lambda: angular_velocity("dev", 0), "split must be one of"),
        (lambda: angular_velocity("test", 0).tokens(0), "length must be a positive"),
        (lambda: angular_velocity("test", 0, 3).tokens(2, token=np.zeros(3)), "token must be a finite"),
        (lambda: synthetic.preset_config("fig4", "quick", "theory", regression_token="random"),
         "--regression-token must be one of"),
        (lambda: synthetic.preset_config("fig4", "quick", "theory", bound="loose"), "--bound must be one of"),
        (lambda: fit_decay(np.array([1.0]), np.array([1.0])), "equal length >= 2"),
    ],
)
def test_bad_configuration_is_named(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call()


def test_a_figure_result_counts_the_violations_its_summary_lists():
    """summary.json lists each violating source (its seed and error); the count is the list's length."""
    from sltcheck.repro import FigureResult

    assert FigureResult(Path("run"), {"violations": []}).violations == 0
    assert FigureResult(Path("run"), {"violations": [{"seed": 3}, {"seed": 7}]}).violations == 2
