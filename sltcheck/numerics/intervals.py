"""Interval arithmetic for certified verdicts: enclosures that contain the exact real value.

Both sides of a statement are enclosed in outward-rounded intervals (``mpmath.iv``, through the
interval mode of :mod:`sltcheck.numerics.precision`): every float64 field of an instance is
converted exactly to a point interval, every +, -, *, /, exp, sqrt rounds outward, so each computed
interval contains the exact real value of the side. :func:`decide_interval` compares two enclosures.

The softmax, the MHA, the FC network and the block are re-stated here (:func:`softmax`,
:func:`mha`, :func:`fc`, :func:`block`) rather than run through ``reference`` in interval mode:
``validation.check_array`` rejects intervals of positive width (``mpmath.isfinite`` refuses
them; so does ``MergedMHA``), and ``reference.fc`` applies ReLU through a comparison that an
interval straddling 0 cannot decide (:func:`relu` is the interval ReLU [max(0, lo), max(0, hi)]).
``reference.masked_softmax`` does run in the interval mode on point inputs (tested).

Norms are enclosed as sqrt(sum x_k^2) with x_k^2 evaluated as an interval square (never
negative); max of real values as the interval hull [max of lower ends, max of upper ends]
(:func:`hull_max`). exp(x) - 1 is evaluated with extra bits for small |x| (no cancellation);
in the chains of Theorems 9/11/14 it follows ``arithmetic.expm1``, which replaces exp(x) - 1 by a
power of two above ``arithmetic.HUGE_EXPONENT`` (:func:`chain_expm1`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import mpmath
import numpy as np
from mpmath import iv, libmp

from sltcheck.numerics import precision
from sltcheck.numerics.arithmetic import HUGE_EXPONENT, VACUOUS_BITS

# Extra bits at most for exp(x) - 1 at tiny |x| (beyond this the enclosure is merely wider).
MAX_EXTRA_BITS = 4000


class NotEnclosed(ValueError):
    """The bound needs a quantity no enclosure covers (a spectral norm)."""


def as_interval(value: object) -> Any:
    if isinstance(value, iv.mpf):
        return value
    if isinstance(value, (tuple, list)) and len(value) == 2:
        lo, hi = iv.mpf(value[0]), iv.mpf(value[1])
        return iv.mpf([lo.a, hi.b])
    return iv.mpf(value)


def decide_interval(measured_interval: object, bound_interval: object) -> str:
    """"holds" | "violated" | "undecided" from enclosures of the two sides.

    Each argument is an ``mpmath.iv.mpf``, a (low, high) pair, or a number (a point interval).
    """
    m, b = as_interval(measured_interval), as_interval(bound_interval)
    (m_lo, m_hi), (b_lo, b_hi) = m._mpi_, b._mpi_  # raw endpoints: compared exactly
    for name, ends in (("measured_interval", (m_lo, m_hi)), ("bound_interval", (b_lo, b_hi))):
        if any(e in (libmp.finf, libmp.fninf, libmp.fnan) for e in ends):
            raise ValueError(f"{name} must be a finite interval, got {m if name.startswith('m') else b}")
    if libmp.mpf_le(m_hi, b_lo):
        return "holds"
    if libmp.mpf_gt(m_lo, b_hi):
        return "violated"
    return "undecided"


# --- interval helpers -----------------------------------------------------------------------------


def ends(x: object) -> tuple[Any, Any]:
    """The endpoints of an interval as mpf, exactly (at the precision of their mantissas)."""
    lo, hi = as_interval(x)._mpi_
    bits = max(lo[3], hi[3], 53) + 10
    with mpmath.workprec(bits):
        return mpmath.mpf(lo), mpmath.mpf(hi)


def hull(values: Sequence[Any]) -> Any:
    """The smallest interval containing every interval of ``values``."""
    pairs = [ends(v) for v in values]
    return iv.mpf([min(p[0] for p in pairs), max(p[1] for p in pairs)])


def hull_max(values: Sequence[Any]) -> Any:
    """An enclosure of max(x_1, ..., x_n) for intervals x_k: [max lower ends, max upper ends]."""
    values = [as_interval(v) for v in values]
    if not values:
        raise ValueError("hull_max needs at least one interval")
    pairs = [ends(v) for v in values]
    low, high = max(p[0] for p in pairs), max(p[1] for p in pairs)
    return iv.mpf([low, high])


def square(x: Any) -> Any:
    return x**2  # iv power: [0, .] for an interval straddling zero


def norm(vector: np.ndarray) -> Any:
    """Enclosure of the Euclidean norm of a 1-D object array of intervals."""
    total = iv.mpf(0)
    for x in vector:
        total += square(x)
    return iv.sqrt(total)


def row_norms(matrix: np.ndarray) -> list[Any]:
    return [norm(row) for row in np.asarray(matrix, dtype=object).reshape(-1, matrix.shape[-1])]


def max_abs(array: np.ndarray) -> Any:
    return hull_max([abs(x) for x in np.asarray(array, dtype=object).flat]) if array.size else iv.mpf(0)


def intervals(array: object) -> np.ndarray:
    """An object array of intervals: float64 input as exact point intervals, intervals as they are."""
    array = np.asarray(array)
    if precision.is_interval(array):
        return array
    return precision.to_iv(np.asarray(array, dtype=np.float64))


def scalar(value: object) -> Any:
    """An instance's scalar field (float64 or int) as an exact point interval."""
    return iv.mpf(float(value))  # type: ignore[arg-type]


@contextlib.contextmanager
def _extra_bits(bits: int) -> Iterator[None]:
    saved = iv.prec
    iv.prec = saved + bits
    try:
        yield
    finally:
        iv.prec = saved


def expm1(x: Any) -> Any:
    """Enclosure of exp(x) - 1, with as many extra bits as the subtraction cancels (|x| < 1)."""
    lo, hi = ends(x)
    size = max(abs(lo), abs(hi))
    if size == 0:
        return iv.mpf(0)
    lost = min(MAX_EXTRA_BITS, max(0, -int(mpmath.floor(mpmath.log(size, 2))))) if size < 1 else 0
    with _extra_bits(lost + 10):
        return iv.exp(x) - 1


def _power_of_two_bound(x: Any) -> Any:
    """Enclosure of arithmetic.expm1's stand-in for exp(x) - 1 at x > HUGE_EXPONENT: 2^(ceil(v) + 1),
    v = x log2(e) (1 + 2^-40), the exponent capped at VACUOUS_BITS. The point code rounds v at
    its own precision (at least 30 digits), so the exponent is widened by a relative 2^-60."""
    lo, hi = ends(x / iv.log(2) * (1 + iv.mpf(2) ** -40))
    cap = int(VACUOUS_BITS)  # a Python int: compared with mpf exactly, never rounded
    with mpmath.workprec(400):  # every exponent below the cap (10^100 < 2^333) is exact here
        slack = mpmath.mpf(2) ** -60
        low = cap if lo >= cap else min(int(mpmath.floor(lo * (1 - slack))) + 1, cap)
        high = cap if hi >= cap else min(int(mpmath.ceil(hi * (1 + slack))) + 1, cap)
    return iv.mpf([mpmath.ldexp(1, low), mpmath.ldexp(1, high)])


def chain_expm1(x: Any) -> Any:
    """Enclosure of ``arithmetic.expm1`` (what the chains of Theorems 9, 11, 14 use for exp(x) - 1)."""
    lo, hi = ends(x)
    huge = mpmath.mpf(HUGE_EXPONENT)
    if hi <= huge:
        return expm1(x)
    if lo > huge:
        return _power_of_two_bound(x)
    # the point value is either branch, depending on where in x the real argument lies
    return hull([expm1(iv.mpf([lo, huge])), _power_of_two_bound(iv.mpf([huge, hi]))])


def width_digits(x: Any) -> float:
    """Relative width of an interval, as a number of correct significant digits."""
    lo, hi = ends(x)
    if lo == hi:
        return float("inf")
    with mpmath.workdps(30):
        scale = max(abs(lo), abs(hi))
        return float(-mpmath.log10((hi - lo) / scale)) if scale > 0 else 0.0


def stated_or_proven(star: Any, proven: Callable[[], Any]) -> Any:
    """An "as-stated" bound: eps* where eps* < 1, else the as-proven bound (``proven()``).

    Where the enclosure of eps* straddles 1 the variant is one of the two: enclose both."""
    lo, hi = ends(star)
    if hi < 1:
        return star
    other = proven()
    if lo >= 1:
        return other
    return hull([star, other])


# --- the paper's objects in intervals -------------------------------------------------------------


def softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Interval enclosure of the masked softmax along the last axis (Section 2.2).

    Shifted by the midpoint of the first attended logit's enclosure (any shift gives the
    same real value; a point shift keeps the enclosure tight)."""
    logits = np.asarray(logits, dtype=object)
    attended = np.broadcast_to(np.asarray(mask).astype(bool), logits.shape)
    out = np.empty(logits.shape, dtype=object)
    for index in np.ndindex(logits.shape[:-1]):
        row, keep = logits[index], attended[index]
        if not keep.any():
            raise ValueError(f"mask row {index} attends to no token")
        lo, hi = ends(row[np.flatnonzero(keep)[0]])
        shift = iv.mpf((lo + hi) / 2)
        weights = [iv.exp(x - shift) if k else iv.mpf(0) for x, k in zip(row, keep, strict=True)]
        total = sum(weights[1:], weights[0])
        out[index] = [w / total for w in weights]
    return out


def mha(X: np.ndarray, mask: np.ndarray, weights: Any) -> np.ndarray:
    """Interval enclosure of ``reference.mha`` (per-head form, Eqs. 1, 2): (T, d2).

    ``X`` is float64 or an array of intervals (the output of an earlier block)."""
    Xi = intervals(X)
    Q, K, V, O = (intervals(w) for w in weights.tensors())
    scale = iv.sqrt(iv.mpf(weights.d_key))
    heads = []
    for j in range(weights.heads):
        scores = (Xi @ Q[j]) @ (Xi @ K[j]).T / scale
        heads.append(softmax(scores, mask) @ (Xi @ V[j]) @ O[j])
    return np.asarray(sum(heads[1:], heads[0]), dtype=object)


def relu(x: Any) -> Any:
    """max(0, x) of an interval: [max(0, lo), max(0, hi)] (needs no comparison to be decided)."""
    lo, hi = ends(x)
    return iv.mpf([max(lo, 0), max(hi, 0)])


def fc(rows: np.ndarray, layers: Sequence[np.ndarray]) -> np.ndarray:
    """Interval enclosure of ``reference.fc``: F(x) = W_L ReLU(... ReLU(W_1 x)) on row-stored x."""
    h = intervals(rows)
    for index, layer in enumerate(layers):
        h = h @ intervals(layer).T
        if index < len(layers) - 1:
            h = np.frompyfunc(relu, 1, 1)(h)
    return np.asarray(h, dtype=object)


def block(X: np.ndarray, mask: np.ndarray, weights: Any) -> np.ndarray:
    """Interval enclosure of ``reference.block``: Blk(x_i) = F(Attn(x_i) + x_i) + Attn(x_i) + x_i."""
    residual = mha(X, mask, weights.attention) + intervals(X)
    return fc(residual, weights.fc.layers) + residual


def transformer(X: np.ndarray, mask: np.ndarray, weights: Any) -> np.ndarray:
    """Interval enclosure of ``reference.transformer``: the blocks one after the other."""
    out = intervals(X)
    for layer in weights.blocks:
        out = block(out, mask, layer)
    return out


def merged(weights: Any) -> tuple[np.ndarray, np.ndarray]:
    """Interval enclosures of W_QK = W_Q W_K^T / sqrt(d_K) and W_VO = W_V W_O (Eqs. 10, 11), (H, ., .)."""
    Q, K, V, O = (precision.to_iv(np.asarray(w, dtype=np.float64)) for w in weights.tensors())
    scale = iv.sqrt(iv.mpf(weights.d_key))
    return Q @ K.transpose(0, 2, 1) / scale, V @ O


def merged_errors(target: Any, source: Any) -> tuple[list[Any], list[Any]]:
    """Per head, enclosures of e_QK^(j) = ||dW_QK^(j)||_max and e_VO^(j) = ||dW_VO^(j)||_max.

    A head whose two factors the source reproduces exactly has error exactly 0 (as in
    ``theorem9.merged_deltas``), not the width of two enclosures of the same product."""
    (t_qk, t_vo), (s_qk, s_vo) = merged(target), merged(source)
    e_qk, e_vo = [], []
    for j in range(target.heads):
        same_qk = np.array_equal(target.W_Q[j], source.W_Q[j]) and np.array_equal(target.W_K[j], source.W_K[j])
        same_vo = np.array_equal(target.W_V[j], source.W_V[j]) and np.array_equal(target.W_O[j], source.W_O[j])
        e_qk.append(iv.mpf(0) if same_qk else max_abs(t_qk[j] - s_qk[j]))
        e_vo.append(iv.mpf(0) if same_vo else max_abs(t_vo[j] - s_vo[j]))
    return e_qk, e_vo


def gap(run: Callable[[Any], np.ndarray], target: Any, source: Any) -> Any:
    """max_i ||run(source)_i - run(target)_i||."""
    return hull_max(row_norms(run(source) - run(target)))


# --- the largest singular value (arb) -------------------------------------------------------------

SPECTRAL_BITS = 200  # arb's working precision for the Gram matrix and its eigenvalues


def _arb_of(value: Any) -> Any:
    """An mpf (an interval's end) as an exact arb."""
    from flint import arb, fmpz

    x = mpmath.mpf(value)
    if x == 0:
        return arb(0)
    sign, man, exp, _ = x._mpf_
    value = arb(fmpz(int(man))) * arb(2) ** int(exp)  # exact at SPECTRAL_BITS (mantissas are shorter)
    return -value if sign else value


def spectral_norm(matrix: np.ndarray) -> Any:
    """Enclosure of the largest singular value of every real matrix in ``matrix`` (an object array
    of intervals, or float64), through python-flint's arb (``NotEnclosed`` without it).

    The Gram matrix G = A^T A is enclosed entrywise in balls; its symmetrised midpoint M is an exact
    symmetric matrix whose eigenvalues arb encloses rigorously (``eig(multiple=True)``); every
    symmetric G in the balls is within rho = ||radii||_F of M in spectral norm, so (Weyl) its
    largest eigenvalue lies in [max lower - rho, max upper + rho]; sigma_max = sqrt of it."""
    try:
        import flint
        from flint import arb, arb_mat
    except ImportError as error:
        raise NotEnclosed("a spectral norm needs python-flint (pip install 'sltcheck[certify]')") from error
    entries = np.asarray(matrix, dtype=object)
    if entries.size == 0:
        return iv.mpf(0)
    saved = flint.ctx.prec
    flint.ctx.prec = SPECTRAL_BITS
    try:
        rows = [[_arb_of(ends(x)[0]).union(_arb_of(ends(x)[1])) for x in row] for row in entries]
        A = arb_mat(rows)
        G = A.transpose() * A if A.nrows() >= A.ncols() else A * A.transpose()
        n = G.nrows()
        mid = [[(G[i, j].mid() + G[j, i].mid()) / 2 for j in range(n)] for i in range(n)]
        radius = arb(0)
        for i in range(n):
            for j in range(n):
                r = max(G[i, j].rad(), G[j, i].rad()) + abs(mid[i][j] - G[i, j].mid())
                radius += r * r
        rho = radius.sqrt()
        values = arb_mat(mid).eig(multiple=True)
        low = max(v.real.lower() for v in values) - rho
        high = max(v.real.upper() for v in values) + rho
        low_mp = _mpf_of(low.lower(), -1)
        high_mp = _mpf_of(high.upper(), 1)
    finally:
        flint.ctx.prec = saved
    low_iv = iv.sqrt(iv.mpf([max(low_mp, 0), max(low_mp, 0)]))
    high_iv = iv.sqrt(iv.mpf([high_mp, high_mp]))
    return iv.mpf([ends(low_iv)[0], ends(high_iv)[1]])


def _mpf_of(value: Any, direction: int) -> Any:
    """An arb's end as an mpf, moved outward (``direction`` -1: down, 1: up) by its radius."""
    mid, rad = value.mid(), value.rad()
    with mpmath.workprec(SPECTRAL_BITS + 20):
        m = mpmath.mpf(mid.str(100, radius=False)) if not mid.is_zero() else mpmath.mpf(0)
        r = mpmath.mpf(rad.str(10, radius=False)) if not rad.is_zero() else mpmath.mpf(0)
        slack = abs(m) * mpmath.mpf(2) ** -(SPECTRAL_BITS - 10) + r * 2
        return m - slack if direction < 0 else m + slack
