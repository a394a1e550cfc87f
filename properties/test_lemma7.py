"""Lemma 7 (appendix A.1; workshop Lemma 6): ||W - (W2⊙M2)(W1⊙M1)||_max with the construction's masks.

One property over the variants: every instance the strategy draws must satisfy measured <= bound
for each. The as-stated eps/(d1 d2) is probabilistic and estimated, not asserted
(tests/test_statements_weights.py).
"""

from hypothesis import given

from sltcheck.harness import check_variants, instances
from sltcheck.statement_types import Instance

# Instances: sltcheck/statements/lemma7/instances.py; the statement and its variants: sltcheck/statements/lemma7/.
VARIANTS = [
    "construction",  # holds (the best masks, enumerated, are no worse than the construction's)
]


@given(instance=instances("lemma7"))
def test_lemma7_every_variant_holds(instance: Instance) -> None:
    check_variants("lemma7", VARIANTS, instance)
