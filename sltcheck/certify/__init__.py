"""Proved, not sampled: interval branch-and-bound over whole families of instances.

A *family* (:class:`Family`, one per statement folder's ``family.py``, discovered like the
enclosures) is a small set of instances written as a box over every free parameter left after
the symmetries are removed, with an enclosure of measured / bound over any sub-box. The
branch-and-bound (:mod:`sltcheck.certify.bnb`) encloses that ratio on each box, closes the boxes
it can, splits the others, and stops with one of three verdicts, each proved by the enclosures:

- ``held``: every box's enclosure of measured / bound is <= 1, with a certified upper bound on
  the supremum of the ratio over the family (its certified slack);
- ``counterexample``: an instance of the family that :mod:`sltcheck.harness.interval_verdict` (the statement's own
  interval evaluation, a second code path) proves violated; it replays with ``sltcheck check --replay``;
- ``undecided``: the budget ran out; the fraction of the family's volume proven (<= 1) and the best
  lower and upper bounds on the supremum say how far it got.

A family may rest on another (:attr:`Family.capped_by`): where a reduction proves that a second family's
supremum bounds every instance of the first (Lemma 13's ratio at any eps is at most its derivative's ratio
over the whole cube, the eps -> 0 limit: the mean-value theorem), the second family's certified upper end
caps every box of the first.

Where a bound is attained (bound - measured exactly 0 on a set of the family), no quotient of
enclosures rounded outward closes a box that touches that set; the family's :attr:`Family.arguments`
(:mod:`sltcheck.certify.arguments`: its proof's chain term by term, exact rational arithmetic on
linear pieces) prove such boxes <= 1 instead, and the volume each proves is recorded.

A family's non-box assumptions (a perturbed token that must stay in the alpha-ball) are handled
exactly: :attr:`Family.feasibility` says whether a box lies inside them, outside (dropped: it
holds no instance) or straddles them (kept and split until decided; its enclosure covers a
superset of its instances, so every bound drawn from it stays valid).

Generic code here knows no statement by name.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sltcheck import CallablePackage
from sltcheck.certify.arguments import Argument
from sltcheck.numerics.balls import Backend

INSIDE, OUTSIDE, STRADDLES = "inside", "outside", "straddles"
VERDICTS = ("held", "counterexample", "undecided")
SPLITS = ("widest", "best")

# (numerator, denominator): measured / bound = |numerator| / denominator, denominator > 0 (a family
# may divide both sides by the same positive quantity, e.g. eps_max, to keep them from blurring).
Ratio = tuple[Any, Any]


@dataclass(frozen=True)
class Dimension:
    name: str
    low: float
    high: float


@dataclass(frozen=True)
class Family:
    """A family of instances of ``statement`` under ``variant`` as a box.

    ``enclose(arith, values)`` gets one enclosure per dimension (a sub-box) and returns the
    candidate (numerator, denominator) pairs whose ratios' max encloses measured / bound over it
    (a family may maximise inside, e.g. over the vertices of coordinates in which the measured
    side is convex; ``instance`` then takes the candidate's index). ``instance(point, choice)`` is
    the statement's instance at a point of the box (float64 arrays, satisfying every assumption);
    ``contains(instance)`` says whether a given instance (a search seed) lies in the family;
    ``search_fixed`` holds the fields (shape, mask, ...) that restrict the statement's worst-case search
    (:func:`sltcheck.harness.search.search_worst_case`, its ``fixed``) to the family's shape, so the
    branch-and-bound can seed its lower bound with the search's best instances itself.
    ``arguments`` prove boxes whose quotient reaches above 1 (see :mod:`sltcheck.certify.arguments`);
    the family's docstring says which it uses and why each is sound.
    """

    statement: str
    name: str
    variant: str
    dimensions: tuple[Dimension, ...]
    enclose: Callable[[Backend, dict[str, Any]], Sequence[Ratio]]
    instance: Callable[[dict[str, float], int], dict[str, Any]]
    description: str
    feasibility: Callable[[Backend, dict[str, Any]], str] | None = None
    contains: Callable[[dict[str, Any]], bool] | None = None
    seeds: Callable[[], list[dict[str, Any]]] | None = None
    search_fixed: dict[str, Any] | None = None
    # the known answer (benchmarks): "held" / "counterexample" and the closed-form supremum if any
    expected: str | None = None
    known_supremum: float | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    arguments: tuple[Argument, ...] = ()
    # how a box is halved: "widest" (its widest dimension relative to the family's, one enclosure per
    # half) or "best" (every dimension's halves enclosed, the pair whose larger upper is least kept:
    # dimensions times the cost, for families whose enclosure hardly depends on some dimensions)
    split: str = "widest"
    # what a dimension's width is worth to the enclosure, per box: (lows, highs) of N boxes (N x dimensions
    # arrays) -> N x dimensions factors on the widths relative to the family's (default: 1 each), so
    # "widest" halves the dimension that widens the enclosure most (a direction scaled by the step it moves)
    split_scale: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    # whether ``enclose`` and ``feasibility`` run on the ``arrays`` backend (a batch of boxes at once: no
    # Python branching on an enclosure's ends, ``Backend.where`` and numpy's maximum instead;
    # :func:`feasibility_state` for the state); such a family is certified on it by default
    vectorised: bool = False
    # the key of a family whose certified upper end bounds measured / bound at every instance of this one (its
    # docstring argues why): a box whose own upper is larger takes that family's (certify runs it first, in the
    # same box store, and records the cap it used; verify checks the store still proves it)
    capped_by: str | None = None

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {self.split!r}")
        if self.vectorised and self.arguments:
            raise ValueError(f"family {self.key}: a vectorised family has no arguments (its boxes are enclosed "
                             "in batches; the arguments decide one box at a time)")
        if self.capped_by == self.key:
            raise ValueError(f"family {self.key}: capped_by must name another family, got its own key")

    @property
    def key(self) -> str:
        return f"{self.statement}/{self.name}/{self.variant}"


def feasibility_state(outside: Any, straddles: Any) -> Any:
    """A feasibility's answer from whether the box lies outside and whether it straddles: one of
    INSIDE, OUTSIDE, STRADDLES (an array of them where the flags are arrays: a batch of boxes)."""
    state = np.where(outside, OUTSIDE, np.where(straddles, STRADDLES, INSIDE))
    return state.item() if state.ndim == 0 else state


def default_backend(family: Family, requested: str | None) -> str:
    """The backend a family's boxes are enclosed on: ``requested`` (refused where a family cannot run on
    it), else ``arrays`` for a vectorised family and the default scalar backend for the others."""
    from sltcheck.numerics.balls import backend

    if requested == "arrays" and not family.vectorised:
        raise ValueError(f"backend 'arrays' encloses only vectorised families; {family.key} is not one "
                         "(give --backend arb or mpmath, or leave it out)")
    if requested is not None:
        return requested
    return "arrays" if family.vectorised else backend(None).name


@functools.cache
def families() -> dict[str, Family]:
    """Every family of every statement with a ``family`` module, keyed statement/name/variant."""
    from sltcheck.contract import parts

    found: dict[str, Family] = {}
    for module in parts("family").values():
        for family in module.FAMILIES:
            found[family.key] = family
    check_caps(found)
    return found


def check_caps(found: dict[str, Family]) -> None:
    """Each ``capped_by`` names a family of ``found``, of the same statement and variant (the same bound) and not
    capped itself (a ``ValueError`` naming the family otherwise)."""
    for family in found.values():
        cap = found.get(family.capped_by) if family.capped_by else None
        if family.capped_by and (cap is None or (cap.statement, cap.variant) != (family.statement, family.variant)
                                 or cap.capped_by):
            raise ValueError(f"family {family.key}: capped_by must name an uncapped family of {family.statement} "
                             f"{family.variant}, got {family.capped_by!r}")


def select(only: Sequence[str] | None = None, family: Sequence[str] | None = None) -> list[Family]:
    """The families of the statements ``only`` (all if None) whose name or key is in ``family``."""
    chosen = list(families().values())
    if only:
        known = {f.statement for f in chosen}
        for name in only:
            if name not in known:
                raise ValueError(f"--only must name statements with families ({', '.join(sorted(known))}), "
                                 f"got {name!r}")
        chosen = [f for f in chosen if f.statement in only]
    if family:
        names = {f.name for f in chosen} | {f.key for f in chosen}
        for name in family:
            if name not in names:
                raise ValueError(f"--family must be one of {', '.join(sorted(names))}, got {name!r}")
        chosen = [f for f in chosen if f.name in family or f.key in family]
    return chosen


# Callable as sltcheck.api.certify: the class lives in sltcheck/__init__.py, which loads the API on first
# use (an import of sltcheck.api here would make certify and the API import each other).
sys.modules[__name__].__class__ = CallablePackage
