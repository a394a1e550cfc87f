"""Theorem 11's families for the branch-and-bound (:mod:`sltcheck.certify`): the a-posteriori chain.

The family ``d1-T2-L1``: Theorem 9's family ``d1-T2`` (d1 = H = n_K = n_V = 1, T = 2, full mask,
alpha in [1, ALPHA_HIGH], tokens x_k = alpha u_k with u_1 >= 0, measured row 1; see
:mod:`sltcheck.statements.theorem9.family` for why nothing is lost) followed by an FC of L = 1 layer,
the target weight w in [-1, 1], and its pruned two-layer source of hidden width 2 in Pensia's form,
A_1 = (1, -1)^T, A_2 = (P, -N), computing P ReLU(z) - N ReLU(-z) (every single-input source pair
of width d1 = 1 computes such a function). Every target and every pruned source whose errors
e_QK = rho |t_a|, e_VO = rho |t_b|, e_FC = max(|P - w|, |N - w|) = rho m have max(e_QK, e_VO, e_FC) =
rho = 10^r, r in [LOG_RHO_LOW, LOG_RHO_HIGH], so rho divides out of both sides. Removed, no
instance lost:

- P - w = rho sigma_1 m, N - w = rho sigma_2 m with signs sigma in {+-1}: for a fixed e_FC the
  measured side is |affine in (P, N)| (convex), its max over the square at a vertex, and the bound
  depends on e_FC only (four sign candidates);
- (t_a, t_b, m) on the faces of [-1, 1]^2 x [0, 1] where one of them is at its largest
  (t_a = +-1, t_b = +-1 or m = 1: five faces, the other two free: s_1, s_2 in [-1, 1], m = |s_2|);
- w = +-1: with P - w and N - w fixed, the measured side is |affine in w| (below) and the bound
  does not involve w (two candidates);
- x -> -x negates z and swaps P and N (both sign orders are candidates), so u_1 >= 0.

Both sides over rho (a rewriting, not the statement's code path): with z = b q + x_1 and
z' = b' q' + x_1 the FC inputs (q, q' row 1 of the attention's weighted tokens), Blk_T = (1 + w) z
and Blk_S = z' + P ReLU(z') - N ReLU(-z'), so

    measured / rho = | (1 + w) (z' - z) / rho + m (sigma_1 ReLU(z') - sigma_2 ReLU(-z')) |,

(z' - z) / rho is Theorem 9's family's measured side (before its absolute value), and the
as-proven bound over rho is r m + 2 A / rho with A Theorem 9's chain and
r = max(3 alpha, A + 2 alpha) (Eq. 19 at H = d1 = 1).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from sltcheck.certify import Dimension, Family, Ratio
from sltcheck.numerics.balls import Backend
from sltcheck.statements.theorem9.family import (
    ALPHA_HIGH,
    LOG_RHO_HIGH,
    LOG_RHO_LOW,
    errors_in_range,
    exprel_from_zero,
    logistic,
    logistic_slope,
    one_head_instance,
    rho_of,
    two_token_tensors,
)

FACES = (("a", 1.0), ("a", -1.0), ("b", 1.0), ("b", -1.0), ("fc", 1.0))


def candidates() -> list[tuple[float, str, float, float, float]]:
    """(w, the face, its fixed coordinate's sign, sigma_1, sigma_2)."""
    return [(w, face, sign, s1, s2) for w in (1.0, -1.0) for face, sign in FACES
            for s1 in (1.0, -1.0) for s2 in (1.0, -1.0)]


def _errors(face: str, sign: float, s1: Any, s2: Any, size: Any) -> tuple[Any, Any, Any]:
    """(t_a, t_b, m) on a face; ``size`` is |.| of the caller's arithmetic."""
    if face == "a":
        return sign, s1, size(s2)
    if face == "b":
        return s1, sign, size(s2)
    return s1, s2, 1.0


def relu(arith: Backend, x: Any) -> Any:
    return arith.interval(max(arith.lower(x), 0.0), max(arith.upper(x), 0.0))


def size(arith: Backend, x: Any) -> Any:
    return arith.point(abs(x)) if isinstance(x, float) else arith.interval(*arith.magnitude(x))


def bound_at(arith: Backend, alpha: Any, log10_rho: Any, size_a: Any, size_b: Any, m: Any) -> Any:
    """The as-proven bound over rho: r m + 2 A / rho."""
    rho, square = rho_of(arith, log10_rho), 2 * alpha * alpha
    A_over = alpha * square * size_a * exprel_from_zero(arith, square * rho * size_a) + alpha * size_b
    loose = rho * A_over + 2 * alpha
    r = arith.interval(max(arith.lower(3 * alpha), arith.lower(loose)), max(arith.upper(3 * alpha), arith.upper(loose)))
    return r * m + 2 * A_over


def _bound_over_rho(arith: Backend, inputs: list[Any]) -> Any:
    """Increasing in every input (alpha, log10 rho, |t_a|, |t_b|, m, all >= 0 but log10 rho): its
    values at the box's two corners bound it (tight in midpoint-radius balls too, where products of
    intervals straddling their ends would dip below 0)."""
    low = bound_at(arith, *(arith.point(arith.lower(x) if i == 1 else max(arith.lower(x), 0.0))
                             for i, x in enumerate(inputs)))
    high = bound_at(arith, *(arith.point(arith.upper(x)) for x in inputs))
    return arith.interval(arith.lower(low), arith.upper(high))


def enclose(arith: Backend, values: dict[str, Any], bound_scale: float = 1.0) -> list[Ratio]:
    alpha, a, b = values["alpha"], values["a"], values["b"]
    rho = rho_of(arith, values["log10_rho"])
    x1, x2 = alpha * values["u1"], alpha * values["u2"]
    gap = alpha * (values["u1"] - values["u2"])
    c = x1 * gap
    magnitude = arith.interval(*arith.magnitude(gap))
    gap_c = x1 * (magnitude * magnitude)  # gap * c without the dependency
    between = arith.hull([x1, x2])  # q' is a convex combination of the tokens
    shared: dict[tuple[str, float], tuple[Any, ...]] = {}
    out = []
    for w, face, sign, sigma1, sigma2 in candidates():
        if (face, sign) not in shared:  # what does not depend on w and the sigmas
            t_a, t_b, m = _errors(face, sign, values["s1"], values["s2"], lambda s: size(arith, s))
            shifted = a + rho * t_a
            slope = logistic_slope(arith, arith.hull([a * c, shifted * c]))
            # q', row 1 of the source's p' X
            weighted = arith.intersect(x2 + logistic(arith, shifted * c) * gap, between)
            attention = b * gap_c * t_a * slope + t_b * weighted  # (Attn_S - Attn_T) / rho
            sizes = [size(arith, t) for t in (t_a, t_b)] + [m if not isinstance(m, float) else arith.point(m)]
            bound = bound_scale * _bound_over_rho(arith, [alpha, values["log10_rho"], *sizes])
            shared[face, sign] = (t_b, m, weighted, attention, bound)
        t_b, m, weighted, attention, bound = shared[face, sign]
        fc_input = (b + rho * t_b) * weighted + x1  # z'
        if sigma1 == sigma2:
            kink = sigma1 * fc_input
        else:  # ReLU(z') + ReLU(-z') = |z'|
            kink = sigma1 * size(arith, fc_input)
        top = (1 + w) * attention + m * kink
        out.append((top, bound))
    return out


def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
    w, face, sign, sigma1, sigma2 = candidates()[choice]
    t_a, t_b, m = _errors(face, sign, point["s1"], point["s2"], abs)
    rho = 10.0 ** point["log10_rho"]
    return {**one_head_instance(point, point["b"], t_a, t_b, rho),
            "fc_layers": (np.asarray([[w]], dtype=np.float64),),
            "S_fc_layers": (np.asarray([[1.0], [-1.0]], dtype=np.float64),
                            np.asarray([[w + rho * sigma1 * m, -(w + rho * sigma2 * m)]], dtype=np.float64))}


def contains(candidate: dict[str, Any]) -> bool:
    """Whether an instance (a seed) lies in the family: its shape, ranges and every assumption."""
    fc, source_fc = candidate.get("fc_layers"), candidate.get("S_fc_layers")
    if fc is None or source_fc is None or len(fc) != 1 or len(source_fc) != 2:
        return False
    W, A1, A2 = (np.asarray(m, dtype=np.float64) for m in (fc[0], *source_fc))
    if W.shape != (1, 1) or A1.shape != (2, 1) or A2.shape != (1, 2) or A1.ravel().tolist() != [1.0, -1.0]:
        return False
    weights = two_token_tensors(candidate, (1, 1, 1))
    if weights is None:
        return False
    merged = [float(weights[i][0, 0, 0] * weights[i + 1][0, 0, 0]) for i in (0, 2, 4, 6)]
    w, P, N = float(W[0, 0]), float(A2[0, 0]), float(-A2[0, 1])
    rho = max(abs(merged[2] - merged[0]), abs(merged[3] - merged[1]), abs(P - w), abs(N - w))
    return errors_in_range(rho, LOG_RHO_HIGH, "theorem11", candidate)


def halved(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
    """The mutant ``half``: the as-proven bound halved (known false)."""
    return enclose(arith, values, bound_scale=0.5)


DIMENSIONS = (Dimension("alpha", 1.0, ALPHA_HIGH), Dimension("log10_rho", LOG_RHO_LOW, LOG_RHO_HIGH),
              Dimension("a", -1.0, 1.0), Dimension("b", -1.0, 1.0),
              Dimension("u1", 0.0, 1.0), Dimension("u2", -1.0, 1.0),
              Dimension("s1", -1.0, 1.0), Dimension("s2", -1.0, 1.0))

FAMILIES = [Family(
    statement="theorem11", name="d1-T2-L1", variant="as-proven", dimensions=DIMENSIONS, enclose=enclose,
    instance=instance, contains=contains,
    description=f"d = H = n_K = n_V = L = 1, T = 2, full mask, alpha in [1, {ALPHA_HIGH}], FC weight in [-1, 1] "
                "and its width-2 Pensia source, every target and every pruned source within "
                f"max(e_QK, e_VO, e_FC) in [1e{LOG_RHO_LOW:+.0f}, 1e{LOG_RHO_HIGH:+.0f}]",
    expected="held")]
# the known-false mutant (ratio up to 2 at x_1 = x_2 = alpha, w = 1, only W_VO perturbed)
MUTANT_FAMILIES = [replace(FAMILIES[0], variant="half", enclose=halved, expected="counterexample")]
FAMILIES += MUTANT_FAMILIES
