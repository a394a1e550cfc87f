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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import mpmath
import numpy as np

from sltcheck.extras import require

require("torch", "repro", "sltcheck repro fig4|fig5|fig6 (the synthetic reproductions)")
import torch  # noqa: E402

from sltcheck.executors import Executor, InProcessExecutor  # noqa: E402
from sltcheck.harness.serialise import decode, encode  # noqa: E402
from sltcheck.jsonfiles import fingerprint, read_json, write_json_atomic  # noqa: E402
from sltcheck.model import reference  # noqa: E402
from sltcheck.model.torch_model import MultiHeadAttention, Transformer  # noqa: E402
from sltcheck.model.weights import MHAWeights, TransformerWeights  # noqa: E402
from sltcheck.numerics.validation import check_choice  # noqa: E402
from sltcheck.numerics.verdict import decide  # noqa: E402
from sltcheck.pruning import construction, sources  # noqa: E402
from sltcheck.pruning.subset_sum import MIPOptions  # noqa: E402
from sltcheck.repro import bounds, figures, targets  # noqa: E402
from sltcheck.repro.dataset import (  # noqa: E402
    AngularVelocity,
    alpha_for,
    angular_velocity,
    full_attention,
    token_bound,
)
from sltcheck.repro.fits import PAPER_FIT, WORKSHOP_FIT, fit  # noqa: E402
from sltcheck.repro.store import RunDirectory  # noqa: E402
from sltcheck.schema import SCHEMA_VERSION  # noqa: E402

FIGURES = ("fig4", "fig5", "fig6")
PRESETS = ("quick", "paper")
MODES = {
    "paper": {"solver": "exact", "init": "xavier", "norm_policy": "keep"},  # B.1's Gurobi: --solver gurobi
    "theory": {"solver": "exact", "init": "theory", "norm_policy": "rescale"},
}
VERDICT_DPS = 30
WORST_SEQUENCES = 2  # re-evaluated in mpmath per source and length

# What "the approximation error" of one source is (Section 4.2 does not define it; each is a reading).
# Name -> (record field, description). Per width, the figures show the mean and standard deviation
# over sources of the chosen one.
ERRORS: dict[str, tuple[str, str]] = {
    "max": ("error", "max over every token of every test input of ||S(x_i) - T(x_i)|| (the theorems' error)"),
    "mean": ("error_mean", "mean over test inputs of the max over tokens of ||S(x_i) - T(x_i)||"),
    "read-out": ("error_read_out", "mean over test inputs of ||S(x_0) - T(x_0)||, the regression token's "
                                   "output: what the model predicts"),
    "weight": ("error_weight", "the largest max-norm error of a merged weight matrix (W_QK, W_VO, FC)"),
}


@dataclass(frozen=True)
class SweepConfig:
    figure: str
    preset: str
    mode: str
    solver: str
    init: str
    widths: tuple[int, ...]  # n_K = n_V (Figures 4, 5) or n_MHA = n_FC (Figure 6)
    lengths: tuple[int, ...]  # T
    blocks: tuple[int, ...] = (1,)  # B (Figure 6)
    sources: int = 100  # random sources per point
    test_samples: int = 10_000
    seed: int = 0
    heads: int = 1
    d_key: int = 8  # the target's d_K = d_V
    train_target: bool = True
    target_epochs: int = 25
    norm_policy: str = "rescale"
    regression_token: str = "learned"  # targets.REGRESSION_TOKENS
    bound: str = "auto"  # bounds.BOUNDS
    extra: dict[str, Any] = field(default_factory=dict)
    # The MIP solvers' settings (sltcheck.pruning.subset_sum.MIPOptions: time_limit, mip_gap,
    # threads); empty: the solver's defaults. Licence-free solvers ignore them.
    solver_options: dict[str, Any] = field(default_factory=dict)

    def mip_options(self) -> MIPOptions:
        return MIPOptions(**self.solver_options)


def preset_config(figure: str, preset: str, mode: str, **overrides: Any) -> SweepConfig:
    check_choice("figure", figure, FIGURES)
    check_choice("preset", preset, PRESETS)
    check_choice("mode", mode, tuple(MODES))
    quick = preset == "quick"
    common: dict[str, Any] = dict(figure=figure, preset=preset, mode=mode, **MODES[mode])
    if figure == "fig4":
        config = SweepConfig(
            **common,
            widths=(4, 8, 12, 16, 20, 24) if quick else tuple(range(4, 65, 4)),
            lengths=(4,), sources=5 if quick else 100, test_samples=500 if quick else 10_000,
            target_epochs=3 if quick else 25,
        )
    elif figure == "fig5":
        config = SweepConfig(
            **common,
            widths=(8, 16) if quick else (8, 16, 32, 64),
            lengths=(4, 16, 64) if quick else (4, 8, 16, 32, 64, 128, 256),
            sources=3 if quick else 100, test_samples=200 if quick else 10_000,
            target_epochs=3 if quick else 25,
        )
    else:
        config = SweepConfig(
            **common,
            widths=(8, 16, 24) if quick else tuple(range(8, 65, 8)),
            lengths=(4,), blocks=(1, 2, 3) if quick else (1, 2, 3, 4),
            sources=3 if quick else 100, test_samples=200 if quick else 10_000, train_target=False,
            d_key=8,
        )
    config = replace(config, **overrides)
    validate_config(config)
    return config


def validate_config(config: SweepConfig) -> SweepConfig:
    """Every option checked before anything is trained or written (``UsageError``, a ``ValueError``)."""
    from sltcheck.errors import UsageError
    from sltcheck.pruning.sources import INITS
    from sltcheck.pruning.subset_sum import SOLVERS, available_solvers
    from sltcheck.repro.bounds import BOUNDS
    from sltcheck.repro.targets import NORM_POLICIES, REGRESSION_TOKENS

    def choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
        if value not in allowed:
            raise UsageError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")

    choice("--solver", config.solver, SOLVERS)
    choice("--init", config.init, INITS)
    choice("--norm-policy", config.norm_policy, NORM_POLICIES)
    choice("--regression-token", config.regression_token, REGRESSION_TOKENS)
    choice("--bound", config.bound, BOUNDS)
    licence_free = ("mitm", "exact", "fast", "brute", "greedy")
    reason = None if config.solver in licence_free else available_solvers()[config.solver]
    if reason is not None:
        raise UsageError(f"--solver {config.solver} is not usable here: {reason}")
    for name, value, limit in (("--sources", config.sources, MAX_SOURCES),
                               ("--test-samples", config.test_samples, MAX_TEST_SAMPLES),
                               ("--target-epochs", config.target_epochs, MAX_EPOCHS)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
            raise UsageError(f"{name} must be an integer from 1 to {limit}, got {value!r}")
    if isinstance(config.seed, bool) or not isinstance(config.seed, int) or config.seed < 0:
        raise UsageError(f"--seed must be a non-negative integer, got {config.seed!r}")
    for name, values in (("widths", config.widths), ("lengths", config.lengths), ("blocks", config.blocks)):
        if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
            raise UsageError(f"{name} must be a non-empty list of positive integers, got {values!r}")
    return config


MAX_SOURCES = 100_000
MAX_TEST_SAMPLES = 1_000_000
MAX_EPOCHS = 10_000


# --- one source ---------------------------------------------------------------


def _source_seed(config: SweepConfig, *point: int) -> np.random.Generator:
    return np.random.default_rng([config.seed, FIGURES.index(config.figure), *point])


def _worst_rows(errors: np.ndarray, count: int) -> np.ndarray:
    return np.argsort(errors, kind="stable")[::-1][:count]


@dataclass(frozen=True)
class SweepErrors:
    """One source's outputs against the target's over the test set, in float64, per sequence:
    ``worst`` = max_i ||S(x_i) - T(x_i)|| (over tokens i), ``read_out`` = ||S(x_0) - T(x_0)||
    (the regression token's output: what the model predicts), ``trivial`` = max_i ||S(x_i)|| +
    ||T(x_i)|| (the triangle inequality's bound on ``worst``)."""

    worst: np.ndarray
    read_out: np.ndarray
    trivial: np.ndarray


def _sweep_errors(source_out: torch.Tensor, target_out: torch.Tensor) -> SweepErrors:
    difference = (source_out - target_out).norm(dim=-1)
    trivial = source_out.norm(dim=-1) + target_out.norm(dim=-1)
    return SweepErrors(difference.amax(dim=-1).numpy(), difference[:, 0].numpy(), trivial.amax(dim=-1).numpy())


def _attention_errors(target: MHAWeights, pruned: MHAWeights, X: np.ndarray, mask: np.ndarray) -> SweepErrors:
    with torch.no_grad():
        Xt, maskt = torch.as_tensor(X), torch.as_tensor(mask)
        return _sweep_errors(MultiHeadAttention.from_weights(pruned)(Xt, maskt),
                             MultiHeadAttention.from_weights(target)(Xt, maskt))


def _transformer_errors(target: TransformerWeights, pruned: TransformerWeights, X: np.ndarray,
                        mask: np.ndarray) -> SweepErrors:
    with torch.no_grad():
        Xt, maskt = torch.as_tensor(X), torch.as_tensor(mask)
        return _sweep_errors(Transformer.from_weights(pruned)(Xt, maskt), Transformer.from_weights(target)(Xt, maskt))


def _mp_error(evaluate: Callable[..., np.ndarray], target: object, pruned: object, X: np.ndarray,
              mask: np.ndarray) -> Any:
    """The measured side in mpmath for one sequence: max_i ||S(x_i) - T(x_i)||."""
    import mpmath

    with mpmath.workdps(VERDICT_DPS):
        difference = evaluate(X, mask, pruned, VERDICT_DPS) - evaluate(X, mask, target, VERDICT_DPS)
        return max(mpmath.sqrt(sum(v * v for v in row)) for row in difference)


def _verdict_record(errors: SweepErrors, sequences: np.ndarray, evaluate: Callable[..., np.ndarray],
                    target: object, pruned: object, bound: object, mask: np.ndarray) -> dict[str, Any]:
    """The source's errors under every definition (:data:`ERRORS`), the verdict measured <= bound
    decided in mpmath on the worst sequences, and whether the check could fail at all."""
    worst = _worst_rows(errors.worst, WORST_SEQUENCES)
    measured = max(_mp_error(evaluate, target, pruned, sequences[row], mask) for row in worst)
    verdict = decide(measured, bound, VERDICT_DPS)
    trivial = float(errors.trivial.max())
    return {
        "error": float(errors.worst.max()),
        "error_mean": float(errors.worst.mean()),
        "error_read_out": float(errors.read_out.mean()),
        "worst_sequence": int(worst[0]),
        **{key: value for key, value in verdict.as_dict().items() if key != "dps"},
        "violated": verdict.violated,
        **vacuity(bound, trivial),
    }


# A bound within this relative distance above the trivial bound (computed in float64) is not
# separated from it: such a check is counted vacuous, never held.
VACUITY_MARGIN = 1e-9


def vacuity(bound: object, trivial: float) -> dict[str, Any]:
    """Whether a check measured <= bound could fail on this test set: never where the bound is at
    least the trivial bound max_i ||S(x_i)|| + ||T(x_i)|| (the triangle inequality, from the same
    outputs). ``bound_over_trivial`` says by how much (a decimal string beyond float64's range)."""
    with mpmath.workdps(VERDICT_DPS):
        over = mpmath.mpf(bound) / mpmath.mpf(trivial) if trivial > 0 else mpmath.inf
        vacuous = bool(over >= 1 - VACUITY_MARGIN)
        return {"trivial_bound": trivial, "vacuous": vacuous,
                "bound_over_trivial": _json_number(over) if mpmath.isfinite(over) else "inf"}


def _pruning_record(result: construction.PrunedMHA | construction.PrunedTransformer) -> dict[str, Any]:
    """What the pruning engine achieved: every matrix's max-norm error (recomputed
    in mpmath from the masks) and the fraction of source weights kept."""
    return {
        "weight_errors": {e.name: e.error for e in result.errors},
        "error_weight": max(float(e.error) for e in result.errors),
        "all_optimal": all(e.proven_optimal for e in result.errors),
        "all_certified": all(e.certified for e in result.errors),  # optimal or at the float64 floor
        "density": result.density,
    }


def mha_source(config: SweepConfig, target: MHAWeights, width: int, index: int,
               test: AngularVelocity, token: np.ndarray | None = None) -> list[dict[str, Any]]:
    """Prune one random source MHA of width n_K = n_V and check it at every length."""
    started = time.perf_counter()
    rng = _source_seed(config, width, index)
    source = sources.source_mha(config.init, rng, heads=target.heads, d_in=target.d_in,
                                d_out=target.d_out, n_key=width, n_value=width)
    result = construction.prune_mha(target, source, solver=config.solver, options=config.mip_options())
    pruned = result.weights
    variant, bound = bounds.source_bound(target, pruned, alpha_for(token), token_bound(token), config.bound,
                                         VERDICT_DPS)
    records = []
    for length in config.lengths:
        X, mask = test.tokens(length, token=token), full_attention(length)
        errors = _attention_errors(target, pruned, X, mask)
        record = _verdict_record(errors, X, reference.mha, target, pruned, bound, mask)
        records.append({
            "figure": config.figure, "width": width, "length": length, "blocks": 1, "source": index,
            "seed": [config.seed, FIGURES.index(config.figure), width, index],
            "bound_statement": "theorem9", "bound_variant": variant,
            **_pruning_record(result), **record,
            "seconds": time.perf_counter() - started,
        })
    return records


def transformer_source(config: SweepConfig, target: TransformerWeights, width: int, index: int,
                       test: AngularVelocity) -> list[dict[str, Any]]:
    started = time.perf_counter()
    blocks = len(target.blocks)
    rng = _source_seed(config, blocks, width, index)
    source = sources.source_transformer(config.init, rng, blocks=blocks, heads=config.heads,
                                        d=target.blocks[0].attention.d_in, n_mha=width, n_fc=width)
    result = construction.prune_transformer(target, source, solver=config.solver, options=config.mip_options())
    pruned = result.weights
    statement = "theorem14" if blocks >= 2 else "theorem11"
    checked_target, checked_source = (target, pruned) if blocks >= 2 else (target.blocks[0], pruned.blocks[0])
    variant, bound = bounds.source_bound(checked_target, checked_source, alpha_for(None), token_bound(None),
                                         config.bound, VERDICT_DPS)
    length = config.lengths[0]
    X, mask = test.tokens(length), full_attention(length)  # untrained targets: the token stays at zero
    errors = _transformer_errors(target, pruned, X, mask)
    record = _verdict_record(errors, X, reference.transformer, target, pruned, bound, mask)
    return [{
        "figure": config.figure, "width": width, "length": length, "blocks": blocks, "source": index,
        "seed": [config.seed, FIGURES.index(config.figure), blocks, width, index],
        "bound_statement": statement, "bound_variant": variant,
        **_pruning_record(result), **record,
        "seconds": time.perf_counter() - started,
    }]


# --- the sweep ------------------------------------------------------------------


def _key(figure: str, blocks: int, width: int, index: int) -> str:
    return f"{figure}/B{blocks:02d}/n{width:04d}/s{index:04d}"


def units(config: SweepConfig) -> Iterator[tuple[str, int, int, int]]:
    for blocks in config.blocks:
        for width in config.widths:
            for index in range(config.sources):
                yield _key(config.figure, blocks, width, index), blocks, width, index


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
        return BuiltTargets({b: weights for b in config.blocks}, np.asarray(decode(saved["token"])),
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
    with RunDirectory(out, asdict(config), command=f"repro {config.figure}") as run_dir:
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
        rows = run_dir.records()
        records = [r for row in rows for r in row["records"]]
        summary = summarise(config, records, {b: targets.spectral_norms(t) for b, t in raw_targets.items()})
        summary["fingerprint"] = run_dir.fingerprint
        summary["complete"] = len(run_dir.done()) == total
        summary["regression_token"] = None if built.token is None else [float(v) for v in built.token]
        summary["target_train_loss"] = built.train_loss
        summary["alpha"] = alpha_for(built.token)
        summary["source_seconds"] = sum(max(float(r["seconds"]) for r in row["records"]) for row in rows)
        summary["wall_seconds"] = time.perf_counter() - began
        run_dir.write_json("summary.json", summary)
        figures.write(summary, run_dir.path)
        return summary


def summarise(config: SweepConfig, records: list[dict[str, Any]],
              target_norms: dict[int, dict[str, float]]) -> dict[str, Any]:
    """Mean and standard deviation per point, fits, and every violation."""
    points = []
    groups: dict[tuple[int, int, int], list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault((record["blocks"], record["length"], record["width"]), []).append(record)
    for (blocks, length, width), group in sorted(groups.items()):
        ratios = np.array([r["ratio"] for r in group], dtype=float)
        by_definition = {name: _mean_std([r[field] for r in group]) for name, (field, _) in ERRORS.items()
                         if all(field in r for r in group)}
        points.append({
            "blocks": blocks, "length": length, "width": width, "sources": len(group),
            **by_definition["max"], "errors": by_definition,
            "max_ratio": float(ratios.max()),
            "mean_bound": _json_number(mpmath.fsum(mpmath.mpf(r["bound"]) for r in group) / len(group)),
        })
    violations = [r for r in records if r["violated"]]
    vacuous = [r for r in records if r.get("vacuous")]
    return {
        "schema_version": SCHEMA_VERSION,
        "figure": config.figure, "config": asdict(config), "points": points,
        "fits": fits_of(config, points), "paper_fit": PAPER_FIT, "workshop_fit": WORKSHOP_FIT,
        "checked": len(records), "violations": violations,
        "undecided": sum(bool(r["undecided"]) for r in records),
        # A bound at or above the trivial bound max_i ||S(x_i)|| + ||T(x_i)|| cannot be violated.
        "vacuous": len(vacuous),
        "held": sum(bool(r["holds"]) and not r.get("vacuous") for r in records),
        "least_bound_over_trivial": _least_over_trivial(vacuous),
        "worst_ratio": max((float(r["ratio"]) for r in records), default=None),
        "target_norms": {str(b): n for b, n in target_norms.items()},
        "norm_policy": config.norm_policy,
        "bound_variants": sorted({str(r.get("bound_variant", "as-proven")) for r in records}),
    }


def _mean_std(values: list[float]) -> dict[str, float]:
    array = np.asarray(values, dtype=float)
    return {"mean": float(array.mean()), "std": float(array.std(ddof=1)) if array.size > 1 else 0.0}


def _least_over_trivial(vacuous: list[dict[str, Any]]) -> float | str | None:
    """The smallest bound / trivial bound among vacuous checks: every vacuous bound exceeds the
    trivial one at least this many times."""
    if not vacuous:
        return None
    with mpmath.workdps(VERDICT_DPS):
        least = min(mpmath.mpf(r["bound_over_trivial"]) for r in vacuous)
        return _json_number(least) if mpmath.isfinite(least) else "inf"


def _json_number(value: Any) -> float | str:
    """A float where float64 holds it, else the decimal string (strict JSON has no Infinity;
    Theorem 14's bounds reach 1e400 and beyond). ``float()`` reads either."""
    as_float = float(value)
    return as_float if np.isfinite(as_float) else mpmath.nstr(value, 6)


def fits_of(config: SweepConfig, points: list[dict[str, Any]], records: list[dict[str, Any]] | None = None,
            error: str = "max", kind: str = "linear", widths: tuple[int, int] | None = None) -> dict[str, Any]:
    """The figure's fits (Figure 4: one; Figure 5: one per length; Figure 6: one per block count,
    delta fitted on the first and shared) of the error ``error`` (:data:`ERRORS`) with the fit
    ``kind`` (:data:`sltcheck.repro.fits.FITS`; ``per-source`` needs ``records``), over the
    widths from ``widths[0]`` to ``widths[1]`` (default: every width)."""
    field = ERRORS[error][0]

    def fit_of(selected: list[dict[str, Any]], delta: float | None = None) -> dict[str, Any] | None:
        if widths is not None:
            selected = [p for p in selected if widths[0] <= p["width"] <= widths[1]]
        if len(selected) < 2:
            return None
        n = np.array([p["width"] for p in selected], dtype=float)
        eps = np.array([p["errors"][error]["mean"] if "errors" in p else p["mean"] for p in selected], dtype=float)
        per_source = None
        if kind == "per-source":
            per_source = [np.array([r[field] for r in records or () if (r["blocks"], r["length"], r["width"])
                                    == (p["blocks"], p["length"], p["width"])], dtype=float) for p in selected]
        try:
            return fit(kind, n, eps, per_source, delta).as_dict()
        except (RuntimeError, ValueError) as failure:  # a degenerate curve has no fit
            return {"error": str(failure)}

    if config.figure == "fig4":
        return {"all": fit_of(points)}
    if config.figure == "fig5":
        return {f"T={length}": fit_of([p for p in points if p["length"] == length]) for length in config.lengths}
    first = fit_of([p for p in points if p["blocks"] == config.blocks[0]])
    shared = first.get("delta") if first else None
    fits = {f"B={config.blocks[0]}": first}
    for blocks in config.blocks[1:]:
        fits[f"B={blocks}"] = fit_of([p for p in points if p["blocks"] == blocks],
                                     delta=shared if isinstance(shared, float) and kind != "log-linear" else None)
    return fits
