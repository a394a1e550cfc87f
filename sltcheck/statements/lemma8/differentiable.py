"""Lemma 8 in float64 torch, differentiable, for the worst-case search's gradients.

Written from the paper's statement and proof (appendix A.2) and sigma's definition (Section 2.2),
sharing no code with the numpy path (:mod:`sltcheck.statements.lemma8` and
:mod:`sltcheck.model.reference`'s masked softmax; its deciding rows are recomputed by the
definition in mpmath), so the tests compare two independent computations:

    sigma(l; a)_k  = a_k exp(l_k) / sum_j a_j exp(l_j),
    measured       = max_i || sigma(l_i; a_i) X - sigma(l_i + eps_i; a_i) X ||   (through Eq. 9),
    as-stated      = sqrt(d1) alpha (exp(2 eps_max) - 1),
    supremum       = 2 alpha tanh(eps_max / 2)   (the proved supremum of the left side;
                     ``mutant:supremum-0.97`` is 0.97 times it).

``project`` is :func:`sltcheck.statements.shared.softmax_instances.project_softmax` on tensors
(alpha >= 1e-3, eps_max in [0, eps_high], perturbations clipped to +-eps_max, tokens into the
alpha-ball), with Lemma 8's eps_high; Lemma 5 reuses it with its own (1/2).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch

from sltcheck.harness.differentiable import attention_weights, log_multiplicity, shrink_rows, tensor
from sltcheck.harness.projection import INSIDE
from sltcheck.statements.lemma8.instances import EPS_HIGH

Fields = dict[str, Any]
# One value-and-gradient costs several numpy evaluations (many small torch operations), and half
# the profile's gradient climbs already reach every known supremum at ci: the search climbs half as
# many (sltcheck.harness.search), so autograd is no slower than finite differences were.
AUTOGRAD_COST = 2
EDGE = 0.97  # the edge mutant's fraction of the supremum (the numpy side's lemma8.EDGE)


def project_softmax(fields: Fields, eps_high: float) -> Fields:
    out = dict(fields)
    for name in ("alpha", "eps_max", "X", "logits", "perturbation"):
        out[name] = tensor(out[name])
    out["alpha"] = torch.clamp(torch.abs(out["alpha"]), min=1e-3)
    eps = torch.clamp(torch.abs(out["eps_max"]), max=eps_high)
    out["eps_max"] = eps
    out["perturbation"] = torch.clamp(out["perturbation"], min=-eps, max=eps)
    out["X"] = shrink_rows(out["X"], out["alpha"] * INSIDE)
    return out


project = partial(project_softmax, eps_high=EPS_HIGH)


def sigma(logits: torch.Tensor, attends: torch.Tensor, log_counts: torch.Tensor | None = None) -> torch.Tensor:
    """sigma(l_i; a_i) for every row i: masked entries get probability 0 (token k counted n_k times,
    ``log_counts`` = log n)."""
    return attention_weights(logits, attends, log_counts)


def softmax_shift(fields: Fields) -> torch.Tensor:
    """max_i ||sigma(l_i; a_i) X - sigma(l_i + eps_i; a_i) X||, the difference by the proof's Eq. 9:
    p'_k = p_k e^{eps_k} / Z with Z = sum_j p_j e^{eps_j}, so p'_k - p_k = p_k expm1(eps_k - log Z),
    log Z = log1p(sum_j p_j expm1(eps_j)) (the definition's difference would cancel all its
    digits at tiny eps_max, and the climb would follow the noise)."""
    p = sigma(fields["logits"], torch.as_tensor(fields["mask"]).to(torch.bool), log_multiplicity(fields))
    eps = fields["perturbation"]
    log_z = torch.log1p((p * torch.expm1(eps)).sum(dim=-1, keepdim=True))
    shift = (p * torch.expm1(eps - log_z)) @ fields["X"]
    return torch.linalg.vector_norm(shift, dim=-1).max()


def lemma8_bound(fields: Fields) -> torch.Tensor:
    return math.sqrt(int(fields["d1"])) * fields["alpha"] * torch.expm1(2 * fields["eps_max"])


def supremum(fields: Fields, fraction: float = 1.0) -> torch.Tensor:
    return fraction * 2 * fields["alpha"] * torch.tanh(fields["eps_max"] / 2)


measured = softmax_shift

BOUNDS = {
    "as-stated": lemma8_bound,
    "supremum": supremum,
    "mutant:supremum-0.97": partial(supremum, fraction=EDGE),
}

__all__ = ["AUTOGRAD_COST", "BOUNDS", "EDGE", "lemma8_bound", "measured", "project", "project_softmax", "softmax_shift",
           "supremum"]
