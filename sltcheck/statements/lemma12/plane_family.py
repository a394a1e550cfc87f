"""Lemma 12's family with tokens in the plane (d1 = d2 = 2), for the branch-and-bound (:mod:`sltcheck.certify`);
Lemma 13 reuses it with its block (``plane_families(..., with_block=True)``).

The family ``plane-T2``: d1 = d2 = 2, H = 1, d_K = d_V = 1, T = 2 tokens, full mask, alpha in
[sqrt(2), ALPHA_HIGH] (alpha-large: alpha >= sqrt(d1)), eps_max = 10^e, e in [LOG_EPS_LOW, LOG_EPS_HIGH].
The weights are W_Q = q, W_K = k, W_V = v (2 x 1) and W_O = o^T (1 x 2), each of spectral norm <= 1, so
the logits are z_kj = (x_k . q)(x_j . k) and Attn(x_i; X) = o (v . sum_j sigma_ij x_j). What is removed,
no instance lost:

- v and o: ||Attn(x'_1; X') - Attn(x_1; X)|| = ||o|| |v . Delta| with Delta = sum_j (sigma'_j x'_j - sigma_j x_j);
  the bound does not involve them, so the largest left side has ||o|| = 1 and v = Delta / ||Delta||:
  the family measures ||Delta|| (``instance`` takes that v, a unit vector, and o = (1, 0));
- the row: with the full mask swapping the tokens swaps the rows, so the measured row is the first;
- a rotation R of the plane applied to every token, to q and to k leaves every logit and ||Delta|| as
  they are: x_1 = alpha (u1, 0) with u1 in [0, 1];
- the reflection (a, b) -> (a, -b) likewise: x_2 = alpha (u2, w2) with w2 >= 0;
- (q, k) -> (-q, -k) leaves every logit: q = (q1, q2) with q1 >= 0.

The discs ||x_2|| <= alpha, ||q|| <= 1, ||k|| <= 1 are not boxes: :func:`feasibility` drops the boxes
outside them and keeps the straddling ones (their enclosure covers a superset; every bound stays valid).

Enclosure over a box (the mean-value form: eps divides out exactly): every point of the segments from
x_k to x'_k = x_k + eps s_k (||s_k|| <= 1) lies in P_k = x_k + eps [-1, 1]^2, and with
g = z_11 - z_12 = (P_1 . q)(D . k), D = P_1 - P_2, sigma_1 = s(g) (s the logistic), the attention row is
A = P_2 + s(g) D, whose Jacobians are

    J_1 = s(g) I + s'(g) D a^T,  a = (D . k) q + (P_1 . q) k;    J_2 = (1 - s(g)) I - s'(g) (P_1 . q) D k^T,

so ||Delta|| / eps <= sup ||J_1 s_1 + J_2 s_2|| <= ||J_1|| + ||J_2|| <= s + |s'| ||D|| ||a|| + (1 - s) +
|s'| |P_1 . q| ||D|| ||k||, each factor enclosed on its own, over the bound's
sqrt(2) (4 alpha^2 exprel(4 alpha eps) + 1). At a point (a lower bound), the candidates are the sixteen
perturbations with each s_k one of +-e_1, +-e_2, moved towards x_k until ||x'_k|| <= alpha and
||x'_k - x_k|| <= eps hold exactly (:func:`perturbed`), and the ratio is the difference itself over the bound.

Lemma 13 (``with_block``): Blk = F(z) + z, z = Attn + x, one FC layer W (2 x 2, ||W|| <= 1), so
Blk(x'_1) - Blk(x_1) = (I + W)(z'_1 - z_1) and ||I + W|| <= 2 with equality at W = I (which every
rotation and reflection keeps): W = I. With W_O = o and ||o|| <= 1, z'_1 - z_1 = o (v . Delta) + (x'_1 - x_1),
whose largest norm over v and o is ||Delta|| + ||x'_1 - x_1|| (v along Delta, o along x'_1 - x_1), so the
family measures 2 (||Delta|| + ||x'_1 - x_1||) <= 2 eps (||J_1|| + ||J_2|| + 1), over the bound's
factor sqrt(2) (4 alpha^2 exprel(4 alpha eps) + 2) (factor 1 as stated, 2 as proven); at a point the
instance takes that v, o and W.
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
from sltcheck.numerics.exact import unit_vector

ALPHA_LOW = math.sqrt(2.0)  # the float nearest sqrt(2) lies above it: alpha-large holds at the low end
ALPHA_HIGH = 2.0 * math.sqrt(2.0)
LOG_EPS_LOW, LOG_EPS_HIGH = -6.0, -1.0
NAMES = ("alpha", "log10_eps", "u1", "u2", "w2", "q1", "q2", "k1", "k2")
DIMENSIONS = (Dimension("alpha", ALPHA_LOW, ALPHA_HIGH), Dimension("log10_eps", LOG_EPS_LOW, LOG_EPS_HIGH),
              Dimension("u1", 0.0, 1.0), Dimension("u2", -1.0, 1.0), Dimension("w2", 0.0, 1.0),
              Dimension("q1", 0.0, 1.0), Dimension("q2", -1.0, 1.0), Dimension("k1", -1.0, 1.0),
              Dimension("k2", -1.0, 1.0))
AXES = ((1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0))
DIRECTIONS = list(itertools.product(AXES, repeat=2))  # (s_1, s_2): the point candidates


def _dot(a: Sequence[Any], b: Sequence[Any]) -> Any:
    return a[0] * b[0] + a[1] * b[1]


def _norm_upper(arith: Backend, vector: Sequence[Any]) -> Any:
    """An upper end of ||vector|| (each coordinate's magnitude squared, rounded up)."""
    squares = [arith.point(arith.magnitude(c)[1]) * arith.point(arith.magnitude(c)[1]) for c in vector]
    return arith.upper(arith.sqrt(arith.point(arith.upper(squares[0] + squares[1]))))


def _norm_lower(arith: Backend, vector: Sequence[Any]) -> Any:
    """An enclosure below ||vector|| (each coordinate's least magnitude squared)."""
    lows = [arith.point(arith.magnitude(c)[0]) for c in vector]
    return arith.sqrt(lows[0] * lows[0] + lows[1] * lows[1])


def _tokens(arith: Backend, values: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    alpha = values["alpha"]
    return [alpha * values["u1"], arith.point(0.0)], [alpha * values["u2"], alpha * values["w2"]]


def _bound_over_eps(arith: Backend, values: dict[str, Any], eps: Any, factor: float, eps_weight: float) -> Any:
    """factor H sqrt(d1) (alpha (exp(4 alpha eps) - 1) + eps_weight eps) / eps at H = 1, d1 = 2."""
    alpha = values["alpha"]
    root2 = arith.sqrt(arith.point(2.0))
    return factor * root2 * (4 * alpha * alpha * arith.exprel(4 * alpha * eps) + eps_weight)


def _jacobians(arith: Backend, values: dict[str, Any]) -> tuple[Any, Any]:
    """(an upper end of ||J_1|| + ||J_2|| over the box's segments, eps)."""
    eps = arith.power_of_ten(values["log10_eps"])
    blur = eps * arith.interval(-1.0, 1.0)
    x1, x2 = _tokens(arith, values)
    P1, P2 = [c + blur for c in x1], [c + blur for c in x2]
    D = [P1[0] - P2[0], P1[1] - P2[1]]
    q, k = (values["q1"], values["q2"]), (values["k1"], values["k2"])
    p1q, dk = _dot(P1, q), _dot(D, k)
    g = p1q * dk
    s, slope = arith.logistic(g), arith.logistic_slope(g)
    a = [dk * q[0] + p1q * k[0], dk * q[1] + p1q * k[1]]
    d_norm, a_norm, k_norm = (arith.point(_norm_upper(arith, v)) for v in (D, a, k))
    slope_size, p1q_size = (arith.point(arith.magnitude(v)[1]) for v in (slope, p1q))
    first = arith.point(arith.magnitude(s)[1]) + slope_size * d_norm * a_norm
    second = arith.point(arith.magnitude(1 - s)[1]) + slope_size * p1q_size * d_norm * k_norm
    return first + second, eps


def _attention_row(arith: Backend, x1: Sequence[Any], x2: Sequence[Any], q: Sequence[Any],
                   k: Sequence[Any]) -> list[Any]:
    """Row 1 of the attention before v and o: sigma_1 x_1 + sigma_2 x_2 (each sigma on its own)."""
    g = _dot(x1, q) * (_dot(x1, k) - _dot(x2, k))
    sigma1, sigma2 = 1 / (1 + arith.exp(-g)), 1 / (1 + arith.exp(g))
    return [sigma1 * x1[0] + sigma2 * x2[0], sigma1 * x1[1] + sigma2 * x2[1]]


def _point_ratios(arith: Backend, values: dict[str, Any], factor: float, eps_weight: float,
                  with_block: bool) -> list[Ratio]:
    """The sixteen candidates at a point: the statement's first row over eps (the attention's change along
    the instance's W_V; with the block, 2 ||o (v . Delta) + x'_1 - x_1|| at its o) over the bound / eps."""
    point = {name: float(arith.ends(values[name])[0]) for name in NAMES}  # the point's floats, exactly
    eps = 10.0 ** point["log10_eps"]
    X = _float_tokens(point)
    q = [arith.point(point["q1"]), arith.point(point["q2"])]
    k = [arith.point(point["k1"]), arith.point(point["k2"])]
    exact = [[arith.point(c) for c in x] for x in X]
    at_x = _attention_row(arith, exact[0], exact[1], q, k)
    out = []
    bound = _bound_over_eps(arith, values, arith.point(eps), factor, eps_weight)
    for s in DIRECTIONS:
        Xp = [perturbed(x, sk, eps, point["alpha"]) for x, sk in zip(X, s, strict=True)]
        moved = [[arith.point(c) for c in x] for x in Xp]
        at_moved = _attention_row(arith, moved[0], moved[1], q, k)
        v = value_direction(point, X, Xp)
        change = arith.point(v[0]) * (at_moved[0] - at_x[0]) + arith.point(v[1]) * (at_moved[1] - at_x[1])
        if with_block:
            o = output_direction(X, Xp)
            z = [arith.point(o[i]) * change + (moved[0][i] - exact[0][i]) for i in range(2)]
            change = 2 * _norm_lower(arith, z)
        out.append((change / arith.point(eps), bound))
    return out


def output_direction(X: Sequence[Sequence[float]], Xp: Sequence[Sequence[float]]) -> tuple[float, float]:
    """W_O of Lemma 13's instance: the unit vector along x'_1 - x_1 (norm <= 1 exactly; (1, 0) where 0)."""
    return _unit(np.subtract(Xp[0], X[0]))


def value_direction(point: dict[str, float], X: Sequence[Sequence[float]],
                    Xp: Sequence[Sequence[float]]) -> tuple[float, float]:
    """W_V of the instance: the unit vector along the attention's change (float64), scaled to norm <= 1."""
    q, k = np.array([point["q1"], point["q2"]]), np.array([point["k1"], point["k2"]])
    return _unit(np.subtract(_float_row(Xp, q, k), _float_row(X, q, k)))


def _unit(vector: np.ndarray) -> tuple[float, float]:
    """vector / ||vector|| of norm <= 1 exactly; (1, 0) for 0."""
    first, second = unit_vector(vector)
    return first, second


def _float_tokens(point: dict[str, float]) -> list[tuple[float, float]]:
    alpha = point["alpha"]
    return [(alpha * point["u1"], 0.0), (alpha * point["u2"], alpha * point["w2"])]


def _inside(y: Sequence[float], x: Sequence[float], eps: float, alpha: float) -> bool:
    """||y - x|| <= eps and ||y|| <= alpha, exactly."""
    fy, fx = [Fraction(c) for c in y], [Fraction(c) for c in x]
    step = sum((a - b) ** 2 for a, b in zip(fy, fx, strict=True))
    return step <= Fraction(eps) ** 2 and sum(c * c for c in fy) <= Fraction(alpha) ** 2


def perturbed(x: Sequence[float], direction: Sequence[float], eps: float, alpha: float) -> tuple[float, float]:
    """x + eps t direction for the largest t of 1, 1/2, 1/4, ... (then 0) that, after at most 64 steps of an
    ulp towards x (the rounding of the sum may overshoot), keeps ||x'|| <= alpha and ||x' - x|| <= eps exactly
    (a token on the circle moved outward stays put)."""
    t = 1.0
    while t > 2.0**-60:
        y = (x[0] + eps * t * direction[0], x[1] + eps * t * direction[1])
        for _ in range(64):
            if _inside(y, x, eps, alpha):
                return y
            y = (math.nextafter(y[0], x[0]), math.nextafter(y[1], x[1]))
        t /= 2
    return (x[0], x[1])


def enclosure(factor: float, eps_weight: float, with_block: bool) -> Callable[[Backend, dict[str, Any]], list[Ratio]]:
    """Over a box one candidate (the Jacobians' bound); at a point the sixteen perturbations."""

    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        if all(arith.is_point(v) for v in values.values()):
            return _point_ratios(arith, values, factor, eps_weight, with_block)
        jacobians, eps = _jacobians(arith, values)
        measured = 2 * (jacobians + 1) if with_block else jacobians
        return [(measured, _bound_over_eps(arith, values, eps, factor, eps_weight))]

    return enclose


def feasibility(arith: Backend, values: dict[str, Any]) -> Any:
    """The discs u2^2 + w2^2 <= 1, q1^2 + q2^2 <= 1, k1^2 + k2^2 <= 1."""
    outside: Any = False
    straddles: Any = False
    for a, b in (("u2", "w2"), ("q1", "q2"), ("k1", "k2")):
        lows = [arith.magnitude(values[a])[0], arith.magnitude(values[b])[0]]
        highs = [arith.magnitude(values[a])[1], arith.magnitude(values[b])[1]]
        least = arith.lower(arith.point(lows[0]) * arith.point(lows[0]) + arith.point(lows[1]) * arith.point(lows[1]))
        most = arith.upper(arith.point(highs[0]) * arith.point(highs[0])
                           + arith.point(highs[1]) * arith.point(highs[1]))
        outside = outside | (least > 1.0)
        straddles = straddles | (most > 1.0)
    return feasibility_state(outside, straddles)


def instance_maker(with_block: bool) -> Callable[[dict[str, float], int], dict[str, Any]]:
    def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
        """The statement's instance at a point: the family's tokens, q, k, the perturbation of candidate
        ``choice``, W_V along the attention's change, W_O = (1, 0) (with the block: along x'_1 - x_1, and
        the FC layer W = I)."""
        alpha, eps = point["alpha"], 10.0 ** point["log10_eps"]
        X = _float_tokens(point)
        Xp = [perturbed(x, s, eps, alpha) for x, s in zip(X, DIRECTIONS[choice], strict=True)]
        q, k = np.array([point["q1"], point["q2"]]), np.array([point["k1"], point["k2"]])
        v = np.array(value_direction(point, X, Xp))
        o = np.array(output_direction(X, Xp) if with_block else (1.0, 0.0))
        out: dict[str, Any] = {
            "alpha": alpha, "d1": 2, "d2": 2, "eps_max": eps, "X": np.asarray(X, dtype=np.float64),
            "X_perturbed": np.asarray(Xp, dtype=np.float64), "mask": np.ones((2, 2), dtype=np.int8),
            "W_Q": q.reshape(1, 2, 1), "W_K": k.reshape(1, 2, 1), "W_V": v.reshape(1, 2, 1), "W_O": o.reshape(1, 1, 2)}
        if with_block:
            out["fc_layers"] = [np.eye(2)]
        return out

    return instance


def _float_row(X: Sequence[Sequence[float]], q: np.ndarray, k: np.ndarray) -> np.ndarray:
    x1, x2 = np.asarray(X[0]), np.asarray(X[1])
    g = float(x1 @ q) * float((x1 - x2) @ k)
    return x2 + (x1 - x2) / (1.0 + math.exp(-g))


def contains_maker(statement: str, with_block: bool) -> Callable[[dict[str, Any]], bool]:
    def contains(candidate: dict[str, Any]) -> bool:
        """Whether an instance (a seed) lies in the family: its shape (d1 = d2 = 2, H = 1, d_K = d_V = 1,
        T = 2, full mask; with the block one 2 x 2 FC layer), its ranges and every assumption (the symmetries
        are not required: a seed off them is measured as it is, and only raises the lower bound)."""
        from sltcheck.assumptions import violations

        shapes = {key: np.asarray(candidate[key]).shape for key in ("X", "W_Q", "W_K", "W_V", "W_O")}
        if shapes != {"X": (2, 2), "W_Q": (1, 2, 1), "W_K": (1, 2, 1), "W_V": (1, 2, 1), "W_O": (1, 1, 2)}:
            return False
        if with_block and [np.asarray(w).shape for w in candidate.get("fc_layers", [])] != [(2, 2)]:
            return False
        eps = float(candidate["eps_max"])
        return (bool(np.all(np.asarray(candidate["mask"]) == 1))
                and ALPHA_LOW <= float(candidate["alpha"]) <= ALPHA_HIGH
                and eps > 0 and LOG_EPS_LOW <= math.log10(eps) <= LOG_EPS_HIGH
                and not violations(statement, candidate))

    return contains


def plane_families(statement: str, with_block: bool, variants: dict[str, tuple[float, float]]) -> list[Family]:
    """One family ``plane-T2`` per variant; ``variants``: name -> (factor, eps weight) of the bound
    factor H sqrt(d1) (alpha (exp(4 alpha eps) - 1) + eps weight x eps), as Lemma 12's token families."""
    shape = {"d1": 2, "d2": 2, "H": 1, "dK": 1, "dV": 1, "T": 2, **({"L": 1} if with_block else {})}
    return [Family(
        statement=statement, name="plane-T2", variant=variant, dimensions=DIMENSIONS,
        enclose=enclosure(factor, eps_weight, with_block), instance=instance_maker(with_block),
        feasibility=feasibility, contains=contains_maker(statement, with_block),
        search_fixed={**shape, "mask": np.ones((2, 2), dtype=np.int8)},
        description=f"d1 = d2 = 2 (tokens in the plane), H = d_K = d_V = 1{', L = 1' if with_block else ''}, T = 2, "
                    f"full mask, alpha in [sqrt 2, {ALPHA_HIGH:.4g}], eps_max in [1e{LOG_EPS_LOW:+.0f}, "
                    f"1e{LOG_EPS_HIGH:+.0f}]",
        expected="held", vectorised=True) for variant, (factor, eps_weight) in variants.items()]
