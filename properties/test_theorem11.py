"""Properties of Theorem 11's a-posteriori chain (sltcheck.statements.theorem11).

Every variant is a valid upper bound on the measured error of any pruned
source (the chain is deterministic), so each must hold on every instance;
every registered mutant must be refuted with a shrunk counterexample.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from sltcheck.harness import check_property, instances, refute
from sltcheck.statements import Instance, Mutant
from sltcheck.statements import theorem11 as module

# Instances: sltcheck/statements/theorem11/instances.py. Profiles (ci/dev/deep): sltcheck/harness/profiles.py.


@pytest.mark.parametrize("variant", sorted(module.VARIANTS))
@given(instance=instances("theorem11"))
def test_theorem11_bound_holds(variant: str, instance: Instance) -> None:
    check_property("theorem11", variant, instance)


@pytest.mark.parametrize("mutant", module.MUTANTS, ids=lambda m: m.name)
def test_theorem11_mutant_refuted(mutant: Mutant) -> None:
    result = refute("theorem11", mutant)
    assert result.refuted, f"mutant {mutant.name} survived: {result.message}"
    assert result.instance is not None
