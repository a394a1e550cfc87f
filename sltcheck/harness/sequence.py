"""Sequence structure for the worst-case search: k distinct tokens, each with a continuous fraction.

With a full mask, the output of token i depends on the other tokens only through their empirical
distribution: T tokens taking k distinct values are a weighted point set, and T matters only
through the fraction of the tokens at each value. A worst case can need a fraction that no short
sequence realises (Lemma 13 as stated: one token value in 5 / (3 e^2 + 5) = 0.18405 of them), so
enumerating T = 1..6 misses it. This module lets the search move the fractions like any other
continuous field:

- a *structured shape* ``{..., "T": k, "atoms": k}`` of an instance module that opts in
  (``SEQUENCE = Structure(...)`` in its ``instances.py``) has k tokens and a field ``multiplicity``
  (``sltcheck.statement_types.MULTIPLICITY``): their fractions, each at least 1 / :data:`LONGEST`,
  summing to 1. A statement's measured side reads it as "token k counted n_k times"
  (``reference.masked_softmax``'s weights; the torch twins add log n_k to the logits), the
  *weighted instance*: smooth in the fractions, so the climbs move them, by autograd or finite
  differences;
- every point a climb returns is *realised*: the smallest T <= :data:`LONGEST` whose integer
  counts n_j >= 1 come within :data:`TOLERANCE` of every fraction (else the T <= LONGEST that comes
  closest), each token repeated n_j times; the search ranks and decides (in mpmath, as before) only
  realised instances, which carry no multiplicities;
- masks: full, or causal among the k tokens (token j attends to tokens 1..j), realised as the
  causal T x T mask (the last copy of token j then attends exactly as the weighted token j;
  the other copies add rows, which can only raise a max over rows); a statement whose rows feed
  later blocks (Theorem 14) declares ``causal=False``.

At integer multiplicities the weighted instance and its realisation have the same measured side
(tests/test_sequence.py holds them equal at 40 digits), so the weighted climb sees exactly the
realised instances' landscape, interpolated between the realisable fractions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from sltcheck.contract import optional
from sltcheck.statement_types import MULTIPLICITY, Instance

#: Longest realised sequence. A realised instance is decided in mpmath row by row (T^2 H exponentials
#: where the outputs agree to rounding); at 64 tokens that stays within a second or two.
LONGEST = 64
#: A realisation is accepted once every count n_j / T is this close to its fraction.
TOLERANCE = 1e-4
# Distinct tokens of the structured shapes.
ATOMS = (2, 3)


@dataclass(frozen=True)
class Structure:
    """How an instance module's instances are sequences (its ``SEQUENCE``).

    ``token_axes``: field -> how many leading axes index tokens (1: rows, e.g. X (T, d1); 2: rows and
    columns, e.g. Lemma 8's logits (T, T)); ``mask``: the (T, T) mask field; ``causal``: whether a
    mask causal among the distinct tokens keeps the structure; ``atoms``: the numbers of distinct
    tokens of the structured shapes; ``longest``: the longest realised sequence.
    """

    token_axes: Mapping[str, int]
    mask: str = "mask"
    causal: bool = True
    atoms: tuple[int, ...] = ATOMS
    longest: int = LONGEST
    tolerance: float = TOLERANCE

    @property
    def least(self) -> float:
        """The least fraction of a token: one copy in the longest sequence."""
        return 1.0 / self.longest


def structure(module: ModuleType) -> Structure | None:
    return optional(module, "SEQUENCE")


def structured(shape: Mapping[str, int]) -> bool:
    return "atoms" in shape


def shapes(module: ModuleType) -> list[dict[str, int]]:
    """The module's shapes, smallest first, each group of shapes that differ only in T with its
    structured shapes (one per number of distinct tokens in ``SEQUENCE.atoms``) right after its
    longest sequence."""
    plain = list(module.shapes())
    found = structure(module)
    if found is None:
        return plain
    last = {_group(shape): index for index, shape in enumerate(plain)}  # a group's longest sequence
    out: list[dict[str, int]] = []
    for index, shape in enumerate(plain):
        out.append(shape)
        if last[_group(shape)] == index:
            out += [{**shape, "T": k, "atoms": k} for k in found.atoms]
    return out


def _group(shape: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((k, v) for k, v in shape.items() if k != "T"))


def project_fractions(values: Any, least: float) -> np.ndarray:
    """Fractions >= ``least`` summing to 1: each value clipped at ``least``, then the parts above it
    scaled to the mass that is left (all at ``least`` where none is above). Idempotent: fractions
    that already qualify come back unchanged."""
    f = np.asarray(values, dtype=np.float64)
    k = f.size
    if not least * k <= 1.0:
        raise ValueError(f"least must be at most 1/k = {1.0 / k!r} for {k} tokens, got {least!r}")
    if np.all(f >= least) and abs(f.sum() - 1.0) <= 4 * k * np.finfo(np.float64).eps:
        return f.copy()  # already fractions: left exactly as they are
    above = np.maximum(np.nan_to_num(f, nan=least) - least, 0.0)
    total = above.sum()
    if not total > 0 or not math.isfinite(total):
        return np.full(k, 1.0 / k)
    out = least + above * ((1.0 - least * k) / total)
    return out


def project_fractions_torch(values: Any, least: float) -> Any:
    """:func:`project_fractions` on a torch tensor, differentiable almost everywhere."""
    import torch

    f = torch.as_tensor(values, dtype=torch.float64)
    k = f.numel()
    above = torch.clamp(torch.nan_to_num(f, nan=least) - least, min=0.0)
    total = above.sum()
    if not bool(total > 0) or not bool(torch.isfinite(total)):
        return torch.full_like(f, 1.0 / k)
    return least + above * ((1.0 - least * k) / total)


# Distinct tokens beyond two: their fractions are tried on the grid of multiples of 1 / GRID (every
# token at least one step); two tokens are tried at every fraction a realisation can have.
GRID = 16


def fraction_candidates(k: int, longest: int = LONGEST) -> list[np.ndarray]:
    """Fractions of ``k`` distinct tokens to try by construction, in a fixed order: for two, every
    (n / T, 1 - n / T) with 1 <= n < T <= ``longest`` (each realisable value once, by increasing n / T);
    for more, every composition of GRID into k positive parts, over GRID."""
    if k == 2:
        values = sorted({(n / T, n, T) for T in range(2, longest + 1) for n in range(1, T) if math.gcd(n, T) == 1})
        return [np.array([n / T, (T - n) / T]) for _, n, T in values]
    return [np.asarray(parts, dtype=np.float64) / GRID for parts in _compositions(GRID, k)]


def _compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    """Every way to write ``total`` as ``parts`` positive integers, in lexicographic order."""
    if parts == 1:
        return [(total,)]
    return [(first, *rest) for first in range(1, total - parts + 2) for rest in _compositions(total - first, parts - 1)]


def counts(fractions: Any, longest: int = LONGEST, tolerance: float = TOLERANCE) -> np.ndarray:
    """Integer counts n_j >= 1 of a realisation: the smallest T <= ``longest`` at which every
    n_j / T is within ``tolerance`` of its fraction (largest-remainder rounding), else the T
    <= ``longest`` that comes closest (the smallest such T on a tie)."""
    f = np.asarray(fractions, dtype=np.float64)
    k = f.size
    if k == 0 or not np.all(np.isfinite(f)) or not np.all(f > 0):
        raise ValueError(f"fractions must be positive and finite, got {f.tolist()!r}")
    if longest < k:
        raise ValueError(f"longest must be >= {k} (one copy of each token), got {longest!r}")
    f = f / f.sum()
    best: tuple[float, np.ndarray] | None = None
    for T in range(k, longest + 1):
        n = _rounded(f, T)
        error = float(np.abs(n / T - f).max())
        if error <= tolerance:
            return n
        if best is None or error < best[0]:
            best = (error, n)
    assert best is not None
    return best[1]


def _rounded(f: np.ndarray, T: int) -> np.ndarray:
    """Largest-remainder rounding of f T to integers >= 1 summing to T."""
    exact = f * T
    n = np.maximum(np.floor(exact).astype(np.int64), 1)
    while n.sum() > T:  # the ones raised to 1 taken back from the largest
        n[int(np.argmax(n))] -= 1
    order = np.argsort(-(exact - np.floor(exact)), kind="stable")
    i = 0
    while n.sum() < T:
        n[order[i % f.size]] += 1
        i += 1
    return n


def _mask_kind(mask: np.ndarray) -> str:
    k = mask.shape[0]
    if np.array_equal(mask, np.ones((k, k), dtype=mask.dtype)):
        return "full"
    if np.array_equal(mask, np.tril(np.ones((k, k), dtype=mask.dtype))):
        return "causal"
    raise ValueError(f"mask of a weighted instance must be full or causal, got {mask.astype(int).tolist()!r}")


def realise(instance: Instance, found: Structure) -> Instance:
    """The instance a weighted one stands for: token j repeated n_j times (:func:`counts`), the
    mask full or causal at the realised length, no multiplicities."""
    if MULTIPLICITY not in instance:
        return instance
    n = counts(instance[MULTIPLICITY], found.longest, found.tolerance)
    out = {key: value for key, value in instance.items() if key != MULTIPLICITY}
    for key, axes in found.token_axes.items():
        if key in out:
            value = np.asarray(out[key])
            for axis in range(axes):
                value = np.repeat(value, n, axis=axis)
            out[key] = value
    mask = np.asarray(instance[found.mask])
    T = int(n.sum())
    full = np.ones((T, T), dtype=mask.dtype)
    out[found.mask] = full if _mask_kind(mask) == "full" else np.tril(full)
    return out


def weighted_start(module: ModuleType, shape: Mapping[str, int], rng: np.random.Generator, *,
                   on_boundary: bool) -> Instance:
    """A start at a structured shape: the module's start with k = ``shape["atoms"]`` tokens, the mask
    full (or, a third of the time where the structure allows, causal), and fractions: on the
    boundary one token at the least fraction, the others sharing the rest, or all near equal; else random."""
    found = structure(module)
    assert found is not None
    k = int(shape["atoms"])
    base = {key: value for key, value in shape.items() if key != "atoms"}
    instance = dict(module.start({**base, "T": k}, rng, on_boundary=on_boundary))
    causal = found.causal and rng.random() < 1 / 3
    ones = np.ones((k, k), dtype=np.int8)
    instance[found.mask] = np.tril(ones) if causal else ones
    if on_boundary and rng.random() < 0.5:
        fractions = np.full(k, (1.0 - found.least) / (k - 1))
        fractions[rng.integers(k)] = found.least
    else:  # near equal on the boundary (not equal: there rows tie and the gradient of their max cancels)
        fractions = rng.dirichlet(np.full(k, 8.0 if on_boundary else 1.0))
    instance[MULTIPLICITY] = project_fractions(fractions, found.least)
    return instance


@dataclass(frozen=True)
class Space:
    """One shape's search space: the map from a point of the search to the instance it stands for,
    the projection onto the assumptions (the fractions' too, on a structured shape), the start, and
    the realisation that is evaluated and decided (the instance itself on a plain shape).

    A point is an instance with two changes: a structured shape's points carry fractions (weighted
    instances), and a field the module names in ``RELATIVE`` (field -> (base field or None, scale
    field), applied in order) is held relative to its base and scale, e.g. Lemma 12's tokens as
    X / alpha (alpha moves them along) and its perturbed tokens as (X' - X) / eps_max: the
    measured side is a difference of size eps_max, so in absolute coordinates every token moved
    alone changes the step by its whole move and the climb stalls; relative ones move the pair
    together.
    """

    module: ModuleType
    shape: Mapping[str, int]
    free: tuple[str, ...]

    @property
    def found(self) -> Structure | None:
        return structure(self.module) if structured(self.shape) else None

    @property
    def relative(self) -> Mapping[str, tuple[str | None, str]]:
        return optional(self.module, "RELATIVE")

    def point(self, instance: Instance) -> Instance:
        """The search's point of an instance (relative fields divided out, last named first)."""
        out = dict(instance)
        for key, (base, scale) in reversed(list(self.relative.items())):
            if key in out:
                size = float(out[scale])  # type: ignore[arg-type]
                offset = np.asarray(out[key], dtype=np.float64) - (np.asarray(out[base]) if base else 0.0)
                out[key] = offset / size if size > 0 else np.zeros_like(offset)
        return out

    def instance(self, point: Instance) -> Instance:
        """The (weighted, on a structured shape) instance a point stands for."""
        out = dict(point)
        for key, (base, scale) in self.relative.items():
            if key in out:
                step = np.asarray(out[key], dtype=np.float64) * float(out[scale])  # type: ignore[arg-type]
                out[key] = (np.asarray(out[base], dtype=np.float64) + step) if base else step
        return out

    def project(self, point: Instance) -> Instance:
        """The point back inside the assumptions (the module's ``project``) and inside the box of
        the module's ``limits`` (its free scalar fields clipped, then projected again), so starts
        and hops obey the same box as the climbs."""
        out = dict(self.module.project(self.instance(point)))
        clipped = self._clipped(out)
        if clipped is not out:
            out = dict(self.module.project(clipped))
        if self.found is not None and MULTIPLICITY in out:
            out[MULTIPLICITY] = project_fractions(out[MULTIPLICITY], self.found.least)
        return self.point(out)

    def _clipped(self, instance: Instance) -> Instance:
        """``instance`` with its free scalar fields clipped into ``limits`` (itself where none moves)."""
        limits = optional(self.module, "limits")(dict(self.shape))
        moved = {}
        for key, (low, high) in limits.items():
            if key in self.free and key in instance and np.ndim(instance[key]) == 0:  # type: ignore[arg-type]
                value = float(instance[key])  # type: ignore[arg-type]
                if math.isnan(value):
                    continue
                inside = min(max(value, -math.inf if low is None else low), math.inf if high is None else high)
                if inside != value:
                    moved[key] = inside
        return {**instance, **moved} if moved else instance

    def start(self, rng: np.random.Generator, *, on_boundary: bool) -> Instance:
        """A start as an instance (the caller sets its fixed fields, then projects it to a point)."""
        if self.found is not None:
            return weighted_start(self.module, self.shape, rng, on_boundary=on_boundary)
        return self.module.start(dict(self.shape), rng, on_boundary=on_boundary)

    def realise(self, point: Instance) -> Instance:
        instance = self.instance(point)
        return realise(instance, self.found) if self.found is not None else instance

    def realised_shape(self, point: Instance) -> dict[str, int]:
        """The shape with T the realised length (the number of distinct tokens under ``atoms``)."""
        shape = dict(self.shape)
        if self.found is not None and MULTIPLICITY in point:
            shape["T"] = int(counts(point[MULTIPLICITY], self.found.longest, self.found.tolerance).sum())
        return shape

    def bounds(self, point: Instance) -> list[tuple[float | None, float | None]]:
        """Box bounds of the flattened free fields (None: unbounded): the module's ``limits(shape)``
        for its scalar fields (e.g. alpha >= sqrt(max(d1, d2))) and the fractions' [least, 1]; a
        climb given them by L-BFGS-B stays on the face it climbs along instead of following a
        gradient out through a clamp of the projection (whose gradient is one-sided)."""
        limits = optional(self.module, "limits")(dict(self.shape))
        if self.found is not None:
            limits = {**limits, MULTIPLICITY: (self.found.least, 1.0)}
        out: list[tuple[float | None, float | None]] = []
        for key in self.free:
            value = point[key]
            size = sum(np.asarray(v).size for v in value) if isinstance(value, tuple | list) else np.asarray(value).size
            out += [limits.get(key, (None, None))] * size
        return out

    def torch_side(self, twin: ModuleType | None) -> Any:
        """The statement's differentiable module on points: relative fields multiplied out and the
        fractions projected before its own projection."""
        if twin is None or (self.found is None and not self.relative):
            return twin
        least = self.found.least if self.found is not None else None
        relative = dict(self.relative)

        def project(fields: dict[str, Any]) -> dict[str, Any]:
            import torch

            fields = dict(fields)
            for key, (base, scale) in relative.items():
                if key in fields:
                    step = torch.as_tensor(fields[key], dtype=torch.float64) * torch.as_tensor(
                        fields[scale], dtype=torch.float64)
                    fields[key] = step + torch.as_tensor(fields[base], dtype=torch.float64) if base else step
            out = dict(twin.project(fields))
            if least is not None and MULTIPLICITY in out:
                out[MULTIPLICITY] = project_fractions_torch(out[MULTIPLICITY], least)
            return out

        return _Twin(project, twin.measured, twin.BOUNDS)


@dataclass(frozen=True)
class _Twin:
    project: Callable[[dict[str, Any]], dict[str, Any]]
    measured: Callable[[dict[str, Any]], Any]
    BOUNDS: Mapping[str, Any]


def space(module: ModuleType, shape: Mapping[str, int], fixed: Mapping[str, object]) -> Space:
    """The search space of ``shape``: the module's FREE fields not held by ``fixed``, plus the
    fractions on a structured shape."""
    free = tuple(key for key in module.FREE if key not in fixed)
    if structured(shape):
        free += (MULTIPLICITY,)
    return Space(module, dict(shape), free)


__all__ = ["ATOMS", "GRID", "LONGEST", "MULTIPLICITY", "TOLERANCE", "Space", "Structure", "counts",
           "fraction_candidates", "project_fractions",
           "project_fractions_torch", "realise", "shapes", "space", "structure", "structured", "weighted_start"]
