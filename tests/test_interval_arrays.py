"""Vectorised outward-rounded intervals: every operation contains the exact result (mpmath at 50 digits)
at points drawn inside its operands, and an inward-rounding mutant is caught by the same check."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from sltcheck.numerics import interval_arrays as ia
from sltcheck.numerics.interval_arrays import Intervals

RNG_SEED = 20261128


def _operands(rng: np.random.Generator, count: int, low: float, high: float) -> Intervals:
    ends = np.sort(rng.uniform(low, high, (2, count)), axis=0)
    ends[:, : count // 4] = ends[0, : count // 4]  # a quarter are points
    return Intervals(ends[0], ends[1])


def _inside(x: Intervals, rng: np.random.Generator) -> np.ndarray:
    return x.lo + (x.hi - x.lo) * rng.uniform(0, 1, x.lo.shape)


# (name, the interval operation, the exact operation, the operands' range)
CASES = [
    ("add", lambda a, b: a + b, lambda a, b: a + b, (-3.0, 3.0)),
    ("sub", lambda a, b: a - b, lambda a, b: a - b, (-3.0, 3.0)),
    ("mul", lambda a, b: a * b, lambda a, b: a * b, (-3.0, 3.0)),
    ("div", lambda a, b: a / b, lambda a, b: a / b, (0.1, 3.0)),
    ("exp", lambda a, b: ia.exp(a), lambda a, b: mpmath.exp(a), (-30.0, 30.0)),
    ("exp-extremes", lambda a, b: ia.exp(a), lambda a, b: mpmath.exp(a), (-745.0, 709.0)),
    ("exp-reduction", lambda a, b: ia.exp(a), lambda a, b: mpmath.exp(a), (-0.36, 0.36)),
    ("expm1", lambda a, b: ia.expm1(a), lambda a, b: mpmath.expm1(a), (-1e-6, 1e-6)),
    ("expm1-wide", lambda a, b: ia.expm1(a), lambda a, b: mpmath.expm1(a), (-2.0, 2.0)),
    ("log", lambda a, b: ia.log(a), lambda a, b: mpmath.log(a), (1e-3, 1e3)),
    ("cos", lambda a, b: ia.cos(a), lambda a, b: mpmath.cos(a), (-200.0, 200.0)),
    ("sin", lambda a, b: ia.sin(a), lambda a, b: mpmath.sin(a), (-200.0, 200.0)),
    ("square", lambda a, b: ia.square(a), lambda a, b: a * a, (-2.0, 2.0)),
    ("sqrt", lambda a, b: ia.sqrt(a), lambda a, b: mpmath.sqrt(a), (0.0, 5.0)),
    ("relu", lambda a, b: ia.relu(a), lambda a, b: max(a, 0), (-1.0, 1.0)),
]


def _contained(operation, exact, span) -> bool:
    rng = np.random.default_rng(RNG_SEED)
    a, b = _operands(rng, 400, *span), _operands(rng, 400, *span)
    result = operation(a, b)
    x, y = _inside(a, rng), _inside(b, rng)
    with mpmath.workdps(50):
        for index in range(400):
            value = exact(mpmath.mpf(float(x[index])), mpmath.mpf(float(y[index])))
            if not (mpmath.mpf(float(result.lo[index])) <= value <= mpmath.mpf(float(result.hi[index]))):
                return False
    return True


@pytest.mark.parametrize(("name", "operation", "exact", "span"), CASES, ids=[c[0] for c in CASES])
def test_operation_contains_the_exact_result(name, operation, exact, span):
    assert _contained(operation, exact, span)


def test_inward_rounding_is_caught(monkeypatch):
    """The mutant: ends rounded toward the inside; the containment check refutes it."""
    monkeypatch.setattr(ia, "_down", lambda x: np.nextafter(x, np.inf))
    monkeypatch.setattr(ia, "_up", lambda x: np.nextafter(x, -np.inf))
    assert not _contained(lambda a, b: a * b, lambda a, b: a * b, (-3.0, 3.0))


def test_a_truncated_taylor_polynomial_is_caught(monkeypatch):
    """The mutant: exp's polynomial cut to degree 6 with the remainder of degree 14 kept; containment refutes it."""
    monkeypatch.setattr(ia, "_DEGREE", 6)
    assert not _contained(lambda a, b: ia.exp(a), lambda a, b: mpmath.exp(a), (-0.36, 0.36))


def test_exp_needs_no_libm_and_stays_tight():
    """exp's ends come from +, -, x alone (numpy's exp is never called), within 1e-12 of the value."""
    x = np.linspace(-40.0, 40.0, 1001)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ia.np, "exp", None)
        patch.setattr(ia.np, "expm1", None)
        enclosed = ia.exp(Intervals(x))
    assert np.all((enclosed.hi - enclosed.lo) <= 1e-12 * enclosed.hi)


def test_sums_round_every_addition_outward():
    terms = Intervals(np.full((1, 1000), 0.1))
    total = ia.total(terms, axis=-1)
    with mpmath.workdps(50):
        exact = 1000 * mpmath.mpf(0.1)
        assert mpmath.mpf(float(total.lo[0])) <= exact <= mpmath.mpf(float(total.hi[0]))


def test_an_unbounded_result_proves_nothing():
    zero_to_inf = Intervals(np.array([0.0]), np.array([math.inf]))
    nan_prone = Intervals(np.array([0.0]), np.array([0.0])) * zero_to_inf  # 0 x inf
    assert ia.upper_ends(nan_prone - zero_to_inf)[0] == math.inf
    assert ia.upper_ends(Intervals(np.array([1.0])) / Intervals(np.array([-1.0]), np.array([1.0])))[0] == math.inf
