"""Figures 7 and 8 (Section 4.3): sweeps of edge-popup runs in GPT-2.

* ``fig7`` (the paper's): validation loss vs number of nonzero parameters across
  model SIZES (gpt2-mini, small, medium), each at 30 % kept, with and without
  query/key scaling (s = 1 and s = n_K^(1/4)), beside a densely trained model of
  each size (s = 1, no mask): one sweep per size into ``OUT/sizes/<size>/`` and
  their combination in ``OUT/results.json`` (:func:`combine_sizes`).
* ``fig7-keep`` (beyond the paper): the same comparison inside ONE model, the
  number of nonzero parameters varied through ``keep_fraction`` over a grid.
* ``fig8``: validation loss vs s in {1, 1.5, 2, 2.5, n_K^(1/4), 3.5, 4, 5} at
  keep_fraction 0.30.

Each mode trains at its own optimiser settings (``SweepConfig.train`` for the edge-popup scores,
``SweepConfig.dense_train`` for the dense references; :data:`PRESET_TRAIN`,
:data:`PRESET_DENSE_TRAIN`); every run records its ``lr``, ``min_lr`` and ``weight_decay``.

Every finished (point, seed) run is written at once to
``OUT/runs/<run_id>.json`` and the summary ``OUT/results.json`` is rewritten
after each run (schema in :func:`results_document`). Rerunning the same
command skips finished runs and resumes an interrupted one from its
checkpoint (``OUT/runs/<run_id>/checkpoint.pt``).
"""

from __future__ import annotations

import json
import platform
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from sltcheck.errors import StoredResultError
from sltcheck.numerics.validation import check_choice
from sltcheck.repro.lm.data import LMData, load_wikitext
from sltcheck.repro.lm.edgepopup import check_keep_fraction
from sltcheck.repro.lm.model import MODES, ModelConfig, get_preset, theory_scale
from sltcheck.repro.lm.train import RunSpec, TrainConfig, check_spec, train_run
from sltcheck.repro.lm_results import read_run, series_label, summarize
from sltcheck.schema import SCHEMA_VERSION  # the version sltcheck report checks results.json against

FIG8_SCALES: tuple[float | str, ...] = (1.0, 1.5, 2.0, 2.5, "theory", 3.5, 4.0, 5.0)
FIG7_KEEP_FRACTIONS: tuple[float, ...] = (0.1, 0.2, 0.3, 0.5, 0.7)
FIG7_KEEP_FRACTION = 0.30  # k = 30 % kept (Section 4.3, Appendix B.2)
FIG7_SIZES: tuple[str, ...] = ("gpt2-mini", "gpt2-small", "gpt2-medium")  # the paper's
# a CPU-scale stand-in: three widths at n_K = 64; 3 seeds of each took 30 min of one thread here
FIG7_CPU_SIZES: tuple[str, ...] = ("cpu-w128", "cpu-w192", "cpu-xs")
FIGURES = ("fig7", "fig7-keep", "fig8")

# Training defaults per preset, for the edge-popup scores. cpu-tiny keeps `repro fig8` to a few
# minutes on two cores; the GPU presets follow Appendix B.2 (50 epochs x 227 steps) with a
# batch size the paper does not give.
PRESET_TRAIN: dict[str, TrainConfig] = {
    "cpu-tiny": TrainConfig(epochs=4, steps_per_epoch=50, batch_size=16, val_blocks=128),
    # cpu-learn / cpu-xs: vocabulary 512, context 32, a score learning rate of 0.03 so that the
    # masks move within minutes (see sltcheck/repro/lm/README.md for the measured losses)
    "cpu-learn": TrainConfig(epochs=4, steps_per_epoch=50, batch_size=32, lr=3e-2, min_lr=3e-3,
                             val_blocks=256),
    "cpu-xs": TrainConfig(epochs=4, steps_per_epoch=50, batch_size=32, lr=3e-2, min_lr=3e-3,
                          val_blocks=256),
    # Figure 7's smaller CPU sizes train as cpu-xs does
    "cpu-w128": TrainConfig(epochs=4, steps_per_epoch=50, batch_size=32, lr=3e-2, min_lr=3e-3,
                            val_blocks=256),
    "cpu-w192": TrainConfig(epochs=4, steps_per_epoch=50, batch_size=32, lr=3e-2, min_lr=3e-3,
                            val_blocks=256),
    "gpt2-mini": TrainConfig(epochs=50, steps_per_epoch=227, batch_size=32, val_blocks=512),
    "gpt2-small": TrainConfig(epochs=50, steps_per_epoch=227, batch_size=32, val_blocks=512),
    "gpt2-medium": TrainConfig(epochs=50, steps_per_epoch=227, batch_size=16, grad_accum=2,
                               val_blocks=512),
}
# Training of the dense references (Figure 7's "trained models"). Appendix B.2 gives one
# optimiser for every model it trains (AdamW, lr 1e-4 cosine to 1e-5, warm-up over the first
# epoch; weight decay not stated), so the paper presets train dense weights exactly like the
# scores. The CPU presets' score lr of 3e-2 is far above what dense weights want; their dense lr
# is the best of a sweep over 1e-4..3e-2 at cpu-xs and cpu-w128 (sltcheck/repro/lm/README.md, "Learning
# rate per mode"). Steps, batch and validation are the same for both modes: only the optimiser differs.
CPU_DENSE_LR, CPU_DENSE_MIN_LR = 3e-3, 3e-4
PRESET_DENSE_TRAIN: dict[str, TrainConfig] = {
    name: (replace(train, lr=CPU_DENSE_LR, min_lr=CPU_DENSE_MIN_LR)
           if name.startswith("cpu-") and name != "cpu-tiny" else train)
    for name, train in PRESET_TRAIN.items()
}
PRESET_SEEDS: dict[str, int] = {"cpu-tiny": 2, "cpu-w128": 3, "cpu-w192": 3, "cpu-learn": 3, "cpu-xs": 3,
                                 "gpt2-mini": 3, "gpt2-small": 3, "gpt2-medium": 3}


@dataclass(frozen=True)
class Point:
    """One point of a figure (run once per seed)."""

    mode: str
    scale: float
    keep_fraction: float

    def run_id(self, seed: int) -> str:
        return f"{self.mode}-s{self.scale:.4f}-k{self.keep_fraction:.4f}-seed{seed}"


def resolve_scale(value: float | str, head_dim: int) -> float:
    """A numeric s, or ``"theory"`` -> n_K^(1/4)."""
    if value == "theory":
        return theory_scale(head_dim)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"scale must be a number > 0 or 'theory', got {value!r}") from None
    if not number > 0 or number == float("inf"):
        raise ValueError(f"scale must be a number > 0 or 'theory', got {value!r}")
    return number


def fig7_points(head_dim: int, keep_fractions: Sequence[float] = FIG7_KEEP_FRACTIONS,
                dense: bool = True) -> list[Point]:
    s_theory = theory_scale(head_dim)
    points = [
        Point("edge-popup", s, check_keep_fraction(k))
        for s in (1.0, s_theory) for k in keep_fractions
    ]
    if dense:
        points.append(Point("dense", 1.0, 1.0))
    return points


def fig7_size_points(head_dim: int, keep_fraction: float = FIG7_KEEP_FRACTION,
                     dense: bool = True) -> list[Point]:
    """One size of the paper's Figure 7: s = 1 and s = n_K^(1/4) at ``keep_fraction``, and dense."""
    keep_fraction = check_keep_fraction(keep_fraction)
    points = [Point("edge-popup", s, keep_fraction) for s in (1.0, theory_scale(head_dim))]
    if dense:
        points.append(Point("dense", 1.0, 1.0))
    return points


def combine_sizes(documents: dict[str, dict]) -> dict:
    """The paper's Figure 7 from one fig7 ``results.json`` document per model size: every
    summary entry and run gains ``size`` and ``series`` (dense, s = 1, s = n_K^(1/4))."""
    if not documents:
        raise ValueError("documents must hold at least one model size, got none")
    summary, runs = [], []
    for size, document in documents.items():
        theory = float(document["config"]["theory_scale"])
        summary += [{**entry, "size": size, "series": series_label(entry, theory)}
                    for entry in document["summary"]]
        runs += [{**run, "size": size} for run in document["runs"]]
    summary.sort(key=lambda e: (e["series"], e["nonzero_params"]))
    return {
        "schema_version": SCHEMA_VERSION,
        "figure": "fig7",
        "preset": ",".join(documents),
        "config": {
            "sizes": list(documents),
            "per_size": {size: document["config"] for size, document in documents.items()},
            "theory_scale": {size: document["config"]["theory_scale"] for size, document in documents.items()},
        },
        "runs": runs,
        "summary": summary,
        "versions": versions(),
    }


def fig8_points(head_dim: int, scales: Sequence[float | str] = FIG8_SCALES,
                keep_fraction: float = 0.30) -> list[Point]:
    keep_fraction = check_keep_fraction(keep_fraction)
    return [Point("edge-popup", resolve_scale(s, head_dim), keep_fraction) for s in scales]


def versions() -> dict[str, str]:
    import numpy
    import tokenizers
    import torch
    import transformers

    import sltcheck

    return {
        "sltcheck": getattr(sltcheck, "__version__", "unknown"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "numpy": numpy.__version__,
    }


def results_document(figure: str, preset: str, config: dict, runs: list[dict],
                     missing: list[str] | None = None) -> dict:
    """The ``results.json`` document.

    Schema (``schema_version`` 1)::

        {"schema_version": 1, "figure": "fig7" | "fig8", "preset": str,
         "config": {"model": {...ModelConfig with qk_scale of s=1...},
                    "train": {...TrainConfig of the edge-popup runs...},
                    "dense_train": {...TrainConfig of the dense runs (not in fig8)...},
                    "masked": str, "scope": str, "head_dim": int,
                    "theory_scale": float, "points": [...], "seeds": [...],
                    "data": {...provenance...}, "device": str},
         "runs": [{"run_id", "mode", "scale", "keep_fraction", "seed",
                   "lr", "min_lr", "weight_decay", "best_val_loss", "final_val_loss", "nonzero_params",
                   "masked_params", "kept_params", "steps", "seconds",
                   "device", "history": [{"epoch", "step", "val_loss"}]}],
         "summary": [{"mode", "scale", "keep_fraction", "n_seeds", "seeds",
                      "best_val_loss_mean", "best_val_loss_std",
                      "final_val_loss_mean", "final_val_loss_std",
                      "nonzero_params"}],
         "versions": {"sltcheck", "python", "torch", "transformers",
                      "tokenizers", "numpy"},
         "complete": bool, "missing": [run_id, ...]}

    ``runs`` holds every run finished in the directory (a later command may add scales or
    seeds; ``config`` is the last command's). Losses are mean next-token cross-entropies in nats; stds are sample
    standard deviations over seeds (null with one seed). ``complete`` is false
    (and ``missing`` names the runs not finished) for a partial sweep.
    """
    return {
        "schema_version": SCHEMA_VERSION,
        "figure": figure,
        "preset": preset,
        "config": config,
        "runs": runs,
        "summary": summarize(runs),
        "versions": versions(),
        "complete": not missing,
        "missing": list(missing or []),
    }


def write_json(path: Path, document: dict) -> None:
    """Write ``document`` to ``path`` atomically (a temporary file, then a rename)."""
    _write_json(path, document)


def _write_json(path: Path, document: dict) -> None:
    """Strict JSON: a diverged run's losses (inf, NaN) are stored as "inf"/"nan", never Infinity/NaN;
    sealed (:func:`sltcheck.jsonfiles.seal`), as every result file sltcheck reads back."""
    from sltcheck.jsonfiles import seal, write_json_atomic
    from sltcheck.schema import json_safe

    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, seal(json_safe(document)), indent=2)


@dataclass(frozen=True)
class SweepConfig:
    figure: str
    preset: str
    model: ModelConfig
    train: TrainConfig
    points: tuple[Point, ...]
    seeds: tuple[int, ...]
    masked: str = "attention+mlp"
    scope: str = "per-tensor"
    dense_train: TrainConfig | None = None  # the dense references' training; None: ``train``

    def train_for(self, mode: str) -> TrainConfig:
        """The training of a run in ``mode``: ``dense_train`` for the dense references (when given),
        ``train`` for the edge-popup scores."""
        return self.dense_train if mode == "dense" and self.dense_train is not None else self.train


def run_sweep(
    sweep: SweepConfig,
    data: LMData,
    out: str | Path,
    *,
    device: str = "auto",
    progress: bool = True,
    log=print,
    collect_only: bool = False,
) -> dict:
    """Run every (point, seed) not yet finished in ``out``; return results.json's document.

    Runs go seed by seed (every point of seed 0 first), so a sweep cut short has every
    point at some seeds. ``collect_only``: train nothing, write results.json from the
    runs already finished (marked partial where some are missing)."""
    check_choice("figure", sweep.figure, FIGURES)
    out = Path(out)
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    config = {
        "model": sweep.model.to_dict(),
        "train": sweep.train.__dict__.copy(),
        "masked": sweep.masked,
        "scope": sweep.scope,
        "head_dim": sweep.model.head_dim,
        "theory_scale": sweep.model.theory_scale,
        "points": [p.__dict__ for p in sweep.points],
        "seeds": list(sweep.seeds),
        "data": data.info,
        "device": device,
    }
    if sweep.figure != "fig8":  # Figure 8 has no dense runs: its directories stay bound as before
        config["dense_train"] = sweep.train_for("dense").__dict__.copy()
    specs = []
    for seed in sweep.seeds:
        for point in sweep.points:
            spec = RunSpec(
                model=replace(sweep.model, qk_scale=point.scale),
                train=sweep.train_for(point.mode),
                mode=point.mode,
                keep_fraction=point.keep_fraction,
                masked=sweep.masked,
                scope=sweep.scope,
                seed=seed,
                extra={"data": {k: data.info[k] for k in ("train_source", "val_source",
                                                          "tokenizer", "vocab_size")}},
            )
            specs.append((point.run_id(seed), check_spec(spec)))

    from sltcheck.rundir import DirectoryLock, bind_configuration

    with DirectoryLock(out, f"repro {sweep.figure}"):  # one writer per run directory, one command's outputs
        # The directory is bound to everything but its points and seeds: a later command may add
        # scales or seeds to it (each run's own spec is checked), never change the model or training.
        shared = {key: value for key, value in config.items() if key not in ("points", "seeds")}
        bind_configuration(out, {"figure": sweep.figure, "preset": sweep.preset, **shared}, versions())
        return _run_specs(sweep, specs, data, out, config, device=device, progress=progress, log=log,
                          collect_only=collect_only)


def _run_specs(sweep: SweepConfig, specs: list, data: LMData, out: Path, config: dict, *, device: str,
               progress: bool, log, collect_only: bool = False) -> dict:
    from tqdm.auto import tqdm

    runs_dir = out / "runs"
    runs: list[dict] = []
    missing = [run_id for run_id, _ in specs]
    bar = tqdm(specs, desc=f"{sweep.figure} {sweep.preset}", disable=not progress)
    for run_id, spec in bar:
        result_path = runs_dir / f"{run_id}.json"
        if result_path.is_file():
            stored = read_run(result_path)
            if stored.get("spec") != json.loads(json.dumps(spec.to_dict())):
                raise StoredResultError(
                    f"out {str(out)!r} holds run {run_id} with different settings; "
                    "pass another --out to run these settings"
                )
            runs.append(stored["result"])
            missing.remove(run_id)
            continue
        if collect_only:
            continue
        result = train_run(spec, data, runs_dir / run_id, device=device, progress=progress)
        assert result is not None
        result = {"run_id": run_id, **result}
        _write_json(result_path, {"schema_version": SCHEMA_VERSION, "spec": spec.to_dict(), "result": result})
        runs.append(result)
        missing.remove(run_id)
        _write_json(out / "results.json",
                    results_document(sweep.figure, sweep.preset, config, runs, missing))
        log(f"  {run_id}: best val loss {result['best_val_loss']:.4f} "
            f"({result['seconds']:.0f} s)")
    runs += _other_runs(runs_dir, {run_id for run_id, _ in specs})
    document = results_document(sweep.figure, sweep.preset, config, runs, missing)
    _write_json(out / "results.json", document)
    return document


def _other_runs(runs_dir: Path, requested: set[str]) -> list[dict]:
    """Runs finished in this directory by earlier commands (other scales or seeds of the same
    bound configuration): results.json reports every finished run, not only this command's."""
    return [read_run(path)["result"] for path in sorted(runs_dir.glob("*.json")) if path.stem not in requested]


def load_data_for(preset_model: ModelConfig, data_dir: str | Path, *, tokenizer: str | None,
                  vocab_size: int, cache_dir: str | Path, train_split: str = "auto",
                  val_split: str = "auto") -> LMData:
    return load_wikitext(
        data_dir, preset_model.block_size, vocab_size=vocab_size, tokenizer_path=tokenizer,
        cache_dir=cache_dir, train_split=train_split, val_split=val_split,
    )


def format_table(document: dict) -> str:
    """A plain-text table of the summary, minimum marked."""
    summary = document["summary"]
    theory = document["config"]["theory_scale"]
    edge = [s for s in summary if s["mode"] == "edge-popup"]
    best = min(edge, key=lambda s: s["best_val_loss_mean"]) if edge and "sizes" not in document["config"] else None
    head = (f"n_K^(1/4) per size: {theory}" if isinstance(theory, dict)
            else f"n_K = {document['config']['head_dim']}, n_K^(1/4) = {theory:.3f}")
    lines = [
        f"{document['figure']} {document['preset']}: {head}",
        f"{'size':<12} {'mode':<11} {'s':>7} {'keep':>6} {'nonzero':>10} {'seeds':>5} "
        f"{'best val loss':>20} {'final val loss':>20}",
    ]
    for s in summary:
        def fmt(mean: float, std: float | None) -> str:
            return f"{mean:.4f} ± {std:.4f}" if std is not None else f"{mean:.4f}"
        mark = "  <- min" if s is best else ""
        lines.append(
            f"{s.get('size', document['preset']):<12} {s['mode']:<11} {s['scale']:>7.3f} {s['keep_fraction']:>6.3f} "
            f"{s['nonzero_params']:>10.0f} {s['n_seeds']:>5d} "
            f"{fmt(s['best_val_loss_mean'], s['best_val_loss_std']):>20} "
            f"{fmt(s['final_val_loss_mean'], s['final_val_loss_std']):>20}{mark}"
        )
    return "\n".join(lines)


def default_train(preset: str, mode: str = "edge-popup") -> TrainConfig:
    """The preset's training of ``mode``'s runs (edge-popup scores, or the dense references)."""
    check_choice("preset", preset, tuple(PRESET_TRAIN))
    check_choice("mode", mode, MODES)
    return (PRESET_DENSE_TRAIN if mode == "dense" else PRESET_TRAIN)[preset]


def default_model(preset: str, **overrides) -> ModelConfig:
    return get_preset(preset, **overrides)
