"""Affine forms over boxes (:mod:`sltcheck.numerics.affine_arrays`): at points drawn in each box, every
operation's exact result (mpmath at 50 digits) lies in the form evaluated there, centre + coef . e +- radius
(the relational claim, not only the range), and two mutants (exp's curvature remainder dropped, ReLU's chord
offset dropped) are caught by the same check; what proves nothing (a reciprocal across 0, NaN, overflow) is
unbounded, and a constant that float64 would round is refused."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from sltcheck.numerics import affine_arrays as aa
from sltcheck.numerics import interval_arrays as ia
from sltcheck.numerics.affine_arrays import Affine
from sltcheck.numerics.interval_arrays import Intervals

RNG_SEED = 20261207
BOXES, POINTS = 150, 4


def _operands(parameters):
    """Two correlated operands of the parameters (p, q): u = p + q / 3, v = p q (nonlinear itself)."""
    p, q = parameters[..., 0], parameters[..., 1]
    return p + q * (1.0 / 3.0), p * q


def _mp_operands(p, q):
    return p + q * mpmath.mpf(1.0 / 3.0), p * q


def _mpf(x: float):
    return mpmath.mpf(float(x))


# (name, the operation on forms, the exact operation, the parameters' range, the boxes' largest width)
CASES = [
    ("add", lambda u, v: u + v, lambda u, v: u + v, (-3.0, 3.0), 0.5),
    ("sub", lambda u, v: u - v, lambda u, v: u - v, (-3.0, 3.0), 0.5),
    ("mul", lambda u, v: u * v, lambda u, v: u * v, (-3.0, 3.0), 0.5),
    ("div", lambda u, v: u / (v + 10.0), lambda u, v: u / (v + 10), (-3.0, 3.0), 0.5),
    ("reciprocal", lambda u, v: 1.0 / (u * u + 0.5), lambda u, v: 1 / (u * u + mpmath.mpf(0.5)), (-2.0, 2.0), 0.5),
    ("interval-constants", lambda u, v: u * Intervals(0.3, 0.31) + Intervals(-1.0, 1.0),
     lambda u, v: u * mpmath.mpf(0.31) + 1, (-3.0, 3.0), 0.5),  # one of the values the intervals allow
    ("interval-constants-low", lambda u, v: u * Intervals(0.3, 0.31) - Intervals(-1.0, 1.0),
     lambda u, v: u * mpmath.mpf(0.3) - 1, (-3.0, 3.0), 0.5),
    ("exp", lambda u, v: ia.exp(u), lambda u, v: mpmath.exp(u), (-5.0, 5.0), 0.5),
    ("exp-wide", lambda u, v: ia.exp(u * 40.0), lambda u, v: mpmath.exp(u * 40), (-5.0, 5.0), 0.5),
    ("expm1-tiny", lambda u, v: ia.expm1(u * 1e-7), lambda u, v: mpmath.expm1(u * mpmath.mpf(1e-7)), (-1.0, 1.0), 0.5),
    ("expm1", lambda u, v: ia.expm1(v), lambda u, v: mpmath.expm1(v), (-2.0, 2.0), 0.5),
    ("cos", lambda u, v: ia.cos(u * 4.0 + v), lambda u, v: mpmath.cos(u * 4 + v), (-3.0, 3.0), 0.3),
    ("sin", lambda u, v: ia.sin(u * 4.0 + v), lambda u, v: mpmath.sin(u * 4 + v), (-3.0, 3.0), 0.3),
    ("relu", lambda u, v: ia.relu(u - v), lambda u, v: max(u - v, 0), (-1.0, 1.0), 0.5),
    ("relu-change", lambda u, v: ia.relu_change(u, v * 0.1), lambda u, v: max(u + v / 10, 0) - max(u, 0),
     (-1.0, 1.0), 0.5),
    ("clip", lambda u, v: ia.clip(u * 0.1 + 0.5, 0.0, 1.0), lambda u, v: u / 10 + mpmath.mpf(0.5), (-2.0, 2.0), 0.5),
    ("total", lambda u, v: ia.total(aa.stack([u, v, u * v]), axis=-1), lambda u, v: u + v + u * v, (-2.0, 2.0), 0.5),
]


def _violations(operation, exact, span, widest) -> int:
    """Points whose exact result lies outside the form evaluated at them."""
    rng = np.random.default_rng(RNG_SEED)
    lows = rng.uniform(span[0], span[1], (BOXES, 2))
    highs = np.minimum(lows + rng.uniform(0.0, widest, (BOXES, 2)), span[1])
    highs[: BOXES // 5] = lows[: BOXES // 5]  # a fifth are points
    form = operation(*_operands(Affine.variables(lows, highs)))
    middle = lows + (highs - lows) / 2
    half = np.maximum(highs - middle, middle - lows)  # as Affine.variables takes it
    outside = 0
    with mpmath.workdps(50):
        for box in range(BOXES):
            for _ in range(POINTS):
                point = lows[box] + (highs[box] - lows[box]) * rng.uniform(0, 1, 2)
                p, q = _mpf(point[0]), _mpf(point[1])
                value = exact(*_mp_operands(p, q))
                e = [(_mpf(point[j]) - _mpf(middle[box, j])) / _mpf(form_scale(form, box, j, half)) if half[box, j] > 0
                     else mpmath.mpf(0) for j in range(2)]
                at = _mpf(form.centre[box]) + sum(_mpf(form.coef[box, j]) * e[j] for j in range(2))
                outside += int(abs(value - at) > _mpf(form.radius[box]))
    return outside


def form_scale(form: Affine, box: int, j: int, half: np.ndarray) -> float:
    """The half-width the forms' parameter e_j is scaled by (Affine.variables rounds it up)."""
    return float(aa._up(np.array(half[box, j])))


@pytest.mark.parametrize(("name", "operation", "exact", "span", "widest"), CASES, ids=[c[0] for c in CASES])
def test_operation_holds_the_exact_result_at_every_point(name, operation, exact, span, widest):
    assert _violations(operation, exact, span, widest) == 0


def test_a_constant_interval_is_held_whole():
    form = Affine.variables(np.array([[0.0, 0.0]]), np.array([[1.0, 1.0]]))[:, 0] * 0.0 + Intervals(-1.0, 2.0)
    span = form.range()
    assert span.lo[0] <= -1.0
    assert span.hi[0] >= 2.0


def test_the_forms_cancel_what_intervals_cannot():
    """(3p + q) - 3p over [0, 1]^2 is q, of width 1, as forms; as intervals its width is 7: the reason for the forms."""
    lows, highs = np.array([[0.0, 0.0]]), np.array([[1.0, 1.0]])
    p, q = Affine.variables(lows, highs)[:, 0], Affine.variables(lows, highs)[:, 1]
    span = ((p * 3.0 + q) - p * 3.0).range()
    assert span.hi[0] - span.lo[0] < 1.0 + 1e-12
    P, Q = Intervals(lows[:, 0], highs[:, 0]), Intervals(lows[:, 1], highs[:, 1])
    wide = (P * 3.0 + Q) - P * 3.0
    assert wide.hi[0] - wide.lo[0] > 6.9


def test_exps_remainder_dropped_is_caught(monkeypatch):
    """The mutant: exp linearised with no curvature term; the points of the boxes refute it."""
    linearised = aa._linearised
    monkeypatch.setattr(aa, "_linearised",
                        lambda x, v, ve, s, se, curvature: linearised(x, v, ve, s, se, 0 * curvature))
    monkeypatch.setattr(aa, "_narrower", lambda form, enclosure: form)  # else the interval form takes over
    assert _violations(lambda u, v: ia.exp(u), lambda u, v: mpmath.exp(u), (-5.0, 5.0), 0.5) > 0


def test_relus_chord_without_its_offset_is_caught(monkeypatch):
    """The mutant: ReLU taken as its chord alone (lam y, no offset); points across 0 refute it."""
    monkeypatch.setattr(aa, "relu", lambda x: x * np.where(x.range().lo >= 0, 1.0, np.where(
        x.range().hi <= 0, 0.0, x.range().hi / (x.range().hi - x.range().lo))))
    assert _violations(lambda u, v: aa.relu(u - v), lambda u, v: max(u - v, 0), (-1.0, 1.0), 0.5) > 0


def test_what_proves_nothing_says_so():
    """A reciprocal over a range reaching 0 and an operand of NaN give an unbounded enclosure, never a finite one."""
    lows, highs = np.array([[-1.0, 0.0]]), np.array([[1.0, 1.0]])
    p = Affine.variables(lows, highs)[:, 0]
    assert ia.upper_ends(1.0 / p)[0] == np.inf
    assert ia.upper_ends(p * np.nan + 1.0)[0] == np.inf
    assert ia.upper_ends(ia.exp(p * 1e6))[0] == np.inf


def test_constants_that_float64_would_round_are_refused():
    p = Affine.variables(np.array([[0.0]]), np.array([[1.0]]))[:, 0]
    with pytest.raises(TypeError, match="float64-exact"):
        p + (2**53 + 1)
    with pytest.raises(TypeError, match="float64-exact"):
        p * np.array([mpmath.mpf(1) / 3], dtype=object)
    with pytest.raises(ValueError, match="different parameters"):
        p + Affine.variables(np.zeros((1, 2)), np.ones((1, 2)))[:, 0]


def test_indexing_and_concatenating_keep_the_coefficients_with_their_values():
    lows, highs = np.zeros((2, 3)), np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    x = Affine.variables(lows, highs).reshape(2, 3, 1)
    picked = x[..., 0, None]
    assert picked.shape == (2, 3, 1)
    assert np.array_equal(picked.coef[:, :, 0, :], x.coef[:, :, 0, :])
    joined = aa.concatenate(np.full((2, 1, 1), 7.0), x, axis=-2)
    assert joined.shape == (2, 4, 1)
    assert np.array_equal(joined.coef[:, 0], np.zeros((2, 1, 3)))
    assert np.array_equal(joined.coef[:, 1:], x.coef)
