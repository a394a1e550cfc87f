"""The simplification of mutant counterexamples (sltcheck.harness.simplify).

On a table of mutants refuted at ci: the simplified counterexample still refutes its mutant
in mpmath, is admissible as the refutation requires, and is simpler than the raw one (fewer
significant digits or more zeros in the free fields), both counted here from the instances.
"""

import numpy as np
import pytest

from sltcheck.assumptions import violations
from sltcheck.harness import evaluate, refute
from sltcheck.harness.profiles import profile_settings
from sltcheck.harness.simplify import complexity, free_fields, rounded, significant_digits, simplify
from sltcheck.registry import load

CASES = [
    ("lemma2", "bound-quartered"),
    ("lemma8", "exponent-quartered"),
    ("theorem9", "half"),
    ("theorem9", "max-over-heads"),
    ("theorem11", "half"),
    ("lemma2", "no-input-norm"),  # drops an assumption: the simplified instance must still break it
]


def _mutant(statement: str, name: str):
    return next(m for m in load(statement).MUTANTS if m.name == name)


@pytest.mark.parametrize(("statement", "name"), CASES)
def test_simplified_counterexample_refutes_and_is_simpler(statement: str, name: str) -> None:
    mutant = _mutant(statement, name)
    result = refute(statement, mutant, settings=profile_settings("ci"), profile="ci")
    assert result.refuted
    assert result.raw_instance is not None
    assert result.instance is not None
    simple, raw = result.instance, result.raw_instance
    assert evaluate(statement, f"mutant:{name}", simple, bound=mutant.bound).violated
    broken = {v.assumption.name for v in violations(statement, simple)}
    if mutant.drop:
        assert broken
        assert broken <= set(mutant.drop)
    else:
        assert not broken
        assert not evaluate(statement, load(statement).DEFAULT_VARIANT, simple).violated
    fields = free_fields(statement, raw)
    (digits_raw, nonzero_raw), (digits, nonzero) = complexity(raw, fields), complexity(simple, fields)
    assert digits < digits_raw or nonzero < nonzero_raw, f"not simpler: {result.simplification}"
    assert result.simplification is not None
    assert result.simplification["digits"] == [digits_raw, digits]


def test_significant_digits_and_rounding() -> None:
    assert [significant_digits(v) for v in (0.0, 0.5, -120.0, 1 / 3, 2.0**-48)] == [0, 1, 2, 16, 16]
    assert rounded(np.array([1 / 3, -2 / 3, 0.0]), 2).tolist() == [0.33, -0.67, 0.0]


@pytest.mark.theorem9
def test_nothing_is_kept_when_no_candidate_refutes() -> None:
    """The mutant of this test: a predicate no candidate meets leaves the raw instance."""
    mutant = _mutant("theorem9", "half")
    raw = refute("theorem9", mutant, settings=profile_settings("ci"), profile="ci").raw_instance
    assert raw is not None
    done = simplify("theorem9", raw, lambda _: False, lambda _: True, confirm=lambda _: None)
    assert done.instance is raw
    assert done.kept == ()
    assert done.evaluations > 0
