"""Instance strategies, one module per statement: ``sltcheck.statements.<statement>.instances``.

Each module defines

- ``instances(drop: tuple[str, ...] = ()) -> SearchStrategy[Instance]``:
  instances satisfying the statement's assumptions except those in ``drop``
  (which it breaks freely, for mutants that drop a hypothesis);
- ``FREE: tuple[str, ...]``: float fields :func:`sltcheck.harness.search.local_search` may vary;
- ``project(instance) -> Instance``: pull a modified instance back inside the
  assumptions (normalise tokens into the alpha-ball, rescale matrices to
  spectral norm <= 1, clip perturbations), so the search never leaves them;
- optionally ``simplifications(instance) -> Iterable[tuple[str, Instance]]``: structural
  simplifications (fewer tokens, ...) that :mod:`sltcheck.harness.simplify` tries first on a
  mutant's counterexample, each with a label.
"""

from __future__ import annotations

from types import ModuleType

from hypothesis import strategies as st

from sltcheck.statements import Instance
from sltcheck.statements.contract import submodule


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
