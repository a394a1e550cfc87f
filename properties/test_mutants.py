"""Every mutant of every registered statement is refuted, with a shrunk counterexample.

A property that no mutant can fail checks nothing; this table runs each
mutant (a bound made too small, a factor removed, an assumption dropped)
under the active profile and replays the counterexample it reports.
"""

import pytest
from hypothesis import settings

from sltcheck.assumptions import violations
from sltcheck.harness import evaluate, refute
from sltcheck.statements import STATEMENT_MODULES, load

CASES = [(name, mutant) for name in STATEMENT_MODULES for mutant in load(name).MUTANTS]


@pytest.mark.parametrize(("statement", "mutant"), CASES, ids=[f"{s}-{m.name}" for s, m in CASES])
def test_mutant_is_refuted(statement: str, mutant: object) -> None:
    refutation = refute(statement, mutant, settings=settings())
    assert refutation.refuted, f"{statement} mutant {mutant.name} survived: {refutation.message}"
    instance = refutation.instance
    assert not violations(statement, instance, skip=mutant.drop)
    assert evaluate(statement, mutant.name, instance, bound=mutant.bound).violated
