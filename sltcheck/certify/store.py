"""The family's stored proof: its running bounds (:class:`~sltcheck.certify.store.State`) and open boxes in SQLite
(``boxes.sqlite`` in the run directory), one transaction per round, verified when a run resumes.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import struct
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sltcheck.certify.bnb import Box
from sltcheck.errors import StoredResultError


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
    cap: float | None = None  # the least cap any round took from the family's ``capped_by`` (None: none)


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
        self._sums: dict[str, int] = {}  # key -> the sum of its open boxes' row hashes (kept, not re-summed)
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
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:  # a new store, or one from before the version (whose rows carry digests)
                self.db.execute(f"PRAGMA user_version = {STORE_VERSION}")
        except sqlite3.Error as error:
            raise store_error(error, path, "box store") from None
        if version > STORE_VERSION:
            self.db.close()
            raise StoredResultError(f"box store {str(path)!r} has schema version {version}; this sltcheck reads "
                                    f"version {STORE_VERSION}: use the sltcheck that wrote it, or another --out")

    def close(self) -> None:
        self.db.close()

    def _damaged(self, key: str, why: str) -> StoredResultError:
        return StoredResultError(f"box store {str(self.path)!r}: the family {key} {why}, so its proof cannot resume "
                                 "from it; move the store away (or give another --out) to start over")

    def load(self, key: str, config: dict[str, Any]) -> tuple[State, list[Item]] | None:
        """The family's State and open boxes, verified (digest chain, volume), to resume with ``config``
        (another configuration is refused); None where the store has no row of the family."""
        found = self.recorded(key)
        if found is None:
            return None
        recorded_config, state, opened = found
        if recorded_config != config:
            from sltcheck.errors import UsageError
            from sltcheck.rundir import differences

            raise UsageError(f"box store {str(self.path)!r} holds {key} with another configuration: "
                             f"{'; '.join(differences(recorded_config, config))}; use another --out (one "
                             "configuration per run directory)")
        self._resumed[key] = {"file": str(self.path), "resumed_at_round": state.rounds, "boxes_before": state.evaluated,
                              "verified": "the digest chained per round and the volume"}
        return state, opened

    def recorded(self, key: str) -> tuple[dict[str, Any], State, list[Item]] | None:
        """The family's configuration, State and open boxes as stored, verified (digest chain, volume);
        None where the store has no row of the family."""
        from sltcheck.rundir import store_error

        try:
            row = self.db.execute("SELECT config, state, digest FROM family WHERE key = ?", (key,)).fetchone()
            rows = list(self.db.execute("SELECT seq, box, upper, volume FROM box WHERE key = ?", (key,)))
        except sqlite3.Error as error:
            raise store_error(error, self.path, "box store") from None
        if row is None:
            if rows:
                raise self._damaged(key, f"has {len(rows)} open boxes but no row of its own (rows deleted?)")
            self._hashes[key], self._digest[key], self._sums[key] = {}, "", 0
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
        hashes = {seq: _row_hash(seq, text, upper, volume) for seq, text, upper, volume in rows}
        total = math.fsum([state.closed_volume, state.outside_volume, *(volume for *_, volume in rows)])
        if abs(total - 1.0) > VOLUME_SLACK:
            raise self._damaged(key, f"accounts for {total!r} of its volume, not all of it (boxes lost or edited)")
        if not isinstance(digest, str) or ":" not in digest:  # every round of every version writes one
            raise self._damaged(key, f"has no digest (found {digest!r}): its rows were edited, or written by an "
                                     "sltcheck before digests, and cannot be verified")
        previous, _, recorded = digest.partition(":")
        if _family_digest(previous, config_text, state_text, sum(hashes.values())) != recorded:
            raise self._damaged(key, "does not match the digest written with its open boxes and state (rows "
                                     "deleted or edited)")
        self._hashes[key], self._digest[key], self._sums[key] = hashes, recorded, sum(hashes.values())
        return recorded_config, state, opened

    def save(self, key: str, config: dict[str, Any], state: State, removed: list[int],
             added: list[tuple[int, Box, float, float, str | None]]) -> None:
        from sltcheck.rundir import store_error

        hashes = self._hashes.setdefault(key, {})
        total = self._sums.get(key, 0)
        rows = [(key, s, _encode(b, a), u, v) for s, b, u, v, a in added]
        for seq in removed:
            total -= hashes.pop(seq, 0)
        for _, seq, text, upper, volume in rows:
            hashes[seq] = _row_hash(seq, text, upper, volume)
            total += hashes[seq]
        config_text, state_text = json.dumps(config), json.dumps(asdict(state), allow_nan=True)
        previous = self._digest.get(key, "")
        digest = _family_digest(previous, config_text, state_text, total)
        try:
            with self.db:
                self.db.execute("INSERT OR REPLACE INTO family VALUES (?, ?, ?, ?)",
                                (key, config_text, state_text, f"{previous}:{digest}"))
                self.db.executemany("DELETE FROM box WHERE key = ? AND seq = ?", [(key, s) for s in removed])
                self.db.executemany("INSERT INTO box VALUES (?, ?, ?, ?, ?)", rows)
        except sqlite3.Error as error:
            raise store_error(error, self.path, "box store") from None
        self._digest[key], self._sums[key] = digest, total

    def provenance(self, key: str) -> dict[str, Any] | None:
        """Where a resumed family's proof comes from: the store it resumed from at which round, and
        what was verified of it; None for a family this process ran from its first round."""
        resumed = self._resumed.get(key)
        return None if resumed is None else {**resumed, "digest": self._digest.get(key)}


# PRAGMA user_version of boxes.sqlite: 1 = every family row carries its chained digest (a NULL one is
# an edit, never a store "from before digests"); a store of a newer version is refused.
STORE_VERSION = 1
VOLUME_SLACK = 1e-9  # the volumes are dyadic fractions summed in float64: exact far below this


def _row_hash(seq: int, box: str | bytes, upper: float, volume: float) -> int:
    if isinstance(box, bytes):
        text = b"%d|%s|%r|%r" % (seq, box, upper, volume)
    else:
        text = f"{seq}|{box}|{upper!r}|{volume!r}".encode()
    return int.from_bytes(hashlib.sha256(text).digest(), "big")


def _family_digest(previous: str, config_text: str, state_text: str, hashes: int) -> str:
    """The round's digest: the previous round's, the configuration, the State and the open boxes (the
    sum of their row hashes mod 2^256: independent of their order, updated row by row)."""
    boxes = hashes % 2**256
    return hashlib.sha256(f"{previous}\n{config_text}\n{state_text}\n{boxes:064x}".encode()).hexdigest()


def _encode(box: Box, argument: str | None) -> str | bytes:
    """A box as its row stores it: without an argument, its lows then highs as little-endian float64
    (a BLOB: the store's hot path); with one, the JSON [lows, highs, argument]."""
    lows, highs = box
    if argument is None:
        return struct.pack(f"<{2 * len(lows)}d", *lows, *highs)
    return json.dumps([list(lows), list(highs), argument])


def _decode(stored: str | bytes) -> tuple[Box, str | None]:
    if isinstance(stored, bytes):
        if len(stored) % 16:
            raise ValueError(f"a box of {len(stored)} bytes (not pairs of float64)")
        ends = struct.unpack(f"<{len(stored) // 8}d", stored)
        half = len(ends) // 2
        return (ends[:half], ends[half:]), None
    lows, highs, argument = json.loads(stored)
    return (tuple(lows), tuple(highs)), argument
