"""Arithmetic in float64 (``dps=None``) or in mpmath at ``dps`` digits, shared by the statements.

``num``, ``sqrt``, ``expm1``, ``spectral``, ``max_abs``, ``rounded`` and ``scalar`` take ``dps=None``
for float64; :func:`stable` and :func:`guided_precision` choose a working precision that survives
cancellation; :func:`stated_or_proven` is the rule of the "as-stated" variants of Theorems 9, 11, 14.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np

from sltcheck.numerics import precision

# Extra digits for the first evaluation and the step between the two compared evaluations.
EXTRA_DIGITS = 15
STEP_DIGITS = 20
MAX_ROUNDS = 12
# exp(x) for x beyond this is bounded by a power of two (mpmath's exp would need ln 2 to
# about log10(x) + dps digits); beyond 2^VACUOUS_BITS a chain's value is reported as that
# power of two: the bound is then vacuous (no measured quantity comes near it).
HUGE_EXPONENT = 10**4
VACUOUS_BITS = 10**100


def num(value: object, dps: int | None) -> Any:
    """``value`` as a float (dps=None) or an mpf at the current mpmath precision."""
    return float(value) if dps is None else mpmath.mpf(value)  # type: ignore[arg-type]


def sqrt(value: Any, dps: int | None) -> Any:
    return math.sqrt(value) if dps is None else mpmath.sqrt(value)


def expm1(value: Any, dps: int | None) -> Any:
    if dps is None:
        return math.expm1(value) if value < 700 else math.inf
    if value > HUGE_EXPONENT:  # exp(x) <= 2^ceil(x log2(e)): exact, cheap, still an upper bound
        bits = mpmath.ceil(value * 1 / mpmath.log(2) * (1 + mpmath.mpf(2) ** -40)) + 1
        return mpmath.ldexp(1, int(min(bits, VACUOUS_BITS)))
    if abs(value) > 1:  # no cancellation; mpmath.expm1 is very slow for large arguments
        return mpmath.exp(value) - 1
    return mpmath.expm1(value)


def spectral(matrix: np.ndarray, dps: int | None) -> Any:
    if matrix.size == 0:
        return num(0, dps)
    return precision.spectral_norm(matrix, dps)


def max_abs(matrix: np.ndarray, dps: int | None) -> Any:
    return num(0, dps) if matrix.size == 0 else np.abs(matrix).max()


def stable(
    compute: Callable[[int], tuple[list[Any], Any]], dps: int, floor: float = 0.0
) -> tuple[list[Any], Any, int]:
    """Evaluate ``compute(work)`` -> (values, payload) until two precisions agree.

    Returns values accurate to about dps + 5 significant digits each (zero
    stays zero), the payload of the more precise evaluation and its precision.
    A value at most ``floor`` in absolute value at both precisions counts as
    settled: a quantity that is exactly zero as a real number but computed
    with rounding noise never agrees relatively (the verdict then calls a tie
    below its absolute floor undecided, see ``numerics.verdict.decide``).
    """
    work = dps + EXTRA_DIGITS
    for _ in range(MAX_ROUNDS):
        low, _ = compute(work)
        high, payload = compute(work + STEP_DIGITS)
        missing = 0.0
        with mpmath.workdps(work + STEP_DIGITS):
            for a, b in zip(low, high, strict=True):
                gap = abs(mpmath.mpf(a) - mpmath.mpf(b))
                if gap == 0 or max(abs(mpmath.mpf(a)), abs(mpmath.mpf(b))) <= floor:
                    continue
                agreed = -mpmath.log10(gap / abs(b)) if b != 0 else mpmath.mpf(0)
                missing = max(missing, float(dps + 5 - agreed))
        if missing <= 0:
            return high, payload, work + STEP_DIGITS
        work += STEP_DIGITS + math.ceil(missing) + 10
    raise ArithmeticError(f"no stable evaluation up to {work} digits")


def guided_precision(estimates: Sequence[float], scale: float, dps: int) -> int | None:
    """A precision that resolves values estimated in float64 (``estimates``, beside
    magnitudes up to ``scale``) to dps + 15 digits, or None when float64 cannot tell
    (a value below 1e-10 of the scale): then :func:`stable` must decide."""
    lost = 0
    for value in estimates:
        if not math.isfinite(value) or not math.isfinite(scale):
            return None
        if value == 0 or value < 1e-10 * scale:
            return None
        lost = max(lost, math.ceil(math.log10(max(scale, value) / value)))
    return dps + EXTRA_DIGITS + lost


def rounded(value: Any, dps: int | None) -> Any:
    if dps is None:
        return float(value)
    with mpmath.workdps(dps):
        return +mpmath.mpf(value)



def scalar(value: object, dps: int | None) -> object:
    """``value`` as an mpf at ``dps`` digits, or a float for ``dps=None``."""
    if dps is None:
        return float(value)  # type: ignore[arg-type]
    with mpmath.workdps(dps):
        return mpmath.mpf(value)


def stated_or_proven(
    variant: str, names: Sequence[str], star: Callable[[], Any]
) -> tuple[str, Any | None]:
    """Checks ``variant`` against ``names`` and applies the rule the "as-stated" variants of
    Theorems 9, 11 and 14 share: the theorem's conclusion eps* (``star()``) where eps* < 1,
    else the as-proven chain. Returns (variant to evaluate, eps* or None)."""
    if variant not in names:
        raise ValueError(f"variant must be one of {', '.join(names)}, got {variant!r}")
    if variant == "as-stated":
        value = star()
        if value < 1:
            return variant, value
        return "as-proven", None
    return variant, None
