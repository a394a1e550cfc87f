"""Enclosures for certified verdicts: numbers that contain the exact real value.

Both sides of a statement are enclosed in rigorous numbers of one of the two backends of
:mod:`sltcheck.numerics.balls`: arb balls (python-flint, the extra ``certify``) or outward-rounded
``mpmath.iv`` intervals (always installed). :func:`using` picks the backend and the working
precision; outside it the backend is mpmath (``precision.interval_arithmetic`` sets its digits).
Every float64 field of an instance is converted exactly to a point (:func:`num`,
:func:`intervals`), every +, -, ``*``, /, exp, sqrt rounds outward, so each computed number contains
the exact real value of the side. :func:`decide_interval` compares two enclosures through their
exact ends (:func:`ends`). The helpers below take either backend's numbers (they dispatch on the
number) and make new ones in the active backend.

The softmax, the MHA, the FC network and the block are re-stated here (:func:`softmax`,
:func:`mha`, :func:`fc`, :func:`block`) rather than run through ``reference`` in interval mode:
``validation.check_array`` rejects intervals of positive width (``mpmath.isfinite`` refuses
them; so does ``MergedMHA``), and ``reference.fc`` applies ReLU through a comparison that an
interval straddling 0 cannot decide (:func:`relu` is the interval ReLU [max(0, lo), max(0, hi)]).
``reference.masked_softmax`` does run in the interval mode on point inputs (tested).

Norms are enclosed as sqrt(sum x_k^2) with x_k^2 evaluated as an interval square (never
negative, :func:`square`); max of real values as the hull [max of lower ends, max of upper ends]
(:func:`hull_max`). exp(x) - 1 is arb's ``expm1`` or, on mpmath, evaluated with extra bits for
small |x| (no cancellation); in the chains of Theorems 9/11/14 it follows ``arithmetic.expm1``,
which replaces exp(x) - 1 by a power of two above ``arithmetic.HUGE_EXPONENT`` (:func:`chain_expm1`).
Integer powers are repeated products (:func:`power`: arb's ``**`` of a ball is NaN near 0).

On the backend ``exact`` (:mod:`sltcheck.numerics.exact`) the helpers keep exact values where they
can (a square, a square root of a rational, a maximum, ReLU, a uniform softmax row, the norm of a
vector), so an instance made of rationals and square roots is evaluated exactly.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import mpmath
import numpy as np
from mpmath import iv

from sltcheck.numerics import exact as exactly
from sltcheck.numerics.arithmetic import HUGE_EXPONENT, VACUOUS_BITS
from sltcheck.numerics.balls import Backend, backend

# Extra bits at most for exp(x) - 1 at tiny |x| on mpmath (beyond this the enclosure is merely wider).
MAX_EXTRA_BITS = 4000

_ACTIVE: contextvars.ContextVar[Backend | None] = contextvars.ContextVar("enclosure_backend", default=None)


class NotEnclosed(ValueError):
    """The bound needs a quantity no enclosure covers (a spectral norm without python-flint)."""


@contextlib.contextmanager
def using(name: str | None, dps: int) -> Iterator[Backend]:
    """Enclose in backend ``name`` ("arb", "mpmath"; None: arb where python-flint imports) at
    ``dps`` digits: every number made inside (:func:`num`, ...) is that backend's."""
    chosen = backend(name)
    mp_backend = backend("mpmath")
    token = _ACTIVE.set(chosen)
    try:
        # mpmath's digits too: spectral_norm and the power-of-two bound work through mpf ends
        with mp_backend.working_precision(dps), chosen.working_precision(dps):
            yield chosen
    finally:
        _ACTIVE.reset(token)


def active() -> Backend:
    """The backend new numbers are made in (mpmath outside :func:`using`)."""
    chosen = _ACTIVE.get()
    return backend("mpmath") if chosen is None else chosen


def owner(x: object) -> Backend:
    """The backend whose number x is (the active one for anything else)."""
    current = active()
    if current.owns(x):
        return current
    for name in ("mpmath", "arb"):
        if name == "arb" and not _arb_imported():
            continue
        other = backend(name)
        if other.owns(x):
            return other
    return current


def _arb_imported() -> bool:
    from sltcheck.numerics.balls import arb_available

    return arb_available()


def num(value: object) -> Any:
    """An int, float or mpf as a point of the active backend (exact)."""
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    return active().number(value)


def interval_of(low: object, high: object) -> Any:
    """A number of the active backend containing [low, high] (mpf or float ends)."""
    return active().from_ends(low, high)


def up_to(low: object, high: Any) -> Any:
    """A number containing [low, high] for an mpf or float ``low`` and an enclosure ``high``: on the
    backend ``exact``, ``high``'s exact value is kept as the exact upper end (measured <= bound is
    then decided exactly from it)."""
    if isinstance(high, exactly.Exact):
        return exactly.up_to(low, high)
    return interval_of(low, ends(high)[1])


def as_interval(value: object) -> Any:
    """A number of the active backend: one of its numbers as it is, another backend's through its
    exact ends, a (low, high) pair as that interval, a number as a point."""
    current = active()
    if current.owns(value):
        return value
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return current.from_ends(_exact(value[0]), _exact(value[1]))  # never rounded inward
    if isinstance(value, (int, float, mpmath.mpf, np.integer, np.floating)):
        return num(value)
    return current.from_ends(*ends(value))


def decide_interval(measured_interval: object, bound_interval: object) -> str:
    """"holds" | "violated" | "undecided" from enclosures of the two sides.

    Each argument is a number of either backend, a (low, high) pair, or a number (a point).
    """
    pairs = []
    for name, value in (("measured_interval", measured_interval), ("bound_interval", bound_interval)):
        lo, hi = _pair(value)
        if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
            raise ValueError(f"{name} must be a finite interval, got [{lo}, {hi}]")
        pairs.append((lo, hi))
    (m_lo, m_hi), (b_lo, b_hi) = pairs  # mpf comparisons are exact
    if m_hi <= b_lo:
        return "holds"
    if m_lo > b_hi:
        return "violated"
    return "undecided"


def _pair(value: object) -> tuple[Any, Any]:
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return _exact(value[0]), _exact(value[1])
    if isinstance(value, (int, float, mpmath.mpf)):
        return _exact(value), _exact(value)
    return ends(value)


def _exact(value: object) -> Any:
    if isinstance(value, mpmath.mpf):
        return value
    if isinstance(value, int):
        return mpmath.mp.make_mpf(mpmath.libmp.from_int(value))
    return mpmath.mp.make_mpf(mpmath.libmp.from_float(float(value)))  # type: ignore[arg-type]


# --- interval helpers -----------------------------------------------------------------------------


def ends(x: object) -> tuple[Any, Any]:
    """The ends of an enclosure as mpf, exactly (-inf, +inf where it is not finite)."""
    if isinstance(x, (tuple, list)) or isinstance(x, (int, float, mpmath.mpf)):
        return _pair(x)
    return owner(x).ends(x)


def _all_exact(values: Sequence[Any]) -> bool:
    """Whether every value is a number of the backend ``exact`` (an exact value or a ball)."""
    return bool(values) and all(isinstance(v, exactly.Exact) for v in values)


def hull(values: Sequence[Any]) -> Any:
    """The smallest interval containing every interval of ``values``."""
    if _all_exact(values) and values[0].value is not None and all(
            v.value is not None and v.value.compare(values[0].value) == 0 for v in values):
        return values[0]
    pairs = [ends(v) for v in values]
    return interval_of(min(p[0] for p in pairs), max(p[1] for p in pairs))


def _all_arb(values: Sequence[Any]) -> bool:
    """Whether the active backend is arb and every value one of its balls (its own max, min, ...)."""
    current = active()
    return current.name == "arb" and all(current.owns(v) for v in values)


def hull_max(values: Sequence[Any]) -> Any:
    """An enclosure of max(x_1, ..., x_n) for intervals x_k: [max lower ends, max upper ends]."""
    if not values:
        raise ValueError("hull_max needs at least one interval")
    if _all_exact(values):
        return exactly.exact_max(list(values))
    if _all_arb(values):
        out = values[0]
        for v in values[1:]:
            out = out.max(v)  # arb_max: contains max(a, b) for every a in out, b in v
        return out
    pairs = [ends(v) for v in values]
    return interval_of(max(p[0] for p in pairs), max(p[1] for p in pairs))


def hull_min(values: Sequence[Any]) -> Any:
    """An enclosure of min(x_1, ..., x_n): [min lower ends, min upper ends]."""
    if not values:
        raise ValueError("hull_min needs at least one interval")
    if _all_exact(values):
        return exactly.exact_max(list(values), largest=False)
    if _all_arb(values):
        out = values[0]
        for v in values[1:]:
            out = out.min(v)
        return out
    pairs = [ends(v) for v in values]
    return interval_of(min(p[0] for p in pairs), min(p[1] for p in pairs))


def square(x: Any) -> Any:
    """x^2 from the ends of x, squared exactly: never below 0 (a ball's x * x can be: arb does not
    know the two factors are one number), [0, max end^2] for an interval straddling 0."""
    if isinstance(x, exactly.Exact) and x.value is not None:
        return x * x
    if _all_arb([x]):
        product = x * x
        if product >= 0:  # the whole ball: nothing to correct
            return product
    lo, hi = ends(x)
    libmp = mpmath.libmp
    low, high = sorted((libmp.mpf_abs(lo._mpf_), libmp.mpf_abs(hi._mpf_)), key=mpmath.mp.make_mpf)  # exact
    if lo < 0 < hi:
        low = libmp.fzero
    return interval_of(mpmath.mp.make_mpf(libmp.mpf_mul(low, low)), mpmath.mp.make_mpf(libmp.mpf_mul(high, high)))


def power(x: Any, exponent: int) -> Any:
    """x ** exponent for an int exponent >= 0, as repeated products."""
    if exponent < 0:
        raise ValueError(f"exponent must be an integer >= 0, got {exponent!r}")
    out = num(1)
    for _ in range(exponent):
        out = out * x
    return out


def sqrt(x: Any) -> Any:
    """sqrt of a number known to be >= 0 (a lower end below 0 by rounding is taken as 0), from the
    square roots of its two ends (increasing; a ball touching 0 would give NaN in arb)."""
    if isinstance(x, exactly.Exact) and (root := exactly.exact_sqrt(x)) is not None:
        return root
    if _all_arb([x]) and x > 0:  # the whole ball above 0: arb's sqrt is rigorous there
        return x.sqrt()
    lo, hi = ends(as_interval(x))
    current = active()
    low = ends(current.sqrt(current.from_ends(lo, lo)))[0] if lo > 0 else 0
    return interval_of(low, ends(current.sqrt(current.from_ends(hi, hi)))[1])


def exp(x: Any) -> Any:
    return active().exp(as_interval(x))


def log(x: Any) -> Any:
    return active().log(as_interval(x))


def norm(vector: np.ndarray) -> Any:
    """Enclosure of the Euclidean norm of a 1-D object array of intervals."""
    total = num(0)
    for x in vector:
        total += square(x)
    return sqrt(total)


def row_norms(matrix: np.ndarray) -> list[Any]:
    return [norm(row) for row in np.asarray(matrix, dtype=object).reshape(-1, matrix.shape[-1])]


def max_abs(array: np.ndarray) -> Any:
    return hull_max([abs(x) for x in np.asarray(array, dtype=object).flat]) if array.size else num(0)


def is_enclosure_array(array: np.ndarray) -> bool:
    """An object array whose entries are numbers of a backend (not floats)."""
    return array.dtype == object and array.size > 0 and not isinstance(array.flat[0], (int, float))


def intervals(array: object) -> np.ndarray:
    """An object array of the active backend's numbers: float64 input as exact points, numbers as
    they are (another backend's through their exact ends)."""
    array = np.asarray(array)
    if is_enclosure_array(array):
        current = active()
        if current.owns(array.flat[0]):
            return array
        return np.frompyfunc(as_interval, 1, 1)(array).astype(object)
    floats = np.asarray(array, dtype=np.float64)
    out = np.empty(floats.shape, dtype=object)
    current = active()
    for index, value in np.ndenumerate(floats):
        out[index] = current.number(float(value))
    return out


def scalar(value: object) -> Any:
    """An instance's scalar field (float64 or int) as an exact point."""
    return num(float(value))  # type: ignore[arg-type]


def expm1(x: Any) -> Any:
    """Enclosure of exp(x) - 1 without cancellation (arb's expm1; on mpmath with as many extra bits
    as the subtraction cancels, |x| < 1)."""
    x = as_interval(x)
    current = active()
    if current.name in ("arb", "exact"):
        return current.expm1(x)
    lo, hi = ends(x)
    size = max(abs(lo), abs(hi))
    if size == 0:
        return num(0)
    lost = min(MAX_EXTRA_BITS, max(0, -int(mpmath.floor(mpmath.log(size, 2))))) if size < 1 else 0
    with _extra_bits(lost + 10):
        return iv.exp(x) - 1


@contextlib.contextmanager
def _extra_bits(bits: int) -> Iterator[None]:
    saved = iv.prec
    iv.prec = saved + bits
    try:
        yield
    finally:
        iv.prec = saved


def _power_of_two_bound(x: Any) -> Any:
    """Enclosure of arithmetic.expm1's stand-in for exp(x) - 1 at x > HUGE_EXPONENT: 2^(ceil(v) + 1),
    v = x log2(e) (1 + 2^-40), the exponent capped at VACUOUS_BITS. The point code rounds v at
    its own precision (at least 30 digits), so the exponent is widened by a relative 2^-60."""
    lo, hi = ends(as_interval(x) / log(num(2)) * (1 + interval_of(mpmath.ldexp(1, -40), mpmath.ldexp(1, -40))))
    cap = int(VACUOUS_BITS)  # a Python int: compared with mpf exactly, never rounded
    with mpmath.workprec(400):  # every exponent below the cap (10^100 < 2^333) is exact here
        slack = mpmath.mpf(2) ** -60
        low = cap if lo >= cap else min(int(mpmath.floor(lo * (1 - slack))) + 1, cap)
        high = cap if hi >= cap else min(int(mpmath.ceil(hi * (1 + slack))) + 1, cap)
    return interval_of(mpmath.ldexp(1, low), mpmath.ldexp(1, high))


def chain_expm1(x: Any) -> Any:
    """Enclosure of ``arithmetic.expm1`` (what the chains of Theorems 9, 11, 14 use for exp(x) - 1)."""
    lo, hi = ends(x)
    huge = mpmath.mpf(HUGE_EXPONENT)
    if hi <= huge:
        return expm1(x)
    if lo > huge:
        return _power_of_two_bound(x)
    # the point value is either branch, depending on where in x the real argument lies
    return hull([expm1(interval_of(lo, huge)), _power_of_two_bound(interval_of(huge, hi))])


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
        live = [x for x, k in zip(row, keep, strict=True) if k]
        if _all_exact(live) and all(x.value is not None and x.value.compare(live[0].value) == 0 for x in live):
            out[index] = [num(1) / len(live) if k else num(0) for k in keep]  # equal logits: uniform, exactly
            continue
        lo, hi = ends(row[np.flatnonzero(keep)[0]])
        # any point gives the same real value; the logit itself where it is one (exp(0) = 1 exactly)
        shift = num(lo) if lo == hi else num((lo + hi) / 2)
        weights = [exp(x - shift) if k else num(0) for x, k in zip(row, keep, strict=True)]
        total = sum(weights[1:], weights[0])
        out[index] = [w / total for w in weights]
    return out


def mha(X: np.ndarray, mask: np.ndarray, weights: Any) -> np.ndarray:
    """Interval enclosure of ``reference.mha`` (per-head form, Eqs. 1, 2): (T, d2).

    ``X`` is float64 or an array of intervals (the output of an earlier block)."""
    Xi = intervals(X)
    Q, K, V, O = (intervals(w) for w in weights.tensors())
    scale = sqrt(num(weights.d_key))
    heads = []
    for j in range(weights.heads):
        scores = (Xi @ Q[j]) @ (Xi @ K[j]).T / scale
        heads.append(softmax(scores, mask) @ (Xi @ V[j]) @ O[j])
    return np.asarray(sum(heads[1:], heads[0]), dtype=object)


def relu(x: Any) -> Any:
    """max(0, x) of an interval: [max(0, lo), max(0, hi)] (needs no comparison to be decided)."""
    if isinstance(x, exactly.Exact) and (positive := exactly.relu(x)) is not None:
        return positive
    if _all_arb([x]):
        return x.max(active().number(0))
    lo, hi = ends(x)
    return interval_of(max(lo, 0), max(hi, 0))


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
    Q, K, V, O = (intervals(np.asarray(w, dtype=np.float64)) for w in weights.tensors())
    scale = sqrt(num(weights.d_key))
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
        e_qk.append(num(0) if same_qk else max_abs(t_qk[j] - s_qk[j]))
        e_vo.append(num(0) if same_vo else max_abs(t_vo[j] - s_vo[j]))
    return e_qk, e_vo


def gap(run: Callable[[Any], np.ndarray], target: Any, source: Any) -> Any:
    """max_i ||run(source)_i - run(target)_i||."""
    return hull_max(row_norms(run(source) - run(target)))


def instance_gap(forward: Callable[[np.ndarray, np.ndarray, Any], np.ndarray], instance: dict[str, Any],
                 target: Any, source: Any) -> Any:
    """``gap`` of ``forward(X, mask, weights)`` at the instance's tokens ``X`` and ``mask``."""
    X = np.asarray(instance["X"], dtype=np.float64)
    mask = np.asarray(instance["mask"])
    return gap(lambda w: forward(X, mask, w), target, source)


# --- the largest singular value (arb) -------------------------------------------------------------

SPECTRAL_BITS = 200  # arb's working precision for the Gram matrix and its eigenvalues


def _arb_of(value: Any) -> Any:
    """An mpf (an interval's end) as an exact arb (never rounded to mpmath's working precision)."""
    from flint import arb

    raw = value._mpf_ if isinstance(value, mpmath.mpf) else mpmath.mpf(value)._mpf_  # float, int: exact
    sign, man, exp, _ = raw
    if not man:
        return arb(0)
    out = arb((int(man), int(exp)))  # mantissa and exponent: exact
    return -out if sign else out


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
        return num(0)
    if active().name == "exact":
        entries = intervals(entries)
        if all(x.value is not None for x in entries.flat):
            if all(x.value.r == 0 for x in entries.flat):
                return num(0)
            if min(entries.shape[-2:]) == 1 and entries.ndim == 2:
                return norm(entries.ravel())  # a vector's spectral norm is its Euclidean norm, exactly
    saved = flint.ctx.prec
    flint.ctx.prec = SPECTRAL_BITS
    try:
        rows = [[x if isinstance(x, arb) else _arb_of(ends(x)[0]).union(_arb_of(ends(x)[1])) for x in row]
                for row in entries]
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
    low_root = sqrt(interval_of(max(low_mp, 0), max(low_mp, 0)))
    high_root = sqrt(interval_of(high_mp, high_mp))
    return interval_of(ends(low_root)[0], ends(high_root)[1])


def _mpf_of(value: Any, direction: int) -> Any:
    """An arb's end as an mpf, moved outward (``direction`` -1: down, 1: up) by its radius."""
    mid, rad = value.mid(), value.rad()
    with mpmath.workprec(SPECTRAL_BITS + 20):
        m = mpmath.mpf(mid.str(100, radius=False)) if not mid.is_zero() else mpmath.mpf(0)
        r = mpmath.mpf(rad.str(10, radius=False)) if not rad.is_zero() else mpmath.mpf(0)
        slack = abs(m) * mpmath.mpf(2) ** -(SPECTRAL_BITS - 10) + r * 2
        return m - slack if direction < 0 else m + slack
