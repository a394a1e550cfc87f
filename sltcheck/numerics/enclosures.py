"""Enclosures for certified verdicts: numbers that contain the exact real value.

Both sides of a statement are enclosed in rigorous numbers of one of the two backends of
:mod:`sltcheck.numerics.balls`: arb balls (python-flint, the extra ``certify``) or outward-rounded
``mpmath.iv`` intervals (always installed). :func:`using` picks the backend and the working
precision; outside it the backend is mpmath (``precision.interval_arithmetic`` sets its digits).
Every float64 field of an instance is converted exactly to a point (:func:`num`,
:func:`intervals`), every +, -, ``*``, /, exp, sqrt rounds outward, so each computed number contains
the exact real value of the side. :func:`decide_interval` compares two enclosures through their
exact ends (:func:`ends`). The helpers below take either backend's numbers (they dispatch on the
number) and make new ones in the active backend.

Norms are enclosed as sqrt(sum x_k^2) with x_k^2 evaluated as an interval square (never
negative, :func:`square`); max of real values as the hull [max of lower ends, max of upper ends]
(:func:`hull_max`). exp(x) - 1 is arb's ``expm1`` or, on mpmath, evaluated with extra bits for
small |x| (no cancellation); in the chains of Theorems 9/11/14 it follows ``arithmetic.expm1``,
which replaces exp(x) - 1 by a power of two above ``arithmetic.HUGE_EXPONENT`` (:func:`chain_expm1`).
Integer powers are repeated products (:func:`power`: arb's ``**`` of a ball is NaN near 0).

On the backend ``exact`` (:mod:`sltcheck.numerics.exact`) the helpers keep exact values where they
can (a square, a square root of a rational, a maximum, ReLU, a uniform softmax row, the norm of a
vector), so an instance made of rationals and square roots is evaluated exactly.

The paper's objects in these numbers (softmax, MHA, FC, block) are in :mod:`sltcheck.numerics.intervals`,
the spectral norm in :mod:`sltcheck.numerics.singular_values`.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import mpmath
import numpy as np
from mpmath import iv

from sltcheck.numerics import exact as exactly
from sltcheck.numerics.arithmetic import HUGE_EXPONENT, VACUOUS_BITS
from sltcheck.numerics.balls import Backend, backend

# Extra bits at most for exp(x) - 1 at tiny |x| on mpmath (beyond this the enclosure is merely wider).
MAX_EXTRA_BITS = 4000

_ACTIVE: contextvars.ContextVar[Backend | None] = contextvars.ContextVar("enclosure_backend", default=None)


class NotEnclosed(ValueError):
    """The bound needs a quantity no enclosure covers (a spectral norm without python-flint)."""


@contextlib.contextmanager
def using(name: str | None, dps: int) -> Iterator[Backend]:
    """Enclose in backend ``name`` ("arb", "mpmath"; None: arb where python-flint imports) at
    ``dps`` digits: every number made inside (:func:`num`, ...) is that backend's."""
    chosen = backend(name)
    mp_backend = backend("mpmath")
    token = _ACTIVE.set(chosen)
    try:
        # mpmath's digits too: spectral_norm and the power-of-two bound work through mpf ends
        with mp_backend.working_precision(dps), chosen.working_precision(dps):
            yield chosen
    finally:
        _ACTIVE.reset(token)


def active() -> Backend:
    """The backend new numbers are made in (mpmath outside :func:`using`)."""
    chosen = _ACTIVE.get()
    return backend("mpmath") if chosen is None else chosen


def owner(x: object) -> Backend:
    """The backend whose number x is (the active one for anything else)."""
    current = active()
    if current.owns(x):
        return current
    for name in ("mpmath", "arb"):
        if name == "arb" and not _arb_imported():
            continue
        other = backend(name)
        if other.owns(x):
            return other
    return current


def _arb_imported() -> bool:
    from sltcheck.numerics.balls import arb_available

    return arb_available()


def num(value: object) -> Any:
    """An int, float or mpf as a point of the active backend (exact)."""
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    return active().number(value)


def interval_of(low: object, high: object) -> Any:
    """A number of the active backend containing [low, high] (mpf or float ends)."""
    return active().from_ends(low, high)


def up_to(low: object, high: Any) -> Any:
    """A number containing [low, high] for an mpf or float ``low`` and an enclosure ``high``: on the
    backend ``exact``, ``high``'s exact value is kept as the exact upper end (measured <= bound is
    then decided exactly from it)."""
    if isinstance(high, exactly.Exact):
        return exactly.up_to(low, high)
    return interval_of(low, ends(high)[1])


def as_interval(value: object) -> Any:
    """A number of the active backend: one of its numbers as it is, another backend's through its
    exact ends, a (low, high) pair as that interval, a number as a point."""
    current = active()
    if current.owns(value):
        return value
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return current.from_ends(_exact(value[0]), _exact(value[1]))  # never rounded inward
    if isinstance(value, (int, float, mpmath.mpf, np.integer, np.floating)):
        return num(value)
    return current.from_ends(*ends(value))


def decide_interval(measured_interval: object, bound_interval: object) -> str:
    """"holds" | "violated" | "undecided" from enclosures of the two sides.

    Each argument is a number of either backend, a (low, high) pair, or a number (a point).
    """
    pairs = []
    for name, value in (("measured_interval", measured_interval), ("bound_interval", bound_interval)):
        lo, hi = _pair(value)
        if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
            raise ValueError(f"{name} must be a finite interval, got [{lo}, {hi}]")
        pairs.append((lo, hi))
    (m_lo, m_hi), (b_lo, b_hi) = pairs  # mpf comparisons are exact
    if m_hi <= b_lo:
        return "holds"
    if m_lo > b_hi:
        return "violated"
    return "undecided"


def _pair(value: object) -> tuple[Any, Any]:
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return _exact(value[0]), _exact(value[1])
    if isinstance(value, (int, float, mpmath.mpf)):
        return _exact(value), _exact(value)
    return ends(value)


def _exact(value: object) -> Any:
    if isinstance(value, mpmath.mpf):
        return value
    if isinstance(value, int):
        return mpmath.mp.make_mpf(mpmath.libmp.from_int(value))
    return mpmath.mp.make_mpf(mpmath.libmp.from_float(float(value)))  # type: ignore[arg-type]


# --- interval helpers -----------------------------------------------------------------------------


def ends(x: object) -> tuple[Any, Any]:
    """The ends of an enclosure as mpf, exactly (-inf, +inf where it is not finite)."""
    if isinstance(x, (tuple, list, int, float, mpmath.mpf)):
        return _pair(x)
    return owner(x).ends(x)


def all_exact(values: Sequence[Any]) -> bool:
    """Whether every value is a number of the backend ``exact`` (an exact value or a ball)."""
    return bool(values) and all(isinstance(v, exactly.Exact) for v in values)


def hull(values: Sequence[Any]) -> Any:
    """The smallest interval containing every interval of ``values``."""
    if all_exact(values) and values[0].value is not None and all(
            v.value is not None and v.value.compare(values[0].value) == 0 for v in values):
        return values[0]
    pairs = [ends(v) for v in values]
    return interval_of(min(p[0] for p in pairs), max(p[1] for p in pairs))


def all_arb(values: Sequence[Any]) -> bool:
    """Whether the active backend is arb and every value one of its balls (its own max, min, ...)."""
    current = active()
    return current.name == "arb" and all(current.owns(v) for v in values)


def hull_max(values: Sequence[Any]) -> Any:
    """An enclosure of max(x_1, ..., x_n) for intervals x_k: [max lower ends, max upper ends]."""
    if not values:
        raise ValueError("hull_max needs at least one interval")
    if all_exact(values):
        return exactly.exact_max(list(values))
    if all_arb(values):
        out = values[0]
        for v in values[1:]:
            out = out.max(v)  # arb_max: contains max(a, b) for every a in out, b in v
        return out
    pairs = [ends(v) for v in values]
    return interval_of(max(p[0] for p in pairs), max(p[1] for p in pairs))


def hull_min(values: Sequence[Any]) -> Any:
    """An enclosure of min(x_1, ..., x_n): [min lower ends, min upper ends]."""
    if not values:
        raise ValueError("hull_min needs at least one interval")
    if all_exact(values):
        return exactly.exact_max(list(values), largest=False)
    if all_arb(values):
        out = values[0]
        for v in values[1:]:
            out = out.min(v)
        return out
    pairs = [ends(v) for v in values]
    return interval_of(min(p[0] for p in pairs), min(p[1] for p in pairs))


def square(x: Any) -> Any:
    """x^2 from the ends of x, squared exactly: never below 0 (a ball's x * x can be: arb does not
    know the two factors are one number), [0, max end^2] for an interval straddling 0."""
    if isinstance(x, exactly.Exact) and x.value is not None:
        return x * x
    if all_arb([x]):
        product = x * x
        if product >= 0:  # the whole ball: nothing to correct
            return product
    lo, hi = ends(x)
    libmp = mpmath.libmp
    low, high = sorted((libmp.mpf_abs(lo._mpf_), libmp.mpf_abs(hi._mpf_)), key=mpmath.mp.make_mpf)  # exact
    if lo < 0 < hi:
        low = libmp.fzero
    return interval_of(mpmath.mp.make_mpf(libmp.mpf_mul(low, low)), mpmath.mp.make_mpf(libmp.mpf_mul(high, high)))


def power(x: Any, exponent: int) -> Any:
    """x ** exponent for an int exponent >= 0, as repeated products."""
    if exponent < 0:
        raise ValueError(f"exponent must be an integer >= 0, got {exponent!r}")
    out = num(1)
    for _ in range(exponent):
        out = out * x
    return out


def sqrt(x: Any) -> Any:
    """sqrt of a number known to be >= 0 (a lower end below 0 by rounding is taken as 0), from the
    square roots of its two ends (increasing; a ball touching 0 would give NaN in arb)."""
    if isinstance(x, exactly.Exact) and (root := exactly.exact_sqrt(x)) is not None:
        return root
    if all_arb([x]) and x > 0:  # the whole ball above 0: arb's sqrt is rigorous there
        return x.sqrt()
    lo, hi = ends(as_interval(x))
    current = active()
    low = ends(current.sqrt(current.from_ends(lo, lo)))[0] if lo > 0 else 0
    return interval_of(low, ends(current.sqrt(current.from_ends(hi, hi)))[1])


def exp(x: Any) -> Any:
    return active().exp(as_interval(x))


def log(x: Any) -> Any:
    return active().log(as_interval(x))


def norm(vector: np.ndarray) -> Any:
    """Enclosure of the Euclidean norm of a 1-D object array of intervals."""
    total = num(0)
    for x in vector:
        total += square(x)
    return sqrt(total)


def row_norms(matrix: np.ndarray) -> list[Any]:
    return [norm(row) for row in np.asarray(matrix, dtype=object).reshape(-1, matrix.shape[-1])]


def max_abs(array: np.ndarray) -> Any:
    return hull_max([abs(x) for x in np.asarray(array, dtype=object).flat]) if array.size else num(0)


def is_enclosure_array(array: np.ndarray) -> bool:
    """An object array whose entries are numbers of a backend (not floats)."""
    return array.dtype == object and array.size > 0 and not isinstance(array.flat[0], (int, float))


def intervals(array: object) -> np.ndarray:
    """An object array of the active backend's numbers: float64 input as exact points, numbers as
    they are (another backend's through their exact ends)."""
    array = np.asarray(array)
    if is_enclosure_array(array):
        current = active()
        if current.owns(array.flat[0]):
            return array
        return np.frompyfunc(as_interval, 1, 1)(array).astype(object)
    floats = np.asarray(array, dtype=np.float64)
    out = np.empty(floats.shape, dtype=object)
    current = active()
    for index, value in np.ndenumerate(floats):
        out[index] = current.number(float(value))
    return out


def scalar(value: object) -> Any:
    """An instance's scalar field (float64 or int) as an exact point."""
    return num(float(value))  # type: ignore[arg-type]


def expm1(x: Any) -> Any:
    """Enclosure of exp(x) - 1 without cancellation (arb's expm1; on mpmath with as many extra bits
    as the subtraction cancels, |x| < 1)."""
    x = as_interval(x)
    current = active()
    if current.name in ("arb", "exact"):
        return current.expm1(x)
    lo, hi = ends(x)
    size = max(abs(lo), abs(hi))
    if size == 0:
        return num(0)
    lost = min(MAX_EXTRA_BITS, max(0, -int(mpmath.floor(mpmath.log(size, 2))))) if size < 1 else 0
    with _extra_bits(lost + 10):
        return iv.exp(x) - 1


@contextlib.contextmanager
def _extra_bits(bits: int) -> Iterator[None]:
    saved = iv.prec
    iv.prec = saved + bits
    try:
        yield
    finally:
        iv.prec = saved


def _power_of_two_bound(x: Any) -> Any:
    """Enclosure of arithmetic.expm1's stand-in for exp(x) - 1 at x > HUGE_EXPONENT: 2^(ceil(v) + 1),
    v = x log2(e) (1 + 2^-40), the exponent capped at VACUOUS_BITS. The point code rounds v at
    its own precision (at least 30 digits), so the exponent is widened by a relative 2^-60."""
    lo, hi = ends(as_interval(x) / log(num(2)) * (1 + interval_of(mpmath.ldexp(1, -40), mpmath.ldexp(1, -40))))
    cap = int(VACUOUS_BITS)  # a Python int: compared with mpf exactly, never rounded
    with mpmath.workprec(400):  # every exponent below the cap (10^100 < 2^333) is exact here
        slack = mpmath.mpf(2) ** -60
        low = cap if lo >= cap else min(int(mpmath.floor(lo * (1 - slack))) + 1, cap)
        high = cap if hi >= cap else min(int(mpmath.ceil(hi * (1 + slack))) + 1, cap)
    return interval_of(mpmath.ldexp(1, low), mpmath.ldexp(1, high))


def chain_expm1(x: Any) -> Any:
    """Enclosure of ``arithmetic.expm1`` (what the chains of Theorems 9, 11, 14 use for exp(x) - 1)."""
    lo, hi = ends(x)
    huge = mpmath.mpf(HUGE_EXPONENT)
    if hi <= huge:
        return expm1(x)
    if lo > huge:
        return _power_of_two_bound(x)
    # the point value is either branch, depending on where in x the real argument lies
    return hull([expm1(interval_of(lo, huge)), _power_of_two_bound(interval_of(huge, hi))])


def width_digits(x: Any) -> float:
    """Relative width of an interval, as a number of correct significant digits."""
    lo, hi = ends(x)
    if lo == hi:
        return float("inf")
    with mpmath.workdps(30):
        scale = max(abs(lo), abs(hi))
        return float(-mpmath.log10((hi - lo) / scale)) if scale > 0 else 0.0


def stated_or_proven(star: Any, proven: Callable[[], Any]) -> Any:
    """An "as-stated" bound: eps* where eps* < 1, else the as-proven bound (``proven()``).

    Where the enclosure of eps* straddles 1 the variant is one of the two: enclose both."""
    lo, hi = ends(star)
    if hi < 1:
        return star
    other = proven()
    if lo >= 1:
        return other
    return hull([star, other])
