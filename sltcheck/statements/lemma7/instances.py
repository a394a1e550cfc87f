"""Instances of Lemma 7: a target W with entries in [-1, 1], sources W1, W2 with U[-1, 1] entries, eps.

Small sizes (d1, d2 <= 3, n = d1 n') keep the exhaustive enumeration of every mask pair
(the measured side, :mod:`sltcheck.statements.lemma7.brute_force`) to milliseconds: n' is at
most ``brute_force.max_group_size(d1, d2)`` (4 for d1 = 2, d2 = 1; 3 for
2 x 2, 1 for 3 x 3) and at least 2 where allowed. Targets have d1 >= 2 columns: with d1 = 1
every mask pair is a subset sum of the n products, so the construction is optimal and the
property's two sides are equal by a theorem (that equality is a unit test,
tests/test_statements_weights.py). Targets: generic entries in [-1, 1] (half the draws), the
corners +-1, 0, 1/2 (exactly representable or far out of reach of few products), or a rescaled
matrix of spectral norm <= 1 (Lemma 4's targets, a subset of Lemma 7's); never all zero.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary, strategies
from sltcheck.harness.projection import INSIDE, scale_inside
from sltcheck.statement_types import Instance
from sltcheck.statements.lemma7.brute_force import max_group_size

FREE = ("W", "W1", "W2")
MAX_D = 3
MAX_N_PRIME = 10
# Lemma 7's draws: n' >= 2 where the enumeration allows it (with n' = 1 most targets are out
# of reach of one product per entry, and the best masks and the construction then tie).
MIN_N_PRIME = 2

__all__ = ["FREE", "SEARCH_COST", "instances", "nonzero", "project", "shapes", "sources", "start"]

SHAPES = {"d1": (1, 2), "d2": (1, 2), "n_prime": (1, 2, 3, 4, 6, 8)}  # Lemma 2's
# Lemma 7's (and 4's): d1 >= 2, n' small enough to enumerate every mask pair.
ENUMERABLE_SHAPES = {"d1": (2, 3), "d2": (1, 2, 3), "n_prime": (1, 2, 3, 4)}
# One evaluation solves d1 d2 subset-sum problems: the search takes a quarter of its budget here.
SEARCH_COST = 4


def sources(
    d1: int, d2: int, max_n_prime: int = MAX_N_PRIME, min_n_prime: int = 1
) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """W1 (n, d1), W2 (d2, n) with entries in [-1, 1] and n = d1 n', min_n_prime <= n' <= max_n_prime."""

    @st.composite
    def draw(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
        n_prime = draw(st.integers(min(min_n_prime, max_n_prime), max_n_prime))
        n = d1 * n_prime
        seed = draw(st.integers(0, 2**32 - 1))
        rng = np.random.default_rng(seed)
        W1, W2 = rng.uniform(-1, 1, (n, d1)), rng.uniform(-1, 1, (d2, n))
        return W1, W2

    return draw()


def eps_values() -> st.SearchStrategy[float]:
    return st.sampled_from([0.5, 0.1, 0.01]) | st.floats(1e-6, 1 - 1e-9)


def targets(d1: int, d2: int, drop: tuple[str, ...]) -> st.SearchStrategy[np.ndarray]:
    # Corners (+-1: out of reach of few products; 0 and 1/2: exactly reachable) are a quarter
    # of the draws: there both sides tie at |W_ij| or at 0.
    corners = st.builds(
        lambda values: np.asarray(values, dtype=np.float64).reshape(d2, d1),
        st.lists(st.sampled_from([-1.0, 0.0, 1.0, 0.5]), min_size=d1 * d2, max_size=d1 * d2),
    )
    generic = strategies.float_arrays((d2, d1))
    options = [generic, generic, corners, strategies.unit_spectral_matrices(d2, d1)]
    if "matrix-entries" in drop:
        options.append(strategies.float_arrays((d2, d1), -4.0, 4.0))
    return st.one_of(*options).filter(nonzero)


def nonzero(W: np.ndarray) -> bool:
    """The zero target is reached exactly by the empty masks (both sides 0): not drawn."""
    return bool(np.any(W != 0))


def instances(drop: tuple[str, ...] = ()) -> st.SearchStrategy[Instance]:
    return matrix_instances(targets, drop)


def matrix_instances(
    target_matrices: Callable[[int, int, tuple[str, ...]], st.SearchStrategy[np.ndarray]],
    drop: tuple[str, ...],
) -> st.SearchStrategy[Instance]:
    """Instances {W, W1, W2, eps}: W from ``target_matrices(d1, d2, drop)``, d1 >= 2, sources of an
    enumerable width (shared with Lemma 4, whose targets are spectral)."""

    @st.composite
    def draw(draw: st.DrawFn) -> Instance:
        d1, d2 = draw(st.integers(2, MAX_D)), draw(st.integers(1, MAX_D))
        W = draw(target_matrices(d1, d2, drop))
        W1, W2 = draw(sources(d1, d2, enumerable_n_prime(d1, d2), MIN_N_PRIME))
        return {"W": W, "W1": W1, "W2": W2, "eps": draw(eps_values())}

    return draw()


def project(instance: Instance) -> Instance:
    out = dict(instance)
    for key in FREE:
        out[key] = np.clip(np.asarray(out[key], dtype=np.float64), -1.0, 1.0)
    return out


def spectral_targets(d1: int, d2: int, drop: tuple[str, ...]) -> st.SearchStrategy[np.ndarray]:
    """Targets W (d2 x d1) of spectral norm <= 1, not zero (Lemmas 2 and 4); entries in [-2, 2]
    with ``matrix-spectral`` dropped."""
    if "matrix-spectral" in drop:
        return strategies.float_arrays((d2, d1), -2.0, 2.0)
    return strategies.unit_spectral_matrices(d2, d1).filter(nonzero)


def project_spectral_target(instance: Instance) -> Instance:
    """Sources W1, W2 clipped to [-1, 1] and a target W of spectral norm above INSIDE scaled to it
    (the admissible set of Lemmas 2 and 4)."""
    out = dict(instance)
    for key in ("W1", "W2"):
        out[key] = np.clip(np.asarray(out[key], dtype=np.float64), -1.0, 1.0)
    W = np.asarray(out["W"], dtype=np.float64)
    if W.size and float(np.linalg.norm(W, 2)) > INSIDE:
        W = scale_inside(W)
    out["W"] = W
    return out


def enumerable_n_prime(d1: int, d2: int) -> int:
    """The largest n' the measured side's enumeration takes (at most MAX_N_PRIME)."""
    return min(MAX_N_PRIME, max_group_size(d1, d2))


def enumerable(shape: dict[str, int]) -> bool:
    return shape["n_prime"] <= enumerable_n_prime(shape["d1"], shape["d2"])


def shapes() -> list[dict[str, int]]:
    return boundary.ordered_shapes(ENUMERABLE_SHAPES, keep=enumerable)


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
