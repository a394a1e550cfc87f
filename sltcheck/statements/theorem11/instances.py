"""Instances of Theorem 11's a-posteriori chain: target block, pruned source block, tokens, mask."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary
from sltcheck.model.weights import BlockWeights
from sltcheck.statements import Instance
from sltcheck.statements.theorem9.chain_instances import BLOCK_FREE as FREE
from sltcheck.statements.theorem9.chain_instances import (
    BLOCK_SHAPES,
    dims,
    edge_plan,
    edge_sequence,
    fc_pair,
    fc_start,
    mha_pair,
    mha_start,
    project,
    sequence,
    sequence_start,
)
from sltcheck.statements.theorem11 import make_instance

__all__ = ["FREE", "instances", "project", "shapes", "start"]


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    @st.composite
    def draw(draw: st.DrawFn) -> Instance:
        if draw(st.integers(0, 3)) == 0:  # d = 1 corner: attention-only or FC-only error
            alpha, X, mask = draw(edge_sequence(drop))
            where = draw(st.sampled_from(["attention", "fc"]))
            plan = edge_plan(pattern="vo" if where == "attention" else "-")
            attention, source_attention = draw(mha_pair(1, 1, 1, drop, plan=plan))
            fc_plan = {
                "kind": "structured",
                "n": 1,
                "per": 1,
                "dead": 0,
                "same": True,
                "positive": True,
            }
            fc, source_fc = draw(
                fc_pair(1, 1, drop, high=0.3 if where == "fc" else 0.0, plan=fc_plan)
            )
            target = BlockWeights(attention, fc)
            return make_instance(target, BlockWeights(source_attention, source_fc), X, mask, alpha)
        H = draw(st.one_of(st.just(1), st.integers(1, 4)))
        d = draw(dims(6))
        L = draw(st.integers(1, 2))
        alpha, X, mask = draw(sequence(d, d, drop))
        attention, source_attention = draw(mha_pair(H, d, d, drop))
        fc, source_fc = draw(fc_pair(d, L, drop))
        target = BlockWeights(attention, fc)
        return make_instance(target, BlockWeights(source_attention, source_fc), X, mask, alpha)

    return draw()


def shapes() -> list[dict[str, int]]:
    return boundary.ordered_shapes(BLOCK_SHAPES)


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    shape = {**shape, "d2": shape["d1"]}
    alpha, X, mask = sequence_start(shape, rng, on_boundary=on_boundary)
    attention, source_attention = mha_start(shape, rng, on_boundary=on_boundary)
    fc, source_fc = fc_start(shape["d1"], shape["L"], rng, on_boundary=on_boundary)
    return make_instance(BlockWeights(attention, fc), BlockWeights(source_attention, source_fc), X, mask, alpha)
