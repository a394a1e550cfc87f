"""Lemma 7 (appendix A.1; workshop Lemma 6): ||W - (W2⊙M2)(W1⊙M1)||_max with the construction's masks.

One property per variant; the table says what each is expected to do. The as-stated
eps/(d1 d2) is probabilistic and estimated, not asserted (tests/test_statements_weights.py).
"""

import pytest

from sltcheck.harness import property_test

CASES = [
    # variant          expectation
    ("deterministic", "holds (measured == bound: entries decouple, M2 entrywise optimal)"),
]


@pytest.mark.parametrize(("variant", "expectation"), CASES)
def test_lemma7(variant: str, expectation: str) -> None:
    property_test("lemma7", variant)()
