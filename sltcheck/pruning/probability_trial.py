"""One trial of a probability statement: a setting, the widths it prescribes, one pruned pair and its error.

A :class:`Setting` is one configuration of one statement (``STATEMENTS``); :func:`prescribed` gives
the per-group widths n' the statement prescribes at constant C (:mod:`sltcheck.pruning.widths`);
:func:`trial` draws one (target, source) pair at given widths, prunes the source by the proof's
construction (exact meet-in-the-middle) and measures its error on the worst inputs a search finds
(:func:`worst_input_error`). The frequencies over many trials are :mod:`sltcheck.pruning.probability`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from sltcheck.model import reference
from sltcheck.model.weights import TransformerWeights
from sltcheck.pruning import construction, sources, widths

STATEMENTS = ("lemma7", "lemma2", "theorem9", "theorem11", "theorem14")
MAX_GROUP = 32  # units per group the exact solver takes here (2^16 sums per half)
NEAR = 1e-9


@dataclass(frozen=True)
class Setting:
    """One configuration of one statement (d2 = d1 for the blocks and transformers)."""

    statement: str
    eps: float
    d1: int = 1
    d2: int = 1
    H: int = 1
    L: int = 1
    B: int = 2
    T: int = 2

    def __post_init__(self) -> None:
        if self.statement not in STATEMENTS:
            raise ValueError(f"statement must be one of {', '.join(STATEMENTS)}, got {self.statement!r}")
        if not isinstance(self.eps, (int, float)) or isinstance(self.eps, bool) or not 0 < self.eps < 1:
            raise ValueError(f"eps must be a number in (0, 1), got {self.eps!r}")
        for name in ("d1", "d2", "H", "L", "T"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if isinstance(self.B, bool) or not isinstance(self.B, int) or self.B < 2:
            raise ValueError(f"B must be an integer >= 2 (Theorem 14), got {self.B!r}")

    @property
    def alpha(self) -> float:
        return math.sqrt(max(self.d1, self.d2))

    @property
    def log_argument(self) -> float:
        """A / eps of the statement's main width (for C = n / (d1 log(A / eps)))."""
        return prescribed(self, 1.0)["log_argument"]


def _group(n_real: float, d: int) -> int:
    return max(1, math.ceil(n_real / d))


def prescribed(setting: Setting, C: float) -> dict[str, Any]:
    """The per-group widths n' (n = d1 n') the statement prescribes at constant C, and the log
    argument A / eps of its first width."""
    s, d1 = setting, setting.d1
    if s.statement == "lemma7":
        arg = d1 * s.d2 / s.eps
        return {"groups": {"n": _group(d1 * C * math.log(arg), d1)}, "log_argument": arg}
    if s.statement == "lemma2":
        arg = 2 * d1 * s.d2 / s.eps
        return {"groups": {"n": _group(d1 * C * math.log(arg), d1)}, "log_argument": arg}
    w = widths.widths(
        s.eps,
        s.H,
        d1,
        s.d2 if s.statement == "theorem9" else d1,
        s.alpha,
        s.L,
        s.B if s.statement == "theorem14" else None,
        C,
    )
    if s.statement == "theorem9":
        t = w["theorem9"]
        return {
            "groups": {"n_K": _group(t["n_K"]["bound"], d1), "n_V": _group(t["n_V"]["bound"], d1)},
            "log_argument": t["n_K"]["log_argument"],
        }
    if s.statement == "theorem11":
        t = w["theorem11"]
        return {
            "groups": {"n_MHA": _group(t["n_MHA"]["bound"], d1), "n_FC": _group(t["n_FC"]["bound"], d1)},
            "log_argument": t["n_MHA"]["log_argument"],
        }
    blocks = w["theorem14"]["blocks"]
    groups = {}
    for block in blocks:
        groups[f"n_MHA[{block['b']}]"] = _group(block["n_MHA"]["bound"], d1)
        groups[f"n_FC[{block['b']}]"] = _group(block["n_FC"]["bound"], d1)
    return {"groups": groups, "log_argument": blocks[0]["n_MHA"]["log_argument"]}


# --- the worst inputs a search finds ------------------------------------------------------------------


def worst_input_error(
    error: Callable[[np.ndarray], float],
    shape: tuple[int, ...],
    radius: float,
    rng: np.random.Generator,
    starts: int = 4,
    maxiter: int = 40,
) -> tuple[float, np.ndarray]:
    """max over inputs (rows of norm <= radius) of ``error``, as far as a short search finds it.

    Starts: ``starts`` random directions on the sphere and as many inside; the best half climbs
    with L-BFGS-B (finite differences) on z, the input being ``radius z / sqrt(1 + |z|^2)`` per row.
    """

    def inputs(z: np.ndarray) -> np.ndarray:
        z = z.reshape(shape)
        return radius * z / np.sqrt(1.0 + (z * z).sum(axis=-1, keepdims=True))

    candidates = []
    for k in range(2 * starts):
        direction = rng.standard_normal(shape)
        direction /= np.maximum(np.linalg.norm(direction, axis=-1, keepdims=True), 1e-300)
        scale = 30.0 if k < starts else float(rng.uniform(0.3, 3.0))  # ~sphere, or inside
        z = (direction * scale).ravel()
        candidates.append((error(inputs(z)), z))
    candidates.sort(key=lambda c: -c[0])
    best_value, best_z = candidates[0]
    best_x = inputs(best_z)
    for _, z in candidates[: max(1, starts // 2)]:
        result = optimize.minimize(lambda v: -error(inputs(v)), z, method="L-BFGS-B", options={"maxiter": maxiter})
        climbed = inputs(result.x)
        # the map never reaches the sphere itself: try the climbed rows pushed onto it too
        norms = np.maximum(np.linalg.norm(climbed, axis=-1, keepdims=True), 1e-300)
        for x in (climbed, climbed * (radius / norms)):
            value = error(x)
            if value > best_value:
                best_value, best_x = value, x
    return float(best_value), best_x


# --- one trial -----------------------------------------------------------------------------------------


def _full_mask(T: int) -> np.ndarray:
    return np.ones((T, T), dtype=bool)


def _fc_widths(setting: Setting) -> tuple[int, ...]:
    return (setting.d1,) * (setting.L + 1)


def trial(setting: Setting, groups: dict[str, int], seed: Iterable[int], search: dict[str, int]) -> dict[str, Any]:
    """One (target, source) pair at the given per-group widths: its worst error found and success."""
    s = setting
    rng = np.random.default_rng(np.random.SeedSequence(list(seed)))
    cut = {k: min(v, MAX_GROUP) for k, v in groups.items()}
    d1 = s.d1
    if s.statement == "lemma7":
        n = d1 * cut["n"]
        W = rng.uniform(-1, 1, (s.d2, d1))
        approx = construction.approximate_product(W, rng.uniform(-1, 1, (n, d1)), rng.uniform(-1, 1, (s.d2, n)), "mitm")
        value, threshold = float(approx.error), s.eps / (d1 * s.d2)
    elif s.statement == "lemma2":
        n = d1 * cut["n"]
        W = sources.spectrally_bounded(rng, (s.d2, d1))
        W1, W2 = rng.uniform(-1, 1, (n, d1)), rng.uniform(-1, 1, (s.d2, n))
        layer = construction.approximate_relu_layer(W, W1, W2, "mitm")
        A1, A2 = W1 * layer.M1, W2 * layer.M2

        def lemma2_error(x: np.ndarray) -> float:
            return float(np.linalg.norm(W @ x[0] - A2 @ np.maximum(A1 @ x[0], 0.0)))

        value, _ = worst_input_error(lemma2_error, (1, d1), 1.0, rng, **search)
        threshold = s.eps
    else:
        if s.statement == "theorem9":
            target: Any = sources.target_mha(rng, heads=s.H, d_in=d1, d_key=d1, d_value=d1, d_out=s.d2)
            source: Any = sources.source_mha(
                "theory", rng, heads=s.H, d_in=d1, d_out=s.d2, n_key=d1 * cut["n_K"], n_value=d1 * cut["n_V"]
            )
            forward: Callable[..., np.ndarray] = reference.mha
        elif s.statement == "theorem11":
            target = sources.target_block(rng, d=d1, heads=s.H, d_key=d1, d_value=d1, fc_widths=_fc_widths(s))
            source = sources.source_block(
                "theory", rng, d=d1, heads=s.H, n_mha=d1 * cut["n_MHA"], n_fc=d1 * cut["n_FC"], fc_widths=_fc_widths(s)
            )
            forward = reference.block
        else:
            target = sources.target_transformer(
                rng, blocks=s.B, d=d1, heads=s.H, d_key=d1, d_value=d1, fc_widths=_fc_widths(s)
            )
            source = TransformerWeights(
                tuple(
                    sources.source_block(
                        "theory",
                        rng,
                        d=d1,
                        heads=s.H,
                        n_mha=d1 * cut[f"n_MHA[{b}]"],
                        n_fc=d1 * cut[f"n_FC[{b}]"],
                        fc_widths=_fc_widths(s),
                    )
                    for b in range(1, s.B + 1)
                )
            )
            forward = reference.transformer
        pruned = construction.prune(target, source, "mitm").weights
        mask = _full_mask(s.T)

        def module_error(X: np.ndarray) -> float:
            difference = forward(X, mask, pruned) - forward(X, mask, target)
            return float(np.linalg.norm(difference, axis=-1).max())

        value, _ = worst_input_error(module_error, (s.T, d1), s.alpha, rng, **search)
        threshold = s.eps
    return {
        "error": value,
        "threshold": threshold,
        "success": bool(value <= threshold),
        "near": bool(abs(value - threshold) <= NEAR * threshold),
    }
