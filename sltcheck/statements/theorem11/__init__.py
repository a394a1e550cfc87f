"""Theorem 11 (appendix A.4; no counterpart in the workshop version): SLTs in a transformer block.

As the paper states it: "Let Blk_T(x_i) = F_T(Attn_T(x_i)^T + x_i) + Attn_T(x_i)^T + x_i
be a target transformer block of an MHA Attn_T(.) and FC F_T(.) with L layers [all
of width d1]. Let Blk_S(x_i) = F_S(Attn_S(x_i)^T + x_i) + Attn_S(x_i)^T + x_i be a
pruned random source transformer block of a pruned random MHA Attn_S(.) and FC
F_S(.) with 2L layers. [...] Then, with probability at least 1 - eps for 0 < eps < 1,
there exists a choice of binary masks that satisfies

    max_{i in [T]} ||Blk_S(x_i) - Blk_T(x_i)|| <= eps,

if n_MHA >= d1 C log(32 alpha^3 H d1^{3/2} / eps) and
n_FC >= d1 C log(24 alpha L H d1^{5/2} / eps)."

It rests on Theorem 10 (Pensia et al. 2020, Theorem 1), quoted as: for a target
F_T(x) = W_L ReLU(... ReLU(W_1 x)) with ||W_l|| <= 1 and a pruned 2L-layer source,
"||F_S(x_i) - F_T(x_i)|| <= exp(alpha eps / 2) - 1 if n_l >= d_l C log(4 L d_l d_{l+1} / eps)".

A-posteriori chain of the proof (Eqs. 18, 19 and the final display), for any
pruned source block, with A the Theorem 9 chain (``theorem9.chain``) at the block's alpha:

1. Eq. 18: max_i ||Attn_S(x_i) - Attn_T(x_i)|| <= A.
2. Eq. 19: the FC input z'_i = Attn_S(x_i)^T + x_i has
   ||z'_i|| <= A + alpha H sqrt(d1) + alpha  (||Attn_T(x_i)|| <= alpha H sqrt(d1) via
   ||p X|| <= sqrt(d1) ||p X||_inf and ||W_VO|| <= 1), which the proof relaxes to
   3 alpha H sqrt(d1) (needs A <= alpha (2 H sqrt(d1) - 1)). The chain uses
   r = max(3 alpha H sqrt(d1), A + alpha (H sqrt(d1) + 1)), equal to the proof's
   value where its premise holds and valid everywhere.
3. Theorem 10, deterministic form (derived from Pensia et al.'s proof; the same
   decomposition as ``sltcheck.pruning.construction``): a source layer pair (A_1, A_2) whose
   kept hidden units each read at most one input computes
   A_2 ReLU(A_1 x) = P ReLU(x) - N ReLU(-x), with P and N the subset sums over
   the units of positive and negative incoming weight; target W x = W ReLU(x) - W ReLU(-x).
   With e_l = max(||P - W_l||_max, ||N - W_l||_max), for every x
   ||A_2 ReLU(A_1 x) - W_l x||_i <= e_l ||x||_1, so the layer's relative error is
   delta_l = sqrt(d_l d_{l+1}) e_l. Through the ReLUs (1-Lipschitz, ReLU(0) = 0) and
   ||W_l|| <= 1, an input of norm <= r gives::

        ||F_S(z) - F_T(z)|| <= r (prod_l (1 + delta_l) - 1).

   A layer pair that is not of that form gets the generic delta_l = ||A_2|| ||A_1|| + ||W_l||.
4. F_T is 1-Lipschitz (||W_l|| <= 1): ||F_T(z') - F_T(z)|| <= ||z' - z|| <= A.
5. Total: ||Blk_S - Blk_T|| <= FC + A + A (the proof's "exp(eps/4) - 1 + 2 max_i ||...||").

Readings of Theorem 10's "exp(alpha eps/2) - 1". In Pensia et al. the inputs
have ||x|| <= 1 and the error is <= eps (their proof gives (1 + eps/(2L))^L - 1 <=
exp(eps/2) - 1); for ||x|| <= r the error scales linearly, r (exp(eps/2) - 1).
The proof of Theorem 11 uses the literal form with alpha := r = 3 alpha H sqrt(d1)
and eps := eps/(6 alpha H sqrt(d1)) to get exp(eps/4) - 1. Since
exp(r t) - 1 >= r (exp(t) - 1) for r >= 1, the literal form is a weaker (valid)
bound here; below r = 1 it would be wrong. Which eps Theorem 10 holds for
given achieved errors: the width condition buys, through Lueker's subset sum as
in Lemma 7, per-entry precision eps/(4 L d_l d_{l+1}); so eps_10 := max_l 4 L d_l d_{l+1} e_l.

Variants (all valid upper bounds; a violation is a finding):

- ``as-proven`` (default): steps 1-5 with Pensia's deterministic chain.
- ``theorem10-literal``: step 3 replaced by exp(r eps_10 / 2) - 1 (the paper's reading).
- ``theorem10-scaled``: step 3 replaced by r (exp(eps_10 / 2) - 1) (Pensia's scaling).
- ``as-stated``: the theorem's conclusion for the achieved errors, eps* = max(
  32 H alpha^3 d1^{3/2} e_QK, 8 H alpha d1^{3/2} e_VO, 24 alpha L H sqrt(d1) d_l d_{l+1} e_l)
  (the smallest eps meeting the proof's premises: Theorem 9 at eps/4, Theorem 10 at
  eps/(6 alpha H sqrt(d1))); falls back to ``as-proven`` where eps* >= 1.
- ``tight``: the actual token bound a, Theorem 9's ``tight`` A, r = a + A +
  sqrt(d1) a sum_j ||W_VO^(j)||, per-layer spectral errors (the first layer on
  [P - W, N - W], later layers, whose inputs are >= 0, on P - W only), the actual
  ||W_l|| in the recursion, and F_T's Lipschitz constant prod_l ||W_l|| in step 4.
- ``sharp``: ``tight`` with Theorem 9's ``sharp`` A and r = a + A + a sum_j ||W_VO^(j)||.

Instance fields: those of Theorem 9 with d2 = d1, plus fc_layers (L target layers,
(d_{l+1}, d_l)) and S_fc_layers (the 2L PRUNED source layers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, cast

import mpmath
import numpy as np

from sltcheck.model import reference
from sltcheck.model.weights import BlockWeights, FCWeights
from sltcheck.numerics import precision
from sltcheck.numerics.arithmetic import expm1, max_abs, num, rounded, spectral, sqrt, stable, stated_or_proven
from sltcheck.statement_types import Instance, Mutant
from sltcheck.statements import theorem9 as t9
from sltcheck.statements.shared import chains

# Theorem 11 (appendix A.4): Theorem 9's hypotheses, Theorem 10's FC layers of spectral norm <= 1
# (appendix A.4), and d1 = d2 for the block's residual connections (Section 3.3).
ASSUMPTIONS = ("alpha-large", "token-norm", "target-spectral", "fc-spectral", "mask-rows", "square-block",
               "eps-unit")
READINGS = ("pensia", "theorem10-literal", "theorem10-scaled")
VARIANT_NAMES = (
    "as-proven",
    "theorem10-literal",
    "theorem10-scaled",
    "as-stated",
    "tight",
    "sharp",
)


# --- instances -----------------------------------------------------------------------------------


def layers_of(value: object) -> tuple[np.ndarray, ...]:
    """An instance's tuple of FC layer matrices."""
    return tuple(np.asarray(w) for w in cast(Sequence[object], value))


def target_of(instance: Instance) -> BlockWeights:
    return BlockWeights(t9.target_of(instance), FCWeights(layers_of(instance["fc_layers"])))


def source_of(instance: Instance) -> BlockWeights:
    return BlockWeights(t9.source_of(instance), FCWeights(layers_of(instance["S_fc_layers"])))


def make_instance(
    target: BlockWeights, pruned_source: BlockWeights, X: np.ndarray, mask: np.ndarray, alpha: float
) -> Instance:
    out = t9.make_instance(target.attention, pruned_source.attention, X, mask, alpha)
    out["fc_layers"] = tuple(np.asarray(w, dtype=np.float64) for w in target.fc.layers)
    out["S_fc_layers"] = tuple(np.asarray(w, dtype=np.float64) for w in pruned_source.fc.layers)
    return out


def noise_floor(instance: Instance, dps: int | None) -> float:
    return chains.instance_output_floor(reference.block, instance, target_of(instance), dps)


def measured(instance: Instance, dps: int | None) -> Any:
    """max_i ||Blk_S(x_i) - Blk_T(x_i)|| (Section 3.3's block, evaluated by definition)."""
    return chains.instance_output_gap(reference.block, instance, target_of(instance), source_of(instance), dps)


# --- Theorem 10, deterministic form --------------------------------------------------------------


def _check_pair(target: FCWeights, pruned_source: FCWeights) -> None:
    if len(pruned_source.layers) != 2 * len(target.layers):
        raise ValueError(
            f"pruned_source must have 2L = {2 * len(target.layers)} layers, "
            f"got {len(pruned_source.layers)}"
        )
    for index, W in enumerate(target.layers):
        A1, A2 = pruned_source.layers[2 * index], pruned_source.layers[2 * index + 1]
        if A1.shape[1] != W.shape[1] or A2.shape[0] != W.shape[0]:
            raise ValueError(
                f"source layers {2 * index}, {2 * index + 1} must map {W.shape[1]} to "
                f"{W.shape[0]}, "
                f"got {A1.shape} and {A2.shape}"
            )


def single_input(A1: np.ndarray, A2: np.ndarray) -> bool:
    """Every hidden unit with an outgoing weight reads at most one input (Pensia's structure)."""
    live = np.any(np.asarray(A2, dtype=np.float64) != 0, axis=0)
    fan_in = np.count_nonzero(np.asarray(A1, dtype=np.float64), axis=1)
    return bool(np.all(fan_in[live] <= 1))


def _parts(
    W: np.ndarray, A1: np.ndarray, A2: np.ndarray, work: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """E+ = P - W and E- = N - W for a single-input layer pair."""
    with precision.working_precision(work):
        a1, a2 = precision.as_precision(A1, work), precision.as_precision(A2, work)
        zero = precision.as_precision(np.array(0.0), work)
        positive = np.where(np.asarray(A1) > 0, a1, zero)
        negative = np.where(np.asarray(A1) < 0, a1, zero)
        w = precision.as_precision(W, work)
        return a2 @ positive - w, a2 @ negative - w


def fc_layer_errors(
    target: FCWeights, pruned_source: FCWeights, dps: int | None = 50
) -> list[dict[str, Any]]:
    """Per target layer l: whether the source pair is single-input, e_l (max-norm error of
    P and N, or the generic relative error), and the relative errors delta_l of each mode."""
    _check_pair(target, pruned_source)
    out = []
    for index, W in enumerate(target.layers):
        A1, A2 = pruned_source.layers[2 * index], pruned_source.layers[2 * index + 1]
        rows, cols = W.shape
        structured = single_input(A1, A2)
        if structured:
            if dps is None:
                plus, minus = _parts(W, A1, A2, None)
                work: int | None = None
            else:

                def compute(
                    w: int, W=W, A1=A1, A2=A2
                ) -> tuple[list[Any], tuple[np.ndarray, np.ndarray]]:
                    with mpmath.workdps(w):
                        p, m = _parts(W, A1, A2, w)
                        return [max_abs(p, w), max_abs(m, w)], (p, m)

                scale = max(1.0, float(np.abs(W).max()), float(np.abs(A2).max()))
                floor = scale * 10.0 ** -(dps + 5)
                _, (plus, minus), work = stable(compute, dps, floor=floor)
            with precision.working_precision(work):
                e_plus, e_minus = max_abs(plus, work), max_abs(minus, work)
                e = max(e_plus, e_minus)
                root = sqrt(num(rows * cols, work), work)
                both = np.concatenate([plus, minus], axis=1)
                tight_first = min(spectral(both, work), root * e)
                tight_later = min(spectral(plus, work), root * e_plus)
                entry = {
                    "structured": True,
                    "e": e,
                    "delta_as_proven": root * e,
                    "delta_tight_first": tight_first,
                    "delta_tight_later": tight_later,
                }
        else:
            work = None if dps is None else dps + 10
            with precision.working_precision(work):
                generic = spectral(A2, work) * spectral(A1, work) + spectral(W, work)
                entry = {
                    "structured": False,
                    "e": generic,
                    "delta_as_proven": generic,
                    "delta_tight_first": generic,
                    "delta_tight_later": generic,
                }
        out.append({k: (rounded(v, dps) if k != "structured" else v) for k, v in entry.items()})
    return out


def eps_10(target: FCWeights, errors: list[dict[str, Any]], dps: int | None) -> Any:
    """The eps for which Theorem 10's per-entry precision eps/(4 L d_l d_{l+1}) is met."""
    L = len(target.layers)
    with precision.working_precision(dps):
        return max(
            num(4 * L * W.shape[0] * W.shape[1], dps) * err["e"]
            for W, err in zip(target.layers, errors, strict=True)
        )


def fc_bound(
    target: FCWeights,
    pruned_source: FCWeights,
    input_norm: object,
    dps: int | None = 50,
    mode: str = "as-proven",
    reading: str = "pensia",
) -> Any:
    """sup over ||z|| <= input_norm of ||F_S(z) - F_T(z)|| (Theorem 10 in the given reading)."""
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {', '.join(READINGS)}, got {reading!r}")
    errors = fc_layer_errors(target, pruned_source, dps)
    with precision.working_precision(dps):
        r = num(input_norm, dps)
        if reading != "pensia":
            e10 = eps_10(target, errors, dps)
            if reading == "theorem10-literal":
                return expm1(r * e10 / 2, dps)
            return r * expm1(e10 / 2, dps)
        gap, norm = num(0, dps), r
        for index, (W, err) in enumerate(zip(target.layers, errors, strict=True)):
            if mode == "as-proven":
                s, delta = num(1, dps), err["delta_as_proven"]
            else:
                s = spectral(np.asarray(W, dtype=np.float64), dps)
                delta = err["delta_tight_first"] if index == 0 else err["delta_tight_later"]
            gap = s * gap + delta * (norm + gap)
            norm = s * norm
        return gap


def fc_lipschitz(target: FCWeights, dps: int | None, mode: str) -> Any:
    if mode == "as-proven":
        return num(1, dps)
    with precision.working_precision(dps):
        out = num(1, dps)
        for W in target.layers:
            out = out * spectral(np.asarray(W, dtype=np.float64), dps)
        return out


# --- the chain -----------------------------------------------------------------------------------


def chain(
    target: BlockWeights,
    pruned_source: BlockWeights,
    token_bound: object,
    dps: int | None,
    mode: str = "as-proven",
    reading: str = "pensia",
) -> dict[str, Any]:
    """Steps 1-5: the attention term A, the FC input bound r, the FC term and the total."""
    if mode not in t9.MODES:
        raise ValueError(f"mode must be one of {', '.join(t9.MODES)}, got {mode!r}")
    attention = t9.chain(target.attention, pruned_source.attention, token_bound, dps, mode)
    with precision.working_precision(dps):
        A = attention["total"]
        a = num(token_bound, dps)
        H, d1 = target.attention.heads, target.attention.d_in
        root = sqrt(num(d1, dps), dps)
        if mode == "as-proven":
            r = max(3 * a * H * root, A + a * (H * root + 1))  # Eq. 19
        else:
            vo = target.attention.merged(dps).W_VO
            scale = root if mode == "tight" else num(1, dps)
            r = a + A + scale * a * sum((spectral(m, dps) for m in vo), num(0, dps))
    fc = fc_bound(target.fc, pruned_source.fc, r, dps, mode, reading)
    with precision.working_precision(dps):
        lip = fc_lipschitz(target.fc, dps, mode)
        total = fc + A + lip * A
    return {
        "attention": A,
        "fc_input": r,
        "fc": fc,
        "lipschitz": lip,
        "total": rounded(total, dps),
    }


def eps_star(
    target: BlockWeights, pruned_source: BlockWeights, alpha: object, dps: int | None
) -> Any:
    """The smallest eps meeting the proof's premises (Theorem 9 at eps/4, Theorem 10 at
    eps/(6 alpha H sqrt(d1)))."""
    errors = t9.achieved_errors(target.attention, pruned_source.attention, dps)
    fc = fc_layer_errors(target.fc, pruned_source.fc, dps)
    with precision.working_precision(dps):
        a = num(alpha, dps)
        H, d1 = target.attention.heads, target.attention.d_in
        L = len(target.fc.layers)
        root = sqrt(num(d1, dps), dps)
        d2 = target.attention.d_out
        qk = 32 * H * a**3 * d1 * root * num(max(errors["e_QK"]), dps)
        vo = 8 * H * a * d1 * sqrt(num(d2, dps), dps) * num(max(errors["e_VO"]), dps)
        ff = max(
            24 * a * L * H * root * W.shape[0] * W.shape[1] * err["e"]
            for W, err in zip(target.fc.layers, fc, strict=True)
        )
        return rounded(max(qk, vo, ff), dps)


def a_posteriori_bound(
    target: BlockWeights,
    pruned_source: BlockWeights,
    alpha: object,
    dps: int | None = 50,
    variant: str = "as-proven",
) -> Any:
    """The proof's bound on max_i ||Blk_S(x_i) - Blk_T(x_i)|| for inputs with ||x_i|| <= alpha."""
    variant, star = stated_or_proven(
        variant, VARIANT_NAMES, lambda: eps_star(target, pruned_source, alpha, dps)
    )
    if star is not None:
        return star
    if variant.startswith("theorem10-"):
        return chain(target, pruned_source, alpha, dps, "as-proven", variant)["total"]
    return chain(target, pruned_source, alpha, dps, variant)["total"]


def required_widths(
    eps: float, H: int, d1: int, alpha: float, L: int, C: float
) -> dict[str, float]:
    """Theorem 11's widths n_MHA >= d1 C log(32 alpha^3 H d1^{3/2}/eps),
    n_FC >= d1 C log(24 alpha L H d1^{5/2}/eps), and the max-norm precisions they buy."""
    with mpmath.workdps(30):
        e, a = mpmath.mpf(eps), mpmath.mpf(alpha)
        mha = 32 * a**3 * H * mpmath.mpf(d1) ** 1.5 / e
        ff = 24 * a * L * H * mpmath.mpf(d1) ** 2.5 / e
        return {
            "n_MHA": float(d1 * C * mpmath.log(mha)),
            "n_FC": float(d1 * C * mpmath.log(ff)),
            "e_QK": float(1 / mha),
            "e_VO": float(e / 4 / (2 * H * a * d1 * mpmath.sqrt(d1))),
            "e_FC": float(1 / ff),
        }


# --- variants and mutants ------------------------------------------------------------------------


VARIANTS = chains.instance_variants(VARIANT_NAMES, target_of, source_of, chain, a_posteriori_bound)
DEFAULT_VARIANT = "as-proven"


def _mutant(change: str) -> Callable[[Instance, int | None], Any]:
    def bound(instance: Instance, dps: int | None) -> Any:
        target, source = target_of(instance), source_of(instance)
        parts = chain(target, source, instance["alpha"], dps)
        with precision.working_precision(dps):
            if change == "half":
                return parts["total"] / 2
            if change == "single-attention-term":
                return parts["fc"] + parts["attention"]
            if change == "no-fc-term":
                return 2 * parts["attention"]
            # fc-input-alpha: Theorem 10 applied at input norm alpha instead of Eq. 19's bound
            fc = fc_bound(target.fc, source.fc, instance["alpha"], dps)
            return fc + 2 * parts["attention"]

    return bound


# Edge mutants sit this close below a proved supremum (search power, not a sanity check): U_11 =
# r (prod(1 + d1 e_FC,l) - 1) + 2 U_9 of sltcheck.statements.theorem11.worst_case, attained on e_QK = 0.
EDGE = chains.EDGE
supremum_fraction = partial(chains.supremum_fraction, statement="theorem11")


MUTANTS = [
    chains.supremum_edge_mutant("theorem11"),
    Mutant(
        "half",
        "the as-proven bound halved (attained: d = 1, one token, W_VO perturbed, F_T = id)",
        _mutant("half"),
    ),
    Mutant(
        "single-attention-term",
        "drops F_T's Lipschitz term: A instead of 2A in the final display",
        _mutant("single-attention-term"),
    ),
    Mutant("no-fc-term", "drops Theorem 10's FC approximation term", _mutant("no-fc-term")),
    Mutant(
        "fc-input-alpha",
        "Theorem 10 at input norm alpha, ignoring Eq. 19 (the FC input is larger)",
        _mutant("fc-input-alpha"),
    ),
    chains.no_token_norm_mutant(VARIANTS),
]


# Search power (sltcheck.harness.power): measured / the proved upper bound U_11, closed form
# and attained on e_QK = 0 (sltcheck.statements.theorem11.worst_case); its torch twin
# (differentiable.py's "supremum") gives the climbs their gradients.
POWER_CASES = [{"fixed": {"H": 2, "d1": 1, "L": 2}, "supremum": supremum_fraction(1.0), "differentiable": "supremum"}]
