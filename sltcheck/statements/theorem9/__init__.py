"""Theorem 9 (appendix A.3; Theorem 3 in Section 3.2; workshop version: Theorem 8): SLTs in an MHA.

As the paper states it: "Let Attn_S(.) and Attn_T(.) be as defined in Equations (1)
and (2). Assume alpha >= max(sqrt(d1), sqrt(d2)) for the inputs. Then, with
probability at least 1 - eps, there exists a choice of binary masks
M_Q^(j), M_K^(j), M_V^(j), M_O^(j) that satisfy

    max_{i in [T]} ||Attn_S(x_i) - Attn_T(x_i)|| <= eps,

if the source dimensions satisfy

    n_K >= d1 C log(8 H alpha^3 d1^{3/2} / eps),   n_V >= d1 C log(2 H alpha d1 sqrt(d2) / eps)

for some universal constant C > 0." (Section 3.1: ||x_i|| <= alpha, every target
projection of spectral norm <= 1; the workshop's Theorem 8 is word for word the same.)

What is checked here is the deterministic part of the proof, as an *a-posteriori
bound*: given ANY pruned source (masks applied), the per-head max-norm errors it
actually achieves on the merged matrices,

    e_QK^(j) = ||W_QK^(j) - (W~'_Q ⊙ M_Q)(W~'_K ⊙ M_K)^T||_max    (Eq. 14's left side)
    e_VO^(j) = ||W_VO^(j) - (W~_V ⊙ M_V)(W~_O ⊙ M_O)||_max         (Eq. 15's left side)

(W~' = n_K^{-1/4} W~, so the first product is the pruned source's own merged
W_Q W_K^T / sqrt(n_K), Eq. 4), are pushed through the proof's chain:

1. Eq. 14 and the display after it: the logit perturbation of head j, for every
   query i and key k, is |x_i^T (W_QK - W'_QK) x_k| <= alpha^2 ||dW_QK||
   <= alpha^2 d1 e_QK^(j) =: eps_j   (||A|| <= ||A||_F <= d1 ||A||_max, A d1 x d1).
2. Lemma 8: ||(p_i - p'_i) X|| <= sqrt(d1) alpha (exp(2 eps_j) - 1).
3. Eq. 16: first term ||(p - p') X W_VO|| <= ||(p - p') X|| ||W_VO|| with
   ||W_VO^(j)|| <= 1 (Eq. 13).
4. Eq. 17: second term ||p' X dW_VO|| <= sqrt(d1) ||p' X||_inf sqrt(d1 d2) e_VO^(j)
   <= d1 sqrt(d2) alpha e_VO^(j).
5. Sum over the H heads (triangle inequality), independent of i.

    bound_as-proven = sum_j [ sqrt(d1) alpha (exp(2 alpha^2 d1 e_QK^(j)) - 1)
                              + d1 sqrt(d2) alpha e_VO^(j) ]

Every step is valid (checked one by one): Eq. 9 of Lemma 8 holds since
Z in [e^-eps, e^eps]; ||v||_2 <= sqrt(d1) ||v||_inf is used in the right direction
(Lemma 8 and Eq. 17); ||p' X||_inf <= max_k ||x_k||_inf <= alpha since p' is a
probability vector; ||dW||_2 <= ||dW||_F <= sqrt(rows cols) ||dW||_max. The only
relaxation that needs eps < 1 is exp(x) - 1 <= 2x (after Lemma 8), which the
a-posteriori chain does not use (it keeps exp). Loose steps: both sqrt(d1)
factors are unnecessary (||(p - p') X|| <= alpha sum_k |p_k - p'_k| and
||p' X|| <= alpha directly, as convex combinations of tokens), ||W_QK|| <= 1/sqrt(d_K)
(Eq. 12) is never used, and Lemma 8's exp(2 eps) - 1 overestimates
sum_k |p_k - p'_k| (~ eps for small eps) by about 2.

Slips in the text that do not affect the chain: Step 1 writes d_K^{1/4} (and
U[-d_K^{1/4}, d_K^{1/4}]) for the source rescaling where Section 3.2 and Eq. 4 need
n_K^{1/4}; p'_i is written without the primes / 1/sqrt(n_K); the n_V condition
uses an undefined eps_2; the per-head failure probability of the W_QK step is
eps sqrt(d1)/(8 H alpha^3), not eps/(8 H alpha^3 sqrt(d1)), and the final union
bound omits the factor H of the union over heads (with it the total failure
probability is eps sqrt(d1)/(8 alpha^3) + eps sqrt(d2)/(2 alpha) <= 5 eps/8, so the
conclusion survives).

Variants (``VARIANTS``; all are valid upper bounds, so violations are findings):

- ``as-proven`` (default): the chain above, with the achieved e_QK^(j), e_VO^(j).
- ``as-stated``: the theorem's own conclusion applied to the achieved errors:
  eps* = max_j max(8 H alpha^3 d1^{3/2} e_QK^(j), 2 H alpha d1 sqrt(d2) e_VO^(j)) is the
  smallest eps for which Eqs. 14 and 15 hold, and the theorem then claims
  error <= eps*. The statement needs 0 < eps < 1; where eps* >= 1 it claims
  nothing and this variant falls back to ``as-proven``.
- ``tight``: the same chain with the actual quantities: ||dW_QK^(j)|| (spectral)
  for d1 e_QK^(j), the actual ||W_VO^(j)|| for 1, the actual largest token norm a
  for alpha, and in Eq. 17 sqrt(d1) a ||dW_VO^(j)|| for d1 sqrt(d2) alpha e_VO^(j).
- ``sharp``: ``tight`` without the two unnecessary sqrt(d1) factors:
  sum_j [ a (exp(2 a^2 ||dW_QK^(j)||) - 1) ||W_VO^(j)|| + a ||dW_VO^(j)|| ].
  Its worst ratio is 1 (d1 = d2 = 1, one token on the alpha-sphere, only W_VO
  perturbed), so the value term of the chain is attained.

Instance fields: alpha, d1, d2, X (T, d1), mask (T, T), the target W_Q, W_K (H, d1, d_K),
W_V (H, d1, d_V), W_O (H, d_V, d2) and the PRUNED source S_Q, S_K (H, d1, n_K),
S_V (H, d1, n_V), S_O (H, n_V, d2) (source weights with the masks already applied).

Evaluation: measured and the achieved errors are differences of nearly equal
quantities when the source is close to the target; both are recomputed at
rising precision until two evaluations 20 digits apart agree to dps + 5 digits,
so the verdict at ``dps`` is not blurred by cancellation. ``dps=None`` is float64.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np

from sltcheck.model import reference
from sltcheck.model.weights import MHAWeights
from sltcheck.numerics import precision
from sltcheck.numerics.arithmetic import (
    expm1,
    guided_precision,
    max_abs,
    num,
    rounded,
    spectral,
    sqrt,
    stable,
    stated_or_proven,
)
from sltcheck.numerics.defaults import GUARD_DIGITS
from sltcheck.statement_types import Instance, Mutant, multiplicity_of
from sltcheck.statements.contract import submodule

# Theorem 9 (appendix A.3; Theorem 3 in Section 3.2) assumes alpha >= max(sqrt(d1), sqrt(d2)) and
# 0 < eps < 1; its tokens ||x_i|| <= alpha, target weights of spectral norm <= 1 and masks with a
# nonzero row are the setting of Section 3.1 its proof uses. eps-unit has no field here: eps is derived.
ASSUMPTIONS = ("alpha-large", "token-norm", "target-spectral", "mask-rows", "eps-unit")
MODES = ("as-proven", "tight", "sharp")
VARIANT_NAMES = ("as-proven", "as-stated", "tight", "sharp")


# --- instances -----------------------------------------------------------------------------------


def target_of(instance: Instance) -> MHAWeights:
    return MHAWeights(*(np.asarray(instance[k]) for k in ("W_Q", "W_K", "W_V", "W_O")))


def source_of(instance: Instance) -> MHAWeights:
    return MHAWeights(*(np.asarray(instance[k]) for k in ("S_Q", "S_K", "S_V", "S_O")))


def make_instance(
    target: MHAWeights, pruned_source: MHAWeights, X: np.ndarray, mask: np.ndarray, alpha: float
) -> Instance:
    """The instance dict (float64 fields) for a target, a pruned source and a sequence."""
    X = np.asarray(X, dtype=np.float64)
    out: Instance = {
        "alpha": float(alpha),
        "d1": target.d_in,
        "d2": target.d_out,
        "X": X,
        "mask": np.asarray(mask).astype(np.int8),
    }
    for key, w in zip(("W_Q", "W_K", "W_V", "W_O"), target.tensors(), strict=True):
        out[key] = np.asarray(w, dtype=np.float64)
    for key, w in zip(("S_Q", "S_K", "S_V", "S_O"), pruned_source.tensors(), strict=True):
        out[key] = np.asarray(w, dtype=np.float64)
    return out


def max_token_norm(X: np.ndarray, dps: int | None) -> Any:
    X = np.asarray(X, dtype=np.float64)
    if dps is None:
        return float(np.linalg.norm(X, axis=1).max())
    with mpmath.workdps(dps):
        return max(precision.vector_norm(precision.to_mp(X, dps), axis=-1))


# --- measured ------------------------------------------------------------------------------------


def output_gap(
    run: Callable[[np.ndarray, Any, int | None], np.ndarray],
    target: Any,
    source: Any,
    X: np.ndarray,
    mask: np.ndarray,
    dps: int | None,
) -> Any:
    """max_i ||run(X, source)_i - run(X, target)_i||, cancellation-safe in mpmath."""
    out_s, out_t = run(X, source, None), run(X, target, None)
    gap = out_s - out_t
    if dps is None:
        return float(np.linalg.norm(gap, axis=1).max())
    guess = float(np.linalg.norm(gap, axis=1).max())
    scale = float(max(np.abs(out_s).max(), np.abs(out_t).max(), 1.0))
    work0 = guided_precision([guess], scale * 4, dps)
    if work0 is not None:
        with mpmath.workdps(work0):
            gap_mp = run(X, source, work0) - run(X, target, work0)
            return rounded(max(precision.vector_norm(gap_mp, axis=-1)), dps)

    def compute(work: int) -> tuple[list[Any], None]:
        with mpmath.workdps(work):
            gap = run(X, source, work) - run(X, target, work)
            return list(precision.vector_norm(gap, axis=-1)), None

    values, _, work = stable(compute, dps, floor=scale * 10.0 ** -(dps + 5))
    with mpmath.workdps(work):
        return rounded(max(values), dps)


# Relative size below which a float64 difference of two outputs is rounding noise (a few
# hundred operations of 1.1e-16 each, with room to spare).
FLOAT64_FLOOR = 1e-12


def output_floor(outputs: np.ndarray, alpha: object, dps: int | None) -> float:
    """The absolute floor of a chain whose both sides vanish when the source equals the target:
    10^(GUARD_DIGITS - dps) times the size of the outputs (float64, at least alpha and 1). Below
    it, measured and bound are rounding noise of exact zeros: undecided. For float64
    (``dps=None``) it is FLOAT64_FLOOR times that size: a float64 output difference below it is
    cancellation noise, which the search must not climb."""
    scale = max(1.0, float(alpha), float(np.abs(outputs).max(initial=0.0)))  # type: ignore[arg-type]
    return scale * (FLOAT64_FLOOR if dps is None else 10.0 ** (GUARD_DIGITS - dps))


# (X, mask, weights, dps, multiplicity): reference.mha, block or transformer
Forward = Callable[[np.ndarray, np.ndarray, Any, int | None, Any], np.ndarray]


def instance_output_floor(forward: Forward, instance: Instance, target: Any, dps: int | None) -> float:
    """``output_floor`` of ``forward``'s target outputs at the instance's tokens and mask."""
    X, mask = np.asarray(instance["X"], dtype=np.float64), np.asarray(instance["mask"])
    return output_floor(forward(X, mask, target, None, multiplicity_of(instance)), instance["alpha"], dps)


def instance_output_gap(forward: Forward, instance: Instance, target: Any, source: Any, dps: int | None) -> Any:
    """``output_gap`` of ``forward`` at the instance's tokens and mask (token k counted
    ``multiplicity[k]`` times where the instance carries multiplicities)."""
    mask = np.asarray(instance["mask"])
    counts = multiplicity_of(instance)

    def run(X: np.ndarray, weights: Any, work: int | None) -> np.ndarray:
        return forward(X, mask, weights, work, counts)

    X = np.asarray(instance["X"], dtype=np.float64)
    return output_gap(run, target, source, X, mask, dps)


def noise_floor(instance: Instance, dps: int | None) -> float:
    return instance_output_floor(reference.mha, instance, target_of(instance), dps)


def measured(instance: Instance, dps: int | None) -> Any:
    """max_i ||Attn_S(x_i) - Attn_T(x_i)||, both MHAs in their per-head form (Eqs. 1, 2)."""
    return instance_output_gap(reference.mha, instance, target_of(instance), source_of(instance), dps)


# --- achieved errors and the chain ---------------------------------------------------------------


def merged_deltas(
    target: MHAWeights, pruned_source: MHAWeights, dps: int | None
) -> tuple[np.ndarray, np.ndarray, int | None]:
    """dW_QK = W_QK(target) - W_QK(source) (H, d1, d1) and dW_VO (H, d1, d2), with the
    precision they were computed at (cancellation-safe per head max-norm)."""
    if (
        target.heads != pruned_source.heads
        or target.d_in != pruned_source.d_in
        or (target.d_out != pruned_source.d_out)
    ):
        raise ValueError(
            f"pruned_source must have the target's H, d1, d2 = {target.heads}, {target.d_in}, "
            f"{target.d_out}, got {pruned_source.heads}, {pruned_source.d_in}, "
            f"{pruned_source.d_out}"
        )
    t, s = target.merged(None), pruned_source.merged(None)
    if dps is None:
        return t.W_QK - s.W_QK, t.W_VO - s.W_VO, None
    if all(
        np.array_equal(a, b) for a, b in zip(target.tensors(), pruned_source.tensors(), strict=True)
    ):
        with mpmath.workdps(dps):
            zero_qk, zero_vo = (precision.to_mp(np.zeros(m.shape), dps) for m in (t.W_QK, t.W_VO))
        return zero_qk, zero_vo, dps
    same_qk = [
        np.array_equal(a, b) and np.array_equal(c, e)
        for a, b, c, e in zip(
            target.W_Q, pruned_source.W_Q, target.W_K, pruned_source.W_K, strict=True
        )
    ]
    same_vo = [
        np.array_equal(a, b) and np.array_equal(c, e)
        for a, b, c, e in zip(
            target.W_V, pruned_source.W_V, target.W_O, pruned_source.W_O, strict=True
        )
    ]
    guesses = [
        float(np.abs(m).max()) for m, same in zip(t.W_QK - s.W_QK, same_qk, strict=True) if not same
    ]
    guesses += [
        float(np.abs(m).max()) for m, same in zip(t.W_VO - s.W_VO, same_vo, strict=True) if not same
    ]
    scale = max(float(np.abs(m).max()) for m in (t.W_QK, s.W_QK, t.W_VO, s.W_VO, np.ones(1)))
    work0 = guided_precision(guesses, scale * 4, dps)
    if work0 is not None:
        with mpmath.workdps(work0):
            tm, sm = target.merged(work0), pruned_source.merged(work0)
            return tm.W_QK - sm.W_QK, tm.W_VO - sm.W_VO, work0

    def compute(work: int) -> tuple[list[Any], tuple[np.ndarray, np.ndarray]]:
        with mpmath.workdps(work):
            t, s = target.merged(work), pruned_source.merged(work)
            dqk, dvo = t.W_QK - s.W_QK, t.W_VO - s.W_VO
            values = [max_abs(m, work) for m in dqk] + [max_abs(m, work) for m in dvo]
            return values, (dqk, dvo)

    _, (dqk, dvo), work = stable(compute, dps, floor=scale * 10.0 ** -(dps + 5))
    return dqk, dvo, work


def achieved_errors(
    target: MHAWeights, pruned_source: MHAWeights, dps: int | None = 50
) -> dict[str, list[Any]]:
    """Per head: e_QK^(j), e_VO^(j) (max-norm, Eqs. 14/15) and the spectral norms of
    dW_QK^(j), dW_VO^(j)."""
    dqk, dvo, work = merged_deltas(target, pruned_source, dps)
    with precision.working_precision(work):
        out = {
            "e_QK": [max_abs(m, work) for m in dqk],
            "e_VO": [max_abs(m, work) for m in dvo],
            "spec_QK": [spectral(m, work) for m in dqk],
            "spec_VO": [spectral(m, work) for m in dvo],
        }
    return {k: [rounded(v, dps) for v in vals] for k, vals in out.items()}


def chain(
    target: MHAWeights,
    pruned_source: MHAWeights,
    token_bound: object,
    dps: int | None,
    mode: str = "as-proven",
) -> dict[str, Any]:
    """The chain of Eqs. 14-17 per head: eps_j (logit perturbation), the softmax term
    (Eq. 16), the value term (Eq. 17) and their sum over heads ("total").

    ``mode``: "as-proven" (the paper's relaxations, token bound = alpha),
    "tight" (actual spectral norms) or "sharp" (tight without the sqrt(d1) factors).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    dqk, dvo, work = merged_deltas(target, pruned_source, dps)
    with precision.working_precision(work):
        a = num(token_bound, work)
        d1, d2 = num(target.d_in, work), num(target.d_out, work)
        vo = target.merged(work).W_VO
        eps, soft, value = [], [], []
        for j in range(target.heads):
            if mode == "as-proven":
                eps_j = a * a * d1 * max_abs(dqk[j], work)  # Eq. 14: ||.|| <= d1 ||.||_max
                soft_j = sqrt(d1, work) * a * expm1(2 * eps_j, work)  # Lemma 8 times ||W_VO|| <= 1
                value_j = d1 * sqrt(d2, work) * a * max_abs(dvo[j], work)  # Eq. 17
            else:
                root = sqrt(d1, work) if mode == "tight" else num(1, work)
                eps_j = a * a * spectral(dqk[j], work)
                soft_j = root * a * expm1(2 * eps_j, work) * spectral(vo[j], work)
                value_j = root * a * spectral(dvo[j], work)
            eps.append(eps_j)
            soft.append(soft_j)
            value.append(value_j)
        total = sum(soft, num(0, work)) + sum(value, num(0, work))
    return {
        "eps": [rounded(v, dps) for v in eps],
        "softmax": [rounded(v, dps) for v in soft],
        "value": [rounded(v, dps) for v in value],
        "total": rounded(total, dps),
    }


def eps_star(target: MHAWeights, pruned_source: MHAWeights, alpha: object, dps: int | None) -> Any:
    """The smallest eps for which Eqs. 14 and 15 hold for the achieved errors."""
    dqk, dvo, work = merged_deltas(target, pruned_source, dps)
    with precision.working_precision(work):
        a, h = num(alpha, work), num(target.heads, work)
        d1, d2 = num(target.d_in, work), num(target.d_out, work)
        qk = 8 * h * a**3 * d1 * sqrt(d1, work) * max((max_abs(m, work) for m in dqk), default=0)
        vo = 2 * h * a * d1 * sqrt(d2, work) * max((max_abs(m, work) for m in dvo), default=0)
        return rounded(max(qk, vo), dps)


def a_posteriori_bound(
    target: MHAWeights,
    pruned_source: MHAWeights,
    alpha: object,
    dps: int | None = 50,
    variant: str = "as-proven",
) -> Any:
    """The proof's bound on max_i ||Attn_S(x_i) - Attn_T(x_i)|| over all inputs with
    ||x_i|| <= alpha, from the errors ``pruned_source`` achieves (recomputed here).

    For "tight"/"sharp", ``alpha`` is the token-norm bound used in place of the
    actual largest token norm (pass the latter for the tightest value).
    """
    variant, star = stated_or_proven(
        variant, VARIANT_NAMES, lambda: eps_star(target, pruned_source, alpha, dps)
    )
    if star is not None:
        return star
    return chain(target, pruned_source, alpha, dps, variant)["total"]


# --- the paper's width requirements --------------------------------------------------------------


def required_widths(
    eps: float, H: int, d1: int, d2: int, alpha: float, C: float
) -> dict[str, float]:
    """Theorem 9's widths and the max-norm precisions Eqs. 14/15 ask of each merged matrix.

    n_K >= d1 C log(8 H alpha^3 d1^{3/2} / eps), n_V >= d1 C log(2 H alpha d1 sqrt(d2) / eps).
    """
    with mpmath.workdps(30):
        e, a = mpmath.mpf(eps), mpmath.mpf(alpha)
        qk = 8 * H * a**3 * mpmath.mpf(d1) ** 1.5 / e
        vo = 2 * H * a * d1 * mpmath.sqrt(d2) / e
        return {
            "n_K": float(d1 * C * mpmath.log(qk)),
            "n_V": float(d1 * C * mpmath.log(vo)),
            "e_QK": float(1 / qk),  # Eq. 14's right side
            "e_VO": float(1 / vo),  # Eq. 15's right side
        }


# --- variants and mutants ------------------------------------------------------------------------


def instance_variants(
    names: Sequence[str],
    target_of: Callable[[Instance], Any],
    source_of: Callable[[Instance], Any],
    chain: Callable[..., dict[str, Any]],
    a_posteriori_bound: Callable[..., Any],
) -> dict[str, Callable[[Instance, int | None], Any]]:
    """Each variant's bound as a function of an instance (shared by Theorems 9, 11, 14):
    ``tight`` and ``sharp`` use the instance's actual largest token norm for alpha."""

    def variant_bound(variant: str) -> Callable[[Instance, int | None], Any]:
        def bound(instance: Instance, dps: int | None) -> Any:
            target, source = target_of(instance), source_of(instance)
            if variant in ("tight", "sharp"):
                a = max_token_norm(np.asarray(instance["X"]), None if dps is None else dps + 10)
                return chain(target, source, a, dps, variant)["total"]
            return a_posteriori_bound(target, source, instance["alpha"], dps, variant)

        bound.__name__ = f"bound_{variant}".replace("-", "_")
        return bound

    return {name: variant_bound(name) for name in names}


VARIANTS = instance_variants(VARIANT_NAMES, target_of, source_of, chain, a_posteriori_bound)
DEFAULT_VARIANT = "as-proven"


def _part(
    keep: Sequence[str], combine: str = "sum", factor: float = 1.0
) -> Callable[[Instance, int | None], Any]:
    def bound(instance: Instance, dps: int | None) -> Any:
        parts = chain(target_of(instance), source_of(instance), instance["alpha"], dps)
        with precision.working_precision(dps):
            per_head = [
                sum((parts[k][j] for k in keep), num(0, dps)) for j in range(len(parts["eps"]))
            ]
            value = max(per_head) if combine == "max" else sum(per_head, num(0, dps))
            return value * num(factor, dps)

    return bound


# Edge mutants sit this close below a proved supremum (search power, not a sanity check).
EDGE = 0.97


def supremum_fraction(fraction: float, statement: str = "theorem9") -> Callable[[Instance, int | None], Any]:
    """``fraction`` x the proved upper bound of ``statement``'s worst case at the instance's
    achieved errors (its ``worst_case.upper_of``; for Theorem 9
    sum_j a (2 tanh(a^2 ||dW_QK^(j)||_F / 2) + ||dW_VO^(j)||_F), attained on the slice e_QK = 0)."""

    def bound(instance: Instance, dps: int | None) -> Any:
        worst = submodule(statement, "worst_case")  # not imported above: it imports this module
        if worst is None:
            raise ValueError(f"statement must have a worst_case.py, got {statement!r}")
        value = worst.upper_of(instance, dps or 30)
        return float(value) * fraction if dps is None else value * fraction

    return bound


def supremum_edge_mutant(statement: str = "theorem9") -> Mutant:
    """EDGE x ``statement``'s proved supremum (shared by Theorems 9 and 11, both attained on e_QK = 0)."""
    return Mutant(
        "supremum-0.97",
        "0.97 x the proved upper bound of the worst case, attained on e_QK = 0: refuted only by a search within 3%",
        supremum_fraction(EDGE, statement),
    )


def no_token_norm_mutant(variants: dict[str, Callable[[Instance, int | None], Any]]) -> Mutant:
    """The as-proven bound with the token-norm assumption dropped (shared by Theorems 9 and 11)."""
    return Mutant(
        "no-token-norm",
        "drops ||x_i|| <= alpha: tokens may exceed the alpha-sphere",
        variants["as-proven"],
        drop=("token-norm",),
    )


MUTANTS = [
    supremum_edge_mutant(),
    Mutant(
        "half",
        "the as-proven bound halved (attained at d1 = d2 = 1, one token, W_VO perturbed)",
        _part(("softmax", "value"), factor=0.5),
    ),
    Mutant(
        "max-over-heads",
        "max over heads instead of the sum over heads of Step 3",
        _part(("softmax", "value"), combine="max"),
    ),
    Mutant("no-value-term", "drops Eq. 17 (the W_VO approximation term)", _part(("softmax",))),
    Mutant("no-softmax-term", "drops Eq. 16 (the W_QK / softmax term)", _part(("value",))),
    no_token_norm_mutant(VARIANTS),
]


# Search power (sltcheck.harness.power): measured / the proved upper bound, closed form and
# attained on the slices e_QK = 0 and e_VO = 0 (sltcheck.statements.theorem9.worst_case); its torch
# twin (differentiable.py's "supremum") gives the climbs their gradients.
POWER_CASES = [{"fixed": {"H": 2, "d1": 1, "d2": 1}, "supremum": supremum_fraction(1.0), "differentiable": "supremum"}]
