"""Lemma 2 (Section 2.1; workshop Lemma 2): ||W x - (W2⊙M2) ReLU((W1⊙M1) x)|| with Pensia's masks.

One property per variant: every instance the strategy draws must satisfy measured <= bound.
"""

import pytest
from hypothesis import given

from sltcheck.harness import check_property, instances
from sltcheck.statements import Instance

# Instances: sltcheck/statements/lemma2/instances.py; the statement and its variants: sltcheck/statements/lemma2/.
VARIANTS = [
    "as-proven",  # holds (sqrt(d1 d2) e; ratio 1 at d1 = d2 = 1, x = +-1)
]


@pytest.mark.parametrize("variant", VARIANTS)
@given(instance=instances("lemma2"))
def test_lemma2(variant: str, instance: Instance) -> None:
    check_property("lemma2", variant, instance)
