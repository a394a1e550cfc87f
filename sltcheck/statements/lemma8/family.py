"""Lemma 8's families for the branch-and-bound (:mod:`sltcheck.certify`): one dimension, T = 2, 3.

The family ``d1-T{T}``: d1 = 1, T tokens, full mask, eps_max in [EPS_LOW, EPS_HIGH]. What is
removed, and why it loses no instance:

- the rows: every row of the left side has the same form, so the max over rows is the sup of one
  row; the instance repeats that row T times;
- alpha: tokens x_k = alpha u_k with u_k in [-1, 1]; both sides are linear in alpha, so the ratio
  does not depend on it (alpha = 1);
- the logits: only the softmax p matters; p runs over the whole simplex by stick breaking,
  p_1 = t_1, p_2 = (1 - t_1) t_2, ..., t in [0, 1]^(T-1) (a masked-out token is p_k = 0);
- u: the left side |sum_k (q_k - p_k) u_k| is convex in u and the bound does not involve it, so
  its sup over [-1, 1]^T is at a vertex; the sign flip u -> -u leaves it unchanged: u_1 = 1 and
  (u_2, ..., u_T) in {-1, 1}^(T-1) are the candidates;
- the perturbation eps_k = eps_max s_k, s in [-1, 1]^T (exactly ||eps||_max <= eps_max), by
  monotonicity: with u in {-1, 1}^T, d/ds_k sum_j q_j u_j = eps_max q_k (u_k - sum_j q_j u_j) has the
  sign of u_k, so sum_j q_j u_j is largest at s = u and smallest at s = -u, and the sup over s of
  the left side is at s = sigma u, sigma = +-1: the candidates are (u, sigma), no dimension left for s.

Enclosure (a rewriting of the left side, not the statement's code path): at s = sigma u, with
P = sum_{u_k = 1} p_k and a = e^(sigma eps), b = e^(-sigma eps), only the pairs with u_k != u_j stay in

    sum_k (q_k - p_k) u_k = (1/S) sum_{k<j} p_k p_j (e^(eps s_k) - e^(eps s_j)) (u_k - u_j)
                          = 4 sigma eps (sinh(eps) / eps) P (1 - P) / (a P + b (1 - P)),

so the left side over eps is 4 sinhc(eps) g(P): sinhc increasing (enclosed at the ends of eps), P
multilinear in t (exact range at the corners, :func:`mass_range`), g unimodal in P and decreasing in
a and b (exact range, :func:`spread_range`); the bound over eps, sqrt(d1) alpha (e^(2 eps) - 1) / eps,
is 2 exprel(2 eps), increasing in eps. Both sides are divided by eps exactly.
Known answer: sup = 2 tanh(EPS_LOW / 2) / (e^(2 EPS_LOW) - 1)
(:mod:`sltcheck.statements.lemma8.worst_case`; the ratio decreases in eps_max).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from sltcheck.certify import Dimension, Family, Ratio
from sltcheck.numerics.balls import Backend

Enclose = Callable[[Backend, dict[str, Any]], list[Ratio]]

EPS_LOW, EPS_HIGH = 0.01, 0.5
SIZES = (2, 3)


def dimensions(T: int) -> tuple[Dimension, ...]:
    return (*(Dimension(f"t{k}", 0.0, 1.0) for k in range(1, T)), Dimension("eps", EPS_LOW, EPS_HIGH))


def vertices(T: int) -> list[tuple[float, ...]]:
    """The sign patterns with u_1 = 1, but for all ones (the left side is 0 there)."""
    return [(1.0, *rest) for rest in itertools.product((-1.0, 1.0), repeat=T - 1) if -1.0 in rest]


def candidates(T: int) -> list[tuple[tuple[float, ...], float]]:
    """(u, sigma): the token signs and the perturbation's direction s = sigma u."""
    return [(u, sigma) for u in vertices(T) for sigma in (1.0, -1.0)]


def probabilities(values: Sequence[Any]) -> list[Any]:
    """Stick breaking: t in [0, 1]^(T-1) -> p on the simplex (T entries)."""
    p, rest = [], 1
    for t in values:
        p.append(rest * t)
        rest = rest * (1 - t)
    return [*p, rest]


def sinhc(arith: Backend, eps: Any) -> Any:
    """sinh(eps) / eps = exprel(2 eps) e^(-eps), increasing in eps > 0: enclosed at the ends."""
    return arith.increasing(lambda y: arith.expm1(2 * y) * arith.exp(-y) / (2 * y), eps)


def mass_range(arith: Backend, t: Sequence[Any], u: Sequence[float]) -> tuple[float, float]:
    """The exact range (rounded outward) over the box t of P = sum of p_k over u_k = 1: stick
    breaking makes P multilinear in t (each t_i to the power 0 or 1 in every term), so its range is
    taken at the corners of the box."""
    ends = [(arith.lower(x), arith.upper(x)) for x in t]
    values = []
    for corner in itertools.product(*ends):
        p = probabilities([arith.point(c) for c in corner])
        values.append(sum((pk for pk, uk in zip(p, u, strict=True) if uk > 0), arith.point(0.0)))
    return max(0.0, min(arith.lower(v) for v in values)), min(1.0, max(arith.upper(v) for v in values))


def spread_range(arith: Backend, mass: tuple[float, float], eps: Any, sigma: float) -> Any:
    """The range of g(P) = P (1 - P) / (a P + b (1 - P)), a = e^(sigma eps), b = e^(-sigma eps), over
    P in ``mass`` and the box's eps: g decreases in a and in b, and at fixed a, b rises to its peak
    1 / (sqrt a + sqrt b)^2 at P* = sqrt b / (sqrt a + sqrt b), then falls (each end evaluated at
    points: no dependency)."""
    a, b = arith.exp(sigma * eps), arith.exp(-sigma * eps)

    def g(P: float, a_end: float, b_end: float) -> Any:
        x, A, B = arith.point(P), arith.point(a_end), arith.point(b_end)
        return x * (1 - x) / (A * x + B * (1 - x))

    low_a, low_b, high_a, high_b = arith.lower(a), arith.lower(b), arith.upper(a), arith.upper(b)
    lo, hi = mass
    top = max(arith.upper(g(lo, low_a, low_b)), arith.upper(g(hi, low_a, low_b)))
    root_a, root_b = arith.sqrt(arith.point(low_a)), arith.sqrt(arith.point(low_b))
    peak_at = root_b / (root_a + root_b)
    if arith.lower(peak_at) <= hi and lo <= arith.upper(peak_at):  # the peak may lie inside: take it
        top = max(top, arith.upper(1 / ((root_a + root_b) * (root_a + root_b))))
    bottom = min(arith.lower(g(lo, high_a, high_b)), arith.lower(g(hi, high_a, high_b)))
    return arith.interval(max(bottom, 0.0), top)


def enclosure(T: int, bound_over_eps: Callable[[Backend, Any], Any]) -> Enclose:
    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        out = []
        b = bound_over_eps(arith, values["eps"])
        t, eps = [values[f"t{k}"] for k in range(1, T)], values["eps"]
        for u, sigma in candidates(T):
            mass = mass_range(arith, t, u)
            out.append((4 * sinhc(arith, eps) * spread_range(arith, mass, eps, sigma), b))
        return out

    return enclose


def instance_maker(T: int) -> Callable[[dict[str, float], int], dict[str, Any]]:
    def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
        p = probabilities([point[f"t{k}"] for k in range(1, T)])
        eps = point["eps"]
        with np.errstate(divide="ignore"):
            logits = np.log(np.asarray(p, dtype=np.float64))
        logits = np.where(np.isfinite(logits), logits, -745.0)  # p_k = 0: as good as masked in float64
        u, sigma = candidates(T)[choice]
        row_eps = np.asarray([eps * sigma * uk for uk in u], dtype=np.float64)
        return {"alpha": 1.0, "d1": 1, "eps_max": eps,
                "X": np.asarray(u, dtype=np.float64).reshape(T, 1),
                "logits": np.tile(logits, (T, 1)), "mask": np.ones((T, T), dtype=np.int8),
                "perturbation": np.tile(row_eps, (T, 1))}

    return instance


def lemma8_over_eps(arith: Backend, eps: Any) -> Any:
    """sqrt(d1) alpha (e^(2 eps) - 1) / eps at d1 = alpha = 1: 2 exprel(2 eps)."""
    return 2 * arith.exprel(2 * eps)


def known_supremum(bound_at_low: Callable[[float], float]) -> float:
    return 2 * math.tanh(EPS_LOW / 2) / bound_at_low(EPS_LOW)


def families(statement: str, variants: dict[str, tuple[Callable[[Backend, Any], Any], float | None]]) -> list[Family]:
    """One family per T and variant; ``variants``: name -> (bound / eps enclosure, the known supremum)."""
    out = []
    for T in SIZES:
        for variant, (over_eps, supremum) in variants.items():
            out.append(Family(
                statement=statement, name=f"d1-T{T}", variant=variant, dimensions=dimensions(T),
                enclose=enclosure(T, over_eps), instance=instance_maker(T),
                description=f"d1 = 1, T = {T}, full mask, eps_max in [{EPS_LOW}, {EPS_HIGH}] "
                            "(alpha, rows, logits, token signs and the perturbation removed by symmetry and "
                            "monotonicity)",
                expected="held", known_supremum=supremum))
    return out


def quartered_over_eps(arith: Backend, eps: Any) -> Any:
    """The mutant ``exponent-quartered``, (e^(eps/2) - 1) / eps = exprel(eps / 2) / 2: known false."""
    return 0.5 * arith.exprel(0.5 * eps)


FAMILIES = families("lemma8", {"as-stated": (lemma8_over_eps, known_supremum(lambda e: math.expm1(2 * e)))})
# the known-false mutant: the branch-and-bound must answer with a certified counterexample
MUTANT_FAMILIES = [
    replace(f, expected="counterexample", known_supremum=known_supremum(lambda e: math.expm1(e / 2)))
    for f in families("lemma8", {"exponent-quartered": (quartered_over_eps, None)})
    if f.name == "d1-T2"
]
FAMILIES += MUTANT_FAMILIES
