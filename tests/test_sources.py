"""Source initialisations and norm-bounded targets."""

from __future__ import annotations

import re

import mpmath
import numpy as np
import pytest

from sltcheck.model.weights import BlockWeights, MHAWeights, TransformerWeights
from sltcheck.numerics import precision
from sltcheck.pruning import sources

SHAPE = {"heads": 2, "d_in": 3, "d_out": 2, "n_key": 16, "n_value": 8}


def all_arrays(weights) -> list[np.ndarray]:
    if isinstance(weights, MHAWeights):
        return list(weights.tensors())
    if isinstance(weights, BlockWeights):
        return all_arrays(weights.attention) + list(weights.fc.layers)
    return [a for block in weights.blocks for a in all_arrays(block)]


def test_theory_ranges_follow_section_3_1():
    weights = sources.source_mha("theory", 0, **SHAPE)
    bound = 16**0.25
    for array in (weights.W_Q, weights.W_K):
        assert np.abs(array).max() <= bound
        assert np.abs(array).max() > 0.8 * bound
        assert np.abs(array / bound).max() <= 1  # W' = W / n_K^(1/4) is U[-1, 1] (Section 3.2)
    for array in (weights.W_V, weights.W_O):
        assert np.abs(array).max() <= 1
        assert np.abs(array).max() > 0.8
    fc = sources.source_fc("theory", 0, widths=(3, 4), hidden=30)
    assert [layer.shape for layer in fc.layers] == [(30, 3), (4, 30)]
    assert max(np.abs(layer).max() for layer in fc.layers) <= 1


def test_theory_inverse_and_xavier_ranges():
    inverse = sources.source_mha("theory-inverse", 0, **SHAPE)
    assert np.abs(inverse.W_Q).max() <= 16**-0.25
    assert np.abs(inverse.W_K).max() <= 16**-0.25
    assert np.abs(inverse.W_V).max() > 0.8
    xavier = sources.source_mha("xavier", 0, **SHAPE)
    for array, fans in ((xavier.W_Q, 3 + 16), (xavier.W_K, 3 + 16), (xavier.W_V, 3 + 8), (xavier.W_O, 8 + 2)):
        bound = np.sqrt(6 / fans)
        assert np.abs(array).max() <= bound
        assert np.abs(array).max() > 0.7 * bound
    fc = sources.source_fc("xavier", 0, widths=(3, 4), hidden=30)
    assert np.abs(fc.layers[0]).max() <= np.sqrt(6 / 33)
    assert np.abs(fc.layers[1]).max() <= np.sqrt(6 / 34)


@pytest.mark.parametrize("init", sources.INITS)
def test_same_seed_same_bytes(init):
    first = sources.source_transformer(init, 5, blocks=2, d=2, heads=2, n_mha=8, n_fc=6)
    second = sources.source_transformer(init, 5, blocks=2, d=2, heads=2, n_mha=8, n_fc=6)
    other = sources.source_transformer(init, 6, blocks=2, d=2, heads=2, n_mha=8, n_fc=6)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(all_arrays(first), all_arrays(second), strict=True))
    assert any(a.tobytes() != b.tobytes() for a, b in zip(all_arrays(first), all_arrays(other), strict=True))
    from_generator = sources.source_transformer(
        init, np.random.default_rng(5), blocks=2, d=2, heads=2, n_mha=8, n_fc=6
    )
    assert all(a.tobytes() == b.tobytes() for a, b in zip(all_arrays(first), all_arrays(from_generator), strict=True))


def test_targets_satisfy_the_spectral_assumptions_in_mpmath():
    target = sources.target_transformer(1, blocks=2, d=3, heads=2, d_key=4, d_value=2, fc_widths=(3, 5, 3))
    for array in all_arrays(target):
        for matrix in array.reshape(-1, *array.shape[-2:]):
            norm = precision.spectral_norm(matrix, dps=30)
            with mpmath.workdps(30):
                assert norm <= 1
                assert norm > 0.999
    again = sources.target_transformer(1, blocks=2, d=3, heads=2, d_key=4, d_value=2, fc_widths=(3, 5, 3))
    assert all(a.tobytes() == b.tobytes() for a, b in zip(all_arrays(target), all_arrays(again), strict=True))
    half = sources.target_mha(2, heads=1, d_in=3, d_key=2, d_value=2, d_out=3, spectral_bound=0.5)
    assert np.linalg.norm(half.W_Q[0], 2) <= 0.5


def test_source_like_has_the_targets_shapes():
    target = sources.target_transformer(3, blocks=2, d=3, heads=2, d_key=4, d_value=2, fc_widths=(3, 5, 3))
    source = sources.source_like(target, "theory", 4, n_key=6, n_value=9, fc_hidden=[12, 20])
    assert isinstance(source, TransformerWeights)
    assert len(source.blocks) == 2
    attention = source.blocks[1].attention
    assert (attention.heads, attention.d_in, attention.d_key, attention.d_value, attention.d_out) == (2, 3, 6, 9, 3)
    assert [layer.shape for layer in source.blocks[0].fc.layers] == [(12, 3), (5, 12), (20, 5), (3, 20)]


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: sources.source_mha("kaiming", 0, **SHAPE), "init must be one of 'theory', 'xavier'"),
        (lambda: sources.source_mha("theory", -1, **SHAPE), "seed must be a non-negative integer"),
        (lambda: sources.source_mha("theory", 0, **{**SHAPE, "n_key": 0}), "n_key must be a positive integer"),
        (lambda: sources.source_fc("theory", 0, widths=(3,), hidden=4), "widths must list d_1"),
        (lambda: sources.source_fc("theory", 0, widths=(3, 4, 2), hidden=[4]), "hidden must be one width or 2"),
        (lambda: sources.target_mha(0, heads=1, d_in=2, d_key=2, d_value=2, d_out=2, spectral_bound=0),
         "spectral_bound must be finite and > 0"),
        (lambda: sources.source_like(sources.target_mha(0, heads=1, d_in=2, d_key=2, d_value=2, d_out=2)),
         "n_key must be given"),
        (lambda: sources.source_like("mha", n_key=2), "target must be MHAWeights"),
    ],
)
def test_bad_input(call, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        call()
