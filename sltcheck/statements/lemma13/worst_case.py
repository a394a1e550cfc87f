"""Lemma 13 (the target block is Lipschitz in its input): the supremum at d1 = 1 in closed form
(proved below), a certified upper bound and the best instance found for d1 >= 2.

Parameters: those of Lemma 12 with d2 = d1, and L, the number of FC layers. The measured side is
max_i ||Blk_T(x_i) - Blk_T(x'_i)|| with Blk(x) = F(z) + z, z = Attn(x)^T + x, every FC layer of spectral
norm <= 1, any sequence length T.

d1 = 1: the supremum (proved). With phi and t = alpha^2 / sqrt(d_K) of
:mod:`sltcheck.statements.lemma12.worst_case`:

    sup ||Blk_T(x_i) - Blk_T(x'_i)|| = 2 eps_max (H phi(t) + 1) (its limit as eps_max -> 0; an upper bound
    at every eps_max), approached, never attained.

Proof. (1) F is 1-Lipschitz (layers of spectral norm <= 1, ReLU 1-Lipschitz), so
||Blk(x') - Blk(x)|| <= ||F(z') - F(z)|| + ||z' - z|| <= 2 ||z' - z||, with equality when F is the identity
on the segment from z to z' (L = 1 and W_1 = 1; or W_l = 1 on a positive residual).
(2) z = Attn(x_i; X) + x_i, so along a direction delta (|delta_k| <= eps) its derivative is
eps (sum_j v_j f_j + u_i) with f_j, u_i of Lemma 12's proof (steps 1-5): |.| <= eps (H phi(t) + 1).
(3) The mean-value argument of Lemma 12's step 6 gives ||z' - z|| <= eps_max (H phi(t) + 1) at every
eps_max, hence the claim's upper bound.
(4) Approach: Lemma 12's extremal family (step 7: tokens at +-alpha, a fraction pi*(t) of them at +alpha,
the query among those, W = 1, every token moved inward) has f = -phi(t) and u_i = -1 in every head, so
the derivative of z is -eps (H phi(t) + 1); F the identity doubles it. The fraction pi*(1) = 5 / (3 e^2 + 5)
is irrational, so no finite T realises it, and at finite eps the ratio is strictly below its limit.  []

The ratios (d1 = 1; the statement's bound H (alpha (e^{4 alpha eps} - 1) + 2 eps) > H (4 alpha^2 + 2) eps):

- ``as-stated``: measured / bound < 2 (H phi(alpha^2) + 1) / (H (4 alpha^2 + 2)) = (phi + 1/H) / (2 alpha^2 + 1),
  largest at H = 1 and d_K = 1, where it is (2 alpha^2 + 1 + 1 / (8 alpha^2)) / (2 alpha^2 + 1)
  = 1 + 1 / (8 alpha^2 (2 alpha^2 + 1)), decreasing in alpha: the supremum is 25/24 = 1.0416667 at
  alpha = 1 (approached as eps_max -> 0 and the fraction -> 5 / (3 e^2 + 5); T = 38 with 7 tokens at
  +alpha gives 1.0416665). So the statement is false, and the smallest constant K with
  ||Blk_T(x_i) - Blk_T(x'_i)|| <= K H sqrt(d1) (alpha (exp(4 alpha eps_max) - 1) + 2 eps_max) for every
  instance is K = 25/24: between the statement's 1 and the proof's 2, much nearer 1. With H >= 2 the ratio
  is below (phi + 1/2) / (2 alpha^2 + 1) < 1 (the statement holds there).
- ``as-proven`` (factor 2): half of it, supremum 25/48 = 0.5208333 at alpha = 1.

d1 >= 2 admits no more: U_13 below is at most 2 (H (2 alpha^2 + 1) + 1) eps, so as stated the ratio is at
most (2 alpha^2 + 1 + 1/H) / (sqrt(d1) (2 alpha^2 + 1)) <= 6 / (5 sqrt 2) = 0.849 (alpha^2 >= d1 >= 2).

Upper bound for any d1 (proved). U_13 = 2 (U_12 + eps_max), with U_12 of
:mod:`sltcheck.statements.lemma12.worst_case`: ||z - z'|| <= ||Attn(x) - Attn(x')|| + ||x - x'|| <= U_12 + eps_max,
and F doubles at most, as in (1). Lower bound for d1 >= 2 (searched): Lemma 12's search (same layouts and
construction) with the L FC layers as free parameters projected into the spectral unit ball, started from
identity layers. At d1 = 1, :func:`supremum` returns the bracket [the realised extremal instance at eps_max
(T <= 64); 2 eps_max (H phi + 1)], whose ends meet as eps_max -> 0.

Slack of the default (as-proven) bound 2 H sqrt(d1) (alpha (e^{4 alpha eps} - 1) + 2 eps) over U_13:
about sqrt(d1) (4 alpha^2 H + 2 H) / (2 alpha^2 H + H + 1) for small eps.
"""

from __future__ import annotations

import math
from typing import Any

from sltcheck.statements.lemma12 import worst_case as w12
from sltcheck.statements.shared.suprema import BRACKET, alpha_for, nonneg, positive_int, result

PARAMS = ("H", "d1", "L", "alpha", "eps_max")


def upper(H: int, alpha: float, eps_max: float, d_key: int = 1) -> float:
    return 2 * (w12.upper(H, alpha, eps_max, d_key) + eps_max)


def paper_bound(H: int, d1: int, alpha: float, eps_max: float) -> float:
    """The default (as-proven) bound: twice the statement's."""
    return 2 * H * math.sqrt(d1) * (alpha * math.expm1(4 * alpha * eps_max) + 2 * eps_max)


def block_supremum(H: int, alpha: float, eps_max: float, d_key: int = 1) -> float:
    """2 eps_max (H phi(alpha^2 / sqrt(d_K)) + 1): at d1 = 1 an upper bound on Lemma 13's measured side
    for every eps_max and its limit as eps_max -> 0 (the docstring's claim)."""
    return 2 * eps_max * (H * w12.phi(alpha * alpha / math.sqrt(d_key)) + 1)


def ratio_supremum(alpha: float, H: int = 1, d_key: int = 1, proven: bool = False) -> float:
    """The supremum over eps_max and every sequence of measured / bound at d1 = 1 and this alpha:
    (H phi(t) + 1) / (H (2 alpha^2 + 1)) as stated, half of it as proven."""
    value = (H * w12.phi(alpha * alpha / math.sqrt(d_key)) + 1) / (H * (2 * alpha * alpha + 1))
    return value / 2 if proven else value


# The suprema of measured / bound over every instance (d1 = H = d_K = 1, alpha = 1): the docstring's.
SUPREMUM_AS_STATED = 25 / 24
SUPREMUM_AS_PROVEN = 25 / 48
FRACTION_AT_ONE = w12.FRACTION_AT_ONE  # the fraction of the tokens at +alpha they need, 5 / (3 e^2 + 5)


# The worst-case search's best at the slack table's d1 = 2 parameters (H = L = 1, alpha = 2, eps_max = 0.05;
# ci profile, seed 0), above what Lemma 12's search() finds there: two token values, 63 and 1 of 64 tokens.
WITNESS: dict[str, Any] = {"alpha": {"float": "0x1.0000000000000p+1"},
     "d1": 2,
     "d2": 2,
     "X": {"shape": [2, 2],
           "dtype": "float64",
           "hex": ["-0x1.d3b6856bc6bf4p-1", "-0x1.c778f1d4b3f15p+0", "0x1.05fac4d3f6691p-1", "0x1.eef5d4c6ed528p+0"]},
     "X_perturbed": {"shape": [2, 2],
                     "dtype": "float64",
                     "hex": ["-0x1.e6431b13232ecp-1", "-0x1.bea698d8926a8p+0", "0x1.096c3c73f3bf3p-1",
                             "0x1.e246cf27ade06p+0"]},
     "mask": {"shape": [2, 2], "dtype": "int8", "int": [1, 1, 1, 1]},
     "W_Q": {"shape": [1, 2, 1], "dtype": "float64", "hex": ["-0x1.92e254ee65c78p-6", "0x1.ffd85dbd9cccdp-1"]},
     "W_K": {"shape": [1, 2, 1], "dtype": "float64", "hex": ["-0x1.10bc9189d0c2cp-1", "0x1.b14fb6656385ap-1"]},
     "W_V": {"shape": [1, 2, 1], "dtype": "float64", "hex": ["0x1.d398971dfa736p-2", "0x1.c780a0937a44fp-1"]},
     "W_O": {"shape": [1, 1, 2], "dtype": "float64", "hex": ["0x1.3525621e3a2bep-4", "0x1.fe8a243d24e4ep-1"]},
     "eps_max": {"float": "0x1.999999999999ap-5"},
     "fc_layers": {"list": [{"shape": [2, 2],
                             "dtype": "float64",
                             "hex": ["0x1.57d55603a5105p-2", "0x1.16a202b280738p-4", "0x1.8eeb1663d4343p-5",
                                     "0x1.fd569f4fb8cb3p-1"]}]},
     "multiplicity": {"shape": [2], "dtype": "float64", "hex": ["0x1.f800000000000p-1", "0x1.0000000000000p-6"]}}



def supremum(H: int = 1, d1: int = 2, L: int = 1, alpha: float | None = None, eps_max: float = 0.05,
             random_starts: int = 2, seed: int = 0) -> dict[str, Any]:
    from sltcheck import assumptions
    from sltcheck.statements import lemma13

    H, d1, L = positive_int("H", H), positive_int("d1", d1), positive_int("L", L)
    alpha = alpha_for(d1, d1, alpha)
    eps_max = nonneg("eps_max", eps_max)
    if d1 == 1:  # the closed form: the realised extremal family below its eps -> 0 value
        instance = w12.two_value_instance(*w12.closest_count(alpha * alpha), alpha, eps_max, H=H, L=L)
        upper_end = block_supremum(H, alpha, eps_max)
    else:
        instance = w12.search(H, d1, d1, alpha, eps_max, L=L, random_starts=random_starts, seed=seed,
                              measured=lemma13.measured)
        pinned = w12.witness(WITNESS, "lemma13", {"H": H, "d1": d1, "d2": d1, "alpha": alpha, "eps_max": eps_max,
                                                  "L": L})
        if pinned is not None and w12.measured_value("lemma13", pinned) > w12.measured_value("lemma13", instance):
            instance = pinned
        upper_end = upper(H, alpha, eps_max)
    assumptions.require("lemma13", instance)
    lower = float(lemma13.measured(instance, 30))  # type: ignore[arg-type]
    return result("lemma13", BRACKET, lower, upper_end, instance, paper_bound(H, d1, alpha, eps_max),
                  {"H": H, "d1": d1, "L": L, "alpha": alpha, "eps_max": eps_max})


# The report's slack table, rows (statement, params): d1 = 1 (the closed form, its ends within O(eps) of
# each other) and d1 = 2 (a searched bracket).
SLACK_ROWS = [("lemma13", dict(H=1, d1=1, alpha=1.0, eps_max=1e-3)),
              ("lemma13", dict(H=1, d1=2, alpha=2.0, eps_max=0.05, random_starts=1))]
