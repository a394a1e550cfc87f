"""Instances of Theorem 14's a-posteriori chain: B >= 2 target and pruned source blocks.

Generation draws non-degenerate instances, as Theorem 11's (``theorem11.instances``): d1 >= 2,
T >= 2 tokens, not all zero, no target projection of norm below VISIBLE, and perturbed
projections moved by at least MIN_ERROR; there measured and the ``tight``/``sharp`` bounds
differ, so a tie would mean a tautology. The d = 1, H = 1 corner, where the tight chain is
attained (ties by design) and its worst case may sit, stays in generation on about one draw
in CORNER_ODDS + 1, and the worst-case search (``shapes``/``start``) starts from every small
shape, d1 = 1 and T = 1 first, with errors from 0 up: nothing is removed from the admissible
set the search covers, only generation's weights move.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary
from sltcheck.model.weights import TransformerWeights
from sltcheck.statement_types import Instance
from sltcheck.statements.shared.chain_instances import BLOCK_FREE as FREE
from sltcheck.statements.shared.chain_instances import (
    STACKED_SEQUENCE,
    TRANSFORMER_SHAPES,
    edge_plan,
    edge_sequence,
    fc_plan,
    fewer_tokens,
    mha_plan,
    project,
    sequence,
    sequence_start,
)
from sltcheck.statements.theorem11.instances import block_pair, block_start
from sltcheck.statements.theorem14 import make_instance

__all__ = ["FREE", "SEQUENCE", "instances", "project", "shapes", "simplifications", "start"]

simplifications = fewer_tokens  # for sltcheck.harness.simplify
SEQUENCE = STACKED_SEQUENCE  # sltcheck.harness.sequence

# The chain's worst corner (found by the worst-case search, then built in): the last block's
# source far off its target, the earlier blocks' sources off by a few units. The last block's
# error then grows like FAR_ERRORS^2 and swamps Lemma 13's exp(4 beta Delta) term, so Delta (and
# with it ||x'||, which Theorem 11's term at alpha_b = 2 beta_b must cover) can grow like
# log(FAR_ERRORS): measured / bound rises towards 1 as the errors grow (0.99999 at 1e20).
FAR_ERRORS = (1e3, 1e10, 1e20, 1e40)
FAR_SHARE = 0.5  # of the boundary starts
CORNER_ODDS = 2  # generation draws the d = 1 corner on about one draw in CORNER_ODDS + 1 (as before)
MIN_ERROR = 1e-6  # smallest perturbation of a perturbed projection in generic draws


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    @st.composite
    def draw(draw: st.DrawFn) -> Instance:
        # The d = 1, H = 1 corner (W_VO errors and growth) on 0: Hypothesis's first draw, which
        # refutes the mutants that need the growth through blocks at once (lipschitz-one).
        if draw(st.integers(0, CORNER_ODDS)) == 0:
            alpha, X, mask = draw(edge_sequence(drop))
            fc_edge = {"kind": "structured", "n": 1, "per": 1, "dead": 0, "positive": True}
            targets, sources = [], []
            first = draw(st.sampled_from(["-", "vo"]))  # block 1 exact or not
            for pattern in (first, "vo"):
                plan = edge_plan(pattern=pattern)
                target, source = block_pair(draw, 1, 1, 1, drop, attention_plan=plan, fc_high=0.0, fc_plan=fc_edge)
                targets.append(target)
                sources.append(source)
            return make_instance(
                TransformerWeights(tuple(targets)),
                TransformerWeights(tuple(sources)),
                X,
                mask,
                alpha,
            )
        B = draw(st.integers(1, 3) if "blocks-two" in drop else st.integers(2, 3))
        H = draw(st.one_of(st.just(1), st.integers(1, 2)))
        d = draw(st.one_of(st.just(2), st.integers(2, 3)))
        L = draw(st.integers(1, 2))
        alpha, X, mask = draw(sequence(d, d, drop, max_T=3, min_T=2, nonzero=True))
        targets, sources = [], []
        attention_plan = {**draw(mha_plan()), "min_size": MIN_ERROR, "visible": True}
        fc_plan_ = draw(fc_plan())
        for _ in range(B):
            target, source = block_pair(
                draw, H, d, L, drop, attention_high=0.05, attention_plan=attention_plan,
                fc_high=0.05, fc_plan=fc_plan_,
            )
            targets.append(target)
            sources.append(source)
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
        target, source = block_start(shape, rng, on_boundary=on_boundary)
        targets.append(target)
        sources.append(source)
    instance = make_instance(TransformerWeights(tuple(targets)), TransformerWeights(tuple(sources)), X, mask, alpha)
    return far_source(instance, shape, rng) if on_boundary and rng.random() < FAR_SHARE else instance


def far_source(instance: Instance, shape: dict[str, int], rng: np.random.Generator) -> Instance:
    """``instance`` in the chain's worst corner (see FAR_ERRORS): the last block's W_V or W_O
    (or both) and FC layers moved by F with random signs, F from FAR_ERRORS; the earlier
    blocks' W_O scaled by 1 + e, e up to log10(F) / 7 (the best e grows with log F)."""
    out = dict(instance)
    B, H, L = shape["B"], shape["H"], shape["L"]
    far = float(rng.choice(FAR_ERRORS))
    last = slice((B - 1) * H, B * H)
    for key in [("S_V",), ("S_O",), ("S_V", "S_O")][rng.integers(3)]:
        stacked = np.array(out[key], dtype=np.float64)
        stacked[last] += far * rng.choice((-1.0, 1.0), stacked[last].shape)
        out[key] = stacked
    stacked = np.array(out["S_O"], dtype=np.float64)
    stacked[: (B - 1) * H] *= 1.0 + rng.uniform(0.0, np.log10(far) / 7)
    out["S_O"] = stacked
    layers = list(cast(tuple, out["S_fc_layers"]))
    chosen = [j for j in range(L) if rng.random() < 0.7] or [int(rng.integers(L))]
    for j in chosen:  # the source's second layer [P, -N] of the last block's j-th target layer
        k = (B - 1) * 2 * L + 2 * j + 1
        layers[k] = layers[k] + far * rng.choice((-1.0, 1.0), layers[k].shape)
    out["S_fc_layers"] = tuple(layers)
    return out
