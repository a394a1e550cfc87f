"""Instances of Theorem 11's a-posteriori chain: target block, pruned source block, tokens, mask.

Generation draws non-degenerate instances: d1 >= 2, T >= 2 tokens (with one token the softmax
is 1 and W_QK errors cannot show) and perturbed sources whose perturbed projections move by at
least MIN_ERROR (far above the float64 noise floor of the outputs, about 1e-16 relative). There
measured and the ``tight``/``sharp`` bounds, two computations, differ: a tie would mean a
tautology. The degenerate points where the tight chain is attained (d = 1: every norm is an
absolute value; one token; zero or sub-noise errors) are where its worst case may sit, so they
stay reachable: generation draws the d = 1 corner on about one draw in CORNER_ODDS + 1 (ties
there by design), and the worst-case search (``shapes``/``start``) starts from every small
shape, d1 = 1 and T = 1 first, with errors from 0 and 1e-6 up. Nothing is removed from the
admissible set the search covers; only generation's weights move.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary
from sltcheck.model.weights import BlockWeights
from sltcheck.statement_types import Instance
from sltcheck.statements.shared.chain_instances import BLOCK_FREE as FREE
from sltcheck.statements.shared.chain_instances import (
    BLOCK_SHAPES,
    SEQUENCE,
    edge_plan,
    edge_sequence,
    fc_pair,
    fc_start,
    fewer_tokens,
    mha_pair,
    mha_plan,
    mha_start,
    project,
    sequence,
    sequence_start,
)
from sltcheck.statements.theorem11 import make_instance

__all__ = ["FREE", "SEQUENCE", "instances", "project", "shapes", "simplifications", "start"]

simplifications = fewer_tokens  # for sltcheck.harness.simplify
SEQUENCE = SEQUENCE  # sltcheck.harness.sequence

CORNER_ODDS = 9  # generation draws the d = 1 corner on about one draw in CORNER_ODDS + 1
MIN_ERROR = 1e-6  # smallest perturbation of a perturbed projection in generic draws


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    @st.composite
    def draw(draw: st.DrawFn) -> Instance:
        # The d = 1 corner (attention-only or FC-only error); not on 0, which Hypothesis draws first and often.
        if draw(st.integers(0, CORNER_ODDS)) == 1:
            alpha, X, mask = draw(edge_sequence(drop))
            where = draw(st.sampled_from(["attention", "fc"]))
            plan = edge_plan(pattern="vo" if where == "attention" else "-")
            fc_plan = {
                "kind": "structured",
                "n": 1,
                "per": 1,
                "dead": 0,
                "same": True,
                "positive": True,
            }
            target, source = block_pair(
                draw, 1, 1, 1, drop, attention_plan=plan,
                fc_high=0.3 if where == "fc" else 0.0, fc_plan=fc_plan,
            )
            return make_instance(target, source, X, mask, alpha)
        H = draw(st.one_of(st.just(1), st.integers(1, 4)))
        d = draw(st.one_of(st.just(2), st.integers(2, 6)))
        L = draw(st.integers(1, 2))
        alpha, X, mask = draw(sequence(d, d, drop, min_T=2, nonzero=True))
        plan = {**draw(mha_plan()), "min_size": MIN_ERROR, "visible": True}
        target, source = block_pair(draw, H, d, L, drop, attention_plan=plan)
        return make_instance(target, source, X, mask, alpha)

    return draw()


def block_pair(
    draw: st.DrawFn,
    H: int,
    d: int,
    L: int,
    drop: tuple[str, ...],
    *,
    attention_high: float = 0.3,
    attention_plan: dict[str, object] | None = None,
    fc_high: float = 0.3,
    fc_plan: dict[str, object] | None = None,
) -> tuple[BlockWeights, BlockWeights]:
    """A target block and its pruned source, drawn inside the caller's composite strategy: the
    attention pair (``mha_pair``) first, then the FC pair (``fc_pair``); Theorem 14 stacks these."""
    attention, source_attention = draw(mha_pair(H, d, d, drop, high=attention_high, plan=attention_plan))
    fc, source_fc = draw(fc_pair(d, L, drop, high=fc_high, plan=fc_plan))
    return BlockWeights(attention, fc), BlockWeights(source_attention, source_fc)


def shapes() -> list[dict[str, int]]:
    return boundary.ordered_shapes(BLOCK_SHAPES)


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    shape = {**shape, "d2": shape["d1"]}
    alpha, X, mask = sequence_start(shape, rng, on_boundary=on_boundary)
    return make_instance(*block_start(shape, rng, on_boundary=on_boundary), X, mask, alpha)


def block_start(
    shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool
) -> tuple[BlockWeights, BlockWeights]:
    """A target block and its pruned source for a search start (``mha_start``, then ``fc_start``)."""
    attention, source_attention = mha_start(shape, rng, on_boundary=on_boundary)
    fc, source_fc = fc_start(shape["d1"], shape["L"], rng, on_boundary=on_boundary)
    return BlockWeights(attention, fc), BlockWeights(source_attention, source_fc)
