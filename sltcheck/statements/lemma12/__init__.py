"""Lemma 12 (appendix A.5; not in the workshop version): the target MHA is Lipschitz in its input.

As the paper states it: "Let X' = [x'_1, ..., x'_T]^T be a perturbed input matrix,
which satisfies max_{i in [T]} ||x_i - x'_i|| <= eps_max. Then, an arbitrary target
MHA Attn_T(.) holds the following inequality:

    ||Attn_T(x_i) - Attn_T(x'_i)|| <= H sqrt(d1) (alpha (exp(4 alpha eps_max) - 1) + eps_max)."

Here Attn_T(x'_i) is evaluated on the perturbed sequence X' (the proof compares
sigma(x_i^T W_QK X^T) X W_VO with sigma(x'_i^T W_QK X'^T) X' W_VO). The proof
bounds the logit perturbation by 2 alpha eps_max using ||W_QK|| <= 1 and
||x_k||, ||x'_i|| <= alpha (so the perturbed tokens must satisfy the token-norm
assumption too: both X and X' are checked), applies Lemma 8 with
eps' = 2 alpha eps_max (giving exp(4 alpha eps_max) - 1), bounds
||p' (X - X')|| <= sqrt(d1) eps_max, uses ||W_VO|| <= 1 and sums over heads.
The left side is taken as the max over every row i.

Variants:
- ``as-stated`` (default; statement and proof agree).
- ``key-scaled``: the same chain with ||W_QK|| <= 1/sqrt(d_K) (Eq. 12, available but
  unused): exp(4 alpha eps_max / sqrt(d_K)) - 1. Also a valid bound.

Notes: Theorem 14's proof applies this lemma to perturbed inputs bounded by
2 beta rather than alpha (the perturbed tokens of a block may leave the alpha-ball);
with ||x'|| <= alpha + eps_max the logit perturbation is
alpha eps_max + (alpha + eps_max) eps_max, slightly more than 2 alpha eps_max.
This module keeps the lemma's own hypothesis (||x'_i|| <= alpha).

Finding: the bound holds with room, and its tight constant is known. At d1 = 1 the supremum of
measured / bound over every instance (any T) is 1/2 (proved in :mod:`sltcheck.statements.lemma12.worst_case`:
(2 alpha^2 + 1/(8 alpha^2)) / (4 alpha^2 + 1) at each alpha, 0.425 at alpha = 1, tending to 1/2 as alpha
grows), approached as eps_max -> 0 with a fraction of the tokens at +alpha that tends to
(4t + 1)/(4t - 1) e^{-2t} (t = alpha^2), never attained; d1 >= 2 and H >= 2 admit no more. Over
sequences of at most 64 tokens the best is 0.4547 (one token at +alpha among 64, alpha = 1.4842),
what ``sltcheck check`` reaches through its structured shapes (:mod:`sltcheck.harness.sequence`). The
key-scaled reading's supremum is 1 (approached as d_K grows).

Instance fields: alpha, d1, d2, X, X_perturbed (T, d1), mask (T, T),
W_Q, W_K (H, d1, d_K), W_V (H, d1, d_V), W_O (H, d_V, d2), eps_max.
"""

from __future__ import annotations

from functools import partial

from sltcheck.statement_types import Instance, Mutant
from sltcheck.statements.lemma12 import worst_case
from sltcheck.statements.shared.lipschitz import lipschitz_bound, output_shift, supremum_bound

ASSUMPTIONS = ("alpha-large", "token-norm", "target-spectral", "mask-rows", "input-perturbation")


def measured(instance: Instance, dps: int | None) -> object:
    return output_shift(instance, dps, with_block=False)


as_stated = partial(lipschitz_bound, factor=1.0, eps_weight=1.0)

VARIANTS = {
    "as-stated": as_stated,
    "key-scaled": partial(lipschitz_bound, factor=1.0, eps_weight=1.0, key_scaled=True),
}
DEFAULT_VARIANT = "as-stated"

# The suprema of measured / bound, proved in worst_case.py (d1 = 1): over every instance (alpha -> infinity),
# at alpha = 1, and the best over sequences of at most 64 tokens (worst_case.longest_supremum()).
SUPREMUM = worst_case.SUPREMUM
SUPREMUM_AT_ONE = worst_case.SUPREMUM_AT_ONE
LONGEST_SUPREMUM = worst_case.LONGEST["ratio"]
EDGE = 0.97  # the edge mutant sits at EDGE x the supremum of the measured side: refuted only by a strong search

# The smallest c with measured <= c x the printed bound (sltcheck.repaired).
REPAIRED_CONSTANTS = [
    {"variant": "as-stated", "constant": SUPREMUM, "exact": "1/2", "attained": False, "upper": "proof",
     "where": "sltcheck/statements/lemma12/worst_case.py",
     "why": "(2 alpha^2 + 1/(8 alpha^2)) / (4 alpha^2 + 1) at d1 = 1 tends to 1/2 as alpha grows (T ~ e^{2 alpha^2}); "
            "d1 >= 2 and H >= 2 admit less"},
]

supremum = partial(supremum_bound, with_block=False)

MUTANTS = [
    Mutant(
        "supremum-0.97",
        f"{EDGE} x the supremum of the left side at d1 = 1, H eps_max phi(alpha^2 / sqrt(d_K)): refuted only by "
        "a search that gets within 3% (two token values at +-alpha in the right proportion)",
        partial(supremum_bound, fraction=EDGE),
    ),
    Mutant(
        "no-input-perturbation",
        "drops max_i ||x_i - x'_i|| <= eps_max (steps up to 64 eps_max)",
        as_stated,
        drop=("input-perturbation",),
    ),
    Mutant(
        "no-target-spectral",
        "drops ||W_Q||, ||W_K||, ||W_V||, ||W_O|| <= 1 (weights up to 4x)",
        as_stated,
        drop=("target-spectral",),
    ),
    Mutant(
        "value-term-only",
        "H sqrt(d1) eps_max: the softmax term alpha (exp(4 alpha eps_max) - 1) removed",
        partial(lipschitz_bound, factor=1.0, eps_weight=1.0, include_alpha_term=False),
    ),
]


# The lower end of the bracket at the slack table's d1 = 2 parameters, as
# worst_case.supremum(H=1, d1=2, alpha=2.0, eps_max=0.05, random_starts=1)["lower"] computes it: the larger
# of its dedicated search and worst_case.WITNESS, the worst-case search's best there (tests/test_search.py
# recomputes it).
BRACKET_LOWER = 0.30132882476002953


# Search power (sltcheck.harness.power): at d1 = 1 the search, not told the two token values nor their
# fraction (5 / (3 e^2 + 5) at alpha = 1, 0.023 at alpha = sqrt 2: a token in 43), must reach the proved
# supremum of the measured side (its torch twin, differentiable.py's "supremum", gives the climbs their
# gradients); at the slack table's d1 = 2 parameters its best measured value must reach the lower end
# of the bracket in sltcheck.statements.lemma12.worst_case.
POWER_CASES = [
    {"fixed": {"H": 1, "d1": 1, "d2": 1, "dK": 1, "dV": 1, "alpha": 1.0}, "supremum": supremum,
     "differentiable": "supremum"},
    {"fixed": {"H": 1, "d1": 1, "d2": 2, "dK": 1, "dV": 1, "alpha": 1.4142135623730951 * (1 + 2**-52)},
     "supremum": supremum, "differentiable": "supremum"},
    {"fixed": {"H": 1, "d1": 2, "d2": 2, "alpha": 2.0, "eps_max": 0.05}, "variant": "as-stated",
     "lower": BRACKET_LOWER},
]
