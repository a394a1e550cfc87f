"""Lemma 4 (Section 3.2; workshop Lemma 4): Lemma 7's check on targets with ||W|| <= 1.

One property over the variants: every instance the strategy draws must satisfy measured <= bound
for each.
"""

from hypothesis import given

from sltcheck.harness import check_variants, instances
from sltcheck.statement_types import Instance

# Instances: sltcheck/statements/lemma4/instances.py; the statement and its variants: sltcheck/statements/lemma4/.
VARIANTS = [
    "construction",  # holds (the best masks, enumerated, are no worse than the construction's)
]


@given(instance=instances("lemma4"))
def test_lemma4_every_variant_holds(instance: Instance) -> None:
    check_variants("lemma4", VARIANTS, instance)
