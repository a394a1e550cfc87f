"""One source of a synthetic sweep: pruned by Lemma 7's construction and checked at every length.

The source's error max_i ||S(x_i) - T(x_i)|| is swept in float64 (torch) over the test set; the worst
sequences are re-evaluated in mpmath and measured <= bound is decided there against the a-posteriori
bound of Theorem 9 (an MHA), 11 (one block) or 14 (B >= 2 blocks) from the achieved weight errors
(:mod:`sltcheck.repro.bounds`). :func:`vacuity` says whether such a check could fail at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from sltcheck.extras import require

require("torch", "repro", "sltcheck repro fig4|fig5|fig6 (the synthetic reproductions)")
import torch  # noqa: E402

from sltcheck.model import reference  # noqa: E402
from sltcheck.model.torch_model import MultiHeadAttention, Transformer  # noqa: E402
from sltcheck.model.weights import MHAWeights, TransformerWeights  # noqa: E402
from sltcheck.numerics.verdict import decide  # noqa: E402
from sltcheck.pruning import construction, sources  # noqa: E402
from sltcheck.repro import bounds  # noqa: E402
from sltcheck.repro.dataset import AngularVelocity, alpha_for, full_attention, token_bound  # noqa: E402
from sltcheck.repro.sweep_config import FIGURES, VERDICT_DPS, WORST_SEQUENCES, SweepConfig  # noqa: E402
from sltcheck.repro.sweep_summary import json_number  # noqa: E402


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
                "bound_over_trivial": json_number(over) if mpmath.isfinite(over) else "inf"}


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
        seed = [config.seed, FIGURES.index(config.figure), width, index]
        records.append({
            "figure": config.figure, "width": width, "length": length, "blocks": 1, "source": index,
            "seed": seed, "bound_statement": "theorem9", "bound_variant": variant,
            **_pruning_record(result), **record,
            **_input_space(config, target, pruned, length, token, test, errors, record, [*seed, length]),
            "seconds": time.perf_counter() - started,
        })
    return records


def _input_space(config: SweepConfig, target: object, pruned: object, length: int, token: np.ndarray | None,
                 test: AngularVelocity, errors: SweepErrors, record: dict[str, Any],
                 seed: list[int]) -> dict[str, Any]:
    """``{"input_space": ...}`` (:mod:`sltcheck.repro.input_space`) where the sweep asks for it, else nothing."""
    if not config.input_space:
        return {}
    from sltcheck.repro.input_space import input_space_record

    worst = _worst_rows(errors.worst, STARTS)
    starts = np.stack([test.omega[worst], test.theta0[worst]], axis=1)
    return {"input_space": input_space_record(target, pruned, length, token, alpha_for(token), starts,  # type: ignore[arg-type]
                                              record["error"], record["bound"], np.random.default_rng(seed),
                                              VERDICT_DPS)}


STARTS = 4  # the test set's worst sequences the input-space search starts from


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
    seed = [config.seed, FIGURES.index(config.figure), blocks, width, index]
    return [{
        "figure": config.figure, "width": width, "length": length, "blocks": blocks, "source": index,
        "seed": seed, "bound_statement": statement, "bound_variant": variant,
        **_pruning_record(result), **record,
        **_input_space(config, target, pruned, length, None, test, errors, record, [*seed, length]),
        "seconds": time.perf_counter() - started,
    }]
