"""Instances of Theorem 11's a-posteriori chain: target block, pruned source block, tokens, mask."""

from __future__ import annotations

from hypothesis import strategies as st

from sltcheck.model.weights import BlockWeights
from sltcheck.statements import Instance
from sltcheck.statements.theorem9.chain_instances import (
    FREE,
    dims,
    edge_plan,
    edge_sequence,
    fc_pair,
    mha_pair,
    project,
    sequence,
)
from sltcheck.statements.theorem11 import make_instance

__all__ = ["FREE", "instances", "project"]


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
