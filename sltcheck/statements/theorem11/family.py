"""Theorem 11's families for the branch-and-bound (:mod:`sltcheck.certify`): the a-posteriori chain.

The families ``d1-T2-L1`` (H = 1) and ``d1-T2-H2-L1`` (H = 2): Theorem 9's family with H heads
(d1 = n_K = n_V = 1, T = 2, full mask, alpha in [1, ALPHA_HIGH], tokens x_k = alpha u_k with
u_1 >= 0, measured row 1; see :mod:`sltcheck.statements.theorem9.family` for why nothing is lost)
followed by an FC of L = 1 layer, the target weight w in [-1, 1], and its pruned two-layer source of
hidden width 2 in Pensia's form, A_1 = (1, -1)^T, A_2 = (P, -N), computing P ReLU(z) - N ReLU(-z)
(every single-input source pair of width d1 = 1 computes such a function). Every target and every
pruned source whose errors e_QK^(j) = rho |t_aj|, e_VO^(j) = rho |t_bj|,
e_FC = max(|P - w|, |N - w|) = rho m have max(e_QK, e_VO, e_FC) = rho = 10^r, r in
[LOG_RHO_LOW, LOG_RHO_HIGH], so rho divides out of both sides. Removed, no instance lost:

- P - w = rho sigma_1 m, N - w = rho sigma_2 m with signs sigma in {+-1}: for a fixed e_FC the
  measured side is |affine in (P, N)| (convex), its max over the square at a vertex, and the bound
  depends on e_FC only (four sign candidates);
- (t_a1, t_b1, ..., m) on the faces of [-1, 1]^2H x [0, 1] where one of them is at its largest
  (a t at +-1 or m = 1: 4H + 1 faces, the other 2H free: s_1 ... s_2H in [-1, 1], m = |s_2H| on a
  t-face);
- w = +-1: with P - w and N - w fixed, the measured side is |affine in w| (below) and the bound
  does not involve w (two candidates);
- x -> -x negates z and swaps P and N (both sign orders are candidates), so u_1 >= 0.

Both sides over rho (a rewriting, not the statement's code path): with z = sum_j b_j q_j + x_1 and
z' = sum_j b'_j q'_j + x_1 the FC inputs (q_j, q'_j row 1 of head j's weighted tokens), Blk_T = (1 + w) z
and Blk_S = z' + P ReLU(z') - N ReLU(-z'), so

    measured / rho = | (1 + w) (z' - z) / rho + m (sigma_1 ReLU(z') - sigma_2 ReLU(-z')) |,

(z' - z) / rho is Theorem 9's family's measured side (before its absolute value), and the
as-proven bound over rho is r m + 2 A / rho with A Theorem 9's chain and
r = max(3 alpha H, A + (H + 1) alpha) (Eq. 19 at d1 = 1), increasing in every input (alpha,
log10 rho, the error sizes): enclosed at the box's corners
(:func:`sltcheck.certify.arguments.increasing_range`).

The bound is attained (Theorem 9's tight set with w = 1, e_FC = 0), so the family's argument is
**chain slack** (:func:`sltcheck.certify.arguments.slack_holds`), the proof's chain term by term at
the variant's factor c (1; the mutant ``half``: 1/2), with W = |1 + w| in {0, 2}, Q_j >= |q'_j| / alpha
as in Theorem 9's family and |sigma_1 ReLU(z') - sigma_2 ReLU(-z')| = |z'| <= sum_j (|b_j| + rho |t_bj|)
alpha Q_j + alpha u_1:

    c bound / rho - measured / rho >= m (c r - |z'|) + W (c A / rho - |z' - z| / rho) + (2 - W) c A / rho,

the first bracket through r >= A + (H + 1) alpha: c rho A' + sum_j rho alpha |t_bj| (c - Q_j)
+ sum_j alpha ((c - |b_j|) + |b_j| (1 - Q_j)) + alpha (c - u_1) (A' = A / rho), the second Theorem
9's slack (:meth:`sltcheck.statements.theorem9.family.Head.slack`), each split into products of
factors enclosed separately (distances to the faces c - u_1, c - |u_2|, c - |b_j| exact). Sound for
any c; at c = 1/2 the factors c - |b_j|, c - u_1 are negative on most of the family.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from sltcheck.certify import Dimension, Family, Ratio
from sltcheck.certify.arguments import (
    Argument,
    Factor,
    constant,
    enclosed,
    increasing_range,
    magnitude,
    room,
    slack_holds,
)
from sltcheck.numerics.balls import Backend
from sltcheck.statements.theorem9.family import (
    ALPHA_HIGH,
    LOG_RHO_HIGH,
    LOG_RHO_LOW,
    Head,
    direction,
    errors_in_range,
    exprel_from_zero,
    head_errors,
    head_names,
    heads_instance,
    size,
    two_token_tensors,
)

Candidate = tuple[float, int, float, float, float]  # (w, the face, its sign, sigma_1, sigma_2)


def faces(heads: int) -> list[tuple[int, float]]:
    """(axis, sign): a t of h at +-1 (axis < 2H), or e_FC at its largest (axis 2H)."""
    return [(axis, sign) for axis in range(2 * heads) for sign in (1.0, -1.0)] + [(2 * heads, 1.0)]


def candidates(heads: int = 1) -> list[Candidate]:
    """(w, the face, its fixed coordinate's sign, sigma_1, sigma_2)."""
    return [(w, axis, sign, s1, s2) for w in (1.0, -1.0) for axis, sign in faces(heads)
            for s1 in (1.0, -1.0) for s2 in (1.0, -1.0)]


def value_names(heads: int) -> list[str]:
    return ["b"] if heads == 1 else [f"b{j + 1}" for j in range(heads)]


def free_names(heads: int) -> list[str]:
    return [f"s{k + 1}" for k in range(2 * heads)]


def errors(heads: int, axis: int, sign: Any, free: list[Any], size_of: Any) -> tuple[list[Any], Any]:
    """(the t's of h, m) on a face; ``size_of`` is |.| of the caller's arithmetic."""
    if axis == 2 * heads:
        return free, 1.0
    return direction(axis, sign, free[:-1]), size_of(free[-1])


def relu(arith: Backend, x: Any) -> Any:
    return arith.interval(np.maximum(arith.lower(x), 0.0), np.maximum(arith.upper(x), 0.0))


def bound_at(arith: Backend, alpha: Any, log10_rho: Any, *sizes: Any) -> Any:
    """The as-proven bound over rho, r m + 2 A / rho, at the error sizes (|t_a1|, |t_b1|, ..., m)."""
    rho, square = arith.power_of_ten(log10_rho), 2 * alpha * alpha
    heads = (len(sizes) - 1) // 2
    m = sizes[-1]
    A_over = arith.point(0.0)
    for size_a, size_b in zip(sizes[0:-1:2], sizes[1:-1:2], strict=True):
        A_over = A_over + alpha * square * size_a * exprel_from_zero(arith, square * rho * size_a) + alpha * size_b
    loose = rho * A_over + (heads + 1) * alpha
    r = arith.interval(max(arith.lower(3 * heads * alpha), arith.lower(loose)),
                       max(arith.upper(3 * heads * alpha), arith.upper(loose)))
    return r * m + 2 * A_over


def error_inputs(arith: Backend, values: dict[str, Any], ts: list[Any], m: Any) -> tuple[list[Any], list[Any]]:
    """The bound's inputs (alpha, log10 rho, |t_a1|, |t_b1|, ..., m) and their least values."""
    sizes = [size(arith, t) for t in ts] + [m if not isinstance(m, float) else arith.point(m)]
    return [values["alpha"], values["log10_rho"], *sizes], [None, None] + [0.0] * len(sizes)


def enclosure(heads: int, scale: float = 1.0) -> Any:
    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        alpha = values["alpha"]
        rho = arith.power_of_ten(values["log10_rho"])
        x1 = alpha * values["u1"]
        b = [values[name] for name in value_names(heads)]
        free = [values[name] for name in free_names(heads)]
        shared: dict[tuple[int, float], tuple[Any, ...]] = {}
        out = []
        for w, axis, sign, sigma1, sigma2 in candidates(heads):
            if (axis, sign) not in shared:  # what does not depend on w and the sigmas
                ts, m = errors(heads, axis, sign, free, lambda s: size(arith, s))
                parts = [Head(arith, alpha, rho, values["u1"], values["u2"], values[name], ts[2 * j], ts[2 * j + 1])
                         for j, name in enumerate(head_names(heads))]
                attention = sum((head.attention(bj) for head, bj in zip(parts, b, strict=True)), arith.point(0.0))
                inputs, floors = error_inputs(arith, values, ts, m)
                low, high = increasing_range(arith, bound_at, inputs, floors)
                bound = scale * arith.interval(low, high)
                fc_input = x1 + sum(((bj + rho * head.t_b) * head.weighted for head, bj in zip(parts, b, strict=True)),
                                    arith.point(0.0))  # z'
                shared[axis, sign] = (m, attention, fc_input, bound)
            m, attention, fc_input, bound = shared[axis, sign]
            if sigma1 == sigma2:
                kink = sigma1 * fc_input
            else:  # ReLU(z') + ReLU(-z') = |z'|
                kink = sigma1 * size(arith, fc_input)
            out.append(((1 + w) * attention + m * kink, bound))
        return out

    return enclose


def slack_terms(arith: Backend, values: dict[str, Any], ends: dict[str, tuple[float, float]], heads: int,
                scale: float, axis: int, sign: float, w: float) -> list[list[Factor]]:
    """(c bound - measured) / rho >= the sum of these products, on the face (axis, sign) at w (every
    b in the box, both sigmas)."""
    alpha = values["alpha"]
    rho = arith.power_of_ten(values["log10_rho"])
    u1, u2 = ends["u1"], [abs(v) for v in ends["u2"]]
    near, far = (0.0 if ends["u2"][0] <= 0.0 <= ends["u2"][1] else min(u2)), max(u2)
    a, r, c = enclosed(arith, alpha), enclosed(arith, rho), constant(scale)
    W = constant(abs(1.0 + w))
    ts, m = errors(heads, axis, sign, [values[name] for name in free_names(heads)], lambda s: size(arith, s))
    weight = constant(1.0) if isinstance(m, float) else magnitude(arith, m)
    terms: list[list[Factor]] = [[weight, a, room(scale, *u1)]]  # m (c r - |z'|) ...
    for j, name in enumerate(head_names(heads)):
        head = Head(arith, alpha, rho, values["u1"], values["u2"], values[name], ts[2 * j], ts[2 * j + 1])
        lo_b, hi_b = ends[value_names(heads)[j]]
        size_b = magnitude(arith, values[value_names(heads)[j]])
        b_near = 0.0 if lo_b <= 0.0 <= hi_b else min(abs(lo_b), abs(hi_b))
        t_a, t_b = magnitude(arith, head.t_a), magnitude(arith, head.t_b)
        s, not_s = enclosed(arith, head.s), enclosed(arith, head.not_s)
        chain_a = enclosed(arith, 2 * alpha * alpha * alpha * head.exprel)
        terms += [[weight, c, r, t_a, chain_a],
                  [weight, r, a, t_b, s, room(scale, *u1)], [weight, r, a, t_b, not_s, room(scale, near, far)],
                  [weight, a, room(scale, b_near, max(abs(lo_b), abs(hi_b)))],
                  [weight, a, size_b, s, room(1.0, *u1)], [weight, a, size_b, not_s, room(1.0, near, far)]]
        terms += head.slack(arith, alpha, ends, scale, size_b, W)  # ... + W (c A' - |z' - z| / rho) ...
        rest = constant(2.0 - abs(1.0 + w))
        terms += [[rest, c, t_a, chain_a], [rest, c, a, t_b]]  # ... + (2 - W) c A'
    return terms


def chain_slack(heads: int, scale: float = 1.0) -> Argument:
    """The proof's chain term by term (see the module docstring), for every candidate."""

    def proves(arith: Backend, values: dict[str, Any], ends: dict[str, tuple[float, float]]) -> bool:
        return all(slack_holds(slack_terms(arith, values, ends, heads, scale, axis, sign, w))
                   for axis, sign in faces(heads) for w in (1.0, -1.0))

    return Argument("chain slack", proves)


def instance_maker(heads: int) -> Any:
    def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
        w, axis, sign, sigma1, sigma2 = candidates(heads)[choice]
        ts, m = errors(heads, axis, sign, [point[name] for name in free_names(heads)], abs)
        rho = 10.0 ** point["log10_rho"]
        attention = heads_instance(point["alpha"], point["u1"], point["u2"], [point[n] for n in head_names(heads)],
                                   [point[n] for n in value_names(heads)], ts[0::2], ts[1::2], rho)
        return {**attention, "fc_layers": (np.asarray([[w]], dtype=np.float64),),
                "S_fc_layers": (np.asarray([[1.0], [-1.0]], dtype=np.float64),
                                np.asarray([[w + rho * sigma1 * m, -(w + rho * sigma2 * m)]], dtype=np.float64))}

    return instance


def contains_maker(heads: int) -> Any:
    def contains(candidate: dict[str, Any]) -> bool:
        """Whether an instance (a seed) lies in the family: its shape, ranges and every assumption."""
        fc, source_fc = candidate.get("fc_layers"), candidate.get("S_fc_layers")
        if fc is None or source_fc is None or len(fc) != 1 or len(source_fc) != 2:
            return False
        W, A1, A2 = (np.asarray(m, dtype=np.float64) for m in (fc[0], *source_fc))
        if W.shape != (1, 1) or A1.shape != (2, 1) or A2.shape != (1, 2) or A1.ravel().tolist() != [1.0, -1.0]:
            return False
        tensors = two_token_tensors(candidate, (heads, 1, 1))
        if tensors is None:
            return False
        w, P, N = float(W[0, 0]), float(A2[0, 0]), float(-A2[0, 1])
        rho = max([*head_errors(tensors), abs(P - w), abs(N - w)])
        return errors_in_range(rho, LOG_RHO_HIGH, "theorem11", candidate)

    return contains


def dimensions(heads: int) -> tuple[Dimension, ...]:
    return (Dimension("alpha", 1.0, ALPHA_HIGH), Dimension("log10_rho", LOG_RHO_LOW, LOG_RHO_HIGH),
            *(Dimension(name, -1.0, 1.0) for name in head_names(heads) + value_names(heads)),
            Dimension("u1", 0.0, 1.0), Dimension("u2", -1.0, 1.0),
            *(Dimension(name, -1.0, 1.0) for name in free_names(heads)))


def family(heads: int) -> Family:
    return Family(
        statement="theorem11", name="d1-T2-L1" if heads == 1 else f"d1-T2-H{heads}-L1", variant="as-proven",
        dimensions=dimensions(heads), enclose=enclosure(heads), instance=instance_maker(heads),
        contains=contains_maker(heads), arguments=(chain_slack(heads),),
        description=f"d = n_K = n_V = L = 1, H = {heads}, T = 2, full mask, alpha in [1, {ALPHA_HIGH}], FC weight in "
                    "[-1, 1] and its width-2 Pensia source, every target and every pruned source within "
                    f"max(e_QK, e_VO, e_FC) in [1e{LOG_RHO_LOW:+.0f}, 1e{LOG_RHO_HIGH:+.0f}]",
        expected="held", known_supremum=1.0)  # attained: Theorem 9's tight set, w = 1, e_FC = 0


FAMILIES = [family(1), family(2)]
# the known-false mutant (ratio up to 2 at x_1 = x_2 = alpha, w = 1, only W_VO perturbed), its
# argument at the same factor
MUTANT_FAMILIES = [replace(FAMILIES[0], variant="half", enclose=enclosure(1, 0.5), arguments=(chain_slack(1, 0.5),),
                           expected="counterexample", known_supremum=2.0)]
FAMILIES += MUTANT_FAMILIES
