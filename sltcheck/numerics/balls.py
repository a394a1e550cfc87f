"""Two interchangeable backends of rigorous real enclosures for the branch-and-bound.

``arb`` (python-flint, ball arithmetic in C; the extra ``certify``) and ``mpmath`` (``mpmath.iv``,
outward-rounded intervals in pure Python, always installed). Both give the same operations on
numbers that *contain* the exact real value: +, -, ``*``, / through Python's operators (a float operand
is taken exactly), and :meth:`Backend.exp`, :meth:`Backend.expm1`, :meth:`Backend.sqrt`. The ends
come back as floats rounded outward (:meth:`Backend.lower`, :meth:`Backend.upper`): the
conversion of an end to float64 rounds to nearest, so it is moved one ulp further out.

An enclosure that is not finite (a division by a ball containing 0) has lower -inf and upper +inf:
it proves nothing, never something false.

:func:`backend` picks arb where python-flint imports, else mpmath; ``benchmarks/certify_backends.py``
times both on the same boxes.

The single-instance enclosures (:mod:`sltcheck.numerics.intervals`, :mod:`sltcheck.harness.interval_verdict`) use
the exact side of the same interface: :meth:`Backend.number` (an int, float or mpf as an exact
point), :meth:`Backend.from_ends` and :meth:`Backend.ends` (ends as exact mpf, no float rounding),
:meth:`Backend.log` and :meth:`Backend.working_precision` (the digits every operation keeps).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import mpmath
import numpy as np
from mpmath import iv

BACKENDS = ("arb", "mpmath")
# the backends of the branch-and-bound's boxes: the two above, and "arrays" (thousands of boxes at once,
# sltcheck.numerics.array_backend; its points go to the scalar backend)
BOX_BACKENDS = (*BACKENDS, "arrays")


LN10 = math.log(10.0)  # the float nearest ln 10: power_of_ten encloses the real one by its neighbours


def _down(value: float) -> float:
    return -math.inf if math.isnan(value) else math.nextafter(value, -math.inf)


def _up(value: float) -> float:
    return math.inf if math.isnan(value) else math.nextafter(value, math.inf)


class Backend:
    """The operations the families use; numbers are the backend's own (arb or mpmath.iv.mpf)."""

    name = "backend"

    @property
    def scalar(self) -> Backend:
        """The backend of single points (the lower bounds, the climb): this one, but for ``arrays``."""
        return self

    def interval(self, low: float, high: float) -> Any:
        """A number containing every real in [low, high] (float ends, taken exactly)."""
        raise NotImplementedError

    def point(self, value: float) -> Any:
        return self.interval(value, value)

    def exp(self, x: Any) -> Any:
        raise NotImplementedError

    def expm1(self, x: Any) -> Any:
        raise NotImplementedError

    def sqrt(self, x: Any) -> Any:
        raise NotImplementedError

    def lower(self, x: Any) -> float:
        """A float <= every real in x (-inf where x is not finite)."""
        raise NotImplementedError

    def upper(self, x: Any) -> float:
        """A float >= every real in x (+inf where x is not finite)."""
        raise NotImplementedError

    def is_point(self, x: Any) -> bool:
        """Whether x is one exactly known real (an :meth:`interval` with equal ends)."""
        raise NotImplementedError

    def increasing(self, fn: Callable[[Any], Any], x: Any) -> Any:
        """Enclosure of an increasing ``fn`` over x: fn at the two ends (tighter than fn(x))."""
        return self.interval(self.lower(fn(self.point(self.lower(x)))), self.upper(fn(self.point(self.upper(x)))))

    def exprel(self, x: Any) -> Any:
        """(exp(x) - 1) / x (1 at 0), increasing in x, over an interval x > 0."""
        return self.increasing(lambda y: self.expm1(y) / y, x)

    def logistic(self, x: Any) -> Any:
        """s(x) = 1 / (1 + e^-x), increasing: its values at x's ends."""
        return self.increasing(lambda y: 1 / (1 + self.exp(-y)), x)

    def logistic_slope(self, x: Any) -> Any:
        """s'(x) = s(x) (1 - s(x)) over x: even and decreasing in |x|, so its values at |x|'s two ends."""
        near, far = self.magnitude(x)

        def at(z: Any) -> Any:
            s = 1 / (1 + self.exp(self.point(-z)))
            return s * (1 - s)

        return self.interval(self.lower(at(far)), self.upper(at(near)))

    def power_of_ten(self, exponent: Any) -> Any:
        """10^exponent as exp(exponent ln 10), ln 10 enclosed by the floats an ulp either side of it."""
        ln10 = self.interval(math.nextafter(LN10, 0.0), math.nextafter(LN10, math.inf))
        return self.exp(exponent * ln10)

    def magnitude(self, x: Any) -> tuple[float, float]:
        """(a float <= inf |x|, a float >= sup |x|)."""
        lo, hi = self.lower(x), self.upper(x)
        if lo > 0:
            return lo, hi
        if hi < 0:
            return -hi, -lo
        return 0.0, max(-lo, hi)

    def hull(self, values: Sequence[Any]) -> Any:
        return self.interval(min(self.lower(v) for v in values), max(self.upper(v) for v in values))

    def unit_vector(self, index: int, size: int) -> Any:
        """e_index of R^size as a vector of this backend's numbers (a dual number's directions): a numpy array
        of points, indexed by direction."""
        return np.asarray([self.point(1.0 if i == index else 0.0) for i in range(size)], dtype=object)

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        """``a`` where ``condition`` holds, else ``b`` (elementwise on a batch of boxes)."""
        return a if condition else b

    # --- exact ends, for the single-instance enclosures (sltcheck.numerics.intervals) ---------------

    def owns(self, x: Any) -> bool:
        """Whether x is one of this backend's numbers."""
        raise NotImplementedError

    def number(self, value: Any) -> Any:
        """An int, float or mpmath mpf as a point: exact (mpmath: rounded outward where it has more
        bits than the working precision)."""
        raise NotImplementedError

    def from_ends(self, low: Any, high: Any) -> Any:
        """A number containing every real in [low, high] (mpf or float ends, taken exactly)."""
        raise NotImplementedError

    def ends(self, x: Any) -> tuple[Any, Any]:
        """(an mpf <= every real in x, an mpf >= every real in x), exact: -inf/+inf where x is not finite."""
        raise NotImplementedError

    def log(self, x: Any) -> Any:
        raise NotImplementedError

    @contextlib.contextmanager
    def working_precision(self, dps: int) -> Iterator[None]:
        """Every operation inside keeps about ``dps`` significant digits (and rounds outward)."""
        raise NotImplementedError
        yield

    def intersect(self, a: Any, b: Any) -> Any:
        """Two enclosures of the same real number: their common part (tighter than either)."""
        lo, hi = max(self.lower(a), self.lower(b)), min(self.upper(a), self.upper(b))
        if lo > hi:  # cannot happen for two true enclosures; keep one rather than fail
            return a
        return self.interval(lo, hi)


class ArbBackend(Backend):
    name = "arb"

    def __init__(self) -> None:
        from flint import arb

        self._arb = arb

    def interval(self, low: float, high: float) -> Any:
        a = self._arb(float(low))
        return a if low == high else a.union(self._arb(float(high)))

    def exp(self, x: Any) -> Any:
        return x.exp()

    def expm1(self, x: Any) -> Any:
        return x.expm1()

    def sqrt(self, x: Any) -> Any:
        return x.sqrt()

    def is_point(self, x: Any) -> bool:
        return bool(x.is_exact())

    def lower(self, x: Any) -> float:
        return _down(float(x.lower())) if x.is_finite() else -math.inf

    def owns(self, x: Any) -> bool:
        return isinstance(x, self._arb)

    def number(self, value: Any) -> Any:
        if isinstance(value, mpmath.mpf):
            return self._of_mpf(value)
        if isinstance(value, int):
            from flint import fmpz

            return self._arb(fmpz(value))
        return self._arb(float(value))  # a double: exact

    def _of_mpf(self, value: Any) -> Any:
        sign, man, exp, _ = value._mpf_
        if not man:
            if value == 0:
                return self._arb(0)
            raise ValueError(f"value must be a finite number, got {value}")
        out = self._arb((int(man), int(exp)))  # mantissa and exponent: exact
        return -out if sign else out

    def from_ends(self, low: Any, high: Any) -> Any:
        if not (mpmath.isfinite(low) and mpmath.isfinite(high)):
            return self._arb.nan()  # contains every real: proves nothing, never something false
        lo, hi = self.number(low), self.number(high)
        return lo if low == high else lo.union(hi)

    def ends(self, x: Any) -> tuple[Any, Any]:
        if not x.is_finite():
            return mpmath.mpf("-inf"), mpmath.mpf("inf")
        mid, rad = self._to_raw(x.mid()), self._to_raw(x.rad())  # both exact binary numbers
        libmp = mpmath.libmp
        return mpmath.mp.make_mpf(libmp.mpf_sub(mid, rad, 0)), mpmath.mp.make_mpf(libmp.mpf_add(mid, rad, 0))

    @staticmethod
    def _to_raw(exact: Any) -> Any:
        """An exact arb (a midpoint or a radius) as a raw mpf, without rounding."""
        if exact.is_zero():
            return mpmath.libmp.fzero
        man, exp = exact.man_exp()
        return mpmath.libmp.from_man_exp(int(man), int(exp))

    def log(self, x: Any) -> Any:
        return x.log()

    @contextlib.contextmanager
    def working_precision(self, dps: int) -> Iterator[None]:
        import flint

        saved = flint.ctx.prec
        flint.ctx.dps = dps
        try:
            yield
        finally:
            flint.ctx.prec = saved

    def upper(self, x: Any) -> float:
        return _up(float(x.upper())) if x.is_finite() else math.inf


class MpmathBackend(Backend):
    name = "mpmath"

    def interval(self, low: float, high: float) -> Any:
        return iv.mpf([float(low), float(high)])

    def exp(self, x: Any) -> Any:
        return iv.exp(x)

    def expm1(self, x: Any) -> Any:
        from sltcheck.numerics.enclosures import expm1

        return expm1(x)

    def sqrt(self, x: Any) -> Any:
        return iv.sqrt(x)

    def is_point(self, x: Any) -> bool:
        return bool(x._mpi_[0] == x._mpi_[1])

    def _end(self, x: Any, index: int) -> float:
        end = x._mpi_[index]
        if end in (mpmath.libmp.finf, mpmath.libmp.fninf, mpmath.libmp.fnan):
            return math.nan
        return float(mpmath.mpf(end))

    def lower(self, x: Any) -> float:
        return _down(self._end(x, 0))

    def owns(self, x: Any) -> bool:
        return isinstance(x, iv.mpf)

    def number(self, value: Any) -> Any:
        if isinstance(value, (mpmath.mpf, int)):
            return iv.mpf(value)  # rounded outward where it has more bits than iv.prec
        return iv.mpf(float(value))

    def from_ends(self, low: Any, high: Any) -> Any:
        return iv.mpf([low, high])  # mpf, int or float ends: rounded outward

    def ends(self, x: Any) -> tuple[Any, Any]:
        lo, hi = x._mpi_
        return mpmath.mp.make_mpf(lo), mpmath.mp.make_mpf(hi)  # the raw ends, never rounded

    def log(self, x: Any) -> Any:
        return iv.log(x)

    @contextlib.contextmanager
    def working_precision(self, dps: int) -> Iterator[None]:
        saved = iv.prec
        iv.dps = dps
        try:
            yield
        finally:
            iv.prec = saved

    def upper(self, x: Any) -> float:
        return _up(self._end(x, 1))


@functools.cache
def arb_available() -> bool:
    try:
        import flint  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def backend(name: str | None = None) -> Backend:
    """The backend called ``name`` ("arb", "mpmath" or "arrays"); None: arb where python-flint imports, else
    mpmath. ``arrays`` encloses many boxes at once and hands points to the default scalar backend."""
    if name == "arrays":
        from sltcheck.numerics.array_backend import ArrayBackend

        return ArrayBackend(backend(None))
    if name is None:
        name = "arb" if arb_available() else "mpmath"
    if name == "exact":  # exact values where they are kept, arb balls elsewhere (sltcheck.numerics.exact)
        if not arb_available():
            raise ValueError("backend 'exact' needs python-flint: pip install 'sltcheck[certify]'")
        from sltcheck.numerics.exact import ExactBackend

        return ExactBackend()
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {name!r}")
    if name == "arb":
        if not arb_available():
            raise ValueError("backend 'arb' needs python-flint: pip install 'sltcheck[certify]' (or use 'mpmath')")
        return ArbBackend()
    return MpmathBackend()


def subset_sums(arith: Backend, terms: Sequence[Any]) -> tuple[Any, ...]:
    """Enclosures of the sums of every subset of ``terms`` (2^len(terms) of them), sorted by midpoint."""
    sums = []
    for chosen in itertools.product((0, 1), repeat=len(terms)):
        total = arith.point(0.0)
        for keep, term in zip(chosen, terms, strict=True):
            if keep:
                total = total + term
        sums.append(total)
    return tuple(sorted(sums, key=lambda s: (arith.lower(s) + arith.upper(s)) / 2))
