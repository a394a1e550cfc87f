"""GPT-2 presets, the Appendix B.2 initialisation with Q/K scaling, and
equivalence with transformers' forward."""

from __future__ import annotations

import math

import pytest
import torch
from scipy import stats

from sltcheck.repro.lm.model import (
    PRESETS,
    EdgePopupGPT2,
    ModelConfig,
    build_gpt2,
    get_preset,
    masked_parameter_names,
    parse_masked,
    theory_scale,
)

MICRO = ModelConfig(n_layer=2, n_embd=32, n_head=4, block_size=16, vocab_size=64)


def _ks(sample: torch.Tensor, std: float) -> float:
    return float(stats.kstest(sample.flatten().double().numpy(), "norm", args=(0.0, std)).pvalue)


@pytest.mark.parametrize("scale", [1.0, 2.0, "theory"])
def test_scaled_initialisation_distribution(scale: float | str) -> None:
    config = get_preset("cpu-tiny")
    s = config.theory_scale if scale == "theory" else float(scale)
    model = build_gpt2(get_preset("cpu-tiny", qk_scale=s), seed=3)
    d, b = config.n_embd, config.n_layer
    qk, v, attn_proj, mlp_proj, fc = [], [], [], [], []
    for block in model.transformer.h:
        w = block.attn.c_attn.weight.detach()  # Conv1D: (in, out) = (d, 3d), out = [Q|K|V]
        assert w.shape == (d, 3 * d)
        qk.append(w[:, : 2 * d])
        v.append(w[:, 2 * d :])
        attn_proj.append(block.attn.c_proj.weight.detach())
        mlp_proj.append(block.mlp.c_proj.weight.detach())
        fc.append(block.mlp.c_fc.weight.detach())
        assert torch.all(block.attn.c_attn.bias == 0)
    qk_all = torch.cat([t.flatten() for t in qk])
    assert _ks(qk_all, 0.02 * s) > 1e-3
    assert _ks(torch.cat([t.flatten() for t in v]), 0.02) > 1e-3
    assert _ks(torch.cat([t.flatten() for t in fc]), 0.02) > 1e-3
    residual = 0.02 / math.sqrt(2 * b)
    assert _ks(torch.cat([t.flatten() for t in attn_proj]), residual) > 1e-3
    assert _ks(torch.cat([t.flatten() for t in mlp_proj]), residual) > 1e-3
    assert _ks(model.transformer.wte.weight.detach(), 0.02) > 1e-3
    if s != 1.0:  # the test has power: unscaled N(0, 0.02^2) is rejected
        assert _ks(qk_all, 0.02) < 1e-6


def test_theory_scale_and_presets() -> None:
    assert theory_scale(64) == pytest.approx(2.8284, abs=1e-4)
    assert get_preset("cpu-tiny").head_dim == 32
    assert (PRESETS["gpt2-mini"].n_layer, PRESETS["gpt2-mini"].n_embd) == (4, 512)
    assert PRESETS["gpt2-small"].n_head == 12
    assert PRESETS["gpt2-medium"].n_layer == 24
    assert PRESETS["gpt2-medium"].theory_scale == pytest.approx(64**0.25)


def test_same_seed_same_weights_and_scaling_only_changes_qk() -> None:
    a = build_gpt2(MICRO, seed=5)
    b = build_gpt2(MICRO, seed=5)
    c = build_gpt2(ModelConfig(**{**MICRO.to_dict(), "qk_scale": 3.0}), seed=5)
    d = MICRO.n_embd
    for (name, pa), pb, pc in zip(a.named_parameters(), b.parameters(), c.parameters(),
                                  strict=True):
        assert torch.equal(pa, pb)
        if name.endswith("attn.c_attn.weight"):
            torch.testing.assert_close(pc[:, : 2 * d], 3.0 * pa[:, : 2 * d])
            assert torch.equal(pc[:, 2 * d :], pa[:, 2 * d :])
        else:
            assert torch.equal(pa, pc), name


def _reference(model) -> torch.nn.Module:
    from transformers import GPT2LMHeadModel

    config = model.config.__class__.from_dict(model.config.to_dict())
    config._attn_implementation = "eager"
    ref = GPT2LMHeadModel(config)
    ref.load_state_dict(model.state_dict())
    return ref.eval()


def test_all_ones_mask_equals_transformers_forward() -> None:
    base = build_gpt2(MICRO, seed=0)
    wrapped = EdgePopupGPT2(base, keep_fraction=1.0, masked="all").eval()
    assert all(bool(m.all()) for m in wrapped.masks().values())
    ids = torch.randint(0, MICRO.vocab_size, (2, MICRO.block_size))
    with torch.no_grad():
        expected = _reference(base)(input_ids=ids).logits
        torch.testing.assert_close(wrapped(ids), expected, rtol=1e-5, atol=1e-5)


def test_masked_forward_equals_transformers_with_pruned_weights() -> None:
    base = build_gpt2(MICRO, seed=0)
    wrapped = EdgePopupGPT2(base, 0.3, "attention+mlp+embeddings").eval()
    ref = _reference(base)
    with torch.no_grad():
        params = dict(ref.named_parameters())
        for name, mask in wrapped.masks().items():
            params[name].mul_(mask)  # wte is tied: the output head is pruned too
        ids = torch.randint(0, MICRO.vocab_size, (2, MICRO.block_size))
        torch.testing.assert_close(wrapped(ids), ref(input_ids=ids).logits, rtol=1e-5, atol=1e-5)


def test_masked_groups() -> None:
    model = build_gpt2(MICRO, seed=0)
    names = masked_parameter_names(model)
    assert len(names) == 4 * MICRO.n_layer
    assert all(n.endswith(".weight") and (".attn." in n or ".mlp." in n) for n in names)
    everything = masked_parameter_names(model, "all")
    assert len(everything) == len(list(model.parameters()))
    assert masked_parameter_names(model, "embeddings") == [
        "transformer.wte.weight", "transformer.wpe.weight"]
    assert len(masked_parameter_names(model, "biases")) == 4 * MICRO.n_layer


def test_bad_model_inputs_raise() -> None:
    with pytest.raises(ValueError, match=r"preset must be one of 'cpu-tiny'.*got 'gpt5'"):
        get_preset("gpt5")
    with pytest.raises(ValueError, match=r"masked must be .*attention.*got 'heads'"):
        parse_masked("heads")
    with pytest.raises(ValueError, match=r"qk_scale must be a finite number > 0, got -1"):
        build_gpt2(ModelConfig(**{**MICRO.to_dict(), "qk_scale": -1.0}))
    with pytest.raises(ValueError, match="n_embd must be divisible by n_head"):
        build_gpt2(ModelConfig(**{**MICRO.to_dict(), "n_head": 5}))
    with pytest.raises(ValueError, match=r"keep_fraction must be a number in \(0, 1\]"):
        EdgePopupGPT2(build_gpt2(MICRO), keep_fraction=0.0)
