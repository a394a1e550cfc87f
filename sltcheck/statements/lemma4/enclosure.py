"""Interval enclosure (see :mod:`sltcheck.harness.interval_verdict`) of Lemma 4: Lemma 7's (the same measured
side, variants and mutants; Lemma 4's instances have a target of spectral norm <= 1)."""

from sltcheck.statements.lemma7.enclosure import BOUNDS, measured

__all__ = ["BOUNDS", "measured"]
