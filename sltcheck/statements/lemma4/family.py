"""Lemma 4's families for the branch-and-bound (:mod:`sltcheck.certify`): Lemma 7's
(:mod:`sltcheck.statements.lemma7.family`: one fixed source with d1 = 2, d2 = 1, n = 4, every 1 x 2
target) restricted to Lemma 4's ||W|| <= 1, the unit disc w_1^2 + w_2^2 <= 1: not a box, handled
exactly (boxes outside the disc are dropped, straddling ones are kept and split until decided,
:func:`sltcheck.statements.lemma7.family.disc_feasibility`). Its argument is Lemma 7's **exact
pieces** (:func:`sltcheck.statements.lemma7.family.exact_pieces`): f_j <= c g_j decided exactly on the
box's range of each entry, which proves the part of a straddling box inside the disc as well."""

from __future__ import annotations

from sltcheck.statements.lemma7.family import VARIANTS, disc_feasibility, families

FAMILIES = families("lemma4", VARIANTS, feasibility=disc_feasibility, assumption="||W|| <= 1")
