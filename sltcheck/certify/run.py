"""Driving the branch-and-bound: rounds of box evaluations on an executor, every round in SQLite.

The open boxes and the running bounds of each family live in ``boxes.sqlite`` in the run
directory; each round (pop the open boxes with the largest uppers, split them, enclose the children
on the executor, keep or close each child) is one transaction, so an interrupted run resumes at its
last finished round and loses nothing. The driver processes a round's results in task order:
the outcome does not depend on the executor, the worker count or the order tasks finish in.
:func:`run_family` names the phases (start, then rounds: pop, split and enclose, raise the lower
bound, keep or close); the store is :mod:`sltcheck.certify.store`, the seeds and the
counterexample's confirmation :mod:`sltcheck.certify.seeds`.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sltcheck.certify import OUTSIDE, Family
from sltcheck.certify.bnb import Box, BoxResult, closable, evaluate_boxes, halves, relative_widths, root, split_all
from sltcheck.certify.seeds import (
    SEARCH_BUDGET,
    SEARCH_SEEDS,
    certified_ratio,
    confirm_violation,
    search_seeds,
    take_seed,
)
from sltcheck.certify.store import Item, State, Store
from sltcheck.executors import Executor, InProcessExecutor
from sltcheck.schema import SCHEMA_VERSION

BATCH = 256  # boxes popped per round (fixed: the result must not depend on the worker count)
CHUNK = 64  # boxes per task
# split "best": the least relative gain in a half's upper that the chosen dimension must bring, else the widest
# dimension is halved (chosen on theorem14/B2-d1-T2 against 1%, 2.5% and 10%: docs/results/certify.md)
BEST_GAIN = 5e-2
# the arrays backend encloses a task's boxes in one batch: larger rounds and tasks
BATCH_ARRAYS, CHUNK_ARRAYS = 8192, 8192
PROGRESS_EVERY = 5.0  # seconds between progress rows
# The climb that follows every rise of the lower bound: a compass search of the family's own point
# ratio (rigorous at each point) from the best point, at most this many evaluations.
CLIMB_EVALUATIONS = 400
CLIMB_FIRST_STEP = 0.125  # of the family's width in each dimension; halved until CLIMB_LAST_STEP
CLIMB_LAST_STEP = 2.0 ** -20
# Open boxes proved <= 1 stay open only to narrow the supremum's bracket; past this many open boxes the
# ones with the least uppers (proved <= 1) are closed until a quarter of the room is free again (their
# uppers still count in the bracket: sound, and the least of them narrow it least), so a long run's
# memory and boxes.sqlite stay bounded (~50 MB a family). Boxes above 1 are always kept.
MAX_OPEN = 200_000


def _evaluate(executor: Executor, family: Family, backend_name: str, boxes: list[Box],
              lower: bool = True) -> list[BoxResult]:
    """The boxes' results. In this process the family travels itself; to other processes by its key (its
    closures do not pickle), which must then name this very family: a family changed and not registered
    would be enclosed there as the registered one while its points used the changed one."""
    chunk = CHUNK_ARRAYS if backend_name == "arrays" else CHUNK
    tasks = [(f"{i:06d}", (boxes[i:i + chunk], lower)) for i in range(0, len(boxes), chunk)]
    if isinstance(executor, InProcessExecutor):
        named: Family | str = family
    else:
        from sltcheck.certify import families

        if families().get(family.key) is not family:
            raise ValueError(f"family {family.key!r} is not the registered family of that key, so workers in other "
                             f"processes cannot rebuild it: register it, or run it in this process (workers 1)")
        named = family.key
    found = dict(executor.map_unordered(evaluate_boxes, (named, backend_name), tasks))  # one pool per family
    return [r for k, _ in tasks for r in found[k]]


# A child box kept open, as the store saves it: (seq, box, upper, volume, argument).
Added = tuple[int, Box, float, float, str | None]


@dataclass(frozen=True)
class CertifyOptions:
    """How one family is certified: :func:`certify_family`'s options (documented there)."""

    backend_name: str
    budget: float
    tolerance: float
    executor: Executor | None = None
    report: Callable[[str], None] | None = None
    rounds: int | None = None
    seeds: list[dict[str, Any]] | None = None
    search: bool = False
    climb: bool = True


def certify_family(family: Family, store: Store, *, backend_name: str, budget: float, tolerance: float,
                   executor: Executor | None = None, report: Callable[[str], None] | None = None,
                   rounds: int | None = None, seeds: list[dict[str, Any]] | None = None,
                   search: bool = False, climb: bool = True) -> dict[str, Any]:
    """Run (or resume) the branch-and-bound of ``family`` for at most ``budget`` seconds more (and,
    where ``rounds`` is given, until it has done that many rounds in all: a result independent of speed).
    ``seeds``: instances of the statement (e.g. the worst ones a search found) that raise the lower
    bound where they lie in the family, besides the family's own seeds. ``search``: a fresh run first
    seeds itself with the worst-case search restricted to the family (``SEARCH_BUDGET``, seeds
    ``SEARCH_SEEDS``), where the family says how (``search_fixed``). ``climb``: every rise of the
    lower bound is followed by a local climb of the family's point ratio from the best point.
    (The same from a :class:`CertifyOptions`: :func:`run_family`.)"""
    return run_family(family, store, CertifyOptions(backend_name, budget, tolerance, executor, report, rounds, seeds,
                                                    search, climb))


def run_family(family: Family, store: Store, options: CertifyOptions) -> dict[str, Any]:
    """The branch-and-bound of :func:`certify_family`, phase by phase: its configuration, a fresh start
    (seeded) or the stored state resumed, then rounds until decided, out of boxes, time or rounds."""
    from sltcheck.harness import interval_verdict as certified

    executor = options.executor or InProcessExecutor()
    config = _configuration(family, options)
    deadline = time.perf_counter() + options.budget  # the seeding counts against the budget
    cap = capping(family, store)
    state, heap = _start(family, store, options, config, executor, cap)
    start = time.perf_counter()
    spent = state.seconds
    last_row = -math.inf
    while _going_on(state, heap, deadline, options.rounds):
        removed, added = _round(family, options, executor, state, heap, cap)
        state.rounds += 1
        state.seconds = spent + time.perf_counter() - start
        if state.best_lower > 1.0 and state.counterexample is None:
            confirm_violation(family, state, certified)
        if not heap and state.verdict is None:
            state.verdict = "held"
        last_row = _progress(family, state, heap, last_row, options.report)
        store.save(family.key, config, state, removed, added)
    return summary(family, state, heap, options.backend_name, options.tolerance)


def capping(family: Family, store: Store) -> float | None:
    """The upper end of the supremum of the family that caps ``family``
    (:attr:`sltcheck.certify.Family.capped_by`) as ``store`` proves it (verified: digest and volume), or None: no
    cap, or that family not (yet) in the store."""
    if family.capped_by is None:
        return None
    found = store.recorded(family.capped_by)
    if found is None:
        return None
    _, state, opened = found
    upper = _upper(state, opened)
    return upper if math.isfinite(upper) else None


def cap_argument(family: Family) -> str:
    """How a box the cap proves is recorded (as an argument's boxes are: ``proved_by_argument``)."""
    return f"capped by {family.capped_by}"


def _capped(family: Family, state: State, results: list[BoxResult], cap: float | None) -> list[BoxResult]:
    """Each result whose upper exceeds ``cap`` takes the cap (a bound on every instance of the family); where one
    does, ``state.cap`` becomes the least cap taken (saved with the round that took it: what verify checks)."""
    if cap is None:
        return results
    name = cap_argument(family)
    out = [replace(r, upper=cap, argument=name) if r.state != OUTSIDE and r.upper > cap else r for r in results]
    if any(r.argument == name for r in out):
        state.cap = cap if state.cap is None else min(state.cap, cap)
    return out


def _within_parents(popped: list[Item], results: list[BoxResult]) -> list[BoxResult]:
    """Each child's result with an upper above its parent's takes the parent's (and the argument that proved it):
    the child lies inside the parent, so that bound holds there too, and no family's upper end ever rises
    between rounds (a cap taken from it stays proved)."""
    out = []
    for index, result in enumerate(results):
        upper, _, _, _, argument = popped[index // 2]
        if result.state != OUTSIDE and result.upper > -upper:
            result = replace(result, upper=-upper, argument=argument)
        out.append(result)
    return out


def _searching(family: Family, options: CertifyOptions) -> bool:
    """Whether a fresh run seeds itself with the worst-case search (asked, and the family says how)."""
    return options.search and family.search_fixed is not None


def _configuration(family: Family, options: CertifyOptions) -> dict[str, Any]:
    """What the stored proof depends on (a resumed run must have the same): backend, tolerance, box,
    seeding search, climb, arguments, split and the capping family (only where there is one: a store written
    before caps resumes)."""
    return {"schema_version": SCHEMA_VERSION, "backend": options.backend_name, "tolerance": options.tolerance,
            "dimensions": [[d.name, d.low, d.high] for d in family.dimensions],
            "search": {"seeds": list(SEARCH_SEEDS), "budget": SEARCH_BUDGET} if _searching(family, options) else None,
            "climb": CLIMB_EVALUATIONS if options.climb else None,
            "arguments": [argument.name for argument in family.arguments], "split": family.split,
            **({"capped_by": family.capped_by} if family.capped_by else {})}


def _start(family: Family, store: Store, options: CertifyOptions, config: dict[str, Any],
           executor: Executor, cap: float | None) -> tuple[State, list[Item]]:
    """Decides where the run starts: the stored state and open boxes where the store holds the family
    (same configuration), else a fresh start: the whole box enclosed, its midpoint and the seeds
    (pinned, given, searched) raising the lower bound, saved as round 0."""
    loaded = store.load(family.key, config)
    if loaded is not None:
        state, heap = loaded
        heapq.heapify(heap)
        return state, heap
    state, heap = State(), []
    began = time.perf_counter()
    first = _capped(family, state, _evaluate(executor, family, options.backend_name, [root(family)]), cap)[0]
    state.evaluated = 1
    _take_lower(state, first, "midpoint")
    sources = [("the family's pinned seeds", family.seeds() if family.seeds else []),
               ("--seeds (a findings.json)", options.seeds or [])]
    for source, instances in sources:
        for instance in instances:
            take_seed(family, state, instance, source)
    if _searching(family, options):
        search_seeds(family, state, options.report)
    state.seconds = time.perf_counter() - began
    if first.state == "outside":
        state.outside_volume = 1.0
    else:
        heap = [(-first.upper, 0, root(family), 1.0, first.argument)]
    state.seq = 1
    store.save(family.key, config, state, [], [(0, root(family), first.upper, 1.0, first.argument)] if heap else [])
    return state, heap


def _going_on(state: State, heap: list[Item], deadline: float, rounds: int | None) -> bool:
    """Whether another round runs: undecided, boxes open, time left, and rounds left where counted."""
    return (state.verdict is None and bool(heap) and time.perf_counter() < deadline
            and (rounds is None or state.rounds < rounds))


def _round(family: Family, options: CertifyOptions, executor: Executor, state: State,
           heap: list[Item], cap: float | None = None) -> tuple[list[int], list[Added]]:
    """One round: pop the open boxes with the largest uppers, split and enclose them, raise the
    lower bound, keep or close each child. Returns the open boxes removed (seqs) and added."""
    popped, removed = _pop(family, state, heap, options.tolerance,
                           BATCH_ARRAYS if options.backend_name == "arrays" else BATCH)
    children, results = _children(executor, family, options.backend_name, popped)
    results = _capped(family, state, _within_parents(popped, results), cap)
    # enclosures computed: a "best" split encloses every dimension's halves, and (but on arrays, which reuse
    # the chosen pair) the chosen halves again
    per_child = 1 if family.split == "widest" else len(family.dimensions) + (options.backend_name != "arrays")
    state.evaluated += len(results) * per_child
    _raise_lower(family, state, results, options)
    added = _keep_or_close(family, state, heap, children, results, options.tolerance)
    trimmed = _trim(state, heap)
    stored_before = added[0][0] if added else math.inf  # the boxes below this seq were saved in earlier rounds
    return removed + sorted(s for s in trimmed if s < stored_before), [a for a in added if a[0] not in trimmed]


def _trim(state: State, heap: list[Item]) -> set[int]:
    """Past MAX_OPEN open boxes, close those proved <= 1 with the least uppers until 3/4 of MAX_OPEN are
    open (never a box above 1). Returns the seqs closed; ``heap`` is rebuilt in place."""
    if len(heap) <= MAX_OPEN:
        return set()
    room = len(heap) - (3 * MAX_OPEN) // 4
    least = sorted((item for item in heap if -item[0] <= 1.0), key=lambda item: (-item[0], item[1]))[:room]
    for item in least:
        _close(state, -item[0], item[3], item[4])
    closed = {item[1] for item in least}
    heap[:] = [item for item in heap if item[1] not in closed]
    heapq.heapify(heap)
    return closed


def _pop(family: Family, state: State, heap: list[Item], tolerance: float,
         batch: int) -> tuple[list[Item], list[int]]:
    """Up to ``batch`` open boxes, largest upper first, to split; a popped box the lower bound already
    settles (within ``tolerance``) is closed instead. Returns the boxes to split and every popped seq."""
    popped: list[Item] = []
    removed: list[int] = []
    while heap and len(popped) < batch:
        item = heapq.heappop(heap)
        removed.append(item[1])
        if _settled(family, -item[0], item[4], state.best_lower, tolerance):
            _close(state, -item[0], item[3], item[4])
        else:
            popped.append(item)
    return popped, removed


def _raise_lower(family: Family, state: State, results: list[BoxResult], options: CertifyOptions) -> None:
    """The children's midpoints raise the lower bound; where one did, the best point snaps to the
    family's boundary and (``climb``) climbs."""
    before = state.best_lower
    for result in results:
        _take_lower(state, result, "midpoint")
    if state.best_lower > before and state.best_point is not None:
        _snap(family, state, options.backend_name)
        if options.climb:
            _climb(family, state, options.backend_name)


def _keep_or_close(family: Family, state: State, heap: list[Item], children: list[tuple[Box, float]],
                   results: list[BoxResult], tolerance: float) -> list[Added]:
    """Decides each child's fate: outside the family (no instance), closed (:func:`_settled`) or open
    (pushed on ``heap``). Returns the open ones added."""
    added = []
    for (box, volume), result in zip(children, results, strict=True):
        if result.state == "outside":
            state.outside_volume += volume
        elif _settled(family, result.upper, result.argument, state.best_lower, tolerance):
            _close(state, result.upper, volume, result.argument)
        else:
            added.append((state.seq, box, result.upper, volume, result.argument))
            heapq.heappush(heap, (-result.upper, state.seq, box, volume, result.argument))
            state.seq += 1
    return added


def _settled(family: Family, upper: float, argument: str | None, best_lower: float, tolerance: float) -> bool:
    """Whether a box is closed: its upper settled by the lower bound within ``tolerance``, or proved <= 1 by
    the cap (its halves would take the same cap: the capping family's bracket is what narrows it)."""
    capped = family.capped_by is not None and argument == cap_argument(family)
    return closable(upper, best_lower, tolerance) or (capped and upper <= 1.0)


def _progress(family: Family, state: State, heap: list[Item], last_row: float,
              report: Callable[[str], None] | None) -> float:
    """Decides whether this round writes a progress row (PROGRESS_EVERY seconds after the last, and
    at the end) and reports it; returns when the last row was written."""
    now = state.seconds
    if now - last_row >= PROGRESS_EVERY or state.verdict or not heap:
        last_row = now
        row = [round(now, 3), _proven(state, heap), state.best_lower, _upper(state, heap)]
        state.progress.append(row)
        if report:
            report(f"{family.key}: {now:7.1f} s  {state.evaluated} boxes  proven {row[1]:.4f}  "
                   f"sup in [{row[2]:.6g}, {row[3]:.6g}]  open {len(heap)}")
    return last_row


def _children(executor: Executor, family: Family, backend_name: str,
              popped: list[Item]) -> tuple[list[tuple[Box, float]], list[BoxResult]]:
    """The popped boxes' halves and their results: across the widest dimension, or (``family.split``
    "best") across the dimension whose larger half's upper is least (then the smaller half's), every
    dimension's halves enclosed to choose (ties: the earlier dimension); where the chosen halving lowers
    neither half's upper by BEST_GAIN of the box's own, across the widest dimension (a greedy choice would
    keep halving the one dimension that helps a little while the others, which help only together, stay
    whole)."""
    if family.split == "widest":
        halves_in_order = split_all(family, [item[2] for item in popped])
        children = [(child, popped[index // 2][3] / 2) for index, child in enumerate(halves_in_order)]
        return children, _evaluate(executor, family, backend_name, [c for c, _ in children])
    axes = range(len(family.dimensions))
    trials = [half for item in popped for axis in axes for half in halves(item[2], axis)]
    found = _evaluate(executor, family, backend_name, trials, lower=False)  # the uppers decide
    children, chosen = [], []
    for index, item in enumerate(popped):
        pairs = [(found[2 * (index * len(axes) + axis)], found[2 * (index * len(axes) + axis) + 1]) for axis in axes]
        best = min(axes, key=lambda axis: sorted((pairs[axis][0].upper, pairs[axis][1].upper), reverse=True))
        if min(pairs[best][0].upper, pairs[best][1].upper) > -item[0] * (1 - BEST_GAIN):
            widths = relative_widths(family, item[2])
            best = max(axes, key=widths.__getitem__)
        children += [(half, item[3] / 2) for half in halves(item[2], best)]
        chosen += [found[2 * (index * len(axes) + best)], found[2 * (index * len(axes) + best) + 1]]
    if backend_name == "arrays":  # the chosen halves were enclosed among the trials: only midpoints remain
        return children, _with_lowers(family, backend_name, [c for c, _ in children], chosen)
    return children, _evaluate(executor, family, backend_name, [c for c, _ in children])


def _with_lowers(family: Family, backend_name: str, boxes: list[Box], results: list[BoxResult]) -> list[BoxResult]:
    """The trial results of the chosen halves with the midpoint ratios of their largest uppers (as many as
    :func:`sltcheck.certify.bnb.evaluate_batch` takes from batches of the same boxes), on the scalar backend."""
    from sltcheck.certify.bnb import LOWERS_PER_BATCH, point_ratio
    from sltcheck.numerics.balls import backend

    count = LOWERS_PER_BATCH * -(-len(boxes) // CHUNK_ARRAYS)
    order = sorted(range(len(boxes)), key=lambda i: (-results[i].upper, i))[:count]
    out, scalar = list(results), backend(backend_name).scalar
    for i in order:
        if results[i].state != "outside":
            point = tuple(lo + (hi - lo) / 2 for lo, hi in zip(*boxes[i], strict=True))
            lower, choice = point_ratio(scalar, family, point)
            out[i] = replace(results[i], lower=lower, choice=choice, point=point)
    return out


def _take_lower(state: State, result: BoxResult, source: str) -> None:
    if result.lower > state.best_lower:
        state.best_lower, state.best_point, state.best_choice = result.lower, list(result.point), result.choice
        state.best_source = source


def _snap(family: Family, state: State, backend_name: str) -> None:
    """Raise the lower bound where the supremum sits on the family's boundary (midpoints never reach
    it): move one coordinate of the best point at a time to either end of the family's range, keep
    what raises the (rigorously evaluated) ratio, until nothing does."""
    from sltcheck.certify.bnb import point_ratio
    from sltcheck.numerics.balls import backend

    arith = backend(backend_name).scalar
    assert state.best_point is not None
    improved = True
    while improved:
        improved = False
        for axis, dimension in enumerate(family.dimensions):
            for end in (dimension.low, dimension.high):
                trial = list(state.best_point)
                trial[axis] = end
                lower, choice = point_ratio(arith, family, trial)
                if lower > state.best_lower:
                    state.best_lower, state.best_point, state.best_choice = lower, trial, choice
                    state.best_source = "snap"
                    improved = True


def _climb(family: Family, state: State, backend_name: str) -> None:
    """The branch-and-bound's own lower-bound improvement: a compass search from the best point (each
    coordinate moved up and down by a step, a move kept where the rigorously evaluated point ratio
    rises; the steps halve when no move does), inside the family's box, at most CLIMB_EVALUATIONS
    evaluations. Deterministic: same best point, same climb."""
    from sltcheck.certify.bnb import point_ratio
    from sltcheck.numerics.balls import backend

    arith = backend(backend_name).scalar
    assert state.best_point is not None
    widths = [d.high - d.low for d in family.dimensions]
    step, spent, moved = CLIMB_FIRST_STEP, 0, False
    while step >= CLIMB_LAST_STEP and spent < CLIMB_EVALUATIONS:
        improved = False
        for axis, dimension in enumerate(family.dimensions):
            for sign in (1.0, -1.0):
                if spent >= CLIMB_EVALUATIONS or widths[axis] == 0:
                    continue
                trial = list(state.best_point)
                trial[axis] = min(max(trial[axis] + sign * step * widths[axis], dimension.low), dimension.high)
                spent += 1
                lower, choice = point_ratio(arith, family, trial)
                if lower > state.best_lower:
                    state.best_lower, state.best_point, state.best_choice = lower, trial, choice
                    improved = moved = True
        if not improved:
            step /= 2
    if moved:
        state.best_source = "climb"


def _close(state: State, upper: float, volume: float, argument: str | None) -> None:
    state.closed_upper = max(state.closed_upper, upper)
    state.closed_volume += volume
    if argument is not None:
        state.argued_volume[argument] = state.argued_volume.get(argument, 0.0) + volume


def _proven(state: State, heap: list[Item]) -> float:
    """The fraction of the family's volume proved (closed, outside, or open with upper <= 1): 1 less
    the open boxes above 1 (summed exactly: a sum of the proved parts would drift in the last bits)."""
    return max(0.0, 1.0 - math.fsum(v for u, _, _, v, _ in heap if -u > 1.0))


def _argued(state: State, heap: list[Item]) -> dict[str, float]:
    """The fraction of the family's volume each argument proved (closed boxes, and open ones it
    proved <= 1 that stay open only to narrow the bracket)."""
    argued = dict(state.argued_volume)
    for u, _, _, v, argument in heap:
        if argument is not None and -u <= 1.0:
            argued[argument] = argued.get(argument, 0.0) + v
    return dict(sorted(argued.items()))


def _upper(state: State, heap: list[Item]) -> float:
    return max([state.closed_upper] + [-u for u, _, _, _, _ in heap])


def summary(family: Family, state: State, heap: list[Item], backend_name: str,
            tolerance: float) -> dict[str, Any]:
    """The JSON entry of a family: verdict, bracket of the supremum, proven volume, speed."""
    from sltcheck.harness import interval_verdict as certified
    from sltcheck.harness.serialise import encode_instance

    upper = _upper(state, heap)
    if state.best_lower > upper:  # both rigorous: an enclosure that misses its own family's point is wrong
        raise RuntimeError(f"{family.key}: the supremum's lower end {state.best_lower!r} (at {state.best_point}) "
                           f"exceeds its proved upper end {upper!r}: an enclosure is wrong (a bug; please report it)")
    verdict = state.verdict or ("held" if upper <= 1.0 else "undecided")
    best = None
    if state.best_point is not None:
        point = dict(zip([d.name for d in family.dimensions], state.best_point, strict=True))
        instance = family.instance(point, state.best_choice)
        best = {"point": point, "choice": state.best_choice, "instance": None, "certified_ratio": None,
                "certified_outcome": None}
        if instance:  # an empty instance: a family with no statement instance (a test's toy)
            check = certified_ratio(certified, family, instance)
            best.update(instance=encode_instance(instance),
                        certified_ratio=[v if math.isfinite(v) else None for v in (check["lower"], check["upper"])],
                        certified_outcome=check["outcome"], decided_by=check["decided_by"])
    finite = (lambda x: x if math.isfinite(x) else None)  # noqa: E731  strict JSON: no inf
    return {
        "key": family.key, "statement": family.statement, "family": family.name, "variant": family.variant,
        "description": family.description,
        "dimensions": [[d.name, d.low, d.high] for d in family.dimensions],
        "verdict": verdict, "finished": state.verdict is not None,
        "sup_lower": finite(state.best_lower), "sup_upper": finite(upper),
        "proven_fraction": _proven(state, heap) if verdict != "counterexample" else None,
        "arguments": [argument.name for argument in family.arguments],
        "capped_by": None if family.capped_by is None else {"family": family.capped_by, "cap": state.cap},
        "proved_by_argument": _argued(state, heap),
        "open_boxes": len(heap), "boxes": state.evaluated, "rounds": state.rounds,
        "seconds": round(state.seconds, 3),
        "boxes_per_second": round(state.evaluated / state.seconds, 1) if state.seconds > 0 else None,
        "backend": backend_name, "tolerance": tolerance,
        "expected": family.expected, "known_supremum": family.known_supremum, "notes": family.notes,
        "best": best, "best_source": state.best_source, "seeds": state.seeds, "counterexample": state.counterexample,
        "progress": [[r[0], r[1], finite(r[2]), finite(r[3])] for r in state.progress],
    }
