"""The paper's statements, one folder each.

Every package ``sltcheck.statements.<name>`` states its lemma or theorem in its docstring (with its
numbers in the full paper and the workshop version); beside it, its folder holds ``instances.py``
and, where derived, ``differentiable.py``, ``worst_case.py``, ``enclosure.py``, ``family.py`` and
``formulas.py``. Which names each of them defines (required or optional, their meaning and
defaults) is written once, in :mod:`sltcheck.contract`, which checks a folder against it.

Statements are discovered by :mod:`sltcheck.registry` (``STATEMENT_MODULES``, :func:`~sltcheck.registry.load`): a new
folder is a new statement, except ``shared/`` (code several statements use). This module re-exports
those names and the types the statements and the framework share (an instance, a bound,
:class:`Mutant`, from :mod:`sltcheck.statement_types`) for users; the framework imports them from
their homes, never from this package, so that it forms no import cycle with the statements.
"""

from __future__ import annotations

from sltcheck.registry import NOT_STATEMENTS, STATEMENT_MODULES, load
from sltcheck.statement_types import MULTIPLICITY, Bound, Instance, Mutant, multiplicity_of

__all__ = ["MULTIPLICITY", "NOT_STATEMENTS", "STATEMENT_MODULES", "Bound", "Instance", "Mutant", "load",
           "multiplicity_of"]
