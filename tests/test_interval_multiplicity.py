"""Every certified path honours every field of the instance it certifies: the interval verdict
(:mod:`sltcheck.harness.interval_verdict`) weighs each token by its ``multiplicity`` in the softmax
exactly as the statements' mpmath evaluation does (:func:`sltcheck.model.reference.masked_softmax`),
for every statement whose instances may carry multiplicities."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from sltcheck.harness import interval_verdict, sequence
from sltcheck.harness.instances import module as instance_module
from sltcheck.numerics.intervals import ends
from sltcheck.registry import load
from sltcheck.statement_types import MULTIPLICITY

OPTED_IN = ("lemma5", "lemma8", "lemma12", "lemma13", "theorem9", "theorem11", "theorem14")


def _weighted(name: str, counts: list[float], seed: int = 2) -> dict:
    """An admissible instance of ``len(counts)`` written tokens, full mask, token k counted counts[k] times."""
    module = instance_module(name)
    shape = next(s for s in sequence.shapes(module) if s.get("atoms") == len(counts))
    space = sequence.space(module, shape, {})
    point = space.project(space.point(space.start(np.random.default_rng(seed), on_boundary=False)))
    point[sequence.structure(module).mask] = np.ones((len(counts), len(counts)), dtype=np.int8)
    instance = dict(space.instance(point))
    instance[MULTIPLICITY] = np.asarray(counts, dtype=np.float64)
    return instance


def _encloses(interval: object, value: mpmath.mpf) -> bool:
    low, high = ends(interval)
    with mpmath.workdps(60):
        slack = mpmath.mpf(10) ** -25 * max(1, abs(value))
        return mpmath.mpf(low) - slack <= value <= mpmath.mpf(high) + slack


@pytest.mark.parametrize("name", OPTED_IN)
@pytest.mark.parametrize("counts", [[1.0, 5.0], [1.0, 1000.0]])
def test_the_interval_verdict_weighs_multiplicities_as_mpmath_does(name: str, counts: list[float]) -> None:
    statement = load(name)
    instance = _weighted(name, counts)
    measured = statement.measured(instance, 40)
    result = interval_verdict.evaluate(name, instance)
    assert _encloses(result["measured"], measured), (name, ends(result["measured"]), measured)
    unweighted = {k: v for k, v in instance.items() if k != MULTIPLICITY}
    # the multiplicities change the measured side, so the check above is not about another instance
    assert abs(statement.measured(unweighted, 40) - measured) > mpmath.mpf(10) ** -20 * abs(measured)


def test_theorem14_multiplicities_enclose_the_instance_written_out() -> None:
    """The issue's case: 2 written tokens counted (1, 5) are the 6-token sequence they stand for."""
    instance = _weighted("theorem14", [1.0, 5.0])
    written_out = {**{k: v for k, v in instance.items() if k != MULTIPLICITY},
                   "X": np.repeat(np.asarray(instance["X"]), [1, 5], axis=0), "mask": np.ones((6, 6), dtype=np.int8)}
    weighted, realised = (interval_verdict.evaluate("theorem14", i)["measured"] for i in (instance, written_out))
    (w_low, w_high), (r_low, r_high) = ends(weighted), ends(realised)
    assert max(w_low, r_low) <= min(w_high, r_high)  # the two enclosures of one real number meet


@pytest.mark.parametrize("bad", [[1.0], [1.0, 0.0], [1.0, float("nan")]])
def test_multiplicities_that_no_sequence_has_are_refused(bad: list[float]) -> None:
    instance = _weighted("lemma8", [1.0, 2.0])
    instance[MULTIPLICITY] = np.asarray(bad)
    with pytest.raises(ValueError, match="multiplicity must hold 2 positive finite numbers"):
        interval_verdict.evaluate("lemma8", instance)
