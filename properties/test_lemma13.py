"""lemma13: one property per variant (statement and variants: sltcheck/statements/lemma13.py)."""

import pytest

from sltcheck.harness import property_test

CASES = [
    # variant       expectation
    ("as-proven", "holds"),
    ("as-stated", "holds"),
]


@pytest.mark.parametrize(("variant", "expectation"), CASES)
def test_lemma13(variant: str, expectation: str) -> None:
    property_test("lemma13", variant)()
