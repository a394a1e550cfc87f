"""Lemma 5 (Section 3.2; appendix Lemma 8; workshop Lemma 7): softmax perturbation, 4 sqrt(d1) alpha eps_max.

One property per variant: every instance the strategy draws must satisfy measured <= bound.
"""

import pytest
from hypothesis import given

from sltcheck.harness import check_property, instances
from sltcheck.statements import Instance

# Instances: sltcheck/statements/lemma5/instances.py; the statement and its variants: sltcheck/statements/lemma5/.
VARIANTS = [
    "as-stated", # holds
    "via-lemma8",  # holds
]


@pytest.mark.parametrize("variant", VARIANTS)
@given(instance=instances("lemma5"))
def test_lemma5(variant: str, instance: Instance) -> None:
    check_property("lemma5", variant, instance)
