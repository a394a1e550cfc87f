"""The synthetic experiments of Appendix B.1 (Figures 4, 5 and 6).

Every source is pruned by the construction of Lemma 7 (the pruning engine),
its error max_i ||Attn_S(x_i) - Attn_T(x_i)|| is measured over every token of
every test sequence, and that error is checked against the a-posteriori bound
of the proof (Theorem 9 for an MHA, 11 for one block, 14 for B >= 2 blocks)
evaluated from the achieved weight errors. The float64 sweep over the test
set picks the worst sequences; those are re-evaluated in mpmath and the
verdict measured <= bound is decided there (:func:`sltcheck.numerics.verdict.decide`).

Modes: ``paper`` prunes Xavier-initialised sources and keeps the targets as trained
or drawn (what Appendix B.1 says); ``theory`` prunes sources drawn as Section 3.1
assumes and rescales the targets onto the theorems' assumptions. Both solve the
subset sums with the ``exact`` solver (every mask proven optimal, or proven at the
float64 floor: see :mod:`sltcheck.pruning.subset_sum`); B.1 names Gurobi, which
``--solver gurobi`` runs (its masks are optimal only up to its MIPGap and
tolerances, and on paper mode's targets exact is faster). ``--solver``, ``--init`` and
``--norm-policy`` mix the two. A target that breaks the assumptions (norms above 1)
is checked against the chain with its actual norms (:mod:`sltcheck.repro.bounds`),
never against ``as-proven``.

The regression token (B.1: "initialized to zero", shared by source and target) is
learned with the target (``regression_token="learned"``, the default) or kept at
zero (``"fixed-zero"``: the read-out's attention is then uniform and W_Q, W_K get no
gradient); the sources read the same token, and alpha = max(sqrt(2), ||token||).

The parts: :mod:`~sltcheck.repro.sweep_config` (the options and presets),
:mod:`~sltcheck.repro.source_check` (one source pruned and checked), :mod:`~sltcheck.repro.sweep_summary`
(the summary and fits); this module builds the targets and drives the sweep (:func:`run`).
"""

from __future__ import annotations

import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sltcheck.extras import require

require("torch", "repro", "sltcheck repro fig4|fig5|fig6 (the synthetic reproductions)")

from sltcheck.executors import Executor, InProcessExecutor  # noqa: E402
from sltcheck.harness.serialise import decode, encode  # noqa: E402
from sltcheck.jsonfiles import fingerprint, read_json, seal, write_json_atomic  # noqa: E402
from sltcheck.model.weights import MHAWeights  # noqa: E402
from sltcheck.repro import bounds, figures, targets  # noqa: E402
from sltcheck.repro.dataset import AngularVelocity, alpha_for, angular_velocity  # noqa: E402
from sltcheck.repro.source_check import (  # noqa: E402, F401 (re-exported: public here)
    VACUITY_MARGIN,
    SweepErrors,
    mha_source,
    transformer_source,
    vacuity,
)
from sltcheck.repro.store import RunDirectory  # noqa: E402
from sltcheck.repro.sweep_config import (  # noqa: E402, F401 (re-exported: public here)
    ERRORS,
    FIGURES,
    MAX_EPOCHS,
    MAX_SOURCES,
    MAX_TEST_SAMPLES,
    MODES,
    PRESETS,
    VERDICT_DPS,
    WORST_SEQUENCES,
    SweepConfig,
    preset_config,
    units,
    validate_config,
)
from sltcheck.repro.sweep_summary import (  # noqa: E402, F401 (fits_of re-exported: public here)
    fits_of,
    stored_records,
    summarise,
)
from sltcheck.schema import SCHEMA_VERSION, json_safe  # noqa: E402

# --- the sweep ------------------------------------------------------------------


@dataclass(frozen=True)
class BuiltTargets:
    """One target per block count (as built, before the norm policy), the regression
    token the sources read (None: zero) and the target's training loss."""

    weights: dict[int, Any]
    token: np.ndarray | None = None
    train_loss: float | None = None


def target_key(config: SweepConfig) -> dict[str, Any]:
    """Every option the targets depend on: equal keys build byte-identical targets."""
    return {"figure": config.figure, "seed": config.seed, "d_key": config.d_key, "heads": config.heads,
            "blocks": list(config.blocks), "train_target": config.train_target,
            "target_epochs": config.target_epochs, "regression_token": config.regression_token}


def build_targets(config: SweepConfig, progress: bool = True, cache: Path | None = None) -> BuiltTargets:
    """One target per block count, seeded; trained (Figures 4, 5) or untrained (Figure 6).

    ``cache``: a folder where a trained target is stored under its :func:`target_key`'s
    fingerprint and read back by every later run with the same key (the readings of one
    ``repro readings`` run share their targets); the weights are stored exactly (float.hex)."""
    trains = config.figure in ("fig4", "fig5") and config.train_target
    stored = cache / f"target-{fingerprint(target_key(config))}.json" if cache is not None and trains else None
    if stored is not None and stored.exists():
        saved = read_json(stored)
        weights = MHAWeights(*(np.asarray(decode(saved[name]), dtype=np.float64) for name in MHA_FIELDS))
        return BuiltTargets(dict.fromkeys(config.blocks, weights), np.asarray(decode(saved["token"])),
                            float(saved["train_loss"]))
    rng = np.random.default_rng([config.seed, FIGURES.index(config.figure), 10**6])
    built: dict[int, Any] = {}
    token, loss = None, None
    for blocks in config.blocks:
        if config.figure in ("fig4", "fig5"):
            initial = targets.theory_target_mha(rng, 2, 1, config.d_key, config.d_key, config.heads)
            if config.train_target:
                training = targets.TrainingConfig(epochs=config.target_epochs)
                trained = targets.train_mha(initial, angular_velocity("train", config.seed), training,
                                            seed=config.seed, progress=progress,
                                            regression_token=config.regression_token)
                initial, token, loss = trained.weights, trained.token, trained.train_loss
            built[blocks] = initial
        else:
            built[blocks] = targets.theory_target_transformer(rng, blocks, 2, config.d_key, config.d_key,
                                                              config.heads)
    if stored is not None and token is not None and loss is not None:
        stored.parent.mkdir(parents=True, exist_ok=True)
        weights = built[config.blocks[0]]
        write_json_atomic(stored, {"schema_version": SCHEMA_VERSION, "key": target_key(config),
                                   **{name: encode(getattr(weights, name)) for name in MHA_FIELDS},
                                   "token": encode(token), "train_loss": loss})
    return BuiltTargets(built, token, loss)


MHA_FIELDS = ("W_Q", "W_K", "W_V", "W_O")


@dataclass(frozen=True)
class SourceContext:
    """What every source of a sweep needs besides its own (blocks, width, index):
    built once by the driver and shipped once to each worker (small numpy arrays)."""

    config: SweepConfig
    targets: dict[int, Any]  # blocks -> the prepared target (norm policy applied)
    test: AngularVelocity
    token: np.ndarray | None = None  # the regression token (None: zero)


def source_records(context: SourceContext, blocks: int, width: int, index: int) -> list[dict[str, Any]]:
    """The records of one source: the unit of work every executor runs (top level, so picklable)."""
    config = context.config
    if config.figure in ("fig4", "fig5"):
        return mha_source(config, context.targets[blocks], width, index, context.test, context.token)
    return transformer_source(config, context.targets[blocks], width, index, context.test)


def run(config: SweepConfig, out: str, progress: bool = True, executor: Executor | None = None,
        targets_cache: Path | None = None) -> dict[str, Any]:
    """Run (or resume) a sweep into ``out``; returns the summary also written to summary.json.

    The targets are built (trained) here, by the driver; every pending source
    runs on ``executor`` (default: in this process; see :mod:`sltcheck.executors`
    for local processes and Dask) and its records are stored by the driver as
    soon as they arrive, so the store's content does not depend on the executor.
    ``executor`` is used, not closed: its owner closes it. ``targets_cache``: see
    :func:`build_targets`. The summary records this invocation's wall time and the sources'
    summed seconds (over every invocation that added one), and the run directory gets the
    figure as ``figure.svg`` and ``figure.png`` (:mod:`sltcheck.repro.figures`).
    """
    from tqdm import tqdm

    from sltcheck.errors import UsageError

    began = time.perf_counter()
    validate_config(config)
    with RunDirectory(out, config.as_record(), command=f"repro {config.figure}") as run_dir:
        built = build_targets(config, progress, targets_cache)
        raw_targets = built.weights
        prepared = {b: targets.apply_norm_policy(t, config.norm_policy) for b, t in raw_targets.items()}
        for target in prepared.values():  # a bound the target cannot meet stops the run before any source
            try:
                bounds.variant_for(target, config.bound)
            except ValueError as error:
                raise UsageError(f"--bound {config.bound}: {error}") from None
        test = angular_velocity("test", config.seed, config.test_samples)
        done = run_dir.done()
        todo = [(key, (blocks, width, index)) for key, blocks, width, index in units(config) if key not in done]
        total = config.sources * len(config.widths) * len(config.blocks)
        bar = tqdm(total=total, initial=total - len(todo), desc=f"{config.figure} sources",
                   disable=not progress, unit="src")
        context = SourceContext(config, prepared, test, built.token)
        # closing: an interrupted driver cancels the tasks it no longer waits for at once
        with closing((executor or InProcessExecutor()).map_unordered(source_records, context, todo)) as results:
            for key, records in results:
                run_dir.add(key, {"records": records})
                bar.update(1)
        bar.close()
        rows = run_dir.rows()
        records = stored_records(rows, str(run_dir.path / "results.sqlite"))
        summary = summarise(config, records, {b: targets.spectral_norms(t) for b, t in raw_targets.items()})
        summary["fingerprint"] = run_dir.fingerprint
        summary["complete"] = len(run_dir.done()) == total
        summary["regression_token"] = None if built.token is None else [float(v) for v in built.token]
        summary["target_train_loss"] = built.train_loss
        summary["alpha"] = alpha_for(built.token)
        summary["source_seconds"] = sum(max(float(r["seconds"]) for r in row["records"]) for _, row in rows)
        summary["wall_seconds"] = time.perf_counter() - began
        run_dir.write_json("summary.json", seal(json_safe(summary)))
        figures.write(summary, run_dir.path)
        return summary
