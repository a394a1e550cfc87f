"""Exact errors of subset-sum masks, the float64 floor, and the exact decision among shortlisted masks.

Every solver's reported error is :func:`exact_error`, recomputed from its mask with the float64
inputs converted exactly to fractions. The exact searches (:mod:`sltcheck.pruning.enumeration`,
:mod:`sltcheck.pruning.certified_search`) use floats only to shortlist, within twice a rigorous
bound on the rounding (:func:`shortlist_tolerance`), and :func:`decide_exactly` picks the mask.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from sltcheck.numerics.validation import check_dps

UNIT_ROUNDOFF = 2.0**-53
# Beyond this many shortlisted masks (only with many equal candidates) only the nearest are
# decided exactly and optimality is not claimed: "gap", from the least float64 error found.
SHORTLIST_LIMIT = 100_000


def exact_sum(values: np.ndarray) -> Fraction:
    """The sum of float64 ``values``, exactly: every float64 is a 53-bit integer times a power of
    two, so the sum is an integer times the smallest of those powers, with no rounding.

    The integers are summed per power of two in numpy, split in 27-bit halves so that the
    float64 sums of bincount stay exact (below 2^53 for up to 2^25 terms); the few per-power
    totals are then shifted together in Python integers.
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size == 0:
        return Fraction(0)
    fractions, exponents = np.frexp(values)
    mantissas = np.ldexp(fractions, 53).astype(np.int64)  # exact: |mantissa| < 2^53
    powers, group = np.unique(exponents, return_inverse=True)
    high = np.bincount(group, weights=(mantissas >> 26).astype(np.float64), minlength=powers.size)
    low = np.bincount(group, weights=(mantissas & ((1 << 26) - 1)).astype(np.float64), minlength=powers.size)
    base = int(powers[0]) - 53
    total = 0
    for power, high_sum, low_sum in zip((powers - powers[0]).tolist(), high.tolist(), low.tolist(), strict=True):
        total += ((int(high_sum) << 26) + int(low_sum)) << power
    return Fraction(total << base) if base >= 0 else Fraction(total, 1 << -base)


def exact_error(target: float, candidates: np.ndarray, mask: np.ndarray) -> Fraction:
    """|w - sum_k m_k a_k| exactly (:func:`exact_sum` of w and the negated kept candidates)."""
    kept = np.asarray(candidates, dtype=np.float64)[np.asarray(mask, dtype=bool)]
    return abs(exact_sum(np.concatenate(([float(target)], -kept))))


def float64_floor(target: float, candidates: np.ndarray) -> float:
    """(n' + 4) u (|w| + sum|a|): a bound on the rounding error of evaluating w - a . m in
    float64 for any mask and any order of summation (Higham, Thm 4.4), with room to spare.
    A mask whose exact error is below it cannot be beaten by more than that rounding."""
    a = np.asarray(candidates, dtype=np.float64)
    return (a.size + 4) * UNIT_ROUNDOFF * (abs(float(target)) + float(np.abs(a).sum()))


def fraction_to_mp(value: Fraction, dps: int) -> Any:
    """``value`` as an mpf at ``dps`` digits."""
    with mpmath.workdps(check_dps(dps)):
        return mpmath.mpf(value.numerator) / value.denominator


def shortlist_tolerance(w: float, a: np.ndarray) -> float:
    """A bound, twice over, on |float64 error - exact error| of any enumerated mask.

    Subset sums carry at most n u sum|a|, the residual w - left and the final
    difference one rounding each of a number below |w| + sum|a|.
    """
    return 2.0 * (a.size + 4) * UNIT_ROUNDOFF * (abs(w) + float(np.abs(a).sum()))


def decide_exactly(w: float, a: np.ndarray, used: np.ndarray, codes: Iterable[int]) -> np.ndarray:
    """The shortlisted mask of least exact error; ties go to fewer kept weights, then lower code.

    ``codes`` are bit codes over ``used`` (bit i keeps candidate used[i]), numpy or Python
    integers (Python ones may have more than 63 bits).
    """
    best_key: tuple[Fraction, int, int] | None = None
    best_mask = np.zeros(a.size, dtype=bool)
    for code in sorted({int(code) for code in codes}):  # sorted, so ties are deterministic
        mask = np.zeros(a.size, dtype=bool)
        mask[used[[bit for bit in range(used.size) if code >> bit & 1]]] = True
        key = (exact_error(w, a, mask), int(mask.sum()), code)
        if best_key is None or key < best_key:
            best_key, best_mask = key, mask
    return best_mask
