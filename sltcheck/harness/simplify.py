"""A refuting instance made simpler: fewer significant digits, more zeros, bounded work.

Hypothesis's shrinking is unbounded in time (one mutant shrank for 302 s), so the ci profile
does not shrink refutations. This pass replaces it there (and tidies the shrunk or searched
counterexamples of the other profiles): greedy coordinate-wise simplifications of the fields
the instance module declares free (``FREE``), each kept only while the instance stays
admissible as the refutation requires (:func:`sltcheck.assumptions.violations`) and still
refutes, and only where it makes the instance simpler (:func:`complexity`):

1. candidates from the statement's optional hook ``simplifications(instance)`` in its
   ``instances`` module (structural ones the harness cannot know: fewer tokens, heads ...);
2. ``alpha`` at its least admissible value sqrt(max(d1, d2)), then rounded up;
3. each free array (each matrix of a tuple): all zero; rounded to 1, 2, 3 or 6 significant
   digits (to nearest, else toward zero), the fewest that still refute;
4. then each entry of a small array zeroed.

Candidates are screened in float64 (the search's :func:`~sltcheck.harness.search.float_ratio`,
accepted above 1 + MARGIN, far beyond float64's error); at most ``max_evaluations`` of them
(MAX_EVALUATIONS, or fewer where the instances module sets ``SIMPLIFY_EVALUATIONS``).
The result is then decided once in mpmath, as the harness decides every verdict (and, for a
mutant keeping every assumption, the statement's default variant must still hold there); if
that fails the raw instance is kept. Generic: no statement is known by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_UP, Context, Decimal

import numpy as np

from sltcheck.assumptions import violations
from sltcheck.contract import optional
from sltcheck.harness.boundary import least_alpha
from sltcheck.harness.instances import module as instance_module
from sltcheck.harness.runner import PROPERTY_DPS
from sltcheck.numerics.verdict import Verdict, decide
from sltcheck.registry import load
from sltcheck.statement_types import Bound, Instance

MAX_EVALUATIONS = 48  # float64 candidate evaluations per instance (ci)
MARGIN = 1e-9  # a float64 ratio must exceed 1 + MARGIN for a candidate to be kept
DIGITS = (1, 2, 3, 6)  # significant digits tried, fewest first
SMALL = 8  # arrays with at most this many entries also get each entry zeroed


@dataclass(frozen=True)
class Simplified:
    instance: Instance  # the simplified instance (the raw one when nothing was kept)
    verdict: Verdict | None  # its mpmath verdict (None when nothing was kept)
    evaluations: int  # float64 candidate evaluations
    kept: tuple[str, ...]  # the simplifications kept, in order
    digits: tuple[int, int]  # significant digits in the free fields: raw, simplified
    zeros: tuple[int, int]  # zero entries in the free fields: raw, simplified

    def as_dict(self) -> dict[str, object]:
        return {"evaluations": self.evaluations, "kept": list(self.kept), "digits": list(self.digits),
                "zeros": list(self.zeros)}


def significant_digits(value: float) -> int:
    """Significant decimal digits of the shortest repr of ``value`` (0 for 0)."""
    if value == 0 or not np.isfinite(value):
        return 0
    mantissa = repr(abs(float(value))).split("e")[0].replace(".", "").lstrip("0").rstrip("0")
    return max(1, len(mantissa))


def _parts(value: object) -> list[np.ndarray]:
    if isinstance(value, tuple | list):
        return [np.asarray(v, dtype=np.float64) for v in value]
    return [np.asarray(value, dtype=np.float64)]


def free_fields(statement: str, instance: Instance) -> tuple[str, ...]:
    """The instance module's free float fields present in ``instance``."""
    return tuple(key for key in instance_module(statement).FREE if key in instance)


def complexity(instance: Instance, fields: Sequence[str]) -> tuple[int, int]:
    """(significant digits, nonzero entries) over ``fields``: smaller is simpler."""
    digits = nonzeros = 0
    for key in fields:
        for part in _parts(instance[key]):
            flat = np.ravel(part)
            digits += sum(significant_digits(float(v)) for v in flat)
            nonzeros += int(np.count_nonzero(flat))
    return digits, nonzeros


def rounded(array: np.ndarray, digits: int, rounding: str = ROUND_HALF_EVEN) -> np.ndarray:
    """``array`` with every entry rounded to ``digits`` significant decimal digits."""
    context = Context(prec=digits, rounding=rounding)
    flat = [float(context.plus(Decimal(float(v)))) if np.isfinite(v) else float(v) for v in np.ravel(array)]
    return np.asarray(flat, dtype=np.float64).reshape(np.shape(array))


def _with_part(instance: Instance, key: str, index: int, part: np.ndarray) -> Instance:
    out = dict(instance)
    value = instance[key]
    if isinstance(value, tuple | list):
        parts = list(_parts(value))
        parts[index] = part
        out[key] = tuple(parts)
    elif np.ndim(np.asarray(value)) == 0:
        out[key] = float(part)
    else:
        out[key] = part
    return out


def _alpha_candidates(instance: Instance) -> Iterator[tuple[str, Instance]]:
    alpha = float(instance["alpha"])  # type: ignore[arg-type]
    if "d1" in instance:
        least = least_alpha(int(instance["d1"]), int(instance.get("d2", instance["d1"])))  # type: ignore[call-overload]
        if least < alpha:
            yield "alpha at its least value", {**instance, "alpha": least}
    for digits in DIGITS:
        up = float(rounded(np.asarray(alpha), digits, ROUND_UP))
        if up != alpha:
            yield f"alpha to {digits} digits (up)", {**instance, "alpha": up}


def _part_candidates(instance: Instance, key: str, index: int, part: np.ndarray) -> Iterator[tuple[str, Instance]]:
    """Candidates for one array, simplest first; the caller stops a group at its first success."""
    name = key if len(_parts(instance[key])) == 1 else f"{key}[{index}]"
    if np.any(part != 0):
        yield f"{name} zero", _with_part(instance, key, index, np.zeros_like(part))
    for digits in DIGITS:
        for rounding, how in ((ROUND_HALF_EVEN, "nearest"), (ROUND_DOWN, "toward zero")):
            candidate = rounded(part, digits, rounding)
            if not np.array_equal(candidate, part):
                yield f"{name} to {digits} digits ({how})", _with_part(instance, key, index, candidate)


@dataclass
class _Greedy:
    """The greedy pass's state: the current instance and its complexity, the simplifications kept
    and the float64 evaluations spent."""

    fields: tuple[str, ...]
    refutes: Callable[[Instance], bool]
    admissible: Callable[[Instance], bool]
    max_evaluations: int
    current: Instance
    score: tuple[int, int]
    kept: list[str] = field(default_factory=list)
    count: int = 0

    def attempt(self, label: str, candidate: Instance) -> bool:
        """Decides whether ``candidate`` replaces the current instance: simpler, within the
        evaluations left, admissible and still refuting."""
        new = complexity(candidate, self.fields)
        if new >= self.score or self.count >= self.max_evaluations:
            return False
        self.count += 1
        if not self.admissible(candidate) or not self.refutes(candidate):
            return False
        self.current, self.score = candidate, new
        self.kept.append(label)
        return True

    def first(self, candidates: Iterable[tuple[str, Instance]]) -> bool:
        """Tries ``candidates`` in order up to the first kept one; whether one was."""
        return any(self.attempt(label, candidate) for label, candidate in candidates)


def simplify(
    statement: str,
    instance: Instance,
    refutes: Callable[[Instance], bool],
    admissible: Callable[[Instance], bool],
    *,
    confirm: Callable[[Instance], Verdict | None],
    max_evaluations: int = MAX_EVALUATIONS,
) -> Simplified:
    """Greedy simplification of ``instance`` keeping ``admissible`` and ``refutes`` (float64
    screens); ``confirm`` decides the result at the harness's precision (None: not refuted).
    The passes, in the module doc's order: the statement's hook, alpha, whole arrays, entries."""
    fields = free_fields(statement, instance)
    raw = complexity(instance, fields)
    greedy = _Greedy(fields, refutes, admissible, max_evaluations, dict(instance), raw)
    hook = optional(instance_module(statement), "simplifications")
    while hook is not None and greedy.first(hook(greedy.current)):
        pass  # candidates are built from the current instance: ask again after each success
    if "alpha" in fields:
        greedy.first(_alpha_candidates(greedy.current))
    arrays = [(key, index) for key in fields if key != "alpha" for index in range(len(_parts(greedy.current[key])))]
    for key, index in arrays:  # whole arrays first: the largest simplifications for the fewest evaluations
        greedy.first(_part_candidates(greedy.current, key, index, _parts(greedy.current[key])[index]))
    for key, index in arrays:
        _zero_entries(greedy, key, index)
    zeros = (_zeros(instance, fields), _zeros(greedy.current, fields))
    verdict = confirm(greedy.current) if greedy.kept else None
    if verdict is None:  # nothing kept, or not confirmed at the harness's precision: keep the raw instance
        return Simplified(instance, None, greedy.count, (), (raw[0], raw[0]), (zeros[0], zeros[0]))
    return Simplified(greedy.current, verdict, greedy.count, tuple(greedy.kept), (raw[0], greedy.score[0]), zeros)


def _zero_entries(greedy: _Greedy, key: str, index: int) -> None:
    """Each nonzero entry of a small array (at most SMALL entries) zeroed in turn, kept where it may be."""
    part = _parts(greedy.current[key])[index]
    if part.size > SMALL:
        return
    for flat in np.flatnonzero(np.ravel(part)):
        zeroed = np.ravel(part).copy()
        zeroed[flat] = 0.0
        candidate = _with_part(greedy.current, key, index, zeroed.reshape(part.shape))
        if greedy.attempt(f"{key}[{index}] entry {flat} zero", candidate):
            part = _parts(greedy.current[key])[index]


def _zeros(instance: Instance, fields: Iterable[str]) -> int:
    return sum(int(np.size(part) - np.count_nonzero(part)) for key in fields for part in _parts(instance[key]))


def simplify_refutation(
    statement: str,
    variant: str,
    instance: Instance,
    *,
    bound: Bound | None = None,
    drop: Sequence[str] = (),
    dps: int = PROPERTY_DPS,
    max_evaluations: int | None = None,
) -> Simplified:
    """:func:`simplify` for a mutant's refutation: admissible means breaking exactly a nonempty
    subset of ``drop`` (none when ``drop`` is empty); refuting means ``variant`` (with ``bound``)
    violated; for a mutant keeping every assumption, the statement's default variant must hold."""
    from sltcheck.harness.search import float_ratio

    allowed = set(drop)

    def admissible(candidate: Instance) -> bool:
        broken = {v.assumption.name for v in violations(statement, candidate)}
        return broken <= allowed and (bool(broken) or not allowed)

    def refutes(candidate: Instance) -> bool:
        return float_ratio(statement, variant, candidate, bound) > 1 + MARGIN

    module = load(statement)

    def confirm(candidate: Instance) -> Verdict | None:
        # As runner.evaluate decides, with the measured side computed once for both bounds.
        measured = module.measured(candidate, dps)
        floor = optional(module, "noise_floor")(candidate, dps)
        rhs = bound if bound is not None else module.VARIANTS[variant]
        verdict = decide(measured, rhs(candidate, dps), dps, floor)
        if not verdict.violated:
            return None
        default = module.VARIANTS[module.DEFAULT_VARIANT]
        if not allowed and decide(measured, default(candidate, dps), dps, floor).violated:
            return None
        return verdict

    # A statement whose evaluations are costly (an exact search over masks) may ask for fewer.
    cap = optional(instance_module(statement), "SIMPLIFY_EVALUATIONS")  # None: no cap of its own
    own = MAX_EVALUATIONS if cap is None else min(MAX_EVALUATIONS, cap)
    limit = own if max_evaluations is None else max_evaluations
    return simplify(statement, instance, refutes, admissible, confirm=confirm, max_evaluations=limit)
