"""Lemma 5 (Section 3.2; appendix Lemma 8; workshop Lemma 7): softmax perturbation, 4 sqrt(d1) alpha eps_max.

One property over the variants: every instance the strategy draws must satisfy measured <= bound
for each (decided one by one on the same instance; drawing costs more than deciding).
"""

from hypothesis import given

from sltcheck.harness import check_variants, instances
from sltcheck.statement_types import Instance

# Instances: sltcheck/statements/lemma5/instances.py; the statement and its variants: sltcheck/statements/lemma5/.
VARIANTS = [
    "as-stated", # holds
    "via-lemma8",  # holds
]


@given(instance=instances("lemma5"))
def test_lemma5_every_variant_holds(instance: Instance) -> None:
    check_variants("lemma5", VARIANTS, instance)
