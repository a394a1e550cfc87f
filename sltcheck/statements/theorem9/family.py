"""Theorem 9's families for the branch-and-bound (:mod:`sltcheck.certify`): the a-posteriori chain.

The family ``d1-T2`` (H = 1) and ``d1-T2-H2`` (H = 2 heads): d1 = d2 = d_K = d_V = 1 and
n_K = n_V = 1 (the pruned source's merged weights are its entries), T = 2 tokens, full mask, alpha
in [1, ALPHA_HIGH] (alpha-large), every target and every pruned source whose merged weights are
within rho = 10^r of the target's, r in [LOG_RHO_LOW, LOG_RHO_HIGH]. The free parameters and what is
removed (no instance is lost):

- head j's target a_j = W_Q W_K in [-1, 1] and b_j = W_V W_O (W_K = W_O = 1): the left side is
  linear in each b_j (below) and the bound does not involve b, so b_j = +-1 (2^H candidates);
- the source a'_j = a_j + rho t_aj, b'_j = b_j + rho t_bj: the chain's e_QK^(j) = rho |t_aj|,
  e_VO^(j) = rho |t_bj|, and with h = (t_a1, t_b1, ..., t_aH, t_bH) on the boundary of [-1, 1]^2H
  (one coordinate at +-1: 4H face candidates; the other 2H - 1 free, named ``t`` for H = 1, else
  ``f1``, ``f2``, ...) every source with max_j max(e_QK^(j), e_VO^(j)) = rho is met once, rho dividing
  out of both sides;
- the row: swapping the tokens swaps the rows, so the measured row is the first;
- tokens x_k = alpha u_k, u_1 >= 0 (x -> -x leaves the logits a x_i x_k unchanged and negates the
  outputs).

Both sides over rho (a rewriting, not the statement's code path): with c = x_1 (x_1 - x_2),
s the logistic function and q'_j = x_2 + s(a'_j c)(x_1 - x_2) (row 1 of head j's source p' X),

    measured / rho = | sum_j  b_j (x_1 - x_2) c t_aj s'(xi_j) + t_bj q'_j |,

xi_j between a_j c and a'_j c (mean value; s' = s (1 - s) is even and decreasing in |xi|: exact
range), and the as-proven bound over rho is sum_j alpha 2 alpha^2 |t_aj| exprel(2 alpha^2 rho |t_aj|)
+ alpha |t_bj|.

The bound is attained (sup 1: u_1 = u_2 = 1, only W_VO perturbed, e_QK = 0), so no quotient closes
a box that touches that set. The family's argument is **chain slack**
(:func:`sltcheck.certify.arguments.slack_holds`), the proof's Step 3 term by term at the variant's
factor c on the bound (1; the mutant ``half``: 1/2): with Q_j = s_j u_1 + (1 - s_j) |u_2| >= |q'_j| / alpha
(q'_j a convex combination of the tokens) and |(x_1 - x_2) c| = alpha^3 u_1 (u_1 - u_2)^2,

    c bound / rho - measured / rho >= sum_j |t_aj| alpha^3 (2 c exprel_j - u_1 (u_1 - u_2)^2 s'(xi_j))
                                      + |t_bj| alpha s_j (c - u_1) + |t_bj| alpha (1 - s_j) (c - |u_2|)

(the triangle inequality over heads and terms, then each term's relaxation kept as a product:
Lemma 8's step, u_1 (u_1 - u_2)^2 s' <= 4 / 4 <= 2 exprel, and the value term's convexity). Every
factor is enclosed separately; (c - u_1), (c - |u_2|) are the box's exact distances to the faces
u = c, |t| is 0 exactly on a box reaching t = 0, so a box touching the attained set is proved. Sound
for any c: at c = 1/2 the factors c - u_1 are negative wherever u_1 > 1/2, where the mutant's
counterexample lies.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from sltcheck.certify import Dimension, Family, Ratio
from sltcheck.certify.arguments import Argument, Factor, constant, enclosed, magnitude, room, slack_holds
from sltcheck.numerics.balls import Backend
from sltcheck.statements.theorem9 import plane_family
from sltcheck.statements.theorem9.plane_family import exprel_from_zero  # (e^x - 1) / x from 0, once

ALPHA_HIGH = 2.0
LOG_RHO_LOW, LOG_RHO_HIGH = -6.0, -1.0

Candidate = tuple[tuple[float, ...], int, float]  # (b_j per head, the axis of h at +-1, its sign)


def candidates(heads: int = 1) -> list[Candidate]:
    """(b per head, the coordinate of h = (t_a1, t_b1, ...) at +-1, its sign)."""
    return [(b, axis, sign) for b in itertools.product((1.0, -1.0), repeat=heads)
            for axis in range(2 * heads) for sign in (1.0, -1.0)]


def head_names(heads: int) -> list[str]:
    """The dimensions of the heads' W_QK: ``a`` for one head, else ``a1``, ``a2``, ..."""
    return ["a"] if heads == 1 else [f"a{j + 1}" for j in range(heads)]


def free_names(count: int) -> list[str]:
    """The free coordinates of the error direction: ``t`` for one, else ``f1``, ``f2``, ..."""
    return ["t"] if count == 1 else [f"f{k + 1}" for k in range(count)]


def direction(axis: int, sign: Any, free: Sequence[Any]) -> list[Any]:
    """The error direction h: ``sign`` at ``axis``, the free coordinates elsewhere, in order."""
    rest = iter(free)
    return [sign if i == axis else next(rest) for i in range(len(free) + 1)]


def size(arith: Backend, x: Any) -> Any:
    """|x| as an enclosure (a float as its exact point)."""
    return arith.point(abs(x)) if isinstance(x, float) else arith.interval(*arith.magnitude(x))


class Head:
    """One head's pieces over a box, all over rho: the target's a, the source's logistic s = s(a' c)
    and 1 - s, the slope s'(xi) over the mean-value segment, exprel of its chain, |t_a| and |t_b|."""

    def __init__(self, arith: Backend, alpha: Any, rho: Any, u1: Any, u2: Any, a: Any, t_a: Any, t_b: Any) -> None:
        x1, x2 = alpha * u1, alpha * u2
        gap = alpha * (u1 - u2)
        c = x1 * gap
        shifted = a + rho * t_a
        self.t_a, self.t_b = t_a, t_b
        self.size_a, self.size_b = size(arith, t_a), size(arith, t_b)
        self.slope = arith.logistic_slope(arith.hull([a * c, shifted * c]))
        self.s, self.not_s = arith.logistic(shifted * c), arith.logistic(-(shifted * c))
        # q' = x_2 + s (x_1 - x_2), a convex combination of the tokens
        self.weighted = arith.intersect(x2 + self.s * gap, arith.hull([x1, x2]))
        # (x_1 - x_2) c = alpha^3 u_1 (u_1 - u_2)^2, without the dependency
        spread = size(arith, u1 - u2)
        self.shape = u1 * (spread * spread)  # u_1 (u_1 - u_2)^2 in [0, 4]
        self.gap_c = alpha * alpha * alpha * self.shape
        square = 2 * alpha * alpha
        self.exprel = exprel_from_zero(arith, square * rho * self.size_a)
        self.chain = alpha * square * self.size_a * self.exprel + alpha * self.size_b  # A_j / rho

    def attention(self, b: Any) -> Any:
        """(Attn_S - Attn_T) / rho of this head at row 1, target W_VO = b."""
        return b * self.gap_c * self.t_a * self.slope + self.t_b * self.weighted

    def slack(self, arith: Backend, alpha: Any, ends: dict[str, tuple[float, float]], scale: float,
              b_size: Factor, weight: Factor) -> list[list[Factor]]:
        """weight (c A_j - |attention_j|) / rho as product terms, |b| <= b_size (the chain's Step 3)."""
        u1, u2 = ends["u1"], ends["u2"]
        far = max(abs(u2[0]), abs(u2[1]))
        near = 0.0 if u2[0] <= 0.0 <= u2[1] else min(abs(u2[0]), abs(u2[1]))
        cube = enclosed(arith, alpha * alpha * alpha)
        lemma8 = enclosed(arith, 2 * scale * self.exprel - arith.point(b_size.high) * self.shape * self.slope)
        a, b = magnitude(arith, self.t_a), magnitude(arith, self.t_b)
        return [[weight, a, cube, lemma8],
                [weight, b, enclosed(arith, alpha), enclosed(arith, self.s), room(scale, *u1)],
                [weight, b, enclosed(arith, alpha), enclosed(arith, self.not_s), room(scale, near, far)]]


def heads_of(arith: Backend, values: dict[str, Any], heads: int, h: Sequence[Any]) -> list[Head]:
    alpha, rho = values["alpha"], arith.power_of_ten(values["log10_rho"])
    return [Head(arith, alpha, rho, values["u1"], values["u2"], values[name], h[2 * j], h[2 * j + 1])
            for j, name in enumerate(head_names(heads))]


def enclosure(heads: int, scale: float = 1.0) -> Callable[[Backend, dict[str, Any]], list[Ratio]]:
    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        free = [values[name] for name in free_names(2 * heads - 1)]
        out = []
        shared: dict[tuple[int, float], list[Head]] = {}
        for b, axis, sign in candidates(heads):
            if (axis, sign) not in shared:
                shared[axis, sign] = heads_of(arith, values, heads, direction(axis, sign, free))
            parts = shared[axis, sign]
            top = sum((head.attention(bj) for head, bj in zip(parts, b, strict=True)), arith.point(0.0))
            bound = scale * sum((head.chain for head in parts), arith.point(0.0))
            out.append((top, bound))
        return out

    return enclose


def slack_terms(arith: Backend, values: dict[str, Any], ends: dict[str, tuple[float, float]], heads: int,
                scale: float, axis: int, sign: float) -> list[list[Factor]]:
    """(c bound - measured) / rho >= the sum of these products, on the face (axis, sign) (every b)."""
    free = [values[name] for name in free_names(2 * heads - 1)]
    return [term for head in heads_of(arith, values, heads, direction(axis, sign, free))
            for term in head.slack(arith, values["alpha"], ends, scale, constant(1.0), constant(1.0))]


def chain_slack(heads: int, scale: float = 1.0) -> Argument:
    """The proof's Step 3 term by term (see the module docstring), for every candidate."""

    def proves(arith: Backend, values: dict[str, Any], ends: dict[str, tuple[float, float]]) -> bool:
        return all(slack_holds(slack_terms(arith, values, ends, heads, scale, axis, sign))
                   for axis, sign in itertools.product(range(2 * heads), (1.0, -1.0)))

    return Argument("chain slack", proves)


def heads_instance(alpha: float, u1: float, u2: float, a: Sequence[float], b: Sequence[float],
                   t_a: Sequence[float], t_b: Sequence[float], rho: float) -> dict[str, Any]:
    """The attention part of an instance: H heads, W_K = W_O = 1, W_Q = a_j, W_V = b_j, the source's
    W_Q and W_V moved by rho t_aj and rho t_bj (shared with Theorem 11's family)."""

    def weight(values: Sequence[float]) -> np.ndarray:
        return np.asarray(values, dtype=np.float64).reshape(-1, 1, 1)

    ones = [1.0] * len(a)
    return {"alpha": alpha, "d1": 1, "d2": 1,
            "X": np.asarray([[alpha * u1], [alpha * u2]], dtype=np.float64),
            "mask": np.ones((2, 2), dtype=np.int8),
            "W_Q": weight(a), "W_K": weight(ones), "W_V": weight(b), "W_O": weight(ones),
            "S_Q": weight([x + rho * t for x, t in zip(a, t_a, strict=True)]), "S_K": weight(ones),
            "S_V": weight([x + rho * t for x, t in zip(b, t_b, strict=True)]), "S_O": weight(ones)}


def instance_maker(heads: int) -> Callable[[dict[str, float], int], dict[str, Any]]:
    def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
        b, axis, sign = candidates(heads)[choice]
        h = direction(axis, sign, [point[name] for name in free_names(2 * heads - 1)])
        return heads_instance(point["alpha"], point["u1"], point["u2"], [point[n] for n in head_names(heads)], b,
                              h[0::2], h[1::2], 10.0 ** point["log10_rho"])

    return instance


def two_token_tensors(candidate: dict[str, Any], shape: tuple[int, ...]) -> list[np.ndarray] | None:
    """The candidate's eight attention tensors (W_Q..W_O, S_Q..S_O) if it has two 1-d tokens, every
    tensor of ``shape``, a full mask and alpha in [1, ALPHA_HIGH]; otherwise None (not in the family)."""
    X = np.asarray(candidate["X"])
    tensors = [np.asarray(candidate[k]) for k in ("W_Q", "W_K", "W_V", "W_O", "S_Q", "S_K", "S_V", "S_O")]
    if X.shape != (2, 1) or any(m.shape != shape for m in tensors):
        return None
    if not bool(np.all(np.asarray(candidate["mask"]) == 1)) or not 1.0 <= float(candidate["alpha"]) <= ALPHA_HIGH:
        return None
    return tensors


def head_errors(tensors: Sequence[np.ndarray]) -> list[float]:
    """Every head's |dW_QK| and |dW_VO| (float64) of two-token tensors of shape (H, 1, 1)."""
    merged = [m[:, 0, 0] * n[:, 0, 0] for m, n in zip(tensors[0::2], tensors[1::2], strict=True)]
    return [float(abs(s - t)) for source, target in ((merged[2], merged[0]), (merged[3], merged[1]))
            for s, t in zip(source, target, strict=True)]


def errors_in_range(rho: float, log_rho_high: float, statement: str, candidate: dict[str, Any]) -> bool:
    """Whether the largest error rho lies in [1e LOG_RHO_LOW, 1e log_rho_high] and the candidate
    meets every assumption of ``statement``."""
    from sltcheck.assumptions import violations

    return (rho > 0 and LOG_RHO_LOW <= math.log10(rho) <= log_rho_high
            and not violations(statement, candidate))


def contains_maker(heads: int) -> Callable[[dict[str, Any]], bool]:
    def contains(candidate: dict[str, Any]) -> bool:
        """Whether an instance (a seed) lies in the family: its shape, ranges and every assumption."""
        tensors = two_token_tensors(candidate, (heads, 1, 1))
        if tensors is None:
            return False
        return errors_in_range(max(head_errors(tensors)), LOG_RHO_HIGH, "theorem9", candidate)

    return contains


def dimensions(heads: int) -> tuple[Dimension, ...]:
    return (Dimension("alpha", 1.0, ALPHA_HIGH), Dimension("log10_rho", LOG_RHO_LOW, LOG_RHO_HIGH),
            *(Dimension(name, -1.0, 1.0) for name in head_names(heads)),
            Dimension("u1", 0.0, 1.0), Dimension("u2", -1.0, 1.0),
            *(Dimension(name, -1.0, 1.0) for name in free_names(2 * heads - 1)))


def family(heads: int) -> Family:
    name = "d1-T2" if heads == 1 else f"d1-T2-H{heads}"
    return Family(
        statement="theorem9", name=name, variant="as-proven", dimensions=dimensions(heads),
        enclose=enclosure(heads), instance=instance_maker(heads), contains=contains_maker(heads),
        arguments=(chain_slack(heads),),
        search_fixed={"d1": 1, "d2": 1, "H": heads, "dK": 1, "dV": 1, "T": 2, "mask": np.ones((2, 2), dtype=np.int8)},
        description=f"d = n_K = n_V = 1, H = {heads}, T = 2, full mask, alpha in [1, {ALPHA_HIGH}], every target "
                    f"and every pruned source within max(e_QK, e_VO) in [1e{LOG_RHO_LOW:+.0f}, 1e{LOG_RHO_HIGH:+.0f}]",
        expected="held", known_supremum=1.0)  # attained: u_1 = u_2 = 1, e_QK = 0


def halved(heads: int) -> Family:
    """The mutant ``half`` (the as-proven bound halved: known false, ratio up to 2), its argument at
    the same factor."""
    return replace(family(heads), variant="half", enclose=enclosure(heads, 0.5),
                   arguments=(chain_slack(heads, 0.5),), expected="counterexample", search_fixed=None,
                   known_supremum=2.0)


PLANE_FAMILIES = plane_family.families()  # d1 = d2 = 2
FAMILIES = [family(1), family(2), PLANE_FAMILIES[0]]
MUTANT_FAMILIES = [halved(1), PLANE_FAMILIES[1]]
FAMILIES += MUTANT_FAMILIES
