"""Lemma 13 in float64 torch, differentiable, for the worst-case search's gradients: the block
Blk_T(x) = F_T(Attn_T(x) + x) + Attn_T(x) + x of :mod:`sltcheck.statements.lemma12.differentiable`
(independent of the numpy path) and the bounds of the two readings."""

from __future__ import annotations

from functools import partial

from sltcheck.statements.lemma12.differentiable import EDGE, lipschitz_bound, output_shift, project, supremum_bound

measured = partial(output_shift, with_block=True)

BOUNDS = {
    "as-proven": partial(lipschitz_bound, factor=2.0, eps_weight=2.0),
    "as-stated": partial(lipschitz_bound, factor=1.0, eps_weight=2.0),
    "supremum": partial(supremum_bound, with_block=True),
    "mutant:supremum-0.97": partial(supremum_bound, fraction=EDGE, with_block=True),
}

__all__ = ["BOUNDS", "measured", "project"]
