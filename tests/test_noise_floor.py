"""Exact zeros computed with rounding noise: ties below a statement's absolute floor are
undecided, never a violation, and never a crash."""

import mpmath
import pytest

from sltcheck.numerics.arithmetic import stable
from sltcheck.numerics.verdict import decide


def noisy_zero(work: int) -> tuple[list[mpmath.mpf], None]:
    """A quantity that is 0 as a real number, computed with noise at the working precision."""
    with mpmath.workdps(work):
        return [mpmath.mpf(3) * mpmath.mpf(10) ** -work], None


def test_noise_below_the_floor_is_undecided_not_violated() -> None:
    verdict = decide(mpmath.mpf("3.9e-76"), 0, 40, floor=1e-30)
    assert verdict.undecided
    assert not verdict.violated


def test_a_gap_above_the_floor_is_still_decided() -> None:
    assert decide(mpmath.mpf("1e-20"), 0, 40, floor=1e-30).violated
    assert decide(mpmath.mpf("1e-20"), mpmath.mpf("2e-20"), 40, floor=1e-30).holds


def test_exact_zeros_hold() -> None:
    verdict = decide(0, 0, 40, floor=1e-30)
    assert verdict.holds
    assert not verdict.undecided


def test_without_a_floor_noise_never_settles() -> None:
    with pytest.raises(ArithmeticError, match="no stable evaluation"):
        stable(noisy_zero, 30)


def test_with_a_floor_noise_settles() -> None:
    values, _, work = stable(noisy_zero, 30, floor=1e-35)
    assert abs(values[0]) <= 1e-35
    assert work > 30


def test_a_tie_at_the_floor_is_no_ratio() -> None:
    """Noise of exact zeros is not a measurement: its ratio is 0, never a worst case."""
    verdict = decide(mpmath.mpf("3.9e-76"), 0, 40, floor=1e-30)
    assert verdict.at_floor
    assert verdict.ratio == 0.0
    assert not decide(mpmath.mpf("1e-20"), 0, 40, floor=1e-30).at_floor
