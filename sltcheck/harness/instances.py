"""Instance strategies, one module per statement: ``sltcheck.statements.<statement>.instances``.

What such a module defines (the strategy ``instances(drop=())``, the search's ``FREE``, ``project``,
``shapes`` and ``start``, and its optional names) is written in :mod:`sltcheck.contract`.
"""

from __future__ import annotations

from types import ModuleType

from hypothesis import strategies as st

from sltcheck.contract import submodule
from sltcheck.statement_types import Instance


def module(statement: str) -> ModuleType:
    found = submodule(statement, "instances")
    if found is None:
        raise ValueError(
            f"no instance strategy for statement {statement!r}: "
            f"add sltcheck/statements/{statement}/instances.py"
        )
    return found


def instances(statement: str, drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    return module(statement).instances(drop=tuple(drop))
