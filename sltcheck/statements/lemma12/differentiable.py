"""Lemma 12 in float64 torch, differentiable, for the worst-case search's gradients.

Written from the paper's equations (Section 2.2, Lemma 12), sharing no code with the numpy
path (:mod:`sltcheck.statements.shared.lipschitz`), so the tests compare two independent
computations:

    Attn_T(x_i; X) = sum_j sigma(x_i^T W_Q^(j) (X W_K^(j))^T / sqrt(d_K); a_i) X W_V^(j) W_O^(j),
    measured       = max_i ||Attn_T(x_i; X) - Attn_T(x'_i; X')||,
    bound          = factor H sqrt(d1) (alpha (exp(4 alpha eps_max [/ sqrt(d_K)]) - 1) + w eps_max).

Lemma 13 adds the block Blk_T(x) = F_T(Attn_T(x) + x) + Attn_T(x) + x (``block=True``).
``project`` is the map of :func:`sltcheck.statements.shared.lipschitz_instances.project_lipschitz`
on tensors (alpha >= sqrt(max(d1, d2)), eps_max in [0, EPS_HIGH], tokens into the alpha-ball,
steps cut to eps_max, weights into the spectral unit ball).
"""

from __future__ import annotations

import math
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
    within,
)
from sltcheck.harness.differentiable import spectral_norm as spectral_norm  # re-exported (it lived here)
from sltcheck.harness.differentiable import tensor as _tensor
from sltcheck.harness.projection import INSIDE
from sltcheck.statements.shared.lipschitz_instances import EPS_HIGH

Fields = dict[str, Any]
WEIGHTS = ("W_Q", "W_K", "W_V", "W_O")


def project(fields: Fields) -> Fields:
    """Fields the search holds fixed arrive as numpy values: tensors too, without gradient."""
    out = dict(fields)
    for name in ("alpha", "eps_max", "X", "X_perturbed", *WEIGHTS):
        out[name] = _tensor(out[name])
    if "fc_layers" in out:
        out["fc_layers"] = tuple(_tensor(W) for W in out["fc_layers"])
    least = least_alpha(int(out["d1"]), int(out.get("d2", out["d1"])))
    out["alpha"] = torch.clamp(torch.abs(out["alpha"]), min=least)
    eps = torch.clamp(torch.abs(out["eps_max"]), max=EPS_HIGH)
    out["eps_max"] = eps
    limit = out["alpha"] * INSIDE
    X = shrink_rows(out["X"], limit)
    step = shrink_rows(out["X_perturbed"] - X, eps * INSIDE)
    out["X"], out["X_perturbed"] = X, within(X, shrink_rows(X + step, limit), eps)
    for name in WEIGHTS:
        out[name] = into_unit_ball(out[name])
    if "fc_layers" in out:
        out["fc_layers"] = tuple(into_unit_ball(W) for W in out["fc_layers"])
    return out


def attention(fields: Fields, X: torch.Tensor) -> torch.Tensor:
    """Attn_T(x_i; X) for every row i: (..., T, d2) for sequences X (..., T, d1), every head at once."""
    attends = torch.as_tensor(fields["mask"]).to(torch.bool)
    W_Q, W_K, W_V, W_O = (fields[k] for k in WEIGHTS)  # (H, d1, d_K), (H, d1, d_K), (H, d1, d_V), (H, d_V, d2)
    X = X.unsqueeze(-3)  # (..., 1, T, d1): one copy per head
    logits = (X @ W_Q) @ (X @ W_K).transpose(-1, -2) / math.sqrt(W_Q.shape[2])
    p = attention_weights(logits, attends, log_multiplicity(fields))  # token k counted n_k times
    return (p @ X @ W_V @ W_O).sum(dim=-3)


def block(fields: Fields, X: torch.Tensor) -> torch.Tensor:
    residual = attention(fields, X) + X
    return feedforward(fields["fc_layers"], residual) + residual


def output_shift(fields: Fields, *, with_block: bool) -> torch.Tensor:
    """max_i ||Attn_T(x_i; X) - Attn_T(x'_i; X')|| (or Blk_T): both sequences in one pass."""
    run = block if with_block else attention
    both = run(fields, torch.stack([fields["X"], fields["X_perturbed"]]))
    return torch.linalg.vector_norm(both[0] - both[1], dim=-1).max()


def lipschitz_bound(fields: Fields, *, factor: float, eps_weight: float, key_scaled: bool = False) -> torch.Tensor:
    H, d_key = fields["W_Q"].shape[0], fields["W_Q"].shape[2]
    alpha, eps = fields["alpha"], fields["eps_max"]
    exponent = 4 * alpha * eps / (math.sqrt(d_key) if key_scaled else 1.0)
    return factor * H * math.sqrt(int(fields["d1"])) * (alpha * torch.expm1(exponent) + eps_weight * eps)


def supremum_bound(fields: Fields, *, fraction: float = 1.0, with_block: bool = False) -> torch.Tensor:
    """fraction x (H eps phi(t), or 2 eps (H phi(t) + 1) for the block), t = alpha^2 / sqrt(d_K),
    phi(t) = max(1 + t, 2 t + 1 / (8 t)): the measured side's supremum at d1 = 1."""
    H, d_key = fields["W_Q"].shape[0], fields["W_Q"].shape[2]
    eps = fields["eps_max"]
    t = fields["alpha"] ** 2 / math.sqrt(d_key)
    phi = torch.maximum(1 + t, 2 * t + 1 / (8 * t))
    return fraction * (2 * eps * (H * phi + 1) if with_block else H * eps * phi)


EDGE = 0.97  # the edge mutant's fraction of the supremum (the numpy side's lemma12.EDGE)

measured = partial(output_shift, with_block=False)

BOUNDS = {
    "as-stated": partial(lipschitz_bound, factor=1.0, eps_weight=1.0),
    "key-scaled": partial(lipschitz_bound, factor=1.0, eps_weight=1.0, key_scaled=True),
    "supremum": supremum_bound,
    "mutant:supremum-0.97": partial(supremum_bound, fraction=EDGE),
}
