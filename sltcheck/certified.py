"""Certified verdicts (moving: the interval arithmetic is in :mod:`sltcheck.numerics.intervals`)."""

from sltcheck.numerics.intervals import *  # noqa: F403
from sltcheck.numerics.intervals import MAX_DPS, as_dict, evaluate, supported  # noqa: F401
