"""Deciding "measured <= bound" honestly, at a declared precision.

Both sides are evaluated in mpmath at ``dps`` digits. The verdict is decided
only when the two sides differ by more than the precision can blur: a gap of
at least ``10**(GUARD_DIGITS - dps)`` relative to the larger side. Closer than
that, the outcome is reported as ``undecided`` (and counted as holding only by
the point value), never silently decided by rounding. Where sltcheck.harness.interval_verdict then
decides it (intervals, or exact arithmetic where the two sides are equal as real
numbers), the verdict says so: ``attained`` (proved, with equality), or held or violated
(:func:`sltcheck.harness.runner.settle`).
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath

from sltcheck.numerics.defaults import GUARD_DIGITS, VERDICT_DPS
from sltcheck.numerics.validation import check_dps

DEFAULT_DPS = VERDICT_DPS
PRINTED_DIGITS = 20  # significant digits of each side in a recorded verdict (as_dict)


@dataclass(frozen=True)
class Verdict:
    measured: mpmath.mpf
    bound: mpmath.mpf
    dps: int
    holds: bool  # measured <= bound at the point values
    undecided: bool  # too close to call at this precision
    floor: mpmath.mpf = mpmath.mpf(0)  # noqa: RUF009 (an mpf is immutable) the statement's absolute floor (see decide)
    # measured = bound, proved (exact arithmetic, sltcheck.harness.interval_verdict): held with equality, not undecided
    attained: bool = False

    @property
    def at_floor(self) -> bool:
        """Both sides at most the absolute floor: rounding noise of exact zeros, not a measurement."""
        return self.floor > 0 and max(abs(self.measured), abs(self.bound)) <= self.floor

    @property
    def ratio(self) -> float:
        """measured / bound (inf for a zero bound with a positive measured side; 0 for a tie at
        the noise floor, where neither side is a measurement)."""
        if self.at_floor:
            return 0.0
        if self.bound == 0:
            return 0.0 if self.measured == 0 else float("inf")
        return float(self.measured / self.bound)

    @property
    def violated(self) -> bool:
        return not self.holds and not self.undecided

    def as_dict(self) -> dict[str, object]:
        return {
            "measured": mpmath.nstr(self.measured, PRINTED_DIGITS),
            "bound": mpmath.nstr(self.bound, PRINTED_DIGITS),
            "ratio": self.ratio,
            "dps": self.dps,
            "holds": self.holds,
            "undecided": self.undecided,
            "attained": self.attained,
        }


def decide(measured: object, bound: object, dps: int = DEFAULT_DPS, floor: object = 0) -> Verdict:
    """Compare two values computed at ``dps`` digits.

    ``floor`` is an absolute resolution: where both sides are at most ``floor`` (and not
    both exactly zero) they are rounding noise of quantities that may be exactly zero, and
    the outcome is undecided (a statement sets it through ``noise_floor``).
    """
    dps = check_dps(dps)
    with mpmath.workdps(dps):
        m, b = mpmath.mpf(measured), mpmath.mpf(bound)
        if not (mpmath.isfinite(m) and mpmath.isfinite(b)):
            raise ValueError(f"measured and bound must be finite, got {m} and {b}")
        scale = max(abs(m), abs(b))
        resolution = scale * mpmath.mpf(10) ** (GUARD_DIGITS - dps)
        floor = mpmath.mpf(floor)
        undecided = (bool(abs(b - m) <= resolution) or scale <= floor) and scale > 0
        return Verdict(measured=m, bound=b, dps=dps, holds=bool(m <= b), undecided=undecided, floor=floor)
