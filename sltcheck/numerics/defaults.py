"""The default precisions (decimal digits) and the guard digits, in one place.

- ``CERTIFIED_DPS``: interval verdicts (:mod:`sltcheck.harness.interval_verdict`);
- ``PROPERTY_DPS``: the properties and searches (:mod:`sltcheck.harness.runner`);
- ``VERDICT_DPS``: :func:`sltcheck.numerics.verdict.decide`;
- ``REPLAY_DPS``: ``sltcheck check --replay``;
- ``GUARD_DIGITS``: digits a verdict or an enclosure keeps in reserve: a point verdict is
  "undecided" closer than 10^(GUARD_DIGITS - dps), an undecided enclosure is refined while its
  sides do not agree to dps - GUARD_DIGITS digits.
"""

CERTIFIED_DPS = 30
PROPERTY_DPS = 40
VERDICT_DPS = 50
REPLAY_DPS = 100
# Digits given up to the rounding of the evaluations themselves (a few hundred
# operations at most lose far fewer than 10 digits).
GUARD_DIGITS = 10
