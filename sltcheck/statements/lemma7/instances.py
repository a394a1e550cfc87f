"""Instances of Lemma 7: a target W with entries in [-1, 1], sources W1, W2 with U[-1, 1] entries, eps.

Small sizes (d1, d2 <= 3, n = d1 n' with n' <= 10) keep the exact meet-in-the-middle
solves instant. Targets: generic entries in [-1, 1], the corners +-1 and 0 (exactly
representable or far out of reach of few products), or a rescaled matrix of spectral
norm <= 1 (Lemma 4's targets, a subset of Lemma 7's).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary, strategies
from sltcheck.statements import Instance

FREE = ("W", "W1", "W2")
MAX_D = 3
MAX_N_PRIME = 10

__all__ = ["FREE", "SEARCH_COST", "instances", "project", "shapes", "sources", "start"]

SHAPES = {"d1": (1, 2), "d2": (1, 2), "n_prime": (1, 2, 3, 4, 6, 8)}
# One evaluation solves d1 d2 subset-sum problems: the search takes a quarter of its budget here.
SEARCH_COST = 4


def sources(d1: int, d2: int) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """W1 (n, d1), W2 (d2, n) with entries in [-1, 1] and n = d1 n'."""

    @st.composite
    def draw(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
        n_prime = draw(st.integers(1, MAX_N_PRIME))
        n = d1 * n_prime
        seed = draw(st.integers(0, 2**32 - 1))
        rng = np.random.default_rng(seed)
        W1, W2 = rng.uniform(-1, 1, (n, d1)), rng.uniform(-1, 1, (d2, n))
        return W1, W2

    return draw()


def eps_values() -> st.SearchStrategy[float]:
    return st.sampled_from([0.5, 0.1, 0.01]) | st.floats(1e-6, 1 - 1e-9)


def targets(d1: int, d2: int, drop: tuple[str, ...]) -> st.SearchStrategy[np.ndarray]:
    corners = st.builds(
        lambda values: np.asarray(values, dtype=np.float64).reshape(d2, d1),
        st.lists(st.sampled_from([-1.0, 0.0, 1.0, 0.5]), min_size=d1 * d2, max_size=d1 * d2),
    )
    options = [strategies.float_arrays((d2, d1)), corners, strategies.unit_spectral_matrices(d2, d1)]
    if "matrix-entries" in drop:
        options.append(strategies.float_arrays((d2, d1), -4.0, 4.0))
    return st.one_of(*options)


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    @st.composite
    def draw(draw: st.DrawFn) -> Instance:
        d1, d2 = draw(st.integers(1, MAX_D)), draw(st.integers(1, MAX_D))
        W = draw(targets(d1, d2, drop))
        W1, W2 = draw(sources(d1, d2))
        return {"W": W, "W1": W1, "W2": W2, "eps": draw(eps_values())}

    return draw()


def project(instance: Instance) -> Instance:
    out = dict(instance)
    for key in FREE:
        out[key] = np.clip(np.asarray(out[key], dtype=np.float64), -1.0, 1.0)
    return out


def shapes() -> list[dict[str, int]]:
    return boundary.ordered_shapes(SHAPES)


def source_start(shape: dict[str, int], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n = shape["d1"] * shape["n_prime"]
    return rng.uniform(-1, 1, (n, shape["d1"])), rng.uniform(-1, 1, (shape["d2"], n))


def eps_start(rng: np.random.Generator, on_boundary: bool) -> float:
    return float(rng.choice((1e-6, 0.01, 0.5, 1 - 1e-9))) if on_boundary else float(rng.uniform(1e-6, 1 - 1e-9))


def start(shape: dict[str, int], rng: np.random.Generator, *, on_boundary: bool) -> Instance:
    """Targets at the corners (entries +-1, 0, 1/2) or uniform in [-1, 1]; uniform sources."""
    size = (shape["d2"], shape["d1"])
    W = rng.choice((-1.0, 0.0, 0.5, 1.0), size) if on_boundary else rng.uniform(-1, 1, size)
    W1, W2 = source_start(shape, rng)
    return {"W": W, "W1": W1, "W2": W2, "eps": eps_start(rng, on_boundary)}
