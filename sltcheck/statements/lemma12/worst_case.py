"""Lemma 12 (the target MHA is Lipschitz in its input): the supremum at d1 = 1 in closed form (proved
below), a certified upper bound and the best instance found for d1 >= 2.

Parameters: H, d1, d2, alpha (>= max(sqrt d1, sqrt d2)), eps_max. The measured side is
max_i ||Attn_T(x_i; X) - Attn_T(x'_i; X')|| over targets with ||W_Q||, ||W_K||, ||W_V||, ||W_O|| <= 1
(any d_K, d_V), tokens with ||x_k||, ||x'_k|| <= alpha, max_k ||x_k - x'_k|| <= eps_max, any mask and
ANY sequence length T.

d1 = 1: the supremum (proved). Write t = alpha^2 / sqrt(d_K) and

    phi(t) = max(1 + t, 2 t + 1 / (8 t))      (= 2 t + 1 / (8 t) for t >= (2 + sqrt 2) / 4 = 0.854).

Claim. For every admissible instance, ||Attn_T(x_i; X) - Attn_T(x'_i; X')|| <= H eps_max phi(t), and
H eps_max phi(t) is the limit of the measured side as eps_max -> 0 along instances whose fraction of
tokens at one value tends to an irrational number (below): approached, never attained.

Proof. (1) One head, one row, a derivative. With d1 = 1 the tokens are numbers x_k in [-alpha, alpha],
W_QK = W_Q W_K^T / sqrt(d_K) is a number w with |w| <= 1 / sqrt(d_K) and W_VO = W_V W_O a row vector v
with ||v|| <= 1. Row i attends to a set A with p_k = softmax_k(w x_i x_k) and Attn(x_i) = v sum_k p_k x_k.
Along a direction delta (|delta_k| <= eps) the derivative is v (sum_k p_k delta_k + Cov_p(ds, x)) with
ds_k = w (delta_i x_k + x_i delta_k). Put x = alpha y, delta = eps u (y_k, u_k in [-1, 1]),
theta = w alpha^2 (|theta| <= t), c = theta y_i and m = E_p y:

    D Attn(x_i)[delta] = eps v f,   f = sum_k p_k u_k (1 + c (y_k - m)) + theta u_i Var_p(y).

(2) A bound free of u and of the query: |f| <= E_p |1 + c (y - m)| + |theta| Var_p(y). The first term is
convex in c and |c| <= |theta| (|y_i| <= 1), so it is largest at c = +-|theta|; reflecting y -> -y maps c
to -c and keeps Var_p(y), so |f| <= J(p) := E_p |1 + t'(y - m)| + t' Var_p(y) with t' = |theta| <= t,
over every distribution p of y on [-1, 1] (the softmax plays no further role: whatever p is, the tokens'
multiplicities can make it the attention row).
(3) Two points. Since E_p[1 + t'(y - m)] = 1 and |z| = z + 2 (-z)_+, J(p) = 1 - t' m^2 + E_p g(y) with
g(y) = t' y^2 + 2 (t'(m - y) - 1)_+, convex in y. On [-1, 1] a convex g lies below its chord, so among
distributions with mean m, E_p g is largest for the two points +-1 with P = (1 + m) / 2 at +1:
J(p) <= 1 + 4 t' P (1 - P) + 2 (1 - P)(2 t' P - 1)_+ =: K(P).
(4) One variable. Where 2 t' P <= 1, K <= 1 + 4 t' P (1 - P) <= 1 + t'. Where 2 t' P >= 1,
K = 2 P - 1 + 8 t' P (1 - P), a concave parabola with maximum 2 t' + 1 / (8 t') at P* = 1/2 + 1 / (8 t').
So |f| <= phi(t') <= phi(t) (phi increases).
(5) Heads and d2: the heads add, ||sum_j eps v_j f_j|| <= H eps phi(t).
(6) Finite eps (the mean-value argument). X(s) = X + s (X' - X), s in [0, 1], stays admissible (the
interval [-alpha, alpha] is convex) and moves every token by at most eps_max, so
||Attn(x'_i; X') - Attn(x_i; X)|| <= int_0^1 ||D Attn(X(s))[X' - X]|| ds <= H eps_max phi(t).  []
(7) Approach. For t >= 0.854 every inequality above is an equality for: the two values y = +-1 (tokens at
+-alpha), the query among the tokens at +alpha, w = 1 / sqrt(d_K) (so c = theta = t), u = +1 at +alpha
and -1 at -alpha (or, the same |f|, every token moved inward by eps), and attention P* = 1/2 + 1/(8 t) on
the tokens at +alpha. That needs the fraction of tokens at +alpha to be pi*(t) = r / (1 + r),
r = (4 t + 1) / (4 t - 1) e^{-2 t}; at t = 1 (alpha = 1) pi* = 5 / (3 e^2 + 5) = 0.184046, irrational
(e^2 is transcendental), so no sequence realises it: the first-order ratio tends to the supremum as
n / T -> pi* (T = 38, 7 tokens at +alpha: 1 - 3e-7 of it) and eps -> 0.

The ratios (Lemma 12's bound, d1 = 1: H (alpha (e^{4 alpha eps} - 1) + eps) > H (4 alpha^2 + 1) eps):

- ``as-stated``: measured / bound < phi(alpha^2) / (4 alpha^2 + 1) = (2 alpha^2 + 1 / (8 alpha^2)) / (4 alpha^2 + 1)
  (d_K = 1 is the worst; d_K >= 2 only shrinks t), which increases with alpha (its derivative has the
  sign of 2 - 1/t - 1/(8 t^2) > 0 for t >= 1): 17/40 = 0.425 at alpha = 1, and supremum 1/2 as alpha
  -> infinity. Never attained: at finite eps the ratio is strictly below its eps -> 0 limit (the bound
  is strictly convex in eps), and the fraction pi*(alpha^2) ~ e^{-2 alpha^2} needs T >~ e^{2 alpha^2}
  tokens. Over sequences of at most T_max tokens (every token value at least 1 / T_max of them) the
  best is one token at +alpha among T_max (numerically: the two-value family, which 3-value searches
  do not beat; not proved): 0.454692 at T_max = 64, alpha = 1.4842 (:func:`longest_supremum`, ``LONGEST``).
- ``key-scaled``: measured / bound < phi(b) / (4 b + 1), b = alpha^2 / sqrt(d_K) >= 1 / sqrt(d_K): for
  b <= 0.854 it is (1 + b) / (4 b + 1) -> 1 as b -> 0, so the supremum over all d_K is 1 (approached as
  d_K -> infinity: the logits vanish and only the value term eps is left); at d_K <= 3 it is 1/2 (alpha ->
  infinity, as above).

d1 >= 2 and H >= 2 admit no more. Identical heads add their outputs exactly, so any H has the one-head
supremum (H cancels). For d1 >= 2 the dimension-free upper bound U_12 below is at most
H (2 alpha^2 + 1) eps (tanh u <= u), so as stated the ratio is at most
(2 alpha^2 + 1) / (sqrt(d1) (4 alpha^2 + 1)) <= 5 / (9 sqrt 2) = 0.393 (alpha^2 >= d1 >= 2), below
d1 = 1's 17/40 at alpha = 1.

Upper bound for any d1 (proved).

    U_12 = H (2 alpha tanh(alpha eps_max / sqrt(d_K)) + eps_max) <= H (2 alpha tanh(alpha eps_max) + eps_max).

Per head, with p, p' the attention rows at X and X' and W_VO = W_V W_O (||W_VO|| <= 1),
||p X W_VO - p' X' W_VO|| <= ||(p - p') X|| + ||p' (X - X')||, and ||p' (X - X')|| <= sum_k p'_k ||x_k - x'_k||
<= eps_max (p' is a probability vector). The logits differ by
|x_i^T W x_k - x'_i^T W x'_k| <= |x_i^T W (x_k - x'_k)| + |(x_i - x'_i)^T W x'_k| <= 2 alpha eps_max ||W||, with
W = W_Q W_K^T / sqrt(d_K), ||W|| <= 1 / sqrt(d_K); p' is the softmax of the logits of p perturbed by at most
e = 2 alpha eps_max / sqrt(d_K) in max-norm, so Lemma 8's supremum (:mod:`sltcheck.statements.lemma8.worst_case`, tokens
X of norm <= alpha) gives ||(p - p') X|| <= 2 alpha tanh(e / 2). Summing over heads gives U_12; d_K = 1 gives
the largest value.

Lower bound for d1 >= 2 (searched). Multi-start L-BFGS-B (:mod:`sltcheck.statements.shared.suprema_search`)
over one head in dimension d = min(d1, 2) with d_K in {1, 2} and T in {2, 3} tokens, every point projected
onto the assumptions (weights into the spectral unit ball, tokens into the alpha-ball, X' = P(X + D) with
||D_k|| <= eps_max: the projection is nonexpansive, so ||x'_k - x_k|| <= eps_max), started from random points
and from the construction below, then embedded in d1, d2 dimensions with zeros (which changes nothing) and its
value recomputed in mpmath; at the slack table's parameters ``WITNESS`` (the harness search's best, one token
value among 64: its structured shapes go where T <= 3 cannot) lies 5% above it. Construction (first order in
eps_max): d_K = 2, W_Q = I, W_K = the swap of e_1, e_2 (so W = swap / sqrt 2, symmetric, e_1^T W e_1 = 0),
tokens x_1 = alpha e_1, x_2 = -alpha e_1 (row 1 attends to both with p = (1/2, 1/2)), shifts +eps_max e_2 and
-eps_max e_2: each logit moves by +-2 alpha eps_max / sqrt 2, and ||(p - p') X|| = sqrt 2 alpha^2 eps_max +
O(eps_max^2). The supremum there lies between the search's value and U_12 and is not known; the report gives
the bracket. At d1 = 1, :func:`supremum` returns the bracket [the realised two-value instance of (7) at
eps_max, its T <= 64; H eps_max phi(alpha^2)], whose ends meet as eps_max -> 0.

Slack of the paper's bound H sqrt(d1) (alpha (e^{4 alpha eps} - 1) + eps) (bound / U_12, a lower end for
the true slack): sqrt(d1) (4 alpha^2 + 1) / (2 alpha^2 + 1) as eps -> 0 (between 5/3 and 2 times sqrt(d1) for
alpha >= 1), growing like sqrt(d1) alpha e^{4 alpha eps} / (2 alpha + eps) for large eps.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sltcheck.harness.projection import INSIDE, into_ball, spectral_unit
from sltcheck.statement_types import Bound
from sltcheck.statements.shared.suprema import BRACKET, alpha_for, nonneg, positive_int, result
from sltcheck.statements.shared.suprema_search import Unpacker, best_instance, pad

PARAMS = ("H", "d1", "d2", "alpha", "eps_max")


def upper(H: int, alpha: float, eps_max: float, d_key: int = 1) -> float:
    return H * (2 * alpha * math.tanh(alpha * eps_max / math.sqrt(d_key)) + eps_max)


def paper_bound(H: int, d1: int, alpha: float, eps_max: float) -> float:
    return H * math.sqrt(d1) * (alpha * math.expm1(4 * alpha * eps_max) + eps_max)


# --- d1 = 1: the closed form of the docstring --------------------------------------------------------

# Where phi's two branches meet: 1 + t = 2 t + 1 / (8 t).
BRANCH = (2 + math.sqrt(2)) / 4


def phi(t: Any) -> Any:
    """sup |D Attn[delta]| / eps over every sequence of one head at logit scale t = alpha^2 / sqrt(d_K)
    (step 4 of the proof): max(1 + t, 2 t + 1 / (8 t)); works on floats and mpmath numbers."""
    if not t > 0:
        raise ValueError(f"t must be > 0, got {t!r}")
    return max(1 + t, 2 * t + 1 / (8 * t))


def attention_supremum(H: int, alpha: float, eps_max: float, d_key: int = 1) -> float:
    """H eps_max phi(alpha^2 / sqrt(d_K)): at d1 = 1 an upper bound on Lemma 12's measured side for
    every eps_max and its limit as eps_max -> 0 (the docstring's claim)."""
    return H * eps_max * phi(alpha * alpha / math.sqrt(d_key))


def ratio_supremum(alpha: float, d_key: int = 1, key_scaled: bool = False) -> float:
    """The supremum over eps_max and every sequence of measured / bound at d1 = 1 and this alpha:
    phi(t) / (4 alpha^2 + 1) as stated (4 t + 1 with ``key_scaled``), t = alpha^2 / sqrt(d_K)."""
    t = alpha * alpha / math.sqrt(d_key)
    return phi(t) / ((4 * t if key_scaled else 4 * alpha * alpha) + 1)


# The supremum of measured / bound over every instance (d1 = 1, alpha -> infinity; step (7)).
SUPREMUM = 0.5
# ... at alpha = 1 (d1 = d_K = 1): phi(1) / 5.
SUPREMUM_AT_ONE = 17 / 40
# The fraction of the tokens at +alpha that the supremum at alpha = 1 needs: optimal_fraction(1) = 5 / (3 e^2 + 5).
FRACTION_AT_ONE = 5 / (3 * math.e**2 + 5)
# The best over sequences of at most 64 tokens, longest_supremum(64) (tests/test_quoted_numbers.py recomputes it).
LONGEST = {"ratio": 0.4546919707310645, "alpha": 1.4841834419107187, "count": 1, "T": 64}


def optimal_fraction(t: float) -> float:
    """pi*(t): the fraction of the tokens at +alpha whose attention is P* = 1/2 + 1/(8 t) (step 7);
    5 / (3 e^2 + 5) at t = 1. Needs t > 1/4 (else no fraction gives P*)."""
    if not t > 0.25:
        raise ValueError(f"t must be > 1/4, got {t!r}")
    r = (4 * t + 1) / (4 * t - 1) * math.exp(-2 * t)
    return r / (1 + r)


def two_value_instance(count: int, T: int, alpha: float, eps_max: float, H: int = 1, d2: int = 1,
                       L: int = 0) -> dict[str, Any]:
    """The extremal family of step (7) realised: ``count`` of T tokens at +alpha (the first), the others
    at -alpha, every token moved inward by eps_max, W_Q = W_K = W_V = W_O = 1 (padded to d2) in every
    head, L identity FC layers (Lemma 13): d1 = d_K = d_V = 1, full mask. Everything a few ulps inside."""
    if not (isinstance(count, int) and isinstance(T, int) and 1 <= count < T):
        raise ValueError(f"count and T must be integers with 1 <= count < T, got {count!r}, {T!r}")
    from sltcheck.statements.lemma12.token_families import perturbed  # exact: |x - x'| <= eps, |x'| <= alpha

    x = alpha * INSIDE
    X = np.array([x] * count + [-x] * (T - count)).reshape(T, 1)
    Xp = np.array([perturbed(float(v), -math.copysign(eps_max, v), eps_max, alpha) for v in X[:, 0]]).reshape(T, 1)
    one = np.full((H, 1, 1), INSIDE)
    out: dict[str, Any] = {
        "alpha": float(alpha), "d1": 1, "d2": d2, "X": X, "X_perturbed": Xp, "mask": np.ones((T, T), dtype=np.int8),
        "W_Q": one, "W_K": one.copy(), "W_V": one.copy(),
        "W_O": np.repeat(pad(np.full((1, 1), INSIDE), 1, d2)[None], H, axis=0), "eps_max": float(eps_max)}
    if L:
        out["fc_layers"] = tuple(np.full((1, 1), INSIDE) for _ in range(L))
    return out


def closest_count(t: float, longest: int = 64) -> tuple[int, int]:
    """(count, T) with T <= ``longest`` and count / T closest to pi*(t) (the smallest T on a tie)."""
    target = optimal_fraction(t)
    return min(((max(1, min(T - 1, round(target * T))), T) for T in range(2, longest + 1)),
               key=lambda ct: (abs(ct[0] / ct[1] - target), ct[1]))


def longest_supremum(longest: int = 64) -> dict[str, float]:
    """The best first-order ratio of the as-stated bound over sequences of at most ``longest`` tokens
    in the two-value family (one token at +alpha among ``longest``: the smallest fraction there is),
    maximised over alpha (d1 = d_K = H = 1): ratio, alpha, count, T. A lower end, numerically the
    supremum over such sequences (three-value searches do not beat it); 0.454692 at 64."""
    from scipy import optimize

    def first_order(t: float, count: int, T: int) -> float:
        P = 1.0 / (1.0 + (T - count) / count * math.exp(-2 * t))
        return (2 * P - 1 + 8 * t * P * (1 - P)) / (4 * t + 1)

    best: tuple[float, float, int, int] = (0.0, 1.0, 1, 2)
    for T in range(2, longest + 1):
        for count in range(1, T):
            found = optimize.minimize_scalar(lambda t: -first_order(t, count, T), bounds=(1.0, 20.0),  # noqa: B023
                                             method="bounded", options={"xatol": 1e-12})
            if -found.fun > best[0]:
                best = (-float(found.fun), math.sqrt(float(found.x)), count, T)
    return {"ratio": best[0], "alpha": best[1], "count": best[2], "T": best[3]}


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
        X = into_ball(take(T, d), alpha * INSIDE)
        Xp = into_ball(X + into_ball(take(T, d), eps_max * INSIDE), alpha * INSIDE)
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
           random_starts: int = 2, seed: int = 0, measured: Bound | None = None) -> dict[str, Any]:
    """The best instance found (every head alike) and its value recomputed in mpmath: Lemma 12's
    measured side, or ``measured`` (Lemma 13's, for its blocks with ``L`` FC layers)."""
    from sltcheck.statements import lemma12  # the package imports this module

    if isinstance(random_starts, bool) or not isinstance(random_starts, int) or random_starts < 0:
        raise ValueError(f"random_starts must be an integer >= 0, got {random_starts!r}")
    measure: Bound = lemma12.measured if measured is None else measured
    d = min(d1, 2)
    best: tuple[float, dict[str, Any] | None] = (-1.0, None)
    for d_key in sorted({1, d}):
        for T in (2, 3):
            layout = Layout(d, d_key, T, L)
            starts = [layout.construction(alpha, eps_max)] if d == d_key == 2 else []
            value, inst = best_instance(
                lambda z: layout.build(z, 1, d1, d2, alpha, eps_max),  # noqa: B023
                lambda i: float(measure(i, None)), layout.size, starts, random_starts,
                seed=seed + 7 * d_key + T)
            if inst is not None and value > best[0]:
                best = (value, inst)
    if best[1] is None:
        raise ValueError(f"random_starts must be >= 1 when d1 = {d1} (no construction to start from), got 0")
    instance = best[1]
    for key in ("W_Q", "W_K", "W_V", "W_O"):
        instance[key] = np.repeat(instance[key][:1], H, axis=0)
    return instance


# The worst-case search's best at the slack table's d1 = 2 parameters (H = 1, alpha = 2, eps_max = 0.05; ci
# profile, seed 0), above what search() finds there: a weighted instance (two token values and their
# fractions, 1 and 63 of 64 tokens; exact JSON), realised by sltcheck.harness.sequence.
WITNESS: dict[str, Any] = {"alpha": {"float": "0x1.0000000000000p+1"},
     "d1": 2,
     "d2": 2,
     "X": {"shape": [2, 2],
           "dtype": "float64",
           "hex": ["-0x1.5ae3789b54d93p-2", "0x1.f89a22a6a141cp+0", "0x1.055ff24ab51aep-1", "-0x1.ef0a4a8316725p+0"]},
     "X_perturbed": {"shape": [2, 2],
                     "dtype": "float64",
                     "hex": ["-0x1.593a9dbe2ca5fp-2", "0x1.ebcf0f71f571dp+0", "0x1.13f495c0f17d1p-1",
                             "-0x1.e484ea6da6772p+0"]},
     "mask": {"shape": [2, 2], "dtype": "int8", "int": [1, 1, 1, 1]},
     "W_Q": {"shape": [1, 2, 1], "dtype": "float64", "hex": ["0x1.3ca105035ad6ep-1", "0x1.925b0d5c4f4e0p-1"]},
     "W_K": {"shape": [1, 2, 1], "dtype": "float64", "hex": ["-0x1.27c5fcdd368a2p-4", "-0x1.fea9d3c38cb9ep-1"]},
     "W_V": {"shape": [1, 2, 1], "dtype": "float64", "hex": ["-0x1.f9decb8e1fe46p-3", "0x1.f0229054049e5p-1"]},
     "W_O": {"shape": [1, 1, 2], "dtype": "float64", "hex": ["0x1.0c2e22bbd14eep-1", "-0x1.b4256315462bfp-1"]},
     "eps_max": {"float": "0x1.999999999999ap-5"},
     "multiplicity": {"shape": [2], "dtype": "float64", "hex": ["0x1.0000000000000p-6", "0x1.f800000000000p-1"]}}



def measured_value(statement: str, instance: dict[str, Any]) -> float:
    """The statement's measured side at ``instance`` in float64."""
    from sltcheck.registry import load

    return float(load(statement).measured(instance, None))


def witness(encoded: dict[str, Any], statement: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """A pinned weighted instance realised, where ``params`` are its parameters (else None)."""
    from sltcheck.harness import sequence
    from sltcheck.harness.instances import module
    from sltcheck.harness.serialise import decode_instance

    instance: dict[str, Any] = decode_instance(encoded)
    same = all(float(instance[k] if k in instance else np.asarray(instance["W_Q"]).shape[0]) == float(v)
               for k, v in params.items() if k in ("H", "d1", "d2", "alpha", "eps_max"))
    if not same or ("L" in params and len(instance.get("fc_layers", ())) != params["L"]):
        return None
    found = sequence.structure(module(statement))
    assert found is not None
    return sequence.realise(instance, found)


def supremum(H: int = 1, d1: int = 2, d2: int | None = None, alpha: float | None = None, eps_max: float = 0.05,
             random_starts: int = 2, seed: int = 0) -> dict[str, Any]:
    from sltcheck import assumptions
    from sltcheck.statements import lemma12

    H, d1 = positive_int("H", H), positive_int("d1", d1)
    d2 = d1 if d2 is None else positive_int("d2", d2)
    alpha = alpha_for(d1, d2, alpha)
    eps_max = nonneg("eps_max", eps_max)
    if d1 == 1:  # the closed form: the realised extremal family below its eps -> 0 value
        instance = two_value_instance(*closest_count(alpha * alpha), alpha, eps_max, H=H, d2=d2)
        upper_end = attention_supremum(H, alpha, eps_max)
    else:
        instance = search(H, d1, d2, alpha, eps_max, random_starts=random_starts, seed=seed)
        pinned = witness(WITNESS, "lemma12", {"H": H, "d1": d1, "d2": d2, "alpha": alpha, "eps_max": eps_max})
        if pinned is not None and measured_value("lemma12", pinned) > measured_value("lemma12", instance):
            instance = pinned
        upper_end = upper(H, alpha, eps_max)
    assumptions.require("lemma12", instance)
    lower = float(lemma12.measured(instance, 30))  # type: ignore[arg-type]
    return result("lemma12", BRACKET, lower, upper_end, instance, paper_bound(H, d1, alpha, eps_max),
                  {"H": H, "d1": d1, "d2": d2, "alpha": alpha, "eps_max": eps_max})


# The report's slack table, rows (statement, params): d1 = 1 (the closed form, its ends within O(eps) of
# each other) and d1 = 2 (a searched bracket).
SLACK_ROWS = [("lemma12", dict(H=1, d1=1, alpha=1.0, eps_max=1e-3)),
              ("lemma12", dict(H=1, d1=2, alpha=2.0, eps_max=0.05, random_starts=1))]
