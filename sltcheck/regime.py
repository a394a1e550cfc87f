"""The theorems' worst instance in their own regime: at least two tokens, errors within the proof's allocation.

The worst-case search of Theorems 9, 11 and 14 (their ``as-proven`` chains) reaches measured / bound = 1
on degenerate instances: one token, where every attention row is the one-hot on that token (the softmax
is the identity) and the chain collapses to an algebraic identity, or errors so large that the theorem
claims nothing. A reader takes that ratio for the theorems' tightness where they apply. This module runs
the same search (:func:`sltcheck.harness.search.search_worst_case`, unchanged) with the sequence length
held at ``T = 2`` and the bound multiplied by ``PENALTY`` outside the regime, so the best instance it
keeps is one the theorem speaks about:

- ``T >= 2`` tokens (``fixed={"T": 2}`` selects the shapes), and
- ``eps* < 1``: the smallest eps for which the achieved errors meet the proof's allocation (each
  statement's ``eps_star``: Theorem 9's Eqs. 14-15, Theorem 11's "Theorem 9 at eps/4, Theorem 10 at
  eps/(6 alpha H sqrt(d1))", Theorem 14's per-block version) lies inside the theorems' ``0 < eps < 1``.

``sltcheck check`` writes one row per theorem to findings.json's ``regime`` (:func:`table`); the report
shows it before the degenerate maximum (:mod:`sltcheck.report.labels`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from sltcheck.statement_types import Instance

if TYPE_CHECKING:
    from sltcheck.harness.budget import Budget

REGIME_STATEMENTS = ("theorem9", "theorem11", "theorem14")
SEQUENCE_LENGTH = 2
# Outside the regime the bound is this many times larger: the search's ratio there is negligible.
PENALTY = 1e6
CONDITION = "T >= 2 tokens and eps* < 1 (the achieved errors meet the proof's allocation for some eps < 1)"


def eps_star(statement: str, instance: Instance, dps: int | None = None) -> float:
    """The smallest eps whose allocation the instance's achieved errors meet (the statement's ``eps_star``)."""
    from sltcheck.registry import load

    module = load(statement)
    return float(module.eps_star(module.target_of(instance), module.source_of(instance), instance["alpha"], dps))


def tokens(instance: Instance) -> int:
    return int(np.asarray(instance["X"]).shape[0])


def star_in_regime(statement: str, instance: Instance) -> float | None:
    """``instance``'s eps* where it lies in the theorem's regime (``CONDITION``), else None."""
    if tokens(instance) < SEQUENCE_LENGTH:
        return None
    try:
        star = eps_star(statement, instance)
    except (ValueError, ZeroDivisionError, OverflowError, FloatingPointError):
        return None
    return star if bool(np.isfinite(star)) and star < 1 else None


def inside(statement: str, instance: Instance) -> bool:
    """Whether ``instance`` lies in the theorem's regime (``CONDITION``)."""
    return star_in_regime(statement, instance) is not None


def regime_bound(statement: str, variant: str) -> Any:
    """The variant's bound inside the regime, ``PENALTY`` times it outside (a constraint the search sees
    through its objective, measured / bound)."""
    from sltcheck.registry import load

    bound = load(statement).VARIANTS[variant]

    def constrained(instance: Instance, dps: int | None) -> Any:
        value = bound(instance, dps)
        return value if inside(statement, instance) else value * PENALTY

    return constrained


def worst_in_regime(statement: str, profile: str | Budget, seed: int) -> dict[str, Any]:
    """One row: the worst instance the search finds in ``statement``'s regime (its default variant),
    decided in mpmath and certified in interval arithmetic where the statement is enclosed; ``profile``
    a profile's name or a search budget, as :func:`~sltcheck.harness.search.search_worst_case` takes."""
    from sltcheck.harness import interval_verdict as certified
    from sltcheck.harness.runner import evaluate
    from sltcheck.harness.search import search_worst_case
    from sltcheck.harness.serialise import encode_instance
    from sltcheck.registry import load

    variant = str(load(statement).DEFAULT_VARIANT)
    began = time.perf_counter()
    found = search_worst_case(statement, variant, profile=profile, seed=seed, fixed={"T": SEQUENCE_LENGTH},
                              bound=regime_bound(statement, variant))
    star = star_in_regime(statement, found.instance)
    row: dict[str, Any] = {"statement": statement, "variant": variant, "condition": CONDITION,
                           "evaluations": found.evaluations, "found": star is not None}
    if star is not None:
        verdict = evaluate(statement, variant, found.instance, dps=found.verdict.dps)  # the variant's own bound
        row.update(tokens=tokens(found.instance), eps_star=star,
                   ratio=verdict.ratio, verdict=verdict.as_dict(), shape=found.shape,
                   instance=encode_instance(found.instance))
        if variant in certified.supported().get(statement, ()):
            result = certified.evaluate(statement, found.instance, variant)
            row.update(certified_outcome=str(result["outcome"]), certified_backend=str(result["backend"]))
    row["seconds"] = round(time.perf_counter() - began, 3)
    return row


def table(profile: str, seed: int, names: tuple[str, ...]) -> list[dict[str, Any]]:
    """The rows of the theorems among ``names``."""
    return [worst_in_regime(name, profile, seed) for name in REGIME_STATEMENTS if name in names]
