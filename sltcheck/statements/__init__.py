"""The paper's statements, one folder each.

Every package ``sltcheck.statements.<name>`` states its lemma or theorem in its docstring (with its
numbers in the full paper and the workshop version); beside it, its folder holds ``instances.py``
and, where derived, ``differentiable.py``, ``worst_case.py``, ``enclosure.py``, ``family.py`` and
``formulas.py``. Which names each of them defines (required or optional, their meaning and
defaults) is written once, in :mod:`sltcheck.statements.contract`, which checks a folder against it.

This module holds the types the statements share (an instance, a bound, :class:`Mutant`) and
``STATEMENT_MODULES``. An instance is a ``dict`` of named float64 fields (see
:func:`sltcheck.assumptions.violations`), so it can be written to JSON and replayed exactly.
Statements are discovered: a new folder is a new statement.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

Instance = dict[str, object]
Bound = Callable[[Instance, int | None], Any]

#: An optional field: how many times each token counts (the worst-case search's weighted instances,
#: :mod:`sltcheck.harness.sequence`); a statement whose measured side reads it treats token k as
#: n_k copies of itself. The search decides only realised instances, which never carry it.
MULTIPLICITY = "multiplicity"


def multiplicity_of(instance: Instance) -> Any:
    """The instance's token multiplicities as float64, or None (every token once)."""
    import numpy as np

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


def _paper_order(name: str) -> tuple[int, int, str]:
    """Lemmas by number, then theorems by number, then anything else by name."""
    match = re.fullmatch(r"(lemma|theorem)(\d+)", name)
    if match is None:
        return (2, 0, name)
    return (0 if match.group(1) == "lemma" else 1, int(match.group(2)), name)


# The statement folders (sub-packages of this package), in the paper's order.
STATEMENT_MODULES: tuple[str, ...] = tuple(
    sorted((info.name for info in pkgutil.iter_modules(__path__) if info.ispkg), key=_paper_order)
)


def load(name: str) -> ModuleType:
    if name not in STATEMENT_MODULES:
        raise ValueError(f"statement must be one of {', '.join(STATEMENT_MODULES)}, got {name!r}")
    return importlib.import_module(f"sltcheck.statements.{name}")
