"""The types a statement and the framework share: an instance, a bound, a mutant.

A module of its own, below both the statements and the framework (the harness, certify, checking):
it imports nothing of sltcheck, so either side can import it without importing the other.
:mod:`sltcheck.statements` re-exports these names.

An instance is a ``dict`` of named float64 fields (see :func:`sltcheck.assumptions.violations`),
so it can be written to JSON and replayed exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Instance = dict[str, object]
Bound = Callable[[Instance, int | None], Any]

#: An optional field: how many times each token counts (the worst-case search's weighted instances,
#: :mod:`sltcheck.harness.sequence`); a statement whose measured side reads it treats token k as
#: n_k copies of itself. The search decides only realised instances, which never carry it.
MULTIPLICITY = "multiplicity"


def multiplicity_of(instance: Instance) -> Any:
    """The instance's token multiplicities as float64, or None (every token once)."""
    value = instance.get(MULTIPLICITY)
    return None if value is None else np.asarray(value, dtype=np.float64)


@dataclass(frozen=True)
class Mutant:
    """A known-false reading of a statement, which a search must refute.

    ``bound`` replaces the right-hand side; ``drop`` names assumptions the
    mutant no longer requires of its instances (so a strategy may break them).
    """

    name: str
    why: str
    bound: Bound
    drop: tuple[str, ...] = field(default=())


__all__ = ["MULTIPLICITY", "Bound", "Instance", "Mutant", "multiplicity_of"]
