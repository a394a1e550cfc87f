"""Certified verdicts: "measured <= bound" decided by interval arithmetic, never by rounding.

Both sides are enclosed in outward-rounded intervals (``mpmath.iv``, through the interval mode
of :mod:`sltcheck.precision`): every float64 field of an instance is converted exactly to a
point interval, every +, -, *, /, exp, sqrt rounds outward, so each computed interval contains
the exact real value of the side. Then (:func:`decide_interval`):

- "holds"     if sup(measured) <= inf(bound): measured <= bound is proved;
- "violated"  if inf(measured) >  sup(bound): measured > bound is proved;
- "undecided" otherwise (the intervals overlap: the sides are too close for this precision,
  or equal as real numbers, as on the instances built in the tests to sit on the bound),
  or when the bound needs a quantity not enclosed here (then ``reason`` says which).

Each enclosure mirrors the point evaluation of its statement module (same formula, same
branches), so the verdict is about the same bound the searches report.

What is enclosed (``evaluate(statement, instance, variant, dps)``; :func:`supported` lists it):

- ``lemma8``: measured (max over rows of ||(sigma(l_i) - sigma(l_i + eps_i)) X||), the bound
  ``as-stated`` and the mutant ``exponent-quartered``.
- ``lemma5``: the same measured, the bounds ``as-stated`` (4 sqrt(d1) alpha eps_max) and
  ``via-lemma8``, and the mutant ``quadratic``.
- ``lemma12``: measured (max_i ||Attn_T(x_i; X) - Attn_T(x'_i; X')||), the bounds
  ``as-stated`` and ``key-scaled`` and the mutant ``value-term-only``.
- ``lemma13``: measured (the same for the block Blk_T(x) = F(Attn(x) + x) + Attn(x) + x), the
  bounds ``as-proven`` and ``as-stated`` and the mutant ``as-stated-eighth``.
- ``theorem9``: measured (max_i ||Attn_S(x_i) - Attn_T(x_i)||, the per-head MHA of
  ``reference.mha`` re-stated here for intervals) and the bounds ``as-proven`` and
  ``as-stated`` (the chain of the module docstring, from the merged deltas computed in
  intervals (:func:`merged`): max-norms, sqrt, exp).
- ``theorem11``: measured (max_i ||Blk_S(x_i) - Blk_T(x_i)||), the bounds ``as-proven``,
  ``theorem10-literal``, ``theorem10-scaled`` and ``as-stated`` (Theorem 9's as-proven chain,
  Eq. 19's r, Theorem 10 in Pensia's deterministic form or the two readings, F_T 1-Lipschitz),
  and the mutants ``half``, ``single-attention-term``, ``no-fc-term``, ``fc-input-alpha``.
- ``theorem14``: measured (max_i ||Tf_S(x_i) - Tf_T(x_i)||), the bounds ``as-proven``,
  ``lemma13-as-stated`` and ``as-stated`` (the recursion over blocks with beta_b, Lemma 13
  and Theorem 11's as-proven chain at alpha_b = max(2 beta_b, beta_b + Delta_b)), and the
  mutants ``last-block-only``, ``lipschitz-one``, ``constant-betas``.

Mutants that only drop an assumption (``no-token-norm``, ...) keep a variant's bound: evaluate
them under that variant's name.

The softmax, the MHA, the FC network and the block are re-stated here (:func:`softmax`,
:func:`mha`, :func:`fc`, :func:`block`) rather than run through ``reference`` in interval mode:
``validation.check_array`` rejects intervals of positive width (``mpmath.isfinite`` refuses
them; so does ``MergedMHA``), and ``reference.fc`` applies ReLU through a comparison that an
interval straddling 0 cannot decide (:func:`relu` is the interval ReLU [max(0, lo), max(0, hi)]).
``reference.masked_softmax`` does run in the interval mode on point inputs (tested).

Not enclosed:

- the ``tight``/``sharp`` variants of Theorems 9, 11 and 14: they need spectral norms, and an
  enclosure of the largest singular value (e.g. Rayleigh quotient below, Ostrowski +
  Gershgorin above) is not implemented;
- for the same reason, Theorem 11/14 bounds on a source FC layer pair that is not
  single-input (Theorem 10's generic delta ||A_2|| ||A_1|| + ||W_l|| is spectral): ``evaluate``
  then returns "undecided" with a ``reason`` and no bound enclosure;
- Theorem 9's mutants and Lemmas 2, 4, 7 (not attempted).

The "as-stated" variants of Theorems 9, 11, 14 fall back to "as-proven" where eps* >= 1; where
the enclosure of eps* straddles 1 the enclosure is the hull of both (:func:`stated_or_proven`).
An outcome left undecided by enclosures that cancelled most of their ``dps`` digits (a source
within 1e-30 of its target, eps_max = 1e-30) is evaluated again at twice the precision, up to
MAX_DPS digits by default ("work_dps" in the result).

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
from sltcheck.numerics.validation import check_dps

DEFAULT_DPS = 30
OUTCOMES = ("holds", "violated", "undecided")
# An undecided outcome whose two enclosures do not agree to dps - GUARD_DIGITS digits is evaluated
# again at twice the precision, up to MAX_DPS digits (enough for perturbations of 1e-30 at dps 30).
GUARD_DIGITS = 10
MAX_DPS = 120
# Extra bits at most for exp(x) - 1 at tiny |x| (beyond this the enclosure is merely wider).
MAX_EXTRA_BITS = 4000


class NotEnclosed(ValueError):
    """The bound needs a quantity this module does not enclose (a spectral norm)."""


def _as_interval(value: object) -> Any:
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
    m, b = _as_interval(measured_interval), _as_interval(bound_interval)
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
    lo, hi = _as_interval(x)._mpi_
    bits = max(lo[3], hi[3], 53) + 10
    with mpmath.workprec(bits):
        return mpmath.mpf(lo), mpmath.mpf(hi)


def hull(values: Sequence[Any]) -> Any:
    """The smallest interval containing every interval of ``values``."""
    pairs = [ends(v) for v in values]
    return iv.mpf([min(p[0] for p in pairs), max(p[1] for p in pairs)])


def hull_max(values: Sequence[Any]) -> Any:
    """An enclosure of max(x_1, ..., x_n) for intervals x_k: [max lower ends, max upper ends]."""
    values = [_as_interval(v) for v in values]
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


def _gap(run: Callable[[Any], np.ndarray], target: Any, source: Any) -> Any:
    """max_i ||run(source)_i - run(target)_i||."""
    return hull_max(row_norms(run(source) - run(target)))


# --- Lemmas 8 and 5 -------------------------------------------------------------------------------


def _lemma8_measured(instance: dict[str, Any]) -> Any:
    logits = precision.to_iv(np.asarray(instance["logits"], dtype=np.float64))
    mask = np.asarray(instance["mask"])
    pert = precision.to_iv(np.asarray(instance["perturbation"], dtype=np.float64))
    X = precision.to_iv(np.asarray(instance["X"], dtype=np.float64))
    p = softmax(logits, mask)
    q = softmax(logits + pert, mask)
    return hull_max(row_norms((p - q) @ X))


def _lemma8_bound(factor: float, exponent: float) -> Callable[[dict[str, Any]], Any]:
    def bound(instance: dict[str, Any]) -> Any:
        d1, alpha, e = (scalar(instance[k]) for k in ("d1", "alpha", "eps_max"))
        return iv.mpf(factor) * iv.sqrt(d1) * alpha * expm1(iv.mpf(exponent) * e)

    return bound


def _lemma5_linear(factor: float, power: int = 1) -> Callable[[dict[str, Any]], Any]:
    """factor sqrt(d1) alpha eps_max^power (``lemma5._linear``)."""

    def bound(instance: dict[str, Any]) -> Any:
        d1, alpha, e = (scalar(instance[k]) for k in ("d1", "alpha", "eps_max"))
        return iv.mpf(factor) * iv.sqrt(d1) * alpha * e**power

    return bound


# --- Lemmas 12 and 13 -----------------------------------------------------------------------------


def _input_shift(instance: dict[str, Any], with_block: bool) -> Any:
    """max_i ||Attn_T(x_i; X) - Attn_T(x'_i; X')|| (or Blk_T): ``_lipschitz.output_shift``."""
    from sltcheck.model.weights import BlockWeights
    from sltcheck.statements.lemma12 import lipschitz as _lipschitz

    mask = np.asarray(instance["mask"])
    attention = _lipschitz.target(instance)
    if with_block:
        weights = BlockWeights(attention, _lipschitz.fc(instance))
        outputs = [block(np.asarray(instance[k], dtype=np.float64), mask, weights) for k in ("X", "X_perturbed")]
    else:
        outputs = [mha(np.asarray(instance[k], dtype=np.float64), mask, attention) for k in ("X", "X_perturbed")]
    return hull_max(row_norms(outputs[0] - outputs[1]))


def _lemma12_measured(instance: dict[str, Any]) -> Any:
    return _input_shift(instance, with_block=False)


def _lemma13_measured(instance: dict[str, Any]) -> Any:
    return _input_shift(instance, with_block=True)


def _lipschitz_bound(factor: float, eps_weight: float, *, key_scaled: bool = False,
                     include_alpha_term: bool = True) -> Callable[[dict[str, Any]], Any]:
    """factor H sqrt(d1) (alpha (exp(4 alpha eps_max [/ sqrt(d_K)]) - 1) + w eps_max)
    (``_lipschitz.lipschitz_bound`` with its default exponent 4)."""

    def bound(instance: dict[str, Any]) -> Any:
        heads, _, d_key = np.asarray(instance["W_Q"]).shape
        d1, alpha, eps = (scalar(instance[k]) for k in ("d1", "alpha", "eps_max"))
        arg = 4 * alpha * eps / (iv.sqrt(d_key) if key_scaled else 1)
        soft = alpha * expm1(arg) if include_alpha_term else iv.mpf(0)
        return iv.mpf(factor) * heads * iv.sqrt(d1) * (soft + iv.mpf(eps_weight) * eps)

    return bound


# --- Theorem 9 ------------------------------------------------------------------------------------


def _t9_measured(instance: dict[str, Any]) -> Any:
    from sltcheck.statements import theorem9 as t9

    X = np.asarray(instance["X"], dtype=np.float64)
    mask = np.asarray(instance["mask"])
    return _gap(lambda w: mha(X, mask, w), t9.target_of(instance), t9.source_of(instance))


def t9_chain(target: Any, source: Any, token_bound: Any) -> Any:
    """Theorem 9's as-proven chain (``theorem9.chain``, "total") at token bound ``token_bound``
    (an interval): sum_j sqrt(d1) a (exp(2 a^2 d1 e_QK^(j)) - 1) + d1 sqrt(d2) a e_VO^(j)."""
    e_qk, e_vo = merged_errors(target, source)
    a = _as_interval(token_bound)
    d1, d2 = iv.mpf(target.d_in), iv.mpf(target.d_out)
    total = iv.mpf(0)
    for qk, vo in zip(e_qk, e_vo, strict=True):
        eps_j = a * a * d1 * qk
        total += iv.sqrt(d1) * a * chain_expm1(2 * eps_j) + d1 * iv.sqrt(d2) * a * vo
    return total


def t9_eps_star(target: Any, source: Any, alpha: Any) -> Any:
    """``theorem9.eps_star``: max(8 H a^3 d1^{3/2} max_j e_QK, 2 H a d1 sqrt(d2) max_j e_VO)."""
    e_qk, e_vo = merged_errors(target, source)
    a, h = _as_interval(alpha), iv.mpf(target.heads)
    d1, d2 = iv.mpf(target.d_in), iv.mpf(target.d_out)
    qk = 8 * h * a**3 * d1 * iv.sqrt(d1) * _largest(e_qk)
    vo = 2 * h * a * d1 * iv.sqrt(d2) * _largest(e_vo)
    return hull_max([qk, vo])


def _largest(errors: list[Any]) -> Any:
    return hull_max(errors) if errors else iv.mpf(0)  # no heads: max(..., default=0)


def _t9_bound(variant: str) -> Callable[[dict[str, Any]], Any]:
    def bound(instance: dict[str, Any]) -> Any:
        from sltcheck.statements import theorem9 as t9

        target, source, alpha = t9.target_of(instance), t9.source_of(instance), scalar(instance["alpha"])

        def proven() -> Any:
            return t9_chain(target, source, alpha)

        if variant == "as-stated":
            return stated_or_proven(t9_eps_star(target, source, alpha), proven)
        return proven()

    return bound


# --- Theorem 11 -----------------------------------------------------------------------------------


def fc_layer_errors(target: Any, source: Any) -> list[Any]:
    """Per target layer, an enclosure of e_l = max(||P - W_l||_max, ||N - W_l||_max)
    (``theorem11.fc_layer_errors`` for single-input source pairs).

    Raises :class:`NotEnclosed` for a pair that is not single-input: its generic delta is
    spectral. Raises ValueError for a source that is not 2L layers of matching shapes."""
    from sltcheck.statements import theorem11 as t11

    if len(source.layers) != 2 * len(target.layers):
        raise ValueError(f"pruned_source must have 2L = {2 * len(target.layers)} layers, got {len(source.layers)}")
    errors = []
    for index, W in enumerate(target.layers):
        A1, A2 = (np.asarray(m, dtype=np.float64) for m in source.layers[2 * index: 2 * index + 2])
        if A1.shape[1] != W.shape[1] or A2.shape[0] != W.shape[0]:
            raise ValueError(f"source layers {2 * index}, {2 * index + 1} must map {W.shape[1]} to {W.shape[0]}, "
                             f"got {A1.shape} and {A2.shape}")
        if not t11.single_input(A1, A2):
            raise NotEnclosed(f"source FC layers {2 * index}, {2 * index + 1} are not single-input: Theorem 10's "
                              "generic delta ||A_2|| ||A_1|| + ||W_l|| needs spectral norms, not enclosed here")
        # A_2 ReLU(A_1 x) = P ReLU(x) - N ReLU(-x): units of positive / negative incoming weight
        positive, negative = intervals(np.where(A1 > 0, A1, 0.0)), intervals(np.where(A1 < 0, A1, 0.0))
        a2, w = intervals(A2), intervals(W)
        errors.append(hull_max([max_abs(a2 @ positive - w), max_abs(a2 @ negative - w)]))
    return errors


def fc_bound(target: Any, source: Any, input_norm: Any, reading: str = "pensia") -> Any:
    """``theorem11.fc_bound`` in mode "as-proven": sup over ||z|| <= input_norm of ||F_S(z) - F_T(z)||."""
    errors = fc_layer_errors(target, source)
    r = _as_interval(input_norm)
    if reading != "pensia":
        L = len(target.layers)
        e10 = hull_max([4 * L * W.shape[0] * W.shape[1] * e for W, e in zip(target.layers, errors, strict=True)])
        if reading == "theorem10-literal":
            return chain_expm1(r * e10 / 2)
        return r * chain_expm1(e10 / 2)
    gap = iv.mpf(0)
    for W, e in zip(target.layers, errors, strict=True):
        delta = iv.sqrt(iv.mpf(W.shape[0] * W.shape[1])) * e  # sqrt(d_l d_{l+1}) e_l
        gap = gap + delta * (r + gap)  # ||W_l|| <= 1: the input norm stays r
    return gap


def t11_chain(target: Any, source: Any, token_bound: Any, reading: str = "pensia") -> dict[str, Any]:
    """``theorem11.chain`` in mode "as-proven": A (Theorem 9), r (Eq. 19), the FC term, total = FC + 2A."""
    A = t9_chain(target.attention, source.attention, token_bound)
    a = _as_interval(token_bound)
    H, root = target.attention.heads, iv.sqrt(iv.mpf(target.attention.d_in))
    r = hull_max([3 * a * H * root, A + a * (H * root + 1)])  # Eq. 19
    fc_term = fc_bound(target.fc, source.fc, r, reading)
    return {"attention": A, "fc_input": r, "fc": fc_term, "total": fc_term + A + A}  # F_T 1-Lipschitz


def t11_eps_star(target: Any, source: Any, alpha: Any) -> Any:
    """``theorem11.eps_star``: max(32 H a^3 d1^{3/2} e_QK, 8 H a d1^{3/2} e_VO, 24 a L H sqrt(d1) d_l d_{l+1} e_l)."""
    e_qk, e_vo = merged_errors(target.attention, source.attention)
    errors = fc_layer_errors(target.fc, source.fc)
    a = _as_interval(alpha)
    H, L = target.attention.heads, len(target.fc.layers)
    d1, d2 = iv.mpf(target.attention.d_in), iv.mpf(target.attention.d_out)
    root = iv.sqrt(d1)
    qk = 32 * H * a**3 * d1 * root * _largest(e_qk)
    vo = 8 * H * a * d1 * iv.sqrt(d2) * _largest(e_vo)
    ff = hull_max([24 * a * L * H * root * W.shape[0] * W.shape[1] * e
                   for W, e in zip(target.fc.layers, errors, strict=True)])
    return hull_max([qk, vo, ff])


def _t11_measured(instance: dict[str, Any]) -> Any:
    from sltcheck.statements import theorem11 as t11

    X = np.asarray(instance["X"], dtype=np.float64)
    mask = np.asarray(instance["mask"])
    return _gap(lambda w: block(X, mask, w), t11.target_of(instance), t11.source_of(instance))


def _t11_bound(variant: str) -> Callable[[dict[str, Any]], Any]:
    """A variant (or mutant) of ``theorem11``: the chain's parts combined as the module does."""

    def bound(instance: dict[str, Any]) -> Any:
        from sltcheck.statements import theorem11 as t11

        target, source, alpha = t11.target_of(instance), t11.source_of(instance), scalar(instance["alpha"])
        if variant.startswith("theorem10-"):
            return t11_chain(target, source, alpha, variant)["total"]
        parts = t11_chain(target, source, alpha)
        if variant == "as-stated":
            return stated_or_proven(t11_eps_star(target, source, alpha), lambda: parts["total"])
        if variant == "half":
            return parts["total"] / 2
        if variant == "single-attention-term":
            return parts["fc"] + parts["attention"]
        if variant == "no-fc-term":
            return 2 * parts["attention"]
        if variant == "fc-input-alpha":
            return fc_bound(target.fc, source.fc, alpha) + 2 * parts["attention"]
        return parts["total"]  # as-proven

    return bound


# --- Theorem 14 -----------------------------------------------------------------------------------


def lemma13_term(H: int, d1: int, beta: Any, delta: Any, factor: int = 2) -> Any:
    """``theorem14.lemma13``: factor H sqrt(d1) (beta (exp(4 beta delta) - 1) + 2 delta)."""
    return factor * H * iv.sqrt(iv.mpf(d1)) * (beta * chain_expm1(4 * beta * delta) + 2 * delta)


def t14_chain(target: Any, source: Any, token_bound: Any, lemma13_factor: int = 2) -> dict[str, Any]:
    """``theorem14.chain`` in mode "as-proven": per block beta_b, alpha_b, the Lemma 13 and
    Theorem 11 terms; "total" is Delta_{B+1}."""
    if len(source.blocks) != len(target.blocks):
        raise ValueError(f"pruned_source must have {len(target.blocks)} blocks, got {len(source.blocks)}")
    d1 = target.blocks[0].attention.d_in
    beta, delta = _as_interval(token_bound), iv.mpf(0)
    rows = []
    for b, (tgt, src) in enumerate(zip(target.blocks, source.blocks, strict=True)):
        H = tgt.attention.heads
        alpha_b = beta if b == 0 else hull_max([2 * beta, beta + delta])
        block_error = t11_chain(tgt, src, alpha_b)["total"]
        propagated = lemma13_term(H, d1, beta, delta, lemma13_factor)
        rows.append({"beta": beta, "alpha": alpha_b, "delta_in": delta, "lemma13": propagated,
                     "theorem11": block_error})
        delta = propagated + block_error
        beta = beta * 4 * H * iv.sqrt(iv.mpf(d1))
    return {"blocks": rows, "total": delta}


def t14_eps_star(target: Any, source: Any, alpha: Any) -> Any:
    """``theorem14.eps_star``: max_b K_b eps*_11,b(alpha_b), alpha_1 = alpha, alpha_b = 2 beta_b."""
    B, H, d1 = len(target.blocks), target.blocks[0].attention.heads, target.blocks[0].attention.d_in
    root = iv.sqrt(iv.mpf(d1))
    a = _as_interval(alpha)
    beta = [a * (4 * H * root) ** b for b in range(B)]
    stars = []
    for b, (tgt, src) in enumerate(zip(target.blocks, source.blocks, strict=True)):
        product = iv.mpf(1)
        for j in range(b + 2, B + 1):  # K_b (b 1-based): prod_{j=b+1}^B 16 H sqrt(d1) beta_j^2
            product *= 16 * H * root * beta[j - 1] ** 2
        power = B - 1 if b == 0 else B - b  # 2^{B-1} for the first block, 2^{B-b+1} (1-based) after
        alpha_b = beta[0] if b == 0 else 2 * beta[b]
        stars.append(iv.mpf(2) ** power * product * t11_eps_star(tgt, src, alpha_b))
    return hull_max(stars)


def _t14_constant_betas(target: Any, source: Any, alpha: Any) -> Any:
    """The mutant ``constant-betas``: every block's inputs taken as bounded by alpha."""
    delta = iv.mpf(0)
    for tgt, src in zip(target.blocks, source.blocks, strict=True):
        H, d1 = tgt.attention.heads, tgt.attention.d_in
        delta = lemma13_term(H, d1, alpha, delta) + t11_chain(tgt, src, alpha + delta)["total"]
    return delta


def _t14_measured(instance: dict[str, Any]) -> Any:
    from sltcheck.statements import theorem14 as t14

    X = np.asarray(instance["X"], dtype=np.float64)
    mask = np.asarray(instance["mask"])
    return _gap(lambda w: transformer(X, mask, w), t14.target_of(instance), t14.source_of(instance))


def _t14_bound(variant: str) -> Callable[[dict[str, Any]], Any]:
    """A variant (or mutant) of ``theorem14``, combined as the module does."""

    def bound(instance: dict[str, Any]) -> Any:
        from sltcheck.statements import theorem14 as t14

        target, source, alpha = t14.target_of(instance), t14.source_of(instance), scalar(instance["alpha"])
        if variant == "constant-betas":
            return _t14_constant_betas(target, source, alpha)
        if variant == "lemma13-as-stated":
            return t14_chain(target, source, alpha, lemma13_factor=1)["total"]
        if variant == "as-stated":
            return stated_or_proven(t14_eps_star(target, source, alpha),
                                    lambda: t14_chain(target, source, alpha)["total"])
        parts = t14_chain(target, source, alpha)
        if variant == "last-block-only":
            return parts["blocks"][-1]["theorem11"]
        if variant == "lipschitz-one":
            return sum((row["theorem11"] for row in parts["blocks"]), iv.mpf(0))
        return parts["total"]  # as-proven

    return bound


# --- the registry ---------------------------------------------------------------------------------


MEASURED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "lemma5": _lemma8_measured,  # Lemma 5's left side is Lemma 8's
    "lemma8": _lemma8_measured,
    "lemma12": _lemma12_measured,
    "lemma13": _lemma13_measured,
    "theorem9": _t9_measured,
    "theorem11": _t11_measured,
    "theorem14": _t14_measured,
}
BOUNDS: dict[str, dict[str, Callable[[dict[str, Any]], Any]]] = {
    "lemma5": {"as-stated": _lemma5_linear(4.0), "via-lemma8": _lemma8_bound(1.0, 2.0),
               "quadratic": _lemma5_linear(4.0, 2)},
    "lemma8": {"as-stated": _lemma8_bound(1.0, 2.0), "exponent-quartered": _lemma8_bound(1.0, 0.5)},
    "lemma12": {"as-stated": _lipschitz_bound(1.0, 1.0), "key-scaled": _lipschitz_bound(1.0, 1.0, key_scaled=True),
                "value-term-only": _lipschitz_bound(1.0, 1.0, include_alpha_term=False)},
    "lemma13": {"as-proven": _lipschitz_bound(2.0, 2.0), "as-stated": _lipschitz_bound(1.0, 2.0),
                "as-stated-eighth": _lipschitz_bound(0.125, 2.0)},
    "theorem9": {"as-proven": _t9_bound("as-proven"), "as-stated": _t9_bound("as-stated")},
    "theorem11": {name: _t11_bound(name) for name in (
        "as-proven", "theorem10-literal", "theorem10-scaled", "as-stated",
        "half", "single-attention-term", "no-fc-term", "fc-input-alpha")},
    "theorem14": {name: _t14_bound(name) for name in (
        "as-proven", "lemma13-as-stated", "as-stated", "last-block-only", "lipschitz-one", "constant-betas")},
}


def supported() -> dict[str, tuple[str, ...]]:
    """Statement -> the variants (and mutants) whose bound is enclosed here."""
    return {name: tuple(bounds) for name, bounds in BOUNDS.items()}


def default_variant(statement: str) -> str:
    """The statement module's DEFAULT_VARIANT."""
    from sltcheck.statements import load

    return str(load(statement).DEFAULT_VARIANT)


def evaluate(statement: str, instance: dict[str, Any], variant: str | None = None,
             dps: int = DEFAULT_DPS, max_dps: int | None = None) -> dict[str, Any]:
    """Enclosures of measured and bound for ``instance`` and the certified outcome.

    ``variant`` defaults to the statement module's DEFAULT_VARIANT. Where the bound needs a
    quantity not enclosed here (a spectral norm), "bound" is None, the outcome "undecided"
    and "reason" says why (otherwise "reason" is None).

    An undecided outcome whose two enclosures do not agree to ``dps`` - GUARD_DIGITS digits (they
    are blurred: a perturbation of 1e-30 cancels 30 digits) is evaluated again at twice the
    precision, up to ``max_dps`` (default max(dps, MAX_DPS)) digits. "work_dps" is the precision
    of the returned enclosures. A side that is exactly 0 (an unperturbed input) keeps an
    enclosure [0, width] at every precision: such an instance stays undecided, at ``max_dps``.
    """
    if statement not in BOUNDS:
        raise ValueError(f"statement must be one of {', '.join(BOUNDS)} (interval evaluation), got {statement!r}")
    if variant is None:
        variant = default_variant(statement)
    if variant not in BOUNDS[statement]:
        raise ValueError(f"variant must be one of {', '.join(BOUNDS[statement])} for {statement}, got {variant!r}")
    dps = check_dps(dps)
    limit = max(dps, MAX_DPS) if max_dps is None else check_dps(max_dps)
    work, result = dps, _evaluate_at(statement, instance, variant, dps)
    while result["outcome"] == "undecided" and result["reason"] is None and work < limit:
        if width_digits(hull([result["measured"], result["bound"]])) >= dps - GUARD_DIGITS:
            break  # the sides agree to the digits asked for: close, not blurred
        work = min(limit, 2 * work)
        result = _evaluate_at(statement, instance, variant, work)
    return {"dps": dps, **result}


def _evaluate_at(statement: str, instance: dict[str, Any], variant: str, work: int) -> dict[str, Any]:
    reason = None
    with precision.interval_arithmetic(work):
        m = MEASURED[statement](instance)
        try:
            b = BOUNDS[statement][variant](instance)
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
