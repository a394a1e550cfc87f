"""How hard the worst-case search looks: its :class:`~sltcheck.harness.budget.Budget` per profile
(``BUDGETS``, documented in ``docs/explanation/search.md``), scaled for a statement's cost, and the
evaluations a search plans.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sltcheck.contract import optional
from sltcheck.harness import gradients as gradient_backends
from sltcheck.harness import sequence
from sltcheck.harness.instances import module as instance_module


@dataclass(frozen=True)
class Budget:
    """How hard :func:`~sltcheck.harness.search.search_worst_case` looks (per statement and variant)."""

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


BUDGETS: dict[str, Budget] = {
    "ci": Budget(shapes=16, starts=48, climbs=10, climb_evaluations=600, polish_evaluations=300,
                 gradient_climbs=40, gradient_climb_evaluations=100),
    "dev": Budget(shapes=48, starts=96, climbs=16, climb_evaluations=1000, polish_evaluations=600,
                  gradient_climbs=64, gradient_climb_evaluations=150),
    "deep": Budget(shapes=160, starts=200, climbs=32, climb_evaluations=3000, polish_evaluations=2000,
                   gradient_climbs=256, gradient_climb_evaluations=600),
}


def budget_for(profile: str | Budget) -> Budget:
    """The budget of a profile's name (one of ``BUDGETS``), or ``profile`` itself where it is one."""
    if isinstance(profile, Budget):
        return profile
    if profile not in BUDGETS:
        raise ValueError(f"profile must be one of {', '.join(BUDGETS)}, got {profile!r}")
    return BUDGETS[profile]


def planned_evaluations(statement: str, profile: str | Budget = "ci", variant: str | None = None) -> int:
    """About how many float64 evaluations one search of ``statement`` (``variant``: climbing by
    autograd where its differentiable module covers it, with that module's ``AUTOGRAD_COST``)
    makes at ``profile``'s budget (starts, climbs, hops, the structured shapes' fractions and polish at their caps;
    finite-difference rounds can overshoot a cap): the total of a progress bar, never a limit."""
    module = instance_module(statement)
    budget = scaled(budget_for(profile), optional(module, "SEARCH_COST"))
    torch_side = gradient_backends.differentiable(statement, variant) if variant and budget.gradient_climbs else None
    if torch_side is not None:
        budget = autograd_scaled(budget, optional(torch_side, "AUTOGRAD_COST"))
    climbs, evaluations = budget.climbing(torch_side is not None)
    short = max(50, evaluations // 4)
    searched = sequence.shapes(module)[: budget.shapes]
    found = sequence.structure(module)
    enumerated = 0 if found is None else sum(len(sequence.fraction_candidates(shape["atoms"], found.longest)) + 1
                                             for shape in searched if sequence.structured(shape))
    return (len(searched) * budget.starts + climbs * short + max(1, climbs // 4) * evaluations
            + max(1, climbs // 3) * short + enumerated + budget.polish_evaluations)


def scaled(budget: Budget, cost: float) -> Budget:
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


def autograd_scaled(budget: Budget, cost: float) -> Budget:
    """``budget`` with its gradient climbs divided by ``cost``, a differentiable module's
    ``AUTOGRAD_COST``: where one value-and-gradient costs that many times the usual (many small
    torch operations against a cheap numpy evaluation) and fewer climbs already reach the
    known suprema, so autograd costs no more time than finite differences did."""
    if cost == 1:
        return budget
    if not cost > 0:
        raise ValueError(f"AUTOGRAD_COST must be > 0, got {cost!r}")
    return replace(budget, gradient_climbs=max(1, round(budget.gradient_climbs / cost)))
