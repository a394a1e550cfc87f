"""Certified verdicts of one instance: "measured <= bound" decided by interval arithmetic, never by rounding.

(What ``sltcheck check`` runs on each worst instance and the runner uses to settle an undecided
verdict; the certification of whole families, the branch-and-bound of ``sltcheck certify``, is
:mod:`sltcheck.certify.run`, which confirms its counterexamples here. This module lives in the harness,
not in ``certify/``, because ``certify/`` seeds its families from the harness's search: the two
packages import each other in one direction only.)

Both sides are enclosed in rigorous numbers of one of the backends of
:mod:`sltcheck.numerics.balls`: arb balls (python-flint, the extra ``certify``; the default where
it imports) or outward-rounded ``mpmath.iv`` intervals (the fallback, always installed); the
result says which ("backend"). Every float64 field of an instance is converted exactly to a
point, every +, -, ``*``, /, exp, sqrt rounds outward, so each computed enclosure contains the exact
real value of the side. Then (:func:`~sltcheck.numerics.enclosures.decide_interval`):

- "holds"     if sup(measured) <= inf(bound): measured <= bound is proved;
- "violated"  if inf(measured) >  sup(bound): measured > bound is proved;
- "undecided" otherwise (the intervals overlap: the sides are too close for this precision,
  or equal as real numbers, as on the instances built in the tests to sit on the bound),
  or when the bound needs a quantity not enclosed here (then ``reason`` says which).

Where the intervals overlap at every precision tried, the instance is evaluated once more in exact
arithmetic (:mod:`sltcheck.numerics.exact`: rationals and square roots, where the instance keeps
its numbers there: a reproduced W_QK, equal tokens, d = 1): with both sides exact the outcome is
decided exactly, "attained" where they are equal (measured <= bound proved, with equality: the
chain attained term by term), "holds" or "violated" otherwise ("decided_by": "exact arithmetic",
"backend": "exact"); where only the measured side's upper end is exact (a minimum enclosed by the
best choice found: Lemma 7's best masks), "holds" when that end is <= the exact bound; where a side
keeps no exact value the outcome stays "undecided".

Each enclosure (``sltcheck.statements.<name>.enclosure``, discovered: ``measured(instance)`` and
``BOUNDS``, variant or mutant -> ``bound(instance)``) mirrors the point evaluation of its
statement module (same formula, same branches), so the verdict is about the same bound the
searches report. The interval arithmetic is :mod:`sltcheck.numerics.intervals`.

What is enclosed: :func:`supported` lists it (``evaluate(statement, instance, variant, dps)``).
Mutants that only drop an assumption (``no-token-norm``, ...) keep a variant's bound: evaluate
them under that variant's name.

Spectral norms (the ``tight``/``sharp`` chains of Theorems 9, 11, 14, and Theorem 10's generic
delta ||A_2|| ||A_1|| + ||W_l|| on a source FC pair that is not single-input) are enclosed by
:func:`sltcheck.numerics.singular_values.spectral_norm`, which needs python-flint on either backend:
without it ``evaluate`` returns "undecided" with a ``reason`` and no bound enclosure.

Lemmas 2, 4, 7: their sides are errors of pruning masks (the construction's, or the best ones
enumerated): the masks are taken from the solver, rounded to {0, 1}, and every error recomputed
from them here in the backend's arithmetic (see each statement's ``enclosure``).

Not enclosed: Theorem 9's mutants (the edge mutants ``supremum-*`` are closed forms of the
worst-case modules).

The "as-stated" variants of Theorems 9, 11, 14 fall back to "as-proven" where eps* >= 1; where
the enclosure of eps* straddles 1 the enclosure is the hull of both
(:func:`~sltcheck.numerics.enclosures.stated_or_proven`).
An outcome left undecided by enclosures that cancelled most of their ``dps`` digits (a source
within 1e-30 of its target, eps_max = 1e-30) is evaluated again at twice the precision, up to
MAX_DPS digits by default ("work_dps" in the result), and no further once doubling the digits
narrows neither enclosure by a digit (Lemma 7's measured side is as wide at every precision).
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

import mpmath

from sltcheck.contract import parts
from sltcheck.numerics.balls import BACKENDS, arb_available
from sltcheck.numerics.balls import backend as pick_backend
from sltcheck.numerics.defaults import CERTIFIED_DPS, GUARD_DIGITS
from sltcheck.numerics.intervals import NotEnclosed, decide_interval, ends, hull, using, width_digits
from sltcheck.numerics.validation import check_dps
from sltcheck.registry import load

DEFAULT_DPS = CERTIFIED_DPS
OUTCOMES = ("holds", "attained", "violated", "undecided")
# An undecided outcome whose two enclosures do not agree to dps - GUARD_DIGITS digits is evaluated
# again at twice the precision, up to MAX_DPS digits (enough for perturbations of 1e-30 at dps 30).
MAX_DPS = 120


@functools.cache
def enclosures() -> dict[str, ModuleType]:
    """Statement -> its ``enclosure`` module, for the statements that have one (paper order)."""
    return parts("enclosure")


def supported() -> dict[str, tuple[str, ...]]:
    """Statement -> the variants (and mutants) whose bound is enclosed."""
    return {name: tuple(module.BOUNDS) for name, module in enclosures().items()}


def default_variant(statement: str) -> str:
    """The statement module's DEFAULT_VARIANT."""
    return str(load(statement).DEFAULT_VARIANT)


def evaluate(statement: str, instance: dict[str, Any], variant: str | None = None,
             dps: int = DEFAULT_DPS, max_dps: int | None = None, backend: str | None = None) -> dict[str, Any]:
    """Enclosures of measured and bound for ``instance`` and the certified outcome.

    ``backend``: "arb" or "mpmath" (None: arb where python-flint imports, else mpmath); the
    result's "backend" says which ran.

    ``variant`` defaults to the statement module's DEFAULT_VARIANT. Where the bound needs a
    quantity not enclosed here (a spectral norm), "bound" is None, the outcome "undecided"
    and "reason" says why (otherwise "reason" is None).

    An undecided outcome whose two enclosures do not agree to ``dps`` - GUARD_DIGITS digits (they
    are blurred: a perturbation of 1e-30 cancels 30 digits) is evaluated again at twice the
    precision, up to ``max_dps`` (default max(dps, MAX_DPS)) digits. "work_dps" is the precision
    of the returned enclosures. A side that is exactly 0 (an unperturbed input) keeps an
    enclosure [0, width] at every precision: such an instance stays undecided, at ``max_dps``.
    """
    found = supported()
    if statement not in found:
        raise ValueError(f"statement must be one of {', '.join(found)} (interval evaluation), got {statement!r}")
    if variant is None:
        variant = default_variant(statement)
    if variant not in found[statement]:
        raise ValueError(f"variant must be one of {', '.join(found[statement])} for {statement}, got {variant!r}")
    dps = check_dps(dps)
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)} or None, got {backend!r}")
    name = pick_backend(backend).name
    limit = max(dps, MAX_DPS) if max_dps is None else check_dps(max_dps)
    work, result = dps, _evaluate_at(statement, instance, variant, dps, name)
    while result["outcome"] == "undecided" and result["reason"] is None and work < limit:
        if width_digits(hull([result["measured"], result["bound"]])) >= dps - GUARD_DIGITS:
            break  # the sides agree to the digits asked for: close, not blurred
        before = result
        work = min(limit, 2 * work)
        result = _evaluate_at(statement, instance, variant, work, name)
        if not any(result[k] >= before[k] + 1 for k in ("measured_digits", "bound_digits")):
            break  # more digits did not narrow the enclosures: their width is not rounding (Lemma 7's
            # measured side is a float64 enumeration's rounding bound wide at every precision)
    if result["outcome"] == "undecided" and result["reason"] is None and arb_available():
        settled = _evaluate_exactly(statement, instance, variant, dps)
        if settled is not None:
            return {"dps": dps, "backend": "exact", **settled}
    return {"dps": dps, "backend": name, "decided_by": "interval", **result}


def _evaluate_exactly(statement: str, instance: dict[str, Any], variant: str, dps: int) -> dict[str, Any] | None:
    """Both sides in exact arithmetic where the instance keeps exact values (see the module
    docstring): the outcome decided exactly, else None (a side has no exact value here)."""
    with using("exact", dps):
        module = enclosures()[statement]
        try:
            m, b = module.measured(instance), module.BOUNDS[variant](instance)
        except NotEnclosed:
            return None
    if b.value is None or m.high is None:
        return None
    if m.value is None:  # only measured's upper end is exact (a minimum enclosed by its best choice)
        if m.high.compare(b.value) > 0:
            return None
        outcome = "holds"
    else:
        order = m.value.compare(b.value)
        outcome = "holds" if order < 0 else "attained" if order == 0 else "violated"
    return {"statement": statement, "variant": variant, "work_dps": dps, "measured": m.ball, "bound": b.ball,
            "outcome": outcome, "certified": True, "reason": None, "decided_by": "exact arithmetic",
            "measured_digits": float("inf"), "bound_digits": float("inf")}


def _evaluate_at(statement: str, instance: dict[str, Any], variant: str, work: int, backend: str) -> dict[str, Any]:
    reason = None
    # Not precision.interval_arithmetic: the enclosures make their numbers themselves (intervals.num,
    # ...), and the solvers that choose Lemma 2/4/7's masks must run in ordinary arithmetic.
    with using(backend, work):
        module = enclosures()[statement]
        m = module.measured(instance)
        try:
            b = module.BOUNDS[variant](instance)
        except NotEnclosed as why:
            b, reason = None, str(why)
        outcome = "undecided" if b is None else decide_interval(m, b)
    return {"statement": statement, "variant": variant, "work_dps": work, "measured": m, "bound": b,
            "outcome": outcome, "certified": outcome != "undecided", "reason": reason,
            "measured_digits": width_digits(m), "bound_digits": None if b is None else width_digits(b)}


def as_dict(result: dict[str, Any]) -> dict[str, Any]:
    """JSON-ready: intervals as [low, high] strings (20 digits, outward); a missing bound as None."""
    def pair(x: Any) -> list[str] | None:
        if x is None:
            return None
        lo, hi = ends(x)
        return [mpmath.nstr(lo, 20), mpmath.nstr(hi, 20)]  # display only (nstr rounds to nearest)

    out = {k: v for k, v in result.items() if k not in ("measured", "bound")}
    out["measured_interval"] = pair(result["measured"])
    out["bound_interval"] = pair(result["bound"])
    return out
