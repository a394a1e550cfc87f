"""Lemma 2 (Section 2.1; workshop Lemma 2): ||W x - (W2⊙M2) ReLU((W1⊙M1) x)|| with Pensia's masks.

One property over the variants: every instance the strategy draws must satisfy measured <= bound
for each.
"""

from hypothesis import given

from sltcheck.harness import check_variants, instances
from sltcheck.statement_types import Instance

# Instances: sltcheck/statements/lemma2/instances.py; the statement and its variants: sltcheck/statements/lemma2/.
VARIANTS = [
    "as-proven",  # holds (sqrt(d1 d2) e; ratio 1 at d1 = d2 = 1, x = +-1)
]


@given(instance=instances("lemma2"))
def test_lemma2_every_variant_holds(instance: Instance) -> None:
    check_variants("lemma2", VARIANTS, instance)
