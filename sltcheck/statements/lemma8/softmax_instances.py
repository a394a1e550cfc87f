"""Shared instance strategy of the softmax perturbation lemmas (Lemmas 5 and 8)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sltcheck.harness import strategies as S
from sltcheck.statements import Instance

FREE = ("X", "logits", "perturbation", "eps_max")
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
            direction = X[int(round(float(draw(S.float_arrays((1,), 0.0, 1.0))[0]) * (T - 1)))]
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
            X[:, 0] = signs * alpha * S.INSIDE * (OVERSHOOT if "token-norm" in drop else 1.0)
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
    eps_max = float(np.clip(abs(float(out["eps_max"])), 0.0, eps_high))  # type: ignore[arg-type]
    out["eps_max"] = eps_max
    out["perturbation"] = np.clip(
        np.asarray(out["perturbation"], dtype=np.float64), -eps_max, eps_max
    )
    X = np.asarray(out["X"], dtype=np.float64)
    limit = float(out["alpha"]) * S.INSIDE  # type: ignore[arg-type]
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    out["X"] = np.where(norms > limit, X * (limit / np.where(norms > 0, norms, 1.0)), X)
    return out
