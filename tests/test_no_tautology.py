"""No check that cannot fail: no variant may tie (measured == bound) on more than half its examples.

A variant whose two sides come from one computation ties on every example; one whose bound is
attained on a thin set ties on a few. Each variant draws the same Hypothesis examples every run
(derandomised, no target(), so the draws are not steered toward its worst case) and counts the
ties: both sides positive and equal to 9 digits, or undecided at the verdict's precision.
Examples with both sides exactly 0 (a degenerate instance, not a tie of two computations) are
counted apart and excluded from the denominator.
"""

import pytest
from hypothesis import HealthCheck, given, settings

from sltcheck.assumptions import violations
from sltcheck.harness import evaluate, instances
from sltcheck.registry import STATEMENT_MODULES, load

EXAMPLES = 30
TIE_DIGITS = 1e-9

CASES = [(name, variant) for name in STATEMENT_MODULES for variant in load(name).VARIANTS]


def tie_counts(statement: str, variant: str, examples: int = EXAMPLES) -> tuple[int, int, int]:
    """(examples decided, ties, both sides exactly 0) over ``examples`` derandomised draws."""
    verdicts = []

    @settings(
        settings.get_profile("default"),  # the same draws whichever profile is loaded
        max_examples=examples, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(instance=instances(statement))
    def draw(instance: dict) -> None:
        if not violations(statement, instance):
            verdicts.append(evaluate(statement, variant, instance))

    draw()
    zeros = sum(1 for v in verdicts if v.measured == 0 and v.bound == 0)
    ties = sum(1 for v in verdicts if v.bound != 0 and (v.undecided or abs(v.ratio - 1) <= TIE_DIGITS))
    return len(verdicts) - zeros, ties, zeros


@pytest.mark.parametrize(("statement", "variant"), CASES)
def test_variant_ties_on_at_most_half_its_examples(statement: str, variant: str) -> None:
    decided, ties, zeros = tie_counts(statement, variant)
    assert decided >= EXAMPLES // 3, f"{statement} ({variant}): only {decided} non-degenerate examples ({zeros} zero)"
    assert ties <= decided / 2, f"{statement} ({variant}): measured == bound on {ties} of {decided} examples"


@pytest.mark.lemma8
def test_a_tautology_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutant of this test: a variant whose bound IS the measured side must fail it."""
    module = load("lemma8")
    monkeypatch.setitem(module.VARIANTS, "tautology", module.measured)
    decided, ties, _ = tie_counts("lemma8", "tautology", examples=10)
    assert ties > decided / 2
