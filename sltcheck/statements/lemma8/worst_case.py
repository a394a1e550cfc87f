"""Lemma 8 (and Lemma 5, its main-text form): the exact supremum, in closed form.

Claim. For X with ||x_k|| <= alpha, any mask row with at least two attended tokens, any
logits l and perturbations with ||eps||_max <= e:

    sup ||(sigma(l; a) - sigma(l + eps; a)) X|| = 2 alpha tanh(e / 2),

attained (not only approached), for every d1 >= 1 and T >= 2. (With a single attended token
the left side is 0.)

Proof. Write p = sigma(l; a), p' = sigma(l + eps; a) (probability vectors on the attended
set). (i) Reduction to total variation: sum_k (p_k - p'_k) = 0, so
||sum_k (p_k - p'_k) x_k|| <= sum_k |p_k - p'_k| ||x_k|| <= alpha ||p - p'||_1, with equality
for x_k = alpha u sign(p_k - p'_k) (u a unit vector). (ii) ||p - p'||_1 = 2 (p'(S) - p(S))
for S = {k : p'_k > p_k}. With s = p(S), A = sum_{k in S} p_k e^{eps_k} <= s e^e and
B = sum_{k notin S} p_k e^{eps_k} >= (1 - s) e^{-e}, p'(S) = A / (A + B) is increasing in A and
decreasing in B, so p'(S) <= s r / (s r + 1 - s) with r = e^{2e}. (iii) g(s) = s r / (1 + s (r - 1)) - s
is concave on [0, 1] with g'(s) = r / (1 + s (r - 1))^2 - 1 = 0 at 1 + s (r - 1) = sqrt(r), i.e.
s* = 1 / (1 + e^e), where g(s*) = s* (e^e - 1) = (e^e - 1) / (e^e + 1) = tanh(e / 2). Hence
||p - p'||_1 <= 2 tanh(e / 2) and the claim's upper bound. (iv) Attainment: two tokens x_1 = alpha u,
x_2 = -alpha u, logits (0, e) (so p_1 = 1 / (1 + e^e) = s*), perturbation (+e, -e): p'_1 = e^e / (e^e + 1),
p'_1 - p_1 = tanh(e / 2), and (p - p') X = 2 (p_1 - p'_1) alpha u has norm 2 alpha tanh(e / 2). []

Slack. Lemma 8's bound sqrt(d1) alpha (e^{2e} - 1) over the supremum::

    slack_8(d1, e) = sqrt(d1) (e^{2e} - 1) / (2 tanh(e / 2)),

independent of alpha, -> 2 sqrt(d1) as e -> 0, increasing in e (e.g. 2.07 sqrt(d1) at e = 0.01, 2.75 sqrt(d1) at
e = 0.25, 4.48 sqrt(d1) at e = 1/2). Lemma 5's bound 4 sqrt(d1) alpha e (e <= 1/2):
slack_5 = 2 sqrt(d1) e / tanh(e / 2) -> 4 sqrt(d1) as e -> 0 (4.04 sqrt(d1) at e = 1/2).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sltcheck.statements.shared.suprema import CLOSED, nonneg, positive_int, result, tokens

PARAMS = ("d1", "alpha", "eps_max")


def supremum_value(alpha: float, eps_max: float) -> float:
    return 2 * alpha * math.tanh(eps_max / 2)


def extremal_instance(d1: int, alpha: float, eps_max: float) -> dict[str, Any]:
    X = tokens(alpha, d1, (1, -1))
    logits = np.array([[0.0, eps_max], [0.0, eps_max]])
    pert = np.array([[eps_max, -eps_max], [eps_max, -eps_max]])
    return {"alpha": float(alpha), "d1": d1, "X": X, "logits": logits, "mask": np.ones((2, 2), dtype=np.int8),
            "perturbation": pert, "eps_max": float(eps_max)}


def supremum(statement: str = "lemma8", d1: int = 1, alpha: float = 1.0, eps_max: float = 0.1) -> dict[str, Any]:
    """Lemma 8's (``statement="lemma5"``: Lemma 5's) supremum, instance, bound and slack."""
    d1 = positive_int("d1", d1)
    alpha = nonneg("alpha", alpha)
    eps_max = nonneg("eps_max", eps_max, 0.5 if statement == "lemma5" else None)
    value = supremum_value(alpha, eps_max)
    if statement == "lemma5":
        bound = 4 * math.sqrt(d1) * alpha * eps_max
    else:
        bound = math.sqrt(d1) * alpha * math.expm1(2 * eps_max)
    return result(statement, CLOSED, value, value, extremal_instance(d1, alpha, eps_max), bound,
                  {"d1": d1, "alpha": alpha, "eps_max": eps_max}, measured_by="lemma8")


# The report's slack table, rows (statement, params): Lemma 5's beside Lemma 8's at each point.
SLACK_ROWS = [(name, dict(d1=d1, alpha=math.sqrt(d1), eps_max=eps))
              for d1 in (1, 4, 16) for eps in (1e-3, 0.1, 0.5) for name in ("lemma8", "lemma5")]
