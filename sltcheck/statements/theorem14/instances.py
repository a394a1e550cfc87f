"""Instances of Theorem 14's a-posteriori chain: B >= 2 target and pruned source blocks."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary
from sltcheck.model.weights import BlockWeights, TransformerWeights
from sltcheck.statements import Instance
from sltcheck.statements.theorem9.chain_instances import BLOCK_FREE as FREE
from sltcheck.statements.theorem9.chain_instances import (
    TRANSFORMER_SHAPES,
    dims,
    edge_plan,
    edge_sequence,
    fc_pair,
    fc_plan,
    fc_start,
    mha_pair,
    mha_plan,
    mha_start,
    project,
    sequence,
    sequence_start,
)
from sltcheck.statements.theorem14 import make_instance

__all__ = ["FREE", "instances", "project", "shapes", "start"]


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    @st.composite
    def draw(draw: st.DrawFn) -> Instance:
        if draw(st.integers(0, 2)) == 0:  # d = 1, H = 1 corner: W_VO errors and growth
            alpha, X, mask = draw(edge_sequence(drop))
            fc_edge = {"kind": "structured", "n": 1, "per": 1, "dead": 0, "positive": True}
            targets, sources = [], []
            first = draw(st.sampled_from(["-", "vo"]))  # block 1 exact or not
            for pattern in (first, "vo"):
                plan = edge_plan(pattern=pattern)
                attention, source_attention = draw(mha_pair(1, 1, 1, drop, plan=plan))
                fc, source_fc = draw(fc_pair(1, 1, drop, high=0.0, plan=fc_edge))
                targets.append(BlockWeights(attention, fc))
                sources.append(BlockWeights(source_attention, source_fc))
            return make_instance(
                TransformerWeights(tuple(targets)),
                TransformerWeights(tuple(sources)),
                X,
                mask,
                alpha,
            )
        B = draw(st.integers(1, 3) if "blocks-two" in drop else st.integers(2, 3))
        H = draw(st.one_of(st.just(1), st.integers(1, 2)))
        d = draw(dims(3))
        L = draw(st.integers(1, 2))
        alpha, X, mask = draw(sequence(d, d, drop, max_T=3))
        targets, sources = [], []
        attention_plan, fc_plan_ = draw(mha_plan()), draw(fc_plan())
        for _ in range(B):
            attention, source_attention = draw(
                mha_pair(H, d, d, drop, high=0.05, plan=attention_plan)
            )
            fc, source_fc = draw(fc_pair(d, L, drop, high=0.05, plan=fc_plan_))
            targets.append(BlockWeights(attention, fc))
            sources.append(BlockWeights(source_attention, source_fc))
        return make_instance(
            TransformerWeights(tuple(targets)), TransformerWeights(tuple(sources)), X, mask, alpha
        )

    return draw()


def shapes() -> list[dict[str, int]]:
    return boundary.ordered_shapes(TRANSFORMER_SHAPES)


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    shape = {**shape, "d2": shape["d1"]}
    alpha, X, mask = sequence_start(shape, rng, on_boundary=on_boundary)
    targets, sources = [], []
    for _ in range(shape["B"]):
        attention, source_attention = mha_start(shape, rng, on_boundary=on_boundary)
        fc, source_fc = fc_start(shape["d1"], shape["L"], rng, on_boundary=on_boundary)
        targets.append(BlockWeights(attention, fc))
        sources.append(BlockWeights(source_attention, source_fc))
    return make_instance(TransformerWeights(tuple(targets)), TransformerWeights(tuple(sources)), X, mask, alpha)
