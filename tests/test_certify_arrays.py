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
    """The mutant: the derivative's pair terms dropped (a too-small enclosure); the point check refutes it."""
    from sltcheck.statements.lemma12 import token_families

    family = families()["lemma12/d1-T2/as-stated"]
    honest = token_families.derivative_parts

    def dropped(*args: Any, **kwargs: Any) -> Any:
        x1, sigma, pairs = honest(*args, **kwargs)
        return x1, sigma, {pair: (d, 0.0 * scale) for pair, (d, scale) in pairs.items()}

    rng = np.random.default_rng(RNG_SEED)
    boxes = _boxes(family, rng, 40, 1 / 64)
    arrays = backend("arrays")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(token_families, "derivative_parts", dropped)
        results = evaluate_batch(arrays, family, boxes, lower=False)
    ratios = [point_ratio(arrays.scalar, family, [(lo + hi) / 2 for lo, hi in zip(*box, strict=True)])[0]
              for box in boxes]
    assert any(ratio > result.upper for ratio, result in zip(ratios, results, strict=True))


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
    """Past MAX_OPEN open boxes a child proved <= 1 is closed: the store stays bounded, the verdict and the
    bracket stay sound (the closed boxes' uppers count in it)."""
    from sltcheck.certify import run

    capped_at = 300
    free = _run("lemma12/d1-T2/as-stated", tmp_path / "free.sqlite", rounds=14)
    monkeypatch.setattr(run, "MAX_OPEN", capped_at)
    entry = _run("lemma12/d1-T2/as-stated", tmp_path / "capped.sqlite", rounds=20)
    assert entry["verdict"] == "held"
    assert entry["open_boxes"] <= capped_at + 2 * run.BATCH_ARRAYS
    assert entry["sup_upper"] >= entry["sup_lower"] > 0
    assert free["open_boxes"] > entry["open_boxes"]
