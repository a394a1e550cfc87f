"""Theorem 11 in float64 torch, differentiable, for the worst-case search's gradients.

Written from the paper's equations (Section 3.3's block, Theorem 9's Eqs. 14-17 inside
Theorem 11's Eqs. 18, 19 and final display, Theorem 10 in its deterministic Pensia form),
sharing no code with the numpy/mpmath path (:mod:`sltcheck.statements.theorem11`), so the
tests compare two independent computations:

    Blk(x_i)  = F(Attn(x_i)^T + x_i) + Attn(x_i)^T + x_i,
    measured  = max_i ||Blk_S(x_i) - Blk_T(x_i)||,
    A         = sum_j [sqrt(d1) a expm1(2 a^2 d1 e_QK^(j)) + d1 sqrt(d2) a e_VO^(j)]   (Eqs. 14-17),
    r         = max(3 a H sqrt(d1), A + a (H sqrt(d1) + 1))                             (Eq. 19),
    FC        = r (prod_l (1 + delta_l) - 1),  delta_l = sqrt(d_l d_{l+1}) e_l          (Theorem 10),
    bound     = FC + A + Lip(F_T) A                                                     (final display),

with the readings and variants of the statement's docstring (``theorem10-literal``,
``theorem10-scaled``, ``as-stated``'s eps*, ``tight``/``sharp`` with spectral norms by u^T W v),
and the edge mutant ``supremum-0.97``: 0.97 U_11, U_11 = r' (prod (1 + delta_l) - 1) + 2 U_9,
r' = a (H + 1) + U_9, U_9 = sum_j a (2 tanh(a^2 ||dW_QK^(j)||_F / 2) + ||dW_VO^(j)||_F).
``project`` is :func:`sltcheck.statements.shared.chain_instances.project` on tensors.
The block pieces (``Block``, ``block_chain``, ``block_eps_star``) are reused by Theorem 14's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from sltcheck.harness.boundary import least_alpha
from sltcheck.harness.differentiable import (
    attention_weights,
    feedforward,
    into_unit_ball,
    log_multiplicity,
    shrink_rows,
    spectral_norm,
)
from sltcheck.harness.differentiable import tensor as _tensor
from sltcheck.harness.projection import INSIDE

Fields = dict[str, Any]
TARGET, SOURCE = ("W_Q", "W_K", "W_V", "W_O"), ("S_Q", "S_K", "S_V", "S_O")
EDGE = 0.97  # the edge mutant's fraction of U_11
# One value-and-gradient (a graph of many small ops, then backward) costs about three numpy
# float64 evaluations of the chain (measured on 2 cores): the search climbs from a third of the starts.
AUTOGRAD_COST = 3


def tensors(fields: Fields) -> Fields:
    """The fields the search holds fixed (numpy values) as constant tensors too."""
    out = dict(fields)
    for name in ("alpha", "X", *TARGET, *SOURCE):
        out[name] = _tensor(out[name])
    out["fc_layers"] = tuple(_tensor(W) for W in out["fc_layers"])
    out["S_fc_layers"] = tuple(_tensor(W) for W in out["S_fc_layers"])
    return out


def project(fields: Fields) -> Fields:
    """alpha >= sqrt(max(d1, d2)), tokens into the alpha-ball, target projections (attention and
    FC) into the spectral unit ball; sources untouched."""
    out = tensors(fields)
    out["alpha"] = torch.clamp(torch.abs(out["alpha"]), min=least_alpha(int(out["d1"]), int(out["d2"])))
    limit = out["alpha"] * INSIDE
    out["X"] = shrink_rows(out["X"], limit)
    for name in TARGET:
        out[name] = into_unit_ball(out[name])
    out["fc_layers"] = tuple(into_unit_ball(W) for W in out["fc_layers"])
    return out


# --- the forward pass (Section 2.2, Section 3.3) -------------------------------------------------


@dataclass
class Block:
    """One block's target and pruned source: attention (H, ., .) stacks and FC layers."""

    target: tuple[torch.Tensor, ...]  # W_Q, W_K, W_V, W_O
    source: tuple[torch.Tensor, ...]  # S_Q, S_K, S_V, S_O
    fc: tuple[torch.Tensor, ...]  # L target layers (d_{l+1}, d_l)
    source_fc: tuple[torch.Tensor, ...]  # 2L pruned source layers

    @property
    def heads(self) -> int:
        return int(self.target[0].shape[0])

    @property
    def width(self) -> int:
        return int(self.target[0].shape[1])


def block_of(fields: Fields) -> Block:
    fields = tensors(fields)
    return Block(tuple(fields[k] for k in TARGET), tuple(fields[k] for k in SOURCE),
                 tuple(fields["fc_layers"]), tuple(fields["S_fc_layers"]))


def attention(X: torch.Tensor, attends: torch.Tensor, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor,
              O: torch.Tensor, log_counts: torch.Tensor | None = None) -> torch.Tensor:
    """Attn(x_i) = sum_j sigma(x_i^T Q^(j) (X K^(j))^T / sqrt(d_K); a_i) X V^(j) O^(j): (T, d2); token k
    counted n_k times (``log_counts`` = log n, or None)."""
    logits = (X @ Q) @ (X @ K).transpose(-1, -2) / math.sqrt(Q.shape[-1])  # (H, T, T)
    p = attention_weights(logits, attends, log_counts)
    return (p @ X @ V @ O).sum(dim=0)


def block(X: torch.Tensor, attends: torch.Tensor, weights: tuple[torch.Tensor, ...],
          layers: tuple[torch.Tensor, ...], log_counts: torch.Tensor | None = None) -> torch.Tensor:
    Q, K, V, O = weights
    z = attention(X, attends, Q, K, V, O, log_counts) + X
    return feedforward(layers, z) + z


def gap(outputs_source: torch.Tensor, outputs_target: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vector_norm(outputs_source - outputs_target, dim=-1).max()


def measured(fields: Fields) -> torch.Tensor:
    """max_i ||Blk_S(x_i) - Blk_T(x_i)||."""
    attends = torch.as_tensor(fields["mask"]).to(torch.bool)
    blk = block_of(fields)
    X, counts = _tensor(fields["X"]), log_multiplicity(fields)
    return gap(block(X, attends, blk.source, blk.source_fc, counts), block(X, attends, blk.target, blk.fc, counts))


# --- Theorem 9's chain, Eqs. 14-17 ---------------------------------------------------------------


def merged_errors(blk: Block) -> tuple[torch.Tensor, torch.Tensor]:
    """dW_QK = W_Q W_K^T / sqrt(d_K) - S_Q S_K^T / sqrt(n_K), dW_VO = W_V W_O - S_V S_O (H, ., .)."""
    (Q, K, V, O), (SQ, SK, SV, SO) = blk.target, blk.source
    qk = Q @ K.transpose(-1, -2) / math.sqrt(Q.shape[-1]) - SQ @ SK.transpose(-1, -2) / math.sqrt(SQ.shape[-1])
    return qk, V @ O - SV @ SO


def _max_abs(stack: torch.Tensor) -> torch.Tensor:
    return torch.abs(stack).flatten(-2).amax(dim=-1)


def attention_chain(blk: Block, a: torch.Tensor, mode: str) -> torch.Tensor:
    """Theorem 9's A at token bound ``a``: as proven (max-norms) or with spectral norms."""
    d1 = blk.width
    dqk, dvo = merged_errors(blk)
    if mode == "as-proven":
        eps = a * a * d1 * _max_abs(dqk)
        soft = math.sqrt(d1) * a * torch.expm1(2 * eps)
        value = d1 * math.sqrt(blk.target[3].shape[-1]) * a * _max_abs(dvo)
    else:
        root = math.sqrt(d1) if mode == "tight" else 1.0
        W_VO = blk.target[2] @ blk.target[3]
        soft = root * a * torch.expm1(2 * a * a * spectral_norm(dqk).flatten()) * spectral_norm(W_VO).flatten()
        value = root * a * spectral_norm(dvo).flatten()
    return (soft + value).sum()



# --- Theorem 10, deterministic form --------------------------------------------------------------


def _single_input(A1: torch.Tensor, A2: torch.Tensor) -> bool:
    """Every hidden unit with an outgoing weight reads at most one input (Pensia's structure)."""
    live = (A2 != 0).any(dim=0)
    return bool(((A1 != 0).sum(dim=1)[live] <= 1).all())


def layer_errors(blk: Block) -> list[dict[str, Any]]:
    """Per target layer: e_l and the relative errors delta_l (as proven, tight first / later)."""
    out = []
    for index, W in enumerate(blk.fc):
        A1, A2 = blk.source_fc[2 * index], blk.source_fc[2 * index + 1]
        if _single_input(A1, A2):
            plus = A2 @ torch.where(A1 > 0, A1, torch.zeros_like(A1)) - W  # P - W
            minus = A2 @ torch.where(A1 < 0, A1, torch.zeros_like(A1)) - W  # N - W
            e_plus, e_minus = torch.abs(plus).max(), torch.abs(minus).max()
            e = torch.maximum(e_plus, e_minus)
            root = math.sqrt(W.shape[0] * W.shape[1])
            out.append({"e": e, "as-proven": root * e,
                        "first": torch.minimum(spectral_norm(torch.cat([plus, minus], dim=1)), root * e),
                        "later": torch.minimum(spectral_norm(plus), root * e_plus)})
        else:
            generic = spectral_norm(A2) * spectral_norm(A1) + spectral_norm(W)
            out.append({"e": generic, "as-proven": generic, "first": generic, "later": generic})
    return out


def fc_term(blk: Block, r: torch.Tensor, mode: str, reading: str) -> torch.Tensor:
    """sup over ||z|| <= r of ||F_S(z) - F_T(z)|| in the given reading of Theorem 10."""
    errors = layer_errors(blk)
    if reading != "pensia":
        L = len(blk.fc)
        eps10 = torch.stack([4 * L * W.shape[0] * W.shape[1] * err["e"]
                             for W, err in zip(blk.fc, errors, strict=True)]).max()
        return torch.expm1(r * eps10 / 2) if reading == "theorem10-literal" else r * torch.expm1(eps10 / 2)
    gap_l, norm = torch.zeros_like(r), r
    for index, (W, err) in enumerate(zip(blk.fc, errors, strict=True)):
        if mode == "as-proven":
            s, delta = torch.ones_like(r), err["as-proven"]
        else:
            s, delta = spectral_norm(W), err["first" if index == 0 else "later"]
        gap_l = s * gap_l + delta * (norm + gap_l)
        norm = s * norm
    return gap_l


def fc_lipschitz(blk: Block, mode: str) -> torch.Tensor:
    if mode == "as-proven":
        return torch.ones((), dtype=torch.float64)
    return torch.stack([spectral_norm(W) for W in blk.fc]).prod()


# --- the chain and the bounds --------------------------------------------------------------------


def block_chain(blk: Block, a: torch.Tensor, mode: str = "as-proven", reading: str = "pensia") -> torch.Tensor:
    """Steps 1-5 of the statement's docstring: FC + A + Lip(F_T) A at token bound ``a``."""
    A = attention_chain(blk, a, mode)
    H, root = blk.heads, math.sqrt(blk.width)
    if mode == "as-proven":
        r = torch.maximum(3 * a * H * root, A + a * (H * root + 1))  # Eq. 19
    else:
        W_VO = blk.target[2] @ blk.target[3]
        r = a + A + (root if mode == "tight" else 1.0) * a * spectral_norm(W_VO).sum()
    return fc_term(blk, r, mode, reading) + A + fc_lipschitz(blk, mode) * A


def block_eps_star(blk: Block, alpha: torch.Tensor) -> torch.Tensor:
    """The smallest eps meeting the proof's premises (Theorem 9 at eps/4, Theorem 10 at
    eps/(6 alpha H sqrt(d1)))."""
    H, d1, L = blk.heads, blk.width, len(blk.fc)
    d2 = blk.target[3].shape[-1]
    dqk, dvo = merged_errors(blk)
    qk = 32 * H * alpha**3 * d1 * math.sqrt(d1) * _max_abs(dqk).max()
    vo = 8 * H * alpha * d1 * math.sqrt(d2) * _max_abs(dvo).max()
    ff = torch.stack([24 * alpha * L * H * math.sqrt(d1) * W.shape[0] * W.shape[1] * err["e"]
                      for W, err in zip(blk.fc, layer_errors(blk), strict=True)]).max()
    return torch.maximum(torch.maximum(qk, vo), ff)


def frobenius(stack: torch.Tensor) -> torch.Tensor:
    """||M||_F of each matrix of the stack, with gradient 0 (not nan) at M = 0."""
    squares = (stack * stack).flatten(-2).sum(dim=-1)
    positive = squares > 0
    return torch.where(positive, torch.sqrt(torch.where(positive, squares, torch.ones_like(squares))), squares)


def max_token_norm(X: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vector_norm(X, dim=1).max()


def bound(fields: Fields, *, variant: str) -> torch.Tensor:
    blk, alpha = block_of(fields), _tensor(fields["alpha"])
    if variant in ("tight", "sharp"):
        return block_chain(blk, max_token_norm(_tensor(fields["X"])), variant)
    if variant.startswith("theorem10-"):
        return block_chain(blk, alpha, "as-proven", variant)
    if variant == "as-stated":
        star = block_eps_star(blk, alpha)
        if bool(star < 1):
            return star
    return block_chain(blk, alpha)


def supremum(fields: Fields, *, fraction: float = 1.0) -> torch.Tensor:
    """fraction x U_11 (``theorem11.worst_case``) at the instance's achieved errors."""
    blk, a = block_of(fields), _tensor(fields["alpha"])
    dqk, dvo = merged_errors(blk)
    u9 = (a * (2 * torch.tanh(a * a * frobenius(dqk) / 2) + frobenius(dvo))).sum()
    r = a * (blk.heads + 1) + u9
    return fraction * (fc_term(blk, r, "as-proven", "pensia") + 2 * u9)


VARIANTS = ("as-proven", "theorem10-literal", "theorem10-scaled", "as-stated", "tight", "sharp")
BOUNDS = {
    **{name: partial(bound, variant=name) for name in VARIANTS},
    "mutant:supremum-0.97": partial(supremum, fraction=EDGE),
    "supremum": supremum,  # the power case's twin (sltcheck.harness.power)
}

__all__ = ["BOUNDS", "Block", "block", "block_chain", "block_eps_star", "measured", "project", "supremum"]
