"""Interval enclosure (see :mod:`sltcheck.harness.interval_verdict`) of Lemma 2:

``lemma2``: measured ||W x - (W~2⊙M2) ReLU((W~1⊙M1) x)|| with the construction's masks (taken
from the solver, rounded to {0, 1}; the network recomputed from them here), the bound
``as-proven`` (Theorem 11's FC term for one target layer at input norm 1:
sqrt(d1 d2) max(||P - W||_max, ||N - W||_max), from the same masks) and the mutant
``bound-quartered``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sltcheck.numerics.intervals import fc, intervals, norm, num


def _pruned(instance: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    from sltcheck.statements import lemma2

    _, _, M1, M2 = lemma2.pruned(instance)
    W1, W2 = (np.asarray(instance[k], dtype=np.float64) for k in ("W1", "W2"))
    M1, M2 = (np.rint(np.asarray(m, dtype=np.float64)).clip(0, 1) for m in (M1, M2))
    return W1 * M1, W2 * M2


def measured(instance: dict[str, Any]) -> Any:
    W, x = (np.asarray(instance[k], dtype=np.float64) for k in ("W", "x"))
    A1, A2 = _pruned(instance)
    source = fc(x[None, :], (A1, A2))[0]
    return norm(intervals(W) @ intervals(x) - source)


def as_proven(instance: dict[str, Any]) -> Any:
    from sltcheck.model.weights import FCWeights
    from sltcheck.statements.theorem11.enclosure import fc_bound

    A1, A2 = _pruned(instance)
    return fc_bound(FCWeights((np.asarray(instance["W"], dtype=np.float64),)), FCWeights((A1, A2)), num(1))


def quartered(instance: dict[str, Any]) -> Any:
    return as_proven(instance) / 4


BOUNDS: dict[str, Callable[[dict[str, Any]], Any]] = {"as-proven": as_proven, "bound-quartered": quartered}
