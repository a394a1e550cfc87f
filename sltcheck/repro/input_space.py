"""Every input, not the test set: certified brackets of a pruned source's worst error (``--input-space``).

The theorems bound sup ||S(x_i) - T(x_i)|| (the max over tokens i) over every admissible input; a sweep
measures it on its test set. For each pruned source and length T this module brackets that supremum
over two spaces, each written as a box of parameters:

- **task** (:func:`task_space`): the task's whole input space, (omega, theta_0) in [-pi, pi] x [0, pi]
  (Appendix B.1): x_t = (cos(omega t + theta_0), sin(omega t + theta_0)), t = 1..T, after the run's
  regression token;
- **ball** (:func:`ball_space`): every input whose tokens have norm <= alpha (Section 3.1), the
  regression token as the run fixes it: x_t in [-alpha, alpha]^2 (Cartesian, boxes outside the disc
  dropped), 2T parameters, the tokens' order fixed by the permutation symmetry.

A bracket's **lower** end is an instance: the best point of a search (a quasi-random sample of the box
and the test set's worst sequences, each of the best refined by L-BFGS-B; then the branch-and-bound's
own midpoints), whose error is decided in mpmath at ``VERDICT_DPS`` digits through
:mod:`sltcheck.model.reference` (the paper's objects as defined: a second code path). Its **upper** end
is proved: interval branch-and-bound over the box, each box enclosed by the *difference* form of
:mod:`sltcheck.model.difference` in outward-rounded interval arithmetic
(:mod:`sltcheck.numerics.interval_arrays`; over the task, in mean-value form with
:mod:`sltcheck.numerics.jets`; over a transformer's ball, in the affine forms of
:mod:`sltcheck.numerics.affine_arrays`: ``FORM``), capped by the trivial bound over the ball; the upper is the largest
enclosure over the leaves, so it holds however the boxes were chosen. The best-first search splits the
boxes of largest enclosure across their widest dimension (relative to the space's) until every leaf is
within ``GOALS[space] ** 0.5`` of the lower end, or its budget of boxes (deterministic: the same machine
gives the same bracket) is spent.

A bracket is ``certified`` when upper / lower <= ``GOALS[space]`` (1.1 for the task, 2 for the ball);
otherwise it is ``undecided`` with the bracket reached. A lower end above the source's bound is a
certified violation of the theorem; an upper end at or below it proves the theorem on that source over
the whole space.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from sltcheck.model import reference
from sltcheck.model.difference import (
    ENCLOSURES,
    MergedDifference,
    merged_difference,
    mha_difference,
    token_norms,
    transformer_difference,
)
from sltcheck.model.weights import MHAWeights, TransformerWeights
from sltcheck.numerics.affine_arrays import Affine
from sltcheck.numerics.affine_arrays import concatenate as affine_concatenate
from sltcheck.numerics.affine_arrays import stack as affine_stack
from sltcheck.numerics.interval_arrays import Intervals, cos, sin, upper_ends
from sltcheck.numerics.jets import Jet, concatenate, mean_value, stack
from sltcheck.numerics.verdict import decide

SPACES = ("task", "ball")
# The enclosures' version, in every record (``engine``): a record is recomputed only by the engine that wrote it
# (another encloses the same boxes otherwise, so its brackets differ, both valid). 1: intervals and jets (no
# ``engine`` in the record); 2: affine forms over a transformer's ball (FORM, AFFINE_UP_TO, BOX_BUDGET per form).
ENGINE = 2
GOALS = {"task": 1.1, "ball": 2.0}  # upper / lower at which a bracket is certified (issue 44's goals)
# Boxes enclosed per bracket at most, for one attention layer at T = 4, by the form that encloses them (the
# ball: about a minute of one core in either of its forms; an affine box costs about 5 plain ones);
# :meth:`SourcePair.cost` scales it down for longer inputs and for transformers.
BOX_BUDGET = {"task": {"mean-value": 200_000}, "ball": {"affine": 300_000, "interval": 1_500_000}}
BATCH = 2048  # boxes split per round (each gives two)
# How a box is enclosed: "interval" (the plain interval evaluation), "mean-value" (first-order jets: the
# excess shrinks with the square of the box's width, but the gradient's enclosure widens through every
# block), "affine" (first-order affine forms, sltcheck.numerics.affine_arrays: as quadratic, and nothing is
# wrapped into intervals through the blocks).
FORMS = ("interval", "mean-value", "affine")
# By space and model (an attention layer, a transformer), measured side by side at equal time
# (benchmarks/input_space_forms.py): over the ball an MHA's plain intervals bracket as tightly per box as
# the affine forms at a fifth of the cost, a transformer's blocks need the forms.
FORM = {("task", "mha"): "mean-value", ("task", "transformer"): "mean-value",
        ("ball", "mha"): "interval", ("ball", "transformer"): "affine"}
# An affine form holds 2T coefficients for each of the (T + 1)^2 logits of a ball's box: beyond this many tokens
# (fig5's T = 16, 64: 9,000 and 540,000 floats a box) the ball takes the plain interval enclosure.
AFFINE_UP_TO = 8
MAX_OPEN = 1_000_000  # open boxes kept at most (memory: 16 bytes per parameter per box)
SAMPLE = 4096  # quasi-random points of the search
REFINED = 6  # best distinct points refined by L-BFGS-B
PI_OUT = math.nextafter(math.pi, math.inf)  # covers the real pi (the float pi lies below it)


@dataclass(frozen=True)
class Space:
    """A box of parameters and the tokens they give: :meth:`tokens` of float arrays (points, (N, D)) or
    of two arrays (a box's ends: then :class:`~sltcheck.numerics.interval_arrays.Intervals`, jets or
    affine forms enclosing every token of the box)."""

    name: str
    names: tuple[str, ...]
    lows: np.ndarray
    highs: np.ndarray
    token: np.ndarray  # the regression token x_0
    length: int
    tokens_of: Callable[[Any, int], Any]  # (parameters (N, D): floats, Intervals or a Jet; T) -> (N, T, 2)
    mp_tokens_of: Callable[[list[Any], int], list[Any]]  # one point's tokens in mpmath (after x_0)
    inner: tuple[np.ndarray, np.ndarray]  # where a search point may lie (inside the real space)
    ordered: slice | None = None  # parameters that may be taken in increasing order (a symmetry)
    radius: float | None = None  # tokens (pairs of parameters) of norm above it hold no input

    def tokens(self, lows: np.ndarray, highs: np.ndarray | None = None, form: str = "interval") -> Any:
        """The tokens at points (``highs`` None), or over boxes in one of ``FORMS``: their interval enclosures,
        their jets (``mean-value``) or their affine forms."""
        parameters: Any
        if highs is None:
            parameters = lows
        elif form == "interval":
            parameters = Intervals(lows, highs)
        elif form == "mean-value":
            parameters = Jet.variables(lows, highs)
        elif form == "affine":
            parameters = Affine.variables(lows, highs)
        else:
            raise ValueError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
        body = self.tokens_of(parameters, self.length)
        count = lows.shape[0]
        first = np.broadcast_to(self.token, (count, 1, 2))
        if isinstance(body, Jet):
            return concatenate(first, body, axis=1)
        if isinstance(body, Affine):
            return affine_concatenate(first, body, axis=1)
        if isinstance(body, Intervals):
            return Intervals(np.concatenate([first, body.lo], axis=1), np.concatenate([first, body.hi], axis=1))
        return np.concatenate([first, body], axis=1)

    def mp_tokens(self, point: np.ndarray, dps: int) -> np.ndarray:
        with mpmath.workdps(dps):
            rows = [[mpmath.mpf(float(v)) for v in self.token]]
            rows += self.mp_tokens_of([mpmath.mpf(float(v)) for v in point], self.length)
            return np.array(rows, dtype=object)


def _task_tokens(parameters: Any, length: int) -> Any:
    omega, theta = parameters[:, 0], parameters[:, 1]
    angles = [omega * float(t) + theta for t in range(1, length + 1)]
    return _unit_tokens(angles)


def _unit_tokens(angles: list[Any]) -> Any:
    columns = [(cos(angle), sin(angle)) for angle in angles]
    if isinstance(columns[0][0], Jet):
        return stack([part for pair in columns for part in pair]).reshape(-1, len(angles), 2)
    if isinstance(columns[0][0], Affine):
        return affine_stack([part for pair in columns for part in pair]).reshape(-1, len(angles), 2)
    if isinstance(columns[0][0], Intervals):
        lo = np.stack([np.stack([c.lo, s.lo], axis=-1) for c, s in columns], axis=1)
        hi = np.stack([np.stack([c.hi, s.hi], axis=-1) for c, s in columns], axis=1)
        return Intervals(lo, hi)
    return np.stack([np.stack([c, s], axis=-1) for c, s in columns], axis=1)


def task_space(length: int, token: np.ndarray | None) -> Space:
    def mp_tokens(point: list[Any], length: int) -> list[Any]:
        omega, theta = point
        return [[mpmath.cos(omega * t + theta), mpmath.sin(omega * t + theta)] for t in range(1, length + 1)]

    return Space("task", ("omega", "theta_0"), np.array([-PI_OUT, 0.0]), np.array([PI_OUT, PI_OUT]),
                 _token(token), length, _task_tokens, mp_tokens,
                 (np.array([-math.pi, 0.0]), np.array([math.pi, math.pi])))


def ball_space(length: int, token: np.ndarray | None, alpha: float) -> Space:
    """Cartesian coordinates: x_t in [-alpha, alpha]^2, a box wholly outside the disk dropped, a point
    outside it moved onto it (the search's points), a box straddling it enclosed whole (a superset)."""
    def mp_tokens(point: list[Any], length: int) -> list[Any]:
        rows = []
        for t in range(length):
            x, y = point[2 * t], point[2 * t + 1]
            norm = mpmath.sqrt(x * x + y * y)
            shrink = 1 if norm <= alpha else alpha / norm * (1 - mpmath.mpf(10) ** -20)
            rows.append([x * shrink, y * shrink])
        return rows

    names = tuple(f"{axis}_{t}" for t in range(1, length + 1) for axis in ("x", "y"))
    lows, highs = np.full(2 * length, -alpha), np.full(2 * length, alpha)
    # The outputs at x_1..x_T are permuted with them (every token attends to every token, no position
    # enters): the worst error over the ball is its worst over inputs whose first coordinates increase.
    return Space("ball", names, lows, highs, _token(token), length, _disk_tokens(alpha), mp_tokens, (lows, highs),
                 ordered=slice(0, 2 * length, 2), radius=alpha)


def _disk_tokens(alpha: float) -> Callable[[Any, int], Any]:
    def tokens(parameters: Any, length: int) -> Any:
        if isinstance(parameters, (Jet, Affine)):
            return parameters.reshape(-1, length, 2)
        if isinstance(parameters, Intervals):
            return Intervals(parameters.lo.reshape(-1, length, 2), parameters.hi.reshape(-1, length, 2))
        X = parameters.reshape(-1, length, 2)
        norms = np.sqrt((X * X).sum(axis=-1, keepdims=True))
        return X * np.minimum(1.0, alpha / np.maximum(norms, 1e-300))

    return tokens


def _token(token: np.ndarray | None) -> np.ndarray:
    return np.zeros(2) if token is None else np.asarray(token, dtype=np.float64)


@dataclass(frozen=True)
class SourcePair:
    """A target and its pruned source, and their difference's enclosure (float points or boxes)."""

    target: MHAWeights | TransformerWeights
    pruned: MHAWeights | TransformerWeights
    points: list[MergedDifference]
    boxes: list[MergedDifference]

    @classmethod
    def of(cls, target: MHAWeights | TransformerWeights, pruned: MHAWeights | TransformerWeights) -> SourcePair:
        if isinstance(target, MHAWeights) and isinstance(pruned, MHAWeights):
            pairs = [(target, pruned)]
        elif isinstance(target, TransformerWeights) and isinstance(pruned, TransformerWeights):
            pairs = [(t.attention, s.attention) for t, s in zip(target.blocks, pruned.blocks, strict=True)]
        else:
            raise ValueError(f"target and pruned must both be MHAs or both transformers, got "
                             f"{type(target).__name__} and {type(pruned).__name__}")
        return cls(target, pruned, [merged_difference(t, s, False) for t, s in pairs],
                   [merged_difference(t, s, True) for t, s in pairs])

    def form(self, space: Space) -> str:
        """The form that encloses the space's boxes (``FORM``), the plain intervals for a ball of more than
        ``AFFINE_UP_TO`` tokens."""
        form = FORM[space.name, "mha" if isinstance(self.target, MHAWeights) else "transformer"]
        return "interval" if form == "affine" and space.length > AFFINE_UP_TO else form

    def cost(self, length: int) -> float:
        """A box's cost relative to one attention layer's at T = 4, as the budget counts it: the logits grow
        as (T + 1)^2; a transformer block (an attention layer, a residual and two FC nets) costs about three
        layers, and is counted as one (a transformer's source takes about three times an MHA's budget in time)."""
        blocks = 1 if isinstance(self.target, MHAWeights) else len(self.target.blocks)
        return blocks * (length + 1) ** 2 / 25

    def box_errors(self, space: Space, lows: np.ndarray, highs: np.ndarray, form: str | None = None) -> np.ndarray:
        """An upper bound on the error over each box, in ``form`` (default the space's, ``FORM``): the plain
        enclosure, the mean-value form f(m) + grad(box) (box - m) at the box's midpoint m intersected with it,
        or the affine form's range."""
        form = form or self.form(space)
        if form == "mean-value":
            middle = np.clip(lows + (highs - lows) / 2, lows, highs)
            at_middle = self.differences(space.tokens(middle, middle))
            enclosure = mean_value(at_middle, self.differences(space.tokens(lows, highs, form)), lows, highs, middle)
            return upper_ends(token_norms(enclosure)).max(axis=-1)
        return self.errors(space.tokens(lows, highs, form))

    def differences(self, X: Any) -> Any:
        merged = self.boxes if isinstance(X, ENCLOSURES) else self.points
        if isinstance(self.target, MHAWeights):
            return mha_difference(X, None, merged[0])[1]
        return transformer_difference(X, self.target, self.pruned, merged)[1]  # type: ignore[arg-type]

    def errors(self, X: Any) -> np.ndarray:
        """max_i ||S(x_i) - T(x_i)|| per input (floats), or its upper enclosure per box (Intervals, affine
        forms: the norm of each token's difference over its range)."""
        difference = self.differences(X)
        if isinstance(difference, Affine):
            difference = difference.range()
        return upper_ends(token_norms(difference)).max(axis=-1)

    def mp_error(self, X: np.ndarray, dps: int) -> Any:
        """The error at one input in mpmath, through the paper's objects as defined (a second code path)."""
        mask = np.ones((X.shape[0], X.shape[0]), dtype=bool)
        with mpmath.workdps(dps):
            if isinstance(self.target, MHAWeights) and isinstance(self.pruned, MHAWeights):
                difference = reference.mha(X, mask, self.pruned, dps) - reference.mha(X, mask, self.target, dps)
            else:
                difference = (reference.transformer(X, mask, self.pruned, dps)  # type: ignore[arg-type]
                              - reference.transformer(X, mask, self.target, dps))  # type: ignore[arg-type]
            return max(mpmath.sqrt(sum(v * v for v in row)) for row in difference)


# --- the lower end: a search ------------------------------------------------------------------------


def search(space: Space, pair: SourcePair, starts: np.ndarray, seed: np.random.Generator) -> tuple[np.ndarray, float]:
    """The best point found (and its float64 error): ``starts`` and a scrambled Sobol sample of the box,
    the best ``REFINED`` distinct ones refined by L-BFGS-B (gradients by finite differences, batched)."""
    from scipy.stats import qmc

    low, high = space.inner
    sample = qmc.Sobol(len(space.names), scramble=True, seed=seed).random(SAMPLE) * (high - low) + low
    candidates = np.concatenate([np.clip(starts, low, high), sample]) if len(starts) else sample
    values = _batched(pair, space, candidates)
    order = np.argsort(values, kind="stable")[::-1]
    chosen: list[int] = []
    for index in order:
        if all(np.max(np.abs(candidates[index] - candidates[c]) / (high - low + 1e-300)) > 1e-3 for c in chosen):
            chosen.append(int(index))
        if len(chosen) == REFINED:
            break
    return refine(space, pair, candidates[chosen], candidates[order[0]].copy(), float(values[order[0]]))


def refine(space: Space, pair: SourcePair, starts: np.ndarray, best: np.ndarray,
           best_value: float) -> tuple[np.ndarray, float]:
    """The best of ``best`` and of L-BFGS-B's climbs from ``starts`` (inside ``space.inner``)."""
    from scipy.optimize import minimize

    low, high = space.inner
    scale = np.where(high > low, high - low, 1.0)

    def negative(z: np.ndarray) -> tuple[float, np.ndarray]:
        point = low + z * scale
        step = 1e-7
        probes = np.minimum(np.vstack([point, point + step * scale * np.eye(len(point))]), high)
        found = _batched(pair, space, probes)
        return -float(found[0]), -(found[1:] - found[0]) / step

    for start in starts:
        z0 = np.clip((start - low) / scale, 0.0, 1.0)
        result = minimize(negative, z0, jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * len(z0),
                          options={"maxiter": 200})
        point = np.clip(low + result.x * scale, low, high)
        value = float(_batched(pair, space, point[None])[0])
        if value > best_value:
            best, best_value = point, value
    return best, best_value


def _batched(pair: SourcePair, space: Space, points: np.ndarray, size: int = 4096) -> np.ndarray:
    return np.concatenate([pair.errors(space.tokens(points[i:i + size])) for i in range(0, len(points), size)])


# --- the upper end: branch-and-bound ------------------------------------------------------------------


@dataclass
class Bracket:
    lower: float  # the error at ``instance``, decided in mpmath, rounded down
    upper: float  # proved: no input of the space has a larger error
    instance: list[float]  # the parameters of the lower end's input
    boxes: int  # boxes enclosed
    goal: float

    @property
    def certified(self) -> bool:
        return self.lower > 0 and self.upper <= self.goal * self.lower

    def as_dict(self) -> dict[str, Any]:
        return {"lower": self.lower, "upper": self.upper, "certified": self.certified,
                "status": "certified" if self.certified else "undecided", "goal": self.goal,
                "instance": self.instance, "boxes": self.boxes}


def branch_and_bound(space: Space, pair: SourcePair, best: np.ndarray, best_value: float,
                     budget: int) -> tuple[float, np.ndarray, float, int]:
    """(upper, the best midpoint or ``best``, its float error, boxes enclosed): best-first splitting of
    the box with the largest enclosure until every leaf is within sqrt(goal) of the best value."""
    target = math.sqrt(GOALS[space.name])
    widths = np.where(space.highs > space.lows, space.highs - space.lows, 1.0)
    lows, highs = space.lows[None].copy(), space.highs[None].copy()
    uppers = pair.box_errors(space, lows, highs)
    closed, enclosed = -math.inf, 1
    while len(uppers):
        done = uppers <= best_value * target
        if done.any():
            closed = max(closed, float(uppers[done].max()))
            lows, highs, uppers = lows[~done], highs[~done], uppers[~done]
        if not len(uppers) or enclosed >= budget or len(uppers) > MAX_OPEN:
            break
        take = np.argsort(uppers, kind="stable")[::-1][:BATCH]
        keep = np.ones(len(uppers), dtype=bool)
        keep[take] = False
        parent_lows, parent_highs = lows[take], highs[take]
        axis = np.argmax((parent_highs - parent_lows) / widths, axis=1)
        rows = np.arange(len(take))
        middle = parent_lows[rows, axis] + (parent_highs[rows, axis] - parent_lows[rows, axis]) / 2
        left_highs, right_lows = parent_highs.copy(), parent_lows.copy()
        left_highs[rows, axis], right_lows[rows, axis] = middle, middle
        child_lows = np.concatenate([parent_lows, right_lows])
        child_highs = np.concatenate([left_highs, parent_highs])
        kept = np.arange(len(child_lows))
        if space.ordered is not None:  # a box with no ordered point holds no input the symmetry keeps
            ordered = np.all(child_lows[:, space.ordered][:, :-1] <= child_highs[:, space.ordered][:, 1:], axis=1)
            child_lows, child_highs, kept = child_lows[ordered], child_highs[ordered], kept[ordered]
        if space.radius is not None:  # a box with a token wholly outside the disk holds no input
            nearest = np.where(child_lows > 0, child_lows, np.where(child_highs < 0, -child_highs, 0.0))
            inside = np.all((nearest**2).reshape(len(nearest), -1, 2).sum(axis=-1) <= space.radius**2 * (1 + 1e-12),
                            axis=1)
            child_lows, child_highs, kept = child_lows[inside], child_highs[inside], kept[inside]
        child_uppers = np.zeros(0)
        if len(child_lows):
            # a half lies inside its parent: its upper is at most the parent's (its own enclosure may be looser)
            child_uppers = np.minimum(pair.box_errors(space, child_lows, child_highs),
                                      np.concatenate([uppers[take], uppers[take]])[kept])
            midpoints = np.clip(child_lows + (child_highs - child_lows) / 2, *space.inner)
            values = pair.errors(space.tokens(midpoints))
            top = int(np.argmax(values))
            if values[top] > best_value:
                best, best_value = midpoints[top], float(values[top])
        enclosed += len(child_lows)
        lows = np.concatenate([lows[keep], child_lows])
        highs = np.concatenate([highs[keep], child_highs])
        uppers = np.concatenate([uppers[keep], child_uppers])
    upper = max(closed, float(uppers.max()) if len(uppers) else -math.inf)
    if len(uppers):  # climb from the open boxes that reach highest: where the lower end may still be low
        highest = np.argsort(uppers, kind="stable")[::-1][:REFINED]
        best, best_value = refine(space, pair, lows[highest] + (highs[highest] - lows[highest]) / 2, best,
                                  best_value)
    return upper, best, best_value, enclosed


def bracket(space: Space, pair: SourcePair, starts: np.ndarray, seed: np.random.Generator, dps: int,
            budget: int | None = None, cap: float = math.inf) -> tuple[Bracket, float]:
    """The space's bracket of the source's worst error, and the search's best error before branch-and-bound.
    ``cap``: an upper bound known otherwise (the trivial bound over the ball); the bracket's upper end is
    the smaller of it and the branch-and-bound's (which, through several blocks, can stay above it)."""
    point, value = search(space, pair, starts, seed)
    searched = value
    if budget is None:
        budget = max(BATCH, int(BOX_BUDGET[space.name][pair.form(space)] / pair.cost(space.length)))
    upper, point, value, boxes = branch_and_bound(space, pair, point, value, budget)
    upper = min(upper, cap)
    with mpmath.workdps(dps):
        exact = pair.mp_error(space.mp_tokens(point, dps), dps)
        lower = float(mpmath.mpf(exact) * (1 - mpmath.mpf(10) ** (5 - dps)))  # rounded down at dps digits
    if lower > upper:
        raise RuntimeError(f"the {space.name} bracket's decided lower end {lower!r} exceeds its proved upper end "
                           f"{upper!r}: the enclosure and mpmath disagree (a bug; please report it)")
    return Bracket(lower, upper, [float(v) for v in point], boxes, GOALS[space.name]), searched


def trivial_over_ball(pair: SourcePair, alpha: float) -> float:
    """sup ||S(x_i)|| + sup ||T(x_i)|| over the ball, bounded by norms (the triangle inequality's bound): an
    attention layer maps tokens of norm <= a to outputs of norm <= a sum_j ||W_VO^(j)||, a block to
    (1 + Lip F)(1 + sum_j ||W_VO^(j)||) a, Lip F <= prod_l ||W_l||. Float norms, padded by 1e-9."""
    def attention_gain(weights: MHAWeights) -> float:
        return sum(float(np.linalg.norm(v @ o, 2)) for v, o in zip(weights.W_V, weights.W_O, strict=True))

    def reach(model: MHAWeights | TransformerWeights) -> float:
        if isinstance(model, MHAWeights):
            return alpha * attention_gain(model)
        radius = alpha
        for block in model.blocks:
            lipschitz = math.prod(float(np.linalg.norm(w, 2)) for w in block.fc.layers)
            radius *= (1 + lipschitz) * (1 + attention_gain(block.attention))
        return radius

    return (reach(pair.target) + reach(pair.pruned)) * (1 + 1e-9)


def input_space_record(target: MHAWeights | TransformerWeights, pruned: MHAWeights | TransformerWeights,
                       length: int, token: np.ndarray | None, alpha: float, starts: np.ndarray, test_max: float,
                       bound: Any, seed: np.random.Generator, dps: int) -> dict[str, Any]:
    """One source's ``input_space`` record at one length: ``starts`` are the test set's worst (omega, theta_0)."""
    pair = SourcePair.of(target, pruned)
    trivial = trivial_over_ball(pair, alpha)
    task, task_searched = bracket(task_space(length, token), pair, starts, seed, dps, cap=trivial)
    as_ball = np.vstack([_ball_points(starts, length), _ball_points(np.array([task.instance]), length),
                         _ball_points(np.array([task.instance]), length, alpha)])
    ball, ball_searched = bracket(ball_space(length, token, alpha), pair, as_ball, seed, dps, cap=trivial)
    record: dict[str, Any] = {
        "engine": ENGINE, "test_max": test_max, "search_max": max(task_searched, ball_searched),
        "task": task.as_dict(), "ball": ball.as_dict(),
        "bound": bound if isinstance(bound, str) else mpmath.nstr(bound, 20),
        "trivial": trivial,
    }
    with mpmath.workdps(dps):
        finite = mpmath.isfinite(mpmath.mpf(record["bound"]))
        verdict = decide(ball.lower, record["bound"], dps) if finite else None
    record["violated"] = bool(verdict is not None and verdict.violated)
    # proved: the theorem holds on this source for every input of the ball, and its bound says something
    # there (it lies below the trivial bound, which holds anyway)
    with mpmath.workdps(dps):
        record["proved"] = bool(finite and mpmath.mpf(ball.upper) <= mpmath.mpf(record["bound"])
                                < mpmath.mpf(record["trivial"]))
    return record


def _ball_points(task_points: np.ndarray, length: int, radius: float = 1.0) -> np.ndarray:
    """The task's inputs (omega, theta_0) as points of the ball's parameters, their tokens at ``radius``."""
    angles = task_points[:, :1] * np.arange(1, length + 1) + task_points[:, 1:2]
    return (radius * np.stack([np.cos(angles), np.sin(angles)], axis=-1)).reshape(len(task_points), -1)
