"""Lemma 8 (appendix A.2; workshop version: Lemma 7): the softmax perturbation bound.

As the paper states it: "Given eps in R^{d1} as a perturbation vector such
that ||eps||_max <= eps_max for some eps_max >= 0, we have

    || sigma(x_i; a_i) X - sigma(x_i + eps; a_i) X || <= sqrt(d1) alpha (exp(2 eps_max) - 1)."

Reading (decided here, from the proof): x_i in sigma(x_i; a_i) is the vector
of the T logits of row i (x_i^T W_QK X^T in Theorem 9), so the perturbation
has T entries, eps in R^T, not R^{d1} as printed (with T != d1 the printed
statement does not type-check). X is the (T, d1) token matrix with
||x_k|| <= alpha (the proof uses |x_{k,j}| <= alpha). The left-hand side is
taken over every row i (the proof's closing remark: the bound is independent
of i, so it bounds the max over i), each row with its own perturbation row.

Instance fields: alpha, d1, X (T, d1), logits (T, T), mask (T, T),
perturbation (T, T) (row i perturbs the logits of row i), eps_max.

Variants:
- ``as-stated`` (default; the statement and the proof agree): the bound above.

Known value: the left side never exceeds 2 alpha tanh(eps_max/2), attained by
two tokens +-alpha u with logits (0, eps_max) (so p_1 = 1/(1 + e^eps_max)) and
perturbations (+eps_max, -eps_max); proved in :mod:`sltcheck.suprema`. The
ratio's supremum is therefore 2 tanh(eps_max/2) / (sqrt(d1) (e^(2 eps_max) - 1)),
which tends to 1/2 at d1 = 1 as eps_max -> 0.

Evaluation: every row in float64 through the cancellation-free form
p'_k - p_k = p_k expm1(eps_k - log1p(sum_j p_j expm1(eps_j))); the rows that
can hold the max (``sltcheck.harness.deciding_rows``) are then evaluated by
the definition, sigma(x_i + eps) - sigma(x_i), in mpmath at dps plus the
digits the subtraction cancels (about -log10(eps_max)).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from sltcheck.model import reference
from sltcheck.numerics import precision
from sltcheck.numerics.arithmetic import scalar
from sltcheck.statement_types import Instance, Mutant, multiplicity_of

ASSUMPTIONS = ("eps-max-nonneg", "perturbation-max", "token-norm", "mask-rows")


def expm1(value: object, dps: int | None) -> object:
    if dps is None:
        return math.expm1(float(value))  # type: ignore[arg-type]
    with mpmath.workdps(dps):
        return mpmath.expm1(value)


def softmax_shift_rows(
    logits: np.ndarray, mask: np.ndarray, perturbation: np.ndarray, X: np.ndarray,
    multiplicity: np.ndarray | None = None,
) -> np.ndarray:
    """float64 ||(sigma(l_i + eps_i) - sigma(l_i)) X|| for every row, without cancellation
    (``multiplicity``: token k counted n_k times, see ``reference.masked_softmax``)."""
    p = reference.masked_softmax(logits, mask, None, multiplicity)
    attended = np.asarray(mask).astype(bool)
    eps = np.where(attended, perturbation, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        small = np.log1p((p * np.expm1(eps)).sum(axis=-1, keepdims=True))  # accurate for small eps
        peak = np.where(p > 0, eps, -np.inf).max(axis=-1, keepdims=True)
        large = peak + np.log((p * np.exp(eps - peak)).sum(axis=-1, keepdims=True))  # no underflow
    log_z = np.where(np.abs(eps).max(axis=-1, keepdims=True) < 1.0, small, large)
    delta = p * np.expm1(eps - log_z)
    return np.linalg.norm(delta @ X, axis=-1)


def softmax_shift(
    logits: np.ndarray,
    mask: np.ndarray,
    perturbation: np.ndarray,
    X: np.ndarray,
    eps_max: float,
    dps: int | None,
    multiplicity: np.ndarray | None = None,
) -> object:
    """max_i ||sigma(l_i; a_i) X - sigma(l_i + eps_i; a_i) X|| (token k counted ``multiplicity[k]`` times)."""
    from sltcheck.harness import deciding_rows  # local: the harness imports statements

    scores = softmax_shift_rows(logits, mask, perturbation, X, multiplicity)
    if dps is None:
        return float(scores.max())
    rows = deciding_rows(scores)
    lost = max(0, math.ceil(-math.log10(eps_max))) if eps_max > 0 else 0
    work = dps + lost + 5
    worst = max(_row_shift(logits[i], mask[i], perturbation[i], X, work, multiplicity) for i in rows)
    with mpmath.workdps(dps):
        return +worst


def _row_shift(
    logit_row: np.ndarray, mask_row: np.ndarray, eps_row: np.ndarray, X: np.ndarray, dps: int,
    multiplicity: np.ndarray | None = None,
) -> mpmath.mpf:
    """||sigma(l; a) X - sigma(l + eps; a) X|| for one row, by the definition, at ``dps`` digits."""
    attended = np.flatnonzero(np.asarray(mask_row).astype(bool))
    counts = np.ones(len(mask_row)) if multiplicity is None else np.asarray(multiplicity, dtype=np.float64)
    with mpmath.workdps(dps):
        base = [mpmath.mpf(float(v)) for v in logit_row[attended]]
        shifted = [b + mpmath.mpf(float(e)) for b, e in zip(base, eps_row[attended], strict=True)]
        n = [mpmath.mpf(float(c)) for c in counts[attended]]

        def softmax(values: list[mpmath.mpf]) -> list[mpmath.mpf]:
            peak = max(values)
            weights = [m * mpmath.exp(v - peak) for m, v in zip(n, values, strict=True)]
            total = mpmath.fsum(weights)
            return [w / total for w in weights]

        diff = [a - b for a, b in zip(softmax(base), softmax(shifted), strict=True)]
        tokens = X[attended]
        columns = [
            mpmath.fsum(d * mpmath.mpf(float(x)) for d, x in zip(diff, tokens[:, j], strict=True))
            for j in range(X.shape[1])
        ]
        return mpmath.sqrt(mpmath.fsum(c * c for c in columns))


def measured(instance: Instance, dps: int | None) -> object:
    return softmax_shift(
        np.asarray(instance["logits"], dtype=np.float64),
        np.asarray(instance["mask"]),
        np.asarray(instance["perturbation"], dtype=np.float64),
        np.asarray(instance["X"], dtype=np.float64),
        float(instance["eps_max"]),  # type: ignore[arg-type]
        dps,
        multiplicity_of(instance),
    )


def _bound(factor: float, exponent: float, root: bool = True):
    def bound(instance: Instance, dps: int | None) -> object:
        d1, alpha = scalar(instance["d1"], dps), scalar(instance["alpha"], dps)
        eps_max = scalar(instance["eps_max"], dps)
        with precision.working_precision(dps):  # sqrt(d1) too: at mpmath's default 53 bits otherwise
            root_d1 = (math.sqrt(d1) if dps is None else mpmath.sqrt(d1)) if root else 1  # type: ignore[arg-type]
            return factor * root_d1 * alpha * expm1(exponent * eps_max, dps)  # type: ignore[operator]

    return bound


as_stated = _bound(1.0, 2.0)

# The edge mutants sit this close below a proved supremum: only a search that reaches
# 97% of the worst case refutes them (search power, not a far-off sanity check).
EDGE = 0.97


def supremum_fraction(fraction: float):
    """``fraction`` x 2 alpha tanh(eps_max/2), the supremum of the left side (proved and
    attained in :mod:`sltcheck.statements.lemma8.worst_case`)."""

    def bound(instance: Instance, dps: int | None) -> object:
        alpha, eps_max = scalar(instance["alpha"], dps), scalar(instance["eps_max"], dps)
        with precision.working_precision(dps):
            tanh = math.tanh(eps_max / 2) if dps is None else mpmath.tanh(eps_max / 2)  # type: ignore[operator]
            return fraction * 2 * alpha * tanh  # type: ignore[operator]

    return bound


VARIANTS = {"as-stated": as_stated}
DEFAULT_VARIANT = "as-stated"

# The smallest c with measured <= c x the printed bound (sltcheck.repaired): the ratio's supremum
# 2 tanh(e/2) / (sqrt(d1) (e^{2e} - 1)) at its largest, d1 = 1 and e -> 0 (worst_case.py).
REPAIRED_CONSTANTS = [
    {"variant": "as-stated", "constant": 0.5, "exact": "1/2", "attained": False, "upper": "proof",
     "where": "sltcheck/statements/lemma8/worst_case.py",
     "why": "sup = 2 alpha tanh(eps/2) (attained); over the bound it tends to 1/2 at d1 = 1 as eps -> 0"},
]

MUTANTS = [
    Mutant(
        "exponent-quartered",
        "exp(eps_max/2) - 1 instead of exp(2 eps_max) - 1 (ratio -> 2 as eps -> 0)",
        _bound(1.0, 0.5),
    ),
    Mutant(
        "supremum-0.97",
        "0.97 x the proved supremum 2 alpha tanh(eps_max/2): refuted only by a search that gets within 3%",
        supremum_fraction(EDGE),
    ),
    Mutant(
        "no-token-norm",
        "drops ||x_k|| <= alpha: tokens may exceed the alpha-sphere",
        as_stated,
        drop=("token-norm",),
    ),
    Mutant(
        "no-perturbation-max", "drops ||eps||_max <= eps_max", as_stated, drop=("perturbation-max",)
    ),
]


# Search power (sltcheck.harness.power): the search must reach the proved supremum
# 2 alpha tanh(eps_max/2) at the slack table's parameters (d1 <= 2: the search's shapes); its
# torch twin (differentiable.py's "supremum") gives the climbs their gradients.
POWER_CASES = [
    {"fixed": {"d1": d1, "alpha": math.sqrt(d1) if d1 == 1 else 1.4142135623730951 * (1 + 2**-52), "eps_max": eps},
     "supremum": supremum_fraction(1.0), "differentiable": "supremum"}
    for d1 in (1, 2)
    for eps in (1e-3, 0.1, 0.5)
]
