"""Lemma 7's families for the branch-and-bound (:mod:`sltcheck.certify`); Lemma 4 reuses them.

The family ``targets-2x1-n4-source{SEED}``: a fixed small source (d1 = 2, d2 = 1, n' = 2, so
n = 4; W1 (4, 2) and W2 (1, 4) drawn once from U[-1, 1] with numpy's generator at SEED), and every
target W = (w_1, w_2) in [-1, 1]^2 (the box IS Lemma 7's assumption; Lemma 4's ||W|| <= 1 is the
unit disc, handled exactly by :func:`disc_feasibility`). eps appears on neither side (the
``construction`` bound is the construction's own error), so it is fixed at 1/2; the source is
fixed, so no symmetry is left to remove.

Both sides, written for the family (not the statement's code path: no enumeration of mask pairs,
no subset-sum solver): with c_kj = W2[0, k] W1[k, j],

- measured = min over all masks of max_j |w_j - sum_k M2_k M1_kj c_kj| = max_j f_j(w_j), with
  f_j(w) = min over ALL subsets S of [n] of |w - sum_{k in S} c_kj| (a unit k kept in M2 serves
  each column j through its own M1_kj, so the columns decouple);
- bound (the construction: M1 block diagonal, group j = units 2j, 2j + 1) = max_j g_j(w_j), g_j the
  same distance over the subsets of group j only.

Each f_j, g_j is the distance from w_j to a finite set of subset sums: piecewise linear, its exact
range over an interval of w_j is taken at the interval's ends and at the midpoints between
consecutive sums inside it (:func:`distance_range`); the quotient of the two ranges closes the boxes
where the ratio stays below 1.

The ratio is exactly 1 on open sets of targets (wherever the best subsets of the worse column lie
in its group), where no quotient of two enclosures is <= 1. There the family's argument is **exact
pieces** (:func:`sltcheck.certify.arguments.dominated`): f_j and g_j are continuous and piecewise
linear in w_j with rational breakpoints (the subset sums, exact products of two doubles, and the
midpoints between consecutive ones), so f_j <= c g_j on the box's range of w_j (c the variant's
factor on the construction's error) is decided in exact rational arithmetic at the range's ends and
at every breakpoint inside it; where it holds for both columns, measured = max_j f_j <= c max_j g_j
= bound on the whole box. It is sound for any c and proves the mutant ``bound-halved`` nowhere that
f_j > g_j / 2 (where the branch-and-bound finds its counterexample). With it every box is decided:
"held" on 100% of the family, the supremum 1 bracketed from below by the search's instances.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from sltcheck.certify import INSIDE, OUTSIDE, STRADDLES, Dimension, Family, Ratio
from sltcheck.certify.arguments import Argument, PiecewiseLinear, distance_to, dominated, exact, ratio_enclosure
from sltcheck.numerics.balls import Backend, backend
from sltcheck.numerics.balls import subset_sums as enclosed_subset_sums

D1, D2, N_PRIME = 2, 1, 2
SOURCE_SEEDS = (0,)
EPS = 0.5
# Absolute slack added to every upper end: the subset sums are balls of radius ~1e-16 whose
# order by midpoint may differ from the exact order among near-ties (a gap then misplaced by a radius).
SLACK = 1e-14


def source(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """W1 (n, d1), W2 (d2, n) with U[-1, 1] entries, n = d1 n'."""
    rng = np.random.default_rng(seed)
    n = D1 * N_PRIME
    return rng.uniform(-1.0, 1.0, (n, D1)), rng.uniform(-1.0, 1.0, (D2, n))


@functools.cache
def subset_sums(seed: int, backend_name: str, column: int, group_only: bool) -> tuple[Any, ...]:
    """The subset sums of c_kj (column j) over all units or over group j only, as enclosures."""
    arith = backend(backend_name)
    W1, W2 = source(seed)
    units = range(column * N_PRIME, (column + 1) * N_PRIME) if group_only else range(W1.shape[0])
    products = [arith.point(float(W2[0, k])) * arith.point(float(W1[k, column])) for k in units]
    return enclosed_subset_sums(arith, products)


def distance_range(arith: Backend, sums: Sequence[Any], w: Any) -> tuple[float, float]:
    """(a float <= min, a float >= max) over w of the distance from w to the set ``sums`` (sorted)."""
    lo, hi = arith.lower(w), arith.upper(w)

    def distance(x: float) -> tuple[float, float]:
        gaps = [arith.magnitude(arith.point(x) - s) for s in sums]
        return min(g[0] for g in gaps), min(g[1] for g in gaps)

    at_lo, at_hi = distance(lo), distance(hi)
    top = max(at_lo[1], at_hi[1])
    for a, b in itertools.pairwise(sums):
        middle = (a + b) / 2
        if arith.lower(middle) <= hi and lo <= arith.upper(middle):  # a local max of the distance inside
            top = max(top, arith.magnitude((b - a) / 2)[1])
    inside = any(arith.lower(s) <= hi and lo <= arith.upper(s) for s in sums)
    bottom = 0.0 if inside else min(at_lo[0], at_hi[0])
    return bottom, top + SLACK


def enclosure(seed: int, bound_factor: float) -> Callable[[Backend, dict[str, Any]], list[Ratio]]:
    """One candidate (the ratio's enclosure, 1): [inf measured / sup bound, sup measured / inf bound]."""

    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        measured, bound = [], []
        for j in range(D1):
            w = values[f"w{j + 1}"]
            measured.append(distance_range(arith, subset_sums(seed, arith.name, j, False), w))
            bound.append(distance_range(arith, subset_sums(seed, arith.name, j, True), w))
        top = (max(m[0] for m in measured), max(m[1] for m in measured))
        bottom = (bound_factor * max(b[0] for b in bound), bound_factor * max(b[1] for b in bound))
        return [(ratio_enclosure(arith, top, bottom), arith.point(1.0))]

    return enclose


@functools.cache
def exact_sums(seed: int, column: int, units: tuple[int, ...]) -> tuple[Fraction, ...]:
    """The subset sums of c_kj = W2[0, k] W1[k, j] over ``units``, exact rationals (a product of two
    doubles is exact in rationals)."""
    W1, W2 = source(seed)
    products = [exact(float(W2[0, k])) * exact(float(W1[k, column])) for k in units]
    return tuple(sorted({sum((c for keep, c in zip(chosen, products, strict=True) if keep), Fraction(0))
                         for chosen in itertools.product((0, 1), repeat=len(products))}))


@functools.cache
def exact_distance(seed: int, column: int, units: tuple[int, ...]) -> PiecewiseLinear:
    """w -> the distance from w to the subset sums over ``units`` (exact, piecewise linear)."""
    return distance_to(exact_sums(seed, column, units))


def group(column: int) -> tuple[int, ...]:
    """The units of group ``column`` (the construction's block-diagonal M1)."""
    return tuple(range(column * N_PRIME, (column + 1) * N_PRIME))


def exact_pieces(seed: int, bound_factor: float) -> Argument:
    """f_j <= c g_j on the box's range of w_j, for both columns, in exact rational arithmetic."""
    scale = exact(bound_factor)
    every = tuple(range(D1 * N_PRIME))

    def proves(arith: Backend, values: dict[str, Any], ends: dict[str, tuple[float, float]]) -> bool:
        return all(dominated(exact_distance(seed, j, every), exact_distance(seed, j, group(j)), scale,
                             *ends[f"w{j + 1}"]) for j in range(D1))

    return Argument("exact pieces", proves)


def instance_maker(seed: int) -> Callable[[dict[str, float], int], dict[str, Any]]:
    W1, W2 = source(seed)

    def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
        W = np.asarray([[point[f"w{j + 1}"] for j in range(D1)]], dtype=np.float64)
        return {"W": W, "W1": W1.copy(), "W2": W2.copy(), "eps": EPS}

    return instance


def contains_maker(seed: int, statement: str) -> Callable[[dict[str, Any]], bool]:
    W1, W2 = source(seed)

    def contains(instance: dict[str, Any]) -> bool:
        from sltcheck.assumptions import violations

        W = np.asarray(instance["W"])
        return (W.shape == (D2, D1) and np.array_equal(np.asarray(instance["W1"]), W1)
                and np.array_equal(np.asarray(instance["W2"]), W2) and not violations(statement, instance))

    return contains


def disc_feasibility(arith: Backend, values: dict[str, Any]) -> str:
    """Lemma 4's ||W|| <= 1 for a 1 x 2 target: w_1^2 + w_2^2 <= 1 (the exact range of the sum of
    squares over the box: each square's range from its interval's ends and 0)."""
    far = near = arith.point(0.0)
    for j in range(D1):
        lo, hi = arith.lower(values[f"w{j + 1}"]), arith.upper(values[f"w{j + 1}"])
        ends = [arith.point(lo) * arith.point(lo), arith.point(hi) * arith.point(hi)]
        far = far + arith.point(max(arith.upper(e) for e in ends))
        near = near + (arith.point(0.0) if lo <= 0.0 <= hi else arith.point(min(arith.lower(e) for e in ends)))
    if arith.lower(near) > 1.0:
        return OUTSIDE
    return INSIDE if arith.upper(far) <= 1.0 else STRADDLES


def families(statement: str, variants: dict[str, tuple[float, str | None]],
             feasibility: Callable[[Backend, dict[str, Any]], str] | None = None,
             assumption: str = "entries in [-1, 1]") -> list[Family]:
    """One family per source seed and variant; ``variants``: name -> (factor on the construction's
    error, the known answer)."""
    out = []
    for seed in SOURCE_SEEDS:
        for variant, (factor, expected) in variants.items():
            out.append(Family(
                statement=statement, name=f"targets-2x1-n4-source{seed}", variant=variant,
                dimensions=tuple(Dimension(f"w{j + 1}", -1.0, 1.0) for j in range(D1)),
                enclose=enclosure(seed, factor), instance=instance_maker(seed), feasibility=feasibility,
                arguments=(exact_pieces(seed, factor),),
                contains=contains_maker(seed, statement),
                description=f"every 1 x 2 target W ({assumption}) at one fixed source (d1 = 2, d2 = 1, "
                            f"n = 4, W1 and W2 from U[-1, 1] at seed {seed}); eps = 1/2 (on neither side)",
                expected=expected, notes={"source_seed": seed},
                known_supremum=1.0 if expected == "held" else None))  # attained on open sets of targets
    return out


# The construction's error bounds the best masks' (they are one choice of masks): held, sup <= 1.
VARIANTS: dict[str, tuple[float, str | None]] = {"construction": (1.0, "held"), "bound-halved": (0.5, "counterexample")}
FAMILIES = families("lemma7", VARIANTS)
