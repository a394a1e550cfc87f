"""Theorem 9's family with tokens in the plane (d1 = d2 = 2), for the branch-and-bound (:mod:`sltcheck.certify`).

The family ``plane-T2``: d1 = d2 = 2, H = 1, d_K = d_V = 1, T = 2 tokens, full mask, alpha in
[sqrt(2), ALPHA_HIGH] (alpha-large: alpha >= max(sqrt d1, sqrt d2)), every target (W_Q = q, W_K = k, W_V = v,
W_O = o^T, each of norm <= 1) and every pruned source, of any n_K and n_V, whose merged errors
e_QK = ||dW_QK||_max and e_VO = ||dW_VO||_max have max(e_QK, e_VO) = rho = 10^r, r in [LOG_RHO_LOW,
LOG_RHO_HIGH]. The as-proven chain at d1 = d2 = 2 over rho is

    bound / rho = sqrt(2) alpha 4 alpha^2 t_a exprel(4 alpha^2 rho t_a) + 2 sqrt(2) alpha t_b,
    t_a = e_QK / rho, t_b = e_VO / rho (one of them 1).

What is removed, no instance lost. With y = x_1 - x_2, z = x_1^T W_QK y (row 1's logit gap), z' = z +
x_1^T dW_QK y the source's, s the logistic function and q' = x_2 + s(z') y (row 1 of p' X):

- the row: swapping the tokens swaps the rows (full mask), so the measured row is the first;
- W_VO and dW_VO: row 1's change is (s(z') - s(z)) y^T W_VO + q'^T dW_VO, and over every W_VO = v o^T
  (||v||, ||o|| <= 1) and every 2 x 2 dW_VO of max entry e_VO its largest norm is

      |s(z') - s(z)| ||y|| + sqrt(2) e_VO ||q'||_1

  (the triangle inequality, and ||u^T D|| <= sqrt(2) e ||u||_1 for D of max entry e), attained by
  v = +-y / ||y||, o = (1, 1) / sqrt 2 and dW_VO = e_VO sign(q') (1, 1) (a rank-one source, n_V = 1):
  the family measures this largest norm, and the bound involves neither v nor o;
- W_QK: z = (x_1 . q)(y . k) takes exactly the values a ||x_1|| ||y||, a in [-1, 1];
- dW_QK: x_1^T dW_QK y takes exactly the values kappa e_QK ||x_1||_1 ||y||_1, kappa in [-1, 1] (a 2 x 2
  matrix of max entry e_QK; :func:`logit_error` builds one for every kappa); the bound rises with e_QK,
  so the sign of the perturbation sits in kappa and t_a >= 0;
- t_b enters both sides as |t_b|: t_b >= 0, and the error direction (t_a, t_b) lies on one of two faces of
  [0, 1]^2: t_a = 1 (candidate 0, t_b = ``t``) or t_b = 1 (candidate 1, t_a = ``t``);
- a signed permutation P of the coordinates applied to the tokens, q, k, v and o^T (and P dW P^T to the
  errors) leaves every logit, every output norm, ||.||_1 and every max-norm as they are: x_1 = alpha (u1,
  w1) with 0 <= w1 <= u1 (no rotation: the max-norm is not invariant under one).

The discs ||x_k|| <= alpha and the cut w1 <= u1 are not boxes: :func:`feasibility` drops the boxes outside
them and keeps the straddling ones (their enclosure covers a superset; every bound stays valid).

Enclosure over a box, both sides over rho: |s(z') - s(z)| / rho = s'(xi) |kappa| t_a ||x_1||_1 ||y||_1 with
xi between z and z' (mean value; s' even and decreasing in |xi|), q' a convex combination of the tokens
(intersected with their hull per coordinate). At a point the difference s(z') - s(z) itself.

The supremum is 1 / sqrt(2), attained (t_a = 0 and x_1 = x_2 = alpha (1, 1) / sqrt 2: a point on the cut and
on the disc's edge, which the engine classes as straddling, so its lower end approaches it): the value term's
||q'||_1 <= sqrt(2) alpha against the chain's d1 sqrt(d2) = 2 sqrt(2); the softmax term reaches at most
1 / (2 sqrt 2) of its share (s' <= 1/4, ||x_1||_1 ||y||_1 ||y|| <= 8 alpha^3). So the family is
decided by quotients alone, no argument; the mutant ``half`` (the chain halved, supremum sqrt 2) is a
certified counterexample.
"""

from __future__ import annotations

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
LOG_RHO_LOW, LOG_RHO_HIGH = -6.0, -1.0
DIMENSIONS = (Dimension("alpha", ALPHA_LOW, ALPHA_HIGH), Dimension("log10_rho", LOG_RHO_LOW, LOG_RHO_HIGH),
              Dimension("u1", 0.0, 1.0), Dimension("w1", 0.0, 1.0), Dimension("u2", -1.0, 1.0),
              Dimension("w2", -1.0, 1.0), Dimension("a", -1.0, 1.0), Dimension("kappa", -1.0, 1.0),
              Dimension("t", 0.0, 1.0))
FACES = ("t_a = 1", "t_b = 1")  # the candidates: which error is rho
SUPREMUM = 1.0 / math.sqrt(2.0)
Vector = Sequence[float] | np.ndarray


def _size(arith: Backend, x: Any) -> Any:
    """|x| as an enclosure."""
    return arith.interval(*arith.magnitude(x))


def _at_most(arith: Backend, x: Any, limit: Any) -> Any:
    """x (>= 0) intersected with [0, limit's upper end]: a second enclosure of the same number."""
    high = arith.upper(limit)
    return arith.intersect(x, arith.interval(0.0 * high, high))  # 0.0 * high: zeros of a batch's shape


def _norms(arith: Backend, first: Any, second: Any) -> tuple[Any, Any]:
    """(the Euclidean norm, the 1-norm) of (first, second), from the coordinates' magnitudes."""
    a, b = _size(arith, first), _size(arith, second)
    return arith.sqrt(a * a + b * b), a + b


def exprel_from_zero(arith: Backend, w: Any) -> Any:
    """(e^w - 1) / w (1 at 0) over w >= 0, increasing: its values at w's ends (arrays or one box)."""
    ends = [np.maximum(arith.lower(w), 0.0), np.maximum(arith.upper(w), 0.0)]

    def at(z: Any) -> Any:
        if arith.name != "arrays":
            z = float(z)
            return arith.point(1.0) if z == 0.0 else arith.expm1(arith.point(z)) / arith.point(z)
        safe: Any = np.where(z > 0.0, z, 1.0)
        return arith.where(z > 0.0, arith.expm1(arith.point(safe)) / arith.point(safe), arith.point(1.0))

    return arith.interval(arith.lower(at(ends[0])), arith.upper(at(ends[1])))


class Pieces:
    """The family's quantities over a box, in units of alpha (x_k = alpha (u_k, w_k)), each norm also bounded
    through the discs (||x_k|| <= 1, ||y|| <= ||x_1|| + ||x_2||, ||.||_1 <= sqrt(2) ||.||, q' in the hull):
    the logit gaps z, z' = z + rho shift, and the 1-norm of q' / alpha."""

    def __init__(self, arith: Backend, values: dict[str, Any], t_a: Any) -> None:
        alpha, self.rho = values["alpha"], arith.power_of_ten(values["log10_rho"])
        u1, w1, u2, w2 = (values[name] for name in ("u1", "w1", "u2", "w2"))
        root2 = arith.sqrt(arith.point(2.0))
        one = arith.point(1.0)
        x1_norm, x1_sum = _norms(arith, u1, w1)
        x2_norm, _ = _norms(arith, u2, w2)
        x1_norm, x2_norm = _at_most(arith, x1_norm, one), _at_most(arith, x2_norm, one)
        x1_sum = _at_most(arith, x1_sum, root2 * x1_norm)
        y_norm, y_sum = _norms(arith, u1 - u2, w1 - w2)
        self.y_norm = _at_most(arith, y_norm, x1_norm + x2_norm)
        y_sum = _at_most(arith, y_sum, root2 * self.y_norm)
        self.spread = x1_sum * y_sum  # ||x_1||_1 ||y||_1 / alpha^2
        self.z = values["a"] * alpha * alpha * x1_norm * self.y_norm
        self.shift = values["kappa"] * t_a * alpha * alpha * self.spread  # (z' - z) / rho
        self.moved = self.z + self.rho * self.shift
        s = arith.logistic(self.moved)
        attended = [arith.intersect(second + s * (first - second), arith.hull([first, second]))
                    for first, second in ((u1, u2), (w1, w2))]
        self.attended_sum = _at_most(arith, _size(arith, attended[0]) + _size(arith, attended[1]),
                                     root2 * arith.hull([x1_norm, x2_norm]))


def _faces(arith: Backend, values: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(t_a, t_b) on each face."""
    one = arith.point(1.0)
    return [(one, values["t"]), (values["t"], one)]


def _bound_pieces(arith: Backend, values: dict[str, Any], pieces: Pieces, t_a: Any, scale: float) -> tuple[Any, Any]:
    """scale x the as-proven chain at d1 = d2 = 2, H = 1, over rho alpha: (its softmax term / (t_a alpha^2),
    its value term / t_b)."""
    alpha = values["alpha"]
    root2 = arith.sqrt(arith.point(2.0))
    return scale * root2 * 4 * exprel_from_zero(arith, 4 * alpha * alpha * pieces.rho * t_a), scale * 2 * root2


def _point_ratios(arith: Backend, values: dict[str, Any], scale: float) -> list[Ratio]:
    """At a point, per face: the largest row-1 change over rho alpha (the module docstring) over the bound's."""
    out = []
    for t_a, t_b in _faces(arith, values):
        pieces = Pieces(arith, values, t_a)
        softmax = _size(arith, arith.logistic(pieces.moved) - arith.logistic(pieces.z)) / pieces.rho
        root2 = arith.sqrt(arith.point(2.0))
        soft_bound, value_bound = _bound_pieces(arith, values, pieces, t_a, scale)
        alpha = values["alpha"]
        out.append((softmax * pieces.y_norm + root2 * t_b * pieces.attended_sum,
                    t_a * alpha * alpha * soft_bound + t_b * value_bound))
    return out


def _box_ratios(arith: Backend, values: dict[str, Any], scale: float) -> list[Ratio]:
    """Over a box, per face, each term of measured over the same term of the bound (t_a and t_b divide out):
    (A + B) / (C + D) <= max(A / C, B / D) for A, B >= 0 and C, D > 0, so their max bounds the ratio above."""
    out = []
    root2 = arith.sqrt(arith.point(2.0))
    for t_a, _ in _faces(arith, values):
        pieces = Pieces(arith, values, t_a)
        slope = arith.logistic_slope(arith.hull([pieces.z, pieces.moved]))
        soft_bound, value_bound = _bound_pieces(arith, values, pieces, t_a, scale)
        softmax = slope * _size(arith, values["kappa"]) * pieces.spread * pieces.y_norm  # over rho alpha^3 t_a
        out += [(softmax, soft_bound), (root2 * pieces.attended_sum, value_bound)]
    return out


def enclosure(scale: float) -> Callable[[Backend, dict[str, Any]], list[Ratio]]:
    """At a point the two faces' ratios; over a box their terms' (an upper bound; the point's candidates come
    first, so a box's candidate index is never taken for an instance)."""

    def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
        if all(arith.is_point(v) for v in values.values()):
            return _point_ratios(arith, values, scale)
        return _box_ratios(arith, values, scale)

    return enclose


def feasibility(arith: Backend, values: dict[str, Any]) -> Any:
    """The discs u1^2 + w1^2 <= 1 and u2^2 + w2^2 <= 1, and the cut w1 <= u1."""
    outside: Any = arith.lower(values["w1"]) > arith.upper(values["u1"])
    straddles: Any = arith.upper(values["w1"]) > arith.lower(values["u1"])
    for first, second in (("u1", "w1"), ("u2", "w2")):
        (lo_a, hi_a), (lo_b, hi_b) = arith.magnitude(values[first]), arith.magnitude(values[second])
        least = arith.lower(arith.point(lo_a) * arith.point(lo_a) + arith.point(lo_b) * arith.point(lo_b))
        most = arith.upper(arith.point(hi_a) * arith.point(hi_a) + arith.point(hi_b) * arith.point(hi_b))
        outside = outside | (least > 1.0)
        straddles = straddles | (most > 1.0)
    return feasibility_state(outside, straddles)


def logit_error(x1: Vector, y: Vector, kappa: float, size: float) -> np.ndarray:
    """A 2 x 2 matrix D of max entry ``size`` with x_1^T D y = kappa size ||x_1||_1 ||y||_1: sign(x_1) sign(y)^T
    times a matrix M in [-1, 1] whose entry of least weight |x_1i y_j| is +-1 (the max entry) and the others
    one value mu chosen so the weighted sum is kappa (|mu| <= 1 since that weight is at most a quarter)."""
    signs = [1.0 if c >= 0 else -1.0 for c in x1], [1.0 if c >= 0 else -1.0 for c in y]
    weights = np.abs(np.outer(x1, y))
    total = float(weights.sum())
    corner = np.unravel_index(int(np.argmin(weights)), weights.shape)
    sign = 1.0 if kappa >= 0 else -1.0
    rest = total - float(weights[corner])
    mu = (kappa * total - sign * float(weights[corner])) / rest if rest > 0 else kappa
    M = np.full((2, 2), min(1.0, max(-1.0, mu)))
    M[corner] = sign
    return size * np.outer(signs[0], signs[1]) * M


def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
    """The statement's instance at a point: the target and pruned source of the module docstring (W_Q along
    x_1, W_K = a y / ||y||; the source's merged W_QK = S_Q S_K^T / sqrt(4) with S_Q = [2 (W_QK + dW_QK) | 0],
    S_K = [I | 0], n_K = 4, exact in float64; n_V = 1)."""
    alpha, rho = point["alpha"], 10.0 ** point["log10_rho"]
    t_a, t_b = (1.0, point["t"]) if choice == 0 else (point["t"], 1.0)
    x1 = np.array([alpha * point["u1"], alpha * point["w1"]])
    x2 = np.array([alpha * point["u2"], alpha * point["w2"]])
    y = x1 - x2
    q = np.array(unit_vector(x1))
    k = point["a"] * np.array(unit_vector(y))
    W_QK = np.outer(q, k)
    S_QK = W_QK + logit_error(x1, y, point["kappa"], rho * t_a)
    gap = float(x1 @ W_QK @ y)
    moved = gap + float(x1 @ (S_QK - W_QK) @ y)
    attended = x2 + y / (1.0 + math.exp(-moved))
    direction = 1.0 if point["kappa"] >= 0 else -1.0  # the sign of s(z') - s(z)
    v = direction * np.array(unit_vector(y))
    o = np.array([1.0, 1.0]) * math.sqrt(0.5)
    while 2 * Fraction(o[0]) ** 2 > 1:
        o = np.nextafter(o, 0.0)
    S_V = v * o[0] + rho * t_b * np.where(attended >= 0, 1.0, -1.0)  # S_V S_O = v o^T + e_VO sign(q') (1, 1)
    pad = np.zeros((2, 2))
    return {"alpha": alpha, "d1": 2, "d2": 2, "X": np.stack([x1, x2]), "mask": np.ones((2, 2), dtype=np.int8),
            "W_Q": q.reshape(1, 2, 1), "W_K": k.reshape(1, 2, 1), "W_V": v.reshape(1, 2, 1),
            "W_O": o.reshape(1, 1, 2),
            "S_Q": np.hstack([2 * S_QK, pad]).reshape(1, 2, 4), "S_K": np.hstack([np.eye(2), pad]).reshape(1, 2, 4),
            "S_V": S_V.reshape(1, 2, 1), "S_O": np.ones((1, 1, 2))}


def contains(candidate: dict[str, Any]) -> bool:
    """Whether an instance (a seed) lies in the family: its shape (d1 = d2 = 2, H = 1, d_K = d_V = 1, T = 2,
    full mask, a source of any n_K and n_V), its ranges and every assumption (the symmetries are not required:
    a seed off them is measured as it is, and only raises the lower bound)."""
    from sltcheck.assumptions import violations
    from sltcheck.statements.theorem9 import merged_deltas, source_of, target_of

    shapes = {key: np.asarray(candidate[key]).shape for key in ("X", "W_Q", "W_K", "W_V", "W_O")}
    if shapes != {"X": (2, 2), "W_Q": (1, 2, 1), "W_K": (1, 2, 1), "W_V": (1, 2, 1), "W_O": (1, 1, 2)}:
        return False
    sources = [np.asarray(candidate[key]).shape for key in ("S_Q", "S_K", "S_V", "S_O")]
    if [s[:2] for s in sources[:3]] != [(1, 2)] * 3 or sources[3][0] != 1 or sources[3][2] != 2:
        return False
    if not bool(np.all(np.asarray(candidate["mask"]) == 1)) or not ALPHA_LOW <= float(candidate["alpha"]) <= ALPHA_HIGH:
        return False
    dqk, dvo, _ = merged_deltas(target_of(candidate), source_of(candidate), None)
    rho = float(max(np.max(np.abs(dqk)), np.max(np.abs(dvo))))
    return rho > 0 and LOG_RHO_LOW <= math.log10(rho) <= LOG_RHO_HIGH and not violations("theorem9", candidate)


def families() -> list[Family]:
    """``plane-T2`` as proven and its mutant ``half`` (the chain halved)."""
    shape = {"d1": 2, "d2": 2, "H": 1, "dK": 1, "dV": 1, "T": 2, "mask": np.ones((2, 2), dtype=np.int8)}
    description = (f"d1 = d2 = 2 (tokens in the plane), H = d_K = d_V = 1, T = 2, full mask, alpha in [sqrt 2, "
                   f"{ALPHA_HIGH:.4g}], every target and every pruned source (any n_K, n_V) within max(e_QK, e_VO) "
                   f"in [1e{LOG_RHO_LOW:+.0f}, 1e{LOG_RHO_HIGH:+.0f}]")
    return [Family(statement="theorem9", name="plane-T2", variant=variant, dimensions=DIMENSIONS,
                   enclose=enclosure(scale), instance=instance, feasibility=feasibility, contains=contains,
                   search_fixed=shape if variant == "as-proven" else None, description=description,
                   expected=expected, known_supremum=SUPREMUM / scale, vectorised=True)
            for variant, scale, expected in (("as-proven", 1.0, "held"), ("half", 0.5, "counterexample"))]
