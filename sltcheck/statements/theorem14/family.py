"""Theorem 14's families for the branch-and-bound (:mod:`sltcheck.certify`): the B-block recursion.

The family ``B2-d1-T2-block1``: B = 2 blocks, d1 = H = n_K = n_V = L = 1, T = 2, full mask,
alpha in [1, ALPHA_HIGH]; block 1 as in Theorem 11's family ``d1-T2-L1`` (target a_1, b_1, w_1,
every pruned source in Pensia's width-2 form), block 2's target W_QK = a_2 in [-1, 1],
W_VO = b_2 in [-1, 1], FC weight w_2 in [-1, 1] and its pruned source *equal to its target*
(A_1 = (1, -1)^T, A_2 = (w_2, -w_2): block 2 adds no error of its own, so the family isolates the
proof's propagation step, Lemma 13 through block 2). Block 1's errors (e_QK, e_VO, e_FC) =
rho (|t_a|, |t_b|, max(|d_P|, |d_N|)) with h = (t_a, t_b, d_P, d_N) on the boundary of [-1, 1]^4
(one coordinate at +-1: eight faces, the other three free) and rho = 10^r, r in
[LOG_RHO_LOW, LOG_RHO_HIGH], so rho divides out. Removed, no instance lost:

- w_2 = 1 and b_2 = +-1: block 2's row-1 output is (1 + w_2)(b_2 q + y_1), so the measured side is
  |affine in b_2| times |1 + w_2|, and the bound does not involve block 2's target;
- rows: swapping the tokens swaps the rows of both blocks, so the measured row is the first;
- x -> -x negates both blocks' outputs and swaps d_P and d_N (the faces are symmetric), so u_1 >= 0.

The measured side over rho is enclosed by the mean-value form along the segment from the target to
the source (:mod:`sltcheck.numerics.dual`, forward derivatives of both blocks; at ReLU's kink the
slope is the hull of its two sides, Lipschitz along the segment), not by the statement's code path.
The as-proven bound (block 2's Theorem 11 term is 0) over rho is

    Lemma 13 at beta_2 = 4 alpha, Delta_2 = rho U_11:  2 (4 alpha (exp(16 alpha rho U_11) - 1) + 2 rho U_11) / rho

with U_11 Theorem 11's family's bound over rho (increasing in every input: evaluated at the box's corners).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from sltcheck.certify import Dimension, Family, Ratio
from sltcheck.numerics.balls import Backend
from sltcheck.numerics.dual import Dual
from sltcheck.statements.theorem9.family import (
    ALPHA_HIGH,
    LOG_RHO_LOW,
    errors_in_range,
    logistic,
    logistic_slope,
    rho_of,
    two_token_tensors,
)
from sltcheck.statements.theorem11.family import bound_at as block_bound_at
from sltcheck.statements.theorem11.family import relu, size

# Block 1's errors up to 1e-3, not Theorem 11's 0.1: Lemma 13's exp(16 alpha Delta_2) spans e^130 over
# rho in [1e-6, 0.1], and a midpoint-radius ball (arb: 30-bit radii) around a box's bound range that
# wide contains 0, so no such box could be closed; with 1e-3 the ends stay within a factor 10^3.
LOG_RHO_HIGH = -3.0


def candidates() -> list[tuple[int, float, float]]:
    """(the coordinate of h at +-1, its sign, b_2)."""
    return [(axis, sign, b2) for axis in range(4) for sign in (1.0, -1.0) for b2 in (1.0, -1.0)]


def _direction(axis: int, sign: Any, free: list[Any]) -> list[Any]:
    """h = (t_a, t_b, d_P, d_N): ``sign`` at ``axis``, the three free coordinates elsewhere."""
    rest = iter(free)
    return [sign if i == axis else next(rest) for i in range(4)]


def _pn(arith: Backend, z: Dual, P: Dual, N: Dual) -> Dual:
    """P ReLU(z) - N ReLU(-z) on duals (the slope in z: P, N or their hull at the kink)."""
    positive, negative = relu(arith, z.v), relu(arith, -z.v)
    lo, hi = arith.lower(z.v), arith.upper(z.v)
    slope = P.v if lo > 0 else N.v if hi < 0 else arith.hull([P.v, N.v])
    return Dual(P.v * positive - N.v * negative, P.d * positive - N.d * negative + slope * z.d)


def _logistic(arith: Backend, y: Dual) -> Dual:
    """s(y) and s'(y) y' with their exact ranges over y's value (s increasing, s' even, decreasing in |y|)."""
    return Dual(logistic(arith, y.v), logistic_slope(arith, y.v) * y.d)


def _attention_row(arith: Backend, xk: Any, x1: Any, x2: Any, a: Any, b: Any) -> Any:
    """Row k of b p X for two tokens (the logits a x_k x_j differ by a x_k (x_1 - x_2))."""
    gap = x1 - x2
    return b * (x2 + _logistic(arith, a * xk * gap) * gap)


def _box_bound(arith: Backend, alpha: Any, log10_rho: Any, size_a: Any, size_b: Any, m: Any) -> Any:
    """Lemma 13 at beta_2 = 4 alpha, Delta_2 = rho U_11, over rho."""
    rho = rho_of(arith, log10_rho)
    u11 = block_bound_at(arith, alpha, log10_rho, size_a, size_b, m)
    beta = 4 * alpha
    return 2 * (beta * 4 * beta * u11 * arith.exprel(4 * beta * rho * u11) + 2 * u11)


def _errors(arith: Backend, h: list[Any]) -> list[Any]:
    sizes = [x if not isinstance(x, float) else arith.point(x) for x in (size(arith, v) for v in h)]
    m = arith.interval(max(arith.lower(sizes[2]), arith.lower(sizes[3])),
                       max(arith.upper(sizes[2]), arith.upper(sizes[3])))
    return [sizes[0], sizes[1], m]


def enclose(arith: Backend, values: dict[str, Any], lipschitz_one: bool = False) -> list[Ratio]:
    alpha = values["alpha"]
    rho = rho_of(arith, values["log10_rho"])
    along = arith.interval(0.0, 1.0) * rho  # t rho, t in [0, 1]: the segment from target to source
    x1, x2 = Dual(alpha * values["u1"], 0), Dual(alpha * values["u2"], 0)
    w1 = values["w1"]
    out = []
    shared: dict[tuple[int, float], tuple[Any, ...]] = {}
    for axis, sign, b2 in candidates():
        if (axis, sign) not in shared:  # block 1 and the bound do not depend on b_2
            h = _direction(axis, sign, [values["f1"], values["f2"], values["f3"]])
            a, b, P, N = (Dual(base + along * d, d) for base, d in zip((values["a1"], values["b1"], w1, w1), h,
                                                                        strict=True))
            rows = []
            for xk in (x1, x2):
                z = _attention_row(arith, xk, x1, x2, a, b) + xk
                rows.append(z + _pn(arith, z, P, N))
            inputs = [alpha, values["log10_rho"], *_errors(arith, h)]
            # the mutant lipschitz-one: Delta_3 = Theorem 11's term of block 1 only
            bound = _corner_bound(arith, inputs, block_bound_at if lipschitz_one else _box_bound)
            shared[axis, sign] = (*rows, bound)
        y1, y2, bound = shared[axis, sign]
        top = 2 * (_attention_row(arith, y1, y1, y2, Dual(values["a2"], 0), b2) + y1)  # w_2 = 1
        out.append((top.d, bound))
    return out


def _corner_bound(arith: Backend, inputs: list[Any], at: Any) -> Any:
    """A bound increasing in every input (alpha, log10 rho, and the error sizes, >= 0) is enclosed by
    its values at the box's two corners."""
    low = at(arith, *(arith.point(arith.lower(x) if i == 1 else max(arith.lower(x), 0.0))
                      for i, x in enumerate(inputs)))
    high = at(arith, *(arith.point(arith.upper(x)) for x in inputs))
    return arith.interval(arith.lower(low), arith.upper(high))


def instance(point: dict[str, float], choice: int) -> dict[str, Any]:
    axis, sign, b2 = candidates()[choice]
    t_a, t_b, d_P, d_N = _direction(axis, sign, [point["f1"], point["f2"], point["f3"]])
    rho = 10.0 ** point["log10_rho"]
    alpha, w1 = point["alpha"], point["w1"]

    def weights(first: float, second: float) -> np.ndarray:
        return np.asarray([[[first]], [[second]]], dtype=np.float64)

    split = np.asarray([[1.0], [-1.0]], dtype=np.float64)
    return {"alpha": alpha, "d1": 1, "d2": 1, "B": 2, "H": 1,
            "X": np.asarray([[alpha * point["u1"]], [alpha * point["u2"]]], dtype=np.float64),
            "mask": np.ones((2, 2), dtype=np.int8),
            "W_Q": weights(point["a1"], point["a2"]), "W_K": weights(1.0, 1.0),
            "W_V": weights(point["b1"], b2), "W_O": weights(1.0, 1.0),
            "S_Q": weights(point["a1"] + rho * t_a, point["a2"]), "S_K": weights(1.0, 1.0),
            "S_V": weights(point["b1"] + rho * t_b, b2), "S_O": weights(1.0, 1.0),
            "fc_layers": (np.asarray([[w1]], dtype=np.float64), np.asarray([[1.0]], dtype=np.float64)),
            "S_fc_layers": (split, np.asarray([[w1 + rho * d_P, -(w1 + rho * d_N)]], dtype=np.float64),
                            split, np.asarray([[1.0, -1.0]], dtype=np.float64))}


def contains(candidate: dict[str, Any]) -> bool:
    """Whether an instance (a seed) lies in the family: its shape, ranges, block 2 exact (its source is
    its target in Pensia's form, FC weight 1, |W_VO| = 1) and every assumption."""
    if int(candidate.get("B", 0)) != 2 or int(candidate.get("H", 0)) != 1:
        return False
    fc, source_fc = candidate.get("fc_layers"), candidate.get("S_fc_layers")
    if fc is None or source_fc is None or len(fc) != 2 or len(source_fc) != 4:
        return False
    W1, W2 = (np.asarray(m, dtype=np.float64) for m in fc)
    A = [np.asarray(m, dtype=np.float64) for m in source_fc]
    if W1.shape != (1, 1) or W2.shape != (1, 1) or float(W2[0, 0]) != 1.0:
        return False
    if any(m.shape != (2, 1) or m.ravel().tolist() != [1.0, -1.0] for m in (A[0], A[2])):
        return False
    if A[1].shape != (1, 2) or A[3].ravel().tolist() != [1.0, -1.0]:
        return False
    tensors = two_token_tensors(candidate, (2, 1, 1))
    if tensors is None:
        return False
    merged = [m[:, 0, 0] * n[:, 0, 0] for m, n in zip(tensors[0::2], tensors[1::2], strict=True)]
    if merged[2][1] != merged[0][1] or merged[3][1] != merged[1][1] or abs(merged[1][1]) != 1.0:
        return False  # block 2's source is its target, |W_VO| = 1
    w1 = float(W1[0, 0])
    rho = max(abs(merged[2][0] - merged[0][0]), abs(merged[3][0] - merged[1][0]),
              abs(float(A[1][0, 0]) - w1), abs(-float(A[1][0, 1]) - w1))
    return errors_in_range(rho, LOG_RHO_HIGH, "theorem14", candidate)


def lipschitz_one(arith: Backend, values: dict[str, Any]) -> list[Ratio]:
    """The mutant ``lipschitz-one``: block errors added without Lemma 13's amplification (known false)."""
    return enclose(arith, values, lipschitz_one=True)


DIMENSIONS = (Dimension("alpha", 1.0, ALPHA_HIGH), Dimension("log10_rho", LOG_RHO_LOW, LOG_RHO_HIGH),
              Dimension("a1", -1.0, 1.0), Dimension("b1", -1.0, 1.0), Dimension("w1", -1.0, 1.0),
              Dimension("u1", 0.0, 1.0), Dimension("u2", -1.0, 1.0),
              Dimension("f1", -1.0, 1.0), Dimension("f2", -1.0, 1.0), Dimension("f3", -1.0, 1.0),
              Dimension("a2", -1.0, 1.0))

FAMILIES = [Family(
    statement="theorem14", name="B2-d1-T2-block1", variant="as-proven", dimensions=DIMENSIONS, enclose=enclose,
    instance=instance, contains=contains,
    description=f"B = 2, d = H = n_K = n_V = L = 1, T = 2, full mask, alpha in [1, {ALPHA_HIGH}], block 1 "
                "as Theorem 11's family d1-T2-L1, block 2 any target with its source equal to it "
                f"(errors only in block 1: max(e_QK, e_VO, e_FC) in [1e{LOG_RHO_LOW:+.0f}, 1e{LOG_RHO_HIGH:+.0f}])",
    expected="held")]
# the known-false mutant (ratio up to 4: equal tokens at alpha, b_2 = w_2 = 1, only W_VO of block 1 perturbed)
MUTANT_FAMILIES = [replace(FAMILIES[0], variant="lipschitz-one", enclose=lipschitz_one, expected="counterexample")]
FAMILIES += MUTANT_FAMILIES
