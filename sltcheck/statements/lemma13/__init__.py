"""Lemma 13 (appendix A.5; not in the workshop version): the target block is Lipschitz in its input.

As the paper states it: "An arbitrary target Attention block Blk_T(.) holds the
following inequality:

    ||Blk_T(x_i) - Blk_T(x'_i)|| <= H sqrt(d1) (alpha (exp(4 alpha eps_max) - 1) + 2 eps_max)."

(with X' as in Lemma 12: max_i ||x_i - x'_i|| <= eps_max, ||x'_i|| <= alpha).
Blk_T(x) = F_T(Attn_T(x)^T + x) + Attn_T(x)^T + x (Section 3.3, no normalisation).

The proof ends with a bound TWICE the stated one:
||Blk(x) - Blk(x')|| <= 2 ||Attn(x) - Attn(x')|| + 2 ||x - x'||
<= 2 H sqrt(d1) (alpha (exp(4 alpha eps_max) - 1) + eps_max) + 2 eps_max
<= 2 H sqrt(d1) (alpha (exp(4 alpha eps_max) - 1) + 2 eps_max).
Its first step uses ||F_T(u) - F_T(v)|| <= ||u - v||, which needs every FC layer
of spectral norm <= 1 (assumption fc-spectral; ReLU is 1-Lipschitz).

Variants:
- ``as-proven`` (default): 2 H sqrt(d1) (alpha (exp(4 alpha eps_max) - 1) + 2 eps_max),
  the proof's last line.
- ``as-stated``: H sqrt(d1) (alpha (exp(4 alpha eps_max) - 1) + 2 eps_max), the
  statement (a factor 2 smaller than what the proof shows).

Finding: the statement as printed is FALSE, and its tight constant is 25/24. Over every instance
(any T) the supremum of measured / bound is 25/24 = 1.0416667 as stated and 25/48 = 0.5208333 as
proven (proved in :mod:`sltcheck.statements.lemma13.worst_case`): at d1 = d2 = d_K = d_V = H = 1, alpha = 1,
full mask, the FC layer the identity, tokens at +-alpha all moved inward, a fraction 5 / (3 e^2 + 5) =
0.184046 of them at +alpha (the query among those), as eps_max -> 0. The fraction is irrational, so the
supremum is approached, never attained; d1 >= 2 or H >= 2 admit less (there the statement holds). The
smallest K with ||Blk_T(x_i) - Blk_T(x'_i)|| <= K H sqrt(d1) (alpha (exp(4 alpha eps_max) - 1) + 2 eps_max)
is K = 25/24: between the statement's 1 and the proof's 2, near 1. Why: to first order in eps the block
doubles the residual stream's change (F_T = id), so the left side is 2 (eps + a) with a the
attention's change, up to (2 + 1/8) eps at alpha = 1, above the 2 alpha^2 eps the statement leaves room
for once its factor 2 is gone. ``COUNTEREXAMPLES["as-stated"]``: the first one the worst-case search
found (T = 4, ratio 1.0218, certified in interval arithmetic); ``LARGEST_COUNTEREXAMPLES["as-stated"]``:
7 of 38 tokens at +alpha, ratio 1.0416665 (what ``sltcheck check`` finds through its structured
shapes, :mod:`sltcheck.harness.sequence`). The ``as-proven`` bound (factor 2) holds; Theorem 14's proof
uses the statement, which its variant ``lemma13-as-stated`` records.

Instance fields: those of Lemma 12 with d1 = d2, plus fc_layers (L matrices (d1, d1)).
"""

from __future__ import annotations

from functools import partial

from sltcheck.statement_types import Instance, Mutant
from sltcheck.statements.lemma13 import worst_case
from sltcheck.statements.shared.lipschitz import lipschitz_bound, output_shift, supremum_bound

ASSUMPTIONS = (
    "alpha-large",
    "token-norm",
    "target-spectral",
    "fc-spectral",
    "mask-rows",
    "square-block",
    "input-perturbation",
)


def measured(instance: Instance, dps: int | None) -> object:
    return output_shift(instance, dps, with_block=True)


as_proven = partial(lipschitz_bound, factor=2.0, eps_weight=2.0)
as_stated = partial(lipschitz_bound, factor=1.0, eps_weight=2.0)

VARIANTS = {"as-proven": as_proven, "as-stated": as_stated}

# Instances on which a variant is violated (exact JSON, floats as float.hex), pinned by
# @example in properties/ and replayed by the tests: the findings of the docstring.
COUNTEREXAMPLES: dict[str, dict[str, object]] = {
    "as-stated": {
        "alpha": {"float": "0x1.00001bd82f52bp+0"}, "d1": 1, "d2": 1,
        "X": {"shape": [4, 1], "dtype": "float64",
              "hex": ["-0x1.00001bd82f51bp+0", "0x1.00001bd82f51bp+0", "-0x1.00001bd82f51bp+0",
                      "-0x1.00001bd82f51bp+0"]},
        "X_perturbed": {"shape": [4, 1], "dtype": "float64",
                        "hex": ["-0x1.fffed2d86c9d2p-1", "0x1.fffed2d86c9d2p-1", "-0x1.fffed2d86c9d2p-1",
                                "-0x1.fffed2d86c9d2p-1"]},
        "mask": {"shape": [4, 4], "dtype": "int8", "int": [1] * 16},
        "W_Q": {"shape": [1, 1, 1], "dtype": "float64", "hex": ["0x1.fffffffffffe0p-1"]},
        "W_K": {"shape": [1, 1, 1], "dtype": "float64", "hex": ["0x1.fffffffffffe0p-1"]},
        "W_V": {"shape": [1, 1, 1], "dtype": "float64", "hex": ["0x1.fffffffffffe0p-1"]},
        "W_O": {"shape": [1, 1, 1], "dtype": "float64", "hex": ["0x1.fffffffffffe0p-1"]},
        "eps_max": {"float": "0x1.64d7f20642fbbp-17"},
        "fc_layers": {"list": [{"shape": [1, 1], "dtype": "float64", "hex": ["0x1.fffffffffffe0p-1"]}]},
    }
}
# The largest violation known of each false variant (exact JSON), pinned by @example beside
# COUNTEREXAMPLES: Lemma 13 as stated at d1 = d2 = d_K = d_V = H = L = 1, T = 38, full mask, alpha = 1:
# 7 tokens at +alpha (a few ulps inside) and 31 at -alpha, every token moved inward by eps_max = 1e-8,
# every weight and the FC layer a few ulps below 1 (worst_case.two_value_instance(7, 38, 1.0, 1e-8, L=1)):
# ratio 1.0416665 at 60 digits, 1 - 2e-7 of the supremum 25/24 (7/38 is the fraction nearest
# 5 / (3 e^2 + 5) with T <= 64).
_INSIDE, _MOVED = "0x1.fffffffffffe0p-1", "0x1.ffffffaa19c28p-1"  # 1 - 2^-48 and fl(1 - 2^-48 - 1e-8), inward
LARGEST_COUNTEREXAMPLES: dict[str, dict[str, object]] = {
    "as-stated": {
        "alpha": {"float": "0x1.0000000000000p+0"}, "d1": 1, "d2": 1,
        "X": {"shape": [38, 1], "dtype": "float64", "hex": [_INSIDE] * 7 + ["-" + _INSIDE] * 31},
        "X_perturbed": {"shape": [38, 1], "dtype": "float64", "hex": [_MOVED] * 7 + ["-" + _MOVED] * 31},
        "mask": {"shape": [38, 38], "dtype": "int8", "int": [1] * (38 * 38)},
        "W_Q": {"shape": [1, 1, 1], "dtype": "float64", "hex": [_INSIDE]},
        "W_K": {"shape": [1, 1, 1], "dtype": "float64", "hex": [_INSIDE]},
        "W_V": {"shape": [1, 1, 1], "dtype": "float64", "hex": [_INSIDE]},
        "W_O": {"shape": [1, 1, 1], "dtype": "float64", "hex": [_INSIDE]},
        "eps_max": {"float": "0x1.5798ee2308c3ap-27"},
        "fc_layers": {"list": [{"shape": [1, 1], "dtype": "float64", "hex": [_INSIDE]}]},
    }
}
# The finding in the paper's terms, one sentence per false variant (the report's lead).
FINDINGS: dict[str, str] = {
    "as-stated": "Lemma 13 as printed lacks the factor 2 its proof derives (the supremum of measured / bound is "
                 "25/24, not 1); Theorem 14's proof uses the printed form; the proven form (factor 2) holds.",
}
DEFAULT_VARIANT = "as-proven"

# The suprema of measured / bound over every instance, proved in worst_case.py.
SUPREMUM_AS_STATED = worst_case.SUPREMUM_AS_STATED
SUPREMUM_AS_PROVEN = worst_case.SUPREMUM_AS_PROVEN
EDGE = 0.97  # the edge mutant sits at EDGE x the supremum of the measured side: refuted only by a strong search

# The smallest c with measured <= c x the printed bound (sltcheck.repaired): the statement's K = 1
# must be 25/24, the proof's 2 is 48/25 times too large.
REPAIRED_CONSTANTS = [
    {"variant": "as-stated", "constant": SUPREMUM_AS_STATED, "exact": "25/24", "attained": False, "upper": "proof",
     "where": "sltcheck/statements/lemma13/worst_case.py",
     "why": "1 + 1/(8 alpha^2 (2 alpha^2 + 1)) at d1 = H = 1, largest at alpha = 1; the fraction "
            "5/(3 e^2 + 5) of the tokens at +alpha is irrational: approached, never attained"},
    {"variant": "as-proven", "constant": SUPREMUM_AS_PROVEN, "exact": "25/48", "attained": False, "upper": "proof",
     "where": "sltcheck/statements/lemma13/worst_case.py", "why": "half the as-stated supremum"},
]

supremum = partial(supremum_bound, with_block=True)

MUTANTS = [
    Mutant(
        "supremum-0.97",
        f"{EDGE} x the supremum of the left side at d1 = 1, 2 eps_max (H phi(alpha^2 / sqrt(d_K)) + 1): refuted "
        "only by a search that gets within 3% (two token values at +-alpha in the right proportion)",
        partial(supremum_bound, fraction=EDGE, with_block=True),
    ),
    Mutant(
        "no-fc-spectral",
        "drops ||W_l|| <= 1 for the FC layers (layers up to 4x)",
        as_proven,
        drop=("fc-spectral",),
    ),
    Mutant(
        "no-input-perturbation",
        "drops max_i ||x_i - x'_i|| <= eps_max (steps up to 64 eps_max)",
        as_proven,
        drop=("input-perturbation",),
    ),
    Mutant(
        "as-stated-eighth",
        "H sqrt(d1) (...)/8: the statement's bound divided by 8 (the search reaches ~3/4 of it)",
        partial(lipschitz_bound, factor=0.125, eps_weight=2.0),
    ),
]


# The lower end of the bracket at the slack table's d1 = 2 parameters, as
# worst_case.supremum(H=1, d1=2, L=1, alpha=2.0, eps_max=0.05, random_starts=1)["lower"] computes it: the
# larger of Lemma 12's dedicated search and worst_case.WITNESS, the worst-case search's best there
# (tests/test_search.py recomputes it).
BRACKET_LOWER = 0.6974488686580174


# Search power (sltcheck.harness.power): at d1 = 1 the search, not told the two token values nor their
# fraction, must reach the proved supremum of the measured side (its torch twin gives the climbs their
# gradients); at the slack table's d1 = 2 parameters its best measured value must reach the lower end of
# the bracket in sltcheck.statements.lemma13.worst_case.
POWER_CASES = [
    {"fixed": {"H": 1, "d1": 1, "dK": 1, "dV": 1, "L": 1, "alpha": 1.0}, "supremum": supremum,
     "differentiable": "supremum"},
    {"fixed": {"H": 1, "d1": 2, "alpha": 2.0, "eps_max": 0.05, "L": 1}, "variant": "as-proven",
     "lower": BRACKET_LOWER},
]
