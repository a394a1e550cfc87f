"""Lemma 4 (Section 3.2; workshop Lemma 4): Lemma 7's check on targets with ||W|| <= 1.

One property per variant: every instance the strategy draws must satisfy measured <= bound.
"""

import pytest
from hypothesis import given

from sltcheck.harness import check_property, instances
from sltcheck.statements import Instance

# Instances: sltcheck/statements/lemma4/instances.py; the statement and its variants: sltcheck/statements/lemma4/.
VARIANTS = [
    "construction",  # holds (the best masks, enumerated, are no worse than the construction's)
]


@pytest.mark.parametrize("variant", VARIANTS)
@given(instance=instances("lemma4"))
def test_lemma4(variant: str, instance: Instance) -> None:
    check_property("lemma4", variant, instance)
