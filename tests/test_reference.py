"""The reference objects: forms agree, precisions agree, torch agrees."""

from __future__ import annotations

import zlib

import mpmath
import numpy as np
import pytest
import torch

from sltcheck.model import reference
from sltcheck.model.torch_model import Block, FullyConnected, MultiHeadAttention, Transformer
from sltcheck.model.weights import BlockWeights, FCWeights, MHAWeights, TransformerWeights
from sltcheck.numerics import precision


def random_mha(rng, heads, d_in, d_key, d_value, d_out, scale=1.0):
    return MHAWeights(
        scale * rng.normal(size=(heads, d_in, d_key)),
        scale * rng.normal(size=(heads, d_in, d_key)),
        rng.normal(size=(heads, d_in, d_value)),
        rng.normal(size=(heads, d_value, d_out)),
    )


def random_block(rng, heads, d, hidden):
    fc = FCWeights((rng.normal(size=(hidden, d)), rng.normal(size=(d, hidden))))
    return BlockWeights(random_mha(rng, heads, d, 3, 5, d, scale=0.5), fc)


def causal(T):
    return np.tril(np.ones((T, T), dtype=bool))


def one_token(T):
    return np.eye(T, dtype=bool)


def random_mask(T):
    rng = np.random.default_rng(7)
    mask = rng.random((T, T)) < 0.3
    mask[np.arange(T), rng.integers(0, T, size=T)] = True
    return mask


# (name, T, heads, d_in, d_key, d_value, d_out, query/key scale, mask builder)
INSTANCES = [
    ("random", 7, 3, 4, 5, 6, 4, 1.0, causal),
    ("single token T=1", 1, 2, 3, 2, 2, 3, 1.0, causal),
    ("one attended token", 6, 2, 3, 4, 4, 2, 1.0, one_token),
    ("random mask", 9, 4, 5, 3, 2, 5, 1.0, random_mask),
    ("one-hot attention", 8, 2, 4, 4, 4, 4, 30.0, causal),
    ("logits ~1e3", 8, 1, 4, 4, 3, 4, 30.0, lambda T: np.ones((T, T), dtype=bool)),
    ("long sequence T=256", 256, 2, 4, 3, 3, 4, 1.0, causal),
]


@pytest.fixture(params=INSTANCES, ids=[case[0] for case in INSTANCES])
def instance(request):
    name, T, heads, d_in, d_key, d_value, d_out, scale, make_mask = request.param
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    weights = random_mha(rng, heads, d_in, d_key, d_value, d_out, scale)
    X = rng.normal(size=(T, d_in))
    return X, make_mask(T), weights


def test_logits_reach_the_extreme_range():
    X = np.random.default_rng(1).normal(size=(8, 4))
    w = random_mha(np.random.default_rng(2), 1, 4, 4, 3, 4, 30.0)
    logits = X @ w.merged().W_QK[0] @ X.T
    assert np.abs(logits).max() > 500


def test_per_head_equals_merged_form_in_float64(instance):
    X, mask, weights = instance
    per_head = reference.mha(X, mask, weights)
    merged = reference.mha_merged(X, mask, weights.merged())
    np.testing.assert_allclose(merged, per_head, rtol=1e-12, atol=1e-12 * np.abs(per_head).max())


def test_per_head_equals_merged_form_at_50_digits(instance):
    X, mask, weights = instance
    if X.shape[0] > 64:
        X, mask = X[:64], mask[:64, :64]  # the mpmath path is O(T^2) Python operations
    with mpmath.workdps(50):
        per_head = reference.mha(X, mask, weights, dps=50)
        merged = reference.mha_merged(X, mask, weights.merged(dps=50), dps=50)
        scale = max(abs(v) for v in per_head.flat)
        assert max(abs(v) for v in (per_head - merged).flat) <= mpmath.mpf("1e-40") * max(scale, 1)


def test_float64_agrees_with_50_digits(instance):
    X, mask, weights = instance
    exact = reference.mha(X, mask, weights, dps=50).astype(float)
    np.testing.assert_allclose(reference.mha(X, mask, weights), exact, rtol=1e-9, atol=1e-9 * np.abs(exact).max())


def test_softmax_is_stable_for_huge_logits():
    logits = np.array([[1e3, -1e3, 999.0], [-1e300, -1e300, -1e300]])
    mask = np.ones_like(logits, dtype=bool)
    p = reference.masked_softmax(logits, mask)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=-1), 1.0)
    exact = reference.masked_softmax(logits, mask, dps=50).astype(float)
    np.testing.assert_allclose(p, exact, rtol=1e-14, atol=1e-300)


def test_softmax_ignores_unattended_logits():
    logits = np.array([0.0, 5.0, 1e308])
    p = reference.masked_softmax(logits, np.array([1, 1, 0]))
    assert p[2] == 0.0
    np.testing.assert_allclose(p[:2], [1 / (1 + np.exp(5)), 1 / (1 + np.exp(-5))])


def test_torch_module_equals_numpy(instance):
    X, mask, weights = instance
    module = MultiHeadAttention.from_weights(weights)
    with torch.no_grad():
        out = module(torch.as_tensor(X), torch.as_tensor(mask)).numpy()
    np.testing.assert_allclose(out, reference.mha(X, mask, weights), rtol=1e-11, atol=1e-11)


def test_mha_equals_scaled_dot_product_attention(instance):
    X, mask, weights = instance
    Xt = torch.as_tensor(X)
    q, k, v = (Xt @ torch.as_tensor(w) for w in (weights.W_Q, weights.W_K, weights.W_V))
    heads = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=torch.as_tensor(mask), scale=1 / np.sqrt(weights.d_key)
    )
    out = (heads @ torch.as_tensor(weights.W_O)).sum(dim=0).numpy()
    np.testing.assert_allclose(reference.mha(X, mask, weights), out, rtol=1e-11, atol=1e-11)


def test_pruned_source_uses_its_own_key_width():
    rng = np.random.default_rng(3)
    source = random_mha(rng, 2, 3, 16, 4, 3)
    from sltcheck.model.weights import MHAMasks

    masks = MHAMasks(*(rng.random(w.shape) < 0.5 for w in source.tensors()))
    pruned = source.pruned(masks)
    X = rng.normal(size=(5, 3))
    expected = reference.mha_merged(X, causal(5), pruned.merged())  # W_QK carries 1/sqrt(n_K)
    np.testing.assert_allclose(reference.mha(X, causal(5), pruned), expected, rtol=1e-12)
    assert np.allclose(pruned.merged().W_QK, pruned.W_Q @ pruned.W_K.transpose(0, 2, 1) / 4)


def test_fc_block_transformer_agree_across_numpy_torch_mpmath():
    rng = np.random.default_rng(4)
    blocks = TransformerWeights(tuple(random_block(rng, 2, 3, 6) for _ in range(3)))
    X, mask = 0.5 * rng.normal(size=(5, 3)), causal(5)
    out = reference.transformer(X, mask, blocks)
    np.testing.assert_allclose(reference.transformer(X, mask, blocks, dps=40).astype(float), out, rtol=1e-10)
    with torch.no_grad():
        torch_out = Transformer.from_weights(blocks)(torch.as_tensor(X), torch.as_tensor(mask)).numpy()
    np.testing.assert_allclose(torch_out, out, rtol=1e-11)
    states = reference.block_inputs(X, mask, blocks)
    np.testing.assert_allclose(states[-1], out)
    np.testing.assert_allclose(states[1], reference.block(X, mask, blocks.blocks[0]))
    fc = blocks.blocks[0].fc
    with torch.no_grad():
        fc_out = FullyConnected.from_weights(fc)(torch.as_tensor(X)).numpy()
    np.testing.assert_allclose(fc_out, reference.fc(X, fc), rtol=1e-12)
    np.testing.assert_allclose(
        reference.two_layer(X, *fc.layers), np.maximum(X @ fc.layers[0].T, 0) @ fc.layers[1].T
    )
    assert Block.from_weights(blocks.blocks[0]).to_weights().fc.layers[0].shape == (6, 3)


def test_output_matrix_is_split_into_head_blocks():
    rng = np.random.default_rng(5)
    W_O = rng.normal(size=(2 * 4, 3))
    w = MHAWeights.from_output_matrix(
        rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 3, 4)), W_O
    )
    np.testing.assert_array_equal(w.W_O[1], W_O[4:])


def test_torch_module_computes_selected_query_rows_only():
    rng = np.random.default_rng(6)
    weights = random_mha(rng, 2, 3, 4, 4, 2)
    X, mask = rng.normal(size=(7, 3)), causal(7)
    module = MultiHeadAttention.from_weights(weights)
    with torch.no_grad():
        rows = module(torch.as_tensor(X), torch.as_tensor(mask), rows=slice(2, 4)).numpy()
    np.testing.assert_allclose(rows, reference.mha(X, mask, weights)[2:4], rtol=1e-12)


def test_spectral_norm_where_mpmath_svd_does_not_converge():
    """A scaled rotation (equal singular values) on which mpmath.svd_r fails at 50 digits
    (found by the deep profile in Theorem 14's FC errors); the Gram-eigenvalue form is exact."""
    s = float.fromhex("0x1.6a09e667f3bb5p-1")  # 1/sqrt(2) rounded down: singular values s sqrt(2)
    matrix = np.array([[-s, s], [s, s]])
    with mpmath.workdps(80):
        expected = mpmath.mpf(s) * mpmath.sqrt(2)
        assert abs(precision.spectral_norm(matrix, 50) - expected) < mpmath.mpf(10) ** -48
    assert precision.spectral_norm(matrix) == pytest.approx(float(expected), rel=1e-15)
