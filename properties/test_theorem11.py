"""Properties of Theorem 11's a-posteriori chain (sltcheck.statements.theorem11).

Every variant is a valid upper bound on the measured error of any pruned
source (the chain is deterministic), so each must hold on every instance: one property decides
every variant on each drawn instance (drawing costs more than deciding). Its mutants are
refuted in properties/test_mutants.py.
"""

from __future__ import annotations

from hypothesis import given

from sltcheck.harness import check_variants, instances
from sltcheck.statement_types import Instance
from sltcheck.statements import theorem11 as module

# Instances: sltcheck/statements/theorem11/instances.py. Profiles (ci/dev/deep): sltcheck/harness/profiles.py.


@given(instance=instances("theorem11"))
def test_theorem11_every_variant_holds(instance: Instance) -> None:
    check_variants("theorem11", sorted(module.VARIANTS), instance)
