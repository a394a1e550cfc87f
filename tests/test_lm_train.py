"""Training loop: schedule, determinism, interruption and resume, sweeps and CLI."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from sltcheck.errors import StoredResultError
from sltcheck.jsonfiles import read_json, seal
from sltcheck.repro.lm.data import LMData, load_wikitext, synthetic_text
from sltcheck.repro.lm.model import ModelConfig
from sltcheck.repro.lm.sweeps import (
    CPU_DENSE_LR,
    SweepConfig,
    combine_sizes,
    default_train,
    fig7_points,
    fig7_size_points,
    fig8_points,
    run_sweep,
    summarize,
    write_json,
)
from sltcheck.repro.lm.train import RunSpec, TrainConfig, lr_factor, train_run

BLOCK = 32


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> LMData:
    folder = tmp_path_factory.mktemp("text")
    (folder / "valid.txt").write_text(synthetic_text(12_000, seed=0))
    (folder / "test.txt").write_text(synthetic_text(4_000, seed=1))
    return load_wikitext(folder, BLOCK, vocab_size=300, cache_dir=folder / "cache")


def _spec(data: LMData, **changes) -> RunSpec:
    model = ModelConfig(n_layer=1, n_embd=32, n_head=4, block_size=BLOCK,
                        vocab_size=data.vocab_size, dropout=0.1, qk_scale=2.0)
    train = TrainConfig(epochs=3, steps_per_epoch=4, batch_size=4, lr=1e-2, min_lr=1e-3,
                        val_blocks=8)
    return replace(RunSpec(model, train, seed=3), **changes)


def test_lr_schedule_warmup_then_cosine() -> None:
    cfg = TrainConfig(epochs=5, steps_per_epoch=10, lr=1e-4, min_lr=1e-5)
    assert lr_factor(0, cfg) == pytest.approx(0.1)
    assert lr_factor(9, cfg) == pytest.approx(1.0)
    assert lr_factor(10, cfg) == pytest.approx(1.0)
    assert lr_factor(49, cfg) == pytest.approx(0.1)
    values = [lr_factor(s, cfg) for s in range(10, 50)]
    assert all(a >= b for a, b in itertools.pairwise(values))


@pytest.mark.parametrize("mode", ["edge-popup", "dense"])
def test_resume_after_interruption_matches_uninterrupted(
    data: LMData, tmp_path: Path, mode: str
) -> None:
    spec = _spec(data, mode=mode)
    straight = train_run(spec, data, tmp_path / "a", progress=False, keep_checkpoint=True)
    # interrupted mid-epoch (step 6 of 12), then again at an epoch end, then resumed
    assert train_run(spec, data, tmp_path / "b", stop_after_steps=6, progress=False) is None
    first = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)
    assert first["data_position"] == 6
    assert len(first["history"]) == 1
    assert train_run(spec, data, tmp_path / "b", stop_after_steps=8, progress=False) is None
    resumed = train_run(spec, data, tmp_path / "b", progress=False, keep_checkpoint=True)
    assert straight is not None
    assert resumed is not None
    for key in ("best_val_loss", "final_val_loss", "history", "steps", "nonzero_params"):
        assert resumed[key] == straight[key], key
    a = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)["trainable"]
    b = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)["trainable"]
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert straight["best_val_loss"] == min(h["val_loss"] for h in straight["history"])
    assert len(straight["history"]) == 3
    assert straight["steps"] == 12


def test_edge_popup_training_lowers_loss_and_keeps_weights(data: LMData, tmp_path: Path) -> None:
    spec = _spec(data)
    result = train_run(spec, data, tmp_path, progress=False)
    assert result is not None
    # The validation loss is deterministic (fixed blocks, eval mode, seeded): an optimiser that
    # does nothing leaves it unchanged to float rounding (~1e-6). Measured at seed 3: 5.6836,
    # 5.6707, 5.6673 over the three epochs (ln 300 = 5.704 is the uniform predictor's); require
    # each epoch to lower it and the whole run by a third of the measured drop of 0.016.
    losses = [h["val_loss"] for h in result["history"]]
    assert all(later < earlier for earlier, later in itertools.pairwise(losses)), losses
    assert losses[0] - losses[-1] > 5e-3, losses
    # 4 masked tensors, each keeping round(0.3 * numel)
    assert abs(result["kept_params"] - 0.3 * result["masked_params"]) <= 4 * 0.5
    assert not (tmp_path / "checkpoint.pt").exists()


def test_checkpoint_of_other_run_is_refused(data: LMData, tmp_path: Path) -> None:
    train_run(_spec(data), data, tmp_path, stop_after_steps=2, progress=False)
    with pytest.raises(ValueError, match="holds a checkpoint of a different run"):
        train_run(_spec(data, seed=4), data, tmp_path, progress=False)


def test_bad_train_inputs_raise(data: LMData, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"keep_fraction must be a number in \(0, 1\].*got 1.2"):
        train_run(_spec(data, keep_fraction=1.2), data, tmp_path)
    with pytest.raises(ValueError, match="epochs must be a positive integer, got 0"):
        train_run(_spec(data, train=TrainConfig(epochs=0)), data, tmp_path)
    with pytest.raises(ValueError, match=r"mode must be one of 'edge-popup', 'dense', got 'x'"):
        train_run(_spec(data, mode="x"), data, tmp_path)
    with pytest.raises(ValueError, match="device must be one of"):
        train_run(_spec(data), data, tmp_path, device="tpu")


def test_sweep_writes_runs_and_resumes_without_recomputing(
    data: LMData, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = _spec(data)
    train = replace(base.train, epochs=1, steps_per_epoch=2)
    points = fig8_points(8, [1.0, "theory"])
    assert points[1].scale == pytest.approx(8**0.25)
    sweep = SweepConfig("fig8", "micro", base.model, train, tuple(points), (0, 1))
    doc = run_sweep(sweep, data, tmp_path, progress=False, log=lambda _: None)
    assert len(list((tmp_path / "runs").glob("*.json"))) == 4
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk == seal(json.loads(json.dumps(doc)))  # sealed, as every result file sltcheck reads back
    assert set(on_disk) == {"schema_version", "figure", "preset", "config", "runs", "summary",
                            "versions", "complete", "missing", "digest"}
    assert on_disk["complete"]
    assert on_disk["missing"] == []
    run_keys = {"scale", "keep_fraction", "seed", "best_val_loss", "final_val_loss",
                "nonzero_params", "steps", "seconds"}
    assert all(run_keys <= set(r) for r in on_disk["runs"])
    assert len(on_disk["summary"]) == 2
    assert on_disk["summary"][0]["n_seeds"] == 2
    assert on_disk["summary"][0]["best_val_loss_std"] is not None

    def boom(*args, **kwargs):
        raise AssertionError("a finished run was recomputed")

    monkeypatch.setattr("sltcheck.repro.lm.sweeps.train_run", boom)
    assert run_sweep(sweep, data, tmp_path, progress=False)["runs"] == doc["runs"]
    # a sweep with more seeds than finished: collect_only trains nothing and says it is partial
    partial = run_sweep(replace(sweep, seeds=(0, 1, 2)), data, tmp_path, progress=False, collect_only=True)
    assert not partial["complete"]
    assert len(partial["runs"]) == 4
    assert sorted(partial["missing"]) == sorted(p.run_id(2) for p in points)
    # a later command on one scale still reports every run the directory holds (nothing finished is dropped)
    later = run_sweep(replace(sweep, points=(points[1],), seeds=(0,)), data, tmp_path, progress=False)
    assert later["complete"]
    assert sorted(r["run_id"] for r in later["runs"]) == sorted(r["run_id"] for r in doc["runs"])
    # the directory is bound to its model and training: another learning rate is refused, naming it
    with pytest.raises(StoredResultError, match=r"different configuration: .*lr"):  # one line from the CLI
        run_sweep(replace(sweep, train=replace(train, lr=0.5)), data, tmp_path, progress=False)


def test_a_diverged_run_is_stored_as_strict_json_and_summarised_again(tmp_path: Path) -> None:
    """Training that diverges leaves best_val_loss = inf (min over NaN losses) and a NaN final loss:
    results.json stays strict JSON (what the report reads) and a resumed sweep summarises it again."""
    runs = [{"mode": "edge-popup", "scale": 1.0, "keep_fraction": 0.3, "seed": seed, "best_val_loss": best,
             "final_val_loss": final, "nonzero_params": 10} for seed, best, final in ((0, math.inf, math.nan),
                                                                                     (1, 5.0, 5.5))]
    write_json(tmp_path / "results.json", {"runs": runs, "summary": summarize(runs)})
    stored = read_json(tmp_path / "results.json")  # strict: Infinity or NaN would be refused here
    assert stored["runs"][0]["best_val_loss"] == "inf"
    assert stored["runs"][0]["final_val_loss"] == "nan"
    (row,) = summarize(stored["runs"])
    assert row["best_val_loss_mean"] == math.inf
    assert math.isnan(row["final_val_loss_mean"])


def test_fig7_points_include_both_scales_and_dense() -> None:
    points = fig7_points(64, [0.1, 0.3])
    assert {(p.mode, round(p.scale, 4), p.keep_fraction) for p in points} == {
        ("edge-popup", 1.0, 0.1), ("edge-popup", 1.0, 0.3), ("edge-popup", 2.8284, 0.1),
        ("edge-popup", 2.8284, 0.3), ("dense", 1.0, 1.0)}


def test_fig7_compares_sizes_at_thirty_percent_kept() -> None:
    points = fig7_size_points(64)
    assert {(p.mode, round(p.scale, 4), p.keep_fraction) for p in points} == {
        ("edge-popup", 1.0, 0.3), ("edge-popup", 2.8284, 0.3), ("dense", 1.0, 1.0)}


def test_fig7_combines_one_sweep_per_size(data: LMData, tmp_path: Path) -> None:
    base = _spec(data)
    train = replace(base.train, epochs=1, steps_per_epoch=2)
    documents = {}
    for size, width in (("narrow", 16), ("wide", 32)):
        model = replace(base.model, n_embd=width, n_head=2)
        sweep = SweepConfig("fig7", size, model, train, tuple(fig7_size_points(model.head_dim)), (0,))
        documents[size] = run_sweep(sweep, data, tmp_path / size, progress=False, log=lambda _: None)
    combined = json.loads(json.dumps(combine_sizes(documents)))
    assert combined["figure"] == "fig7"
    assert combined["config"]["sizes"] == ["narrow", "wide"]
    series = {(e["size"], e["series"]) for e in combined["summary"]}
    assert series == {(size, label) for size in ("narrow", "wide")
                      for label in ("s = 1", "s = n_K^(1/4)", "dense (trained)")}
    nonzero = {(e["size"], e["series"]): e["nonzero_params"] for e in combined["summary"]}
    assert nonzero[("narrow", "s = 1")] < nonzero[("wide", "s = 1")]  # the x axis: model size
    assert nonzero[("wide", "s = 1")] < nonzero[("wide", "dense (trained)")]
    with pytest.raises(ValueError, match="documents must hold at least one model size"):
        combine_sizes({})


def test_dense_and_edge_popup_runs_of_one_sweep_train_at_their_own_learning_rates(
    data: LMData, tmp_path: Path
) -> None:
    base = _spec(data)
    train = replace(base.train, epochs=1, steps_per_epoch=2, lr=3e-2, min_lr=3e-3)
    dense_train = replace(train, lr=1e-3, min_lr=1e-4, weight_decay=0.01)
    sweep = SweepConfig("fig7", "micro", base.model, train, tuple(fig7_size_points(base.model.head_dim)), (0,),
                        dense_train=dense_train)
    doc = json.loads(json.dumps(run_sweep(sweep, data, tmp_path, progress=False, log=lambda _: None)))
    recorded = {run["mode"]: (run["lr"], run["min_lr"], run["weight_decay"]) for run in doc["runs"]}
    assert recorded == {"edge-popup": (3e-2, 3e-3, 0.0), "dense": (1e-3, 1e-4, 0.01)}
    assert doc["config"]["train"]["lr"] == 3e-2
    assert doc["config"]["dense_train"]["lr"] == 1e-3
    # the directory is bound to both modes' training: another dense lr is refused, naming it
    with pytest.raises(StoredResultError, match=r"different configuration: .*dense.train"):
        run_sweep(replace(sweep, dense_train=replace(dense_train, lr=1e-4)), data, tmp_path, progress=False)


@pytest.mark.parametrize(("preset", "edge_lr", "dense_lr"), [
    ("gpt2-mini", 1e-4, 1e-4),  # Appendix B.2: one optimiser (1e-4 -> 1e-5) for every model
    ("gpt2-medium", 1e-4, 1e-4),
    ("cpu-xs", 3e-2, CPU_DENSE_LR),  # CPU: chosen per mode by a learning-rate sweep
    ("cpu-learn", 3e-2, CPU_DENSE_LR),
])
def test_presets_set_each_modes_learning_rate(preset: str, edge_lr: float, dense_lr: float) -> None:
    assert default_train(preset).lr == edge_lr
    assert default_train(preset, "dense").lr == dense_lr
    assert default_train(preset, "dense").total_steps == default_train(preset).total_steps


def test_cli_options_reach_each_mode_they_name() -> None:
    from sltcheck.cli.lm import _mode_train

    shared = {"epochs": 2, "batch_size": 8}
    scores = _mode_train(default_train("cpu-xs"), shared, 0.1, None, None)
    dense = _mode_train(default_train("cpu-xs", "dense"), shared, None, None, 0.01)
    assert (scores.epochs, scores.batch_size, dense.epochs, dense.batch_size) == (2, 8, 2, 8)
    assert (scores.lr, scores.min_lr) == (0.1, default_train("cpu-xs").min_lr)  # an lr alone keeps min_lr <= lr
    assert (dense.lr, dense.weight_decay) == (CPU_DENSE_LR, 0.01)
    low = _mode_train(default_train("cpu-xs"), {}, 1e-4, None, None)
    assert low.min_lr == pytest.approx(1e-5)  # the preset's min_lr would exceed it: lr / 10


def test_cli_registers_and_rejects_bad_preset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bad presets, sizes and data folders are refused by the parser (sltcheck.cli.options), one line each."""
    from sltcheck.cli import CommandLine
    from sltcheck.cli import lm as lm_cli

    cli = CommandLine()
    lm_cli.register(cli)
    for argv, fragment in (
        (["repro", "fig8", "--preset", "gpt5", "--out", str(tmp_path)], "--preset: must be one of cpu-tiny"),
        (["repro", "fig7", "--data", str(tmp_path / "missing"), "--out", str(tmp_path)], "--data: "),
        (["repro", "fig7", "--sizes", "cpu-xs,gpt5", "--out", str(tmp_path)], "--sizes: must be distinct names"),
        (["repro", "fig7-keep", "--data", str(tmp_path / "missing"), "--out", str(tmp_path)], "does not exist"),
        (["bench", "lm-step", "--preset", "gpt5"], "--preset: must be one of"),
    ):
        with pytest.raises(SystemExit):
            cli.parser.parse_args(argv)
        err = capsys.readouterr().err
        assert err.startswith("sltcheck: error: "), err
        assert fragment in err, err
        assert err.count("\n") == 1, err
