"""Lemma 13 (the target block is Lipschitz in its input): a certified upper bound and the best
instance found.

Parameters: those of Lemma 12 with d2 = d1, and L, the number of FC layers. The measured side is
max_i ||Blk_T(x_i) - Blk_T(x'_i)|| with Blk(x) = F(z) + z, z = Attn(x)^T + x, every FC layer of spectral
norm <= 1.

Upper bound (proved). U_13 = 2 (U_12 + eps_max), with U_12 of :mod:`sltcheck.statements.lemma12.worst_case`:
||z - z'|| <= ||Attn(x) - Attn(x')|| + ||x - x'|| <= U_12 + eps_max, F is 1-Lipschitz (layers of norm <= 1,
ReLU 1-Lipschitz), so ||Blk(x) - Blk(x')|| <= ||F(z) - F(z')|| + ||z - z'|| <= 2 ||z - z'||. The factor 2 is
exact for L = 1 (F = W_1 = I doubles every difference), so with L = 1 the supremum is exactly twice the
supremum of ||z - z'|| over Lemma 12's instances, and the slack of the statement's bound (which drops the
proof's factor 2, see :mod:`sltcheck.statements.lemma13`) is half that of the proven one.

Lower bound (searched): Lemma 12's search (same layouts and construction) with the L FC layers as
free parameters projected into the spectral unit ball, started from identity layers.

Slack of the default (as-proven) bound 2 H sqrt(d1) (alpha (e^{4 alpha eps} - 1) + 2 eps) over U_13:
about sqrt(d1) (4 alpha^2 H + 2 H) / (2 alpha^2 H + H + 1) for small eps.
"""

from __future__ import annotations

import math
from typing import Any

from sltcheck.statements.lemma12 import worst_case as w12
from sltcheck.worst_case._common import BRACKET, alpha_for, nonneg, positive_int, result

PARAMS = ("H", "d1", "L", "alpha", "eps_max")


def upper(H: int, alpha: float, eps_max: float, d_key: int = 1) -> float:
    return 2 * (w12.upper(H, alpha, eps_max, d_key) + eps_max)


def paper_bound(H: int, d1: int, alpha: float, eps_max: float) -> float:
    """The default (as-proven) bound: twice the statement's."""
    return 2 * H * math.sqrt(d1) * (alpha * math.expm1(4 * alpha * eps_max) + 2 * eps_max)


def supremum(H: int = 1, d1: int = 2, L: int = 1, alpha: float | None = None, eps_max: float = 0.05,
             random_starts: int = 2, seed: int = 0) -> dict[str, Any]:
    from sltcheck import assumptions
    from sltcheck.statements import lemma13

    H, d1, L = positive_int("H", H), positive_int("d1", d1), positive_int("L", L)
    alpha = alpha_for(d1, d1, alpha)
    eps_max = nonneg("eps_max", eps_max)
    instance = w12.search(H, d1, d1, alpha, eps_max, L=L, random_starts=random_starts, seed=seed)
    assumptions.require("lemma13", instance)
    lower = float(lemma13.measured(instance, 30))  # type: ignore[arg-type]
    return result("lemma13", BRACKET, lower, upper(H, alpha, eps_max), instance, paper_bound(H, d1, alpha, eps_max),
                  {"H": H, "d1": d1, "L": L, "alpha": alpha, "eps_max": eps_max})


# The report's slack table, rows (statement, params).
SLACK_ROWS = [("lemma13", dict(H=1, d1=2, alpha=2.0, eps_max=0.05, random_starts=1))]
