"""Generic float64 torch pieces of the statements' ``differentiable.py`` modules (the worst-case
search's autograd gradients, :mod:`sltcheck.harness.gradients`): the projections onto the usual
assumptions (tokens in the alpha-ball, weights in the spectral unit ball) and the spectral norm
with its exact gradient. Imports torch: only the differentiable modules import this module."""

from __future__ import annotations

import math

import torch

from sltcheck.harness.projection import INSIDE


def spectral_norm(W: torch.Tensor) -> torch.Tensor:
    """||W||_2 of each matrix of the stack (..., r, c) as u^T W v with u, v its top singular
    vectors (found without gradient): the same value, and the exact gradient u v^T where the top
    singular value is simple, without differentiating an SVD. Shape (..., 1, 1)."""
    with torch.no_grad():
        U, _, Vh = torch.linalg.svd(W, full_matrices=False)
    u, v = U[..., :, :1], Vh[..., :1, :].transpose(-2, -1)
    return torch.abs(u.transpose(-2, -1) @ W @ v)


def shrink_rows(X: torch.Tensor, limit: torch.Tensor) -> torch.Tensor:
    """Each row of X scaled into the ball of radius ``limit`` (rows inside unchanged)."""
    norms = torch.linalg.vector_norm(X, dim=-1, keepdim=True)
    safe = torch.where(norms > limit, norms, torch.ones_like(norms))
    return torch.where(norms > limit, X * (limit / safe), X)


def within(X: torch.Tensor, Xp: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
    """Steps X' - X a hair beyond ``radius`` shortened as :func:`sltcheck.harness.projection.within`
    does (by 2^-20, up to 8 times, then dropped), so both projections give the same point."""
    for _ in range(8):
        over = torch.linalg.vector_norm(Xp - X, dim=1, keepdim=True) > radius * (1.0 - 2.0**-40)
        if not bool(over.any()):
            return Xp
        Xp = torch.where(over, X + (Xp - X) * (1.0 - 2.0**-20), Xp)
    over = torch.linalg.vector_norm(Xp - X, dim=1, keepdim=True) > radius * (1.0 - 2.0**-40)
    return torch.where(over, X, Xp)


def into_unit_ball(W: torch.Tensor) -> torch.Tensor:
    """Each matrix of the stack W (..., r, c) scaled to spectral norm INSIDE where it is above
    (the numpy projections' ``projection.spectral_unit``)."""
    norms = spectral_norm(W)
    safe = torch.where(norms > INSIDE, norms, torch.ones_like(norms))
    return torch.where(norms > INSIDE, W * (INSIDE / safe), W)


def tensor(value: object) -> torch.Tensor:
    """A field as a float64 tensor (fields the search holds fixed arrive as numpy values)."""
    return torch.as_tensor(value, dtype=torch.float64)




def log_multiplicity(fields: dict[str, object]) -> torch.Tensor | None:
    """log n_k of the tokens' multiplicities where the fields carry them (the search's weighted
    instances, :mod:`sltcheck.harness.sequence`), else None (every token once)."""
    value = fields.get("multiplicity")
    return None if value is None else torch.log(tensor(value))


def attention_weights(
    logits: torch.Tensor, attends: torch.Tensor, log_counts: torch.Tensor | None = None
) -> torch.Tensor:
    """sigma(l_i; a_i) along the last axis, token k counted n_k times (``log_counts`` = log n, or None):
    n_k a_k e^{l_k} / sum_j n_j a_j e^{l_j}."""
    masked = logits.masked_fill(~attends, -math.inf)
    return torch.softmax(masked if log_counts is None else masked + log_counts, dim=-1)


def feedforward(layers: tuple[torch.Tensor, ...], u: torch.Tensor) -> torch.Tensor:
    """F(u) = W_L ReLU(... ReLU(W_1 u)) on row-stored u."""
    for index, W in enumerate(layers):
        u = u @ W.T
        if index < len(layers) - 1:
            u = torch.relu(u)
    return u


__all__ = ["attention_weights", "feedforward", "into_unit_ball", "log_multiplicity", "shrink_rows", "spectral_norm",
           "tensor"]
