"""The property runner: assumptions -> measured and bound in mpmath -> verdict.

:func:`check_property` is the body of every property; :func:`property_test`
wraps it into a Hypothesis test (used by ``properties/`` and by
``sltcheck check``); ``RECORDER`` keeps, per statement and variant, the
number of examples, the worst ratio and its instance.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import numpy as np
from hypothesis import assume, example, given, note, target
from hypothesis import settings as Settings
from hypothesis.control import current_build_context

from sltcheck.assumptions import violations
from sltcheck.contract import optional
from sltcheck.harness.instances import instances as instance_strategy
from sltcheck.harness.serialise import dumps, summary
from sltcheck.numerics.defaults import PROPERTY_DPS
from sltcheck.numerics.verdict import DEFAULT_DPS, Verdict, decide
from sltcheck.registry import load
from sltcheck.statement_types import Bound, Instance

# Precision of the verdicts (digits). Both sides are evaluated at it.


@dataclass
class Record:
    """What the search saw of one statement and variant."""

    statement: str
    variant: str
    examples: int = 0
    undecided: int = 0
    attained: int = 0  # measured = bound, proved in exact arithmetic (counted as held, not undecided)
    filtered: int = 0  # draws rejected by an assumption (hypothesis.assume)
    violations: int = 0
    worst_ratio: float = float("-inf")
    worst_instance: Instance | None = None
    worst_verdict: Verdict | None = None
    seconds: float = 0.0
    seed: int | None = None
    ratios: list[float] = field(default_factory=list)  # every example's measured/bound, for histograms

    def add(self, verdict: Verdict, instance: Instance, seconds: float) -> None:
        self.examples += 1
        self.ratios.append(verdict.ratio)
        self.undecided += int(verdict.undecided)
        self.attained += int(verdict.attained)
        self.violations += int(verdict.violated)
        self.seconds += seconds
        # A violation always outranks a holding instance.
        key = (verdict.violated, verdict.ratio)
        best = (
            (self.worst_verdict.violated, self.worst_ratio)
            if self.worst_verdict
            else (False, float("-inf"))
        )
        if key > best:
            self.worst_ratio, self.worst_instance, self.worst_verdict = (
                verdict.ratio,
                dict(instance),
                verdict,
            )


@dataclass
class Recorder:
    records: dict[tuple[str, str], Record] = field(default_factory=dict)
    seed: int | None = None
    # Called after every recorded example (a progress bar's tick); None: nothing is called.
    on_example: Callable[[], None] | None = None

    def record(self, statement: str, variant: str) -> Record:
        key = (statement, variant)
        if key not in self.records:
            self.records[key] = Record(statement, variant, seed=self.seed)
        return self.records[key]

    def clear(self) -> None:
        self.records.clear()


RECORDER = Recorder()


def _note(instance: Instance) -> None:
    # The exact instance is serialised only for the final (reported) example.
    try:
        final = current_build_context().is_final
    except Exception:  # outside a Hypothesis test
        return
    if final:
        note(f"instance: {summary(instance)}")
        note(f"instance (exact JSON): {dumps(instance)}")


def evaluate(
    statement: str,
    variant: str,
    instance: Instance,
    *,
    dps: int = PROPERTY_DPS,
    bound: Bound | None = None,
) -> Verdict:
    """measured and bound of ``statement`` at ``dps`` digits, decided (no assumption check)."""
    module = load(statement)
    rhs = bound if bound is not None else module.VARIANTS[variant]
    floor = optional(module, "noise_floor")(instance, dps)
    verdict = decide(module.measured(instance, dps), rhs(instance, dps), dps, floor)
    return verdict if bound is not None else settle(statement, variant, instance, verdict)


def settle(statement: str, variant: str, instance: Instance, verdict: Verdict) -> Verdict:
    """An undecided verdict of a variant, decided where :mod:`sltcheck.harness.interval_verdict` covers it: its
    intervals, then exact arithmetic, where the two sides are equal as real numbers "attained"
    (held with equality, proved). Otherwise (a mutant's bound, no enclosure, no exact value) it
    stays undecided."""
    from sltcheck.harness import interval_verdict as certified

    if not verdict.undecided or variant not in certified.supported().get(statement, ()):
        return verdict
    outcome = certified.evaluate(statement, instance, variant)["outcome"]
    if outcome == "undecided":
        return verdict
    return replace(verdict, holds=outcome != "violated", undecided=False, attained=outcome == "attained")


def check_property(
    statement: str,
    variant: str,
    instance: Instance,
    *,
    dps: int = PROPERTY_DPS,
    bound: Bound | None = None,
    skip: Iterable[str] = (),
    recorder: Recorder | None = RECORDER,
) -> Verdict:
    """The body of a property: assumptions, measured/bound in mpmath, verdict.

    Instances violating an assumption (other than ``skip``) are rejected with
    ``hypothesis.assume`` (strategies build them inside, so this is rare).
    Calls ``target(measured/bound)`` so the search climbs toward the worst
    case, ``note``s the instance (exactly, on the reported example), records
    it in ``recorder`` and raises ``AssertionError`` when the bound is
    violated at ``dps`` digits (undecided outcomes are recorded, not failed).
    ``bound`` replaces the variant's right-hand side (mutants).
    """
    _assume_admissible(statement, (variant,), instance, skip, recorder)
    start = time.perf_counter()
    verdict = evaluate(statement, variant, instance, dps=dps, bound=bound)
    return _judge(statement, variant, instance, verdict, time.perf_counter() - start, dps, recorder)


def check_variants(
    statement: str,
    variants: Iterable[str],
    instance: Instance,
    *,
    dps: int = PROPERTY_DPS,
    recorder: Recorder | None = RECORDER,
) -> dict[str, Verdict]:
    """The body of a property over several variants of one statement: :func:`check_property`
    for each, on one drawn instance with one measured side.

    Each variant is decided, targeted (its own ``target`` label) and recorded as if it ran
    alone; the first violated variant raises. Drawing an instance costs more than deciding
    it (Hypothesis makes hundreds of choices per instance), so a statement with six variants
    that hold runs one property, not six.
    """
    variants = tuple(variants)
    _assume_admissible(statement, variants, instance, (), recorder)
    module = load(statement)
    start = time.perf_counter()
    lhs = module.measured(instance, dps)
    floor = optional(module, "noise_floor")(instance, dps)
    shared = time.perf_counter() - start
    verdicts: dict[str, Verdict] = {}
    for variant in variants:
        start = time.perf_counter()
        verdict = settle(statement, variant, instance, decide(lhs, module.VARIANTS[variant](instance, dps), dps, floor))
        seconds = shared + time.perf_counter() - start
        verdicts[variant] = _judge(statement, variant, instance, verdict, seconds, dps, recorder)
    return verdicts


def _assume_admissible(
    statement: str, variants: tuple[str, ...], instance: Instance, skip: Iterable[str], recorder: Recorder | None
) -> None:
    if violations(statement, instance, skip=skip):
        if recorder is not None:
            for variant in variants:
                recorder.record(statement, variant).filtered += 1
        assume(False)


def _judge(
    statement: str, variant: str, instance: Instance, verdict: Verdict, seconds: float, dps: int,
    recorder: Recorder | None,
) -> Verdict:
    ratio = verdict.ratio
    target(ratio if np.isfinite(ratio) else 1e300, label=f"{statement}:{variant}")
    _note(instance)
    if recorder is not None:
        recorder.record(statement, variant).add(verdict, instance, seconds)
        if recorder.on_example is not None:
            recorder.on_example()
    if verdict.violated:
        raise AssertionError(
            f"{statement} ({variant}) violated at {dps} digits: "
            f"measured {verdict.as_dict()['measured']} "
            f"> bound {verdict.as_dict()['bound']} (ratio {ratio:.6g})"
        )
    return verdict


def property_test(
    statement: str,
    variant: str,
    *,
    bound: Bound | None = None,
    drop: tuple[str, ...] = (),
    settings: Settings | None = None,
    examples: Iterable[Instance] = (),
    dps: int = PROPERTY_DPS,
    recorder: Recorder | None = RECORDER,
    on_failure: Callable[[Instance, Verdict], None] | None = None,
) -> Callable[[], None]:
    """A Hypothesis test of ``statement``/``variant`` over its instance strategy.

    ``examples`` are pinned with ``@example`` (counterexamples of findings);
    ``on_failure`` sees every violating instance (the last one it sees is the
    shrunk counterexample Hypothesis reports).
    """
    strategy = instance_strategy(statement, drop)

    def body(instance: Instance) -> None:
        try:
            check_property(
                statement, variant, instance, dps=dps, bound=bound, skip=drop, recorder=recorder
            )
        except AssertionError:
            if on_failure is not None:
                on_failure(instance, evaluate(statement, variant, instance, dps=dps, bound=bound))
            raise

    test = given(strategy)(body)
    for instance in examples:
        test = example(instance)(test)
    if settings is not None:
        test = settings(test)
    test.__name__ = f"property_{statement}_{variant}".replace("-", "_")
    return test


__all__ = [
    "DEFAULT_DPS",
    "PROPERTY_DPS",
    "RECORDER",
    "Record",
    "Recorder",
    "check_property",
    "check_variants",
    "evaluate",
    "property_test",
    "settle",
]
