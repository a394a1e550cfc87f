"""Lemma 2's families for the branch-and-bound (:mod:`sltcheck.certify`).

The family ``targets-2x1-n4-source{SEED}``: Lemma 7's fixed small source
(:func:`sltcheck.statements.lemma7.family.source`: d1 = 2, d2 = 1, n' = 2, so n = 4), every target
W = (w_1, w_2) with ||W|| <= 1 (the unit disc: not a box, handled exactly by
:func:`sltcheck.statements.lemma7.family.disc_feasibility`) and every input x with ||x|| <= 1, under
the construction's masks (group j reads input j; its units with positive incoming weight give
A_j, the nearest of their subset sums of c_k = W2[0, k] W1[k, j] to w_j, the negative ones B_j).
eps appears on neither side (1/2). What is removed, and why it loses no instance:

- x: with C_j = A_j where x_j > 0 and B_j where x_j < 0, the left side is |sum_j v_j x_j|,
  v_j = w_j - C_j; on the quarter of the disc with signs sigma, writing y_j = sigma_j v_j and
  t_j = |x_j|, its sup over t >= 0, ||t|| <= 1 is max(||y_+||, ||y_-||) (Cauchy-Schwarz on the
  positive or the negative parts): the candidates are (sigma, tau), tau = +-1, measured
  sqrt(sum_j max(0, tau y_j)^2), the instance's x the maximiser.

Both sides written for the family (not the statement's code path): the bound, sqrt(d1 d2) e with
e = max_j max(|w_j - A_j|, |w_j - B_j|), by the exact distance ranges of
:func:`sltcheck.statements.lemma7.family.distance_range`; v_j over an interval of w_j by the hull
of w_j - s over the subset sums s whose nearest-point cells meet the interval.

The ratio is <= 1 and reaches 1 only where the two entries' errors are equal: the quotient of the
two enclosures closes the boxes away from that set (and none near W = 0, where both sides vanish).
The family's argument is **exact pieces** (:func:`sltcheck.certify.arguments.dominated`), the
lemma's own Cauchy-Schwarz chain decided on each linear piece: with d_+, d_- the distances from w_j
to the positive and negative parts' subset sums (continuous, piecewise linear, rational
breakpoints), |v_j| = d_{sigma_j}(w_j), and where d_{sigma}(w_j) <= c max(d_+, d_-)(w_j) for both
signs and both entries on the box (decided exactly at the range's ends and every breakpoint and
crossing inside it; c the variant's factor), every candidate's measured side is
sqrt(sum_j max(0, tau y_j)^2) <= c sqrt(E_1^2 + E_2^2) <= c sqrt(2) max_j E_j = bound. Sound for any
c; the mutant ``bound-quartered`` is proved nowhere d_sigma > max(d_+, d_-) / 4.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sltcheck.certify import Dimension, Family, Ratio
from sltcheck.certify.arguments import Argument, PiecewiseLinear, dominated, exact, ratio_enclosure
from sltcheck.numerics.balls import Backend, backend, subset_sums
from sltcheck.statements.lemma7.family import (
    D1,
    D2,
    EPS,
    N_PRIME,
    SLACK,
    SOURCE_SEEDS,
    disc_feasibility,
    distance_range,
    exact_distance,
    source,
)

# The construction's largest x is scaled by this (just below 1) so that ||x|| <= 1 holds exactly
# after rounding.
INSIDE_UNIT = 1.0 - 2.0**-50


def _units(seed: int, column: int, positive: bool) -> list[int]:
    W1, _ = source(seed)
    group = range(column * N_PRIME, (column + 1) * N_PRIME)
    return [k for k in group if (W1[k, column] > 0 if positive else W1[k, column] < 0)]


def _float_sums(seed: int, column: int, positive: bool) -> np.ndarray:
    W1, W2 = source(seed)
    products = [W2[0, k] * W1[k, column] for k in _units(seed, column, positive)]
    return np.array(sorted(sum(c for keep, c in zip(chosen, products, strict=True) if keep)
                           for chosen in itertools.product((0, 1), repeat=len(products))), dtype=np.float64)


@functools.cache
def part_sums(seed: int, backend_name: str, column: int, positive: bool) -> tuple[Any, ...]:
    """The subset sums of the products of group ``column``'s positive (negative) units, enclosed, sorted."""
    arith = backend(backend_name)
    W1, W2 = source(seed)
    products = [arith.point(float(W2[0, k])) * arith.point(float(W1[k, column]))
                for k in _units(seed, column, positive)]
    return subset_sums(arith, products)


def signed_range(arith: Backend, sums: Sequence[Any], w: Any) -> tuple[float, float]:
    """The range of w - (the sum nearest to w) over the interval w: the hull of w - s over the sums
    whose nearest-point cells meet it (a cell's ends are the midpoints to its neighbours, widened)."""
    lo, hi = arith.lower(w), arith.upper(w)
    middles = [arith.lower((a + b) / 2) - SLACK for a, b in itertools.pairwise(sums)]
    highs = [arith.upper((a + b) / 2) + SLACK for a, b in itertools.pairwise(sums)]
    low, high = math.inf, -math.inf
    for i, s in enumerate(sums):
        cell_lo = -math.inf if i == 0 else middles[i - 1]
        cell_hi = math.inf if i == len(sums) - 1 else highs[i]
        if cell_lo <= hi and lo <= cell_hi:
            low, high = min(low, arith.lower(w - s)), max(high, arith.upper(w - s))
    return low, high


def _positive_part(arith: Backend, low: float, high: float) -> Any:
    """max(0, y) over y in [low, high]."""
    return arith.interval(max(0.0, low), max(0.0, high))


def candidates() -> list[tuple[tuple[float, ...], float]]:
    return [(sigma, tau) for sigma in itertools.product((1.0, -1.0), repeat=D1) for tau in (1.0, -1.0)]


def enclosure(seed: int, bound_factor: float) -> Callable[[Backend, dict[str, Any]], list[Ratio]]:
    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        errors, signed = [], {}
        for j in range(D1):
            w = values[f"w{j + 1}"]
            for positive in (True, False):
                sums = part_sums(seed, arith.name, j, positive)
                low, high = distance_range(arith, sums, w)
                errors.append((low, high))
                s_lo, s_hi = signed_range(arith, sums, w)
                signed[j, positive] = (max(s_lo, -high), min(s_hi, high))  # |v| <= the distance's upper end
        e = arith.interval(max(lo for lo, _ in errors), max(hi for _, hi in errors))
        bound = arith.sqrt(arith.point(float(D1 * D2))) * e * bound_factor
        bottom = (arith.lower(bound), arith.upper(bound))
        out = []
        for sigma, tau in candidates():
            total = arith.point(0.0)
            for j in range(D1):
                v_lo, v_hi = signed[j, sigma[j] > 0]
                y_lo, y_hi = (v_lo, v_hi) if tau * sigma[j] > 0 else (-v_hi, -v_lo)
                part = _positive_part(arith, y_lo, y_hi)
                total = total + part * part
            measured = arith.sqrt(total)
            out.append((ratio_enclosure(arith, (arith.lower(measured), arith.upper(measured)), bottom),
                        arith.point(1.0)))
        return out

    return enclose


@functools.cache
def exact_parts(seed: int, column: int) -> tuple[PiecewiseLinear, PiecewiseLinear, PiecewiseLinear]:
    """(d_+, d_-, max(d_+, d_-)) of entry ``column``, exact."""
    plus, minus = (exact_distance(seed, column, tuple(_units(seed, column, positive))) for positive in (True, False))
    return plus, minus, plus.maximum(minus)


def exact_pieces(seed: int, bound_factor: float) -> Argument:
    """d_sigma <= c max(d_+, d_-) on the box's range of w_j, both signs and both entries, exactly."""
    scale = exact(bound_factor)

    def proves(arith: Backend, values: dict[str, Any], ends: dict[str, tuple[float, float]]) -> bool:
        for j in range(D1):
            plus, minus, error = exact_parts(seed, j)
            if not all(dominated(part, error, scale, *ends[f"w{j + 1}"]) for part in (plus, minus)):
                return False
        return True

    return Argument("exact pieces", proves)


def instance_maker(seed: int) -> Callable[[dict[str, float], int], dict[str, Any]]:
    W1, W2 = source(seed)

    def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
        sigma, tau = candidates()[choice]
        w = [point[f"w{j + 1}"] for j in range(D1)]
        t = []
        for j in range(D1):
            sums = _float_sums(seed, j, sigma[j] > 0)
            v = w[j] - sums[int(np.argmin(np.abs(w[j] - sums)))]
            t.append(max(0.0, tau * sigma[j] * v))
        norm = math.hypot(*t)
        x = [sigma[j] * (t[j] / norm if norm > 0 else float(j == 0)) * INSIDE_UNIT for j in range(D1)]
        return {"W": np.asarray([w], dtype=np.float64), "x": np.asarray(x, dtype=np.float64),
                "W1": W1.copy(), "W2": W2.copy(), "eps": EPS}

    return instance


def contains_maker(seed: int) -> Callable[[dict[str, Any]], bool]:
    W1, W2 = source(seed)

    def contains(instance: dict[str, Any]) -> bool:
        from sltcheck.assumptions import violations

        return (np.asarray(instance["W"]).shape == (D2, D1) and np.array_equal(np.asarray(instance["W1"]), W1)
                and np.array_equal(np.asarray(instance["W2"]), W2) and not violations("lemma2", instance))

    return contains


VARIANTS = {"as-proven": (1.0, "held"), "bound-quartered": (0.25, "counterexample")}

FAMILIES = [
    Family(statement="lemma2", name=f"targets-2x1-n4-source{seed}", variant=variant,
           dimensions=tuple(Dimension(f"w{j + 1}", -1.0, 1.0) for j in range(D1)),
           enclose=enclosure(seed, factor), instance=instance_maker(seed), feasibility=disc_feasibility,
           contains=contains_maker(seed), arguments=(exact_pieces(seed, factor),),
           description=f"every 1 x 2 target W (||W|| <= 1) and input x (||x|| <= 1) at one fixed source "
                       f"(d1 = 2, d2 = 1, n = 4, seed {seed}); x removed by Cauchy-Schwarz; eps = 1/2",
           expected=expected, notes={"source_seed": seed},
           known_supremum=1.0 if expected == "held" else None)  # attained where both entries' errors are equal
    for seed in SOURCE_SEEDS for variant, (factor, expected) in VARIANTS.items()
]
