"""Theorem 14's families for the branch-and-bound (:mod:`sltcheck.certify`): the B-block recursion.

The family ``B2-d1-T2``: B = 2 blocks, d1 = H = n_K = n_V = L = 1, T = 2, full mask, alpha in
[1, ALPHA_HIGH]; block b's target W_QK = a_b, W_VO = b_b, FC weight w_b (all in [-1, 1]) and every
pruned source in Pensia's width-2 form (A_1 = (1, -1)^T, A_2 = (P_b, -N_b)), with errors in both
blocks: theta = (a_1, b_1, P_1, N_1, a_2, b_2, P_2, N_2) of the source is the target's plus rho h,
h in [-1, 1]^8 with max |h_k| = 1, so block b's (e_QK, e_VO, e_FC) = rho (|h_a|, |h_b|,
max(|h_P|, |h_N|)), and rho = 10^r, r in [LOG_RHO_LOW, LOG_RHO_HIGH] (errors up to 0.1, the
reproductions' regime). Removed, no instance lost:

- w_2 = +-1: block 2's row-1 output difference is (1 + w_2)(z' - z) + rho (h_P2 ReLU(z') - h_N2 ReLU(-z'))
  with z, z' its FC inputs (not involving w_2): |affine in w_2|, and the bound does not involve the
  targets;
- rows: swapping the tokens swaps the rows of both blocks, so the measured row is the first;
- x -> -x negates both blocks' outputs and swaps every h_P and h_N, so u_1 >= 0;
- h: no dimension (below).

Measured over rho, by the mean value theorem along the segment from the target to the source, is
|sum_k h_k g_k| with g the gradient of row 1's output in theta somewhere on the segment; every point
of every segment lies in the box theta + [-rho, rho]^8, where one pass of forward derivatives in all
eight directions (:mod:`sltcheck.numerics.dual` on vectors; at ReLU's kink the slope is the hull of
its two sides, Lipschitz along the segment) encloses each g_k: G_k >= |g_k| there. The as-proven
bound over rho (``theorem14.chain``, H = d1 = 1) is

    U_2 + 2 (beta_2 (exp(4 beta_2 Delta_2) - 1) + 2 Delta_2) / rho,   Delta_2 = rho U_1,

with beta_2 = 4 alpha, U_1 Theorem 11's bound over rho at alpha and block 1's errors, U_2 the same at
alpha_2 = max(2 beta_2, beta_2 + Delta_2) and block 2's errors. Over rho up to 0.1 its exponential
spans e^180: a ball around it over a box contains 0 and proves nothing. The family replaces it by
the monotonicity of exp: exp(x) - 1 >= x, exprel >= 1, r >= 3 alpha_b and alpha_2 >= 8 alpha give a
bound linear in the error sizes,

    bound / rho >= sum_g s_g beta_g,   s = (|h_a1|, |h_b1|, m_1, |h_a2|, |h_b2|, m_2),  m_b = max(|h_Pb|, |h_Nb|),

beta = ((128 alpha^2 + 4) (4 alpha^3, 2 alpha, 3 alpha), 4 (8 alpha)^3, 16 alpha, 24 alpha), increasing in
alpha (taken at the box's low end); and measured / rho <= sum_g s_g G_g (an FC pair's
|h_P g_P + h_N g_N| <= m (G_P + G_N)). As max_g s_g = 1, the ratio is at most max_g G_g / beta_g
on the whole box, whatever h: h needs no dimension. The lower ends come from the instances with one
error, h = e_k (the family's candidates (k, w_2)): min |g_k| over the same box of segments over their
bound at the point by the chain itself, enclosed at the box's two corners
(:func:`sltcheck.certify.arguments.increasing_range`: increasing in alpha, rho and every error size).
The supremum is well below 1 (block 2's own value error reaches about 1/2), so no box needs an
argument past this enclosure.

The enclosure has no branch on an enclosure's ends (``Backend.where`` at ReLU's kink, numpy's maximum
elsewhere), so the family is ``vectorised``: certified on the ``arrays`` backend, thousands of boxes at
once (its duals' eight directions one (8, N) interval array: ``Backend.unit_vector``).

Variants: ``as-proven`` (Lemma 13 with the proof's factor 2: expected held), ``lemma13-as-stated`` (the
chain the paper's proof writes, with Lemma 13 as printed, factor 1, false by up to 25/24 on its own: its
block-1 slopes are halved, beta_g = (64 alpha^2 + 2) (4 alpha^3, 2 alpha, 3 alpha); the answer is not
known) and the mutant ``lipschitz-one`` (no Lemma 13 amplification: a known counterexample).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from sltcheck.certify import Dimension, Family, Ratio
from sltcheck.certify.arguments import increasing_range, ratio_enclosure
from sltcheck.numerics.balls import Backend
from sltcheck.numerics.dual import Dual
from sltcheck.statements.theorem9.family import (
    ALPHA_HIGH,
    LOG_RHO_HIGH,
    LOG_RHO_LOW,
    errors_in_range,
    two_token_tensors,
)
from sltcheck.statements.theorem11.family import bound_at as block_bound_at
from sltcheck.statements.theorem11.family import relu

PARAMETERS = ("a1", "b1", "w1", "w1", "a2", "b2")  # the targets of theta's first six coordinates
# the error groups: (the coordinates of h, the size of the group: max |h_k| over them)
GROUPS: tuple[tuple[int, ...], ...] = ((0,), (1,), (2, 3), (4,), (5,), (6, 7))


def candidates() -> list[tuple[int, float]]:
    """(the coordinate of h at 1, the others 0; w_2)."""
    return [(k, w2) for k in range(8) for w2 in (1.0, -1.0)]


def _pn(arith: Backend, z: Dual, P: Dual, N: Dual) -> Dual:
    """P ReLU(z) - N ReLU(-z) on duals (the slope in z: P, N or their hull at the kink)."""
    positive, negative = relu(arith, z.v), relu(arith, -z.v)
    lo, hi = arith.lower(z.v), arith.upper(z.v)
    slope = arith.where(lo > 0, P.v, arith.where(hi < 0, N.v, arith.hull([P.v, N.v])))
    return Dual(P.v * positive - N.v * negative, P.d * positive - N.d * negative + slope * z.d)


def _logistic(arith: Backend, y: Dual) -> Dual:
    """s(y) and s'(y) y' with their exact ranges over y's value (s increasing, s' even, decreasing in |y|)."""
    return Dual(arith.logistic(y.v), arith.logistic_slope(y.v) * y.d)


def _attention_row(arith: Backend, xk: Any, x1: Any, x2: Any, a: Any, b: Any) -> Any:
    """Row k of b p X for two tokens (the logits a x_k x_j differ by a x_k (x_1 - x_2))."""
    gap = x1 - x2
    return b * (x2 + _logistic(arith, a * xk * gap) * gap)


def _block(arith: Backend, rows: tuple[Dual, Dual], a: Dual, b: Dual, P: Dual, N: Dual) -> tuple[Dual, Dual]:
    """Both output rows of a block (one head, one Pensia FC layer) on dual inputs."""
    out = []
    for xk in rows:
        z = _attention_row(arith, xk, rows[0], rows[1], a, b) + xk
        out.append(z + _pn(arith, z, P, N))
    return out[0], out[1]


def block_two_input(arith: Backend, values: dict[str, Any], theta: list[Dual]) -> Dual:
    """Row 1 of block 2's attention plus its residual (its FC layer's input; w_2 plays no part yet)."""
    tokens = (Dual(values["alpha"] * values["u1"], 0), Dual(values["alpha"] * values["u2"], 0))
    y = _block(arith, tokens, *theta[:4])
    return _attention_row(arith, y[0], y[0], y[1], theta[4], theta[5]) + y[0]


def output_row(arith: Backend, values: dict[str, Any], theta: list[Dual], w2: float, z: Dual | None = None) -> Dual:
    """Row 1 of the transformer's output at the source weights ``theta`` (duals), block 2's FC weight w_2;
    ``z``: :func:`block_two_input` where already computed (it is the same for both w_2)."""
    z = block_two_input(arith, values, theta) if z is None else z
    return z + _pn(arith, z, w2 + theta[6], w2 + theta[7])


def _theta(values: dict[str, Any], moves: list[Any], derivatives: list[Any]) -> list[Dual]:
    """theta on the segment: the targets (block 2's FC weight w_2 added by ``output_row``) plus ``moves``."""
    bases = [values[name] for name in PARAMETERS] + [0.0, 0.0]
    return [Dual(base + move, d) for base, move, d in zip(bases, moves, derivatives, strict=True)]


def _alpha_2(arith: Backend, beta: Any, delta: Any) -> Any:
    """max(2 beta_2, beta_2 + Delta_2), the token bound of block 2's Theorem 11 term."""
    return arith.interval(np.maximum(arith.lower(2 * beta), arith.lower(beta + delta)),
                          np.maximum(arith.upper(2 * beta), arith.upper(beta + delta)))


def chain_over_rho(arith: Backend, alpha: Any, log10_rho: Any, *sizes: Any, lemma13_factor: int = 2) -> Any:
    """The as-proven bound over rho at the error sizes (|h_a1|, |h_b1|, m_1, |h_a2|, |h_b2|, m_2);
    ``lemma13_factor`` 1: the chain with Lemma 13 as printed (the proof's own chain, variant
    ``lemma13-as-stated``)."""
    rho = arith.power_of_ten(log10_rho)
    first = block_bound_at(arith, alpha, log10_rho, *sizes[:3])  # U_1 = Delta_2 / rho
    beta = 4 * alpha
    second = block_bound_at(arith, _alpha_2(arith, beta, rho * first), log10_rho, *sizes[3:])
    return second + lemma13_factor * (beta * 4 * beta * first * arith.exprel(4 * beta * rho * first) + 2 * first)


def chain_slopes(arith: Backend, alpha: Any, lemma13_factor: int = 2) -> list[Any]:
    """beta_g: bound / rho >= sum_g s_g beta_g (exp(x) - 1 >= x, exprel >= 1, r >= 3 alpha_b, alpha_2 >= 8 alpha)."""
    block = [4 * alpha * alpha * alpha, 2 * alpha, 3 * alpha]  # U >= 4 alpha^3 s_a + 2 alpha s_b + 3 alpha m
    lemma13 = lemma13_factor * (64 * alpha * alpha + 2)  # factor (beta_2 4 beta_2 U_1 + 2 U_1) / U_1, beta_2 = 4 alpha
    second = 8 * alpha
    return [lemma13 * c for c in block] + [4 * second * second * second, 2 * second, 3 * second]


def lipschitz_one_over_rho(arith: Backend, alpha: Any, log10_rho: Any, *sizes: Any) -> Any:
    """The mutant ``lipschitz-one`` over rho: the blocks' Theorem 11 terms added, no Lemma 13."""
    rho = arith.power_of_ten(log10_rho)
    first = block_bound_at(arith, alpha, log10_rho, *sizes[:3])
    return first + block_bound_at(arith, _alpha_2(arith, 4 * alpha, rho * first), log10_rho, *sizes[3:])


def lipschitz_one_slopes(arith: Backend, alpha: Any) -> list[Any]:
    """beta_g of the mutant: block 1's terms without Lemma 13's amplification."""
    second = 8 * alpha
    return [4 * alpha * alpha * alpha, 2 * alpha, 3 * alpha, 4 * second * second * second, 2 * second, 3 * second]


def enclosure(bound: Any, slopes: Any) -> Any:
    """The family's candidates (k, w_2): (an enclosure of measured / bound, 1) each, its upper end
    max_g G_g / beta_g over the box (every h), its lower end, where the box is a point, the instance
    h = e_k's: min |g_k| over the segments' box over its bound at the point (else 0)."""

    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        rho = arith.power_of_ten(values["log10_rho"])
        width = arith.interval(-1.0, 1.0) * rho  # t rho h_k, t in [0, 1], h_k in [-1, 1]
        basis = [arith.unit_vector(k, 8) for k in range(8)]
        theta = _theta(values, [width] * 8, basis)
        beta = slopes(arith, arith.point(arith.lower(values["alpha"])))
        point = all(arith.is_point(v) for v in values.values())
        bounds = []
        if point:  # the bound at each group's one-error instance, a point: narrow
            for members in GROUPS:
                sizes = [arith.point(1.0 if g is members else 0.0) for g in GROUPS]
                bounds.append(increasing_range(arith, bound, [values["alpha"], values["log10_rho"], *sizes],
                                               [None] * 8))
        out: dict[tuple[int, float], Ratio] = {}
        z = block_two_input(arith, values, theta)
        for w2 in (1.0, -1.0):
            gradient = output_row(arith, values, theta, w2, z).d
            worst: Any = 0.0
            for members, coefficient in zip(GROUPS, beta, strict=True):
                top = arith.upper(sum((arith.point(arith.magnitude(gradient[k])[1]) for k in members),
                                      arith.point(0.0)))
                worst = np.maximum(worst, arith.upper(arith.point(top) / arith.point(arith.lower(coefficient))))
            for k in range(8):
                low = 0.0
                if point:
                    found = arith.magnitude(gradient[k])[0]
                    which = next(i for i, members in enumerate(GROUPS) if k in members)
                    low = arith.lower(ratio_enclosure(arith, (found, found), bounds[which]))
                out[k, w2] = (arith.interval(np.minimum(low, worst), worst), arith.point(1.0))
        return [out[k, w2] for k, w2 in candidates()]

    return enclose


def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
    k, w2 = candidates()[choice]
    h = [1.0 if i == k else 0.0 for i in range(8)]
    rho = 10.0 ** point["log10_rho"]
    alpha, w1 = point["alpha"], point["w1"]

    def weights(first: float, second: float) -> np.ndarray:
        return np.asarray([[[first]], [[second]]], dtype=np.float64)

    def moved(name: str, k: int) -> float:
        return point[name] + rho * h[k]

    split = np.asarray([[1.0], [-1.0]], dtype=np.float64)
    return {"alpha": alpha, "d1": 1, "d2": 1, "B": 2, "H": 1,
            "X": np.asarray([[alpha * point["u1"]], [alpha * point["u2"]]], dtype=np.float64),
            "mask": np.ones((2, 2), dtype=np.int8),
            "W_Q": weights(point["a1"], point["a2"]), "W_K": weights(1.0, 1.0),
            "W_V": weights(point["b1"], point["b2"]), "W_O": weights(1.0, 1.0),
            "S_Q": weights(moved("a1", 0), moved("a2", 4)), "S_K": weights(1.0, 1.0),
            "S_V": weights(moved("b1", 1), moved("b2", 5)), "S_O": weights(1.0, 1.0),
            "fc_layers": (np.asarray([[w1]], dtype=np.float64), np.asarray([[w2]], dtype=np.float64)),
            "S_fc_layers": (split, np.asarray([[w1 + rho * h[2], -(w1 + rho * h[3])]], dtype=np.float64),
                            split, np.asarray([[w2 + rho * h[6], -(w2 + rho * h[7])]], dtype=np.float64))}


def contains(candidate: dict[str, Any]) -> bool:
    """Whether an instance (a seed) lies in the family: its shape, ranges (both blocks' sources in
    Pensia's width-2 form) and every assumption."""
    if int(candidate.get("B", 0)) != 2 or int(candidate.get("H", 0)) != 1:
        return False
    fc, source_fc = candidate.get("fc_layers"), candidate.get("S_fc_layers")
    if fc is None or source_fc is None or len(fc) != 2 or len(source_fc) != 4:
        return False
    W = [np.asarray(m, dtype=np.float64) for m in fc]
    A = [np.asarray(m, dtype=np.float64) for m in source_fc]
    if any(m.shape != (1, 1) for m in W) or any(m.shape != (1, 2) for m in (A[1], A[3])):
        return False
    if any(m.shape != (2, 1) or m.ravel().tolist() != [1.0, -1.0] for m in (A[0], A[2])):
        return False
    tensors = two_token_tensors(candidate, (2, 1, 1))
    if tensors is None:
        return False
    merged = [m[:, 0, 0] * n[:, 0, 0] for m, n in zip(tensors[0::2], tensors[1::2], strict=True)]
    errors = [abs(float(merged[2][b] - merged[0][b])) for b in (0, 1)]
    errors += [abs(float(merged[3][b] - merged[1][b])) for b in (0, 1)]
    for w, pair in zip(W, (A[1], A[3]), strict=True):
        errors += [abs(float(pair[0, 0]) - float(w[0, 0])), abs(-float(pair[0, 1]) - float(w[0, 0]))]
    return errors_in_range(max(errors), LOG_RHO_HIGH, "theorem14", candidate)


DIMENSIONS = (Dimension("alpha", 1.0, ALPHA_HIGH), Dimension("log10_rho", LOG_RHO_LOW, LOG_RHO_HIGH),
              *(Dimension(name, -1.0, 1.0) for name in ("a1", "b1", "w1", "a2", "b2")),
              Dimension("u1", 0.0, 1.0), Dimension("u2", -1.0, 1.0))

FAMILIES = [Family(
    statement="theorem14", name="B2-d1-T2", variant="as-proven", dimensions=DIMENSIONS,
    enclose=enclosure(chain_over_rho, chain_slopes), instance=instance, contains=contains,
    description=f"B = 2, d = H = n_K = n_V = L = 1, T = 2, full mask, alpha in [1, {ALPHA_HIGH}], every target "
                "and every pruned source (Pensia's width-2 FC) of both blocks within max(e_QK, e_VO, e_FC) in "
                f"[1e{LOG_RHO_LOW:+.0f}, 1e{LOG_RHO_HIGH:+.0f}]",
    expected="held", split="best", vectorised=True)]
# Theorem 14 as the paper proves it: the chain with Lemma 13 as printed (factor 1, which is false by up to
# 25/24 on its own); whether the theorem's chain still holds is the question this family decides on its box
FAMILIES.append(replace(FAMILIES[0], variant="lemma13-as-stated", expected=None,
                        enclose=enclosure(partial(chain_over_rho, lemma13_factor=1),
                                          partial(chain_slopes, lemma13_factor=1))))
# the known-false mutant (ratio up to 4: equal tokens at alpha, b_2 = w_2 = 1, only W_VO of block 1 perturbed)
MUTANT_FAMILIES = [replace(FAMILIES[0], variant="lipschitz-one",
                           enclose=enclosure(lipschitz_one_over_rho, lipschitz_one_slopes), expected="counterexample")]
FAMILIES += MUTANT_FAMILIES
