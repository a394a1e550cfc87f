"""Exact arithmetic where an instance allows it, enclosures elsewhere: the backend ``exact``.

Where a bound is attained on an instance (measured = bound as real numbers: Theorem 9's chain with
W_QK reproduced exactly and equal tokens, Lemma 2's errors equal in every entry), no enclosure
rounded outward decides measured <= bound, at any precision. Those instances are made of rationals
(every float64 is one) and square roots: this backend computes them exactly. Each number is a
:class:`Exact`, an exact value r sqrt(s) (r, s rational, s > 0: :class:`Radical`) where the
operations keep one, always with an arb ball around it (python-flint) for where they do not:

- +, -, *, / exactly (a sum of unlike radicals, sqrt(2) + sqrt(3), has no exact value here);
- sqrt of a rational, |x|, max(0, x), max and min by exact comparison (a maximum is exact where an
  exact value lies above every other's ball);
- exp(0) = 1, exp(0) - 1 = 0; a softmax row whose attended logits are exactly equal is uniform
  (:func:`sltcheck.numerics.intervals.softmax`); the spectral norm of a vector is its Euclidean norm;
- anything else (exp of a nonzero number, a softmax of unequal logits, a general spectral norm)
  keeps only its ball, and so does everything computed from it (0 times anything stays 0).

The enclosure modules run unchanged on it (:func:`sltcheck.numerics.enclosures.using` ``("exact", dps)``):
:mod:`sltcheck.harness.interval_verdict` evaluates an instance here where its intervals overlap, and decides it
exactly when both sides come out exact: "attained" where they are equal (proved <= with equality).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath

from sltcheck.numerics.balls import ArbBackend


def _square_root(q: Fraction) -> Fraction | None:
    """sqrt(q) where q >= 0 is the square of a rational, else None."""
    if q < 0:
        return None
    top, bottom = math.isqrt(q.numerator), math.isqrt(q.denominator)
    return Fraction(top, bottom) if top * top == q.numerator and bottom * bottom == q.denominator else None


@dataclass(frozen=True)
class Radical:
    """The real number r sqrt(s), r rational, s > 0 rational (s = 1 for a rational; no square factor
    is taken out of s beyond a whole square: equal numbers may be written two ways, compared exactly)."""

    r: Fraction
    s: Fraction = Fraction(1)

    @staticmethod
    def of(r: Fraction, s: Fraction = Fraction(1)) -> Radical:
        if r == 0:
            return Radical(Fraction(0))
        root = _square_root(s)
        return Radical(r * root) if root is not None else Radical(r, s)

    def __add__(self, other: Radical) -> Radical | None:
        if self.r == 0:
            return other
        if other.r == 0:
            return self
        ratio = _square_root(other.s / self.s)  # sqrt(s') = k sqrt(s): like radicals
        return None if ratio is None else Radical.of(self.r + other.r * ratio, self.s)

    def __neg__(self) -> Radical:
        return Radical(-self.r, self.s)

    def __mul__(self, other: Radical) -> Radical:
        return Radical.of(self.r * other.r, self.s * other.s)

    def __truediv__(self, other: Radical) -> Radical:
        return Radical.of(self.r / other.r, self.s / other.s)

    def sign(self) -> int:
        return (self.r > 0) - (self.r < 0)

    def compare(self, other: Radical) -> int:
        """-1, 0 or 1 as self <, =, > other, exactly (through the squares r^2 s)."""
        a, b = self.sign(), other.sign()
        if a != b:
            return 1 if a > b else -1
        if a == 0:
            return 0
        squares = (self.r * self.r * self.s > other.r * other.r * other.s) - (
            self.r * self.r * self.s < other.r * other.r * other.s)
        return squares * a

    def sqrt(self) -> Radical | None:
        return Radical.of(Fraction(1), self.r) if self.s == 1 and self.r >= 0 else None

    def ball(self) -> Any:
        from flint import arb, fmpq

        value = arb(fmpq(self.r.numerator, self.r.denominator))
        return value if self.s == 1 else value * arb(fmpq(self.s.numerator, self.s.denominator)).sqrt()


def unit_vector(vector: Any) -> tuple[float, ...]:
    """vector / ||vector|| in float64 with norm <= 1 exactly (the rounding may leave it above: each
    coordinate is moved an ulp towards 0 until it is not); e_1 for the zero vector."""
    values = [float(c) for c in vector]
    size = math.hypot(*values)
    unit = [c / size for c in values] if size > 0 else [1.0] + [0.0] * (len(values) - 1)
    while sum(Fraction(c) ** 2 for c in unit) > 1:
        unit = [math.nextafter(c, 0.0) for c in unit]
    return tuple(unit)


def rational(value: Any) -> Fraction:
    """An int, float or mpf as the rational it is (exactly)."""
    if isinstance(value, mpmath.mpf):
        sign, man, exp, _ = value._mpf_
        if not man:
            if value == 0:
                return Fraction(0)
            raise ValueError(f"value must be a finite number, got {value}")
        out = Fraction(int(man)) * (Fraction(2) ** int(exp))
        return -out if sign else out
    return Fraction(value)


class Exact:
    """An exact value (a :class:`Radical`) where known, and always a ball (arb) around the number;
    ``high``, where known, an exact upper end (a minimum over choices enclosed by the best one found:
    Lemma 7's measured side), kept by nothing but :func:`up_to` and the final comparison."""

    __slots__ = ("ball", "high", "value")

    def __init__(self, value: Radical | None, ball: Any = None, high: Radical | None = None) -> None:
        self.value = value
        self.ball = value.ball() if ball is None and value is not None else ball
        self.high = value if value is not None else high

    @staticmethod
    def lift(other: Any) -> Exact:
        if isinstance(other, Exact):
            return other
        from flint import arb

        if isinstance(other, arb):
            return Exact(None, other)
        return Exact(Radical.of(rational(other)))

    def _combine(self, other: Any, exact: Any, ball: Any) -> Exact:
        o = Exact.lift(other)
        value = exact(self.value, o.value) if self.value is not None and o.value is not None else None
        return Exact(value, ball(self.ball, o.ball))

    def __add__(self, other: Any) -> Exact:
        return self._combine(other, lambda a, b: a + b, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Exact:
        return self._combine(other, lambda a, b: a + (-b), lambda a, b: a - b)

    def __rsub__(self, other: Any) -> Exact:
        return Exact.lift(other) - self

    def __mul__(self, other: Any) -> Exact:
        o = Exact.lift(other)
        for zero in (self, o):  # 0 times any finite number is 0, known or not
            if zero.value is not None and zero.value.r == 0:
                return Exact(Radical(Fraction(0)))
        return self._combine(o, lambda a, b: a * b, lambda a, b: a * b)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Exact:
        o = Exact.lift(other)
        if o.value is not None and o.value.r == 0:
            return Exact(None, self.ball / o.ball)  # not finite: proves nothing
        if self.value is not None and self.value.r == 0:
            return Exact(Radical(Fraction(0)))
        return self._combine(o, lambda a, b: a / b, lambda a, b: a / b)

    def __rtruediv__(self, other: Any) -> Exact:
        return Exact.lift(other) / self

    def __neg__(self) -> Exact:
        return Exact(None if self.value is None else -self.value, -self.ball)

    def __abs__(self) -> Exact:
        if self.value is not None:
            return self if self.value.sign() >= 0 else -self
        return Exact(None, abs(self.ball))

    def __repr__(self) -> str:
        return f"Exact({self.value}, {self.ball})"


def up_to(low: Any, high: Exact) -> Exact:
    """A number in [low, high] (``low`` an mpf or float end) that keeps ``high``'s exact value as its
    exact upper end."""
    from flint import arb

    ball = high.ball.union(ExactBackend._exact_arb(low)) if isinstance(high.ball, arb) else high.ball
    return Exact(None, ball, high.value if high.value is not None else high.high)


def exact_max(values: list[Exact], largest: bool = True) -> Exact:
    """max (or min) of exact-or-ball numbers: exact where an exact value dominates every other ball."""
    known = [v for v in values if v.value is not None]
    if known:
        best = known[0]
        for v in known[1:]:
            assert v.value is not None
            assert best.value is not None
            if (v.value.compare(best.value) > 0) == largest and v.value.compare(best.value) != 0:
                best = v
        others = [v for v in values if v.value is None]
        if all((v.ball < best.ball) if largest else (v.ball > best.ball) for v in others):
            return best
    out = values[0].ball
    for v in values[1:]:
        out = out.max(v.ball) if largest else out.min(v.ball)
    return Exact(None, out)


def exact_sqrt(x: Exact) -> Exact | None:
    """sqrt(x) exactly where x is a rational >= 0, else None."""
    root = x.value.sqrt() if x.value is not None else None
    return None if root is None else Exact(root)


def relu(x: Exact) -> Exact | None:
    """max(0, x) exactly, or None."""
    if x.value is None:
        return None
    return x if x.value.sign() >= 0 else Exact(Radical(Fraction(0)))


def is_zero(x: Any) -> bool:
    return isinstance(x, Exact) and x.value is not None and x.value.r == 0


class ExactBackend(ArbBackend):
    """Exact values where the operations keep them; arb balls (python-flint) for everything else."""

    name = "exact"

    def _ball(self, x: Any) -> Any:
        return x.ball if isinstance(x, Exact) else x

    def interval(self, low: float, high: float) -> Any:
        if low == high:
            return Exact.lift(float(low))
        return Exact(None, super().interval(low, high))

    def exp(self, x: Any) -> Any:
        if is_zero(x):
            return Exact(Radical(Fraction(1)))
        return Exact(None, super().exp(self._ball(x)))

    def expm1(self, x: Any) -> Any:
        if is_zero(x):
            return Exact(Radical(Fraction(0)))
        return Exact(None, super().expm1(self._ball(x)))

    def sqrt(self, x: Any) -> Any:
        root = exact_sqrt(x) if isinstance(x, Exact) else None
        return root if root is not None else Exact(None, super().sqrt(self._ball(x)))

    def log(self, x: Any) -> Any:
        if isinstance(x, Exact) and x.value is not None and x.value.compare(Radical(Fraction(1))) == 0:
            return Exact(Radical(Fraction(0)))
        return Exact(None, super().log(self._ball(x)))

    def lower(self, x: Any) -> float:
        return super().lower(self._ball(x))

    def upper(self, x: Any) -> float:
        return super().upper(self._ball(x))

    def is_point(self, x: Any) -> bool:
        return isinstance(x, Exact) and x.value is not None

    def owns(self, x: Any) -> bool:
        return isinstance(x, Exact)

    def number(self, value: Any) -> Any:
        return Exact(Radical.of(rational(value)))

    @staticmethod
    def _exact_arb(value: Any) -> Any:
        """An int, float or mpf as an exact arb point."""
        from flint import arb, fmpq

        q = rational(value)
        return arb(fmpq(q.numerator, q.denominator)) if q.denominator & (q.denominator - 1) else arb(
            (q.numerator, -(q.denominator.bit_length() - 1)))

    def from_ends(self, low: Any, high: Any) -> Any:
        if low == high and mpmath.isfinite(low):
            return self.number(low)
        if not (mpmath.isfinite(low) and mpmath.isfinite(high)):
            return Exact(None, self._arb.nan())
        return Exact(None, ArbBackend.number(self, low).union(ArbBackend.number(self, high)))

    def ends(self, x: Any) -> tuple[Any, Any]:
        return super().ends(self._ball(x))

    @contextlib.contextmanager
    def working_precision(self, dps: int) -> Iterator[None]:
        with super().working_precision(dps):
            yield
