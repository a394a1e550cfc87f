"""Driving the branch-and-bound: rounds of box evaluations on an executor, every round in SQLite.

The open boxes and the running bounds of each family live in ``boxes.sqlite`` in the run
directory; each round (pop the open boxes with the largest uppers, split them, enclose the children
on the executor, keep or close each child) is one transaction, so an interrupted run resumes at its
last finished round and loses nothing. The driver processes a round's results in task order:
the outcome does not depend on the executor, the worker count or the order tasks finish in.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import sqlite3
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sltcheck.certify import Family
from sltcheck.certify.bnb import Box, BoxResult, closable, evaluate_boxes, halves, root, split
from sltcheck.errors import StoredResultError
from sltcheck.executors import Executor, InProcessExecutor
from sltcheck.schema import SCHEMA_VERSION

BATCH = 256  # boxes popped per round (fixed: the result must not depend on the worker count)
CHUNK = 64  # boxes per task
PROGRESS_EVERY = 5.0  # seconds between progress rows
# The worst-case search that seeds a fresh family (restricted to the family's shape by its
# ``search_fixed``): one shape, the ci budget's starts and climbs, a few seeds, stopping at the first
# certified counterexample; a few seconds per seed (its instances are kept only if in the family).
SEARCH_SEEDS = (0, 1, 2)
SEARCH_BUDGET = {"shapes": 1, "starts": 48, "climbs": 10, "climb_evaluations": 600, "polish_evaluations": 300}
# The climb that follows every rise of the lower bound: a compass search of the family's own point
# ratio (rigorous at each point) from the best point, at most this many evaluations.
CLIMB_EVALUATIONS = 400
CLIMB_FIRST_STEP = 0.125  # of the family's width in each dimension; halved until CLIMB_LAST_STEP
CLIMB_LAST_STEP = 2.0 ** -20


@dataclass
class State:
    """The running bounds of one family (everything but the open boxes)."""

    best_lower: float = -math.inf  # a float <= measured / bound at best_point (family enclosure)
    best_point: list[float] | None = None
    best_choice: int = 0
    closed_upper: float = -math.inf  # max upper of the closed boxes
    closed_volume: float = 0.0  # closed (proved <= 1) boxes, as fractions of the family's box
    outside_volume: float = 0.0  # boxes that hold no instance
    evaluated: int = 0
    rounds: int = 0
    seconds: float = 0.0
    seq: int = 0
    progress: list[list[float]] = field(default_factory=list)  # [seconds, proven fraction, lower, upper]
    verdict: str | None = None  # set once decided (held with nothing open, or a counterexample)
    counterexample: dict[str, Any] | None = None
    best_source: str | None = None  # where the best lower bound came from (midpoint, snap, climb, a seed)
    argued_volume: dict[str, float] = field(default_factory=dict)  # closed volume proved by each argument
    seeds: list[dict[str, Any]] = field(default_factory=list)  # every seed tried: source, ratio, in family


# An open box: (-upper, seq, box, volume, the argument that proved it <= 1 or None).
Item = tuple[float, int, Box, float, str | None]


class Store:
    """SQLite: per family its configuration and State, and its open boxes, with what lets a resumed
    run verify them (a proof must not rest on a file anyone can edit unseen):

    - every saved round writes a digest chained to the previous round's: SHA-256 over that digest, the
      family's configuration and State, and a sum of the open boxes' hashes (kept up to date row by
      row, so a round costs what it changes); :meth:`load` recomputes it from the rows;
    - the family's volume is conserved: closed + outside + open boxes' volumes add up to the whole box.

    A family whose rows fail either check, a damaged file and a full disk are one-line errors naming
    the file (:func:`sltcheck.rundir.store_error`). The digest has no secret: it shows an edit or a
    lost row, not a forgery, so each resumed family also says that its proof rests on this file
    (:meth:`provenance`)."""

    def __init__(self, path: Path) -> None:
        from sltcheck.rundir import store_error

        self.path = path
        self._hashes: dict[str, dict[int, int]] = {}  # key -> open box seq -> its row hash
        self._digest: dict[str, str] = {}
        self._resumed: dict[str, dict[str, Any]] = {}
        try:
            self.db = sqlite3.connect(path)
            self.db.executescript(
                "CREATE TABLE IF NOT EXISTS family (key TEXT PRIMARY KEY, config TEXT, state TEXT, digest TEXT);"
                "CREATE TABLE IF NOT EXISTS box (key TEXT, seq INTEGER, box TEXT, upper REAL, volume REAL,"
                " PRIMARY KEY (key, seq));"
            )
            if "digest" not in [row[1] for row in self.db.execute("PRAGMA table_info(family)")]:
                self.db.execute("ALTER TABLE family ADD COLUMN digest TEXT")  # a store from before digests
        except sqlite3.Error as error:
            raise store_error(error, path, "box store") from None

    def close(self) -> None:
        self.db.close()

    def _damaged(self, key: str, why: str) -> StoredResultError:
        return StoredResultError(f"box store {str(self.path)!r}: the family {key} {why}, so its proof cannot resume "
                                 "from it; move the store away (or give another --out) to start over")

    def load(self, key: str, config: dict[str, Any]) -> tuple[State, list[Item]] | None:
        from sltcheck.rundir import store_error

        try:
            row = self.db.execute("SELECT config, state, digest FROM family WHERE key = ?", (key,)).fetchone()
            rows = list(self.db.execute("SELECT seq, box, upper, volume FROM box WHERE key = ?", (key,)))
        except sqlite3.Error as error:
            raise store_error(error, self.path, "box store") from None
        if row is None:
            if rows:
                raise self._damaged(key, f"has {len(rows)} open boxes but no row of its own (rows deleted?)")
            self._hashes[key], self._digest[key] = {}, ""
            return None
        config_text, state_text, digest = row
        try:
            recorded_config = json.loads(config_text)
            state = State(**json.loads(state_text))
            opened: list[Item] = []
            for seq, text, upper, volume in rows:
                box, argument = _decode(text)
                opened.append((-upper, seq, box, volume, argument))
        except (TypeError, ValueError, KeyError) as error:
            raise self._damaged(key, f"has rows that are not what sltcheck writes ({error})") from None
        if recorded_config != config:
            from sltcheck.errors import UsageError
            from sltcheck.rundir import differences

            raise UsageError(f"box store {str(self.path)!r} holds {key} with another configuration: "
                             f"{'; '.join(differences(recorded_config, config))}; use another --out (one "
                             "configuration per run directory)")
        hashes = {seq: _row_hash(seq, text, upper, volume) for seq, text, upper, volume in rows}
        total = math.fsum([state.closed_volume, state.outside_volume, *(volume for *_, volume in rows)])
        if abs(total - 1.0) > VOLUME_SLACK:
            raise self._damaged(key, f"accounts for {total!r} of its volume, not all of it (boxes lost or edited)")
        if digest is not None:
            previous, _, recorded = digest.partition(":")
            if _family_digest(previous, config_text, state_text, hashes) != recorded:
                raise self._damaged(key, "does not match the digest written with its open boxes and state (rows "
                                         "deleted or edited)")
        self._hashes[key], self._digest[key] = hashes, digest.partition(":")[2] if digest else ""
        self._resumed[key] = {"file": str(self.path), "resumed_at_round": state.rounds, "boxes_before": state.evaluated,
                              "verified": ("the digest chained per round and the volume" if digest is not None else
                                           "the volume only (a store written before digests)")}
        return state, opened

    def save(self, key: str, config: dict[str, Any], state: State, removed: list[int],
             added: list[tuple[int, Box, float, float, str | None]]) -> None:
        from sltcheck.rundir import store_error

        hashes = self._hashes.setdefault(key, {})
        rows = [(key, s, json.dumps([*b, a]), u, v) for s, b, u, v, a in added]
        for seq in removed:
            hashes.pop(seq, None)
        for _, seq, text, upper, volume in rows:
            hashes[seq] = _row_hash(seq, text, upper, volume)
        config_text, state_text = json.dumps(config), json.dumps(asdict(state), allow_nan=True)
        previous = self._digest.get(key, "")
        digest = _family_digest(previous, config_text, state_text, hashes)
        try:
            with self.db:
                self.db.execute("INSERT OR REPLACE INTO family VALUES (?, ?, ?, ?)",
                                (key, config_text, state_text, f"{previous}:{digest}"))
                self.db.executemany("DELETE FROM box WHERE key = ? AND seq = ?", [(key, s) for s in removed])
                self.db.executemany("INSERT INTO box VALUES (?, ?, ?, ?, ?)", rows)
        except sqlite3.Error as error:
            raise store_error(error, self.path, "box store") from None
        self._digest[key] = digest

    def provenance(self, key: str) -> dict[str, Any] | None:
        """Where a resumed family's proof comes from: the store it resumed from at which round, and
        what was verified of it; None for a family this process ran from its first round."""
        resumed = self._resumed.get(key)
        return None if resumed is None else {**resumed, "digest": self._digest.get(key)}


VOLUME_SLACK = 1e-9  # the volumes are dyadic fractions summed in float64: exact far below this


def _row_hash(seq: int, text: str, upper: float, volume: float) -> int:
    return int.from_bytes(hashlib.sha256(f"{seq}|{text}|{upper!r}|{volume!r}".encode()).digest(), "big")


def _family_digest(previous: str, config_text: str, state_text: str, hashes: dict[int, int]) -> str:
    """The round's digest: the previous round's, the configuration, the State and the open boxes (the
    sum of their row hashes mod 2^256: independent of their order, updated row by row)."""
    boxes = sum(hashes.values()) % 2**256
    return hashlib.sha256(f"{previous}\n{config_text}\n{state_text}\n{boxes:064x}".encode()).hexdigest()


def _decode(text: str) -> tuple[Box, str | None]:
    lows, highs, argument = json.loads(text)
    return (tuple(lows), tuple(highs)), argument


def _evaluate(executor: Executor, key: str, backend_name: str, boxes: list[Box],
              lower: bool = True) -> list[BoxResult]:
    tasks = [(f"{i:06d}", (boxes[i:i + CHUNK],)) for i in range(0, len(boxes), CHUNK)]
    found = dict(executor.map_unordered(evaluate_boxes, (key, backend_name, lower), tasks))
    return [r for k, _ in tasks for r in found[k]]


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
    lower bound is followed by a local climb of the family's point ratio from the best point."""
    from sltcheck import certified

    executor = executor or InProcessExecutor()
    searching = search and family.search_fixed is not None
    config = {"schema_version": SCHEMA_VERSION, "backend": backend_name, "tolerance": tolerance,
              "dimensions": [[d.name, d.low, d.high] for d in family.dimensions],
              "search": {"seeds": list(SEARCH_SEEDS), "budget": SEARCH_BUDGET} if searching else None,
              "climb": CLIMB_EVALUATIONS if climb else None,
              "arguments": [argument.name for argument in family.arguments], "split": family.split}
    deadline = time.perf_counter() + budget  # the seeding counts against the budget
    loaded = store.load(family.key, config)
    heap: list[Item]
    if loaded is None:
        state, heap = State(), []
        began = time.perf_counter()
        first = _evaluate(executor, family.key, backend_name, [root(family)])[0]
        state.evaluated = 1
        _take_lower(state, first, "midpoint")
        sources = [("the family's pinned seeds", family.seeds() if family.seeds else []),
                   ("--seeds (a findings.json)", seeds or [])]
        for source, instances in sources:
            for instance in instances:
                _seed(family, state, instance, source)
        if searching:
            _search_seeds(family, state, report)
        state.seconds = time.perf_counter() - began
        if first.state == "outside":
            state.outside_volume = 1.0
        else:
            heap = [(-first.upper, 0, root(family), 1.0, first.argument)]
        state.seq = 1
        store.save(family.key, config, state, [],
                   [(0, root(family), first.upper, 1.0, first.argument)] if heap else [])
    else:
        state, heap = loaded
        heapq.heapify(heap)
    start = time.perf_counter()
    spent = state.seconds
    last_row = -math.inf
    while (state.verdict is None and heap and time.perf_counter() < deadline
           and (rounds is None or state.rounds < rounds)):
        popped: list[Item] = []
        removed: list[int] = []
        while heap and len(popped) < BATCH:
            item = heapq.heappop(heap)
            removed.append(item[1])
            if closable(-item[0], state.best_lower, tolerance):
                _close(state, -item[0], item[3], item[4])
            else:
                popped.append(item)
        children, results = _children(executor, family, backend_name, popped)
        state.evaluated += len(results) * (1 if family.split == "widest" else len(family.dimensions) + 1)
        before = state.best_lower
        for result in results:
            _take_lower(state, result, "midpoint")
        if state.best_lower > before and state.best_point is not None:
            _snap(family, state, backend_name)
            if climb:
                _climb(family, state, backend_name)
        added = []
        for (box, volume), result in zip(children, results, strict=True):
            if result.state == "outside":
                state.outside_volume += volume
            elif closable(result.upper, state.best_lower, tolerance):
                _close(state, result.upper, volume, result.argument)
            else:
                added.append((state.seq, box, result.upper, volume, result.argument))
                heapq.heappush(heap, (-result.upper, state.seq, box, volume, result.argument))
                state.seq += 1
        state.rounds += 1
        state.seconds = spent + time.perf_counter() - start
        if state.best_lower > 1.0 and state.counterexample is None:
            _confirm_violation(family, state, certified)
        if not heap and state.verdict is None:
            state.verdict = "held"
        now = state.seconds
        if now - last_row >= PROGRESS_EVERY or state.verdict or not heap:
            last_row = now
            row = [round(now, 3), _proven(state, heap), state.best_lower, _upper(state, heap)]
            state.progress.append(row)
            if report:
                report(f"{family.key}: {now:7.1f} s  {state.evaluated} boxes  proven {row[1]:.4f}  "
                       f"sup in [{row[2]:.6g}, {row[3]:.6g}]  open {len(heap)}")
        store.save(family.key, config, state, removed, added)
    return summary(family, state, heap, backend_name, tolerance)


def _children(executor: Executor, family: Family, backend_name: str,
              popped: list[Item]) -> tuple[list[tuple[Box, float]], list[BoxResult]]:
    """The popped boxes' halves and their results: across the widest dimension, or (``family.split``
    "best") across the dimension whose larger half's upper is least (then the smaller half's), every
    dimension's halves enclosed to choose (ties: the earlier dimension)."""
    if family.split == "widest":
        children = [(child, item[3] / 2) for item in popped for child in split(family, item[2])]
        return children, _evaluate(executor, family.key, backend_name, [c for c, _ in children])
    axes = range(len(family.dimensions))
    trials = [half for item in popped for axis in axes for half in halves(item[2], axis)]
    found = _evaluate(executor, family.key, backend_name, trials, lower=False)  # the uppers decide
    children = []
    for index, item in enumerate(popped):
        pairs = [(found[2 * (index * len(axes) + axis)], found[2 * (index * len(axes) + axis) + 1]) for axis in axes]
        best = min(axes, key=lambda axis: sorted((pairs[axis][0].upper, pairs[axis][1].upper), reverse=True))
        children += [(half, item[3] / 2) for half in halves(item[2], best)]
    return children, _evaluate(executor, family.key, backend_name, [c for c, _ in children])


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

    arith = backend(backend_name)
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

    arith = backend(backend_name)
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


def _seed(family: Family, state: State, instance: dict[str, Any], source: str) -> None:
    """Raise the lower bound with a seed (a search result, a pinned counterexample) where it lies in
    the family; a certified violation decides the family. Every seed tried is recorded with its source."""
    from sltcheck import certified

    inside = family.contains is not None and family.contains(instance)
    record: dict[str, Any] = {"source": source, "in_family": inside, "certified_ratio": None, "outcome": None}
    state.seeds.append(record)
    if not inside:
        return
    ratio = _certified_ratio(certified, family, instance)
    record.update(certified_ratio=[v if math.isfinite(v) else None for v in (ratio["lower"], ratio["upper"])],
                  outcome=ratio["outcome"])
    if ratio["lower"] > state.best_lower:
        state.best_lower, state.best_point, state.best_source = ratio["lower"], None, source
    if ratio["outcome"] == "violated" and state.verdict is None:
        state.verdict, state.counterexample = "counterexample", _replay_entry(family, instance, ratio, source)


def _search_seeds(family: Family, state: State, report: Callable[[str], None] | None) -> None:
    """Seeds from the worst-case search restricted to the family's shape (its public entry point,
    :func:`sltcheck.harness.search.search_worst_case`), one search per seed of SEARCH_SEEDS until one
    gives a certified counterexample in the family or one does not raise the lower bound."""
    from sltcheck.harness.budget import Budget
    from sltcheck.harness.search import search_worst_case

    raised = True
    assert family.search_fixed is not None
    for seed in SEARCH_SEEDS:
        if state.verdict is not None or (seed != SEARCH_SEEDS[0] and not raised):
            break  # decided, or the last search did not raise the lower bound: it has converged
        before = state.best_lower
        worst = search_worst_case(family.statement, family.variant, profile=Budget(**SEARCH_BUDGET),
                                  fixed=family.search_fixed, seed=seed)
        source = (f"search_worst_case({family.statement}, {family.variant}, seed {seed}, "
                  f"{worst.evaluations} evaluations): float ratio {worst.float_ratio:.6g}")
        _seed(family, state, worst.instance, source)
        raised = state.best_lower > before
        if report:
            inside = "in the family" if state.seeds[-1]["in_family"] else "outside the family"
            report(f"{family.key}: seed from {source}, {inside}")


DECIDE_DPS = 60  # digits of the statement's own mpmath code where sltcheck.certified does not cover it


def _certified_ratio(certified: Any, family: Family, instance: dict[str, Any]) -> dict[str, Any]:
    """The statement's own evaluation, a second code path: its interval enclosure
    (:mod:`sltcheck.certified`) where it covers the statement and variant, else its mpmath code at
    DECIDE_DPS digits (decided as ``sltcheck check`` decides, the ratio rounded outward)."""
    from sltcheck.numerics.intervals import ends

    if family.variant not in certified.supported().get(family.statement, ()):
        return _decided_ratio(family, instance)
    result = certified.evaluate(family.statement, instance, family.variant)
    if result["bound"] is None:
        return {"outcome": "undecided", "lower": -math.inf, "upper": math.inf, "decided_by": "interval"}
    (m_lo, m_hi), (b_lo, b_hi) = ends(result["measured"]), ends(result["bound"])
    lower = float(m_lo / b_hi) if b_hi > 0 else -math.inf
    upper = float(m_hi / b_lo) if b_lo > 0 else math.inf
    return {"outcome": result["outcome"], "lower": math.nextafter(lower, -math.inf),
            "upper": math.nextafter(upper, math.inf), "work_dps": result["work_dps"],
            "decided_by": "interval (sltcheck.certified)"}


def _decided_ratio(family: Family, instance: dict[str, Any]) -> dict[str, Any]:
    from sltcheck.harness.runner import evaluate
    from sltcheck.statements import load

    module = load(family.statement)
    mutants = {m.name: m.bound for m in module.MUTANTS}
    verdict = evaluate(family.statement, family.variant, instance, dps=DECIDE_DPS,
                       bound=mutants.get(family.variant))
    outcome = "violated" if verdict.violated else "undecided" if verdict.undecided else "held"
    ratio = verdict.ratio
    if verdict.bound > 0 and verdict.measured >= 0:
        lower = math.nextafter(math.nextafter(ratio, -math.inf), -math.inf)
        upper = math.nextafter(math.nextafter(ratio, math.inf), math.inf)
    else:
        lower, upper = -math.inf, math.inf
    return {"outcome": outcome, "lower": lower, "upper": upper, "work_dps": DECIDE_DPS,
            "decided_by": f"the statement's mpmath code at {DECIDE_DPS} digits (no interval enclosure of it)"}


def _replay_entry(family: Family, instance: dict[str, Any], ratio: dict[str, Any], source: str) -> dict[str, Any]:
    from sltcheck.harness.serialise import encode_instance

    return {"statement": family.statement, "variant": family.variant, "violated": True,
            "family": family.key, "certified_ratio": [ratio["lower"], ratio["upper"]],
            "instance": encode_instance(instance), "found_by": source, "decided_by": ratio["decided_by"]}


def _confirm_violation(family: Family, state: State, certified: Any) -> None:
    """A point whose family enclosure exceeds 1: a counterexample once the statement's own enclosure agrees."""
    assert state.best_point is not None
    instance = family.instance(dict(zip([d.name for d in family.dimensions], state.best_point, strict=True)),
                               state.best_choice)
    ratio = _certified_ratio(certified, family, instance)
    if ratio["outcome"] == "violated":
        state.verdict = "counterexample"
        state.counterexample = _replay_entry(family, instance, ratio, f"branch-and-bound ({state.best_source})")


def summary(family: Family, state: State, heap: list[Item], backend_name: str,
            tolerance: float) -> dict[str, Any]:
    """The JSON entry of a family: verdict, bracket of the supremum, proven volume, speed."""
    from sltcheck import certified
    from sltcheck.harness.serialise import encode_instance

    upper = _upper(state, heap)
    verdict = state.verdict or ("held" if upper <= 1.0 else "undecided")
    best = None
    if state.best_point is not None:
        point = dict(zip([d.name for d in family.dimensions], state.best_point, strict=True))
        instance = family.instance(point, state.best_choice)
        best = {"point": point, "choice": state.best_choice, "instance": None, "certified_ratio": None,
                "certified_outcome": None}
        if instance:  # an empty instance: a family with no statement instance (a test's toy)
            check = _certified_ratio(certified, family, instance)
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
        "proved_by_argument": _argued(state, heap),
        "open_boxes": len(heap), "boxes": state.evaluated, "rounds": state.rounds,
        "seconds": round(state.seconds, 3),
        "boxes_per_second": round(state.evaluated / state.seconds, 1) if state.seconds > 0 else None,
        "backend": backend_name, "tolerance": tolerance,
        "expected": family.expected, "known_supremum": family.known_supremum, "notes": family.notes,
        "best": best, "best_source": state.best_source, "seeds": state.seeds, "counterexample": state.counterexample,
        "progress": [[r[0], r[1], finite(r[2]), finite(r[3])] for r in state.progress],
    }
