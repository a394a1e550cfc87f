"""Lemma 2 (Section 2.1; workshop Lemma 2): ||W x - (W2⊙M2) ReLU((W1⊙M1) x)|| with Pensia's masks.

One property per variant; the table says what each is expected to do.
"""

import pytest

from sltcheck.harness import property_test

CASES = [
    # variant       expectation
    ("as-proven", "holds (sqrt(d1 d2) e; ratio 1 at d1 = d2 = 1, x = +-1)"),
    ("pointwise", "holds (sum_j E_ij |x_j|; tight at d1 = d2 = 1)"),
]


@pytest.mark.parametrize(("variant", "expectation"), CASES)
def test_lemma2(variant: str, expectation: str) -> None:
    property_test("lemma2", variant)()
