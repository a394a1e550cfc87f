"""The bound a reproduction checks each source against (``sltcheck.repro.bounds``)."""

from __future__ import annotations

import numpy as np
import pytest

from sltcheck.model.weights import BlockWeights, FCWeights, MHAWeights, TransformerWeights
from sltcheck.pruning import construction, sources
from sltcheck.repro import bounds, targets
from sltcheck.repro.dataset import angular_velocity, full_attention
from sltcheck.statements import theorem9, theorem11, theorem14


def scaled(weights: MHAWeights, value_scale: float) -> MHAWeights:
    return MHAWeights(weights.W_Q, weights.W_K, weights.W_V, weights.W_O * value_scale)


def perturbed_query(weights: MHAWeights, size: float) -> MHAWeights:
    """A 'pruned source' equal to the target except for a small change of W_Q (so dW_VO = 0)."""
    return MHAWeights(weights.W_Q + size, weights.W_K, weights.W_V, weights.W_O)


def mha_pair(seed: int, value_scale: float):
    target = scaled(targets.theory_target_mha(np.random.default_rng(seed), 2, 1, 8, 8), value_scale)
    return target, perturbed_query(target, 1e-3)


def block_pair(seed: int):
    """Two blocks, rescaled and then with every FC layer at spectral norm 1.5 (above the assumptions)."""
    rng = np.random.default_rng(seed)
    unit = targets.apply_norm_policy(targets.theory_target_transformer(rng, 2, 2, 4, 4), "rescale")
    target = TransformerWeights(tuple(BlockWeights(b.attention, FCWeights(tuple(1.5 * w for w in b.fc.layers)))
                                      for b in unit.blocks))
    source = sources.source_transformer("theory", rng, blocks=2, heads=1, d=2, n_mha=16, n_fc=16)
    return target, construction.prune_transformer(target, source, solver="mitm").weights


@pytest.mark.theorem9
@pytest.mark.theorem11
@pytest.mark.theorem14
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", ["mha", "block", "transformer"])
def test_float_chain_equals_the_statements_tight_chain(seed, kind):
    if kind == "mha":
        target, pruned = mha_pair(seed, 3.0)
        exact = theorem9.a_posteriori_bound(target, pruned, 1.3, dps=30, variant="tight")
    else:
        full_target, full_pruned = block_pair(seed)
        if kind == "block":
            target, pruned = full_target.blocks[0], full_pruned.blocks[0]
            exact = theorem11.a_posteriori_bound(target, pruned, 1.3, dps=30, variant="tight")
        else:
            target, pruned = full_target, full_pruned
            exact = theorem14.a_posteriori_bound(target, pruned, 1.3, dps=30, variant="tight")
    assert np.isfinite(float(exact))
    assert not bounds.meets_assumptions(target)
    assert bounds.actual_norm_bound_float(target, pruned, 1.3) == pytest.approx(float(exact), rel=1e-9)


@pytest.mark.theorem9
@pytest.mark.parametrize("seed", range(4))
def test_as_proven_fails_above_norm_one_where_the_actual_norm_chain_holds(seed):
    """||W_VO|| = 10^4 breaks Eq. 13 (||W_VO|| <= 1): the paper's chain is then refuted by a
    measured error, the chain with the actual norms is not."""
    target, pruned = mha_pair(seed, 1e4)
    assert not bounds.meets_assumptions(target)
    X = angular_velocity("test", seed, 8).tokens(4)
    measured = max(
        theorem9.measured(theorem9.make_instance(target, pruned, x, full_attention(4), 1.0), dps=30) for x in X
    )
    as_proven = theorem9.a_posteriori_bound(target, pruned, np.sqrt(2), dps=30)
    variant, actual = bounds.source_bound(target, pruned, np.sqrt(2), 1.0, "auto", 30)
    assert variant == "actual-norms"
    assert measured > as_proven
    assert measured <= actual


def test_auto_uses_as_proven_where_the_assumptions_hold():
    target, _pruned = mha_pair(0, 1.0)
    rescaled = targets.apply_norm_policy(target, "rescale")
    assert bounds.meets_assumptions(rescaled)
    assert bounds.variant_for(rescaled, "auto") == "as-proven"
    assert bounds.variant_for(rescaled, "actual-norms") == "tight"
    assert bounds.variant_for(target, "auto") == "tight"
    with pytest.raises(ValueError, match="bound 'as-proven' assumes"):
        bounds.variant_for(target, "as-proven")
    with pytest.raises(ValueError, match="bound must be one of"):
        bounds.variant_for(target, "loose")


def test_meets_assumptions_reads_every_matrix():
    eye = np.eye(2)[None]
    mha = MHAWeights(eye, eye, eye, eye)
    assert bounds.meets_assumptions(mha)
    assert not bounds.meets_assumptions(BlockWeights(mha, FCWeights((2 * np.eye(2),))))
    assert not bounds.meets_assumptions(TransformerWeights((BlockWeights(mha, FCWeights((np.eye(2),))),
                                                            BlockWeights(scaled(mha, 1.5), FCWeights((np.eye(2),))))))
