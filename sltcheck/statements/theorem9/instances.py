"""Instances of Theorem 9's a-posteriori chain: a target MHA, a pruned source, tokens, a mask."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary
from sltcheck.statement_types import Instance
from sltcheck.statements.shared.chain_instances import (
    FREE,
    MHA_SHAPES,
    SEQUENCE,
    dims,
    edge_plan,
    edge_sequence,
    fewer_tokens,
    mha_pair,
    mha_start,
    project,
    seeded_sequence,
    sequence,
    sequence_start,
)
from sltcheck.statements.theorem9 import make_instance

__all__ = ["FREE", "SEQUENCE", "instances", "project", "shapes", "simplifications", "start"]

simplifications = fewer_tokens  # for sltcheck.harness.simplify
SEQUENCE = SEQUENCE  # sltcheck.harness.sequence


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    @st.composite
    def draw(draw: st.DrawFn) -> Instance:
        branch = draw(st.integers(0, 3))
        if branch == 0:  # the corner of Eq. 17 (refutes the scaled mutants)
            H = draw(st.integers(1, 2))
            alpha, X, mask = draw(edge_sequence(drop))
            target, source = draw(mha_pair(H, 1, 1, drop, plan=edge_plan()))
            return make_instance(target, source, X, mask, alpha)
        if branch == 1:  # W_QK-only errors over several attended tokens (Eq. 16's term alone)
            H, d1, d2 = draw(st.integers(1, 2)), draw(dims(3)), draw(dims(3))
            alpha, X, mask = draw(seeded_sequence(d1, d2, drop))
            plan = dict(edge_plan(pattern="qk", positive=False), dK=2, dV=2)
            target, source = draw(mha_pair(H, d1, d2, drop, plan=plan))
            return make_instance(target, source, X, mask, alpha)
        H = draw(st.one_of(st.just(1), st.integers(1, 3), st.integers(1, 8)))
        d1, d2 = draw(dims(8)), draw(dims(8))
        alpha, X, mask = draw(sequence(d1, d2, drop))
        target, source = draw(mha_pair(H, d1, d2, drop))
        return make_instance(target, source, X, mask, alpha)

    return draw()


def shapes() -> list[dict[str, int]]:
    return boundary.ordered_shapes(MHA_SHAPES)


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    alpha, X, mask = sequence_start(shape, rng, on_boundary=on_boundary)
    target, source = mha_start(shape, rng, on_boundary=on_boundary)
    return make_instance(target, source, X, mask, alpha)
