"""Lemma 8 (appendix; workshop Lemma 7): softmax perturbation, sqrt(d1) alpha (exp(2 eps_max) - 1).

One property per variant: every instance the strategy draws must satisfy measured <= bound.
"""

import pytest
from hypothesis import given

from sltcheck.harness import check_property, instances
from sltcheck.statements import Instance

# Instances: sltcheck/statements/lemma8/instances.py; the statement and its variants: sltcheck/statements/lemma8/.
VARIANTS = [
    "as-stated",  # holds
]


@pytest.mark.parametrize("variant", VARIANTS)
@given(instance=instances("lemma8"))
def test_lemma8(variant: str, instance: Instance) -> None:
    check_property("lemma8", variant, instance)
