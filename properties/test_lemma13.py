"""Lemma 13 (appendix A.5): the target block is Lipschitz in its input.

One property per variant: every instance the strategy draws must satisfy measured <= bound.
"""

import pytest
from hypothesis import given

from sltcheck.harness import check_property, instances
from sltcheck.statements import Instance

# Instances: sltcheck/statements/lemma13/instances.py; the statement and its variants: sltcheck/statements/lemma13/.
VARIANTS = [
    "as-proven",  # holds
    "as-stated",  # holds
]


@pytest.mark.parametrize("variant", VARIANTS)
@given(instance=instances("lemma13"))
def test_lemma13(variant: str, instance: Instance) -> None:
    check_property("lemma13", variant, instance)
