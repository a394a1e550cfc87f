"""Lemma 8 (appendix; workshop Lemma 7): softmax perturbation, sqrt(d1) alpha (exp(2 eps_max) - 1).

One property per variant; the table says what each is expected to do.
"""

import pytest

from sltcheck.harness import property_test

CASES = [
    # variant       expectation
    ("as-stated", "holds"),
]


@pytest.mark.parametrize(("variant", "expectation"), CASES)
def test_lemma8(variant: str, expectation: str) -> None:
    property_test("lemma8", variant)()
