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
from sltcheck.statement_types import Instance, Mutant
from sltcheck.statements.shared.chains import (
    instance_output_floor,
    instance_output_gap,
    instance_variants,
    no_token_norm_mutant,
    supremum_edge_mutant,
)
from sltcheck.statements.shared.chains import supremum_fraction as _supremum_fraction

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




# --- measured ------------------------------------------------------------------------------------














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










def supremum_fraction(fraction: float) -> Callable[[Instance, int | None], Any]:
    """``fraction`` x the proved upper bound of Theorem 9's worst case at the instance's achieved errors
    (sum_j a (2 tanh(a^2 ||dW_QK^(j)||_F / 2) + ||dW_VO^(j)||_F), attained on the slice e_QK = 0)."""
    return _supremum_fraction(fraction, "theorem9")


MUTANTS = [
    supremum_edge_mutant("theorem9"),
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
