"""Properties of Theorem 9's a-posteriori chain (sltcheck.statements.theorem9).

Every variant is a valid upper bound on the measured error of any pruned
source (the chain is deterministic), so each must hold on every instance;
every registered mutant must be refuted with a shrunk counterexample.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from sltcheck.harness import check_property, instances, refute
from sltcheck.statements import Instance, Mutant
from sltcheck.statements import theorem9 as module

# Instances: sltcheck/statements/theorem9/instances.py. Profiles (ci/dev/deep): sltcheck/harness/profiles.py.


@pytest.mark.parametrize("variant", sorted(module.VARIANTS))
@given(instance=instances("theorem9"))
def test_theorem9_bound_holds(variant: str, instance: Instance) -> None:
    check_property("theorem9", variant, instance)


@pytest.mark.parametrize("mutant", module.MUTANTS, ids=lambda m: m.name)
def test_theorem9_mutant_refuted(mutant: Mutant) -> None:
    result = refute("theorem9", mutant)
    assert result.refuted, f"mutant {mutant.name} survived: {result.message}"
    assert result.instance is not None
