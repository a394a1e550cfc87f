"""Random subset-sum problems of Lemma 7 (min |w - a . m|) as the paper's settings draw them.

The candidates of one target entry are products a_k = v_k u_k of two source weights:

* ``"uniform"``: Lemma 7's (Appendix A.1): v, u ~ U[-1, 1], target w ~ U[-1, 1];
* ``"xavier"``: paper mode (Appendix B.1: Xavier-uniform sources): v, u ~ U[-b, b] with
  b = sqrt(6 / (n' + 2)); the reach R+ (sum of the positive products) or |R-| (of the
  negative ones) is about 0.75 whatever n', so the targets are drawn against it, inside,
  near and beyond it in equal thirds (problem p gets third p mod 3): |w| = f R on a random
  side, f ~ U[0, 0.9) inside, U[0.9, 1.1) near (half of them just beyond), U[1.1, 1.5) beyond;
* ``"theory"``: Section 3.1's: v ~ U[-n'^(1/4), n'^(1/4)] (query/key weights, with n' the
  width of one group: d1 = 1), u ~ U[-1, 1], target w ~ U[-1, 1] (an entry of a matrix of
  spectral norm <= 1).

:func:`region` names where a target lies against its reach (``REGIONS``); the bench reports
its ratios per region too.
"""

from __future__ import annotations

import numpy as np

DISTRIBUTIONS: tuple[str, ...] = ("uniform", "xavier", "theory")
REGIONS: tuple[str, ...] = ("inside", "near", "beyond")
NEAR = (0.9, 1.1)  # |w| / reach on that side: below inside, from 1.1 beyond


def draw(distribution: str, size: int, problems: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Targets (P,) and candidates (P, size), the same for every solver; seeded per size.

    ``"uniform"`` draws exactly what ``sltcheck bench solvers`` drew before the other
    distributions existed (same seed, same instances)."""
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {', '.join(DISTRIBUTIONS)}, got {distribution!r}")
    if distribution == "uniform":
        rng = np.random.default_rng([seed, size])
        targets = rng.uniform(-1.0, 1.0, problems)
        return targets, rng.uniform(-1.0, 1.0, (problems, size)) * rng.uniform(-1.0, 1.0, (problems, size))
    rng = np.random.default_rng([seed, size, DISTRIBUTIONS.index(distribution)])
    if distribution == "theory":
        scale = size**0.25
        candidates = rng.uniform(-scale, scale, (problems, size)) * rng.uniform(-1.0, 1.0, (problems, size))
        return rng.uniform(-1.0, 1.0, problems), candidates
    bound = np.sqrt(6.0 / (size + 2))
    candidates = rng.uniform(-bound, bound, (problems, size)) * rng.uniform(-bound, bound, (problems, size))
    lows, highs = np.array([0.0, NEAR[0], NEAR[1]]), np.array([NEAR[0], NEAR[1], 1.5])
    third = np.arange(problems) % 3
    fraction = rng.uniform(lows[third], highs[third])
    positive = rng.random(problems) < 0.5
    reach_high = np.where(candidates > 0, candidates, 0.0).sum(axis=1)
    reach_low = np.where(candidates < 0, candidates, 0.0).sum(axis=1)
    return np.where(positive, fraction * reach_high, fraction * reach_low), candidates


def region(target: float, candidates: np.ndarray) -> str:
    """``"inside"``, ``"near"`` or ``"beyond"``: |w| against the reach on its side (float64, a label only)."""
    candidates = np.asarray(candidates, dtype=np.float64)
    reach = candidates[candidates > 0].sum() if target >= 0 else -candidates[candidates < 0].sum()
    ratio = abs(target) / reach if reach > 0 else np.inf
    return "inside" if ratio < NEAR[0] else ("near" if ratio < NEAR[1] else "beyond")
