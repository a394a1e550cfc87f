"""Lemma 12 (appendix A.5): the target MHA is Lipschitz in its input.

One property over the variants: every instance the strategy draws must satisfy measured <= bound
for each (decided one by one on the same instance; drawing costs more than deciding).
"""

from hypothesis import given

from sltcheck.harness import check_variants, instances
from sltcheck.statement_types import Instance

# Instances: sltcheck/statements/lemma12/instances.py; the statement and its variants: sltcheck/statements/lemma12/.
VARIANTS = [
    "as-stated", # holds
    "key-scaled",  # holds
]


@given(instance=instances("lemma12"))
def test_lemma12_every_variant_holds(instance: Instance) -> None:
    check_variants("lemma12", VARIANTS, instance)
