"""Lemma 13's token families with the perturbation's directions as dimensions (``segments``): the enclosure of
the difference on the segments themselves, in parts, in its centred form (:func:`sltcheck.numerics.dual.centred`).

Their uppers must bound measured / bound of the measured row at instances inside each box, evaluated in
mpmath from the statement's formula (a second code path), at the largest eps too; mutants (the derivative at x
alone, the centred form without its derivative) are refuted; the split halves a direction, and eps itself, only
where eps makes it count.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest

from sltcheck.certify import OUTSIDE, families
from sltcheck.certify.bnb import evaluate_batch, evaluate_box, split_all
from sltcheck.numerics import dual
from sltcheck.numerics.balls import backend
from sltcheck.statements.lemma12 import token_families

RNG_SEED = 20261129
FAMILY = "lemma13/d1-T3/as-stated"


def _boxes_at_large_eps(family: Any, rng: np.random.Generator, count: int, share: float = 1 / 32) -> list[Any]:
    """``count`` boxes of ``share`` of the family's width (the directions: 8 times as much), eps in
    [10^-1.2, 10^-1] and the tokens where Lemma 13's worst cases lie (u_1 near 1, the others near -1) or
    anywhere, half each."""
    boxes = []
    for index in range(count):
        lows, highs = [], []
        for d in family.dimensions:
            width = (d.high - d.low) * share * (8 if d.name.startswith("s") else 1)
            low = rng.uniform(d.low, d.high - width)
            if d.name == "log10_eps":
                low = rng.uniform(-1.2, -1.0 - width)
            elif index % 2 and d.name.startswith("u"):
                low = d.high - width if d.name == "u1" else d.low
            lows.append(low)
            highs.append(low + width)
        boxes.append(_ordered(family, lows, highs))
    return boxes


def _ordered(family: Any, lows: list[float], highs: list[float]) -> Any:
    """Tokens 2..T (each with its direction) in the order the family keeps (u_2 <= ... <= u_T: the others are
    the same instances permuted)."""
    names = [d.name for d in family.dimensions]
    T = sum(name.startswith("u") for name in names)
    order = sorted(range(2, T + 1), key=lambda k: lows[names.index(f"u{k}")])
    for prefix in ("u", "s"):
        columns = [names.index(f"{prefix}{k}") for k in range(2, T + 1)]
        sources = [names.index(f"{prefix}{k}") for k in order]
        lows_copy, highs_copy = list(lows), list(highs)
        for column, source in zip(columns, sources, strict=True):
            lows[column], highs[column] = lows_copy[source], highs_copy[source]
    return tuple(lows), tuple(highs)


def _row_one(instance: dict[str, Any], tokens: Any) -> Any:
    """The first row of Lemma 13's block at d = 1, written from the statement: Blk(x_1) = (1 + w)(W_V W_O
    sum_k sigma_k x_k + x_1), sigma = softmax(W_Q W_K x_1 x_k), in mpmath."""
    a = mpmath.mpf(float(np.ravel(instance["W_Q"])[0] * np.ravel(instance["W_K"])[0]))
    c = mpmath.mpf(float(np.ravel(instance["W_V"])[0] * np.ravel(instance["W_O"])[0]))
    w = mpmath.mpf(float(np.ravel(instance["fc_layers"][0])[0]))
    x = [mpmath.mpf(float(v)) for v in np.ravel(tokens)]
    weights = [mpmath.exp(a * x[0] * xk) for xk in x]
    return (1 + w) * (c * mpmath.fsum(v * xk for v, xk in zip(weights, x, strict=True)) / mpmath.fsum(weights) + x[0])


def _ratio(instance: dict[str, Any], factor: float) -> float:
    """measured / bound of the first row (H = d1 = 1), in mpmath at 50 digits."""
    with mpmath.workdps(50):
        alpha, eps = mpmath.mpf(float(instance["alpha"])), mpmath.mpf(float(instance["eps_max"]))
        measured = abs(_row_one(instance, instance["X_perturbed"]) - _row_one(instance, instance["X"]))
        return float(measured / (factor * (alpha * mpmath.expm1(4 * alpha * eps) + 2 * eps)))


def _in_ball(point: dict[str, float], T: int) -> bool:
    """|x'_k| = |alpha u_k + eps s_k| <= alpha for every token, exactly."""
    alpha, eps = Fraction(point["alpha"]), Fraction(10.0 ** point["log10_eps"])
    return all(abs(alpha * Fraction(point[f"u{k}"]) + eps * Fraction(point[f"s{k}"])) <= alpha for k in range(1, T + 1))


def _row_one_ratios(family: Any, boxes: list[Any], rng: np.random.Generator) -> list[float]:
    """At an inner point of each box: the largest measured / bound of the first row over the instances there
    (W_V W_O = +-1), evaluated in mpmath from the lemma's formula (a second code path); -inf where the point
    is no instance (a perturbed token outside the ball)."""
    factor = {"as-stated": 1, "as-proven": 2}[family.variant]
    T = sum(d.name.startswith("u") for d in family.dimensions)
    out = []
    for lows, highs in boxes:
        point = {d.name: lo + (hi - lo) * t for d, lo, hi, t in
                 zip(family.dimensions, lows, highs, rng.uniform(0.1, 0.9, len(lows)), strict=True)}
        out.append(max(_ratio(family.instance(point, choice), factor) for choice in (0, 1))
                   if _in_ball(point, T) else -math.inf)
    return out


def _uppers(family: Any, boxes: list[Any]) -> list[float]:
    results = evaluate_batch(backend("arrays"), family, boxes, lower=False)
    return [-math.inf if r.state == OUTSIDE else r.upper for r in results]


@pytest.mark.parametrize("key", [FAMILY, "lemma13/d1-T2/as-proven"])
def test_segment_uppers_bound_the_statements_own_ratio_at_the_largest_eps(key: str) -> None:
    family = families()[key]
    rng = np.random.default_rng(RNG_SEED)
    boxes = _boxes_at_large_eps(family, rng, 16)
    lowers, uppers = _row_one_ratios(family, boxes, rng), _uppers(family, boxes)
    assert all(low <= up for low, up in zip(lowers, uppers, strict=True)), list(zip(lowers, uppers, strict=True))
    assert sum(low > 0 for low in lowers) >= 4


def test_the_derivative_at_x_alone_is_refuted_at_large_eps() -> None:
    """The mutant: the difference over eps taken as the derivative at the unperturbed tokens (each part of the
    segment shrunk to t = 0), a linearisation without its remainder; on boxes narrow enough that the enclosures
    are nearly points, the measured row's ratio exceeds its uppers at some instance, and never the honest ones."""
    family = families()[FAMILY]
    rng = np.random.default_rng(RNG_SEED)
    boxes = _boxes_at_large_eps(family, rng, 24, share=1e-9)
    lowers = _row_one_ratios(family, boxes, rng)
    honest = token_families.derivative_parts

    def at_x(*args: Any, **kwargs: Any) -> Any:
        return honest(*args, **{**kwargs, "along": (0.0, 0.0)})

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(token_families, "derivative_parts", at_x)
        mutated = _uppers(family, boxes)
    assert all(low <= up for low, up in zip(lowers, _uppers(family, boxes), strict=True))
    assert any(low > up for low, up in zip(lowers, mutated, strict=True))


def _product(arith: Any, values: dict[str, Any]) -> list[Any]:
    x, y = values["x"], values["y"]
    return [x * y + arith.exp(x) - y * y, x * x * values["z"]]


@pytest.mark.parametrize("name", ["arb", "mpmath", "arrays"])
def test_the_centred_form_contains_every_value_and_its_mutant_does_not(name: str) -> None:
    """centred(): every sampled value of two functions lies in it, on each backend; without the derivative
    term (the value at the midpoint alone) a sampled value falls outside."""
    arith = backend(name)
    if name == "arb" and arith.name != "arb":
        pytest.skip("python-flint is not installed")
    rng = np.random.default_rng(RNG_SEED)
    outside_mutant = 0
    for _ in range(20):
        centre = rng.uniform(-1, 1, 3)
        width = rng.uniform(0.01, 0.2, 3)
        lows, highs = centre - width, centre + width
        values = {n: arith.interval(lo, hi) for n, lo, hi in zip("xyz", lows, highs, strict=True)}
        enclosed = dual.centred(arith, values, ["x", "y"], _product)
        middle = {n: arith.point((lo + hi) / 2) for n, lo, hi in zip("xy", lows[:2], highs[:2], strict=True)}
        mutant = _product(arith, {**values, **middle})
        for _ in range(20):
            p = rng.uniform(lows, highs)
            x, y, z = p
            exact = [x * y + math.exp(x) - y * y, x * x * z]
            for value, box, wrong in zip(exact, enclosed, mutant, strict=True):
                assert float(np.min(arith.lower(box))) - 1e-12 <= value <= float(np.max(arith.upper(box))) + 1e-12
                outside_mutant += not float(np.min(arith.lower(wrong))) <= value <= float(np.max(arith.upper(wrong)))
    assert outside_mutant > 0


def test_the_centred_form_is_tighter_than_the_plain_enclosure_near_a_stationary_point() -> None:
    """x (1 - x) + y (2 - y) near (1/2, 1), where both derivatives vanish: the plain enclosure's excess is
    first order in the width, the centred form's second order."""
    arith = backend("arrays")

    def bowl(ar: Any, values: dict[str, Any]) -> list[Any]:
        x, y = values["x"], values["y"]
        return [x * (1 - x) + y * (2 - y)]

    values = {"x": arith.interval(0.49, 0.51), "y": arith.interval(0.99, 1.01)}
    width = [float(np.max(arith.upper(v) - arith.lower(v)))
             for v in (dual.centred(arith, values, ["x", "y"], bowl)[0], bowl(arith, values)[0])]
    assert width[0] < 0.1 * width[1]


def test_directions_are_halved_only_where_eps_makes_them_count() -> None:
    family = families()[FAMILY]
    names = [d.name for d in family.dimensions]

    def box(log10_eps: tuple[float, float]) -> Any:
        lows = [1.0, log10_eps[0], 0.9, 0.9, -1.0, -1.0, -1.0, -1.0, -1.0]
        highs = [1.05, log10_eps[1], 0.95, 0.95, -0.9, -0.9, 1.0, 1.0, 1.0]
        return tuple(lows), tuple(highs)

    small, large = split_all(family, [box((-6.0, -5.9)), box((-1.05, -1.0))])[::2]
    changed = [[names[i] for i, (a, b) in enumerate(zip(half[1], whole[1], strict=True)) if a != b]
               for half, whole in ((small, box((-6.0, -5.9))), (large, box((-1.05, -1.0))))]
    assert [name[0] for name in changed[0]] != ["s"]
    assert [name[0] for name in changed[1]] == ["s"]


def test_eps_is_halved_only_where_it_spans_a_part_of_the_family_s_eps() -> None:
    family = families()[FAMILY]
    names = [d.name for d in family.dimensions]

    def box(log10_eps: tuple[float, float]) -> Any:  # eps 1/4 of the family's log range, alpha 1/10 of its own
        lows = [1.0, log10_eps[0], -1.0, 0.0, -1.0, -1.0, -1.0, -1.0, -1.0]
        highs = [1.1, log10_eps[1], 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
        lows[2:6], highs[2:6] = [0.9, 0.9, -1.0, -1.0], [1.0, 0.95, -0.8, -0.8]
        return tuple(lows), tuple(highs)

    def halved(log10_eps: tuple[float, float]) -> list[str]:
        half = split_all(family, [box(log10_eps)])[0]
        return [names[i] for i, (a, b) in enumerate(zip(half[1], box(log10_eps)[1], strict=True)) if a != b]

    assert halved((-6.0, -4.75)) == ["alpha"]  # at most 2e-5 of eps: as good as one eps
    assert halved((-2.25, -1.0)) == ["log10_eps"]  # most of the family's eps: its own relative width


def test_a_box_whose_perturbed_token_leaves_the_ball_is_outside() -> None:
    family = families()[FAMILY]
    lows = (1.0, -1.01, 0.5, 0.999, -1.0, -1.0, 0.5, -1.0, -1.0)
    highs = (1.01, -1.0, 0.6, 1.0, -0.9, -0.9, 1.0, 1.0, 1.0)
    assert evaluate_batch(backend("arrays"), family, [(lows, highs)], lower=False)[0].state == OUTSIDE


@pytest.mark.parametrize("name", ["arb", "mpmath"])
def test_a_scalar_backend_encloses_a_segment_box_as_the_arrays_do(name: str) -> None:
    """The same enclosure on a scalar backend (one box at a time: duals beside arb balls or mpmath intervals)
    bounds the measured row too, and is finite where the arrays' is (their roundings differ: no closer
    agreement is designed)."""
    arith = backend(name)
    if name == "arb" and arith.name != "arb":
        pytest.skip("python-flint is not installed")
    family = families()[FAMILY]
    rng = np.random.default_rng(RNG_SEED)
    boxes = _boxes_at_large_eps(family, rng, 4)
    lowers = _row_one_ratios(family, boxes, rng)
    arrays = _uppers(family, boxes)
    scalar = [evaluate_box(arith, family, box, lower=False).upper for box in boxes]
    for low, up, other in zip(lowers, scalar, arrays, strict=True):
        assert low <= up
        assert math.isfinite(up) or other == -math.inf


def test_every_instance_maps_into_the_family_with_its_ratio() -> None:
    """The reductions the family argues, checked on instances drawn from the whole space (u_1 of either sign,
    the tokens in any order, any direction in the ball, W_V W_O = +-1): x -> -x with s -> -s, then tokens
    2..T sorted with their directions, give a point of the family's box, not outside its feasibility, whose
    instance, at the candidate of the same W_V W_O, has the same first row ratio."""
    family = families()[FAMILY]
    names, arith = [d.name for d in family.dimensions], backend("arrays").scalar
    rng = np.random.default_rng(RNG_SEED)
    checked = 0
    for index in range(60):
        near_edge = index % 2  # the largest eps, tokens near +-1: where the ball cuts the directions
        raw = {"alpha": rng.uniform(1, 2), "log10_eps": rng.uniform(-1.3, -1) if near_edge else rng.uniform(-6, -1),
               "a": rng.uniform(-1, 1), **{f"s{k}": rng.uniform(-1, 1) for k in (1, 2, 3)},
               **{f"u{k}": rng.choice([-1, 1]) * rng.uniform(0.97, 1) if near_edge else rng.uniform(-1, 1)
                  for k in (1, 2, 3)}}
        if not _in_ball(raw, 3):
            continue
        sign = 1.0 if raw["u1"] >= 0 else -1.0
        flipped = {**raw, **{k: sign * v for k, v in raw.items() if k[0] in "us"}}
        order = sorted((2, 3), key=lambda k: flipped[f"u{k}"])
        point = {**flipped, **{f"{p}{slot}": flipped[f"{p}{k}"] for slot, k in zip((2, 3), order, strict=True)
                               for p in "us"}}
        assert all(d.low <= point[d.name] <= d.high for d in family.dimensions), point
        at_point = {name: arith.interval(point[name], point[name]) for name in names}
        assert family.feasibility(arith, at_point) != OUTSIDE, point
        for choice in (0, 1):
            original = family.instance(raw, choice)  # the unreduced instance: the same construction, off the box
            assert _ratio(family.instance(point, choice), 1.0) == pytest.approx(_ratio(original, 1.0), rel=1e-9)
        checked += 1
    assert checked >= 20
    assert names[-3:] == ["s1", "s2", "s3"]


def test_refined_replaces_only_the_boxes_above_the_threshold() -> None:
    """``dual.refined`` on a batch: the coarse enclosure where every one stays within [-threshold, threshold],
    the fine one (computed on those boxes alone) elsewhere; NaN counts as above; one box on a scalar backend."""
    from sltcheck.numerics.dual import refined
    from sltcheck.numerics.interval_arrays import Intervals

    arrays = backend("arrays")
    values = {"x": Intervals(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.5, 1.5, 2.5, 3.5]))}
    coarse = [Intervals(np.array([0.0, 0.0, 0.0, -1.5]), np.array([0.9, 1.2, np.nan, 0.5]))]
    seen: list[int] = []

    def fine(some: dict[str, Any]) -> list[Any]:
        seen.append(some["x"].shape[0])
        return [Intervals(some["x"].lo, some["x"].lo + 0.25)]

    (out,) = refined(arrays, values, coarse, fine, 1.0)
    assert seen == [3]  # boxes 1 (1.2 > 1), 2 (NaN) and 3 (|-1.5| > 1: the engine decides on |.|)
    assert list(out.lo) == [0.0, 1.0, 2.0, 3.0]
    assert list(out.hi) == [0.9, 1.25, 2.25, 3.25]
    scalar = arrays.scalar
    one_box = {"x": scalar.interval(1.0, 1.5)}
    tight = [scalar.interval(0.0, 0.75)]
    below, above, negative = scalar.interval(0.0, 0.9), scalar.interval(0.0, 1.1), scalar.interval(-1.1, 0.5)
    assert refined(scalar, one_box, [below], lambda some: tight, 1.0) == [below]
    assert refined(scalar, one_box, [above], lambda some: tight, 1.0) == tight
    assert refined(scalar, one_box, [negative], lambda some: tight, 1.0) == tight
