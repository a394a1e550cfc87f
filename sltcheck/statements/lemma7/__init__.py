"""Lemma 7 (appendix A.1; workshop version: Lemma 6, "Weight Approximation").

As the paper states it: "Let W in R^{d2 x d1} be a target matrix with entries in
[-1, 1]. Let W~1 in R^{n x d1} and W~2 in R^{d2 x n} be source random matrices whose
entries are drawn i.i.d. from U[-1, 1]. For any 0 < eps < 1, suppose that
n >= d1 C log(d1 d2 / eps) for some universal constant C > 0. Then, with probability
at least 1 - eps, there exists a choice of binary masks M1 in {0, 1}^{n x d1} and
M2 in {0, 1}^{d2 x n} such that

    || W - (W~2 ⊙ M2)(W~1 ⊙ M1) ||_max <= eps / (d1 d2)."

The proof (Eqs. (6)-(8)) takes n = d1 n', makes W~1 ⊙ M1 block diagonal (group j of
n' hidden units reads input j only, weights u_j), so entry (i, j) of the product is
the subset sum sum_k m_{i,j,k} v_{i,j,k} u_{j,k} over the n' products of group j,
and then applies Lueker's subset-sum result entry by entry.

What is checked, and how. The conclusion has two parts.

- ``measured`` is the left-hand side of the existence claim itself: the smallest
  ||W - (W2⊙M2)(W1⊙M1)||_max over ALL binary masks, by exhaustive enumeration
  (:mod:`sltcheck.statements.lemma7.brute_force`; no block structure, no subset-sum solver),
  reported as a certified lower bound (the float64 optimum minus its rounding bound). Only
  small sources enumerate (min(d1, d2) n + n <= 18), so the instances keep n' small.
- ``construction`` (default): the bound is the error of the proof's masks (Eqs. (6)-(8),
  :func:`sltcheck.pruning.product_approximation.approximate_product`, exact meet-in-the-middle per
  entry), the full product formed in mpmath from the masks. The best masks can be no worse
  than the construction's, so a violation would mean the construction's masks or their
  error are wrong. The ratio says how much the block-diagonal M1 of Eq. (6) gives away:
  1 for d1 = 1 (where every mask choice is a subset sum of the n products), below 1 once
  d1, d2 >= 2 (a hidden unit may then serve several entries). That the construction's error
  equals the entrywise subset-sum optima (the decoupling of Eq. (8)) is an equality, so it
  is a unit test against an independent enumeration (tests/test_statements_weights.py),
  not a variant: a variant whose two sides are equal by construction cannot fail.
- ``as-stated`` (eps / (d1 d2)): this is a probabilistic statement, "with probability
  >= 1 - eps over W~1, W~2"; a single instance can miss it without contradicting the
  lemma, so it is NOT asserted per instance (it is not in ``VARIANTS``). It is
  estimated instead: :func:`success_frequency` draws independent (W, W~1, W~2) at a
  given n' and reports the frequency of ||error||_max <= eps/(d1 d2) with a two-sided
  95% Clopper–Pearson interval (delegating to :mod:`sltcheck.pruning.calibration`, which
  computes, per trial, the smallest n' at which the exact optimum meets the threshold),
  and :mod:`sltcheck.pruning.probability` runs it at the widths the lemma prescribes.
  The lemma holds at (d1, d2, eps, n') when the success probability is >= 1 - eps;
  a confidence interval entirely below 1 - eps would refute it at that width.

Instance fields: W (d2, d1), W1 (n, d1), W2 (d2, n), eps.

Mutants:
- ``bound-halved``: the construction's error / 2 (refuted wherever the best masks' error
  is above half the construction's, e.g. at d1 = 1 where they are equal);
- ``supremum-0.97``: the edge mutant, 0.97 x the construction's error: the supremum of
  measured / bound is 1 (attained where the best masks are the construction's), so a search
  that reaches the supremum refutes it;
- ``no-structured-mask``: the bound each entry would reach if it could choose freely
  among all n products W2[i, k] W1[k, j] (ignoring that one row of M2 serves every column
  and one row of M1 every output): a relaxation, below the best masks' error whenever
  d1, d2 >= 2 couple the entries.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

from sltcheck.numerics import precision
from sltcheck.pruning import calibration
from sltcheck.pruning.construction import approximate_product, group_size
from sltcheck.pruning.subset_sum import solve_subset_sum
from sltcheck.statement_types import Instance, Mutant
from sltcheck.statements.lemma7 import brute_force

ASSUMPTIONS = ("matrix-entries", "eps-unit")

# Digits for the construction's own mpmath error (products of two doubles are exact at 33+).
CONSTRUCTION_DPS = 40


def _arrays(instance: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    W = np.asarray(instance["W"], dtype=np.float64)
    W1 = np.asarray(instance["W1"], dtype=np.float64)
    W2 = np.asarray(instance["W2"], dtype=np.float64)
    return W, W1, W2


def masks(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """M1 (block diagonal, Eq. (6)) and M2 (entrywise optimal, Eq. (7)) of the construction."""
    W, W1, W2 = _arrays(instance)
    approximation = approximate_product(W, W1, W2, "mitm", dps=CONSTRUCTION_DPS)
    return approximation.M1, approximation.M2


def product_error(W: np.ndarray, W1: np.ndarray, W2: np.ndarray, M1: np.ndarray, M2: np.ndarray,
                  dps: int | None) -> Any:
    """||W - (W2⊙M2)(W1⊙M1)||_max, the full matrix product (float64 or mpmath at ``dps``)."""
    if dps is None:
        return float(np.abs(W - (W2 * M2) @ (W1 * M1)).max())
    work = max(dps, CONSTRUCTION_DPS)
    with mpmath.workdps(work):
        A2, A1 = precision.to_mp(W2 * M2, work), precision.to_mp(W1 * M1, work)
        target = precision.to_mp(W, work)
        rows, cols = W.shape
        worst = mpmath.mpf(0)
        for i in range(rows):
            for j in range(cols):
                entry = mpmath.fsum(A2[i, k] * A1[k, j] for k in range(A1.shape[0]))
                worst = max(worst, abs(target[i, j] - entry))
    with mpmath.workdps(dps):
        return +worst


def measured(instance: Instance, dps: int | None) -> Any:
    """A certified lower bound on min over all masks of ||W - (W2⊙M2)(W1⊙M1)||_max (enumerated)."""
    W, W1, W2 = _arrays(instance)
    value = brute_force.best_error_lower_bound(W, W1, W2)
    if dps is None:
        return value
    with mpmath.workdps(dps):
        return mpmath.mpf(value)


def construction_error(instance: Instance, dps: int | None) -> Any:
    """||W - (W2⊙M2)(W1⊙M1)||_max with the construction's masks, the full product in mpmath."""
    W, W1, W2 = _arrays(instance)
    M1, M2 = masks(instance)
    return product_error(W, W1, W2, M1, M2, dps)


def _subset_errors(targets: np.ndarray, products: np.ndarray, exact: list[list[tuple[float, float]]],
                   dps: int | None) -> Any:
    """max_p of |target_p - sum of the optimal subset of products[p]|, the subset's sum exact."""
    solve = solve_subset_sum(targets, products, solver="mitm")
    if dps is None:
        return float(solve.errors.max()) if len(targets) else 0.0
    work = max(dps, CONSTRUCTION_DPS)
    worst = mpmath.mpf(0)
    with mpmath.workdps(work):
        for p, target in enumerate(targets):
            chosen = np.flatnonzero(solve.masks[p])
            total = mpmath.fsum(mpmath.mpf(exact[p][k][0]) * mpmath.mpf(exact[p][k][1]) for k in chosen)
            worst = max(worst, abs(mpmath.mpf(target) - total))
    with mpmath.workdps(dps):
        return +worst


def entrywise_optimum(instance: Instance, dps: int | None) -> Any:
    """max_{i,j} of the optimal subset-sum error of W[i, j] over its group's n' products v u."""
    W, W1, W2 = _arrays(instance)
    d2, d1 = W.shape
    size = group_size(W1.shape[0], d1)
    targets, products, exact = [], [], []
    for i in range(d2):
        for j in range(d1):
            group = range(j * size, (j + 1) * size)
            pairs = [(float(W2[i, k]), float(W1[k, j])) for k in group]
            targets.append(float(W[i, j]))
            products.append([v * u for v, u in pairs])
            exact.append(pairs)
    return _subset_errors(np.array(targets), np.array(products).reshape(len(targets), size), exact, dps)


def unstructured_optimum(instance: Instance, dps: int | None) -> Any:
    """max_{i,j} of the optimal subset-sum error of W[i, j] over ALL n products W2[i, k] W1[k, j]."""
    W, W1, W2 = _arrays(instance)
    d2, d1 = W.shape
    n = W1.shape[0]
    targets, products, exact = [], [], []
    for i in range(d2):
        for j in range(d1):
            pairs = [(float(W2[i, k]), float(W1[k, j])) for k in range(n)]
            targets.append(float(W[i, j]))
            products.append([v * u for v, u in pairs])
            exact.append(pairs)
    return _subset_errors(np.array(targets), np.array(products).reshape(len(targets), n), exact, dps)


def _scaled(bound: Any, factor: float) -> Any:
    def scaled(instance: Instance, dps: int | None) -> Any:
        value = bound(instance, dps)
        if dps is None:
            return factor * value
        with mpmath.workdps(dps):
            return mpmath.mpf(factor) * value

    return scaled


def threshold(d1: int, d2: int, eps: float) -> float:
    """The as-stated right-hand side eps / (d1 d2)."""
    return eps / (d1 * d2)


def success_frequency(
    d1: int, d2: int, eps: float, n_prime: int, trials: int, seed: int = 0
) -> dict[str, Any]:
    """Estimated P(||W - (W~2⊙M2)(W~1⊙M1)||_max <= eps/(d1 d2)) at n = d1 n' (optimal masks).

    Draws ``trials`` independent (W, W~1, W~2) with U[-1, 1] entries (a W with entries in
    [-1, 1] as in Lemma 7), via :func:`sltcheck.pruning.calibration.critical_widths` (exact
    meet-in-the-middle per entry). Returns the success count and frequency, the 95%
    Clopper–Pearson interval of the success probability, 1 - eps, and
    C = n' / log(d1 d2 / eps), the constant this width corresponds to.
    """
    calibration._check_config(d1, d2, eps)
    if isinstance(n_prime, bool) or not isinstance(n_prime, int) or not 1 <= n_prime <= 48:
        raise ValueError(f"n_prime must be an integer in 1..48, got {n_prime!r}")
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, d1, d2, n_prime]))
    critical, near = calibration.critical_widths(d1, d2, eps, trials, rng, n_max=n_prime)
    successes = int((critical <= n_prime).sum())
    low, high = calibration.clopper_pearson(successes, trials)
    return {
        "d1": d1, "d2": d2, "eps": eps, "n_prime": n_prime, "n": d1 * n_prime, "trials": trials,
        "successes": successes, "frequency": successes / trials, "ci_low": low, "ci_high": high,
        "target": 1 - eps, "C": n_prime / math.log(d1 * d2 / eps), "near_threshold": near,
    }


VARIANTS = {"construction": construction_error}
DEFAULT_VARIANT = "construction"

MUTANTS = [
    Mutant("bound-halved", "half the construction's error (the best masks reach it at d1 = 1)",
           _scaled(construction_error, 0.5)),
    Mutant("supremum-0.97", "0.97 x the construction's error, at the edge: sup measured / bound is 1 "
           "(the best masks match the construction's wherever they decouple)",
           _scaled(construction_error, 0.97)),
    Mutant(
        "no-structured-mask",
        "each entry optimal over all n products (M1 all ones, one M2 row shared by all columns ignored)",
        unstructured_optimum,
    ),
]
