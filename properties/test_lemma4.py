"""Lemma 4 (Section 3.2; workshop Lemma 4): Lemma 7's check on targets with ||W|| <= 1.

One property per variant; the table says what each is expected to do.
"""

import pytest

from sltcheck.harness import property_test

CASES = [
    # variant          expectation
    ("deterministic", "holds (measured == bound)"),
]


@pytest.mark.parametrize(("variant", "expectation"), CASES)
def test_lemma4(variant: str, expectation: str) -> None:
    property_test("lemma4", variant)()
