"""Statement discovery: the paper's statements, found by folder, and :func:`~sltcheck.registry.load` to import one
by name.

A statement is a folder ``sltcheck/statements/<name>/``: a new folder is a new statement, except
those in :data:`NOT_STATEMENTS` (``shared/``, code several statements use). The folders are found
on disk, beside the package, without importing it: the framework reaches a statement only by name,
through :func:`~sltcheck.registry.load` (importlib), so it never imports the statements package statically and the
statements, which import the framework's lower layers, form no import cycle with it.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from types import ModuleType

#: The package whose sub-packages are the statements.
PACKAGE = "sltcheck.statements"

#: Sub-packages of the statements package that are not statements: code several statements share.
NOT_STATEMENTS = ("shared",)


def _paper_order(name: str) -> tuple[int, int, str]:
    """Lemmas by number, then theorems by number, then anything else by name."""
    match = re.fullmatch(r"(lemma|theorem)(\d+)", name)
    if match is None:
        return (2, 0, name)
    return (0 if match.group(1) == "lemma" else 1, int(match.group(2)), name)


def _folders() -> list[str]:
    """The sub-packages of the statements package, found on disk (the package itself is not imported)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"{PACKAGE} is not a package", name=PACKAGE)
    return [info.name for info in pkgutil.iter_modules(list(spec.submodule_search_locations)) if info.ispkg]


#: The statement folders, in the paper's order.
STATEMENT_MODULES: tuple[str, ...] = tuple(
    sorted((name for name in _folders() if name not in NOT_STATEMENTS), key=_paper_order)
)


def load(name: str) -> ModuleType:
    """The package of statement ``name`` (one of ``STATEMENT_MODULES``), imported on first use."""
    if name not in STATEMENT_MODULES:
        raise ValueError(f"statement must be one of {', '.join(STATEMENT_MODULES)}, got {name!r}")
    return importlib.import_module(f"{PACKAGE}.{name}")


__all__ = ["NOT_STATEMENTS", "STATEMENT_MODULES", "load"]
