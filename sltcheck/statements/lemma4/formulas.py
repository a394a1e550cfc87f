"""Lemma 4's formulas in LaTeX, for the report: Lemma 7's inequality (the main-text form; the two differ in
their assumptions, ``||W|| <= 1`` here, entries in [-1, 1] there, which the report lists beside them)."""

from sltcheck.statements.lemma7.formulas import BOUNDS, MEASURED, PAPER, WHERE

__all__ = ["BOUNDS", "MEASURED", "PAPER", "WHERE"]
