"""Lemma 12's fraction families for the branch-and-bound (:mod:`sltcheck.certify`); Lemma 13 reuses them.

The family ``d1-fraction``: d1 = d2 = d_K = d_V = H = 1 (Lemma 13: one FC layer, L = 1), full mask, a
sequence of ANY length with two token values, a fraction pi of the tokens at the query's value x_1 = alpha u_1
and 1 - pi at x_2 = alpha u_2, each value with its own perturbation x'_k = x_k + eps_max s_k. The softmax of
such a sequence weighs the two values by pi and 1 - pi (:mod:`sltcheck.harness.sequence`), so the family is
the box

    alpha in [1, ALPHA_HIGH], eps_max = 10^e (e in [LOG_EPS_LOW, LOG_EPS_HIGH]), a = W_Q W_K in [-1, 1],
    u_1 in [0, 1], u_2 in [-1, 1], pi in [1 / LONGEST, 1 - 1 / LONGEST],

with the symmetries of :mod:`sltcheck.statements.lemma12.token_families` removed the same way (W_V W_O = 1,
Lemma 13's +-1, w = 1, x -> -x; the other value's row is the point with the values swapped, pi -> 1 - pi).
Every sequence of at most LONGEST tokens with two values is a point of it (pi = n / T), and every point with
rational pi is a sequence (of its denominator's length); its closure is what the branch-and-bound bounds, so a certified
bracket of sup measured / bound over the box brackets the supremum over all such sequences. That supremum
is the closed form of :mod:`sltcheck.statements.lemma12.worst_case` (two values at +-alpha, pi the
irrational 5 / (3 e^2 + 5) at alpha = 1): certifying the family certifies the closed form over every
fraction, the ones no sequence realises included.

Enclosure: Lemma 12's family's (the mean-value form, eps divided out exactly) with the weighted softmax
sigma_k = 1 / (1 + sum_{m != k} (n_m / n_k) exp(a x_1 (x_m - x_k))). At a point (a lower bound) the
perturbation direction s is clipped into the range |x'_k| <= alpha leaves, as there. ``instance`` realises
a point as the sequence of at most LONGEST tokens whose fraction comes closest to pi
(:func:`sltcheck.harness.sequence.counts`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from sltcheck.certify import Dimension, Family, Ratio
from sltcheck.harness.sequence import LONGEST, counts
from sltcheck.numerics.balls import Backend
from sltcheck.statements.lemma12.token_families import (
    ALPHA_HIGH,
    LOG_EPS_HIGH,
    LOG_EPS_LOW,
    derivative_parts,
    direction_shift,
    directions,
    output_sign,
    perturbed,
)

NAME = "d1-fraction"
EXTREMAL = "d1-fraction-pm"  # the values at +-alpha (u_1 = 1, u_2 = -1): the extremal structure, 4 dimensions
LEAST = 1.0 / LONGEST


def dimensions(values_free: bool = True) -> tuple[Dimension, ...]:
    values = (Dimension("u1", 0.0, 1.0), Dimension("u2", -1.0, 1.0)) if values_free else ()
    return (Dimension("alpha", 1.0, ALPHA_HIGH), Dimension("log10_eps", LOG_EPS_LOW, LOG_EPS_HIGH),
            Dimension("a", -1.0, 1.0), *values, Dimension("pi", LEAST, 1.0 - LEAST))


def _with_values(arith: Backend, values: dict[str, Any]) -> dict[str, Any]:
    """The values at +-alpha where the family fixes them."""
    return values if "u1" in values else {**values, "u1": arith.interval(1.0, 1.0), "u2": arith.interval(-1.0, -1.0)}


def enclosure(with_block: bool, factor: float, eps_weight: float,
              free: bool = True) -> Callable[[Backend, dict[str, Any]], list[Ratio]]:
    """Candidates, one per direction s of the two values: (difference / eps, bound / eps)."""

    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        values = _with_values(arith, values)
        eps, alpha = arith.power_of_ten(values["log10_eps"]), values["alpha"]
        is_point = all(arith.is_point(v) for v in values.values())
        weights = [values["pi"], 1 - values["pi"]]
        over_eps = factor * (4 * alpha * alpha * arith.exprel(4 * alpha * eps) + eps_weight)
        # with the values free, s -> -s is x -> -x (u_1 >= 0 leaves room either way); at +-alpha exactly the
        # clipping tells the two apart, so every sign is enumerated
        signs = directions(2) if free else [(s1, s2) for s1 in (1.0, -1.0) for s2 in (1.0, -1.0)]
        parts = None if is_point else derivative_parts(arith, values, eps, arith.interval(-1.0, 1.0), 2, weights)
        return [(shift, over_eps) for s in signs
                for shift in direction_shift(arith, values, eps, s, is_point, with_block, weights, parts)]

    return enclose


def instance_maker(with_block: bool, free: bool = True) -> Callable[[dict[str, float], int], dict[str, Any]]:
    signs = directions(2) if free else [(s1, s2) for s1 in (1.0, -1.0) for s2 in (1.0, -1.0)]

    def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
        alpha, eps = point["alpha"], 10.0 ** point["log10_eps"]
        n = counts(np.array([point["pi"], 1.0 - point["pi"]]))
        values = [alpha * point.get("u1", 1.0), alpha * point.get("u2", -1.0)]
        direction, c = output_sign(choice, with_block)
        s = signs[direction]
        X = np.repeat(np.array(values), n)
        Xp = np.repeat(np.array([perturbed(x, eps * sk, eps, alpha) for x, sk in zip(values, s, strict=True)]), n)
        T = int(n.sum())
        one = np.ones((1, 1, 1))
        out: dict[str, Any] = {
            "alpha": alpha, "d1": 1, "d2": 1, "eps_max": eps, "X": X.reshape(T, 1), "X_perturbed": Xp.reshape(T, 1),
            "mask": np.ones((T, T), dtype=np.int8), "W_Q": np.full((1, 1, 1), point["a"]), "W_K": one.copy(),
            "W_V": one.copy(), "W_O": np.full((1, 1, 1), c)}
        if with_block:
            out["fc_layers"] = [np.ones((1, 1))]
        return out

    return instance


def contains_maker(with_block: bool, statement: str, values_free: bool = True) -> Callable[[dict[str, Any]], bool]:
    """Whether an instance (a search seed) lies in the family: d = H = 1 (L = 1), full mask, every assumption,
    alpha and eps_max in range, and its tokens taking two values (x, x'), each at least 1 / LONGEST of them
    (and, without ``values_free``, x = +-alpha exactly)."""

    def contains(instance: dict[str, Any]) -> bool:
        from sltcheck.assumptions import violations

        X, Xp = np.asarray(instance["X"]), np.asarray(instance["X_perturbed"])
        if X.ndim != 2 or X.shape[1] != 1 or not all(np.asarray(instance[k]).shape == (1, 1, 1)
                                                     for k in ("W_Q", "W_K", "W_V", "W_O")):
            return False
        if with_block and [np.asarray(w).shape for w in instance.get("fc_layers", [])] != [(1, 1)]:
            return False
        pairs, share = np.unique(np.hstack([X, Xp]), axis=0, return_counts=True)
        if not values_free and not bool(np.all(np.abs(X) == float(instance["alpha"]))):
            return False
        eps = float(instance["eps_max"])
        return (len(pairs) == 2 and bool(np.all(share / share.sum() >= LEAST))
                and bool(np.all(np.asarray(instance["mask"]) == 1))
                and 1.0 <= float(instance["alpha"]) <= ALPHA_HIGH and eps > 0
                and LOG_EPS_LOW <= math.log10(eps) <= LOG_EPS_HIGH and not violations(statement, instance))

    return contains


def search_fixed(with_block: bool) -> dict[str, Any]:
    """The worst-case search's structured shape with two token values at d = H = 1 (L = 1)."""
    return {"d1": 1, "d2": 1, "H": 1, "dK": 1, "dV": 1, "atoms": 2, **({"L": 1} if with_block else {})}


def fraction_families(statement: str, with_block: bool, variants: dict[str, tuple[float, float]],
                      expected: dict[str, str] | None = None,
                      known: dict[str, float] | None = None) -> list[Family]:
    """Per variant (name -> (factor, eps weight) of the bound, as in Lemma 12's families) two families:
    ``d1-fraction`` (both values free) and ``d1-fraction-pm`` (the values at +-alpha, the extremal
    structure of the closed form); ``expected``: the known answer per variant (default "held"),
    ``known``: the closed-form supremum of measured / bound over the family's closure (eps -> 0)."""
    return [Family(
        statement=statement, name=NAME if free else EXTREMAL, variant=variant, dimensions=dimensions(free),
        enclose=enclosure(with_block, factor, eps_weight, free), instance=instance_maker(with_block, free),
        contains=contains_maker(with_block, statement, free), search_fixed=search_fixed(with_block),
        description=f"d = H = 1{', L = 1' if with_block else ''}, two token values"
                    f"{'' if free else ' at +-alpha'} at any fraction in "
                    f"[1/{LONGEST}, 1 - 1/{LONGEST}] (any T), full mask, alpha in [1, {ALPHA_HIGH}], "
                    f"eps_max in [1e{LOG_EPS_LOW:+.0f}, 1e{LOG_EPS_HIGH:+.0f}]",
        expected=(expected or {}).get(variant, "held"), known_supremum=(known or {}).get(variant), vectorised=True)
        for free in (True, False) for variant, (factor, eps_weight) in variants.items()]


__all__ = ["EXTREMAL", "NAME", "contains_maker", "dimensions", "enclosure", "fraction_families", "instance_maker",
           "search_fixed"]
