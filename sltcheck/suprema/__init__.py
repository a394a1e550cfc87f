"""The supremum registry: the exact suprema of the deterministic bounds' measured sides, and the
paper's slack factors. (The search for a worst instance is :func:`sltcheck.harness.search.search_worst_case`.)

``supremum(statement, **params)`` returns the supremum of a statement's measured side over
everything its assumptions allow (given the parameters its bound depends on), an extremal
instance (a dict usable by ``sltcheck.statements.<measured_by>.measured``), and how the value
is known: "closed-form" (derived and proved in the statement's worst_case.py, attained by the
instance), or "bracket" (a certified upper bound, proved there, with the best instance found as
a lower bound). ``slack(statement, **params)`` is bound / supremum for the statement's default
variant (for a bracket: bound / upper, with ``slack_range`` = [bound / upper, bound / lower]).

One module per statement, discovered: ``sltcheck.statements.<name>.worst_case`` with ``PARAMS``,
``supremum(**params)`` and its rows of the slack table, ``SLACK_ROWS``: lemma8 (Lemma 8, closed
form; lemma5 uses it), theorem9 (closed form on the slices e_QK = 0 and e_VO = 0), lemma12 and
lemma13 (closed form at d1 = 1, the supremum as eps -> 0, bracketed at finite eps by its realised extremal
family; searched brackets at d1 >= 2), theorem11 (closed form on e_QK = 0), theorem14 (bracket).
"""

from __future__ import annotations

import functools
import inspect
import math
from types import ModuleType
from typing import Any

from sltcheck.contract import optional, parts
from sltcheck.statements.shared.suprema import BRACKET, CLOSED, known_params

_SEARCH = ("random_starts", "seed")


@functools.cache
def _modules() -> dict[str, ModuleType]:
    """Statement -> its worst_case module, for the statements that have one (paper order)."""
    return parts("worst_case")


def statements() -> tuple[str, ...]:
    """The statements whose worst case is derived (a ``worst_case.py`` in their folder)."""
    return tuple(_modules())


def supremum(statement: str, **params: Any) -> dict[str, Any]:
    """The supremum of ``statement``'s measured side (see the module docstring).

    Returns value, lower, upper, kind ("closed-form" or "bracket"), instance (evaluate it with
    ``sltcheck.statements.<measured_by>.measured``), bound (the default variant's bound at
    these parameters), slack (bound / upper) and, for a bracket, slack_range.
    Parameters per statement: each module's PARAMS (those that search also take the search's
    random_starts and seed).
    """
    modules = _modules()
    if statement not in modules:
        raise ValueError(
            f"statement must be one of {', '.join(modules)} (worst cases derived here), got {statement!r}"
        )
    module = modules[statement]
    searched = tuple(p for p in _SEARCH if p in inspect.signature(module.supremum).parameters)
    known_params(statement, params, tuple(module.PARAMS) + searched)
    return dict(module.supremum(**params))


def slack(statement: str, **params: Any) -> float:
    return float(supremum(statement, **params)["slack"])


def _finite(value: Any) -> Any:
    return value if not isinstance(value, float) or math.isfinite(value) else None


def _row(r: dict[str, Any]) -> dict[str, Any]:
    row = {"statement": r["statement"], "params": r["params"], "kind": r["kind"], "supremum": r["upper"],
           "lower": r["lower"], "bound": r["bound"], "slack": r["slack"], "slack_range": r["slack_range"]}
    return {k: ([_finite(v) for v in value] if isinstance(value, list) and k == "slack_range" else _finite(value))
            for k, value in row.items()}


def slack_table(searched: bool = True, statements: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Slack factors over a grid of parameters (the report's "Slack factors" table): the
    ``SLACK_ROWS`` (statement, params) of every worst-case module, in the paper's order
    (only the rows of ``statements``, if given).

    ``searched=False`` leaves out the rows whose lower ends need a search (Lemmas 12 and 13 at d1 = 2,
    ~10 s each)."""
    rows = []
    for module in _modules().values():
        for name, params in optional(module, "SLACK_ROWS"):
            if statements is not None and name not in statements:
                continue
            if searched or "random_starts" not in params:
                rows.append(_row(supremum(name, **params)))
    return rows


__all__ = ["BRACKET", "CLOSED", "slack", "slack_table", "statements", "supremum"]
