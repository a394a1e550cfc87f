"""Lemma 5 (main text, Section 3.2; the appendix proves it as Lemma 8; workshop version: Lemma 7).

As the paper states it: "Let eps in R^{d1} be an error vector with ||eps||_max <= eps_max
for some 0 <= eps_max <= 1/2. Then,

    max_{i in [T]} || sigma(x_i; a_i) X - sigma(x_i + eps; a_i) X || <= 4 sqrt(d1) alpha eps_max."

Reading: as for Lemma 8 (:mod:`sltcheck.statements.lemma8`), x_i stands for the T
logits of row i, so eps has T entries (eps in R^T, not R^{d1}), one perturbation
row per i; tokens satisfy ||x_k|| <= alpha. The main text's linear bound follows
from Lemma 8's sqrt(d1) alpha (exp(2 eps_max) - 1) through exp(2e) - 1 <= 4e for
0 <= e <= 1/2 (exp(1) - 1 = 1.718... <= 2), which is where eps_max <= 1/2 is used.

Variants:
- ``as-stated`` (default): 4 sqrt(d1) alpha eps_max (the proof route is Lemma 8,
  whose bound is never larger on eps_max <= 1/2, so both lines agree).
- ``via-lemma8``: sqrt(d1) alpha (exp(2 eps_max) - 1), the appendix bound it comes from.

Observation (documented, checked by the mutant ``no-eps-max-half`` being *absent*):
the hypothesis eps_max <= 1/2 is not needed for the linear bound itself, since the
left side never exceeds 2 alpha tanh(eps_max/2) <= alpha eps_max for any eps_max >= 0.
The supremum of the ratio is 1/4 (d1 = 1, eps_max -> 0).
"""

from __future__ import annotations

import math

import mpmath

from sltcheck.numerics import precision
from sltcheck.numerics.arithmetic import scalar
from sltcheck.statement_types import Instance, Mutant
from sltcheck.statements import lemma8
from sltcheck.statements.lemma8 import EDGE, measured, supremum_fraction
from sltcheck.statements.lemma8 import as_stated as via_lemma8

ASSUMPTIONS = ("eps-max-half", "perturbation-max", "token-norm", "mask-rows")

__all__ = ["ASSUMPTIONS", "DEFAULT_VARIANT", "MUTANTS", "VARIANTS", "measured"]


def _linear(factor: float, power: int = 1):
    def bound(instance: Instance, dps: int | None) -> object:
        d1, alpha = scalar(instance["d1"], dps), scalar(instance["alpha"], dps)
        eps_max = scalar(instance["eps_max"], dps)
        with precision.working_precision(dps):
            root = math.sqrt(d1) if dps is None else mpmath.sqrt(d1)  # type: ignore[arg-type]
            return factor * root * alpha * eps_max**power  # type: ignore[operator]

    return bound


as_stated = _linear(4.0)

VARIANTS = {"as-stated": as_stated, "via-lemma8": via_lemma8}
DEFAULT_VARIANT = "as-stated"

# The smallest c with measured <= c x the printed bound (sltcheck.repaired): Lemma 8's supremum
# 2 alpha tanh(e/2) over each bound, largest at d1 = 1 and e -> 0 (lemma8/worst_case.py).
REPAIRED_CONSTANTS = [
    {"variant": "as-stated", "constant": 0.25, "exact": "1/4", "attained": False, "upper": "proof",
     "where": "sltcheck/statements/lemma8/worst_case.py",
     "why": "2 tanh(eps/2) / (4 sqrt(d1) eps) decreases in eps: 1/4 at d1 = 1 as eps -> 0"},
    {"variant": "via-lemma8", "constant": 0.5, "exact": "1/2", "attained": False, "upper": "proof",
     "where": "sltcheck/statements/lemma8/worst_case.py",
     "why": "2 tanh(eps/2) / (sqrt(d1) (e^{2 eps} - 1)): 1/2 at d1 = 1 as eps -> 0"},
]

MUTANTS = [
    Mutant(
        "quadratic",
        "4 sqrt(d1) alpha eps_max^2: the bound read as quadratic in the perturbation",
        _linear(4.0, 2),
    ),
    Mutant(
        "supremum-0.97",
        "0.97 x the proved supremum 2 alpha tanh(eps_max/2) of the left side (Lemma 8's)",
        supremum_fraction(EDGE),
    ),
    Mutant("no-token-norm", "drops ||x_k|| <= alpha", as_stated, drop=("token-norm",)),
    Mutant(
        "no-perturbation-max", "drops ||eps||_max <= eps_max", as_stated, drop=("perturbation-max",)
    ),
]


# Search power (sltcheck.harness.power): Lemma 8's cases (its supremum is this left side's; eps_max <= 1/2).
POWER_CASES = lemma8.POWER_CASES
