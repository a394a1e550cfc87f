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
   every trial point mapped through the module's ``project`` so the assumptions hold at every
   evaluated point: all a short way, the best quarter to convergence, then a few basin-hopping
   jumps from the best point; a share of the climbs (``STRUCTURED_SHARE``) goes to structured shapes.
   Gradients are exact (torch autograd through a torch version of the projection,
   :mod:`sltcheck.harness.gradients`) where the statement has a ``differentiable.py`` covering
   the bound and torch imports; then more starts climb (``Budget.gradient_climbs``), spread over
   more shapes. Otherwise forward finite differences. A module may hold fields relative to others
   in the climbs (``RELATIVE``, e.g. tokens in units of alpha) and bound its scalar fields
   (``limits``). Every point a climb returns is projected, realised (a structured shape's weighted
   instance as the sequence it stands for) and evaluated by the statement's numpy code, whichever
   backend steered it;
4. polishes the best derivative-free (Powell);
5. decides the best realised instance in mpmath; a violation is replayed at twice the digits and,
   where :mod:`sltcheck.certified` covers the statement, certified in interval arithmetic.

The budget per profile is ``BUDGETS`` (documented in ``docs/explanation/search.md``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import ModuleType

import numpy as np
from scipy import optimize

from sltcheck.assumptions import violations
from sltcheck.harness import gradients as gradient_backends
from sltcheck.harness import sequence
from sltcheck.harness.instances import module as instance_module
from sltcheck.harness.runner import PROPERTY_DPS, evaluate
from sltcheck.numerics.verdict import Verdict
from sltcheck.statement_types import Bound, Instance
from sltcheck.statements import load
from sltcheck.statements.contract import optional

# Largest number of free parameters the search takes on (bigger instances are skipped).
MAX_PARAMETERS = 400


@dataclass(frozen=True)
class SearchResult:
    instance: Instance
    ratio: float  # at dps digits
    verdict: Verdict
    start_ratio: float
    evaluations: int


def _parts(value: object) -> list[np.ndarray]:
    """A field as float arrays: a tuple of matrices (FC layers) gives one array each."""
    if isinstance(value, tuple | list):
        return [np.asarray(v, dtype=np.float64) for v in value]
    return [np.asarray(value, dtype=np.float64)]


def _flatten(instance: Instance, free: tuple[str, ...]) -> np.ndarray:
    chunks = [np.ravel(part) for key in free for part in _parts(instance[key])]
    return np.concatenate(chunks) if chunks else np.zeros(0)


def _unflatten(template: Instance, free: tuple[str, ...], vector: np.ndarray) -> Instance:
    out = dict(template)
    offset = 0
    for key in free:
        parts = []
        for value in _parts(template[key]):
            chunk = vector[offset : offset + value.size].reshape(value.shape)
            parts.append(float(chunk) if value.ndim == 0 else chunk.copy())
            offset += value.size
        out[key] = tuple(parts) if isinstance(template[key], tuple | list) else parts[0]
    return out


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
    x0 = _flatten(start, free) if free else np.zeros(0)
    if x0.size == 0 or x0.size > MAX_PARAMETERS:
        return None
    start_ratio = float_ratio(statement, variant, module.project(dict(start)), bound)
    count = 0

    def objective(vector: np.ndarray) -> float:
        nonlocal count
        count += 1
        ratio = float_ratio(statement, variant, module.project(_unflatten(start, free, vector)), bound)
        return -ratio

    result = optimize.minimize(
        objective,
        x0,
        method="Powell",
        options={"maxfev": max_evaluations, "xtol": 1e-9, "ftol": 1e-12},
    )
    best = module.project(_unflatten(start, free, np.asarray(result.x)))
    if violations(statement, best) or float_ratio(statement, variant, best, bound) < start_ratio:
        best = module.project(dict(start))
        if violations(statement, best):
            best = dict(start)
    verdict = evaluate(statement, variant, best, dps=dps, bound=bound)
    return SearchResult(best, verdict.ratio, verdict, start_ratio, count)


@dataclass(frozen=True)
class Budget:
    """How hard :func:`search_worst_case` looks (per statement and variant)."""

    shapes: int  # discrete shapes tried, smallest first
    starts: int  # starts per shape, the first half on the boundaries
    climbs: int  # best starts climbed with gradients
    climb_evaluations: int  # float64 evaluations per climb
    polish_evaluations: int  # Powell evaluations on the best point
    # With exact gradients (torch autograd, sltcheck.harness.gradients) one evaluation gives the
    # whole gradient for the cost of a few float64 evaluations, so more starts climb, each further.
    # A budget with gradient_climbs = 0 climbs by finite differences only (so a budget written for
    # them, e.g. certify's seeding search, keeps its behaviour).
    gradient_climbs: int = 0  # best starts climbed
    gradient_climb_evaluations: int = 0  # value-and-gradient evaluations per climb (0: as ``climb_evaluations``)

    def climbing(self, exact: bool) -> tuple[int, int]:
        """(starts climbed, evaluations per climb) for the gradient backend in use."""
        if exact:
            return self.gradient_climbs, self.gradient_climb_evaluations or self.climb_evaluations
        return self.climbs, self.climb_evaluations


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

BUDGETS: dict[str, Budget] = {
    "ci": Budget(shapes=16, starts=48, climbs=10, climb_evaluations=600, polish_evaluations=300,
                 gradient_climbs=40, gradient_climb_evaluations=100),
    "dev": Budget(shapes=48, starts=96, climbs=16, climb_evaluations=1000, polish_evaluations=600,
                  gradient_climbs=64, gradient_climb_evaluations=150),
    "deep": Budget(shapes=160, starts=200, climbs=32, climb_evaluations=3000, polish_evaluations=2000,
                   gradient_climbs=256, gradient_climb_evaluations=600),
}


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
    certified: str | None = None  # the interval outcome where sltcheck.certified covers it
    trail: list[float] = field(default_factory=list)  # best float ratio after each climb
    gradients: str = gradient_backends.FINITE_DIFFERENCES  # how the climbs got their gradients

    @property
    def ratio(self) -> float:
        return self.verdict.ratio


def budget_for(profile: str | Budget) -> Budget:
    if isinstance(profile, Budget):
        return profile
    if profile not in BUDGETS:
        raise ValueError(f"profile must be one of {', '.join(BUDGETS)}, got {profile!r}")
    return BUDGETS[profile]


def planned_evaluations(statement: str, profile: str | Budget = "ci", variant: str | None = None) -> int:
    """About how many float64 evaluations one search of ``statement`` (``variant``: climbing by
    autograd where its differentiable module covers it, with that module's ``AUTOGRAD_COST``)
    makes at ``profile``'s budget (starts, climbs, hops and polish at their caps;
    finite-difference rounds can overshoot a cap): the total of a progress bar, never a limit."""
    module = instance_module(statement)
    budget = _scaled(budget_for(profile), optional(module, "SEARCH_COST"))
    torch_side = gradient_backends.differentiable(statement, variant) if variant and budget.gradient_climbs else None
    if torch_side is not None:
        budget = _autograd_scaled(budget, optional(torch_side, "AUTOGRAD_COST"))
    climbs, evaluations = budget.climbing(torch_side is not None)
    short = max(50, evaluations // 4)
    shapes = min(budget.shapes, len(sequence.shapes(module)))
    return (shapes * budget.starts + climbs * short + max(1, climbs // 4) * evaluations
            + max(1, climbs // 3) * short + budget.polish_evaluations)


def _scaled(budget: Budget, cost: float) -> Budget:
    """``budget`` for a statement whose one evaluation costs ``cost`` ordinary ones (an
    instance module's ``SEARCH_COST``, e.g. where every evaluation solves subset sums)."""
    if cost == 1:
        return budget
    if not cost > 0:
        raise ValueError(f"SEARCH_COST must be > 0, got {cost!r}")
    return Budget(budget.shapes, max(2, round(budget.starts / cost)), max(1, round(budget.climbs / cost)),
                  max(50, round(budget.climb_evaluations / cost)), max(20, round(budget.polish_evaluations / cost)),
                  max(1, round(budget.gradient_climbs / cost)) if budget.gradient_climbs else 0,
                  max(50, round(budget.gradient_climb_evaluations / cost)) if budget.gradient_climb_evaluations else 0)


def _autograd_scaled(budget: Budget, cost: float) -> Budget:
    """``budget`` with its gradient climbs divided by ``cost``, a differentiable module's
    ``AUTOGRAD_COST``: where one value-and-gradient costs that many times the usual (many small
    torch operations against a cheap numpy evaluation) and fewer climbs already reach the
    known suprema, so autograd costs no more time than finite differences did."""
    if cost == 1:
        return budget
    if not cost > 0:
        raise ValueError(f"AUTOGRAD_COST must be > 0, got {cost!r}")
    return replace(budget, gradient_climbs=max(1, round(budget.gradient_climbs / cost)))


def _apply(instance: Instance, fixed: Mapping[str, object]) -> Instance:
    out = dict(instance)
    out.update({k: v for k, v in fixed.items() if k in out})
    return out


def _matches(shape: Mapping[str, int], fixed: Mapping[str, object], module: ModuleType | None = None) -> bool:
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
    """
    module = instance_module(statement)
    budget = _scaled(budget_for(profile), optional(module, "SEARCH_COST"))
    fixed = dict(fixed or {})
    rng = np.random.default_rng(seed)
    began = time.perf_counter()
    count = 0

    def ratio_of(instance: Instance) -> float:
        nonlocal count
        count += 1
        if progress is not None:
            progress()
        return float_ratio(statement, variant, instance, bound)

    def admissible(instance: Instance) -> bool:
        return not violations(statement, instance, skip=skip)

    # A bound given by the caller is differentiable only through its named torch twin.
    named = twin if twin is not None else variant if bound is None or variant.startswith("mutant:") else None
    use = named is not None and budget.gradient_climbs > 0
    torch_side = gradient_backends.differentiable(statement, named, gradients) if use and named else None

    def ratio_and_gradient(space: sequence.Space, template: Instance, vector: np.ndarray) -> tuple[float, np.ndarray]:
        nonlocal count
        count += 1
        if progress is not None:
            progress()
        assert torch_side is not None and named is not None
        return gradient_backends.value_and_gradient(space.torch_side(torch_side), named, template, space.free, vector)

    exact = ratio_and_gradient if torch_side is not None else None
    if torch_side is not None:
        budget = _autograd_scaled(budget, optional(torch_side, "AUTOGRAD_COST"))
    shapes = [shape for shape in sequence.shapes(module) if _matches(shape, fixed, module)][: budget.shapes]
    if not shapes:
        raise ValueError(f"fixed={fixed!r} matches no shape of {statement}")
    spaces = [sequence.space(module, shape, fixed) for shape in shapes]

    def settled(index: int, point: Instance) -> tuple[float, int, Instance]:
        """A point as the search keeps it: its realised instance's ratio, its shape, the point."""
        return ratio_of(spaces[index].realise(point)), index, point

    scored = _starts(spaces, budget, rng, fixed, settled)
    reserved = frozenset(index for index, shape in enumerate(shapes) if sequence.structured(shape))
    climbs, climb_evaluations = budget.climbing(exact is not None)
    short = max(50, climb_evaluations // 4)
    # Every chosen start climbs a short way; the best quarter climbs on to convergence.
    # Exact gradients make climbs cheap: they are spread over more shapes (a start's ratio says
    # little about its basin, and the worst shape is not known in advance).
    spread = GRADIENT_SPREAD if exact is not None else 2
    climbed = [settled(index, _climb(spaces[index], start, ratio_of, short, exact))
               for _, index, start in _choose(scored, climbs, spread, reserved)]
    climbed.sort(key=_rank)
    for _, index, start in _choose(climbed, max(1, len(climbed) // 4), 1, reserved):
        climbed.append(settled(index, _climb(spaces[index], start, ratio_of, climb_evaluations, exact)))
    best_ratio, best_index, best = scored[0]
    trail = []
    for ratio, index, point in climbed:
        if ratio > best_ratio and admissible(spaces[index].realise(point)):
            best_ratio, best_index, best = ratio, index, point
        trail.append(best_ratio)
    # Basin hopping: jump from the best point (every free value moved by up to HOP of its
    # scale, at least HOP / 10) and climb again; a better point replaces the best.
    for _ in range(max(1, climbs // 3)):
        space = spaces[best_index]
        x = _flatten(best, space.free)
        jump = x + HOP * np.maximum(np.abs(x), 0.1) * rng.uniform(-1.0, 1.0, x.size)
        ratio, _, point = settled(best_index, _climb(space, space.project(_unflatten(best, space.free, jump)),
                                                     ratio_of, short, exact))
        if ratio > best_ratio and admissible(space.realise(point)):
            best_ratio, best = ratio, point
        trail.append(best_ratio)
    polished = _polish(spaces[best_index], best, ratio_of, budget.polish_evaluations)
    if polished is not None:
        ratio, _, point = settled(best_index, polished)
        if ratio > best_ratio and admissible(spaces[best_index].realise(point)):
            best_ratio, best = ratio, point
    verdict = evaluate(statement, variant, spaces[best_index].realise(best), dps=dps, bound=bound)
    # A float64 ratio can come from rounding noise (a bound exactly zero in mpmath, a measured
    # side that is noise) or from cancellation that float64 cannot resolve: such points are not
    # worst cases, so the next best climbed points are decided instead, and the largest ratio
    # decided in mpmath is kept.
    decided = (verdict, best_ratio, best_index, best)
    done = verdict.violated or _judged_right(verdict, best_ratio)
    for ratio, index, point in sorted(climbed, key=_rank)[:FLOOR_RETRIES]:
        if done:
            break
        realised = spaces[index].realise(point)
        if point is best or not admissible(realised):
            continue
        candidate = evaluate(statement, variant, realised, dps=dps, bound=bound)
        if (candidate.violated, candidate.ratio) > (decided[0].violated, decided[0].ratio):
            decided = (candidate, ratio, index, point)
        done = candidate.violated or _judged_right(candidate, ratio)
    verdict, best_ratio, best_index, best = decided
    instance = spaces[best_index].realise(best)
    replay = certified = None
    if verdict.violated:
        replay = evaluate(statement, variant, instance, dps=2 * dps, bound=bound)
        certified = certified_outcome(statement, variant, instance) if bound is None else None
    return WorstCase(statement, variant, instance, verdict, best_ratio, spaces[best_index].realised_shape(best),
                     count, time.perf_counter() - began, len(scored), replay, certified, trail,
                     gradient_backends.backend_name(torch_side))


def _judged_right(verdict: Verdict, float_ratio: float) -> bool:
    """Whether float64 ranked this point on its ratio: not a tie at the noise floor, and within
    FLOAT_AGREEMENT of the mpmath ratio."""
    if verdict.at_floor:
        return False
    exact = verdict.ratio
    return math.isfinite(exact) and abs(float_ratio - exact) <= FLOAT_AGREEMENT * max(abs(exact), 1e-300)


def _starts(spaces, budget, rng, fixed, settled):
    """Every shape's starts (the first half on the boundaries), projected, with their realised
    ratios, best first."""
    scored: list[tuple[float, int, Instance]] = []
    for index, space in enumerate(spaces):
        for k in range(budget.starts):
            on_boundary = k < (budget.starts + 1) // 2
            start = space.project(space.point(_apply(space.start(rng, on_boundary=on_boundary), fixed)))
            scored.append(settled(index, start))
    return sorted(scored, key=_rank)


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
    """Sort key: largest ratio first (NaN last)."""
    return -item[0] if math.isfinite(item[0]) else 0.0


def _climb(space, start, ratio_of, evaluations, exact=None):
    """L-BFGS-B from ``start`` on -ratio(project(x)) over the space's free fields (a structured
    shape's fractions included: its points are weighted instances): gradients by autograd through
    the torch projection where ``exact(space, template, x) -> (ratio, gradient)`` is given, by finite
    differences otherwise. The point returned is projected by the space's own ``project``; the
    caller evaluates its realisation in numpy, so what the search keeps is admissible whichever
    backend ran. A structured shape climbs its fractions and scalar fields first (half the
    evaluations; the tokens and weights of its starts already sit on the boundaries, where a
    projection's one-sided gradient can stall a climb of every field at once), then everything."""
    if space.found is not None and evaluations >= 2:
        first = tuple(key for key in space.free if key == sequence.MULTIPLICITY or np.ndim(start[key]) == 0)
        if 0 < len(first) < len(space.free):
            start = _climb(replace(space, free=first), start, ratio_of, evaluations // 2, exact)
            evaluations -= evaluations // 2
    free = space.free
    x0 = _flatten(start, free)
    if x0.size == 0:
        return start
    scale = _scales(start, free, x0)
    options = {"maxfun": evaluations, "maxiter": evaluations, "eps": 1e-7, "ftol": 1e-15, "gtol": 1e-12}

    def objective(z: np.ndarray) -> float:
        ratio = ratio_of(space.instance(space.project(_unflatten(start, free, z * scale))))
        return -ratio if math.isfinite(ratio) else 0.0

    def with_gradient(z: np.ndarray) -> tuple[float, np.ndarray]:
        ratio, gradient = exact(space, start, z * scale)
        return (-ratio, -gradient * scale) if math.isfinite(ratio) else (0.0, np.zeros_like(z))

    bounds = [(None if lo is None else min(lo, x) / s, None if hi is None else max(hi, x) / s)
              for (lo, hi), x, s in zip(space.bounds(start), x0, scale, strict=True)]
    if exact is None:
        result = optimize.minimize(objective, x0 / scale, method="L-BFGS-B", bounds=bounds, options=options)
    else:
        result = optimize.minimize(with_gradient, x0 / scale, jac=True, method="L-BFGS-B", bounds=bounds,
                                   options=options)
    return space.project(_unflatten(start, free, np.asarray(result.x) * scale))


def _scales(start: Instance, free: tuple[str, ...], x0: np.ndarray) -> np.ndarray:
    """The climb's variable scales: max(|x|, 1) for array entries; a scalar field (alpha, eps_max)
    relative to itself, so a tiny eps_max (the first-order regime, ratio ~ 1/eps in its slope)
    moves by its own size, not by 1, and the line search does not stall on it."""
    scalar = np.concatenate([np.full(part.size, part.ndim == 0) for key in free for part in _parts(start[key])])
    absolute = np.abs(x0)
    return np.where(scalar & (absolute > 0), absolute, np.maximum(absolute, 1.0))


def _polish(space, start, ratio_of, evaluations):
    x0 = _flatten(start, space.free)
    if x0.size == 0 or evaluations <= 0:
        return None
    result = optimize.minimize(
        lambda z: -ratio_of(space.instance(space.project(_unflatten(start, space.free, z)))), x0, method="Powell",
        options={"maxfev": evaluations, "xtol": 1e-12, "ftol": 1e-15},
    )
    return space.project(_unflatten(start, space.free, np.asarray(result.x)))


def certified_outcome(statement: str, variant: str, instance: Instance) -> str | None:
    """The interval-arithmetic outcome for ``instance``, or None where certified does not cover it."""
    from sltcheck import certified

    if variant not in certified.supported().get(statement, ()):
        return None
    return str(certified.evaluate(statement, instance, variant)["outcome"])
