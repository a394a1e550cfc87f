"""The best masks of Lemma 7 by exhaustive enumeration: min over ALL (M1, M2) of ||W - (W2⊙M2)(W1⊙M1)||_max.

Independent of the construction and of every subset-sum solver: no block structure is
assumed. Given M1 the rows of the product decouple (row i of M2 is a subset of the n hidden
units), so the optimum is

    min over M1 in {0,1}^{n x d1} of max_i min over S ⊆ [n] of max_j |W[i,j] - sum_{k in S} W2[i,k] W1[k,j] M1[k,j]|,

2^{n d1} x 2^n candidates. When d2 < d1 the transposed problem (W^T ≈ (W1⊙M1)^T (W2⊙M2)^T) is
enumerated instead, 2^{n d2} x 2^n. ``MAX_BITS`` caps the exponent, so only small n' run.

The enumeration is float64. Every candidate error is a sum of at most n + 1 terms of size
<= max(1, |W|) (products of entries in [-1, 1]), so it is within ``rounding_bound`` of the
exact value; :func:`best_error_lower_bound` returns the float optimum minus that bound, a
certified lower bound on the exact optimum (never above it, whatever the rounding did).
"""

from __future__ import annotations

import itertools

import numpy as np

# 2^MAX_BITS (outer mask, inner subset) pairs at most: 262,144, a few milliseconds.
MAX_BITS = 18
UNIT_ROUNDOFF = 2.0**-53


def cost_bits(d1: int, d2: int, n: int) -> int:
    """log2 of the number of (outer mask, row subset) pairs the enumeration visits."""
    return min(d1, d2) * n + n


def max_group_size(d1: int, d2: int) -> int:
    """The largest n' (n = d1 n') the enumeration takes for a d2 x d1 target."""
    return max(0, MAX_BITS // ((min(d1, d2) + 1) * d1))


def _subsets(n: int) -> np.ndarray:
    return np.array(list(itertools.product((0.0, 1.0), repeat=n)), dtype=np.float64).reshape(2**n, n)


def rounding_bound(W: np.ndarray, n: int) -> float:
    """A bound on |float64 candidate error - exact candidate error| (n products of [-1, 1] entries)."""
    scale = max(1.0, float(np.abs(W).max(initial=0.0))) + n
    return 4.0 * (n + 2) * scale * UNIT_ROUNDOFF


def best_error_float(W: np.ndarray, W1: np.ndarray, W2: np.ndarray) -> float:
    """min over all masks of the float64 max-norm error (raises ValueError above ``MAX_BITS``)."""
    d2, d1 = W.shape
    n = W1.shape[0]
    if cost_bits(d1, d2, n) > MAX_BITS:
        raise ValueError(
            f"n (rows of W1) = {n} with a {d2} x {d1} target needs 2^{cost_bits(d1, d2, n)} candidates; "
            f"the enumeration allows n with min(d1, d2) n + n <= {MAX_BITS}"
        )
    if d2 < d1:  # enumerate the smaller side's mask: W^T ≈ (W1⊙M1)^T (W2⊙M2)^T
        W, W1, W2 = W.T, W2.T, W1.T
        d2, d1 = d1, d2
    subsets = _subsets(n)  # (2^n, n): row subsets of M2
    outer = _subsets(n * d1).reshape(-1, n, d1)  # every M1
    best = np.full(outer.shape[0], -np.inf)
    for i in range(d2):
        # sums[m, s, j] = sum_k S[s, k] W2[i, k] W1[k, j] M1_m[k, j]
        pruned = outer * (W2[i][:, None] * W1)[None]
        sums = np.einsum("sk,mkj->msj", subsets, pruned)
        row = np.abs(W[i][None, None, :] - sums).max(axis=2).min(axis=1)
        best = np.maximum(best, row)
    return float(best.min())


def best_masks(W: np.ndarray, W1: np.ndarray, W2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M1, M2) attaining :func:`best_error_float` (the float64 optimum): their exact error is an
    upper bound on the exact optimum, as :func:`best_error_lower_bound` is a lower one."""
    d2, d1 = W.shape
    n = W1.shape[0]
    best_error_float(W, W1, W2)  # the same size check
    transposed = d2 < d1
    if transposed:
        W, W1, W2 = W.T, W2.T, W1.T
        d2, d1 = d1, d2
    subsets = _subsets(n)
    outer = _subsets(n * d1).reshape(-1, n, d1)
    best = np.full(outer.shape[0], -np.inf)
    for i in range(d2):
        sums = np.einsum("sk,mkj->msj", subsets, outer * (W2[i][:, None] * W1)[None])
        best = np.maximum(best, np.abs(W[i][None, None, :] - sums).max(axis=2).min(axis=1))
    M1 = outer[int(np.argmin(best))]
    rows = [np.abs(W[i][None, :] - subsets @ (W2[i][:, None] * W1 * M1)).max(axis=1).argmin() for i in range(d2)]
    M2 = subsets[np.asarray(rows, dtype=int)]
    return (M2.T, M1.T) if transposed else (M1, M2)


def best_error_lower_bound(W: np.ndarray, W1: np.ndarray, W2: np.ndarray) -> float:
    """A certified lower bound on the exact optimum over all masks (float optimum - rounding bound, >= 0)."""
    return max(0.0, best_error_float(W, W1, W2) - rounding_bound(W, W1.shape[0]))


def entrywise_optimum_brute(W: np.ndarray, W1: np.ndarray, W2: np.ndarray) -> np.ndarray:
    """Per entry (i, j), min over subsets of its group's n' products |W[i,j] - sum v u| (float64).

    The construction's claim (Eq. (8)): with the block-diagonal M1 its error is exactly these
    entrywise optima; enumerated here over all 2^{n'} subsets, no solver involved."""
    d2, d1 = W.shape
    size = W1.shape[0] // d1
    subsets = _subsets(size)
    out = np.empty((d2, d1))
    for j in range(d1):
        group = slice(j * size, (j + 1) * size)
        for i in range(d2):
            sums = subsets @ (W2[i, group] * W1[group, j])
            out[i, j] = np.abs(W[i, j] - sums).min()
    return out
