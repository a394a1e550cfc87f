"""The ``arrays`` backend of ``sltcheck certify``: a batch of boxes enclosed at once in numpy intervals.

Its uppers must bound the ratio that the scalar backend (arb, or mpmath) encloses at points of each box
(two code paths); the engine on it decides the families as the scalar one does, the same rounds give the
same result, and its compact box rows are verified on resume like the others.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sltcheck.certify import OUTSIDE, default_backend, families
from sltcheck.certify.bnb import evaluate_batch, point_ratio
from sltcheck.certify.run import certify_family
from sltcheck.certify.store import Store, _decode, _encode
from sltcheck.errors import StoredResultError
from sltcheck.numerics.balls import backend

VECTORISED = sorted(key for key, family in families().items() if family.vectorised)
RNG_SEED = 451128


def _boxes(family: Any, rng: np.random.Generator, count: int, share: float) -> list[Any]:
    """``count`` boxes of ``share`` of the family's width in every dimension, at random places."""
    boxes = []
    for _ in range(count):
        lows, highs = [], []
        for d in family.dimensions:
            width = (d.high - d.low) * share
            low = rng.uniform(d.low, d.high - width)
            lows.append(low)
            highs.append(low + width)
        boxes.append((tuple(lows), tuple(highs)))
    return boxes


@pytest.mark.parametrize("key", VECTORISED)
def test_batch_uppers_bound_the_scalar_ratio_at_points_of_each_box(key: str) -> None:
    family = families()[key]
    rng = np.random.default_rng(RNG_SEED)
    boxes = _boxes(family, rng, 24, 1 / 16)
    arrays = backend("arrays")
    checked = 0
    for box, result in zip(boxes, evaluate_batch(arrays, family, boxes, lower=False), strict=True):
        if result.state == OUTSIDE:
            continue
        point = [lo + (hi - lo) * t for lo, hi, t in zip(*box, rng.uniform(0, 1, len(box[0])), strict=True)]
        ratio, _ = point_ratio(arrays.scalar, family, point)
        assert ratio <= result.upper, (key, point, ratio, result.upper)
        checked += ratio > -np.inf
    assert checked >= 3


def test_a_batch_enclosure_without_the_softmax_shift_is_caught() -> None:
    """The mutant: the derivative's pair terms dropped (a too-small enclosure); the midpoints' ratios refute it
    (and never the honest enclosure)."""
    from sltcheck.statements.lemma12 import token_families

    family = families()["lemma12/d1-T2/as-stated"]
    honest = token_families.derivative_parts

    def dropped(*args: Any, **kwargs: Any) -> Any:
        x1, sigma, pairs = honest(*args, **kwargs)
        return x1, sigma, {pair: (d, 0.0 * scale) for pair, (d, scale) in pairs.items()}

    ratios, honest_uppers, mutant_uppers = _against_midpoints(family, token_families, "derivative_parts", dropped, 40)
    assert all(ratio <= upper for ratio, upper in zip(ratios, honest_uppers, strict=True))
    assert any(ratio > upper for ratio, upper in zip(ratios, mutant_uppers, strict=True))


def _against_midpoints(family: Any, module: Any, name: str, mutant: Any,
                       count: int) -> tuple[list[float], list[float], list[float]]:
    """``count`` small boxes of the family: the scalar ratio at each midpoint, and the batch uppers as
    written and with ``module.name`` replaced by ``mutant``."""
    boxes = _boxes(family, np.random.default_rng(RNG_SEED), count, 1 / 64)
    arrays = backend("arrays")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, name, mutant)
        mutated = evaluate_batch(arrays, family, boxes, lower=False)
    honest = evaluate_batch(arrays, family, boxes, lower=False)
    ratios = [point_ratio(arrays.scalar, family, [(lo + hi) / 2 for lo, hi in zip(*box, strict=True)])[0]
              for box in boxes]
    return ratios, [r.upper for r in honest], [r.upper for r in mutated]


def test_vectorised_families_default_to_arrays_and_others_refuse_it() -> None:
    assert default_backend(families()["lemma13/d1-T3/as-stated"], None) == "arrays"
    assert default_backend(families()["lemma13/d1-T3/as-stated"], "mpmath") == "mpmath"
    assert default_backend(families()["lemma8/d1-T2/as-stated"], None) in ("arb", "mpmath")
    with pytest.raises(ValueError, match="backend 'arrays' encloses only vectorised families; lemma8/d1-T2"):
        default_backend(families()["lemma8/d1-T2/as-stated"], "arrays")


def _run(key: str, path: Path, **options: Any) -> dict[str, Any]:
    store = Store(path)
    try:
        return certify_family(families()[key], store, **{"backend_name": "arrays", "budget": 600.0,
                                                        "tolerance": 0.01, "search": False, **options})
    finally:
        store.close()


def _stable(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in ("seconds", "boxes_per_second", "progress")}


@pytest.mark.lemma12
def test_the_arrays_engine_proves_a_family_held_and_repeats_itself(tmp_path: Path) -> None:
    once = _run("lemma12/d1-T2/as-stated", tmp_path / "a.sqlite", rounds=14)
    again = _run("lemma12/d1-T2/as-stated", tmp_path / "b.sqlite", rounds=7)
    resumed = _run("lemma12/d1-T2/as-stated", tmp_path / "b.sqlite", rounds=14)
    assert again["rounds"] == 7
    assert once["verdict"] == "held"
    assert once["proven_fraction"] == 1.0
    assert once["backend"] == "arrays"
    assert _stable(resumed) == _stable(once)


@pytest.mark.lemma12
def test_an_edited_compact_box_row_is_refused_on_resume(tmp_path: Path) -> None:
    path = tmp_path / "boxes.sqlite"
    _run("lemma12/d1-T3/as-stated", path, rounds=2)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM box WHERE typeof(box) = 'blob'").fetchone()[0] > 0
        db.execute("UPDATE box SET box = zeroblob(length(box)) WHERE seq = (SELECT MAX(seq) FROM box)")
    with pytest.raises(StoredResultError, match="does not match the digest"):
        _run("lemma12/d1-T3/as-stated", path, rounds=3)


@pytest.mark.parametrize(("box", "argument"), [
    (((1.0, -6.0, -0.25), (2.0, -1.0, 0.1)), None),
    (((1.0, 0.30000000000000004), (1.5, 1e-300)), "exact-chain"),
])
def test_box_rows_read_back_exactly(box: Any, argument: str | None) -> None:
    assert _decode(_encode(box, argument)) == (box, argument)


@pytest.mark.lemma12
def test_open_boxes_proved_below_one_are_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_OPEN open boxes those proved <= 1 with the least uppers are closed: the store stays bounded, the
    verdict and the bracket stay sound (the closed boxes' uppers count in it) and the bracket is not pushed
    up to 1."""
    from sltcheck.certify import run

    capped_at = 300
    free = _run("lemma12/d1-T2/as-stated", tmp_path / "free.sqlite", rounds=14)
    monkeypatch.setattr(run, "MAX_OPEN", capped_at)
    entry = _run("lemma12/d1-T2/as-stated", tmp_path / "capped.sqlite", rounds=20)
    assert entry["verdict"] == "held"
    assert entry["open_boxes"] <= capped_at + 2 * run.BATCH_ARRAYS
    assert entry["sup_upper"] >= entry["sup_lower"] > 0
    assert entry["sup_upper"] < 0.9  # the closed boxes are the least: the bracket stays near the free run's
    assert free["open_boxes"] > entry["open_boxes"]


@pytest.mark.theorem14
def test_theorem14s_known_false_family_is_a_counterexample_on_arrays(tmp_path: Path) -> None:
    """The mutant ``lipschitz-one`` (no Lemma 13 amplification), now enclosed in batches: still refuted, by an
    instance the statement's own interval evaluation decides."""
    entry = _run("theorem14/B2-d1-T2/lipschitz-one", tmp_path / "boxes.sqlite", rounds=6)
    assert entry["verdict"] == "counterexample"
    assert entry["counterexample"]["certified_ratio"][0] > 1


@pytest.mark.parametrize("key", ["lemma12/plane-T2/as-stated", "lemma13/plane-T2/as-stated",
                                 "lemma13/plane-T2/as-proven"])
def test_the_plane_familys_point_ratio_is_the_statements_own(key: str) -> None:
    """d1 = 2: the family's ratio at a point (arb, the first row's change at the instance's W_V, W_O, W) against
    the statement's interval evaluation of its instance (every row), a second code path."""
    from sltcheck.harness import interval_verdict as certified
    from sltcheck.numerics.intervals import ends

    family = families()[key]
    rng = np.random.default_rng(RNG_SEED)
    arb = backend("arrays").scalar
    compared = 0
    while compared < 6:
        point = [rng.uniform(d.low, d.high) for d in family.dimensions]
        lower, choice = point_ratio(arb, family, point)
        if lower == -np.inf:
            continue
        instance = family.instance(dict(zip([d.name for d in family.dimensions], point, strict=True)), choice)
        assert family.contains(instance)
        result = certified.evaluate(family.statement, instance, family.variant)
        (_, m_hi), (b_lo, _) = ends(result["measured"]), ends(result["bound"])
        assert lower <= float(m_hi / b_lo) * (1 + 1e-12)  # every row's max is at least the family's row
        assert lower == pytest.approx(_first_row_ratio(family, instance), rel=1e-9)
        compared += 1


def _first_row_ratio(family: Any, instance: dict[str, Any]) -> float:
    """The first row's ||change|| over the bound by the statement's mpmath code (60 digits): the family's row."""
    import mpmath

    from sltcheck.registry import load
    from sltcheck.statements.shared import lipschitz

    X, Xp = (np.asarray(instance[key], dtype=np.float64) for key in ("X", "X_perturbed"))
    mask, weights, rows = np.asarray(instance["mask"]), lipschitz.target(instance), np.asarray([0])
    with mpmath.workdps(60):
        before = lipschitz._rows_mha(X, mask, weights, rows, 60)[0]
        after = lipschitz._rows_mha(Xp, mask, weights, rows, 60)[0]
        if "fc_layers" in instance:  # the FC layer W = I: Blk = 2 (Attn + x)
            before = [2 * (before[i] + mpmath.mpf(X[0, i])) for i in range(2)]
            after = [2 * (after[i] + mpmath.mpf(Xp[0, i])) for i in range(2)]
        change = mpmath.sqrt(sum((a - b) ** 2 for a, b in zip(after, before, strict=True)))
        return float(change / load(family.statement).VARIANTS[family.variant](instance, 60))


@pytest.mark.lemma12
def test_the_plane_familys_enclosure_halved_is_caught() -> None:
    """The mutant: the Jacobians' bound halved over every box; the midpoints' ratios refute it (and never the
    honest bound)."""
    from sltcheck.statements.lemma12 import plane_family

    family = families()["lemma12/plane-T2/as-stated"]
    honest = plane_family._jacobians

    def halved(arith: Any, values: dict[str, Any]) -> Any:
        total, eps = honest(arith, values)
        return total * 0.5, eps

    ratios, honest_uppers, mutant_uppers = _against_midpoints(family, plane_family, "_jacobians", halved, 60)
    assert all(ratio <= upper for ratio, upper in zip(ratios, honest_uppers, strict=True))
    assert any(ratio > upper for ratio, upper in zip(ratios, mutant_uppers, strict=True))


# --- Theorem 9 with tokens in the plane (d1 = d2 = 2) ----------------------------------------------


@pytest.mark.theorem9
def test_theorem9s_plane_familys_point_ratio_is_the_statements_own() -> None:
    """The family's ratio at a point (arb: the largest change over W_VO and dW_VO, in closed form) against the
    statement's mpmath forward of its instance at 40 digits (row 1, and every row through the harness)."""
    import mpmath

    from sltcheck.certify.bnb import ratio_lower
    from sltcheck.harness.runner import evaluate
    from sltcheck.model import reference
    from sltcheck.statements import theorem9

    family = families()["theorem9/plane-T2/as-proven"]
    rng = np.random.default_rng(RNG_SEED)
    arb = backend("arrays").scalar
    compared = 0
    while compared < 8:
        point = [rng.uniform(d.low, d.high) for d in family.dimensions]
        if point_ratio(arb, family, point)[0] == -np.inf:  # off the discs
            continue
        values = {d.name: arb.interval(x, x) for d, x in zip(family.dimensions, point, strict=True)}
        for choice, pair in enumerate(family.enclose(arb, values)):  # both faces: t_a = 1, t_b = 1
            lower = ratio_lower(arb, pair)
            instance = family.instance(dict(zip([d.name for d in family.dimensions], point, strict=True)), choice)
            assert family.contains is not None
            assert family.contains(instance)
            X, mask = np.asarray(instance["X"]), np.asarray(instance["mask"])
            with mpmath.workdps(40):
                change = (reference.mha(X, mask, theorem9.source_of(instance), 40)[0]
                          - reference.mha(X, mask, theorem9.target_of(instance), 40)[0])
                row = float(mpmath.sqrt(sum(c * c for c in change)) / theorem9.VARIANTS["as-proven"](instance, 40))
            assert lower == pytest.approx(row, rel=1e-8), (point, choice)
            assert evaluate("theorem9", "as-proven", instance, dps=40).ratio >= row * (1 - 1e-12)
        compared += 1


@pytest.mark.parametrize(("x1", "y", "kappa"), [
    ((1.0, 0.5), (0.3, -2.0), 0.4),
    ((1.0, 0.5), (0.3, -2.0), -1.0),
    ((1.0, 0.0), (1.0, 0.0), 0.25),  # one weight only: the others free
    ((0.0, 0.0), (1.0, 1.0), 0.7),  # x_1 = 0: every weight 0
    ((0.7, 0.7), (0.7, 0.7), 1.0),
    ((0.7, 0.7), (0.7, 0.7), 0.0),
])
def test_theorem9s_plane_logit_error_has_the_asked_max_entry_and_bilinear_value(x1: Any, y: Any, kappa: float) -> None:
    from sltcheck.statements.theorem9.plane_family import logit_error

    size = 1e-3
    D = logit_error(x1, y, kappa, size)
    assert float(np.max(np.abs(D))) == pytest.approx(size, rel=1e-15)
    spread = sum(map(abs, x1)) * sum(map(abs, y))
    assert float(np.asarray(x1) @ D @ np.asarray(y)) == pytest.approx(kappa * size * spread, abs=1e-18)


@pytest.mark.theorem9
def test_theorem9s_plane_family_is_held_at_its_supremum_and_its_half_is_a_replayable_counterexample(
        tmp_path: Path) -> None:
    from sltcheck.harness.runner import evaluate
    from sltcheck.harness.serialise import decode_instance
    from sltcheck.statements import theorem9

    held = _run("theorem9/plane-T2/as-proven", tmp_path / "held.sqlite", rounds=4)
    assert held["verdict"] == "held"
    assert held["sup_lower"] <= 2 ** -0.5 <= held["sup_upper"] < 0.71
    half = _run("theorem9/plane-T2/half", tmp_path / "half.sqlite", rounds=4)
    assert half["verdict"] == "counterexample"
    instance = decode_instance(half["counterexample"]["instance"])
    bound = {m.name: m.bound for m in theorem9.MUTANTS}["half"]
    assert evaluate("theorem9", "half", instance, dps=60, bound=bound).violated
    assert not evaluate("theorem9", "as-proven", instance, dps=60).violated


@pytest.mark.theorem9
def test_theorem9s_plane_enclosure_without_the_value_terms_root2_is_caught() -> None:
    """The mutant: the value term's sqrt(2) ||q'||_1 dropped to ||q'||_1 over every box; the midpoints' ratios
    refute it (and never the honest enclosure)."""
    from sltcheck.statements.theorem9 import plane_family

    family = families()["theorem9/plane-T2/as-proven"]
    honest = plane_family._box_ratios

    def smaller(arith: Any, values: dict[str, Any], scale: float) -> Any:
        pairs = honest(arith, values, scale)
        return [(top * (2 ** -0.5 if i % 2 else 1.0), bound) for i, (top, bound) in enumerate(pairs)]

    ratios, honest_uppers, mutant_uppers = _against_midpoints(family, plane_family, "_box_ratios", smaller, 60)
    assert all(ratio <= upper for ratio, upper in zip(ratios, honest_uppers, strict=True))
    assert any(ratio > upper for ratio, upper in zip(ratios, mutant_uppers, strict=True))


@pytest.mark.theorem9
@pytest.mark.parametrize(("scale", "held"), [(0.72, True), (0.70, False)])
def test_theorem9s_plane_family_tells_a_bound_just_above_its_supremum_from_one_just_below(
        tmp_path: Path, scale: float, held: bool) -> None:
    """Mutants near the supremum 1/sqrt(2): the chain scaled by 0.72 (sup 0.982) is held; scaled by 0.70
    (sup 1.010) it is not, a point of the family above 1 (the statement's own bound, unscaled, is not
    violated there, so the engine cannot certify it as the statement's counterexample)."""
    from dataclasses import replace

    from sltcheck.statements.theorem9 import plane_family

    key = "theorem9/plane-T2/as-proven"
    family = replace(families()[key], enclose=plane_family.enclosure(scale), search_fixed=None)
    store = Store(tmp_path / "boxes.sqlite")
    try:
        entry = certify_family(family, store, backend_name="arrays", budget=120.0, tolerance=0.001, search=False,
                               rounds=8)
    finally:
        store.close()
    assert (entry["verdict"] == "held") == held
    assert (entry["sup_lower"] > 1.0) == (not held)
    assert entry["sup_lower"] <= entry["sup_upper"]
