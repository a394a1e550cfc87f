"""Lemma 8 (appendix; workshop Lemma 7): softmax perturbation, sqrt(d1) alpha (exp(2 eps_max) - 1).

One property over the variants: every instance the strategy draws must satisfy measured <= bound
for each.
"""

from hypothesis import given

from sltcheck.harness import check_variants, instances
from sltcheck.statement_types import Instance

# Instances: sltcheck/statements/lemma8/instances.py; the statement and its variants: sltcheck/statements/lemma8/.
VARIANTS = [
    "as-stated",  # holds
]


@given(instance=instances("lemma8"))
def test_lemma8_every_variant_holds(instance: Instance) -> None:
    check_variants("lemma8", VARIANTS, instance)
