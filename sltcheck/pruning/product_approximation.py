"""Lemma 7's masks for one product: W ≈ (W2 ⊙ M2)(W1 ⊙ M1), entry by entry a subset sum.

The n hidden units are split into d1 groups of n' = n // d1 (:func:`group_size`); M1 keeps, in group j,
only column j (Eq. (6)) and M2 picks, entry by entry, the subset closest to W[i, j] (Eqs. (7), (8);
:mod:`sltcheck.pruning.subset_sum`). The error is recomputed in mpmath from the masks, never taken from a
solver (:func:`exact_dot_mp` sums the kept products exactly). :class:`Solve` carries how to solve from
the public functions down to the solver. Applied to attention and whole models in
:mod:`sltcheck.pruning.construction`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from sltcheck.numerics import precision
from sltcheck.numerics.validation import check_array, check_choice, check_dps
from sltcheck.pruning.subset_sum import MIPOptions, SubsetSumResult, solve_subset_sum

REMAINDERS = ("error", "drop")


@dataclass(frozen=True)
class ProductApproximation:
    """Masks of Lemma 7 for W ≈ scale (W2⊙M2)(W1⊙M1) and the error they achieve."""

    M1: np.ndarray  # bool (n, d1): block structure of Eq. (6)
    M2: np.ndarray  # bool (d2, n): subset-sum choices of Eq. (7)
    group_size: int  # n'
    error: float  # ||W - scale (W2⊙M2)(W1⊙M1)||_max, from the mpmath value
    error_mp: Any  # the same in mpmath
    entry_errors: np.ndarray  # float64 (d2, d1), recomputed in mpmath
    solves: tuple[SubsetSumResult, ...]


@dataclass(frozen=True)
class Solve:
    """How to solve: passed unchanged from the public functions down to the solver."""

    solver: str = "mitm"
    options: MIPOptions | None = None
    fallback: str | None = None
    remainder: str = "error"
    dps: int = 40
    workers: int = 1  # processes sharing each matrix's d1 d2 problems; the masks do not depend on it

    def run(self, targets: np.ndarray, candidates: np.ndarray) -> SubsetSumResult:
        return solve_subset_sum(
            targets, candidates, self.solver, options=self.options, fallback=self.fallback, workers=self.workers
        )


def checked_layers(W: object, W1: object, W2: object, remainder: str,
                   width_name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The target W (d2 x d1) and sources W1 (n x d1), W2 (d2 x n) checked, with the size of a group of
    W1's n rows (one group per input coordinate)."""
    target = check_array("W", W, ndim=2)
    d2, d1 = target.shape
    first = check_array("W1", W1, ndim=2)
    n = first.shape[0]
    first = check_array("W1", first, shape=(n, d1))
    second = check_array("W2", W2, shape=(d2, n))
    return target, first, second, group_size(n, d1, remainder, name=width_name)


def group_size(n: int, groups: int, remainder: str = "error", *, name: str = "n") -> int:
    """n' = n // groups, refusing a remainder unless ``remainder="drop"``."""
    check_choice("remainder", remainder, REMAINDERS)
    if n < groups:
        raise ValueError(f"{name} must be at least {groups} (one hidden unit per group), got {n}")
    if n % groups and remainder == "error":
        raise ValueError(
            f"{name} = {n} must be divisible by {groups} (the number of groups of Lemma 7); "
            f"use a multiple of {groups} or remainder='drop' to prune the last {n % groups} units"
        )
    return n // groups


def approximate_product(
    W: object,
    W1: object,
    W2: object,
    solver: str = "mitm",
    *,
    scale_inverse_sqrt: int = 1,
    remainder: str = "error",
    options: MIPOptions | None = None,
    fallback: str | None = None,
    dps: int = 40,
    workers: int = 1,
) -> ProductApproximation:
    """Lemma 7: masks with W ≈ (W2⊙M2)(W1⊙M1) / sqrt(scale_inverse_sqrt).

    W (d2 x d1) may be float64 or mpf (then the subset sums aim at its float64
    rounding, and the error is measured against W itself).
    """
    how = Solve(solver, options, fallback, remainder, check_dps(dps), workers)
    return product_masks(W, W1, W2, how, scale_inverse_sqrt)


def product_masks(
    W: object,
    W1: object,
    W2: object,
    how: Solve,
    scale_inverse_sqrt: int = 1,
    width_name: str = "n (rows of W1)",
) -> ProductApproximation:
    target, first, second, size = checked_layers(W, W1, W2, how.remainder, width_name)
    d2, d1 = target.shape
    n = first.shape[0]
    scale = 1.0 / np.sqrt(scale_inverse_sqrt)

    # u_j = W1[group j, j] (Eq. (6)); v_{i,j} = W2[i, group j] (Eq. (7)).
    units = np.arange(d1 * size).reshape(d1, size)  # units[j] = group j
    u = first[units, np.arange(d1)[:, None]]  # (d1, n')
    v = second[:, units]  # (d2, d1, n')
    candidates = (v * u[None]) * scale if scale_inverse_sqrt != 1 else v * u[None]
    solve = how.run(as_float(target).reshape(-1), candidates.reshape(d2 * d1, size))

    M1 = np.zeros((n, d1), dtype=bool)
    M1[units, np.arange(d1)[:, None]] = True
    M2 = np.zeros((d2, n), dtype=bool)
    M2[:, units] = solve.masks.reshape(d2, d1, size)
    entry_errors_mp = _product_error_mp(target, first, second, M1, M2, scale_inverse_sqrt, how.dps)
    error_mp = max(entry_errors_mp.flat)
    return ProductApproximation(
        M1=M1,
        M2=M2,
        group_size=size,
        error=float(error_mp),
        error_mp=error_mp,
        entry_errors=entry_errors_mp.astype(np.float64),
        solves=(solve,),
    )


def exact_dot_mp(x: np.ndarray, y: np.ndarray) -> Any:
    """sum_k x_k y_k for float64 vectors, summed exactly (integers) and rounded once to mpmath's
    precision: where the products are exact at that precision (dps >= 33, the default 40) this is
    bit for bit mpmath.fsum of the mpf products (an exact sum rounded once), ~80x faster at 512
    terms; below, it is more accurate (the products are not rounded)."""
    if x.size == 0:
        return mpmath.mpf(0)
    x_fraction, x_exponent = np.frexp(np.asarray(x, dtype=np.float64))
    y_fraction, y_exponent = np.frexp(np.asarray(y, dtype=np.float64))
    x_mantissa = np.ldexp(x_fraction, 53).astype(np.int64).tolist()  # exact: 53-bit integers
    y_mantissa = np.ldexp(y_fraction, 53).astype(np.int64).tolist()
    exponent = x_exponent.astype(np.int64) + y_exponent.astype(np.int64)
    low = int(exponent.min())
    total = sum(
        (a * b) << e for a, b, e in zip(x_mantissa, y_mantissa, (exponent - low).tolist(), strict=True)
    )
    return mpmath.ldexp(mpmath.mpf(total), low - 106)


def as_float(array: np.ndarray) -> np.ndarray:
    return np.array([float(x) for x in array.flat]).reshape(array.shape) if array.dtype == object else array


def _product_error_mp(
    W: np.ndarray,
    W1: np.ndarray,
    W2: np.ndarray,
    M1: np.ndarray,
    M2: np.ndarray,
    scale_inverse_sqrt: int,
    dps: int,
) -> np.ndarray:
    """|W - (W2⊙M2)(W1⊙M1)/sqrt(s)| entrywise in mpmath, summing only the kept products."""
    with mpmath.workdps(dps):
        scale = 1 / mpmath.sqrt(scale_inverse_sqrt)
        target = precision.to_mp(W, dps)
        errors = np.empty(W.shape, dtype=object)
        for i in range(W.shape[0]):
            for j in range(W.shape[1]):
                kept = np.flatnonzero(M2[i] & M1[:, j])
                total = exact_dot_mp(W2[i, kept], W1[kept, j])
                errors[i, j] = abs(target[i, j] - total * scale)
        return errors
