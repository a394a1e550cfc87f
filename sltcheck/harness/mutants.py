"""Refuting mutants: a check that cannot fail is a defect.

:func:`refute` runs a statement's property with a mutant's bound (and its
dropped assumptions) and returns its counterexample, simplified by
:mod:`sltcheck.harness.simplify` (the raw one is kept beside it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from hypothesis import Phase
from hypothesis import settings as Settings
from hypothesis.errors import HypothesisException

from sltcheck.harness.runner import PROPERTY_DPS, property_test
from sltcheck.numerics.verdict import Verdict
from sltcheck.registry import load
from sltcheck.statement_types import Instance, Mutant


@dataclass(frozen=True)
class Refutation:
    statement: str
    mutant: str
    refuted: bool
    instance: Instance | None  # the counterexample, simplified (sltcheck.harness.simplify)
    verdict: Verdict | None
    message: str = ""
    raw_instance: Instance | None = None  # as found (shrunk by Hypothesis where shrinks(profile))
    raw_verdict: Verdict | None = None
    simplification: dict[str, Any] | None = None  # what the simplification kept, digits and zeros


def simplified(refutation: Refutation, mutant: Mutant, dps: int = PROPERTY_DPS) -> Refutation:
    """``refutation`` with its counterexample simplified; the raw one in ``raw_instance``."""
    if not refutation.refuted or refutation.instance is None:
        return refutation
    from sltcheck.harness.simplify import simplify_refutation

    done = simplify_refutation(refutation.statement, f"mutant:{mutant.name}", refutation.instance,
                               bound=mutant.bound, drop=tuple(mutant.drop), dps=dps)
    return replace(refutation, instance=done.instance, verdict=done.verdict or refutation.verdict,
                   raw_instance=refutation.instance, raw_verdict=refutation.verdict,
                   simplification=done.as_dict())


def mutants(statement: str) -> list[Mutant]:
    return list(load(statement).MUTANTS)


def refute(
    statement: str,
    mutant: Mutant,
    *,
    settings: Settings | None = None,
    dps: int = PROPERTY_DPS,
    profile: str = "ci",
) -> Refutation:
    """Search for an instance on which ``mutant`` is violated; simplify it.

    Deterministic passes under ``settings``: generation alone (diverse
    examples, shrunk by Hypothesis where :func:`~sltcheck.harness.mutants.shrinks` says so; at most
    ``GENERATION_BEFORE_SEARCH`` of them for a mutant that keeps every
    assumption); then, for a mutant that keeps every assumption (a bound made too small), the worst-case search of
    :mod:`sltcheck.harness.search` at ``profile``'s budget (edge mutants, a few
    percent under a supremum, need it; its counterexample is the search's best
    point, not shrunk); then generation with Hypothesis's target hill-climbing,
    then the same with a larger budget (``LONGER_SEARCH``). The counterexample found is
    then simplified (:func:`~sltcheck.harness.mutants.simplified`), at every profile: neither the search's best point
    nor a ci counterexample is shrunk, and Hypothesis's shrinking does not minimise digits.
    """
    return simplified(_search(statement, mutant, settings, dps, profile), mutant, dps)


def _search(statement: str, mutant: Mutant, settings: Settings | None, dps: int, profile: str) -> Refutation:
    base = settings if settings is not None else Settings()
    shrink = (Phase.shrink,) if shrinks(profile) else ()
    # A mutant that keeps every assumption is refuted near its supremum, where the search
    # goes and generation rarely does: generation before the search is capped, so a deep
    # profile does not spend its 10,000 examples in mpmath before the search runs.
    first_budget = base.max_examples if mutant.drop else min(base.max_examples, GENERATION_BEFORE_SEARCH)
    first = _refute(statement, mutant, Settings(base, max_examples=first_budget,
                                                phases=(Phase.explicit, Phase.generate, *shrink)), dps)
    if first.refuted:
        return first
    if not mutant.drop:
        from sltcheck.harness.search import search_worst_case

        found = search_worst_case(statement, f"mutant:{mutant.name}", bound=mutant.bound, profile=profile, dps=dps)
        if found.verdict.violated:
            return Refutation(statement, mutant.name, True, found.instance, found.verdict,
                              f"worst-case search: ratio {found.ratio:.6g} after {found.evaluations} evaluations")
    every = tuple(phase for phase in Phase if phase is not Phase.shrink or shrink)
    second = _refute(statement, mutant, Settings(base, phases=every), dps)
    if second.refuted:
        return second
    # A mutant false only on a thin set of instances: a longer deterministic search.
    longer = Settings(base, max_examples=max(LONGER_SEARCH, 4 * base.max_examples), phases=every)
    return _refute(statement, mutant, longer, dps)


# Examples in the third pass, for mutants the profile's budget did not refute.
LONGER_SEARCH = 400
# Examples generated before the worst-case search for a mutant that keeps every assumption
# (the dev profile's budget: ci and dev run as before; deep reaches the search sooner).
GENERATION_BEFORE_SEARCH = 300


def shrinks(profile: str) -> bool:
    """Whether refutations at ``profile`` shrink their counterexamples.

    Not at ci: Hypothesis has no public bound on shrinking, and unbounded (up to its own
    5-minute shrink limit) one mutant (lemma13 no-fc-spectral) took 300 s of the ci run
    instead of 35 s. The ci counterexample is then the first failing example, which
    Hypothesis draws small-first; dev and deep shrink fully.
    """
    return profile != "ci"


def _refute(statement: str, mutant: Mutant, settings: Settings, dps: int) -> Refutation:
    failing: list[tuple[Instance, Verdict]] = []
    test = property_test(
        statement,
        f"mutant:{mutant.name}",
        bound=mutant.bound,
        drop=tuple(mutant.drop),
        settings=settings,
        dps=dps,
        recorder=None,
        on_failure=lambda instance, verdict: failing.append((instance, verdict)),
    )
    try:
        test()
    except AssertionError as error:
        if failing:
            instance, verdict = failing[-1]
            return Refutation(
                statement, mutant.name, True, instance, verdict, str(error).splitlines()[0]
            )
        return Refutation(statement, mutant.name, False, None, None, f"unexpected failure: {error}")
    except HypothesisException as error:  # e.g. Flaky, health checks
        return Refutation(
            statement, mutant.name, False, None, None, f"{type(error).__name__}: {error}"
        )
    return Refutation(statement, mutant.name, False, None, None, "no counterexample found")
