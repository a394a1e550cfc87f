"""The search's sequence structure (sltcheck.harness.sequence): fractions, realisations, the identity
between a weighted instance and its realisation, and the structured shapes."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from sltcheck.assumptions import violations
from sltcheck.harness import sequence
from sltcheck.harness.instances import module as instance_module
from sltcheck.harness.pytest_plugin import every_statement
from sltcheck.harness.search import matches
from sltcheck.registry import load
from sltcheck.statement_types import MULTIPLICITY

OPTED_IN = ("lemma5", "lemma8", "lemma12", "lemma13", "theorem9", "theorem11", "theorem14")


@every_statement  # the folders that opt in, and theorem14's full masks
def test_every_sequence_statement_opts_in() -> None:
    for name in OPTED_IN:
        assert sequence.structure(instance_module(name)) is not None, name
    assert sequence.structure(instance_module("theorem14")).causal is False  # stacked blocks: full masks only


def test_counts_take_the_smallest_length_within_the_tolerance() -> None:
    assert sequence.counts([0.25, 0.75]).tolist() == [1, 3]
    assert sequence.counts([0.5, 0.5]).tolist() == [1, 1]
    n = sequence.counts([5 / (3 * np.e**2 + 5), 1 - 5 / (3 * np.e**2 + 5)])  # irrational: the closest at T <= 64
    assert n.tolist() == [7, 31]
    loose = sequence.counts([0.184, 0.816], tolerance=0.01)
    assert loose.sum() < 38
    assert abs(loose[0] / loose.sum() - 0.184) <= 0.01
    assert sequence.counts([1 / 64, 63 / 64]).tolist() == [1, 63]
    three = sequence.counts([0.2, 0.3, 0.5])
    assert three.tolist() == [2, 3, 5]
    assert np.all(three >= 1)


@pytest.mark.parametrize("bad", [[0.0, 1.0], [np.nan, 1.0], [-0.1, 1.1], []])
def test_counts_reject_what_no_sequence_realises(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="fractions must be positive"):
        sequence.counts(bad)


def test_fractions_are_projected_idempotently() -> None:
    least = 1 / 64
    for raw in ([0.2, 0.9], [-1.0, 3.0], [0.0, 0.0, 0.0], [5.0, 1.0, 1e-9]):
        f = sequence.project_fractions(raw, least)
        assert f.sum() == pytest.approx(1.0, abs=1e-15)
        assert np.all(f >= least - 1e-18)
        assert np.allclose(sequence.project_fractions(f, least), f, rtol=0, atol=1e-16)
    torch = pytest.importorskip("torch")
    raw = torch.tensor([0.3, 2.0, -0.5], dtype=torch.float64)
    assert np.allclose(sequence.project_fractions_torch(raw, least).numpy(), sequence.project_fractions(raw.numpy(),
                                                                                                         least))
    with pytest.raises(ValueError, match="least must be at most"):
        sequence.project_fractions([0.5, 0.5, 0.5], 0.5)


def _weighted(name: str, k: int, seed: int) -> tuple[sequence.Space, dict]:
    module = instance_module(name)
    shape = next(s for s in sequence.shapes(module) if s.get("atoms") == k)
    space = sequence.space(module, shape, {})
    rng = np.random.default_rng(seed)
    point = space.project(space.point(space.start(rng, on_boundary=False)))
    point[MULTIPLICITY] = np.array([2.0, 1.0, 4.0]) / 7 if k == 3 else np.array([0.25, 0.75])  # 1 and 3, 2, 1 and 4
    return space, point


@pytest.mark.parametrize("name", OPTED_IN)
def test_a_weighted_instance_measures_as_its_realisation(name: str) -> None:
    """At integer multiplicities the weighted instance and the sequence it stands for have the same
    measured side, in float64 and at 40 digits (two computations: weights in the softmax, repeated tokens)."""
    statement = load(name)
    for k in (2, 3):
        space, point = _weighted(name, k, seed=k)
        point[sequence.structure(space.module).mask] = np.ones((k, k), dtype=np.int8)
        weighted, realised = space.instance(point), space.realise(point)
        assert MULTIPLICITY not in realised
        assert np.asarray(realised["X"]).shape[0] == (4 if k == 2 else 7)
        assert not violations(name, realised)
        assert float(statement.measured(weighted, None)) == pytest.approx(float(statement.measured(realised, None)),
                                                                          rel=1e-9, abs=1e-15)
        exact_w, exact_r = statement.measured(weighted, 40), statement.measured(realised, 40)
        assert abs(exact_w - exact_r) <= mpmath.mpf(10) ** -30 * max(1, abs(exact_r))


@pytest.mark.parametrize("name", ["lemma12", "lemma13", "theorem9", "theorem11"])
def test_a_causal_realisation_measures_at_least_the_weighted_causal_instance(name: str) -> None:
    """Causal among the distinct tokens: the last copy of each token attends as the weighted token, the
    other copies add rows, so the realised max over rows is at least the weighted one."""
    statement = load(name)
    space, point = _weighted(name, 3, seed=5)
    point[sequence.structure(space.module).mask] = np.tril(np.ones((3, 3), dtype=np.int8))
    realised = space.realise(point)
    assert np.array_equal(realised["mask"], np.tril(np.ones((7, 7), dtype=np.int8)))
    with mpmath.workdps(40):
        gap = statement.measured(realised, 30) - statement.measured(space.instance(point), 30)
        assert gap >= -mpmath.mpf(10) ** -25


@pytest.mark.lemma12
def test_other_masks_are_no_weighted_instance() -> None:
    space, point = _weighted("lemma12", 2, seed=1)
    point["mask"] = np.array([[0, 1], [1, 1]], dtype=np.int8)
    with pytest.raises(ValueError, match="mask of a weighted instance must be full or causal"):
        space.realise(point)


@pytest.mark.lemma12
def test_structured_shapes_follow_each_group_and_a_fixed_length_excludes_them() -> None:
    module = instance_module("lemma12")
    shapes = sequence.shapes(module)
    assert [s.get("atoms") for s in shapes[:8]] == [None] * 6 + [2, 3]
    assert len(shapes) == len(module.shapes()) + 2 * len({tuple(sorted((k, v) for k, v in s.items() if k != "T"))
                                                         for s in module.shapes()})
    structured = shapes[6]
    assert matches(structured, {"d1": 1}, module)
    assert not matches(structured, {"d1": 1, "T": 2}, module)  # a family of T tokens: no fractions
    assert not matches(structured, {"mask": np.ones((2, 2))}, module)
    assert matches(structured, {"atoms": 2}, module)
    assert not matches(shapes[0], {"atoms": 2}, module)


@pytest.mark.lemma12
def test_relative_fields_round_trip() -> None:
    space, point = _weighted("lemma12", 2, seed=3)
    instance = space.instance(point)
    assert np.allclose(np.asarray(space.point(instance)["X"]), np.asarray(point["X"]), rtol=0, atol=1e-15)
    assert np.allclose(np.asarray(instance["X"]), float(point["alpha"]) * np.asarray(point["X"]))
