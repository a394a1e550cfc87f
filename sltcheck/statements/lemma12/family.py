"""Lemma 12's families for the branch-and-bound (:mod:`sltcheck.certify`): T tokens
(:mod:`sltcheck.statements.lemma12.token_families`), two token values at any fraction, any T
(:mod:`sltcheck.statements.lemma12.fraction`, the closed form of worst_case.py certified over the fraction),
and two tokens in the plane, d1 = 2 (:mod:`sltcheck.statements.lemma12.plane_family`)."""

from __future__ import annotations

from sltcheck.statements.lemma12.fraction import fraction_families
from sltcheck.statements.lemma12.plane_family import plane_families
from sltcheck.statements.lemma12.token_families import families

FAMILIES = families("lemma12", False, {"as-stated": (1.0, 1.0)})
FAMILIES += fraction_families("lemma12", False, {"as-stated": (1.0, 1.0)},
                              known={"as-stated": 0.4546919707310645})  # worst_case.LONGEST["ratio"]
FAMILIES += plane_families("lemma12", False, {"as-stated": (1.0, 1.0)})
