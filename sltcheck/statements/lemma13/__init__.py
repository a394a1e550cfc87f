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

Finding: the statement as printed is FALSE. The worst-case search
(:mod:`sltcheck.harness.search`, ci budget, seed 0) finds, in the smallest dimensions
(d1 = d2 = d_K = d_V = H = L = 1, T = 4, full mask), alpha = 1.0000017, tokens
(-a, a, -a, -a) on the alpha-sphere, every token moved inward by eps_max = 1.06e-5,
W_Q = W_K = W_V = W_O = 1 and the FC layer 1 (all a few ulps inside their limits):
measured 6.5202e-5 > bound 6.3810e-5, ratio 1.0218, decided at 40 and 80 digits and
certified in interval arithmetic (``COUNTEREXAMPLES["as-stated"]``, exact). With T = 5 the
ratio reaches 1.0402 (``LARGEST_COUNTEREXAMPLES["as-stated"]``, found by the independent
search of ``benchmarks/independent_search.py``). Why: to first
order in eps the block doubles the residual stream's change (F_T = id on positive inputs), so
the left side is 2 (eps + a) with a the attention's change, and the attention change here
is about 2.07 eps, above the 2 alpha^2 eps the statement leaves room for once its factor 2
is gone (bound ~ (4 alpha^2 + 2) eps at alpha = 1). The ``as-proven`` bound (factor 2)
holds on the same instance (ratio 0.511); Theorem 14's proof uses the statement, which
its variant ``lemma13-as-stated`` records.

Instance fields: those of Lemma 12 with d1 = d2, plus fc_layers (L matrices (d1, d1)).
"""

from __future__ import annotations

from functools import partial

from sltcheck.statements import Instance, Mutant
from sltcheck.statements.lemma12.lipschitz import lipschitz_bound, output_shift

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
# COUNTEREXAMPLES: found by the independent red-team search (benchmarks/independent_search.py, seed 0
# at T = 5), not by sltcheck's own search at every seed. Lemma 13 as stated at d1 = d2 = d_K = d_V = H
# = L = 1, T = 5, full mask, alpha = 1: tokens (a, a, -a, a, a) on the alpha-sphere (a a few ulps
# inside), every token moved inward by eps_max = 1e-7, every weight and the FC layer a few ulps below
# 1: measured 6.24095e-7 > bound 6.00000e-7, ratio 1.04016 (60 digits), the supremum at T = 5 of the
# first-order ratio 2 |dz| / ((4 alpha^2 + 2) eps_max) (1.02184 at T = 4).
LARGEST_COUNTEREXAMPLES: dict[str, dict[str, object]] = {
    "as-stated": {
        "alpha": {"float": "0x1.0000000000000p+0"}, "d1": 1, "d2": 1,
        "X": {"shape": [5, 1], "dtype": "float64",
              "hex": ["0x1.fffffffffff80p-1", "0x1.fffffffffff80p-1", "-0x1.fffffffffff80p-1",
                      "0x1.fffffffffff80p-1", "0x1.fffffffffff80p-1"]},
        "X_perturbed": {"shape": [5, 1], "dtype": "float64",
                        "hex": ["0x1.fffffca501a5bp-1", "0x1.fffffca501a5bp-1", "-0x1.fffffca501a5bp-1",
                                "0x1.fffffca501a5bp-1", "0x1.fffffca501a5bp-1"]},
        "mask": {"shape": [5, 5], "dtype": "int8", "int": [1] * 25},
        "W_Q": {"shape": [1, 1, 1], "dtype": "float64", "hex": ["0x1.fffffffffff80p-1"]},
        "W_K": {"shape": [1, 1, 1], "dtype": "float64", "hex": ["0x1.fffffffffff80p-1"]},
        "W_V": {"shape": [1, 1, 1], "dtype": "float64", "hex": ["0x1.fffffffffff80p-1"]},
        "W_O": {"shape": [1, 1, 1], "dtype": "float64", "hex": ["0x1.fffffffffff80p-1"]},
        "eps_max": {"float": "0x1.ad7f29abcaf44p-24"},
        "fc_layers": {"list": [{"shape": [1, 1], "dtype": "float64", "hex": ["0x1.fffffffffff80p-1"]}]},
    }
}
DEFAULT_VARIANT = "as-proven"

# The best ratio measured / bound any search has found for the default variant (the
# supremum is only bracketed): the worst-case search, dev profile,
# seed 0, at d = H = d_K = d_V = 1, L = 2, T = 6.
BEST_KNOWN = 0.5200790
EDGE = 0.9  # the edge mutant sits at EDGE x BEST_KNOWN: refuted only by a search that gets that close

MUTANTS = [
    Mutant(
        "best-known-0.9",
        f"{EDGE} x the best ratio known ({BEST_KNOWN}) times the as-proven bound",
        partial(lipschitz_bound, factor=2.0 * EDGE * BEST_KNOWN, eps_weight=2.0),
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


# The lower end of the bracket at the slack table's parameters, as
# worst_case.supremum(H=1, d1=2, L=1, alpha=2.0, eps_max=0.05, random_starts=1)["lower"] computes it
# (tests/test_search.py recomputes it).
BRACKET_LOWER = 0.6669493480265904


# Search power (sltcheck.harness.power): at the slack table's parameters the search's best
# measured value must reach the lower end of the bracket in sltcheck.statements.lemma13.worst_case.
POWER_CASES = [{"fixed": {"H": 1, "d1": 2, "alpha": 2.0, "eps_max": 0.05, "L": 1}, "variant": "as-proven",
                "lower": BRACKET_LOWER}]
