"""Theorem 9's families for the branch-and-bound (:mod:`sltcheck.certify`): the a-posteriori chain.

The family ``d1-T2``: d1 = d2 = d_K = d_V = H = 1 and n_K = n_V = 1 (the pruned source's merged
weights are its entries), T = 2 tokens, full mask, alpha in [1, ALPHA_HIGH] (alpha-large), every
target and every pruned source whose merged weights are within rho = 10^r of the target's, r in
[LOG_RHO_LOW, LOG_RHO_HIGH]. The free parameters and what is removed (no instance is lost):

- the target a = W_Q W_K in [-1, 1] and b = W_V W_O (W_K = W_O = 1): the left side is linear in b
  (below) and the bound does not involve b, so b = +-1 (two candidates);
- the source a' = a + rho t_a, b' = b + rho t_b: the chain's e_QK = rho |t_a|, e_VO = rho |t_b|, and
  with (t_a, t_b) on the boundary of [-1, 1]^2 (one of them +-1, the other t in [-1, 1]: four
  candidates) every source with max(e_QK, e_VO) = rho is met once, rho dividing out of both sides;
- the row: swapping the tokens swaps the rows, so the measured row is the first;
- tokens x_k = alpha u_k, u_1 >= 0 (x -> -x leaves the logits a x_i x_k unchanged and negates the
  outputs).

Both sides over rho (a rewriting, not the statement's code path): with c = x_1 (x_1 - x_2) and
s the logistic function, row 1 of Attn is x_2 + s(a c)(x_1 - x_2) times b, so

    measured / rho = | b (x_1 - x_2) c t_a s'(xi) + t_b (x_2 + s(a' c)(x_1 - x_2)) |,

xi between a c and a' c (mean value; s' = s (1 - s) is even and decreasing in |xi|: exact range),
and the as-proven bound over rho is alpha 2 alpha^2 |t_a| exprel(2 alpha^2 rho |t_a|) + alpha |t_b|.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sltcheck.certify import Dimension, Family, Ratio
from sltcheck.numerics.balls import Backend

ALPHA_HIGH = 2.0
LOG_RHO_LOW, LOG_RHO_HIGH = -6.0, -1.0
LN10 = math.log(10.0)


def candidates() -> list[tuple[float, str, float]]:
    """(b, the edge of [-1, 1]^2 that (t_a, t_b) runs on, its fixed coordinate's sign)."""
    return [(b, edge, sign) for b in (1.0, -1.0) for edge in ("a", "b") for sign in (1.0, -1.0)]


def _pair(edge: str, sign: float, t: Any) -> tuple[Any, Any]:
    return (sign, t) if edge == "a" else (t, sign)


def logistic(arith: Backend, y: Any) -> Any:
    return arith.increasing(lambda z: 1 / (1 + arith.exp(-z)), y)


def logistic_slope(arith: Backend, y: Any) -> Any:
    """s'(y) = s(y) (1 - s(y)) over the interval y: even, decreasing in |y| (exact ends)."""
    near, far = arith.magnitude(y)

    def at(z: float) -> Any:
        s = 1 / (1 + arith.exp(arith.point(-z)))
        return s * (1 - s)

    return arith.interval(arith.lower(at(far)), arith.upper(at(near)))


def exprel_from_zero(arith: Backend, x: Any) -> Any:
    """(e^x - 1) / x (1 at 0) over an interval x >= 0, increasing: its ends."""
    lo, hi = max(arith.lower(x), 0.0), max(arith.upper(x), 0.0)

    def at(z: float) -> Any:
        return arith.point(1.0) if z == 0 else arith.expm1(arith.point(z)) / arith.point(z)

    return arith.interval(arith.lower(at(lo)), arith.upper(at(hi)))


def rho_of(arith: Backend, log10_rho: Any) -> Any:
    ln10 = arith.interval(math.nextafter(LN10, 0.0), math.nextafter(LN10, math.inf))
    return arith.exp(log10_rho * ln10)


def enclose(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
    alpha, a = values["alpha"], values["a"]
    rho = rho_of(arith, values["log10_rho"])
    x1, x2 = alpha * values["u1"], alpha * values["u2"]
    gap = alpha * (values["u1"] - values["u2"])
    c = x1 * gap
    out = []
    for b, edge, sign in candidates():
        t_a, t_b = _pair(edge, sign, values["t"])
        shifted = a + rho * t_a
        slope = logistic_slope(arith, arith.hull([a * c, shifted * c]))
        top = b * gap * c * t_a * slope + t_b * (x2 + logistic(arith, shifted * c) * gap)
        size_a = arith.interval(*arith.magnitude(t_a)) if not isinstance(t_a, float) else arith.point(abs(t_a))
        size_b = arith.interval(*arith.magnitude(t_b)) if not isinstance(t_b, float) else arith.point(abs(t_b))
        square = 2 * alpha * alpha
        bound = alpha * square * size_a * exprel_from_zero(arith, square * rho * size_a) + alpha * size_b
        out.append((top, bound))
    return out


def one_head_instance(point: dict[str, float], b: float, t_a: float, t_b: float, rho: float) -> dict[str, Any]:
    """The attention part of an instance at ``point``: one head, W_K = W_O = 1, W_Q = a, W_V = b,
    the source's W_Q and W_V moved by rho t_a and rho t_b (shared with Theorem 11's family)."""
    alpha = point["alpha"]

    def weight(value: float) -> np.ndarray:
        return np.full((1, 1, 1), value, dtype=np.float64)

    return {"alpha": alpha, "d1": 1, "d2": 1,
            "X": np.asarray([[alpha * point["u1"]], [alpha * point["u2"]]], dtype=np.float64),
            "mask": np.ones((2, 2), dtype=np.int8),
            "W_Q": weight(point["a"]), "W_K": weight(1.0), "W_V": weight(b), "W_O": weight(1.0),
            "S_Q": weight(point["a"] + rho * t_a), "S_K": weight(1.0), "S_V": weight(b + rho * t_b),
            "S_O": weight(1.0)}


def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
    b, edge, sign = candidates()[choice]
    t_a, t_b = _pair(edge, sign, point["t"])
    return one_head_instance(point, b, t_a, t_b, 10.0 ** point["log10_rho"])


def two_token_tensors(candidate: dict[str, Any], shape: tuple[int, ...]) -> list[np.ndarray] | None:
    """The candidate's eight attention tensors (W_Q..W_O, S_Q..S_O) if it has two 1-d tokens, every
    tensor of ``shape``, a full mask and alpha in [1, ALPHA_HIGH]; otherwise None (not in the family)."""
    X = np.asarray(candidate["X"])
    tensors = [np.asarray(candidate[k]) for k in ("W_Q", "W_K", "W_V", "W_O", "S_Q", "S_K", "S_V", "S_O")]
    if X.shape != (2, 1) or any(m.shape != shape for m in tensors):
        return None
    if not bool(np.all(np.asarray(candidate["mask"]) == 1)) or not 1.0 <= float(candidate["alpha"]) <= ALPHA_HIGH:
        return None
    return tensors


def errors_in_range(rho: float, log_rho_high: float, statement: str, candidate: dict[str, Any]) -> bool:
    """Whether the largest error rho lies in [1e LOG_RHO_LOW, 1e log_rho_high] and the candidate
    meets every assumption of ``statement``."""
    from sltcheck.assumptions import violations

    return (rho > 0 and LOG_RHO_LOW <= math.log10(rho) <= log_rho_high
            and not violations(statement, candidate))


def contains(candidate: dict[str, Any]) -> bool:
    """Whether an instance (a seed) lies in the family: its shape, ranges and every assumption."""
    weights = two_token_tensors(candidate, (1, 1, 1))
    if weights is None:
        return False
    merged = [float(weights[0][0, 0, 0] * weights[1][0, 0, 0]), float(weights[2][0, 0, 0] * weights[3][0, 0, 0])]
    source = [float(weights[4][0, 0, 0] * weights[5][0, 0, 0]), float(weights[6][0, 0, 0] * weights[7][0, 0, 0])]
    rho = max(abs(s - m) for s, m in zip(source, merged, strict=True))
    return errors_in_range(rho, LOG_RHO_HIGH, "theorem9", candidate)


DIMENSIONS = (Dimension("alpha", 1.0, ALPHA_HIGH), Dimension("log10_rho", LOG_RHO_LOW, LOG_RHO_HIGH),
              Dimension("a", -1.0, 1.0), Dimension("u1", 0.0, 1.0), Dimension("u2", -1.0, 1.0),
              Dimension("t", -1.0, 1.0))

FAMILIES = [Family(
    statement="theorem9", name="d1-T2", variant="as-proven", dimensions=DIMENSIONS, enclose=enclose,
    instance=instance, contains=contains,
    search_fixed={"d1": 1, "d2": 1, "H": 1, "dK": 1, "dV": 1, "T": 2, "mask": np.ones((2, 2), dtype=np.int8)},
    description=f"d = H = n_K = n_V = 1, T = 2, full mask, alpha in [1, {ALPHA_HIGH}], every target and every "
                f"pruned source within max(e_QK, e_VO) in [1e{LOG_RHO_LOW:+.0f}, 1e{LOG_RHO_HIGH:+.0f}]",
    expected="held")]

