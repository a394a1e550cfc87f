"""The paper's statements, one module each.

Every module ``sltcheck.statements.<name>`` states its lemma or theorem in
its docstring (with its numbers in the full paper and the workshop version)
and holds only:

- ``ASSUMPTIONS``: the names of its hypotheses (see :mod:`sltcheck.assumptions`);
- ``measured(instance, dps)``: the left-hand side, in mpmath at ``dps`` digits;
- ``VARIANTS``: the right-hand sides, a mapping from variant name
  ("as-stated", "as-proven", ...) to ``bound(instance, dps)``; the default
  variant is named in ``DEFAULT_VARIANT`` (the one the proofs use);
- ``MUTANTS``: known-false variants (a bound made too small, a hypothesis
  dropped) that the suite must refute, as :class:`Mutant`.

An instance is a ``dict`` of named float64 fields (see
:func:`sltcheck.assumptions.violations`), so it can be written to JSON and
replayed exactly.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

Instance = dict[str, object]
Bound = Callable[[Instance, int | None], Any]


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


# Registered statement modules, in the paper's order.
STATEMENT_MODULES: tuple[str, ...] = (
    'lemma2', 'lemma4', 'lemma5', 'lemma7', 'lemma8', 'lemma12', 'lemma13', 'theorem9', 'theorem11', 'theorem14'
)


def load(name: str) -> ModuleType:
    if name not in STATEMENT_MODULES:
        raise ValueError(f"statement must be one of {', '.join(STATEMENT_MODULES)}, got {name!r}")
    return importlib.import_module(f"sltcheck.statements.{name}")
