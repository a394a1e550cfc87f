"""Lemma 2 (Section 2.1; workshop version: Lemma 2): two layers for one (Pensia et al. 2020).

As the paper states it: "Given x in R^{d1}, W in R^{d2 x d1}, W~1 in R^{n x d1}, and
W~2 in R^{d2 x n}, we define the target and pruned source fully-connected networks as
F_T(x) := W x, F_S(x) := (W~2 ⊙ M2) ReLU((W~1 ⊙ M1) x), where M1 in {0, 1}^{n x d1}
and M2 in {0, 1}^{d2 x n} are binary pruning masks. Assume that ||W|| <= 1, ||x|| <= 1,
and each entry of W~1 and W~2 is drawn i.i.d. from U[-1, 1]. Also, for 0 < eps < 1,
suppose that the hidden dimension n satisfies n >= d1 C log(2 d1 d2 / eps) [...]. Then,
with probability at least 1 - eps, there exists a choice of binary pruning masks M1 and
M2 such that ||F_T(x) - F_S(x)|| <= eps." (The workshop version writes f, g for F_T, F_S.)

The paper quotes it without proof; the proof is Pensia et al.'s (Lemma 1 there, the
single-layer case of their Theorem 1, our Theorem 10), whose deterministic core is
(see :mod:`sltcheck.pruning.construction` and ``theorem11`` step 3): M1 keeps, in group j of
n' = n / d1 hidden units, only input j; then F_S(x) = P ReLU(x) - N ReLU(-x), with P
(N) the subset sums over the units of positive (negative) incoming weight, and
W x = W ReLU(x) - W ReLU(-x). With E = max(|P - W|, |N - W|) entrywise and
e = ||E||_max, for every x

    |F_S(x) - F_T(x)|_i <= sum_j E_ij |x_j| <= e ||x||_1,
    ||F_S(x) - F_T(x)|| <= sqrt(d2) e ||x||_1 <= sqrt(d1 d2) e ||x|| <= sqrt(d1 d2) e,

the last step by ||x|| <= 1. The width condition buys, through Lueker's subset-sum
result, e <= eps / (2 d1 d2) w.p. >= 1 - eps, hence the lemma (with room to spare).

What is checked. The masks of :func:`sltcheck.pruning.relu_layers.approximate_relu_layer` are
built on every instance and ``measured`` = ||F_T(x) - F_S(x)|| in mpmath
(:func:`sltcheck.model.reference.two_layer` with the pruned weights W~ ⊙ M). The
probabilistic part (that e is small at the stated width) is Lemma 7's subset-sum
estimate, not asserted per instance (see :func:`sltcheck.statements.lemma7.success_frequency`).

Instance fields: W (d2, d1), x (d1,), W1 (n, d1), W2 (d2, n), eps.

Variant (a violation is a finding):

- ``as-proven`` (default): sqrt(d1 d2) e, the deterministic Theorem 10 form with
  input norm 1 (:func:`sltcheck.statements.theorem11.fc_bound`, one target layer,
  mode "as-proven", reading "pensia"); uses ||x|| <= 1.

:func:`pointwise`, ||(sum_j E_ij |x_j|)_i|| (the first line above), is no variant: it equals
the measured side wherever one sign part dominates along a basis input or a target entry is
out of the products' reach (most draws: a check that can only fail by a coding error), so
it is a unit test (tests/test_statements_weights.py: measured <= pointwise <= as-proven,
equality at x = +-e_j).

Mutants: ``bound-quartered`` (as-proven / 4; the ratio reaches 1 at d1 = d2 = 1,
x = +-1), the edge mutant ``supremum-0.97`` (0.97 x as-proven: the supremum of measured /
bound is 1, so only a search that gets within 3% of it refutes it) and ``no-input-norm``
(the as-proven bound without ||x|| <= 1: it scales with ||x||).
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np

from sltcheck.model import reference
from sltcheck.model.weights import FCWeights
from sltcheck.numerics import precision
from sltcheck.pruning.construction import approximate_relu_layer, relu_layer_parts
from sltcheck.statement_types import Instance, Mutant
from sltcheck.statements.theorem11 import fc_bound

ASSUMPTIONS = ("matrix-spectral", "input-norm-unit", "eps-unit")

CONSTRUCTION_DPS = 40


def _arrays(instance: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return tuple(np.asarray(instance[key], dtype=np.float64) for key in ("W", "x", "W1", "W2"))  # type: ignore[return-value]


def pruned(instance: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(W~1 ⊙ M1, W~2 ⊙ M2, M1, M2) with the construction's masks."""
    W, _, W1, W2 = _arrays(instance)
    approximation = approximate_relu_layer(W, W1, W2, "mitm", dps=CONSTRUCTION_DPS)
    return W1 * approximation.M1, W2 * approximation.M2, approximation.M1, approximation.M2


def measured(instance: Instance, dps: int | None) -> Any:
    W, x, _, _ = _arrays(instance)
    A1, A2, _, _ = pruned(instance)
    if dps is None:
        return float(np.linalg.norm(W @ x - A2 @ np.maximum(A1 @ x, 0.0)))
    work = dps + 10
    with precision.working_precision(work):
        source = reference.two_layer(x, A1, A2, work)
        target = reference.fc(x, FCWeights((W,)), work)
        value = precision.vector_norm(target - source)
    with mpmath.workdps(dps):
        return +value


def as_proven(instance: Instance, dps: int | None) -> Any:
    W = np.asarray(instance["W"], dtype=np.float64)
    A1, A2, _, _ = pruned(instance)
    return fc_bound(FCWeights((W,)), FCWeights((A1, A2)), 1, dps, mode="as-proven", reading="pensia")


def pointwise(instance: Instance, dps: int | None) -> Any:
    W, x, W1, W2 = _arrays(instance)
    _, _, M1, M2 = pruned(instance)
    work = CONSTRUCTION_DPS if dps is None else max(dps, CONSTRUCTION_DPS)
    P, N = relu_layer_parts(W1, W2, M1, M2, work)
    with mpmath.workdps(work):
        target = precision.to_mp(W, work)
        E = np.vectorize(lambda p, q: max(abs(p), abs(q)), otypes=[object])(P - target, N - target)
        weights = [abs(mpmath.mpf(float(v))) for v in x]
        rows = [mpmath.fsum(E[i, j] * weights[j] for j in range(W.shape[1])) for i in range(W.shape[0])]
        value = mpmath.sqrt(mpmath.fsum(r * r for r in rows))
    if dps is None:
        return float(value)
    with mpmath.workdps(dps):
        return +value


def _scaled(bound: Any, factor: float) -> Any:
    def scaled(instance: Instance, dps: int | None) -> Any:
        value = bound(instance, dps)
        if dps is None:
            return factor * float(value)
        with mpmath.workdps(dps):
            return mpmath.mpf(factor) * value

    return scaled


VARIANTS = {"as-proven": as_proven}
DEFAULT_VARIANT = "as-proven"

MUTANTS = [
    Mutant("bound-quartered", "sqrt(d1 d2) e / 4 (ratio 1 at d1 = d2 = 1, x = +-1)", _scaled(as_proven, 0.25)),
    Mutant("supremum-0.97", "0.97 sqrt(d1 d2) e, at the edge: sup measured / bound is 1 (attained at d1 = d2 = 1, "
           "x = +-1), so a search that reaches the supremum refutes it", _scaled(as_proven, 0.97)),
    Mutant("no-input-norm", "drops ||x|| <= 1: the error scales with ||x||", as_proven, drop=("input-norm-unit",)),
]
