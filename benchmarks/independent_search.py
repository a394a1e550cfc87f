"""An independent red-team search for violations, written from the paper's assumptions.

    .venv/bin/python benchmarks/independent_search.py [--only NAME ...] [--seed 0]
        [--evaluations 1500] [--seconds 240] [--where d1=2 H=2] [--out independent.json]
        [--compare findings.json]
    .venv/bin/python benchmarks/independent_search.py --replay independent.json   # 100 digits; exit 1 if violated

It shares no code with sltcheck's own worst-case search (``sltcheck/harness/search.py``,
``boundary.py``, ``strategies.py``, the statements' ``instances.py``): only each statement's
``measured`` and ``VARIANTS`` bounds and :func:`sltcheck.assumptions.violations`, which say
what is admissible and what the ratio is, as an outside reviewer would use them.

How it searches (a different kind of search from the harness's):

- its own parametrisation of every statement's instance as a point u of the unit cube, an
  exact map onto the assumption set: alpha = sqrt(max(d1, d2)) on a third of the cube, tokens
  alpha r (cos t, sin t) with r saturating at 1 (the alpha-sphere on a third of the cube),
  perturbed tokens x + eps_max r v projected radially into the alpha-ball (a projection onto a
  convex set that holds x, so ||x - x'|| <= eps_max survives it), weights R(t1) diag(s) R(t2)
  with s saturating at +-1 (every sign pattern of norm 1 on the faces), eps_max log-uniform
  from 1e-7 to its largest value, per-matrix source errors log-uniform from 1e-6 to 10;
- every discrete parameter enumerated from the smallest up: d1, d2, d_K, d_V, H, L in {1, 2},
  B = 2, T = 1..6 (theorem 14: T <= 4), masks full, causal, one seeded random, and single
  (the last row attends to one token);
- per shape: scipy's differential evolution (its initial population holds boundary corners:
  coordinates 0, 1 and 1/2) on the float64 ratio measured / bound, then Nelder-Mead from its
  best point;
- the best point of every variant (and every float64 ratio above 0.999) is decided at 60
  digits with the statement's own functions, and its admissibility with ``violations``.

Deterministic per seed and evaluation budget; ``--seconds`` caps each statement's wall time
(variants in turn: as-stated first, then the default, then the rest), and a statement that
hit it says so (``complete: false`` with the shapes it covered), since a cap makes coverage
machine-dependent. Output: strict JSON with ``schema_version``; with ``--compare`` the table
puts sltcheck's worst ratio (a findings.json of ``sltcheck check``) beside each variant.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np
from scipy.optimize import differential_evolution, minimize

from sltcheck.assumptions import violations
from sltcheck.harness.serialise import decode_instance, encode_instance
from sltcheck.jsonfiles import read_json, write_json_atomic
from sltcheck.registry import load
from sltcheck.schema import SCHEMA_VERSION

DECIDE_DPS = 60
MARGIN = 1.0 - 2.0**-46  # norms at their limits, a few ulps inside so float rounding stays admissible
EPS_LOW = 1e-7
STATEMENTS = ("lemma5", "lemma8", "lemma12", "lemma13", "theorem9", "theorem11", "theorem14")


# --- the unit cube onto the assumption set ------------------------------------------------------


class Cursor:
    """Reads the coordinates of u in order; with ``u=None`` counts how many a decoder reads."""

    def __init__(self, u: np.ndarray | None) -> None:
        self.u, self.used = u, 0

    def next(self) -> float:
        value = 0.5 if self.u is None else float(self.u[self.used])
        self.used += 1
        return value

    def signed(self) -> float:
        """[-1, 1], saturating: each end holds a sixth of [0, 1] (the faces are boundary points)."""
        return float(np.clip(1.5 * (2.0 * self.next() - 1.0), -1.0, 1.0))

    def radius(self) -> float:
        """[0, 1], saturating at 1 on the top third."""
        return float(min(1.5 * self.next(), 1.0))

    def log_uniform(self, low: float, high: float) -> float:
        return float(min(high, math.exp(math.log(low) + self.next() * (math.log(high) - math.log(low)))))

    def alpha(self, d: int) -> float:
        """sqrt(d) (the smallest admissible alpha) on the lower third, up to 4 sqrt(d) above."""
        least = least_alpha(d)
        v = self.next()
        return least if v < 1 / 3 else least * (1.0 + 3.0 * ((v - 1 / 3) * 1.5) ** 2)

    def vector(self, d: int, length: float) -> np.ndarray:
        """A vector of norm <= length (d <= 2): length r (cos t, sin t), r saturating at 1."""
        r = self.radius() * length
        if d == 1:
            return np.array([r if self.next() >= 0.5 else -r])
        t = 2 * math.pi * self.next()
        return r * np.array([math.cos(t), math.sin(t)])[:d]

    def matrix(self, rows: int, cols: int) -> np.ndarray:
        """Spectral norm <= 1: R(t1) diag(s) R(t2) with s in [-1, 1] saturating (every sign pattern)."""
        if rows == 1 and cols == 1:
            return np.array([[self.signed() * MARGIN]])
        if rows == 1 or cols == 1:
            v = self.vector(2, MARGIN)
            return v.reshape(rows, cols)
        s = np.diag([self.signed(), self.signed()]) * MARGIN
        return rotation(2 * math.pi * self.next()) @ s @ rotation(2 * math.pi * self.next())

    def free(self, rows: int, cols: int, scale: float) -> np.ndarray:
        return np.array([[self.signed() * scale for _ in range(cols)] for _ in range(rows)])


def rotation(t: float) -> np.ndarray:
    return np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])


def least_alpha(d: int) -> float:
    """The least float64 alpha with alpha >= sqrt(d) exactly (checked in mpmath)."""
    alpha = math.sqrt(d)
    with mpmath.workdps(DECIDE_DPS):
        while mpmath.mpf(alpha) < mpmath.sqrt(d):
            alpha = math.nextafter(alpha, math.inf)
    return alpha


def tokens(c: Cursor, T: int, d: int, alpha: float) -> np.ndarray:
    return np.stack([c.vector(d, alpha * MARGIN) for _ in range(T)])


def perturbed(c: Cursor, X: np.ndarray, alpha: float, eps_max: float) -> np.ndarray:
    """x' = x + eps_max r v, projected radially into the alpha-ball (nonexpansive, x is inside)."""
    d = X.shape[1]
    # x' is rounded at the tokens' scale: the step keeps 8 ulps of alpha to spare
    length = max(0.0, eps_max * MARGIN - 8 * np.finfo(float).eps * max(alpha, 1.0))
    Xp = X + np.stack([c.vector(d, length) for _ in range(X.shape[0])])
    norms = np.linalg.norm(Xp, axis=1, keepdims=True)
    limit = alpha * MARGIN
    return np.where(norms > limit, Xp * (limit / np.where(norms > 0, norms, 1.0)), Xp)


def mask_of(kind: str, T: int, seed: int) -> np.ndarray:
    if kind == "full":
        return np.ones((T, T), dtype=np.int8)
    if kind == "causal":
        return np.tril(np.ones((T, T), dtype=np.int8))
    if kind == "single":  # the last row attends to one token, the others to all
        mask = np.ones((T, T), dtype=np.int8)
        mask[-1] = 0
        mask[-1, 0] = 1
        return mask
    rng = np.random.default_rng([seed, T])
    mask = (rng.random((T, T)) < 0.6).astype(np.int8)
    mask[np.arange(T), rng.integers(0, T, T)] = 1  # every row attends to one token at least
    return mask


def stack(c: Cursor, count: int, rows: int, cols: int) -> np.ndarray:
    return np.stack([c.matrix(rows, cols) for _ in range(count)])


def mha_targets(c: Cursor, s: dict[str, int], heads: int) -> dict[str, np.ndarray]:
    d1, d2, dK, dV = s["d1"], s.get("d2", s["d1"]), s["dK"], s["dV"]
    return {"W_Q": stack(c, heads, d1, dK), "W_K": stack(c, heads, d1, dK),
            "W_V": stack(c, heads, d1, dV), "W_O": stack(c, heads, dV, d2)}


def sources(c: Cursor, targets: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Pruned sources: each target matrix plus its own error, log-uniform in [1e-6, 10] (any source
    is admissible: the chains are a-posteriori bounds)."""
    out = {}
    for name, W in targets.items():
        scale = c.log_uniform(1e-6, 10.0)
        out["S_" + name[2:]] = np.stack([m + c.free(*m.shape, scale) for m in W])
    return out


def fc_pair(c: Cursor, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A source layer pair (A_1, A_2) whose hidden units each read one input (Pensia's form):
    A_2 ReLU(A_1 x) = P ReLU(x) - N ReLU(-x), P and N the target plus errors."""
    d = W.shape[1]
    A1 = np.vstack([np.eye(d), -np.eye(d)])
    scale_p, scale_n = c.log_uniform(1e-6, 10.0), c.log_uniform(1e-6, 10.0)
    P = W + c.free(*W.shape, scale_p)
    N = W + c.free(*W.shape, scale_n)
    return A1, np.hstack([P, -N])


# --- one decoder per statement family -----------------------------------------------------------


def softmax_family(eps_high: float) -> Callable[[dict[str, Any], Cursor], dict[str, object]]:
    def decode(s: dict[str, Any], c: Cursor) -> dict[str, object]:
        T, d1 = s["T"], s["d1"]
        alpha = c.alpha(d1) * (1.0 + 3.0 * c.next() ** 2)  # Lemmas 5/8 need no alpha >= sqrt(d1)
        eps_max = c.log_uniform(EPS_LOW, eps_high)
        X = tokens(c, T, d1, alpha)
        logits = np.array([[8.0 * c.signed() ** 3 for _ in range(T)] for _ in range(T)])
        perturbation = np.array([[c.signed() * eps_max for _ in range(T)] for _ in range(T)])
        return {"alpha": alpha, "d1": d1, "X": X, "logits": logits, "mask": mask_of(s["mask"], T, s["seed"]),
                "perturbation": perturbation, "eps_max": eps_max}

    return decode


def lipschitz_family(block: bool) -> Callable[[dict[str, Any], Cursor], dict[str, object]]:
    def decode(s: dict[str, Any], c: Cursor) -> dict[str, object]:
        T, d1, d2 = s["T"], s["d1"], s["d2"]
        alpha = c.alpha(max(d1, d2))
        eps_max = c.log_uniform(EPS_LOW, 0.5)
        X = tokens(c, T, d1, alpha)
        inst: dict[str, object] = {"alpha": alpha, "d1": d1, "d2": d2, "X": X,
                                   "X_perturbed": perturbed(c, X, alpha, eps_max),
                                   "mask": mask_of(s["mask"], T, s["seed"]), **mha_targets(c, s, s["H"]),
                                   "eps_max": eps_max}
        if block:
            inst["fc_layers"] = tuple(c.matrix(d1, d1) for _ in range(s["L"]))
        return inst

    return decode


def chain_family(kind: str) -> Callable[[dict[str, Any], Cursor], dict[str, object]]:
    def decode(s: dict[str, Any], c: Cursor) -> dict[str, object]:
        T, d1 = s["T"], s["d1"]
        d2 = d1 if kind != "mha" else s["d2"]
        alpha = c.alpha(max(d1, d2))
        X = tokens(c, T, d1, alpha)
        inst: dict[str, object] = {"alpha": alpha, "d1": d1, "d2": d2, "X": X,
                                   "mask": mask_of(s["mask"], T, s["seed"])}
        B = s.get("B", 1)
        targets = mha_targets(c, {**s, "d2": d2}, s["H"] * B)
        inst.update(targets)
        inst.update(sources(c, targets))
        if kind in ("block", "transformer"):
            layers = [c.matrix(d1, d1) for _ in range(s["L"] * B)]
            inst["fc_layers"] = tuple(layers)
            inst["S_fc_layers"] = tuple(m for W in layers for m in fc_pair(c, W))
        if kind == "transformer":
            inst["B"], inst["H"] = B, s["H"]
        return inst

    return decode


@dataclass(frozen=True)
class Family:
    decode: Callable[[dict[str, Any], Cursor], dict[str, object]]
    dims: dict[str, tuple[int, ...]]
    masks: tuple[str, ...] = ("full", "causal", "single", "random")
    keep: Callable[[dict[str, int]], bool] = field(default=lambda s: True)


FAMILIES: dict[str, Family] = {
    "lemma5": Family(softmax_family(0.5), {"d1": (1, 2), "T": (2, 3, 4, 5, 6)}),
    "lemma8": Family(softmax_family(3.0), {"d1": (1, 2), "T": (2, 3, 4, 5, 6)}),
    "lemma12": Family(lipschitz_family(False), {"d1": (1, 2), "d2": (1, 2), "H": (1, 2), "dK": (1, 2),
                                                 "dV": (1, 2), "T": (2, 3, 4, 5, 6)}),
    "lemma13": Family(lipschitz_family(True), {"d1": (1, 2), "d2": (1, 2), "H": (1, 2), "dK": (1, 2),
                                                "dV": (1, 2), "L": (1, 2), "T": (2, 3, 4, 5, 6)},
                      keep=lambda s: s["d1"] == s["d2"]),
    "theorem9": Family(chain_family("mha"), {"d1": (1, 2), "d2": (1, 2), "H": (1, 2), "dK": (1, 2),
                                             "dV": (1, 2), "T": (1, 2, 3, 4, 5, 6)}),
    "theorem11": Family(chain_family("block"), {"d1": (1, 2), "H": (1, 2), "dK": (1, 2), "dV": (1, 2),
                                                "L": (1, 2), "T": (1, 2, 3, 4, 5, 6)}),
    "theorem14": Family(chain_family("transformer"), {"d1": (1, 2), "H": (1, 2), "dK": (1, 2), "dV": (1, 2),
                                                      "L": (1, 2), "B": (2,), "T": (1, 2, 3, 4)}),
}


def shapes(statement: str, seed: int) -> list[dict[str, Any]]:
    """Every discrete configuration, smallest first (by the sum of the dimensions other than T)."""
    family = FAMILIES[statement]
    names = list(family.dims)
    out = []
    for values in itertools.product(*(family.dims[n] for n in names)):
        s = dict(zip(names, values, strict=True))
        if "d2" not in s and statement != "lemma5" and statement != "lemma8":
            s["d2"] = s["d1"]
        if family.keep(s):
            out.append(s)
    out.sort(key=lambda s: sum(v for k, v in s.items() if k != "T"))
    # within one size: every T with the full mask first, then the other masks
    return [{**s, "mask": m, "seed": seed} for size, group in itertools.groupby(out, key=lambda s: sum(
        v for k, v in s.items() if k != "T")) for m, s in itertools.product(family.masks, list(group))
        if not (m != "full" and s["T"] == 1)]


# --- the search ---------------------------------------------------------------------------------


def float_ratio(module: Any, bound: Callable[..., Any], inst: dict[str, object]) -> float:
    try:
        with np.errstate(all="ignore"):
            m, b = float(module.measured(inst, None)), float(bound(inst, None))
    except (ValueError, ZeroDivisionError, OverflowError, FloatingPointError):
        return 0.0
    if not (math.isfinite(m) and math.isfinite(b)) or b <= 0:
        return 0.0
    return m / b


def boundary_points(n: int, rng: np.random.Generator, count: int) -> np.ndarray:
    """Corners of the cube (coordinates 0, 1 or 1/2 drawn per point), the faces of the assumption set."""
    levels = np.array([0.0, 1.0, 0.5, 0.0, 1.0])
    return levels[rng.integers(0, len(levels), (count, n))]


def search_shape(module: Any, bound: Callable[..., Any], decode: Callable[..., Any], shape: dict[str, Any],
                 evaluations: int, seed: int) -> tuple[float, np.ndarray, int]:
    n = Cursor(None)
    decode(shape, n)
    dim = n.used
    rng = np.random.default_rng(seed)
    calls = 0

    def objective(u: np.ndarray) -> float:
        nonlocal calls
        calls += 1
        return -float_ratio(module, bound, decode(shape, Cursor(np.clip(u, 0.0, 1.0))))

    population = max(8, min(40, evaluations // 25))
    init = np.vstack([boundary_points(dim, rng, population // 2), rng.random((population - population // 2, dim))])
    generations = max(1, (evaluations // 2) // population - 1)
    result = differential_evolution(objective, [(0.0, 1.0)] * dim, init=init, maxiter=generations, tol=0.0,
                                    polish=False, seed=int(rng.integers(2**31)), updating="immediate")
    order = np.argsort(result.population_energies)[:3]
    starts = [np.clip(result.population[i], 0.0, 1.0) for i in order]
    best_u, best = starts[0], -float(result.population_energies[order[0]])
    share = max(dim + 1, (evaluations // 3) // len(starts))
    for u in starts:  # the faces first: every coordinate tried at its saturation levels
        u, value = coordinate_sweep(objective, u, share)
        if value > best:
            best_u, best = u, value
    polish = minimize(objective, best_u, method="Nelder-Mead",
                      options={"maxfev": max(20, evaluations // 6), "xatol": 1e-12, "fatol": 0.0})
    if -float(polish.fun) > best:
        best_u, best = np.clip(polish.x, 0.0, 1.0), -float(polish.fun)
    return best, best_u, calls


SWEEP_LEVELS = (0.0, 1.0, 0.5, 1 / 6, 5 / 6, 1 / 3)  # ends and saturation edges of the decoders' maps


def coordinate_sweep(objective: Callable[[np.ndarray], float], u: np.ndarray, budget: int) -> tuple[np.ndarray, float]:
    """Coordinate ascent over the levels where the decoders put the assumption set's faces (plus
    a half step towards each), until a sweep improves nothing or the budget is spent."""
    u = u.copy()
    best, spent, improved = -objective(u), 1, True
    while improved and spent < budget:
        improved = False
        for i in range(len(u)):
            for level in (*SWEEP_LEVELS, (u[i] + 1.0) / 2, u[i] / 2):
                if spent >= budget:
                    return u, best
                trial = u.copy()
                trial[i] = level
                value = -objective(trial)
                spent += 1
                if value > best:
                    u, best, improved = trial, value, True
    return u, best


def decide(statement: str, module: Any, bound: Callable[..., Any], inst: dict[str, object],
           dps: int = DECIDE_DPS) -> dict[str, Any]:
    """The verdict at ``dps`` digits with the statement's own functions; admissibility by ``violations``."""
    broken = [str(v) for v in violations(statement, inst)]
    with mpmath.workdps(dps):
        m, b = module.measured(inst, dps), bound(inst, dps)
        ratio = m / b if b > 0 else mpmath.inf
    return {"measured": mpmath.nstr(m, 20), "bound": mpmath.nstr(b, 20), "ratio": float(ratio),
            "admissible": not broken, "assumptions_broken": broken,
            "violated": bool(m > b) and not broken}


def ordered_variants(module: Any) -> list[str]:
    names = list(module.VARIANTS)
    stated = [v for v in names if v == "as-stated"]
    default = [module.DEFAULT_VARIANT] if module.DEFAULT_VARIANT not in stated else []
    return stated + default + [v for v in names if v not in stated and v not in default]


def search_statement(statement: str, *, seed: int, evaluations: int, seconds: float,
                     variants: list[str] | None = None, max_shapes: int | None = None,
                     where: dict[str, int] | None = None, progress: bool = True) -> dict[str, Any]:
    """Every variant of ``statement`` (as-stated first): the best ratio found over its shapes
    (those matching ``where``; the first ``max_shapes`` of them, smallest first), decided at 60 digits."""
    module = load(statement)
    family = FAMILIES[statement]
    all_shapes = [s for s in shapes(statement, seed) if all(s.get(k, v) == v for k, v in (where or {}).items())]
    all_shapes = all_shapes[:max_shapes]
    names = [v for v in ordered_variants(module) if variants is None or v in variants]
    if not names:
        raise ValueError(f"variants must name some of {statement}'s {sorted(module.VARIANTS)}, got {variants}")
    began = time.monotonic()
    results = []
    for index, variant in enumerate(names):
        bound = module.VARIANTS[variant]
        deadline = began + seconds * (index + 1) / len(names)
        best: tuple[float, np.ndarray, dict[str, Any]] | None = None
        candidates = []
        covered, calls = 0, 0
        for number, shape in enumerate(all_shapes):
            if time.monotonic() > deadline:
                break
            ratio, u, used = search_shape(module, bound, family.decode, shape, evaluations, seed * 100003 + number)
            covered, calls = covered + 1, calls + used
            if best is None or ratio > best[0]:
                best = (ratio, u, shape)
            if ratio > 0.999:
                candidates.append((ratio, u, shape))
        if best is not None and all(c[1] is not best[1] for c in candidates):
            candidates.append(best)
        decided = []
        for ratio, u, shape in sorted(candidates, key=lambda c: -c[0])[:6]:
            inst = family.decode(shape, Cursor(u))
            decided.append({"float64_ratio": ratio, "shape": {k: v for k, v in shape.items() if k != "seed"},
                            **decide(statement, module, bound, inst), "instance": encode_instance(inst)})
        top = max(decided, key=lambda d: d["ratio"] if d["admissible"] else -1.0) if decided else None
        entry = {"statement": statement, "variant": variant, "default": variant == module.DEFAULT_VARIANT,
                 "best_ratio": top["ratio"] if top else None, "violated": any(d["violated"] for d in decided),
                 "shapes_covered": covered, "shapes_total": len(all_shapes), "complete": covered == len(all_shapes),
                 "evaluations": calls, "decided": decided}
        results.append(entry)
        if progress:
            print(f"{statement:<10} {variant:<20} best {entry['best_ratio']!s:<22} violated {entry['violated']!s:<5} "
                  f"shapes {covered}/{len(all_shapes)} evals {calls} t {time.monotonic() - began:.0f}s", flush=True)
    return {"statement": statement, "seconds": time.monotonic() - began, "variants": results}


def sltcheck_worst(findings_path: str | None) -> dict[tuple[str, str], float]:
    """(statement, variant) -> sltcheck's worst ratio, from a findings.json of ``sltcheck check``."""
    if not findings_path:
        return {}
    found: dict[tuple[str, str], float] = {}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if {"statement", "variant", "worst_ratio"} <= value.keys() and value["worst_ratio"] is not None:
                key = (value["statement"], value["variant"])
                found[key] = max(found.get(key, 0.0), float(value["worst_ratio"]))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(read_json(findings_path, "findings"))
    return found


def replay(path: str, dps: int = 100) -> int:
    """Re-decide every recorded instance of an output file at ``dps`` digits; 1 if any is violated."""
    payload = read_json(path, "independent search output")
    if not isinstance(payload, dict) or payload.get("kind") != "independent-search":
        raise ValueError(f"replay must name an output of this script, got {path!r}")
    violated = False
    for record in payload["statements"]:
        for entry in record["variants"]:
            module = load(entry["statement"])
            for recorded in entry["decided"]:
                verdict = decide(entry["statement"], module, module.VARIANTS[entry["variant"]],
                                 decode_instance(recorded["instance"]), dps)
                violated |= verdict["violated"]
                print(f"{entry['statement']:<10} {entry['variant']:<20} ratio {verdict['ratio']:.9g} at {dps} digits "
                      f"(recorded {recorded['ratio']:.9g}) admissible {verdict['admissible']} "
                      f"violated {verdict['violated']}")
    return 1 if violated else 0


def parse_where(pairs: list[str]) -> dict[str, int]:
    dims = sorted({name for family in FAMILIES.values() for name in family.dims})
    out = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in dims or not value.isdigit():
            raise ValueError(f"--where takes DIM=VALUE with DIM one of {', '.join(dims)} and VALUE an integer, "
                             f"got {pair!r}")
        out[name] = int(value)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=STATEMENTS, default=list(STATEMENTS))
    parser.add_argument("--variants", nargs="+", help="only these variants (default: all, as-stated first)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--evaluations", type=int, default=1500, help="float64 evaluations per shape and variant")
    parser.add_argument("--seconds", type=float, default=240.0, help="wall-time cap per statement")
    parser.add_argument("--shapes", type=int, help="only the first N shapes of each statement (smallest first)")
    parser.add_argument("--where", nargs="+", default=[], metavar="DIM=VALUE",
                        help="only the shapes with these dimensions, e.g. --where d1=2 H=2 (a statement without DIM "
                             "keeps its shapes)")
    parser.add_argument("--out", default="independent_search.json")
    parser.add_argument("--compare", help="a findings.json of `sltcheck check`: its worst ratios beside ours")
    parser.add_argument("--replay", metavar="OUTPUT", help="re-decide its instances at 100 digits")
    args = parser.parse_args(argv)
    if args.replay:
        return replay(args.replay)
    for name, value in (("--evaluations", args.evaluations), ("--seconds", args.seconds),
                        ("--shapes", args.shapes or 1)):
        if value <= 0:
            raise ValueError(f"{name} must be positive, got {value}")
    where = parse_where(args.where)
    theirs = sltcheck_worst(args.compare)
    statements: list[dict[str, Any]] = []
    payload = {"schema_version": SCHEMA_VERSION, "kind": "independent-search", "seed": args.seed,
               "evaluations_per_shape": args.evaluations, "seconds_per_statement": args.seconds,
               "max_shapes": args.shapes, "where": where, "decided_at_dps": DECIDE_DPS, "partial": True,
               "statements": statements}
    for name in args.only:  # each finished statement is written at once (an interrupted run keeps them)
        record = search_statement(name, seed=args.seed, evaluations=args.evaluations, seconds=args.seconds,
                                  variants=args.variants, max_shapes=args.shapes, where=where)
        for entry in record["variants"]:
            entry["sltcheck_worst_ratio"] = theirs.get((entry["statement"], entry["variant"]))
        statements.append(record)
        payload["partial"] = len(statements) < len(args.only)
        write_json_atomic(args.out, payload)
    print(f"\n{'statement':<10} {'variant':<20} {'independent':>12} {'sltcheck':>10}  violated  complete")
    for record in statements:
        for e in record["variants"]:
            ours = "-" if e["best_ratio"] is None else f"{e['best_ratio']:.6g}"
            other = "-" if e["sltcheck_worst_ratio"] is None else f"{e['sltcheck_worst_ratio']:.6g}"
            print(f"{e['statement']:<10} {e['variant']:<20} {ours:>12} {other:>10}  {e['violated']!s:<8}  "
                  f"{e['complete']}")
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
