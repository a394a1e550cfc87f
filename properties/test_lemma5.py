"""lemma5: one property per variant (statement and variants: sltcheck/statements/lemma5.py)."""

import pytest

from sltcheck.harness import property_test

CASES = [
    # variant       expectation
    ("as-stated", "holds"),
    ("via-lemma8", "holds"),
]


@pytest.mark.parametrize(("variant", "expectation"), CASES)
def test_lemma5(variant: str, expectation: str) -> None:
    property_test("lemma5", variant)()
