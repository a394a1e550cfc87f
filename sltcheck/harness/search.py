"""Worst-case local search with scipy.optimize, inside the assumptions.

Started from the worst instances the property search found, the free float
fields of an instance (``FREE`` of its instance module) are flattened into one
vector; every trial vector is mapped back through the module's ``project``
(tokens into the alpha-ball, weights to spectral norm <= 1, perturbations
clipped), so the assumptions hold by construction. The objective is
measured/bound in float64 (``dps=None``; fast), maximised with Powell's
method (derivative-free, deterministic). The best instance is re-checked
against the assumptions in mpmath and decided at ``dps`` digits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from sltcheck.assumptions import violations
from sltcheck.harness.instances import module as instance_module
from sltcheck.harness.runner import PROPERTY_DPS, evaluate
from sltcheck.numerics.verdict import Verdict
from sltcheck.statements import Bound, Instance, load

# Largest number of free parameters the search takes on (bigger instances are skipped).
MAX_PARAMETERS = 400


@dataclass(frozen=True)
class SearchResult:
    instance: Instance
    ratio: float  # at dps digits
    verdict: Verdict
    start_ratio: float
    evaluations: int


def _flatten(instance: Instance, free: tuple[str, ...]) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(instance[key], dtype=np.float64)) for key in free])


def _unflatten(template: Instance, free: tuple[str, ...], vector: np.ndarray) -> Instance:
    out = dict(template)
    offset = 0
    for key in free:
        value = np.asarray(template[key], dtype=np.float64)
        size = value.size
        chunk = vector[offset : offset + size].reshape(value.shape)
        out[key] = float(chunk) if value.ndim == 0 else chunk.copy()
        offset += size
    return out


def float_ratio(
    statement: str, variant: str, instance: Instance, bound: Bound | None = None
) -> float:
    """measured/bound in float64 (0 where it cannot be evaluated)."""
    module = load(statement)
    rhs = bound if bound is not None else module.VARIANTS[variant]
    try:
        m, b = float(module.measured(instance, None)), float(rhs(instance, None))
    except (ValueError, ZeroDivisionError, FloatingPointError, OverflowError):
        return 0.0
    if not (np.isfinite(m) and np.isfinite(b)) or b <= 0:
        return 0.0
    return m / b


def local_search(
    statement: str,
    variant: str,
    start: Instance,
    *,
    max_evaluations: int = 400,
    dps: int = PROPERTY_DPS,
) -> SearchResult | None:
    """Maximise measured/bound from ``start``; ``None`` if ``start`` has too many parameters."""
    module = instance_module(statement)
    free = tuple(key for key in module.FREE if key in start)
    x0 = _flatten(start, free) if free else np.zeros(0)
    if x0.size == 0 or x0.size > MAX_PARAMETERS:
        return None
    start_ratio = float_ratio(statement, variant, module.project(dict(start)))
    count = 0

    def objective(vector: np.ndarray) -> float:
        nonlocal count
        count += 1
        ratio = float_ratio(statement, variant, module.project(_unflatten(start, free, vector)))
        return -ratio

    result = optimize.minimize(
        objective,
        x0,
        method="Powell",
        options={"maxfev": max_evaluations, "xtol": 1e-9, "ftol": 1e-12},
    )
    best = module.project(_unflatten(start, free, np.asarray(result.x)))
    if violations(statement, best) or float_ratio(statement, variant, best) < start_ratio:
        best = module.project(dict(start))
        if violations(statement, best):
            best = dict(start)
    verdict = evaluate(statement, variant, best, dps=dps)
    return SearchResult(best, verdict.ratio, verdict, start_ratio, count)
