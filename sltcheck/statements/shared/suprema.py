"""Shared pieces of the worst-case modules: argument checks, exact unit vectors and tokens,
rank-one factors, and the result record every ``supremum`` returns."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from sltcheck.numerics import precision

CLOSED = "closed-form"
BRACKET = "bracket"


def positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def nonneg(name: str, value: object, upper: float | None = None) -> float:
    allowed = f"in [0, {upper}]" if upper is not None else ">= 0"
    if not isinstance(value, (int, float, np.floating)) or isinstance(value, bool):
        raise ValueError(f"{name} must be a finite number {allowed}, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < 0 or (upper is not None and number > upper):
        raise ValueError(f"{name} must be a finite number {allowed}, got {value!r}")
    return number


def known_params(statement: str, params: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = set(params) - set(allowed)
    if unknown:
        raise ValueError(f"params for {statement} are {', '.join(allowed)}; got unknown {sorted(unknown)}")


def least_alpha(d1: int, d2: int) -> float:
    """The smallest float64 alpha with alpha >= max(sqrt d1, sqrt d2) exactly."""
    m = max(d1, d2)
    alpha = math.sqrt(m)
    while Fraction(alpha) ** 2 < m:
        alpha = math.nextafter(alpha, math.inf)
    return alpha


def alpha_for(d1: int, d2: int, alpha: object) -> float:
    """``alpha`` checked against the alpha-large assumption (None: the least allowed)."""
    least = least_alpha(d1, d2)
    if alpha is None:
        return least
    value = nonneg("alpha", alpha)
    if Fraction(value) ** 2 < max(d1, d2):
        raise ValueError(f"alpha must be >= max(sqrt(d1), sqrt(d2)) = {least:.6g}, got {alpha!r}")
    return value


def sigmoid(x: float) -> float:
    return 0.5 * (1 + math.tanh(x / 2))


def unit(d: int) -> np.ndarray:
    """1/sqrt(d) in every entry, shrunk by ulps until its norm is <= 1 exactly (in rationals)."""
    u = np.full(d, 1 / math.sqrt(d))
    while sum(Fraction(float(x)) ** 2 for x in u) > 1:
        u = u * (1 - 2.0**-52)
    return u


def tokens(alpha: float, d1: int, signs: tuple[int, ...]) -> np.ndarray:
    """Tokens sign * alpha u, shrunk by ulps until every norm is <= alpha exactly."""
    X = np.array([s * alpha * unit(d1) for s in signs])
    for _ in range(8):
        with precision.working_precision(60):
            norms = precision.vector_norm(precision.to_mp(X, 60), axis=-1)
            if max(norms) <= mpmath.mpf(alpha):
                return X
        X = X * (1 - 2.0**-52)
    return X


def rank_one(scale: float, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) with A (d, 1), B (1, d') and A @ B = scale * left right^T."""
    root = math.sqrt(abs(scale))
    return root * left[:, None], (math.copysign(root, scale) if scale else 0.0) * right[None, :]


def result(statement: str, kind: str, lower: float, upper: float, instance: dict[str, Any], bound: float,
           params: dict[str, Any], measured_by: str | None = None) -> dict[str, Any]:
    """The record ``supremum`` returns: value (the supremum for a closed form, the lower end
    for a bracket), lower, upper, the extremal (or best) instance, the default bound there and
    the slack bound / supremum (for a bracket: slack = bound / upper, slack_range both ends)."""
    return {"statement": statement, "kind": kind, "value": upper if kind == CLOSED else lower,
            "lower": lower, "upper": upper, "instance": instance, "measured_by": measured_by or statement,
            "bound": bound, "slack": bound / upper if upper > 0 else float("nan"),
            "slack_range": [bound / upper, bound / lower] if kind == BRACKET and lower > 0 else None,
            "params": params}
