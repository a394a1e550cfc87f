"""Shared instance strategy of the softmax perturbation lemmas (Lemmas 5 and 8)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import boundary
from sltcheck.harness import strategies as S
from sltcheck.harness.projection import INSIDE, into_ball
from sltcheck.harness.sequence import Structure
from sltcheck.statement_types import Instance

FREE = ("alpha", "X", "logits", "perturbation", "eps_max")
SHAPES = {"d1": (1, 2), "T": (1, 2, 3, 4, 5, 6)}
# The search's sequence structure (sltcheck.harness.sequence): tokens are the rows of X and the rows
# and columns of the logits and perturbations. Token k counted n_k times is logit l_k + log n_k, so
# here the fractions add nothing a logit cannot do; they keep Lemmas 5 and 8 on the same footing.
SEQUENCE = Structure({"X": 1, "logits": 2, "perturbation": 2})
OVERSHOOT = 16.0  # how far a dropped assumption is broken


def softmax_instances(eps_high: float, drop: tuple[str, ...]) -> st.SearchStrategy[Instance]:
    @st.composite
    def draw(draw: st.DrawFn) -> Instance:
        T = draw(S.sequence_lengths())
        d1 = draw(S.dimensions())
        alpha = draw(S.alphas(d1, large=False))
        X = draw(
            S.tokens_on_alpha_sphere(
                T, d1, alpha, overshoot=OVERSHOOT if "token-norm" in drop else 1.0
            )
        )
        eps_max = draw(S.eps_maxima(0.0, eps_high))
        over = OVERSHOOT if "perturbation-max" in drop else 1.0
        perturbation = draw(S.perturbations((T, T), eps_max, overshoot=over))
        if draw(st.booleans()):
            # At the maximum and aligned with the tokens along one direction: the extreme case.
            direction = X[round(float(draw(S.float_arrays((1,), 0.0, 1.0))[0]) * (T - 1))]
            signs = np.where(X @ direction >= 0, 1.0, -1.0)
            perturbation = np.broadcast_to(signs * (eps_max * over), (T, T)).copy()
        logits = draw(S.logits(T)) if draw(st.booleans()) else np.zeros((T, T))
        mask = draw(S.attention_masks(T))
        if draw(st.integers(0, 2)) == 0:
            # The extreme configuration of the proof's inequalities: colinear tokens at
            # +-alpha in equal numbers, uniform attention, perturbations at +-eps_max
            # aligned with the tokens.
            signs = np.where(np.arange(T) % 2 == 0, 1.0, -1.0)
            X = np.zeros((T, d1))
            X[:, 0] = signs * alpha * INSIDE * (OVERSHOOT if "token-norm" in drop else 1.0)
            logits = np.zeros((T, T))
            mask = np.ones((T, T), dtype=np.int8)
            perturbation = np.broadcast_to(signs * (eps_max * over), (T, T)).copy()
        return {
            "alpha": alpha,
            "d1": d1,
            "X": X,
            "logits": logits,
            "mask": mask,
            "perturbation": perturbation,
            "eps_max": eps_max,
        }

    return draw()


def project_softmax(instance: Instance, eps_high: float) -> Instance:
    out = dict(instance)
    out["alpha"] = max(abs(float(out["alpha"])), 1e-3)  # type: ignore[arg-type]
    eps_max = float(np.clip(abs(float(out["eps_max"])), 0.0, eps_high))  # type: ignore[arg-type]
    out["eps_max"] = eps_max
    out["perturbation"] = np.clip(
        np.asarray(out["perturbation"], dtype=np.float64), -eps_max, eps_max
    )
    X = np.asarray(out["X"], dtype=np.float64)
    out["X"] = into_ball(X, float(out["alpha"]) * INSIDE)  # type: ignore[arg-type]
    return out


def softmax_start(shape: dict[str, int], rng: np.random.Generator, eps_high: float, *, on_boundary: bool) -> Instance:
    """A start for the search: tokens on a line at +-alpha with logits zero and perturbations
    at +-eps_max aligned with them (boundary), or random logits, tokens and perturbations."""
    T, d1 = shape["T"], shape["d1"]
    alpha = boundary.least_alpha(d1) if on_boundary else boundary.least_alpha(d1) * rng.uniform(1.0, 4.0)
    levels = boundary.eps_levels(0.0, eps_high)
    eps_max = float(rng.choice(levels)) if on_boundary else eps_high * rng.random() ** 3
    X = boundary.sphere_tokens(rng, T, d1, alpha, boundary=on_boundary)
    if on_boundary:
        signs = np.where(X[:, 0] >= 0, 1.0, -1.0) if rng.random() < 0.7 else rng.choice((-1.0, 1.0), T)
        perturbation = np.broadcast_to(signs * eps_max, (T, T)).copy()
        logits = np.zeros((T, T)) if rng.random() < 0.5 else rng.choice((-1.0, 0.0, 1.0), (T, T)) * eps_max
    else:
        perturbation = rng.uniform(-eps_max, eps_max, (T, T))
        logits = rng.normal(size=(T, T)) * rng.choice((0.1, 1.0, 5.0))
    return {"alpha": alpha, "d1": d1, "X": X, "logits": logits, "mask": boundary.masks(rng, T, boundary=on_boundary),
            "perturbation": perturbation, "eps_max": eps_max}
