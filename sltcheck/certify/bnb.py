"""The branch-and-bound over one family's box: enclose, close, split (no statement by name).

Boxes are (lows, highs) tuples of floats; a box's *upper* is a float >= measured / bound at every
instance in it (the max over the family's candidates of sup|numerator| / inf denominator, rounded
up), its *lower* a float <= the ratio at its midpoint (when the midpoint is an instance of the
family). A box is *closed* once its upper is <= 1 (proved: the statement holds on it) and no
larger than (1 + tolerance) x the best lower bound found (it cannot raise the supremum's bracket
by more than the tolerance); the others stay open, and the open box with the largest upper is
split next, across its widest dimension (relative to the family's width in it).

A box whose quotient reaches above 1 is handed to the family's arguments
(:mod:`sltcheck.certify.arguments`); the first that proves bound - measured >= 0 on it sets its
upper to 1 (the ratio is <= 1 there: nothing tighter is claimed) and is recorded as ``argument``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sltcheck.certify import INSIDE, OUTSIDE, Family, Ratio
from sltcheck.numerics.balls import Backend, backend

Box = tuple[tuple[float, ...], tuple[float, ...]]


@dataclass(frozen=True)
class BoxResult:
    upper: float  # >= measured / bound on the box (-inf: the box holds no instance)
    lower: float  # <= measured / bound at the midpoint (-inf: the midpoint is not an instance)
    choice: int  # the candidate that gave ``lower``
    point: tuple[float, ...]  # the midpoint
    state: str  # INSIDE, OUTSIDE or STRADDLES
    argument: str | None = None  # the argument that proved the box (its upper is then 1)


def ratio_upper(arith: Backend, pair: Ratio) -> float:
    numerator, denominator = pair
    top = arith.magnitude(numerator)[1]
    bottom = arith.lower(denominator)
    if not bottom > 0 or math.isinf(top):
        return math.inf
    return math.nextafter(top / bottom, math.inf)


def ratio_lower(arith: Backend, pair: Ratio) -> float:
    numerator, denominator = pair
    top = arith.magnitude(numerator)[0]
    bottom = arith.upper(denominator)
    if not bottom > 0 or math.isinf(bottom):
        return -math.inf
    return math.nextafter(top / bottom, -math.inf)


def _values(arith: Backend, family: Family, lows: Sequence[float], highs: Sequence[float]) -> dict[str, Any]:
    return {d.name: arith.interval(lo, hi) for d, lo, hi in zip(family.dimensions, lows, highs, strict=True)}


def _state(arith: Backend, family: Family, values: dict[str, Any]) -> str:
    return INSIDE if family.feasibility is None else family.feasibility(arith, values)


def point_ratio(arith: Backend, family: Family, point: Sequence[float]) -> tuple[float, int]:
    """(a float <= measured / bound at ``point``, the candidate giving it); -inf off the family."""
    values = _values(arith, family, point, point)
    if _state(arith, family, values) != INSIDE:
        return -math.inf, 0
    lowers = [ratio_lower(arith, pair) for pair in family.enclose(arith, values)]
    best = max(range(len(lowers)), key=lowers.__getitem__)
    return lowers[best], best


def evaluate_box(arith: Backend, family: Family, box: Box, lower: bool = True) -> BoxResult:
    """The box's upper (its argument where the quotient reaches above 1) and, with ``lower``, the
    ratio at its midpoint (else -inf: a trial half of the "best" split needs only its upper)."""
    lows, highs = box
    values = _values(arith, family, lows, highs)
    state = _state(arith, family, values)
    point = tuple(lo + (hi - lo) / 2 for lo, hi in zip(lows, highs, strict=True))
    if state == OUTSIDE:
        return BoxResult(-math.inf, -math.inf, 0, point, state)
    upper = max(ratio_upper(arith, pair) for pair in family.enclose(arith, values))
    argument = None
    if upper > 1.0:
        argument = argued(arith, family, values, lows, highs)
        if argument is not None:
            upper = 1.0
    if not lower:
        return BoxResult(upper, -math.inf, 0, point, state, argument)
    low, choice = point_ratio(arith, family, point)
    return BoxResult(upper, low, choice, point, state, argument)


def argued(arith: Backend, family: Family, values: dict[str, Any], lows: Sequence[float],
           highs: Sequence[float]) -> str | None:
    """The name of the first of the family's arguments that proves the box <= 1, else None."""
    ends = {d.name: (lo, hi) for d, lo, hi in zip(family.dimensions, lows, highs, strict=True)}
    for argument in family.arguments:
        if argument.proves(arith, values, ends):
            return argument.name
    return None


def evaluate_boxes(shared: tuple[Any, str], boxes: list[Box], lower: bool = True) -> list[BoxResult]:
    """Worker entry point: ``shared`` the family (itself, or by key from another process) and the backend by
    name (rebuilt in the worker); ``lower``: whether the midpoints' lower bounds are wanted."""
    from sltcheck.certify import families

    named, backend_name = shared
    family, arith = (families()[named] if isinstance(named, str) else named), backend(backend_name)
    if arith.name == "arrays":
        return evaluate_batch(arith, family, boxes, lower)
    return [evaluate_box(arith, family, box, lower=lower) for box in boxes]


# The arrays backend: the midpoints whose ratio is enclosed (on the scalar backend) per batch, those of
# its largest uppers (the lower bound needs the best points, not every one; a fixed count per batch
# keeps the result independent of the worker count)
LOWERS_PER_BATCH = 4


def evaluate_batch(arith: Backend, family: Family, boxes: list[Box], lower: bool = True) -> list[BoxResult]:
    """:func:`evaluate_box` for a batch of boxes of a vectorised family on the ``arrays`` backend: every
    box's upper from one evaluation of the family's enclosure over all of them (the same quotient,
    rounded up), the midpoints of the LOWERS_PER_BATCH largest uppers enclosed on the scalar backend."""
    lows: Any = np.asarray([box[0] for box in boxes], dtype=np.float64)
    highs: Any = np.asarray([box[1] for box in boxes], dtype=np.float64)
    values = {d.name: arith.interval(lows[:, i], highs[:, i]) for i, d in enumerate(family.dimensions)}
    states = np.broadcast_to(np.asarray(_state(arith, family, values), dtype=object), (len(boxes),))
    upper = np.full(len(boxes), -np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for numerator, denominator in family.enclose(arith, values):
            top, bottom = arith.magnitude(numerator)[1], arith.lower(denominator)
            quotient = np.where((bottom > 0) & np.isfinite(top), np.nextafter(top / bottom, np.inf), np.inf)
            upper = np.maximum(upper, quotient)
    upper = np.where(states == OUTSIDE, -np.inf, upper)
    if not lower:  # a trial half of the "best" split: its upper is all that is read
        return [BoxResult(u, -math.inf, 0, (), str(state)) for u, state in zip(upper.tolist(), states, strict=True)]
    points = (lows + (highs - lows) / 2).tolist()
    lowers = {}
    for index in np.argsort(-upper, kind="stable")[:LOWERS_PER_BATCH]:
        if states[index] != OUTSIDE:
            lowers[int(index)] = point_ratio(arith.scalar, family, points[index])
    return [BoxResult(float(upper[i]), *lowers.get(i, (-math.inf, 0)), tuple(points[i]), str(states[i]))
            for i in range(len(boxes))]


def root(family: Family) -> Box:
    return tuple(d.low for d in family.dimensions), tuple(d.high for d in family.dimensions)


def halves(box: Box, axis: int) -> tuple[Box, Box]:
    lows, highs = box
    mid = lows[axis] + (highs[axis] - lows[axis]) / 2
    return (lows, (*highs[:axis], mid, *highs[axis + 1:])), ((*lows[:axis], mid, *lows[axis + 1:]), highs)


def relative_widths(family: Family, box: Box) -> list[float]:
    """The box's widths relative to the family's, times the family's ``split_scale``."""
    return [float(w) for w in _relative(family, np.asarray([box[0]], dtype=np.float64),
                                        np.asarray([box[1]], dtype=np.float64))[0]]


def _relative(family: Family, lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    spans = np.asarray([d.high - d.low for d in family.dimensions], dtype=np.float64)
    relative = np.where(spans > 0, (highs - lows) / np.where(spans > 0, spans, 1.0), 0.0)
    return relative if family.split_scale is None else relative * family.split_scale(lows, highs)


def split(family: Family, box: Box) -> tuple[Box, Box]:
    """Halve the box across its widest dimension relative to the family's width there."""
    widths = relative_widths(family, box)
    return halves(box, max(range(len(widths)), key=widths.__getitem__))


def split_all(family: Family, boxes: list[Box]) -> list[Box]:
    """:func:`split` of every box, in order (both halves of each), in a few array passes: the same halves."""
    if not boxes:
        return []
    lows = np.asarray([box[0] for box in boxes], dtype=np.float64)
    highs = np.asarray([box[1] for box in boxes], dtype=np.float64)
    # the first widest, as max() takes it
    rows, axes = np.arange(len(boxes)), np.argmax(_relative(family, lows, highs), axis=1)
    mids = lows[rows, axes] + (highs[rows, axes] - lows[rows, axes]) / 2
    upper_highs, lower_lows = highs.copy(), lows.copy()
    upper_highs[rows, axes] = mids
    lower_lows[rows, axes] = mids
    out: list[Box] = []
    for low, high, cut_high, cut_low in zip(lows.tolist(), highs.tolist(), upper_highs.tolist(), lower_lows.tolist(),
                                            strict=True):
        out += [(tuple(low), tuple(cut_high)), (tuple(cut_low), tuple(high))]
    return out


def closable(upper: float, best_lower: float, tolerance: float) -> bool:
    return upper <= 1.0 and upper <= best_lower * (1.0 + tolerance)
