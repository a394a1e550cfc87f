"""Edge-popup masks: exact kept counts, straight-through gradients, frozen weights."""

from __future__ import annotations

import math

import pytest
import torch

from sltcheck.repro.lm.edgepopup import (
    check_keep_fraction,
    compute_masks,
    init_scores,
    kept_count,
)
from sltcheck.repro.lm.model import EdgePopupGPT2, ModelConfig, build_gpt2, lm_loss

MICRO = ModelConfig(n_layer=2, n_embd=32, n_head=4, block_size=16, vocab_size=64)


def _scores(seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    shapes = {"a": (7, 13), "b": (50,), "c": (3, 4, 5), "d": (1, 1)}
    return {k: torch.randn(s, generator=g) for k, s in shapes.items()}


@pytest.mark.parametrize("keep", [1e-6, 0.05, 0.3, 0.5, 0.999, 1.0])
def test_per_tensor_mask_keeps_exact_count_of_largest(keep: float) -> None:
    scores = _scores()
    masks = compute_masks(scores, keep, "per-tensor")
    for name, s in scores.items():
        m = masks[name]
        assert m.shape == s.shape
        assert set(m.unique().tolist()) <= {0.0, 1.0}
        k = kept_count(s.numel(), keep)
        assert int(m.sum()) == k == max(1, min(s.numel(), math.floor(keep * s.numel() + 0.5)))
        kept, dropped = s.abs()[m.bool()], s.abs()[~m.bool()]
        if dropped.numel():
            assert kept.min() >= dropped.max()


@pytest.mark.parametrize("keep", [0.1, 0.3, 0.77])
def test_global_mask_keeps_exact_total_with_one_threshold(keep: float) -> None:
    scores = _scores(1)
    masks = compute_masks(scores, keep, "global")
    total = sum(s.numel() for s in scores.values())
    assert int(sum(m.sum() for m in masks.values())) == kept_count(total, keep)
    kept = torch.cat([s.abs()[masks[n].bool()] for n, s in scores.items()])
    dropped = torch.cat([s.abs()[~masks[n].bool()] for n, s in scores.items()])
    assert kept.min() >= dropped.max()


def test_ties_still_keep_exact_count() -> None:
    masks = compute_masks({"t": torch.ones(10, 10)}, 0.3)
    assert int(masks["t"].sum()) == 30


def test_model_masks_keep_exact_count_per_tensor_and_globally() -> None:
    for scope in ("per-tensor", "global"):
        model = EdgePopupGPT2(build_gpt2(MICRO, seed=0), 0.3, "all", scope, score_seed=1)
        masks = model.masks()
        sizes = {n: m.numel() for n, m in masks.items()}
        if scope == "per-tensor":
            for name, m in masks.items():
                assert int(m.sum()) == kept_count(sizes[name], 0.3), name
        else:
            assert int(sum(m.sum() for m in masks.values())) == kept_count(
                sum(sizes.values()), 0.3
            )


def test_straight_through_gradient_of_scores() -> None:
    g = torch.Generator().manual_seed(0)
    w = torch.randn(6, 5, generator=g)
    s = torch.randn(6, 5, generator=g).requires_grad_(True)
    x = torch.randn(4, 6, generator=g)
    mask = compute_masks({"w": s}, 0.4)["w"]
    (x @ (w * mask)).sum().backward()
    expected = x.sum(0)[:, None].expand(6, 5) * w * torch.sign(s.detach())
    torch.testing.assert_close(s.grad, expected)


def test_gradients_reach_scores_never_frozen_weights() -> None:
    model = EdgePopupGPT2(build_gpt2(MICRO, seed=0), 0.3, "attention+mlp+embeddings")
    ids = torch.randint(0, MICRO.vocab_size, (3, MICRO.block_size))
    lm_loss(model(ids), ids).backward()
    for p in model.model.parameters():
        assert not p.requires_grad
        assert p.grad is None
    assert [p for p in model.parameters() if p.requires_grad] == model.trainable_parameters()
    for name in model.masked_names:
        grad = model.scores[name.replace(".", "__")].grad
        assert grad is not None, name
        assert torch.count_nonzero(grad) > 0, name


def test_score_init_is_kaiming_uniform() -> None:
    s = init_scores((256, 64), fan_in=256, generator=torch.Generator().manual_seed(0))
    bound = 1 / math.sqrt(256)
    assert s.abs().max() <= bound
    assert s.abs().max() > 0.99 * bound
    ref = torch.empty(256, 64)
    # kaiming_uniform_(a=sqrt(5)) on an (out, in) tensor with in = 256 has the same bound
    torch.nn.init.kaiming_uniform_(ref.T, a=math.sqrt(5))
    assert ref.abs().max() <= bound + 1e-7


@pytest.mark.parametrize("bad", [0, 0.0, -0.1, 1.5, float("nan"), float("inf"), "abc", None, True])
def test_bad_keep_fraction_raises(bad: object) -> None:
    with pytest.raises(ValueError, match=r"keep_fraction.*\(0, 1\].*got"):
        check_keep_fraction(bad)
    with pytest.raises(ValueError, match="keep_fraction"):
        compute_masks({"a": torch.ones(3)}, bad)  # type: ignore[arg-type]


def test_bad_scope_raises() -> None:
    with pytest.raises(ValueError, match="scope must be one of 'per-tensor', 'global', got 'layer'"):
        compute_masks({"a": torch.ones(3)}, 0.5, "layer")
