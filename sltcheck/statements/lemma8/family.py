"""Lemma 8's families for the branch-and-bound (:mod:`sltcheck.certify`): one dimension, T = 2, 3.

The family ``d1-T{T}``: d1 = 1, T tokens, full mask, eps_max in [EPS_LOW, EPS_HIGH]. What is
removed, and why it loses no instance:

- the rows: every row of the left side has the same form, so the max over rows is the sup of one
  row; the instance repeats that row T times;
- alpha: tokens x_k = alpha u_k with u_k in [-1, 1]; both sides are linear in alpha, so the ratio
  does not depend on it (alpha = 1);
- the logits: only the softmax p matters; p runs over the whole simplex by stick breaking,
  p_1 = t_1, p_2 = (1 - t_1) t_2, ..., t in [0, 1]^(T-1) (a masked-out token is p_k = 0);
- the perturbation: eps_k = eps_max s_k, s in [-1, 1]^T (exactly ||eps||_max <= eps_max);
- u: the left side |sum_k (q_k - p_k) u_k| is convex in u and the bound does not involve it, so
  its sup over [-1, 1]^T is at a vertex; the sign flip u -> -u leaves it unchanged: u_1 = 1 and
  (u_2, ..., u_T) in {-1, 1}^(T-1) are the candidates.

Enclosure (a rewriting of the left side, not the statement's code path): with S = sum_j p_j e^(eps s_j),

    sum_k (q_k - p_k) u_k = (1/S) sum_{k<j} p_k p_j (e^(eps s_k) - e^(eps s_j)) (u_k - u_j),

and (e^(eps s_k) - e^(eps s_j)) / eps = (s_k - s_j) e^(eps xi) with xi between s_j and s_k (mean
value; intersected with the direct difference, tighter once s_k and s_j are apart), so both sides are
divided by eps exactly: the bound's sqrt(d1) alpha (e^(2 eps) - 1) / eps is
2 exprel(2 eps), increasing in eps. Known answer: sup = 2 tanh(EPS_LOW / 2) / (e^(2 EPS_LOW) - 1)
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
    return (tuple(Dimension(f"t{k}", 0.0, 1.0) for k in range(1, T))
            + tuple(Dimension(f"s{k}", -1.0, 1.0) for k in range(1, T + 1))
            + (Dimension("eps", EPS_LOW, EPS_HIGH),))


def vertices(T: int) -> list[tuple[float, ...]]:
    """The sign patterns with u_1 = 1, but for all ones (the left side is 0 there)."""
    return [(1.0, *rest) for rest in itertools.product((-1.0, 1.0), repeat=T - 1) if -1.0 in rest]


def probabilities(values: Sequence[Any]) -> list[Any]:
    """Stick breaking: t in [0, 1]^(T-1) -> p on the simplex (T entries)."""
    p, rest = [], 1
    for t in values:
        p.append(rest * t)
        rest = rest * (1 - t)
    return [*p, rest]


def one_minus_square_range(arith: Backend, t: Any, power: str) -> Any:
    """The exact range over the interval t of t (1 - t) ("parabola") or (1 - t)^2 ("square"): one
    occurrence of t, so no dependency (the naive t * (1 - t) overestimates by the width of t)."""
    lo, hi = arith.lower(t), arith.upper(t)
    lo, hi = max(lo, 0.0), min(hi, 1.0)

    def at(x: float) -> Any:
        point = arith.point(x)
        return point * (1 - point) if power == "parabola" else (1 - point) * (1 - point)

    ends = [at(lo), at(hi)]
    low = min(arith.lower(e) for e in ends)
    high = max(arith.upper(e) for e in ends)
    if power == "parabola" and lo <= 0.5 <= hi:
        high = max(high, 0.25)
    return arith.interval(max(low, 0.0), high)


def pair_products(arith: Backend, t: Sequence[Any]) -> dict[tuple[int, int], Any]:
    """p_k p_j (k < j) of the stick-breaking p, each a product of one-variable exact ranges:
    p_k p_j = t_k (1 - t_k) prod_{i<k} (1 - t_i)^2 prod_{k<i<j} (1 - t_i) (t_j if j < T - 1)."""
    T = len(t) + 1
    out = {}
    for k in range(T - 1):
        for j in range(k + 1, T):
            value = one_minus_square_range(arith, t[k], "parabola")
            for i in range(k):
                value = value * one_minus_square_range(arith, t[i], "square")
            for i in range(k + 1, j):
                value = value * (1 - t[i])
            if j < T - 1:
                value = value * t[j]
            out[k, j] = value
    return out


def shift_over_eps(arith: Backend, values: dict[str, Any], T: int, u: Sequence[float]) -> tuple[Any, Any]:
    """(sum_{k<j} p_k p_j (e^(eps s_k) - e^(eps s_j)) / eps (u_k - u_j), S): the left side is eps |first| / S."""
    t = [values[f"t{k}"] for k in range(1, T)]
    p, pp = probabilities(t), pair_products(arith, t)
    s = [values[f"s{k}"] for k in range(1, T + 1)]
    eps = values["eps"]
    total = 0
    for k in range(T):
        for j in range(k + 1, T):
            if u[k] == u[j]:
                continue
            between = arith.hull([s[k], s[j]])
            mean_value = (s[k] - s[j]) * arith.exp(eps * between)
            direct = (arith.exp(eps * s[k]) - arith.exp(eps * s[j])) / eps  # tighter once s_k, s_j are apart
            total = total + pp[k, j] * arith.intersect(mean_value, direct) * (u[k] - u[j])
    S = sum((pk * arith.exp(eps * sk) for pk, sk in zip(p, s, strict=True)), 0)
    return total, S


def enclosure(T: int, bound_over_eps: Callable[[Backend, Any], Any]) -> Enclose:
    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        out = []
        b = bound_over_eps(arith, values["eps"])
        for u in vertices(T):
            top, S = shift_over_eps(arith, values, T, u)
            out.append((top, S * b))
        return out

    return enclose


def instance_maker(T: int) -> Callable[[dict[str, float], int], dict[str, Any]]:
    def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
        p = probabilities([point[f"t{k}"] for k in range(1, T)])
        eps = point["eps"]
        with np.errstate(divide="ignore"):
            logits = np.log(np.asarray(p, dtype=np.float64))
        logits = np.where(np.isfinite(logits), logits, -745.0)  # p_k = 0: as good as masked in float64
        row_eps = np.asarray([eps * point[f"s{k}"] for k in range(1, T + 1)], dtype=np.float64)
        return {"alpha": 1.0, "d1": 1, "eps_max": eps,
                "X": np.asarray(vertices(T)[choice], dtype=np.float64).reshape(T, 1),
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
                            "(alpha, rows, logits and token signs removed by symmetry)",
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
