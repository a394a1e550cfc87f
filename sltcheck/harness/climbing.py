"""The search's local optimisers over one shape's space: an instance as a vector and back, the
L-BFGS-B climb (finite differences or exact gradients) and the derivative-free Powell polish.

:mod:`sltcheck.harness.search` decides where to climb and what to keep; this module only moves a
point of a :class:`~sltcheck.harness.sequence.Space` uphill and returns it projected.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from scipy import optimize

from sltcheck.harness import sequence
from sltcheck.statement_types import Instance

# Ratios are compared at this many significant digits: two points whose float64 ratios differ only in
# the last bits (one CPU's kernels against another's) tie, and a tie keeps the order in which the points
# were made (shape, then start), so which start climbs and which point is kept does not hang on a rounding.
RANK_DIGITS = 9


def ranked(ratio: float) -> float:
    """``ratio`` as the search compares it: rounded to RANK_DIGITS significant digits (NaN, inf: -inf)."""
    return float(f"{ratio:.{RANK_DIGITS - 1}e}") if math.isfinite(ratio) else -math.inf


# A climb's exact gradient: (space, template, vector) -> (ratio, gradient), or None (finite differences).
Exact = Callable[[sequence.Space, Instance, np.ndarray], tuple[float, np.ndarray]] | None


def _parts(value: object) -> list[np.ndarray]:
    """A field as float arrays: a tuple of matrices (FC layers) gives one array each."""
    if isinstance(value, tuple | list):
        return [np.asarray(v, dtype=np.float64) for v in value]
    return [np.asarray(value, dtype=np.float64)]


def flatten(instance: Instance, free: tuple[str, ...]) -> np.ndarray:
    """The ``free`` fields of ``instance`` as one float64 vector (field by field, row-major)."""
    chunks = [np.ravel(part) for key in free for part in _parts(instance[key])]
    return np.concatenate(chunks) if chunks else np.zeros(0)


def unflatten(template: Instance, free: tuple[str, ...], vector: np.ndarray) -> Instance:
    """``template`` with its ``free`` fields read back from ``vector`` (the inverse of :func:`flatten`)."""
    out = dict(template)
    offset = 0
    for key in free:
        parts = []
        for value in _parts(template[key]):
            chunk = vector[offset : offset + value.size].reshape(value.shape)
            parts.append(float(chunk) if value.ndim == 0 else chunk.copy())
            offset += value.size
        out[key] = tuple(parts) if isinstance(template[key], tuple | list) else parts[0]
    return out


def climb(space: sequence.Space, start: Instance, ratio_of: Callable[[Instance], float], evaluations: int,
          exact: Exact = None) -> Instance:
    """L-BFGS-B from ``start`` on -ratio(project(x)) over the space's free fields (a structured
    shape's fractions included: its points are weighted instances): gradients by autograd through
    the torch projection where ``exact(space, template, x) -> (ratio, gradient)`` is given, by finite
    differences otherwise. The point returned is projected by the space's own ``project``; the
    caller evaluates its realisation in numpy, so what the search keeps is admissible whichever
    backend ran. A structured shape climbs its fractions and scalar fields first (half the
    evaluations; the tokens and weights of its starts already sit on the boundaries, where a
    projection's one-sided gradient can stall a climb of every field at once), then everything."""
    if space.found is not None and evaluations >= 2:
        first = tuple(key for key in space.free if key == sequence.MULTIPLICITY or np.ndim(start[key]) == 0)  # type: ignore[arg-type]
        if 0 < len(first) < len(space.free):
            start = climb(replace(space, free=first), start, ratio_of, evaluations // 2, exact)
            evaluations -= evaluations // 2
    free = space.free
    x0 = flatten(start, free)
    if x0.size == 0:
        return start
    scale = _scales(start, free, x0)
    options = {"maxfun": evaluations, "maxiter": evaluations, "eps": 1e-7, "ftol": 1e-15, "gtol": 1e-12}

    def objective(z: np.ndarray) -> float:
        ratio = ratio_of(space.instance(space.project(unflatten(start, free, z * scale))))
        return -ratio if math.isfinite(ratio) else 0.0

    def with_gradient(z: np.ndarray) -> tuple[float, np.ndarray]:
        assert exact is not None
        ratio, gradient = exact(space, start, z * scale)
        return (-ratio, -gradient * scale) if math.isfinite(ratio) else (0.0, np.zeros_like(z))

    bounds = [(None if lo is None else min(lo, x) / s, None if hi is None else max(hi, x) / s)
              for (lo, hi), x, s in zip(space.bounds(start), x0, scale, strict=True)]
    if exact is None:
        result = optimize.minimize(objective, x0 / scale, method="L-BFGS-B", bounds=bounds, options=options)
    else:
        result = optimize.minimize(with_gradient, x0 / scale, jac=True, method="L-BFGS-B", bounds=bounds,
                                   options=options)
    return space.project(unflatten(start, free, np.asarray(result.x) * scale))


def best_fractions(space: sequence.Space, point: Instance, ratio_of: Callable[[Instance], float]) -> Instance | None:
    """``point`` (of a structured shape) at the fractions of
    :func:`~sltcheck.harness.sequence.fraction_candidates` with the largest ratio, its tokens and weights
    held; the first of the best at RANK_DIGITS, in the candidates' order (None where there are none)."""
    assert space.found is not None
    best: tuple[float, Instance] | None = None
    for fractions in sequence.fraction_candidates(int(np.asarray(point[sequence.MULTIPLICITY]).size),
                                                   space.found.longest):
        candidate = space.project({**point, sequence.MULTIPLICITY: fractions})
        value = ratio_of(space.instance(candidate))
        if best is None or ranked(value) > best[0]:
            best = (ranked(value), candidate)
    return None if best is None else best[1]


def _scales(start: Instance, free: tuple[str, ...], x0: np.ndarray) -> np.ndarray:
    """The climb's variable scales: max(|x|, 1) for array entries; a scalar field (alpha, eps_max)
    relative to itself, so a tiny eps_max (the first-order regime, ratio ~ 1/eps in its slope)
    moves by its own size, not by 1, and the line search does not stall on it."""
    scalar = np.concatenate([np.full(part.size, part.ndim == 0) for key in free for part in _parts(start[key])])
    absolute = np.abs(x0)
    return np.where(scalar & (absolute > 0), absolute, np.maximum(absolute, 1.0))


def polish(space: sequence.Space, start: Instance, ratio_of: Callable[[Instance], float],
           evaluations: int) -> Instance | None:
    """Powell (derivative-free) from ``start`` for at most ``evaluations``, the point projected;
    None where there is nothing to move or no evaluation to spend."""
    x0 = flatten(start, space.free)
    if x0.size == 0 or evaluations <= 0:
        return None
    result = optimize.minimize(
        lambda z: -ratio_of(space.instance(space.project(unflatten(start, space.free, z)))), x0, method="Powell",
        options={"maxfev": evaluations, "xtol": 1e-12, "ftol": 1e-15},
    )
    return space.project(unflatten(start, space.free, np.asarray(result.x)))
