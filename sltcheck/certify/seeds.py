"""The lower bound's seeds and the family's counterexample: instances of the statement (the family's
pinned seeds, a findings.json's worst ones, the worst-case search restricted to the family's shape)
raise the branch-and-bound's lower bound where they lie in the family, each decided by the
statement's own evaluation, a second code path (its interval enclosure, else its mpmath code).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sltcheck.certify import Family

if TYPE_CHECKING:
    from sltcheck.certify.store import State

# The worst-case search that seeds a fresh family (restricted to the family's shape by its
# ``search_fixed``): one shape, the ci budget's starts and climbs, a few seeds, stopping at the first
# certified counterexample; a few seconds per seed (its instances are kept only if in the family).
SEARCH_SEEDS = (0, 1, 2)
SEARCH_BUDGET = {"shapes": 1, "starts": 48, "climbs": 10, "climb_evaluations": 600, "polish_evaluations": 300}


def take_seed(family: Family, state: State, instance: dict[str, Any], source: str) -> None:
    """Raise the lower bound with a seed (a search result, a pinned counterexample) where it lies in
    the family; a certified violation decides the family. Every seed tried is recorded with its source."""
    from sltcheck.harness import interval_verdict as certified

    inside = family.contains is not None and family.contains(instance)
    record: dict[str, Any] = {"source": source, "in_family": inside, "certified_ratio": None, "outcome": None}
    state.seeds.append(record)
    if not inside:
        return
    ratio = certified_ratio(certified, family, instance)
    record.update(certified_ratio=[v if math.isfinite(v) else None for v in (ratio["lower"], ratio["upper"])],
                  outcome=ratio["outcome"])
    if ratio["lower"] > state.best_lower:
        state.best_lower, state.best_point, state.best_source = ratio["lower"], None, source
    if ratio["outcome"] == "violated" and state.verdict is None:
        state.verdict, state.counterexample = "counterexample", _replay_entry(family, instance, ratio, source)


def search_seeds(family: Family, state: State, report: Callable[[str], None] | None) -> None:
    """Seeds from the worst-case search restricted to the family's shape (its public entry point,
    :func:`sltcheck.harness.search.search_worst_case`), one search per seed of SEARCH_SEEDS until one
    gives a certified counterexample in the family or one does not raise the lower bound."""
    from sltcheck.harness.budget import Budget
    from sltcheck.harness.search import search_worst_case

    raised = True
    assert family.search_fixed is not None
    for seed in SEARCH_SEEDS:
        if state.verdict is not None or (seed != SEARCH_SEEDS[0] and not raised):
            break  # decided, or the last search did not raise the lower bound: it has converged
        before = state.best_lower
        worst = search_worst_case(family.statement, family.variant, profile=Budget(**SEARCH_BUDGET),
                                  fixed=family.search_fixed, seed=seed)
        source = (f"search_worst_case({family.statement}, {family.variant}, seed {seed}, "
                  f"{worst.evaluations} evaluations): float ratio {worst.float_ratio:.6g}")
        take_seed(family, state, worst.instance, source)
        raised = state.best_lower > before
        if report:
            inside = "in the family" if state.seeds[-1]["in_family"] else "outside the family"
            report(f"{family.key}: seed from {source}, {inside}")


DECIDE_DPS = 60  # digits of the statement's own mpmath code where sltcheck.harness.interval_verdict does not cover it


def certified_ratio(certified: Any, family: Family, instance: dict[str, Any]) -> dict[str, Any]:
    """The statement's own evaluation, a second code path: its interval enclosure
    (:mod:`sltcheck.harness.interval_verdict`) where it covers the statement and variant, else its mpmath code at
    DECIDE_DPS digits (decided as ``sltcheck check`` decides, the ratio rounded outward)."""
    from sltcheck.numerics.intervals import ends

    if family.variant not in certified.supported().get(family.statement, ()):
        return _decided_ratio(family, instance)
    result = certified.evaluate(family.statement, instance, family.variant)
    if result["bound"] is None:
        return {"outcome": "undecided", "lower": -math.inf, "upper": math.inf, "decided_by": "interval"}
    (m_lo, m_hi), (b_lo, b_hi) = ends(result["measured"]), ends(result["bound"])
    lower = float(m_lo / b_hi) if b_hi > 0 else -math.inf
    upper = float(m_hi / b_lo) if b_lo > 0 else math.inf
    return {"outcome": result["outcome"], "lower": math.nextafter(lower, -math.inf),
            "upper": math.nextafter(upper, math.inf), "work_dps": result["work_dps"],
            "decided_by": "interval (sltcheck.certified)"}  # the label certify.json records (the module's old name)


def _decided_ratio(family: Family, instance: dict[str, Any]) -> dict[str, Any]:
    from sltcheck.harness.runner import evaluate
    from sltcheck.registry import load

    module = load(family.statement)
    mutants = {m.name: m.bound for m in module.MUTANTS}
    verdict = evaluate(family.statement, family.variant, instance, dps=DECIDE_DPS,
                       bound=mutants.get(family.variant))
    outcome = "violated" if verdict.violated else "undecided" if verdict.undecided else "held"
    ratio = verdict.ratio
    if verdict.bound > 0 and verdict.measured >= 0:
        lower = math.nextafter(math.nextafter(ratio, -math.inf), -math.inf)
        upper = math.nextafter(math.nextafter(ratio, math.inf), math.inf)
    else:
        lower, upper = -math.inf, math.inf
    return {"outcome": outcome, "lower": lower, "upper": upper, "work_dps": DECIDE_DPS,
            "decided_by": f"the statement's mpmath code at {DECIDE_DPS} digits (no interval enclosure of it)"}


def _replay_entry(family: Family, instance: dict[str, Any], ratio: dict[str, Any], source: str) -> dict[str, Any]:
    from sltcheck.harness.serialise import encode_instance

    return {"statement": family.statement, "variant": family.variant, "violated": True,
            "family": family.key, "certified_ratio": [ratio["lower"], ratio["upper"]],
            "instance": encode_instance(instance), "found_by": source, "decided_by": ratio["decided_by"]}


def confirm_violation(family: Family, state: State, certified: Any) -> None:
    """A point whose family enclosure exceeds 1: a counterexample once the statement's own enclosure agrees."""
    assert state.best_point is not None
    instance = family.instance(dict(zip([d.name for d in family.dimensions], state.best_point, strict=True)),
                               state.best_choice)
    ratio = certified_ratio(certified, family, instance)
    if ratio["outcome"] == "violated":
        state.verdict = "counterexample"
        state.counterexample = _replay_entry(family, instance, ratio, f"branch-and-bound ({state.best_source})")
