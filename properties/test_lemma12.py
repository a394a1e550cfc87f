"""lemma12: one property per variant (statement and variants: sltcheck/statements/lemma12.py)."""

import pytest

from sltcheck.harness import property_test

CASES = [
    # variant       expectation
    ("as-stated", "holds"),
    ("key-scaled", "holds"),
]


@pytest.mark.parametrize(("variant", "expectation"), CASES)
def test_lemma12(variant: str, expectation: str) -> None:
    property_test("lemma12", variant)()
