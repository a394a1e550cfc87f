"""The paper's statements, one folder each.

Every package ``sltcheck.statements.<name>`` states its lemma or theorem in its docstring (with its
numbers in the full paper and the workshop version); beside it, its folder holds ``instances.py``
and, where derived, ``differentiable.py``, ``worst_case.py``, ``enclosure.py``, ``family.py`` and
``formulas.py``. Which names each of them defines (required or optional, their meaning and
defaults) is written once, in :mod:`sltcheck.statements.contract`, which checks a folder against it.

This module holds ``STATEMENT_MODULES`` and :func:`load`, and re-exports the types the statements
and the framework share (an instance, a bound, :class:`Mutant`), which live in
:mod:`sltcheck.statement_types`. Statements are discovered: a new folder is a new statement, except
``shared/`` (code several statements use, see :mod:`sltcheck.statements.contract`).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from types import ModuleType

from sltcheck.statement_types import MULTIPLICITY, Bound, Instance, Mutant, multiplicity_of


def _paper_order(name: str) -> tuple[int, int, str]:
    """Lemmas by number, then theorems by number, then anything else by name."""
    match = re.fullmatch(r"(lemma|theorem)(\d+)", name)
    if match is None:
        return (2, 0, name)
    return (0 if match.group(1) == "lemma" else 1, int(match.group(2)), name)


#: Sub-packages of this package that are not statements: code several statements share.
NOT_STATEMENTS = ("shared",)

# The statement folders (sub-packages of this package), in the paper's order.
STATEMENT_MODULES: tuple[str, ...] = tuple(
    sorted((info.name for info in pkgutil.iter_modules(__path__) if info.ispkg and info.name not in NOT_STATEMENTS),
           key=_paper_order)
)


def load(name: str) -> ModuleType:
    if name not in STATEMENT_MODULES:
        raise ValueError(f"statement must be one of {', '.join(STATEMENT_MODULES)}, got {name!r}")
    return importlib.import_module(f"sltcheck.statements.{name}")


__all__ = ["MULTIPLICITY", "NOT_STATEMENTS", "STATEMENT_MODULES", "Bound", "Instance", "Mutant", "load",
           "multiplicity_of"]
