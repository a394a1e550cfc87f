"""Properties of Theorem 14's a-posteriori chain (sltcheck.statements.theorem14).

Every variant is a valid upper bound on the measured error of any pruned
source (the chain is deterministic), so each must hold on every instance: one property decides
every variant on each drawn instance (drawing costs more than deciding). Its mutants are
refuted in properties/test_mutants.py.
"""

from __future__ import annotations

from hypothesis import given

from sltcheck.harness import check_variants, instances
from sltcheck.statement_types import Instance
from sltcheck.statements import theorem14 as module

# Instances: sltcheck/statements/theorem14/instances.py. Profiles (ci/dev/deep): sltcheck/harness/profiles.py.


@given(instance=instances("theorem14"))
def test_theorem14_every_variant_holds(instance: Instance) -> None:
    check_variants("theorem14", sorted(module.VARIANTS), instance)
