"""Lemma 5 in float64 torch, differentiable, for the worst-case search's gradients: Lemma 8's
measured side and supremum (:mod:`sltcheck.statements.lemma8.differentiable`, independent of the
numpy path) with Lemma 5's eps_max <= 1/2 and its bounds (Section 3.2):

    as-stated  = 4 sqrt(d1) alpha eps_max,
    via-lemma8 = sqrt(d1) alpha (exp(2 eps_max) - 1)   (the appendix bound it comes from).
"""

from __future__ import annotations

import math
from functools import partial

import torch

from sltcheck.statements.lemma8.differentiable import (
    AUTOGRAD_COST,
    EDGE,
    lemma8_bound,
    measured,
    project_softmax,
    supremum,
)

Fields = dict

project = partial(project_softmax, eps_high=0.5)


def linear_bound(fields: Fields) -> torch.Tensor:
    return 4 * math.sqrt(int(fields["d1"])) * fields["alpha"] * fields["eps_max"]


BOUNDS = {
    "as-stated": linear_bound,
    "via-lemma8": lemma8_bound,
    "supremum": supremum,
    "mutant:supremum-0.97": partial(supremum, fraction=EDGE),
}

__all__ = ["AUTOGRAD_COST", "BOUNDS", "linear_bound", "measured", "project"]
