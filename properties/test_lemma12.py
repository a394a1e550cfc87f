"""Lemma 12 (appendix A.5): the target MHA is Lipschitz in its input.

One property per variant: every instance the strategy draws must satisfy measured <= bound.
"""

import pytest
from hypothesis import given

from sltcheck.harness import check_property, instances
from sltcheck.statements import Instance

# Instances: sltcheck/statements/lemma12/instances.py; the statement and its variants: sltcheck/statements/lemma12/.
VARIANTS = [
    "as-stated", # holds
    "key-scaled",  # holds
]


@pytest.mark.parametrize("variant", VARIANTS)
@given(instance=instances("lemma12"))
def test_lemma12(variant: str, instance: Instance) -> None:
    check_property("lemma12", variant, instance)
