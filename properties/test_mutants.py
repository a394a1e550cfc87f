"""Every mutant of every registered statement is refuted, with a shrunk counterexample.

A property that no mutant can fail checks nothing; this table runs each
mutant (a bound made too small, a factor removed, an assumption dropped)
under the active profile and replays the counterexample it reports.

The counterexample must refute the *mutant*, not the statement: a mutant that drops
an assumption is refuted only by an instance that breaks that assumption and holds
every other one; a mutant that keeps them all (a smaller bound) only by an instance
on which the statement's default bound still holds. A genuine counterexample to the
statement therefore fails this table instead of passing as a refuted mutant.
"""

import pytest
from hypothesis import settings

from sltcheck.assumptions import violations
from sltcheck.harness import evaluate, refute
from sltcheck.registry import STATEMENT_MODULES, load

CASES = [(name, mutant) for name in STATEMENT_MODULES for mutant in load(name).MUTANTS]


@pytest.mark.parametrize(("statement", "mutant"), CASES, ids=[f"{s}-{m.name}" for s, m in CASES])
def test_mutant_is_refuted(statement: str, mutant: object) -> None:
    refutation = refute(statement, mutant, settings=settings())
    assert refutation.refuted, f"{statement} mutant {mutant.name} survived: {refutation.message}"
    instance = refutation.instance
    assert evaluate(statement, mutant.name, instance, bound=mutant.bound).violated
    broken = {violation.assumption.name for violation in violations(statement, instance)}
    if mutant.drop:
        assert broken, f"the counterexample holds every assumption: a counterexample to {statement} itself"
        assert broken <= set(mutant.drop), f"the counterexample breaks {sorted(broken)}, not only {mutant.drop}"
    else:
        assert not broken, f"the counterexample breaks {sorted(broken)}"
        module = load(statement)
        proven = evaluate(statement, module.DEFAULT_VARIANT, instance)
        assert not proven.violated, f"the counterexample violates {statement} ({module.DEFAULT_VARIANT}) itself"
