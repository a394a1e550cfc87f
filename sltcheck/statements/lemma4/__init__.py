"""Lemma 4 (Section 3.2; workshop version: Lemma 4): weight approximation, main-text form.

As the paper states it: "Let W in R^{d2 x d1} be a target matrix with ||W|| <= 1, and
W~1 in R^{n x d1} and W~2 in R^{d2 x n} be source matrices whose entries are drawn i.i.d.
from U[-1, 1]. Suppose that n >= d1 C log(d1 d2 / eps) for some universal constant
C > 0. Then, with probability at least 1 - eps, there exists a choice of binary pruning
masks M1 and M2 such that

    || W - (W~2 ⊙ M2)(W~1 ⊙ M1) ||_max <= eps / (d1 d2)."

(The main text omits "for any 0 < eps < 1", which Lemma 7 and the workshop version state.)

It is Lemma 7 (appendix A.1; workshop Lemma 6) with the hypothesis "entries of W in
[-1, 1]" replaced by ||W|| <= 1. Since |W[i, j]| = |e_i^T W e_j| <= ||W||, a target with
||W|| <= 1 has entries in [-1, 1], so Lemma 4 follows from Lemma 7 (the converse fails:
the all-ones 2 x 2 matrix has entries in [-1, 1] and norm 2). The checks are therefore
Lemma 7's, unchanged (``measured``, the ``deterministic`` variant, the estimated
as-stated probability :func:`success_frequency`, the mutants; see
:mod:`sltcheck.statements.lemma7`), on instances whose target has spectral norm <= 1.
"""

from sltcheck.statements.lemma7 import DEFAULT_VARIANT, MUTANTS, VARIANTS, measured, success_frequency

ASSUMPTIONS = ("matrix-spectral", "eps-unit")

__all__ = ["ASSUMPTIONS", "DEFAULT_VARIANT", "MUTANTS", "VARIANTS", "measured", "success_frequency"]
