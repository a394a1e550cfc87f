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

from sltcheck.harness.projection import INSIDE, scale_inside


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
def _unit_patterns(rows: int, cols: int) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    isometries: list[np.ndarray] = []
    for sign in (1.0, -1.0):
        isometries.append(sign * np.eye(rows, cols))
        if min(rows, cols) >= 2:
            flip, swap, turn = np.eye(rows, cols), np.zeros((rows, cols)), np.zeros((rows, cols))
            flip[1, 1] = -1.0
            swap[0, 1] = swap[1, 0] = 1.0
            turn[0, 1], turn[1, 0] = 1.0, -1.0
            isometries += [sign * flip, sign * swap, sign * turn]
    rank_ones: list[np.ndarray] = []
    if max(rows, cols) <= 3:
        for u, v in itertools.product(_sign_vectors(rows), _sign_vectors(cols)):
            for sign in (1.0, -1.0):
                rank_ones.append(sign * np.outer(u, v))

    def unique(patterns: list[np.ndarray]) -> tuple[np.ndarray, ...]:
        found: dict[bytes, np.ndarray] = {}
        for p in patterns:
            m = scale_inside(p)
            found.setdefault(m.tobytes(), m)
        return tuple(found.values())

    return unique(isometries), unique(rank_ones)


def unit_patterns(rows: int, cols: int) -> tuple[np.ndarray, ...]:
    """Matrices of spectral norm 1 (a few ulps inside): +-identities, sign flips, swaps and
    rotations by 90 degrees, and every rank-one u v^T with u, v in {-1, 0, 1}^d (for d <= 3)."""
    isometries, rank_ones = _unit_patterns(rows, cols)
    return isometries + rank_ones


def unit_pattern(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    """One of :func:`unit_patterns`: an isometry or a rank-one sign pattern, each half the time."""
    isometries, rank_ones = _unit_patterns(rows, cols)
    group = isometries if not rank_ones or rng.random() < 0.5 else rank_ones
    return group[rng.integers(len(group))]


def random_unit(rng: np.random.Generator, rows: int, cols: int, shrink: bool = False) -> np.ndarray:
    """A Gaussian matrix scaled to spectral norm 1 (or below, with ``shrink``)."""
    m = scale_inside(rng.normal(size=(rows, cols)))
    return m * rng.uniform(0.0, 1.0) if shrink and rng.random() < 0.3 else m


def pattern_stack(rng: np.random.Generator, heads: int, rows: int, cols: int, *, boundary: bool) -> np.ndarray:
    """(heads, rows, cols): boundary sign patterns (shared by every head or not), or random."""
    if not boundary:
        return np.stack([random_unit(rng, rows, cols, shrink=True) for _ in range(heads)])
    if rng.random() < 0.5:
        return np.stack([unit_pattern(rng, rows, cols)] * heads)
    return np.stack([unit_pattern(rng, rows, cols) for _ in range(heads)])


def sphere_tokens(rng: np.random.Generator, T: int, d: int, alpha: float, *, boundary: bool) -> np.ndarray:
    """(T, d) tokens of norm <= alpha: on a line through the origin at +-alpha with random
    signs (some pulled inside, the zero token included) or each on a coordinate axis at
    +-alpha (boundary); or random directions and radii."""
    limit = alpha * INSIDE
    if boundary:
        if d > 1 and rng.random() < 0.3:  # each token on its own axis: +-alpha e_1 or +-alpha e_2
            axes = np.eye(d)[rng.integers(0, 2, T)]
            return axes * rng.choice((-1.0, 1.0), (T, 1)) * limit
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


def steps(rng: np.random.Generator, X: np.ndarray, length: float) -> np.ndarray:
    """Perturbations of every token at full ``length``: along the token (outward or inward, per
    token or all alike), across it (the token turned by 90 degrees in its first two coordinates),
    or along one coordinate axis with random signs."""
    T, d = X.shape
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    along = np.where(norms > 0, X / np.where(norms > 0, norms, 1.0), np.eye(1, d))
    kind = rng.integers(3) if d > 1 else 0
    if kind == 1:
        across = np.zeros_like(along)
        across[:, 0], across[:, 1] = -along[:, 1], along[:, 0]
        along = np.where(np.linalg.norm(across, axis=1, keepdims=True) > 0, across, np.eye(1, d, 1))
    elif kind == 2:
        along = np.broadcast_to(np.eye(d)[rng.integers(d)], (T, d))
    signs = rng.choice((-1.0, 1.0), (T, 1)) if rng.random() < 0.5 else np.full((T, 1), rng.choice((-1.0, 1.0)))
    return along * signs * length


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
    "least_alpha",
    "masks",
    "ordered_shapes",
    "pattern_stack",
    "random_unit",
    "sphere_tokens",
    "steps",
    "unit_pattern",
    "unit_patterns",
]


def ordered_shapes(ranges: dict[str, tuple[int, ...]], keep=None) -> list[dict[str, int]]:
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
