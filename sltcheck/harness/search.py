"""The worst-case search: boundaries first, every parameter moved, inside the assumptions.

:func:`search_worst_case` is the engine every statement uses (``sltcheck check``, the
edge mutants, the search-power benchmark). For one statement and variant it

1. enumerates the small discrete shapes (d1, d2, d_K, d_V, H, T, L, B, ...) from the
   smallest up (the instance module's ``shapes()``), each group of shapes that differ only in T
   followed by its *structured* shapes where the module declares its sequence structure
   (:mod:`sltcheck.harness.sequence`: k distinct tokens with continuous fractions, realised up to
   64 tokens);
2. draws starts at each shape, boundary starts first (``start(shape, rng, on_boundary=True)``:
   alpha at sqrt(max(d1, d2)), tokens on the alpha-sphere, weights of spectral norm 1 in
   sign patterns, perturbations at full length, eps tiny and largest), then random ones;
3. climbs the best starts with gradients (L-BFGS-B on measured/bound in float64 over every
   continuous field in ``FREE``, alpha and eps_max included, a structured shape's fractions too),
   every trial point mapped through the module's ``project`` (and into its ``limits``: eps_max no
   smaller than float64 resolves) so the assumptions hold at every evaluated point: all a short
   way, the best quarter to convergence, then a few basin-hopping jumps from the best point; a
   share of the climbs (``STRUCTURED_SHARE``) goes to structured shapes.
   Gradients are exact (torch autograd through a torch version of the projection,
   :mod:`sltcheck.harness.gradients`) where the statement has a ``differentiable.py`` covering
   the bound and torch imports; then more starts climb (``Budget.gradient_climbs``), spread over
   more shapes. Otherwise forward finite differences. A module may hold fields relative to others
   in the climbs (``RELATIVE``, e.g. tokens in units of alpha) and bound its scalar fields
   (``limits``). Every point a climb returns is projected, realised (a structured shape's weighted
   instance as the sequence it stands for) and evaluated by the statement's numpy code, whichever
   backend steered it;
4. tries the best point of each structured shape at every fraction a realisation can have (its
   tokens and weights held), then polishes the best derivative-free (Powell). Throughout, ratios are compared at
   ``climbing.RANK_DIGITS`` significant digits, ties kept in the order the points were made, so a
   rounding of one CPU's kernels does not decide which start climbs or which point is kept;
5. decides the best realised instance in mpmath; a violation is replayed at twice the digits and,
   where :mod:`sltcheck.harness.interval_verdict` covers the statement, certified in interval arithmetic.

Each step is one function of :func:`run_search` (the phases: ``_plan`` the budget, backend and
shapes; ``_starts``; ``_climb``; ``_hop``; ``_enumerate_fractions``; ``_polish``; ``_decide``; ``_confirm``) over one
:class:`Plan`; the climbs themselves are :mod:`sltcheck.harness.climbing`. The budget per profile
is ``sltcheck.harness.budget.BUDGETS`` (documented in ``docs/explanation/search.md``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
from scipy import optimize

from sltcheck.assumptions import violations
from sltcheck.contract import optional
from sltcheck.harness import climbing, sequence
from sltcheck.harness import gradients as gradient_backends
from sltcheck.harness.budget import Budget, autograd_scaled, budget_for, scaled
from sltcheck.harness.climbing import ranked
from sltcheck.harness.instances import module as instance_module
from sltcheck.harness.runner import PROPERTY_DPS, evaluate
from sltcheck.numerics.verdict import Verdict
from sltcheck.registry import load
from sltcheck.statement_types import Bound, Instance

# Largest number of free parameters the search takes on (bigger instances are skipped).
MAX_PARAMETERS = 400


@dataclass(frozen=True)
class SearchResult:
    instance: Instance
    ratio: float  # at dps digits
    verdict: Verdict
    start_ratio: float
    evaluations: int


def float_ratio(
    statement: str, variant: str, instance: Instance, bound: Bound | None = None
) -> float:
    """measured/bound in float64 (0 where it cannot be evaluated, or where the measured side is
    below the statement's float64 noise floor: rounding noise must not steer the search)."""
    module = load(statement)
    rhs = bound if bound is not None else module.VARIANTS[variant]
    try:
        with np.errstate(all="ignore"):
            m, b = float(module.measured(instance, None)), float(rhs(instance, None))
            floor = float(optional(module, "noise_floor")(instance, None))
    except (ValueError, ZeroDivisionError, FloatingPointError, OverflowError):
        return 0.0
    if not (np.isfinite(m) and np.isfinite(b)) or b <= 0 or m <= floor:
        return 0.0
    return m / b


def local_search(
    statement: str,
    variant: str,
    start: Instance,
    *,
    max_evaluations: int = 400,
    dps: int = PROPERTY_DPS,
    bound: Bound | None = None,
) -> SearchResult | None:
    """Maximise measured/bound from ``start``; ``None`` if ``start`` has too many parameters."""
    module = instance_module(statement)
    free = tuple(key for key in module.FREE if key in start)
    x0 = climbing.flatten(start, free) if free else np.zeros(0)
    if x0.size == 0 or x0.size > MAX_PARAMETERS:
        return None
    start_ratio = float_ratio(statement, variant, module.project(dict(start)), bound)
    count = 0

    def objective(vector: np.ndarray) -> float:
        nonlocal count
        count += 1
        ratio = float_ratio(statement, variant, module.project(climbing.unflatten(start, free, vector)), bound)
        return -ratio

    result = optimize.minimize(
        objective,
        x0,
        method="Powell",
        options={"maxfev": max_evaluations, "xtol": 1e-9, "ftol": 1e-12},
    )
    best = module.project(climbing.unflatten(start, free, np.asarray(result.x)))
    if violations(statement, best) or float_ratio(statement, variant, best, bound) < start_ratio:
        best = module.project(dict(start))
        if violations(statement, best):
            best = dict(start)
    verdict = evaluate(statement, variant, best, dps=dps, bound=bound)
    return SearchResult(best, verdict.ratio, verdict, start_ratio, count)


# Climbed points decided in mpmath, at most, when the best ones were misjudged in float64 (ties at
# the noise floor, or digits lost to cancellation).
FLOOR_RETRIES = 12

# A float64 ratio within this relative distance of its mpmath value was judged right; farther off,
# float64 lost the digits (e.g. source weights 1e20 off their targets, cancelling in pairs) and the
# point ranked on a number that is not its ratio.
FLOAT_AGREEMENT = 1e-6

# With exact gradients, at most 1/GRADIENT_SPREAD of the climbs start from one shape.
GRADIENT_SPREAD = 8

# The share of the climbs that goes to structured shapes (k distinct tokens with fractions), where
# the search has some (sltcheck.harness.sequence).
STRUCTURED_SHARE = 0.25

# Size of a basin-hopping jump, relative to each value (at least 0.1 absolute).
HOP = 0.3


@dataclass(frozen=True)
class WorstCase:
    """The best instance the search found, decided in mpmath."""

    statement: str
    variant: str
    instance: Instance
    verdict: Verdict  # at dps digits
    float_ratio: float
    shape: dict[str, int]
    evaluations: int
    seconds: float
    starts: int
    replay: Verdict | None = None  # a violation re-decided at twice the digits
    certified: str | None = None  # the interval outcome where sltcheck.harness.interval_verdict covers it
    trail: list[float] = field(default_factory=list)  # best float ratio after each climb
    gradients: str = gradient_backends.FINITE_DIFFERENCES  # how the climbs got their gradients

    @property
    def ratio(self) -> float:
        return self.verdict.ratio


def _apply(instance: Instance, fixed: Mapping[str, object]) -> Instance:
    out = dict(instance)
    out.update({k: v for k, v in fixed.items() if k in out})
    return out


def matches(shape: Mapping[str, int], fixed: Mapping[str, object], module: ModuleType | None = None) -> bool:
    """Whether ``shape`` has the sizes ``fixed`` holds. A structured shape (k distinct tokens,
    :mod:`sltcheck.harness.sequence`) is no sequence of a fixed length, nor of fixed tokens or mask."""
    if "atoms" in fixed and not sequence.structured(shape):
        return False
    if sequence.structured(shape):
        found = sequence.structure(module) if module is not None else None
        held = {"T", *(found.token_axes if found else ()), *((found.mask,) if found else ())}
        if held & set(fixed) and fixed.get("atoms") != shape["atoms"]:
            return False
        return all(shape[k] == fixed[k] for k in shape if k in fixed and k != "T")
    return all(shape[k] == fixed[k] for k in shape if k in fixed)


# A point the search keeps: its realised instance's float64 ratio, the index of its shape, the point.
Scored = tuple[float, int, Instance]


@dataclass(frozen=True)
class SearchConfig:
    """One worst-case search: what it looks for and how hard (:func:`search_worst_case`'s parameters,
    documented there; ``fixed`` is held as a dict)."""

    statement: str
    variant: str
    profile: str | Budget = "ci"
    bound: Bound | None = None
    fixed: Mapping[str, object] = field(default_factory=dict)
    seed: int = 0
    dps: int = PROPERTY_DPS
    skip: tuple[str, ...] = ()
    progress: Callable[[], None] | None = None
    gradients: str = "auto"
    twin: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fixed", dict(self.fixed or {}))


def search_worst_case(
    statement: str,
    variant: str,
    *,
    profile: str | Budget = "ci",
    bound: Bound | None = None,
    fixed: Mapping[str, object] | None = None,
    seed: int = 0,
    dps: int = PROPERTY_DPS,
    skip: tuple[str, ...] = (),
    progress: Callable[[], None] | None = None,
    gradients: str = "auto",
    twin: str | None = None,
) -> WorstCase:
    """The largest measured/bound the search finds for ``statement``/``variant``.

    ``bound`` replaces the variant's right-hand side (mutants); ``fixed`` holds fields at
    given values (discrete ones select the shapes, continuous ones such as alpha or
    eps_max are set on every start and not moved); ``skip`` names assumptions not
    checked on the result (mutants that drop one); ``progress`` is called after every
    float64 evaluation (a progress bar's tick); ``gradients`` is ``"auto"`` (torch autograd where
    the statement has a differentiable version of the variant's bound and torch imports, see
    :mod:`sltcheck.harness.gradients`; finite differences otherwise) or ``"finite-differences"``.
    A caller's ``bound`` climbs by autograd only through a torch version named for it: a mutant's
    by its variant name ``mutant:<name>``, any other by ``twin``, the key of the statement's
    differentiable ``BOUNDS`` that computes it (a power case's closed-form ``supremum``); a bound
    given under a variant's own name never borrows that variant's gradients.
    Same seed and gradient backend (recorded in the result), same result.
    (The same search from a :class:`SearchConfig`: :func:`run_search`.)
    """
    return run_search(SearchConfig(statement, variant, profile, bound, fixed or {}, seed, dps, skip, progress,
                                   gradients, twin))


def run_search(config: SearchConfig) -> WorstCase:
    """The search of ``config``, phase by phase: plan, starts, climb, hop, polish, decide, confirm."""
    began = time.perf_counter()
    plan = _plan(config)
    rng = np.random.default_rng(config.seed)
    scored = _starts(plan, rng)
    climbed = _climb(plan, scored)
    best, trail = _best_climbed(plan, scored[0], climbed)
    best = _hop(plan, rng, best, trail)
    best = _enumerate_fractions(plan, best, climbed, trail)
    best = _polish(plan, best)
    verdict, (ratio, index, point) = _decide(plan, best, climbed)
    instance = plan.spaces[index].realise(point)
    replay, certified = _confirm(config, verdict, instance)
    shape = plan.spaces[index].realised_shape(point)
    return WorstCase(config.statement, config.variant, instance, verdict, ratio, shape, plan.evaluations,
                     time.perf_counter() - began, len(scored), replay, certified, trail,
                     gradient_backends.backend_name(plan.torch_side))


@dataclass
class Plan:
    """A search's fixed choices (budget, gradient backend, shapes) and its running count of evaluations."""

    config: SearchConfig
    budget: Budget
    spaces: list[sequence.Space]  # one per shape searched, smallest first
    reserved: frozenset[int]  # the structured shapes' indices (a share of the climbs goes to them)
    torch_side: ModuleType | None  # the differentiable module the climbs take exact gradients from
    named: str | None  # the name of the bound in that module
    evaluations: int = 0

    def climbing(self) -> tuple[int, int, int]:
        """(starts climbed, evaluations of a full climb, evaluations of a short one)."""
        climbs, evaluations = self.budget.climbing(self.torch_side is not None)
        return climbs, evaluations, max(50, evaluations // 4)

    def ratio_of(self, instance: Instance) -> float:
        """One float64 evaluation of measured/bound (counted, and a progress tick)."""
        self.evaluations += 1
        if self.config.progress is not None:
            self.config.progress()
        return float_ratio(self.config.statement, self.config.variant, instance, self.config.bound)

    def ratio_and_gradient(self, space: sequence.Space, template: Instance,
                           vector: np.ndarray) -> tuple[float, np.ndarray]:
        """One value-and-gradient by autograd through the torch projection (counted as one evaluation)."""
        self.evaluations += 1
        if self.config.progress is not None:
            self.config.progress()
        assert self.torch_side is not None
        assert self.named is not None
        return gradient_backends.value_and_gradient(space.torch_side(self.torch_side), self.named, template,
                                                    space.free, vector)

    def admissible(self, instance: Instance) -> bool:
        return not violations(self.config.statement, instance, skip=self.config.skip)

    def settled(self, index: int, point: Instance) -> Scored:
        """A point as the search keeps it: its realised instance's ratio, its shape, the point."""
        return self.ratio_of(self.spaces[index].realise(point)), index, point

    def climb_from(self, index: int, start: Instance, evaluations: int) -> Scored:
        """``start`` climbed in its shape's space (exact gradients where the plan has them), settled."""
        exact = self.ratio_and_gradient if self.torch_side is not None else None
        return self.settled(index, climbing.climb(self.spaces[index], start, self.ratio_of, evaluations, exact))


def _plan(config: SearchConfig) -> Plan:
    """Decides the budget (scaled by the module's ``SEARCH_COST`` and, climbing by autograd, by its
    differentiable module's ``AUTOGRAD_COST``), the gradient backend (a bound given by the caller
    is differentiable only through its named torch twin) and the shapes searched (those ``fixed``
    allows, smallest first, as many as the budget's ``shapes``)."""
    module = instance_module(config.statement)
    budget = scaled(budget_for(config.profile), optional(module, "SEARCH_COST"))
    variant = config.variant
    named = config.twin if config.twin is not None else variant if config.bound is None or variant.startswith(
        "mutant:") else None
    use = named is not None and budget.gradient_climbs > 0
    torch_side = gradient_backends.differentiable(config.statement, named, config.gradients) if use and named else None
    if torch_side is not None:
        budget = autograd_scaled(budget, optional(torch_side, "AUTOGRAD_COST"))
    shapes = [shape for shape in sequence.shapes(module) if matches(shape, config.fixed, module)][: budget.shapes]
    if not shapes:
        raise ValueError(f"fixed={config.fixed!r} matches no shape of {config.statement}")
    spaces = [sequence.space(module, shape, config.fixed) for shape in shapes]
    reserved = frozenset(index for index, shape in enumerate(shapes) if sequence.structured(shape))
    return Plan(config, budget, spaces, reserved, torch_side, named)


def _starts(plan: Plan, rng: np.random.Generator) -> list[Scored]:
    """Every shape's starts (the first half on the boundaries), projected, with their realised
    ratios, best first."""
    scored: list[Scored] = []
    starts = plan.budget.starts
    for index, space in enumerate(plan.spaces):
        for k in range(starts):
            on_boundary = k < (starts + 1) // 2
            start = space.project(space.point(_apply(space.start(rng, on_boundary=on_boundary), plan.config.fixed)))
            scored.append(plan.settled(index, start))
    return sorted(scored, key=_rank)


def _climb(plan: Plan, scored: list[Scored]) -> list[Scored]:
    """Decides which starts climb and how far: the chosen starts (:func:`_choose`) a short way, then
    the best quarter of what they reached on to convergence. Exact gradients make climbs cheap: they
    are spread over more shapes (a start's ratio says little about its basin, and the worst shape
    is not known in advance). Returns every climbed point: the short climbs best first, then the
    long ones in climbing order."""
    climbs, evaluations, short = plan.climbing()
    spread = GRADIENT_SPREAD if plan.torch_side is not None else 2
    climbed = [plan.climb_from(index, start, short) for _, index, start in _choose(scored, climbs, spread,
                                                                                   plan.reserved)]
    climbed.sort(key=_rank)
    for _, index, start in _choose(climbed, max(1, len(climbed) // 4), 1, plan.reserved):
        climbed.append(plan.climb_from(index, start, evaluations))
    return climbed


def _best_climbed(plan: Plan, best: Scored, climbed: list[Scored]) -> tuple[Scored, list[float]]:
    """Decides the best point so far: ``best`` (the best start) or a climbed point above it whose
    realisation is admissible, taken in climbing order; with the trail, the best ratio after each climb."""
    trail = []
    for item in climbed:
        ratio, index, point = item
        if ranked(ratio) > ranked(best[0]) and plan.admissible(plan.spaces[index].realise(point)):
            best = item
        trail.append(best[0])
    return best, trail


def _hop(plan: Plan, rng: np.random.Generator, best: Scored, trail: list[float]) -> Scored:
    """Basin hopping: jump from the best point (every free value moved by up to HOP of its scale,
    at least HOP / 10) and climb a short way again, a third as many times as there were climbs; a
    better admissible point replaces the best (in its shape). Each hop's best ratio goes on ``trail``."""
    climbs, _, short = plan.climbing()
    best_ratio, index, point = best
    space = plan.spaces[index]
    for _ in range(max(1, climbs // 3)):
        x = climbing.flatten(point, space.free)
        jump = x + HOP * np.maximum(np.abs(x), 0.1) * rng.uniform(-1.0, 1.0, x.size)
        ratio, _, hopped = plan.climb_from(index, space.project(climbing.unflatten(point, space.free, jump)), short)
        if ranked(ratio) > ranked(best_ratio) and plan.admissible(space.realise(hopped)):
            best_ratio, point = ratio, hopped
        trail.append(best_ratio)
    return best_ratio, index, point


def _enumerate_fractions(plan: Plan, best: Scored, climbed: list[Scored], trail: list[float]) -> Scored:
    """By construction, not by a climb's luck: the best point of each structured shape tried at every
    fraction a realisation can have (:func:`~sltcheck.harness.climbing.best_fractions`) replaces ``best`` where it ranks
    higher and is admissible. A climb can stop in another basin (Lemma 12 at alpha = sqrt 2 wants one
    token in 43; under torch 2.14.1 a ci climb stopped at 31 of 63)."""
    tops: dict[int, Scored] = {}
    for item in [best, *climbed]:
        if item[1] in plan.reserved and (item[1] not in tops or ranked(item[0]) > ranked(tops[item[1]][0])):
            tops[item[1]] = item
    for index, (_, _, point) in sorted(tops.items()):
        found = climbing.best_fractions(plan.spaces[index], point, plan.ratio_of)
        if found is not None:
            top = plan.settled(index, found)
            if ranked(top[0]) > ranked(best[0]) and plan.admissible(plan.spaces[index].realise(top[2])):
                best = top
        trail.append(best[0])
    return best


def _polish(plan: Plan, best: Scored) -> Scored:
    """Decides whether the derivative-free polish (Powell, ``polish_evaluations``) of the best point
    replaces it: where its ratio is larger and its realisation admissible."""
    best_ratio, index, point = best
    space = plan.spaces[index]
    polished = climbing.polish(space, point, plan.ratio_of, plan.budget.polish_evaluations)
    if polished is not None:
        ratio, _, polished = plan.settled(index, polished)
        if ranked(ratio) > ranked(best_ratio) and plan.admissible(space.realise(polished)):
            return ratio, index, polished
    return best


def _decide(plan: Plan, best: Scored, climbed: list[Scored]) -> tuple[Verdict, Scored]:
    """Decides the best point in mpmath. A float64 ratio can come from rounding noise (a bound
    exactly zero in mpmath, a measured side that is noise) or from cancellation that float64 cannot
    resolve: such points are not worst cases, so the next best climbed points (FLOOR_RETRIES at
    most) are decided instead, until one is violated or judged right; the largest ratio decided in
    mpmath is kept (a violation first)."""
    config = plan.config
    best_ratio, best_index, best_point = best
    verdict = evaluate(config.statement, config.variant, plan.spaces[best_index].realise(best_point), dps=config.dps,
                       bound=config.bound)
    decided = (verdict, best)
    done = verdict.violated or _judged_right(verdict, best_ratio)
    for item in sorted(climbed, key=_rank)[:FLOOR_RETRIES]:
        if done:
            break
        ratio, index, point = item
        realised = plan.spaces[index].realise(point)
        if point is best_point or not plan.admissible(realised):
            continue
        candidate = evaluate(config.statement, config.variant, realised, dps=config.dps, bound=config.bound)
        if (candidate.violated, candidate.ratio) > (decided[0].violated, decided[0].ratio):
            decided = (candidate, item)
        done = candidate.violated or _judged_right(candidate, ratio)
    return decided


def _confirm(config: SearchConfig, verdict: Verdict, instance: Instance) -> tuple[Verdict | None, str | None]:
    """A violation's replay at twice the digits and, for the variant's own bound, its interval
    outcome (where the interval enclosures cover it); (None, None) for no violation."""
    if not verdict.violated:
        return None, None
    replay = evaluate(config.statement, config.variant, instance, dps=2 * config.dps, bound=config.bound)
    return replay, certified_outcome(config.statement, config.variant, instance) if config.bound is None else None


def _judged_right(verdict: Verdict, float_ratio: float) -> bool:
    """Whether float64 ranked this point on its ratio: not a tie at the noise floor, and within
    FLOAT_AGREEMENT of the mpmath ratio."""
    if verdict.at_floor:
        return False
    exact = verdict.ratio
    return math.isfinite(exact) and abs(float_ratio - exact) <= FLOAT_AGREEMENT * max(abs(exact), 1e-300)


def _choose(
    scored: list[tuple[float, int, Instance]], climbs: int, spread: int = 2, reserved: frozenset[int] = frozenset()
) -> list[tuple[float, int, Instance]]:
    """The best ``climbs`` starts, at most 1/``spread`` of them from one shape (so several shapes climb);
    where some shapes are ``reserved`` (structured ones, :mod:`sltcheck.harness.sequence`), a share
    STRUCTURED_SHARE of the climbs goes to their best starts: a weighted start's ratio at its first
    fractions says little about the fractions it climbs to, and it would rarely rank among the best."""
    share = min(climbs, math.ceil(climbs * STRUCTURED_SHARE)) if reserved else 0
    first = _best(scored, share, spread, lambda index: index in reserved) if share else []
    rest = _best([item for item in scored if not any(item is c for c in first)], climbs - len(first), spread,
                 lambda index: True)
    return sorted(first + rest, key=_rank)


def _best(scored: list[tuple[float, int, Instance]], climbs: int, spread: int,
          allowed: Callable[[int], bool]) -> list[tuple[float, int, Instance]]:
    per_shape = max(1, math.ceil(climbs / spread))
    chosen: list[tuple[float, int, Instance]] = []
    taken: dict[int, int] = {}
    for item in scored:
        if len(chosen) == climbs:
            break
        if allowed(item[1]) and taken.get(item[1], 0) < per_shape:
            chosen.append(item)
            taken[item[1]] = taken.get(item[1], 0) + 1
    return chosen


def _rank(item: tuple[float, int, Instance]) -> float:
    """Sort key (a stable sort): largest ratio first at RANK_DIGITS, ties in the order made, NaN last."""
    return -ranked(item[0]) if math.isfinite(item[0]) else 0.0


def certified_outcome(statement: str, variant: str, instance: Instance) -> str | None:
    """The interval-arithmetic outcome for ``instance``, or None where certified does not cover it."""
    from sltcheck.harness import interval_verdict as certified

    if variant not in certified.supported().get(statement, ()):
        return None
    return str(certified.evaluate(statement, instance, variant)["outcome"])
