"""Lemma 12's families at a fixed number of tokens T for the branch-and-bound (:mod:`sltcheck.certify`);
Lemma 13 reuses them (its ``FAMILIES`` are in ``family.py``).

The family ``d1-T{T}``: d1 = d2 = d_K = d_V = H = 1 (Lemma 13: one FC layer, L = 1), T tokens,
full mask, alpha in [1, ALPHA_HIGH] (alpha-large: alpha >= 1), eps_max = 10^e with e in
[LOG_EPS_LOW, LOG_EPS_HIGH]. The free parameters and what is removed (no instance is lost):

- a = W_Q W_K in [-1, 1] (any product of two entries of [-1, 1]; d_K = 1 so no 1/sqrt(d_K));
- W_V W_O = c in [-1, 1]: Lemma 12's left side is |c| times its value at c = 1, so c = 1; Lemma 13's block
  Blk = (1 + w)(c Attn + x) (one layer, 1 + w in [0, 2], so w = 1) is linear in c, its |.| convex, so c is
  one of +-1, each a candidate (``OUTPUT_SIGNS``; the instance's W_O = c);
- the row: with the full mask, permuting the tokens permutes the rows, so the measured row is the first;
- tokens x_k = alpha u_k, u_k in [-1, 1], u_1 >= 0 (x -> -x flips every output: the left side is unchanged);
- perturbed tokens x'_k = x_k + eps_max s_k with s_k in [-1, 1] (exactly |x_k - x'_k| <= eps_max; x -> -x
  takes s to -s); |x'_k| <= alpha is not a box: :func:`feasibility` drops the boxes outside it and keeps the
  straddling ones (their enclosure covers a superset: every bound stays valid);
- tokens 2..T are exchangeable (each with its s_k): u_2 <= ... <= u_T.

Enclosure: the difference Attn(x'_1; X') - Attn(x_1; X) by the mean-value form
(:mod:`sltcheck.numerics.dual`: tokens x_k + [0, 1] eps s_k with derivative s_k), so it is eps times
the enclosed directional derivative, and eps divides out of both sides exactly; the bound over
eps is H sqrt(d1) (4 alpha^2 exprel(4 alpha eps) + w_eps) times its factor, exprel increasing.

Two forms (``families(..., segments=(the T that take the second))``):

- without segments (:func:`enclosure`, Lemma 12's): over a box, every point of the segments lies in
  alpha u_k + eps [-1, 1] whatever s is, so the derivative is linear in s with coefficients enclosed once and
  its sup over s is at a vertex of [-1, 1]^T: s is enumerated, not a dimension. Cheap, and at eps = 0.1 that
  superset alone adds about 0.2 to the ratio: enough where the supremum has room (Lemma 12: <= 0.63);
- with segments (:func:`segment_enclosure`, Lemma 13's at T = 2, 3; as stated at T = 3 its supremum is 0.972):
  the directions s_k are dimensions in [-1, 1], the segments are parametrised exactly (x_k + t eps s_k, one t for
  every token), the integral over t is the mean of the derivative's enclosures on PIECES parts of [0, 1],
  the sup over the box's s at the box's 2^T vertices, and the ratio (difference over bound, one quotient)
  in its centred form in alpha, a and the u_k (:func:`sltcheck.numerics.dual.centred`: second order in the
  box's width). ``segment_scale`` halves a direction only where eps makes it count.

The limit family ``d1-T{T}-limit`` (:func:`limit_families`; Lemma 13 at T = 2, 3) caps the segment family
(``Family.capped_by``): the ratio at eps -> 0, the derivative of row 1's output along a vertex s over
4 alpha^2 + w_eps (times the factor), at every X = alpha u in the cube [-alpha, alpha]^T; dimensions alpha, a
and the u_k only. Its supremum bounds the segment family's ratio at every eps: both ends of the segment
x + t eps s lie in the cube, so all of it does (convex), and the difference over eps is the mean over t of
the derivative along s there, at most the sup over the cube and over s in [-1, 1]^T (a linear form in s: its
|.| is largest at a vertex; s -> -s gives s_1 = 1); the bound over eps is at least its value at eps = 0
(exprel >= 1). The limit family's reductions keep that supremum over the whole cube: X -> -X (the block is
odd, its derivative even) gives u_1 >= 0, and permuting tokens 2..T with their s_k sorts u_2..u_T. So the
segment family is decided by a family with T + 2 dimensions instead of 2T + 3 (its eps and directions gone),
and its own supremum is the limit's up to what eps >= 1e-6 leaves out (the cap is an upper end; the segment
family's lower end is its own instances').
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from sltcheck.certify import Dimension, Family, Ratio, feasibility_state
from sltcheck.numerics.balls import Backend
from sltcheck.numerics.dual import centred, refined

Enclose = Callable[[Backend, dict[str, Any]], list[Ratio]]

ALPHA_HIGH = 2.0
LOG_EPS_LOW, LOG_EPS_HIGH = -6.0, -1.0
SIZES = (2, 3, 4)
# the segments' parts: the difference over eps is the mean of the derivative's enclosures on them (measured on
# Lemma 13 at T = 3 as stated, W_V W_O = 1 alone: 2 parts held in about 90 s, 1 left eps = 0.1 open at 120 s,
# 3 and 4 cost more than they gained)
PIECES = 2


def dimensions(T: int, segments: bool = False) -> tuple[Dimension, ...]:
    """alpha, log10 eps, a, the tokens u_k; with ``segments`` the perturbation's directions s_k too."""
    return (Dimension("alpha", 1.0, ALPHA_HIGH), Dimension("log10_eps", LOG_EPS_LOW, LOG_EPS_HIGH),
            Dimension("a", -1.0, 1.0), Dimension("u1", 0.0, 1.0),
            *(Dimension(f"u{k}", -1.0, 1.0) for k in range(2, T + 1)),
            *((Dimension(f"s{k}", -1.0, 1.0) for k in range(1, T + 1)) if segments else ()))


def directions(T: int) -> list[tuple[float, ...]]:
    """The vertices s of [-1, 1]^T with s_1 = 1 (s -> -s negates the difference: |.| unchanged)."""
    return [(1.0, *rest) for rest in itertools.product((-1.0, 1.0), repeat=T - 1)]


def derivative_parts(arith: Backend, values: dict[str, Any], eps: Any, spread: Any, T: int,
                     weights: Sequence[Any] | None = None,
                     steps: Sequence[Any] | None = None,
                     along: tuple[float, float] = (0.0, 1.0)) -> tuple[Any, list[Any], dict[tuple[int, int], Any]]:
    """What :func:`attention_derivative` shares between directions: x_1, the softmax sigma and, per pair
    k < j, (x_k - x_j, a sigma_k sigma_j (x_k - x_j)), at every X with x_k in alpha u_k + eps ``spread``;
    with ``steps`` (the directions s_k, enclosed) at the points x_k + t eps s_k of the segments themselves,
    one t in ``along`` (a part of [0, 1]) for every token (so x_k - x_j = alpha (u_k - u_j) + t eps (s_k - s_j))."""
    alpha, a = values["alpha"], values["a"]
    u = [values[f"u{k}"] for k in range(1, T + 1)]
    if steps is None:
        x1 = alpha * u[0] + eps * spread
        wiggle = eps * (spread - spread)  # two independent points of the segments

        def diff(k: int, j: int) -> Any:
            return alpha * (u[k] - u[j]) + wiggle
    else:
        moved = eps * arith.interval(*along)
        x1 = alpha * u[0] + moved * steps[0]

        def diff(k: int, j: int) -> Any:
            return alpha * (u[k] - u[j]) + moved * (steps[k] - steps[j])

    if weights is None:
        sigma = [1 / (1 + sum((arith.exp(a * x1 * diff(m, k)) for m in range(T) if m != k), 0)) for k in range(T)]
    else:  # n_m / n_k exp(z) = exp(z + log n_m - log n_k), enclosed at its ends (positive, however wide)
        logs = [arith.log(n) for n in weights]
        sigma = [1 / (1 + sum((arith.increasing(arith.exp, a * x1 * diff(m, k) + logs[m] - logs[k])
                                for m in range(T) if m != k), 0)) for k in range(T)]
    pairs = {}
    for k in range(T):
        for j in range(k + 1, T):
            d = diff(k, j)
            pairs[k, j] = (d, a * sigma[k] * sigma[j] * d)
    return x1, sigma, pairs


def attention_derivative(arith: Backend, values: dict[str, Any], eps: Any, s: Sequence[Any], spread: Any,
                         weights: Sequence[Any] | None = None, parts: Any = None) -> Any:
    """The derivative of Attn(x_1; X) = sum_k sigma_k x_k, sigma = softmax(a x_1 x_k) (W_V W_O = 1),
    along s, at every X with x_k in alpha u_k + eps ``spread`` (the points of the segments):

        sum_k sigma_k s_k + a sum_{k<j} sigma_k sigma_j (x_k - x_j) (s_1 (x_k - x_j) + x_1 (s_k - s_j)),

    (sigma_k' = sigma_k (z_k' - sum_j sigma_j z_j'), z_k = a x_1 x_k), written so that each
    difference x_k - x_j = alpha (u_k - u_j) + eps (spread - spread) and each
    sigma_k = 1 / (1 + sum_{m != k} exp(a x_1 (x_m - x_k))) is enclosed on its own. ``weights`` (token k
    counted n_k times, :mod:`sltcheck.harness.sequence`): sigma_k = 1 / (1 + sum_{m != k} (n_m / n_k)
    exp(a x_1 (x_m - x_k))), the same formula for the weighted softmax. ``parts``: what
    :func:`derivative_parts` gives at the same ``spread`` (computed once for every direction of a box)."""
    T = len(s)
    x1, sigma, pairs = parts if parts is not None else derivative_parts(arith, values, eps, spread, T, weights)
    # the parts on the left of each product and sum: they may be duals, which an mpmath interval cannot take
    total = sum((sigma[k] * (s[k] - s[0]) for k in range(1, T)), 0) + s[0]
    for (k, j), (d, scale) in pairs.items():
        total = total + scale * (d * s[0] + x1 * (s[k] - s[j]))
    return total


def direction_shift(arith: Backend, values: dict[str, Any], eps: Any, s: Sequence[float], is_point: bool,
                    with_block: bool, weights: Sequence[Any] | None = None, parts: Any = None) -> list[Any]:
    """The derivative of the output (the attention's, or the block's with ``with_block``: :func:`outputs`) along
    the vertex ``s``: at a point ``s`` clipped into what |x'_k| <= alpha leaves, over a box
    the whole segment. Blk = (1 + w)(Attn + x) at w = 1 doubles the attention's shift plus x's own.
    ``parts``: over a box, :func:`derivative_parts` at spread [-1, 1] (shared by every direction)."""
    if is_point:
        moved = clipped(arith, values, eps, s)
        sv, spread = moved, arith.interval(min(0.0, *moved), max(0.0, *moved))
    else:
        sv, spread = list(s), arith.interval(-1.0, 1.0)
    shift = attention_derivative(arith, values, eps, sv, spread, weights, None if is_point else parts)
    return outputs(shift, sv[0], with_block)


OUTPUT_SIGNS = (1.0, -1.0)  # Lemma 13's W_V W_O = c, one candidate each (the block is linear in it)


def outputs(shift: Any, s1: Any, with_block: bool) -> list[Any]:
    """The candidates of one direction: the attention's shift, or the block's 2 (c shift + s_1) for each c of
    OUTPUT_SIGNS (with ``with_block``)."""
    return [2 * (shift * c + s1) for c in OUTPUT_SIGNS] if with_block else [shift]


def output_sign(choice: int, with_block: bool) -> tuple[int, float]:
    """(the direction's index, c) of candidate ``choice`` (the order of :func:`outputs`)."""
    return (choice // len(OUTPUT_SIGNS), OUTPUT_SIGNS[choice % len(OUTPUT_SIGNS)]) if with_block else (choice, 1.0)


def clipped(arith: Backend, values: dict[str, Any], eps: Any, s: Sequence[float]) -> list[float]:
    """At a point: s with each s_k moved into the range that keeps |x_k + eps s_k| <= alpha (a box
    of s), so the point is an instance."""
    out = []
    for k, sk in enumerate(s, start=1):
        room_hi = (1 - values[f"u{k}"]) * values["alpha"] / eps
        room_lo = (-1 - values[f"u{k}"]) * values["alpha"] / eps
        out.append(min(max(sk, arith.upper(room_lo)), arith.lower(room_hi)))
    return out


def enclosure(T: int, with_block: bool, factor: float, eps_weight: float) -> Enclose:
    """Candidates, one per direction s of :func:`directions`: (the difference / eps, the bound / eps).

    On a box, the points of the segments x + [0, 1] eps s are enclosed by alpha u + eps [-1, 1]
    whatever s is (a superset), so the derivative is linear in s there and its sup over s in
    [-1, 1]^T is at a vertex (the constraint |x'_k| <= alpha, dropped, only shrinks the set). At a
    point (a lower bound), s is clipped into the range the constraint leaves (:func:`clipped`)."""

    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        eps, alpha = arith.power_of_ten(values["log10_eps"]), values["alpha"]
        is_point = all(arith.is_point(v) for v in values.values())
        over_eps = factor * (4 * alpha * alpha * arith.exprel(4 * alpha * eps) + eps_weight)
        parts = None if is_point else derivative_parts(arith, values, eps, arith.interval(-1.0, 1.0), T)
        return [(shift, over_eps) for s in directions(T)
                for shift in direction_shift(arith, values, eps, s, is_point, with_block, parts=parts)]

    return enclose


def segment_enclosure(T: int, with_block: bool, factor: float, eps_weight: float) -> Enclose:
    """With the directions s_k as dimensions (``segments``). Over a box: the difference over eps is the integral
    over t in [0, 1] of the derivative along s at x_k + t eps s_k (one t for every token), so it is the mean
    over PIECES parts of [0, 1] of the derivative's mean on each, and that lies in the derivative's enclosure
    over the part. The derivative is the linear form of :func:`attention_derivative` in s, with coefficients
    that depend on s and t but lie in their enclosure over the box and the part; a mean of such forms is the
    form at the mean coefficients, so for every s of the box's S its |.| is at most the largest over S's 2^T
    vertices of the form's enclosure (no superset of the segments, as in :func:`enclosure`: at large eps that
    superset alone exceeds the bound). At a point: its own s, clipped into what |x'_k| <= alpha leaves."""

    def quotients(arith: Backend, values: dict[str, Any], centre: bool) -> list[Any]:
        eps, alpha = arith.power_of_ten(values["log10_eps"]), values["alpha"]
        steps = [values[f"s{k}"] for k in range(1, T + 1)]
        point = all(arith.is_point(v) for v in values.values())
        if point:
            moved = clipped(arith, values, eps, [float(arith.ends(sk)[0]) for sk in steps])
            sv = [arith.point(sk) for sk in moved]
            corners: list[Sequence[Any]] = [sv]
        else:
            sv = steps
            corners = list(itertools.product(*[(arith.point(arith.lower(sk)), arith.point(arith.upper(sk)))
                                               for sk in steps]))

        growth = arith.exprel(4 * alpha * eps)  # held as an interval of its own: nearly 1 where eps is small

        def ratios(ar: Backend, vals: dict[str, Any]) -> list[Any]:
            """The difference over the bound (both over eps), one per corner: a quotient, so that alpha's
            share in both sides is one variable of the centred form."""
            bound = factor * (4 * vals["alpha"] * vals["alpha"] * growth + eps_weight)
            shifts: list[Any] = [0] * len(corners)
            for piece in range(PIECES):
                parts = derivative_parts(ar, vals, eps, None, T, steps=sv, along=(piece / PIECES, (piece + 1) / PIECES))
                for i, corner in enumerate(corners):
                    shifts[i] = shifts[i] + attention_derivative(ar, vals, eps, corner, None, parts=parts)
            return [output / bound for shift, corner in zip(shifts, corners, strict=True)
                    for output in outputs(shift / PIECES, corner[0], with_block)]

        names = ["alpha", "a", *(f"u{k}" for k in range(1, T + 1))]  # the centred form's coordinates
        return centred(arith, values, names, ratios) if centre and not point else ratios(arith, values)

    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        # the plain quotients (about a ninth of the centred form's cost) where they already prove <= 1
        plain = quotients(arith, values, centre=False)
        if all(arith.is_point(v) for v in values.values()):
            return [(quotient, arith.point(1.0)) for quotient in plain]
        tight = refined(arith, values, plain, lambda some: quotients(arith, some, centre=True), 1.0)
        one = arith.point(1.0)
        return [(quotient, one) for quotient in tight]

    return enclose


def limit_enclosure(T: int, with_block: bool, factor: float, eps_weight: float) -> Enclose:
    """The limit family's candidates, one per (vertex s of :func:`directions`, output sign): the derivative of
    the output along s at X = alpha u exactly, over factor (4 alpha^2 + eps weight), the bound over eps at
    eps = 0; as one quotient, in its centred form in alpha, a and the u_k where the plain one exceeds 1."""

    def quotients(arith: Backend, values: dict[str, Any]) -> list[Any]:
        zero = arith.point(0.0)
        bound = factor * (4 * values["alpha"] * values["alpha"] + eps_weight)
        parts = derivative_parts(arith, values, zero, zero, T)
        return [output / bound for s in directions(T)
                for output in outputs(attention_derivative(arith, values, zero, s, zero, parts=parts), s[0],
                                      with_block)]

    names = ["alpha", "a", *(f"u{k}" for k in range(1, T + 1))]

    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        plain = quotients(arith, values)
        one = arith.point(1.0)
        if all(arith.is_point(v) for v in values.values()):
            return [(quotient, one) for quotient in plain]
        tight = refined(arith, values, plain, lambda some: centred(arith, some, names, quotients), 1.0)
        return [(quotient, one) for quotient in tight]

    return enclose


def limit_families(statement: str, with_block: bool, variants: dict[str, tuple[float, float]],
                   expected: dict[str, dict[int, str]] | None = None, sizes: tuple[int, ...] = (2, 3)) -> list[Family]:
    """The limit family per T of ``sizes`` and variant (the module's docstring: what it bounds, and why): its
    instances are the segment family's at the smallest eps (a lower end of both suprema)."""
    out = []
    for T in sizes:
        segmented = instance_maker(T, with_block)

        def instance(point: dict[str, float], choice: int, make: Any = segmented) -> dict[str, Any]:
            return make({**point, "log10_eps": LOG_EPS_LOW}, choice)

        for variant, (factor, eps_weight) in variants.items():
            out.append(Family(
                statement=statement, name=f"d1-T{T}-limit", variant=variant,
                dimensions=tuple(d for d in dimensions(T) if d.name != "log10_eps"),
                enclose=limit_enclosure(T, with_block, factor, eps_weight), instance=instance,
                feasibility=feasibility(T), contains=contains_maker(T, with_block, statement),
                search_fixed=search_fixed(T, with_block),
                description=f"the d1-T{T} family's ratio at eps -> 0 (its derivative over the bound's limit) over "
                            f"every X in [-alpha, alpha]^{T}, alpha in [1, {ALPHA_HIGH}]: an upper end for "
                            f"d1-T{T} at every eps",
                expected=(expected or {}).get(variant, {}).get(T) if variant in (expected or {}) else "held",
                vectorised=True))
    return out


def segment_scale(T: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A direction s_k moves its token by eps s_k where u_k moves it by alpha u_k: its width counts eps / alpha
    times (eps and alpha at the ends that make it most), so s is halved only where eps is large. log10 eps's
    width counts as the part of the family's range of eps that it spans (never more than its own width): the
    difference over eps is its derivative to within about eps, so where eps is small a box hardly depends on it
    and is halved across the others (a narrow box's factor is about 115 eps: 0.1 at eps = 1e-3). Measured in
    docs/results/certify.md."""

    names = [d.name for d in dimensions(T, segments=True)]
    alpha, log10_eps, first = names.index("alpha"), names.index("log10_eps"), names.index("s1")

    def scale(lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
        factors = np.ones_like(lows)
        factors[:, first:first + T] = (10.0 ** highs[:, log10_eps] / lows[:, alpha])[:, None]
        low, high = lows[:, log10_eps], highs[:, log10_eps]
        linear = (10.0 ** high - 10.0 ** low) / (10.0 ** LOG_EPS_HIGH - 10.0 ** LOG_EPS_LOW)
        relative = (high - low) / (LOG_EPS_HIGH - LOG_EPS_LOW)
        factors[:, log10_eps] = np.minimum(1.0, linear / np.where(relative > 0, relative, 1.0))  # 0 x 0 at a point
        return factors

    return scale


def feasibility(T: int, segments: bool = False) -> Callable[[Backend, dict[str, Any]], str]:
    """Tokens 2..T are exchangeable (with the full mask, each with its own s): u_2 <= ... <= u_T; with
    ``segments`` also |x'_k| = |alpha u_k + eps s_k| <= alpha."""

    def state(arith: Backend, values: dict[str, Any]) -> Any:
        outside: Any = False
        straddles: Any = False
        for k in range(2, T):
            left, right = values[f"u{k}"], values[f"u{k + 1}"]
            outside = outside | (arith.lower(left) > arith.upper(right))
            straddles = straddles | (arith.upper(left) > arith.lower(right))
        if segments:
            alpha, eps = values["alpha"], arith.power_of_ten(values["log10_eps"])
            for k in range(1, T + 1):
                # |x'_k| / alpha = |u_k + (eps / alpha) s_k| <= 1
                moved = values[f"u{k}"] + eps / alpha * values[f"s{k}"]
                low, high = arith.lower(moved), arith.upper(moved)
                outside = outside | (low > 1.0) | (high < -1.0)
                straddles = straddles | (high > 1.0) | (low < -1.0)
        return feasibility_state(outside, straddles)

    return state


def _inside(x: float, centre: float, radius: float, alpha: float) -> bool:
    """|x - centre| <= radius and |x| <= alpha, exactly."""
    return abs(Fraction(x) - Fraction(centre)) <= Fraction(radius) and abs(Fraction(x)) <= Fraction(alpha)


def perturbed(x: float, step: float, eps: float, alpha: float) -> float:
    """fl(x + step), moved towards x ulp by ulp until both constraints hold exactly."""
    y = min(max(x + step, -alpha), alpha)
    while not _inside(y, x, eps, alpha):
        y = math.nextafter(y, x)
    return y


def instance_maker(T: int, with_block: bool) -> Callable[[dict[str, float], int], dict[str, Any]]:
    def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
        alpha = point["alpha"]
        eps = 10.0 ** point["log10_eps"]
        X = [alpha * point[f"u{k}"] for k in range(1, T + 1)]
        direction, c = output_sign(choice, with_block)
        s = [point[f"s{k}"] for k in range(1, T + 1)] if "s1" in point else directions(T)[direction]
        Xp = [perturbed(x, eps * sk, eps, alpha) for x, sk in zip(X, s, strict=True)]
        one = np.ones((1, 1, 1))
        out: dict[str, Any] = {
            "alpha": alpha, "d1": 1, "d2": 1, "eps_max": eps,
            "X": np.asarray(X, dtype=np.float64).reshape(T, 1),
            "X_perturbed": np.asarray(Xp, dtype=np.float64).reshape(T, 1),
            "mask": np.ones((T, T), dtype=np.int8),
            "W_Q": np.full((1, 1, 1), point["a"]), "W_K": one.copy(), "W_V": one.copy(), "W_O": np.full((1, 1, 1), c),
        }
        if with_block:
            out["fc_layers"] = [np.ones((1, 1))]
        return out

    return instance


def contains_maker(T: int, with_block: bool, statement: str) -> Callable[[dict[str, Any]], bool]:
    """Whether an instance (a seed) lies in the family: its shape, ranges and every assumption."""

    def contains(instance: dict[str, Any]) -> bool:
        from sltcheck.assumptions import violations

        X = np.asarray(instance["X"])
        W = [np.asarray(instance[k]) for k in ("W_Q", "W_K", "W_V", "W_O")]
        eps = float(instance["eps_max"])
        shape_ok = (X.shape == (T, 1) and all(w.shape == (1, 1, 1) for w in W)
                    and bool(np.all(np.asarray(instance["mask"]) == 1)))
        if with_block:
            layers = instance.get("fc_layers", [])
            shape_ok = shape_ok and len(layers) == 1 and np.asarray(layers[0]).shape == (1, 1)
        return (shape_ok and 1.0 <= float(instance["alpha"]) <= ALPHA_HIGH and eps > 0
                and LOG_EPS_LOW <= math.log10(eps) <= LOG_EPS_HIGH and not violations(statement, instance))

    return contains


def search_fixed(T: int, with_block: bool) -> dict[str, Any]:
    """What restricts the worst-case search to the family's shape: d = H = 1 (L = 1), T tokens, full mask."""
    shape = {"d1": 1, "d2": 1, "H": 1, "dK": 1, "dV": 1, "T": T, **({"L": 1} if with_block else {})}
    return {**shape, "mask": np.ones((T, T), dtype=np.int8)}


def families(statement: str, with_block: bool, variants: dict[str, tuple[float, float]],
             seeds: Callable[[], list[dict[str, Any]]] | None = None,
             expected: dict[str, dict[int, str]] | None = None, sizes: tuple[int, ...] = SIZES,
             segments: tuple[int, ...] = (), capped: tuple[int, ...] = ()) -> list[Family]:
    """One family per T and variant; ``variants``: name -> (factor, eps weight) of the bound
    factor H sqrt(d1) (alpha (exp(4 alpha eps) - 1) + eps weight x eps). ``expected``: variant ->
    {T: the known answer} for the variants not expected to hold (unknown at the other T). ``segments``: the T
    whose families take the perturbation's directions as dimensions (:func:`segment_enclosure`); ``capped``: the T
    whose families are capped by their limit family (:func:`limit_families`, to be registered beside them)."""
    out = []
    for T in sizes:
        segmented = T in segments
        for variant, (factor, eps_weight) in variants.items():
            out.append(Family(
                statement=statement, name=f"d1-T{T}", variant=variant, dimensions=dimensions(T, segmented),
                enclose=(segment_enclosure if segmented else enclosure)(T, with_block, factor, eps_weight),
                instance=instance_maker(T, with_block), feasibility=feasibility(T, segmented),
                contains=contains_maker(T, with_block, statement), seeds=seeds,
                search_fixed=search_fixed(T, with_block),
                description=f"d = H = 1{', L = 1' if with_block else ''}, T = {T}, full mask, alpha in "
                            f"[1, {ALPHA_HIGH}], eps_max in [1e{LOG_EPS_LOW:+.0f}, 1e{LOG_EPS_HIGH:+.0f}]",
                expected=(expected or {}).get(variant, {}).get(T) if variant in (expected or {}) else "held",
                vectorised=True,
                split_scale=segment_scale(T) if segmented else None,
                capped_by=f"{statement}/d1-T{T}-limit/{variant}" if T in capped else None))
    return out

