"""Lemma 12 (the target MHA is Lipschitz in its input): a certified upper bound and the best
instance found.

Parameters: H, d1, d2, alpha (>= max(sqrt d1, sqrt d2)), eps_max. The measured side is
max_i ||Attn_T(x_i; X) - Attn_T(x'_i; X')|| over targets with ||W_Q||, ||W_K||, ||W_V||, ||W_O|| <= 1
(any d_K, d_V), tokens with ||x_k||, ||x'_k|| <= alpha, max_k ||x_k - x'_k|| <= eps_max and any mask.

Upper bound (proved).

    U_12 = H (2 alpha tanh(alpha eps_max / sqrt(d_K)) + eps_max) <= H (2 alpha tanh(alpha eps_max) + eps_max).

Per head, with p, p' the attention rows at X and X' and W_VO = W_V W_O (||W_VO|| <= 1),
||p X W_VO - p' X' W_VO|| <= ||(p - p') X|| + ||p' (X - X')||, and ||p' (X - X')|| <= sum_k p'_k ||x_k - x'_k||
<= eps_max (p' is a probability vector). The logits differ by
|x_i^T W x_k - x'_i^T W x'_k| <= |x_i^T W (x_k - x'_k)| + |(x_i - x'_i)^T W x'_k| <= 2 alpha eps_max ||W||, with
W = W_Q W_K^T / sqrt(d_K), ||W|| <= 1 / sqrt(d_K); p' is the softmax of the logits of p perturbed by at most
e = 2 alpha eps_max / sqrt(d_K) in max-norm, so Lemma 8's supremum (:mod:`sltcheck.statements.lemma8.worst_case`, tokens
X of norm <= alpha) gives ||(p - p') X|| <= 2 alpha tanh(e / 2). Summing over heads gives U_12; d_K = 1 gives
the largest value. Identical heads add their outputs exactly, so the supremum is H times the one-head
supremum, and the lower bound below is H times the best one-head instance found.

Lower bound (searched). Multi-start L-BFGS-B (:mod:`sltcheck.worst_case._search`) over one head in
dimension d = min(d1, 2) with d_K in {1, 2} and T in {2, 3} tokens, every point projected onto the
assumptions (weights into the spectral unit ball, tokens into the alpha-ball, X' = P(X + D) with
||D_k|| <= eps_max: the projection is nonexpansive, so ||x'_k - x_k|| <= eps_max), started from random
points and from the construction below, then embedded in d1, d2 dimensions with zeros (which changes
nothing) and its value recomputed in mpmath. A d1 = 1 search stays in one dimension.

Construction (first order in eps_max): d_K = 2, W_Q = I, W_K = the swap of e_1, e_2 (so W = swap / sqrt 2,
symmetric, e_1^T W e_1 = 0), tokens x_1 = alpha e_1, x_2 = -alpha e_1 (row 1 attends to both with
p = (1/2, 1/2)), shifts +eps_max e_2 and -eps_max e_2: each logit moves by +-2 alpha eps_max / sqrt 2, and
||(p - p') X|| = sqrt 2 alpha^2 eps_max + O(eps_max^2), while the value term cancels (p (X - X') = 0).
With d_K = 1 (a rank-one W = q k^T) a first-order heuristic (not a proof) gives the same value: the
spread of the logit changes is about eps |k . (x_k - x_m)| + alpha |k . (dx_k - dx_m)|, at most
2 sqrt 2 alpha eps for tokens of norm alpha. The searches find a little more than sqrt 2 alpha^2 eps_max
(the value term and the softmax's curvature), never more than U_12. So the supremum lies between about
sqrt 2 alpha^2 eps and 2 alpha^2 eps + eps to first order and is not known; the report gives the
bracket and the slack range bound / U_12 ... bound / lower.

Slack of the paper's bound H sqrt(d1) (alpha (e^{4 alpha eps} - 1) + eps) (bound / U_12, a lower end for
the true slack): sqrt(d1) (4 alpha^2 + 1) / (2 alpha^2 + 1) as eps -> 0 (between 5/3 and 2 times sqrt(d1) for
alpha >= 1), growing like sqrt(d1) alpha e^{4 alpha eps} / (2 alpha + eps) for large eps.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sltcheck.worst_case._common import BRACKET, alpha_for, nonneg, positive_int, result
from sltcheck.worst_case._search import Unpacker, best_instance, into_ball, pad, spectral_unit

PARAMS = ("H", "d1", "d2", "alpha", "eps_max")


def upper(H: int, alpha: float, eps_max: float, d_key: int = 1) -> float:
    return H * (2 * alpha * math.tanh(alpha * eps_max / math.sqrt(d_key)) + eps_max)


def paper_bound(H: int, d1: int, alpha: float, eps_max: float) -> float:
    return H * math.sqrt(d1) * (alpha * math.expm1(4 * alpha * eps_max) + eps_max)


class Layout:
    """One head's parameters in dimension d (keys d_key, T tokens, L FC layers) as a flat vector."""

    def __init__(self, d: int, d_key: int, T: int, L: int = 0) -> None:
        self.d, self.d_key, self.T, self.L = d, d_key, T, L
        self.size = 2 * d * d_key + 2 * d * d + 2 * T * d + L * d * d

    def build(self, z: np.ndarray, H: int, d1: int, d2: int, alpha: float, eps_max: float) -> dict[str, Any]:
        d, dk, T = self.d, self.d_key, self.T
        take = Unpacker(z).take
        W_Q, W_K = spectral_unit(take(d, dk)), spectral_unit(take(d, dk))
        W_V, W_O = spectral_unit(take(d, d)), spectral_unit(take(d, d))
        X = into_ball(take(T, d), alpha)
        Xp = into_ball(X + into_ball(take(T, d), eps_max), alpha)
        heads = lambda m, rows, cols: np.repeat(pad(m, rows, cols)[None], H, axis=0)  # noqa: E731
        instance: dict[str, Any] = {
            "alpha": alpha, "d1": d1, "d2": d2, "X": pad(X, T, d1), "X_perturbed": pad(Xp, T, d1),
            "mask": np.ones((T, T), dtype=np.int8), "W_Q": heads(W_Q, d1, dk), "W_K": heads(W_K, d1, dk),
            "W_V": heads(W_V, d1, d), "W_O": heads(W_O, d, d2), "eps_max": eps_max}
        if self.L:
            instance["fc_layers"] = tuple(pad(spectral_unit(take(d, d)), d1, d1) for _ in range(self.L))
        return instance

    def construction(self, alpha: float, eps_max: float) -> np.ndarray:
        """The docstring's first-order construction (needs d = d_key = 2); FC layers the identity."""
        d, T = self.d, self.T
        swap = np.array([[0.0, 1.0], [1.0, 0.0]])
        X, D = np.zeros((T, d)), np.zeros((T, d))
        X[0, 0], X[1, 0] = alpha, -alpha
        D[0, 1], D[1, 1] = eps_max, -eps_max
        if T > 2:
            X[2:, 1] = alpha
        parts = [np.eye(d), swap, np.eye(d), np.eye(d), X, D] + [np.eye(d)] * self.L
        return np.concatenate([p.ravel() for p in parts])


def search(H: int, d1: int, d2: int, alpha: float, eps_max: float, L: int = 0,
           random_starts: int = 2, seed: int = 0) -> dict[str, Any]:
    """The best instance found (every head alike) and its value recomputed in mpmath."""
    from sltcheck.statements import lemma12, lemma13

    if isinstance(random_starts, bool) or not isinstance(random_starts, int) or random_starts < 0:
        raise ValueError(f"random_starts must be an integer >= 0, got {random_starts!r}")
    module = lemma13 if L else lemma12
    d = min(d1, 2)
    best: tuple[float, dict[str, Any] | None] = (-1.0, None)
    for d_key in sorted({1, d}):
        for T in (2, 3):
            layout = Layout(d, d_key, T, L)
            starts = [layout.construction(alpha, eps_max)] if d == d_key == 2 else []
            value, inst = best_instance(
                lambda z: layout.build(z, 1, d1, d2, alpha, eps_max),  # noqa: B023
                lambda i: float(module.measured(i, None)), layout.size, starts, random_starts,
                seed=seed + 7 * d_key + T)
            if inst is not None and value > best[0]:
                best = (value, inst)
    if best[1] is None:
        raise ValueError(f"random_starts must be >= 1 when d1 = {d1} (no construction to start from), got 0")
    instance = best[1]
    for key in ("W_Q", "W_K", "W_V", "W_O"):
        instance[key] = np.repeat(instance[key][:1], H, axis=0)
    return instance


def supremum(H: int = 1, d1: int = 2, d2: int | None = None, alpha: float | None = None, eps_max: float = 0.05,
             random_starts: int = 2, seed: int = 0) -> dict[str, Any]:
    from sltcheck import assumptions
    from sltcheck.statements import lemma12

    H, d1 = positive_int("H", H), positive_int("d1", d1)
    d2 = d1 if d2 is None else positive_int("d2", d2)
    alpha = alpha_for(d1, d2, alpha)
    eps_max = nonneg("eps_max", eps_max)
    instance = search(H, d1, d2, alpha, eps_max, random_starts=random_starts, seed=seed)
    assumptions.require("lemma12", instance)
    lower = float(lemma12.measured(instance, 30))  # type: ignore[arg-type]
    return result("lemma12", BRACKET, lower, upper(H, alpha, eps_max), instance, paper_bound(H, d1, alpha, eps_max),
                  {"H": H, "d1": d1, "d2": d2, "alpha": alpha, "eps_max": eps_max})


# The report's slack table, rows (statement, params).
SLACK_ROWS = [("lemma12", dict(H=1, d1=2, alpha=2.0, eps_max=0.05, random_starts=1))]
