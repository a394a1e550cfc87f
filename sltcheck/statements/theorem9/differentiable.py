"""Theorem 9's a-posteriori chain in float64 torch, differentiable, for the worst-case search's
gradients.

Written from the paper's equations (Section 2.2, Eqs. 1-2, and the proof of Theorem 9, Eqs.
13-17), sharing no code with the numpy path (:mod:`sltcheck.statements.theorem9`,
:mod:`sltcheck.model.reference`), so the tests compare two independent computations:

    Attn(x_i) = sum_j sigma(x_i^T W_Q^(j) (X W_K^(j))^T / sqrt(d_K); a_i) X W_V^(j) W_O^(j)  (Eqs. 1, 2;
                the pruned source's key width n_K in place of d_K),
    measured  = max_i ||Attn_S(x_i) - Attn_T(x_i)||,
    dW_QK^(j) = W_Q W_K^T / sqrt(d_K) - S_Q S_K^T / sqrt(n_K),  dW_VO^(j) = W_V W_O - S_V S_O,
    as-proven = sum_j [ sqrt(d1) alpha (exp(2 alpha^2 d1 ||dW_QK^(j)||_max) - 1)
                        + d1 sqrt(d2) alpha ||dW_VO^(j)||_max ]                      (Eqs. 14-17),
    as-stated = eps* = max_j max(8 H alpha^3 d1^{3/2} ||dW_QK^(j)||_max, 2 H alpha d1 sqrt(d2)
                ||dW_VO^(j)||_max) where eps* < 1, else as-proven,
    tight     = sum_j [ sqrt(d1) a (exp(2 a^2 ||dW_QK^(j)||) - 1) ||W_VO^(j)|| + sqrt(d1) a ||dW_VO^(j)|| ],
    sharp     = tight without the two sqrt(d1)        (a = the largest token norm, ||.|| spectral),
    supremum  = sum_j alpha (2 tanh(alpha^2 ||dW_QK^(j)||_F / 2) + ||dW_VO^(j)||_F)  (the proved
                upper bound of :mod:`sltcheck.statements.theorem9.worst_case`;
                ``mutant:supremum-0.97`` is 0.97 times it).

``project`` is :func:`sltcheck.statements.shared.chain_instances.project` on tensors (alpha >=
max(sqrt d1, sqrt d2), tokens into the alpha-ball, target projections into the spectral unit
ball; the source is any source and stays as it is).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch

from sltcheck.harness.boundary import least_alpha
from sltcheck.harness.differentiable import (
    attention_weights,
    into_unit_ball,
    log_multiplicity,
    shrink_rows,
    spectral_norm,
    tensor,
)
from sltcheck.harness.projection import INSIDE

Fields = dict[str, Any]
# One value-and-gradient costs several numpy evaluations (many small torch operations), and half
# the profile's gradient climbs already reach every known supremum at ci: the search climbs half as
# many (sltcheck.harness.search), so autograd is no slower than finite differences were.
AUTOGRAD_COST = 2
TARGET = ("W_Q", "W_K", "W_V", "W_O")
SOURCE = ("S_Q", "S_K", "S_V", "S_O")
EDGE = 0.97  # the edge mutant's fraction of the supremum (the numpy side's theorem9.EDGE)


def project(fields: Fields) -> Fields:
    out = dict(fields)
    for name in ("alpha", "X", *TARGET, *SOURCE):
        out[name] = tensor(out[name])
    out["alpha"] = torch.clamp(torch.abs(out["alpha"]), min=least_alpha(int(out["d1"]), int(out["d2"])))
    out["X"] = shrink_rows(out["X"], out["alpha"] * INSIDE)
    for name in TARGET:
        out[name] = into_unit_ball(out[name])
    return out


def attention(X: torch.Tensor, attends: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor,
              W_V: torch.Tensor, W_O: torch.Tensor, log_counts: torch.Tensor | None = None) -> torch.Tensor:
    """Attn(x_i; X) for every row i, (T, d2): the heads (H, d1, .) summed (Eq. 1's per-head form);
    token k counted n_k times (``log_counts`` = log n, or None)."""
    logits = (X @ W_Q) @ (X @ W_K).transpose(-1, -2) / math.sqrt(W_Q.shape[-1])
    p = attention_weights(logits, attends, log_counts)  # sigma(.; a_i), (H, T, T)
    return (p @ X @ W_V @ W_O).sum(dim=0)


def measured(fields: Fields) -> torch.Tensor:
    attends = torch.as_tensor(fields["mask"]).to(torch.bool)
    counts = log_multiplicity(fields)
    W_Q, W_K, W_V, W_O = (fields[k] for k in TARGET)
    S_Q, S_K, S_V, S_O = (fields[k] for k in SOURCE)
    target = attention(fields["X"], attends, W_Q, W_K, W_V, W_O, counts)
    source = attention(fields["X"], attends, S_Q, S_K, S_V, S_O, counts)
    return torch.linalg.vector_norm(source - target, dim=-1).max()


def deltas(fields: Fields) -> tuple[torch.Tensor, torch.Tensor]:
    """dW_QK (H, d1, d1) and dW_VO (H, d1, d2): target minus pruned source, merged (Eqs. 10, 11)."""
    def qk(Q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
        return Q @ K.transpose(-1, -2) / math.sqrt(Q.shape[-1])

    W_Q, W_K, W_V, W_O = (fields[k] for k in TARGET)
    S_Q, S_K, S_V, S_O = (fields[k] for k in SOURCE)
    return qk(W_Q, W_K) - qk(S_Q, S_K), W_V @ W_O - S_V @ S_O


def _max_norm(M: torch.Tensor) -> torch.Tensor:
    return M.abs().amax(dim=(-2, -1))


def as_proven(fields: Fields) -> torch.Tensor:
    d1, d2, alpha = int(fields["d1"]), int(fields["d2"]), fields["alpha"]
    dqk, dvo = deltas(fields)
    soft = math.sqrt(d1) * alpha * torch.expm1(2 * alpha**2 * d1 * _max_norm(dqk))  # Eq. 14, Lemma 8, Eq. 16
    value = d1 * math.sqrt(d2) * alpha * _max_norm(dvo)  # Eq. 17
    return (soft + value).sum()


def as_stated(fields: Fields) -> torch.Tensor:
    d1, d2, alpha = int(fields["d1"]), int(fields["d2"]), fields["alpha"]
    dqk, dvo = deltas(fields)
    H = dqk.shape[0]
    qk = 8 * H * alpha**3 * d1**1.5 * _max_norm(dqk).max()
    vo = 2 * H * alpha * d1 * math.sqrt(d2) * _max_norm(dvo).max()
    star = torch.maximum(qk, vo)
    return star if bool(star < 1) else as_proven(fields)


def spectral_chain(fields: Fields, root: bool) -> torch.Tensor:
    a = torch.linalg.vector_norm(fields["X"], dim=-1).max()
    dqk, dvo = deltas(fields)
    vo = fields["W_V"] @ fields["W_O"]
    factor = math.sqrt(int(fields["d1"])) if root else 1.0
    norm = lambda M: spectral_norm(M)[..., 0, 0]  # noqa: E731
    soft = factor * a * torch.expm1(2 * a * a * norm(dqk)) * norm(vo)
    return (soft + factor * a * norm(dvo)).sum()


def supremum(fields: Fields, fraction: float = 1.0) -> torch.Tensor:
    alpha = fields["alpha"]
    dqk, dvo = deltas(fields)
    frobenius = lambda M: torch.linalg.matrix_norm(M, ord="fro")  # noqa: E731
    return fraction * (alpha * (2 * torch.tanh(alpha**2 * frobenius(dqk) / 2) + frobenius(dvo))).sum()


BOUNDS = {
    "as-proven": as_proven,
    "as-stated": as_stated,
    "tight": partial(spectral_chain, root=True),
    "sharp": partial(spectral_chain, root=False),
    "supremum": supremum,
    "mutant:supremum-0.97": partial(supremum, fraction=EDGE),
}

__all__ = ["AUTOGRAD_COST", "BOUNDS", "attention", "deltas", "measured", "project"]
