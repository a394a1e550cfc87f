"""Theorem 14 in float64 torch, differentiable, for the worst-case search's gradients.

Written from the paper's equations (Section 3.3's Tf = Blk^(B) o ... o Blk^(1), the proof of
Theorem 14, Eqs. 20-28), sharing no code with the numpy/mpmath path
(:mod:`sltcheck.statements.theorem14`), so the tests compare two independent computations. The
per-block Theorem 11 term is :func:`sltcheck.statements.theorem11.differentiable.block_chain`
(torch too). With Delta_1 = 0, beta_1 = alpha:

    measured      = max_i ||Tf_S(x_i) - Tf_T(x_i)||,
    Delta_{b+1}   = Lemma13_b(beta_b, Delta_b) + Theorem11_b(alpha_b),   alpha_1 = alpha,
                    alpha_b = max(2 beta_b, beta_b + Delta_b),  beta_{b+1} = 4 H sqrt(d1) beta_b,
    Lemma13(beta, D) = factor H sqrt(d1) (beta expm1(4 beta D) + 2 D)   (2 as proven, 1 as stated),
    bound         = Delta_{B+1};

``as-stated``: eps* = max_b K_b eps*_11,b(alpha_b) where < 1 (K_b of the proof); ``tight`` and
``sharp``: the corrected Lemma 12 per head, sqrt(d1) (beta expm1(2 ||W_QK|| (2 beta D + D^2)) + D)
||W_VO|| (without sqrt(d1) for sharp), times (1 + Lip F_T), growth (1 + Lip F_T)(1 + sqrt(d1)
sum_j ||W_VO^(j)||), Theorem 11 ``tight``/``sharp`` at beta_b + Delta_b, beta_1 the largest token
norm; the edge mutant ``supremum-0.97``: EDGE x SUPREMUM x the as-proven bound.
``project`` is :func:`sltcheck.statements.shared.chain_instances.project` on tensors (the same
map as Theorem 11's, on the stacked blocks).

Far-off sources (``instances.far_source``, errors up to 1e40) give values up to ~1e121, finite in
float64; where exp overflows the bound is inf, the ratio 0 and its gradient zeroed by the harness.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch

from sltcheck.harness.differentiable import log_multiplicity, spectral_norm
from sltcheck.statements.theorem11.differentiable import (
    SOURCE,
    TARGET,
    Block,
    block,
    block_chain,
    block_eps_star,
    fc_lipschitz,
    gap,
    max_token_norm,
    project,
    tensors,
)
from sltcheck.statements.theorem14 import EDGE, SUPREMUM

Fields = dict[str, Any]
# One value-and-gradient (a graph of many small ops, then backward) costs about three numpy
# float64 evaluations of the chain (measured on 2 cores): the search climbs from a third of the starts.
AUTOGRAD_COST = 3


def blocks_of(fields: Fields) -> list[Block]:
    """The B blocks: attention stacks sliced by H along the head axis, L (2L) FC layers each."""
    fields = tensors(fields)
    B, H = int(fields["B"]), int(fields["H"])
    per, source_per = len(fields["fc_layers"]) // B, len(fields["S_fc_layers"]) // B
    return [Block(tuple(fields[k][b * H:(b + 1) * H] for k in TARGET),
                  tuple(fields[k][b * H:(b + 1) * H] for k in SOURCE),
                  tuple(fields["fc_layers"][b * per:(b + 1) * per]),
                  tuple(fields["S_fc_layers"][b * source_per:(b + 1) * source_per])) for b in range(B)]


def measured(fields: Fields) -> torch.Tensor:
    """max_i ||Tf_S(x_i) - Tf_T(x_i)||."""
    attends = torch.as_tensor(fields["mask"]).to(torch.bool)
    X = torch.as_tensor(fields["X"], dtype=torch.float64)
    target, source, counts = X, X, log_multiplicity(fields)  # with a full mask copies stay copies
    for blk in blocks_of(fields):
        target = block(target, attends, blk.target, blk.fc, counts)
        source = block(source, attends, blk.source, blk.source_fc, counts)
    return gap(source, target)


def lemma13(H: int, d1: int, beta: torch.Tensor, delta: torch.Tensor, factor: float) -> torch.Tensor:
    return factor * H * math.sqrt(d1) * (beta * torch.expm1(4 * beta * delta) + 2 * delta)


def _vo_norms(blk: Block) -> torch.Tensor:
    return spectral_norm(blk.target[2] @ blk.target[3]).flatten()


def block_lipschitz(blk: Block, beta: torch.Tensor, delta: torch.Tensor, mode: str) -> torch.Tensor:
    """Corrected Lemmas 12/13 with actual norms, for ||x_k|| <= beta, max_k ||x_k - x'_k|| <= delta."""
    Q, K = blk.target[0], blk.target[1]
    qk = spectral_norm(Q @ K.transpose(-1, -2) / math.sqrt(Q.shape[-1])).flatten()
    root = math.sqrt(blk.width) if mode == "tight" else 1.0
    eps = qk * (2 * beta * delta + delta * delta)
    attention = (root * (beta * torch.expm1(2 * eps) + delta) * _vo_norms(blk)).sum()
    return (1 + fc_lipschitz(blk, mode)) * (attention + delta)


def target_growth(blk: Block, mode: str) -> torch.Tensor:
    root = math.sqrt(blk.width) if mode == "tight" else 1.0
    return (1 + fc_lipschitz(blk, mode)) * (1 + root * _vo_norms(blk).sum())


def chain(fields: Fields, mode: str = "as-proven", factor: float = 2.0) -> torch.Tensor:
    """Delta_{B+1} of the recursion (the module docstring)."""
    blocks = blocks_of(fields)
    alpha = torch.as_tensor(fields["alpha"], dtype=torch.float64)
    beta = alpha if mode == "as-proven" else max_token_norm(torch.as_tensor(fields["X"], dtype=torch.float64))
    delta = torch.zeros((), dtype=torch.float64)
    for b, blk in enumerate(blocks):
        H, d1 = blk.heads, blk.width
        if b == 0:
            alpha_b = beta
        elif mode == "as-proven":
            alpha_b = torch.maximum(2 * beta, beta + delta)
        else:
            alpha_b = beta + delta
        error = block_chain(blk, alpha_b, mode)
        if mode == "as-proven":
            delta = lemma13(H, d1, beta, delta, factor) + error
        else:
            delta = block_lipschitz(blk, beta, delta, mode) + error
        beta = beta * 4 * H * math.sqrt(d1) if mode == "as-proven" else beta * target_growth(blk, mode)
    return delta


def eps_star(fields: Fields) -> torch.Tensor:
    """max_b K_b eps*_11,b(alpha_b), beta_b = alpha (4 H sqrt(d1))^{b-1}, alpha_1 = alpha,
    alpha_b = 2 beta_b, K_b = 2^{B-1 or B-b+1} prod_{j>b} 16 H sqrt(d1) beta_j^2."""
    blocks = blocks_of(fields)
    alpha = torch.as_tensor(fields["alpha"], dtype=torch.float64)
    B, H, d1 = len(blocks), blocks[0].heads, blocks[0].width
    betas = [alpha * (4 * H * math.sqrt(d1)) ** b for b in range(B)]
    stars = []
    for b, blk in enumerate(blocks, start=1):
        K = torch.ones((), dtype=torch.float64) * 2.0 ** (B - 1 if b == 1 else B - b + 1)
        for j in range(b + 1, B + 1):
            K = K * 16 * H * math.sqrt(d1) * betas[j - 1] ** 2
        stars.append(K * block_eps_star(blk, betas[0] if b == 1 else 2 * betas[b - 1]))
    return torch.stack(stars).max()


def bound(fields: Fields, *, variant: str) -> torch.Tensor:
    if variant in ("tight", "sharp"):
        return chain(fields, variant)
    if variant == "lemma13-as-stated":
        return chain(fields, "as-proven", factor=1.0)
    if variant == "as-stated":
        star = eps_star(fields)
        if bool(star < 1):
            return star
    return chain(fields)


VARIANTS = ("as-proven", "lemma13-as-stated", "as-stated", "tight", "sharp")
BOUNDS = {
    **{name: partial(bound, variant=name) for name in VARIANTS},
    "mutant:supremum-0.97": lambda fields: EDGE * SUPREMUM * chain(fields),
}

__all__ = ["BOUNDS", "measured", "project"]
