"""What Theorems 9, 11 and 14 share: the output gap of a pruned source and its target (MHA, block
or transformer) with its rounding floor, and the variants and mutants built from an error chain.

Each theorem bounds max_i ||f_S(x_i) - f_T(x_i)|| for its own f (``reference.mha``, ``block``,
``transformer``) by a chain of the errors its pruned source achieves; the measured side, its
noise floor, the ``tight``/``sharp`` variants (the instance's largest token norm for alpha) and the
edge and no-token-norm mutants are written once here, over that ``forward``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np

from sltcheck.contract import submodule
from sltcheck.numerics import precision
from sltcheck.numerics.arithmetic import guided_precision, rounded, stable
from sltcheck.numerics.defaults import GUARD_DIGITS
from sltcheck.statement_types import Instance, Mutant, multiplicity_of


def max_token_norm(X: np.ndarray, dps: int | None) -> Any:
    X = np.asarray(X, dtype=np.float64)
    if dps is None:
        return float(np.linalg.norm(X, axis=1).max())
    with mpmath.workdps(dps):
        return max(precision.vector_norm(precision.to_mp(X, dps), axis=-1))


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


# Edge mutants sit this close below a proved supremum (search power, not a sanity check).
EDGE = 0.97


def supremum_fraction(fraction: float, statement: str) -> Callable[[Instance, int | None], Any]:
    """``fraction`` x the proved upper bound of ``statement``'s worst case at the instance's
    achieved errors (its ``worst_case.upper_of``; for Theorem 9
    sum_j a (2 tanh(a^2 ||dW_QK^(j)||_F / 2) + ||dW_VO^(j)||_F), attained on the slice e_QK = 0)."""

    def bound(instance: Instance, dps: int | None) -> Any:
        worst = submodule(statement, "worst_case")  # by name, through the contract: it imports the statement
        if worst is None:
            raise ValueError(f"statement must have a worst_case.py, got {statement!r}")
        value = worst.upper_of(instance, dps or 30)
        return float(value) * fraction if dps is None else value * fraction

    return bound


def supremum_edge_mutant(statement: str) -> Mutant:
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
