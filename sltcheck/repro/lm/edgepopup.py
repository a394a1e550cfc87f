"""Edge-popup (Ramanujan et al., 2020): searching a strong lottery ticket by
learning a score for every frozen random weight.

This is the search method of the paper's language-modelling experiment
(Section 4.3 and Appendix B.2). Every masked tensor ``W`` gets a score tensor
``S`` of the same shape; the forward pass uses ``W * M`` where ``M`` keeps the
entries with the largest ``|S|``; the backward pass treats ``M`` as the
identity (straight-through estimator), so ``dL/dS = dL/d(W*M) * W`` (times
``sign(S)`` from the ``|.|``, as in the reference implementation). The
weights themselves are never trained (``requires_grad=False``).

Conventions chosen here (the paper does not state them, Appendix B.2):

* ``keep_fraction`` is the fraction of entries **kept** (the paper's k = 30 %
  keeps 30 %). Public edge-popup code calls this number ``k``, ``prune_rate``
  or ``sparsity`` and disagrees on its direction, hence the explicit name.
* A tensor of ``n`` entries keeps ``kept_count(n, f) = clamp(floor(f n + 1/2), 1, n)``
  entries (round half up, at least one). With ``scope="global"`` the same rule
  is applied once to the total number of masked entries and one threshold is
  shared by all tensors.
* Ties in ``|S|`` are broken by ``torch.topk`` so that exactly the requested
  number of entries is kept.
* Scores start Kaiming-uniform, ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, which is
  ``kaiming_uniform_(a=sqrt(5))`` of the original code; see :func:`init_scores`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from sltcheck.numerics.validation import check_choice

SCOPES: tuple[str, ...] = ("per-tensor", "global")


def check_keep_fraction(value: object, name: str = "keep_fraction") -> float:
    """``value`` as a float in (0, 1], else a ValueError naming it."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a number in (0, 1] (fraction of weights kept), got {value!r}"
        ) from None
    if isinstance(value, bool) or not math.isfinite(number) or not 0.0 < number <= 1.0:
        raise ValueError(
            f"{name} must be a number in (0, 1] (fraction of weights kept), got {value!r}"
        )
    return number


def kept_count(numel: int, keep_fraction: float) -> int:
    """Number of entries a tensor of ``numel`` entries keeps: round half up, >= 1."""
    keep_fraction = check_keep_fraction(keep_fraction)
    return max(1, min(numel, math.floor(keep_fraction * numel + 0.5)))


class _TopKMask(torch.autograd.Function):
    """Binary mask of the ``k`` largest entries; straight-through backward."""

    @staticmethod
    def forward(ctx, magnitude: torch.Tensor, k: int) -> torch.Tensor:
        flat = magnitude.reshape(-1)
        mask = torch.zeros_like(flat)
        if k >= flat.numel():
            mask.fill_(1.0)
        else:
            mask.scatter_(0, torch.topk(flat, k, sorted=False).indices, 1.0)
        return mask.view_as(magnitude)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return grad, None


def topk_mask(magnitude: torch.Tensor, k: int) -> torch.Tensor:
    """Mask keeping exactly ``k`` entries of ``magnitude`` (largest first)."""
    return _TopKMask.apply(magnitude, k)


def compute_masks(
    scores: Mapping[str, torch.Tensor], keep_fraction: float, scope: str = "per-tensor"
) -> dict[str, torch.Tensor]:
    """Masks (same shapes as ``scores``) keeping the top ``keep_fraction`` by ``|score|``.

    ``scope="per-tensor"`` keeps ``kept_count(numel, keep_fraction)`` entries in
    every tensor; ``scope="global"`` keeps ``kept_count(total, keep_fraction)``
    entries over all tensors together (one shared threshold), so individual
    tensors may keep more or fewer. Because the score bound is 1/sqrt(fan_in),
    a global threshold initially keeps fewer entries of tensors with a large
    fan-in (e.g. ``mlp.c_proj``, fan-in 4d).
    """
    keep_fraction = check_keep_fraction(keep_fraction)
    check_choice("scope", scope, SCOPES)
    if scope == "per-tensor":
        return {
            name: topk_mask(s.abs(), kept_count(s.numel(), keep_fraction))
            for name, s in scores.items()
        }
    names = list(scores)
    flat = torch.cat([scores[n].abs().reshape(-1) for n in names])
    mask = topk_mask(flat, kept_count(flat.numel(), keep_fraction))
    pieces = torch.split(mask, [scores[n].numel() for n in names])
    return {n: p.view_as(scores[n]) for n, p in zip(names, pieces, strict=True)}


def score_fan_in(shape: torch.Size | tuple[int, ...], *, conv1d: bool = True) -> int:
    """Fan-in used for a score tensor's Kaiming-uniform bound.

    GPT-2's ``Conv1D`` stores weights as (in, out), so the fan-in is ``shape[0]``
    (``conv1d=True``); for ``nn.Linear``/``nn.Embedding`` layouts (out, in) it is
    ``shape[1]``; for 1-D tensors (biases, layer-norm gains) the length.
    """
    if len(shape) == 1:
        return int(shape[0])
    return int(shape[0] if conv1d else shape[1])


def init_scores(
    shape: torch.Size | tuple[int, ...],
    fan_in: int,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Scores ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``.

    This equals ``nn.init.kaiming_uniform_(scores, a=math.sqrt(5))`` (gain
    ``sqrt(2 / (1 + 5)) = sqrt(1/3)``, bound ``gain * sqrt(3 / fan_in)``), the
    score initialisation of Ramanujan et al.'s public code. Only the ranking of
    ``|S|`` matters for the mask, but the bound sets how far one optimiser step
    moves a score relative to the others.
    """
    bound = 1.0 / math.sqrt(fan_in)
    u = torch.rand(tuple(shape), generator=generator, dtype=torch.float32)
    return ((2.0 * u - 1.0) * bound).to(device) if device is not None else (2.0 * u - 1.0) * bound
