"""The boundaries of the paper's assumptions, as concrete starting points for the search.

Worst cases sit where the assumptions are tight: alpha at sqrt(max(d1, d2)), tokens
on the alpha-sphere, weights of spectral norm exactly 1 in every sign pattern,
perturbations at full length. These helpers build such objects (a few ulps inside
the limit, as the strategies do, since the assumption checks run in mpmath with
no tolerance); statements combine them into instances in their ``starts``.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from sltcheck.harness.strategies import INSIDE, scale_inside


def least_alpha(d1: int, d2: int | None = None) -> float:
    """The smallest float64 alpha with alpha >= sqrt(max(d1, d2)) exactly."""
    need = max(d1, d2 or d1)
    alpha = math.sqrt(need)
    return alpha if alpha * alpha >= need else float(np.nextafter(alpha, np.inf))


def _sign_vectors(d: int) -> list[np.ndarray]:
    """Nonzero vectors with entries in {-1, 0, 1}, up to a global sign (d <= 3)."""
    out = []
    for entries in itertools.product((1.0, 0.0, -1.0), repeat=d):
        v = np.array(entries)
        first = np.flatnonzero(v)
        if first.size and v[first[0]] > 0:
            out.append(v)
    return out


@functools.lru_cache(maxsize=256)
def _unit_patterns(rows: int, cols: int) -> tuple[np.ndarray, ...]:
    patterns: list[np.ndarray] = []
    for sign in (1.0, -1.0):
        patterns.append(sign * np.eye(rows, cols))
        if min(rows, cols) >= 2:
            flip = np.eye(rows, cols)
            flip[1, 1] = -1.0
            swap = np.zeros((rows, cols))
            swap[0, 1] = swap[1, 0] = 1.0
            patterns += [sign * flip, sign * swap]
    if max(rows, cols) <= 3:
        for u, v in itertools.product(_sign_vectors(rows), _sign_vectors(cols)):
            for sign in (1.0, -1.0):
                patterns.append(sign * np.outer(u, v))
    unique: dict[bytes, np.ndarray] = {}
    for p in patterns:
        m = scale_inside(p)
        unique.setdefault(m.tobytes(), m)
    return tuple(unique.values())


def unit_patterns(rows: int, cols: int) -> tuple[np.ndarray, ...]:
    """Matrices of spectral norm 1 (a few ulps inside): +-identities, sign flips and
    swaps, and every rank-one u v^T with u, v in {-1, 0, 1}^d (for d <= 3)."""
    return _unit_patterns(rows, cols)


def random_unit(rng: np.random.Generator, rows: int, cols: int, shrink: bool = False) -> np.ndarray:
    """A Gaussian matrix scaled to spectral norm 1 (or below, with ``shrink``)."""
    m = scale_inside(rng.normal(size=(rows, cols)))
    return m * rng.uniform(0.0, 1.0) if shrink and rng.random() < 0.3 else m


def pattern_stack(rng: np.random.Generator, heads: int, rows: int, cols: int, *, boundary: bool) -> np.ndarray:
    """(heads, rows, cols): boundary sign patterns (shared by every head or not), or random."""
    if not boundary:
        return np.stack([random_unit(rng, rows, cols, shrink=True) for _ in range(heads)])
    patterns = unit_patterns(rows, cols)
    if rng.random() < 0.5:
        return np.stack([patterns[rng.integers(len(patterns))]] * heads)
    return np.stack([patterns[rng.integers(len(patterns))] for _ in range(heads)])


def sphere_tokens(rng: np.random.Generator, T: int, d: int, alpha: float, *, boundary: bool) -> np.ndarray:
    """(T, d) tokens of norm <= alpha: on a line through the origin at +-alpha with random
    signs (some pulled inside, the zero token included), or random directions and radii."""
    limit = alpha * INSIDE
    if boundary:
        direction = np.zeros(d)
        direction[0] = 1.0
        if d > 1 and rng.random() < 0.3:
            direction = rng.choice((-1.0, 0.0, 1.0), d)
            direction = direction if direction.any() else np.eye(d)[0]
            direction /= np.linalg.norm(direction)
        signs = rng.choice((-1.0, 1.0), T)
        radii = np.where(rng.random(T) < 0.2, rng.choice((0.0, 0.5), T), 1.0)
        return np.outer(signs * radii, direction) * limit
    raw = rng.normal(size=(T, d))
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    radii = np.where(rng.random((T, 1)) < 0.6, 1.0, rng.uniform(0.0, 1.0, (T, 1)))
    return raw / np.where(norms > 0, norms, 1.0) * radii * limit


def masks(rng: np.random.Generator, T: int, *, boundary: bool) -> np.ndarray:
    """(T, T) masks, each row attending to at least one token: full, causal, anti-causal,
    one token per row, or random."""
    kinds = ("full", "causal", "anticausal", "single", "random")
    kind = kinds[rng.integers(3 if boundary else len(kinds))] if T > 1 else "full"
    if kind == "full":
        return np.ones((T, T), dtype=np.int8)
    if kind == "causal":
        return np.tril(np.ones((T, T), dtype=np.int8))
    if kind == "anticausal":
        return np.triu(np.ones((T, T), dtype=np.int8))
    mask = np.zeros((T, T), dtype=np.int8) if kind == "single" else (rng.random((T, T)) < 0.5).astype(np.int8)
    mask[np.arange(T), rng.integers(0, T, T)] = 1
    return mask


def eps_levels(low: float, high: float) -> tuple[float, ...]:
    """Perturbation sizes from tiny to the largest allowed."""
    levels = [v for v in (1e-8, 1e-4, 1e-2, 0.1, 0.3, 0.5, 1.0, 2.0) if low < v <= high]
    return tuple(levels) + ((high,) if high not in levels and math.isfinite(high) else ())


__all__ = [
    "eps_levels",
    "ordered_shapes",
    "least_alpha",
    "masks",
    "pattern_stack",
    "random_unit",
    "sphere_tokens",
    "unit_patterns",
]


def ordered_shapes(ranges: dict[str, tuple[int, ...]], keep=None) -> list[dict[str, int]]:  # noqa: ANN001
    """Every combination of the discrete sizes in ``ranges``, smallest first: by how far the
    sizes other than T are above their least values, then by T (short sequences first).
    ``keep(shape) -> bool`` filters (e.g. d2 = d1 for a block)."""
    keys = list(ranges)
    shapes = [dict(zip(keys, values, strict=True)) for values in itertools.product(*ranges.values())]
    shapes = [s for s in shapes if keep is None or keep(s)]

    def size(shape: dict[str, int]) -> tuple[int, int]:
        excess = sum(shape[k] - min(ranges[k]) for k in keys if k != "T")
        return excess, shape.get("T", 0)

    return sorted(shapes, key=size)
