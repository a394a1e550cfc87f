"""Properties of Theorem 14's a-posteriori chain (sltcheck.statements.theorem14).

Every variant is a valid upper bound on the measured error of any pruned
source (the chain is deterministic), so each must hold on every instance;
every registered mutant must be refuted with a shrunk counterexample.
"""

from __future__ import annotations

import pytest

from sltcheck.harness import property_test, refute
from sltcheck.statements import Mutant
from sltcheck.statements import theorem14 as module

# Profiles (ci/dev/deep) are loaded by properties/conftest.py.


@pytest.mark.parametrize("variant", sorted(module.VARIANTS))
def test_theorem14_bound_holds(variant: str) -> None:
    property_test("theorem14", variant)()


@pytest.mark.parametrize("mutant", module.MUTANTS, ids=lambda m: m.name)
def test_theorem14_mutant_refuted(mutant: Mutant) -> None:
    result = refute("theorem14", mutant)
    assert result.refuted, f"mutant {mutant.name} survived: {result.message}"
    assert result.instance is not None
