"""Lemma 7 (appendix A.1; workshop Lemma 6): ||W - (W2⊙M2)(W1⊙M1)||_max with the construction's masks.

One property per variant: every instance the strategy draws must satisfy measured <= bound. The as-stated
eps/(d1 d2) is probabilistic and estimated, not asserted (tests/test_statements_weights.py).
"""

import pytest
from hypothesis import given

from sltcheck.harness import check_property, instances
from sltcheck.statements import Instance

# Instances: sltcheck/statements/lemma7/instances.py; the statement and its variants: sltcheck/statements/lemma7/.
VARIANTS = [
    "construction",  # holds (the best masks, enumerated, are no worse than the construction's)
]


@pytest.mark.parametrize("variant", VARIANTS)
@given(instance=instances("lemma7"))
def test_lemma7(variant: str, instance: Instance) -> None:
    check_property("lemma7", variant, instance)
