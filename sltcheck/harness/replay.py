"""``sltcheck check --replay FILE``: every instance and number a findings.json records, decided again
(:func:`sltcheck.harness.replay.replay_records`; :func:`sltcheck.rederive.replay_file` adds the whole
file's checks).

Each recorded instance (a variant's worst instance, a mutant's counterexample) is evaluated twice:

- at the replay's digits (``--dps``, default 100): the exit status reports what they decide
  (a violated variant, a mutant its counterexample no longer refutes);
- at the digits its verdict was recorded at (a mutant's: ``PROPERTY_DPS``, those
  :func:`sltcheck.harness.mutants.refute` decides at), and every recorded number is compared with
  that re-decision at its declared precision: ``verdict.measured`` and ``verdict.bound``
  (:func:`side_tolerance`), ``verdict.ratio`` and ``worst_ratio`` (:func:`ratio_tolerance`),
  ``verdict.holds`` and ``verdict.undecided`` (exactly), ``violated`` and ``violations`` (against the
  replay's decision), a mutant's ``refuted`` and ``ratio``; no example's ratio and no search ratio
  may exceed ``worst_ratio``; an interval enclosure a row carries (``interval.certified_ratio``:
  sltcheck certify's counterexamples) must hold the replayed ratio and the recorded one.

Exit status 1 names every field that differs beyond its precision (an edited number, or an
evaluation that no longer gives what it gave); 2 a file or an instance that cannot be read.
A file whose digest does not match its content (:func:`sltcheck.jsonfiles.seal_state`) is
reported too: replay re-decides the numbers, the digest says whether anything else was changed.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import mpmath

from sltcheck.errors import StoredResultError
from sltcheck.jsonfiles import seal_state
from sltcheck.numerics.defaults import GUARD_DIGITS, PROPERTY_DPS
from sltcheck.numerics.verdict import PRINTED_DIGITS, Verdict
from sltcheck.statement_types import Instance

if TYPE_CHECKING:
    from collections.abc import Callable

    from sltcheck.records import FindingsFile

LOG = logging.getLogger("sltcheck")  # the command line's (sltcheck.console)
MAX_DPS = 10_000
# Ratios are float64: 4 units in the last place of the re-decided one.
RATIO_ULPS = 4 * 2.0**-52
# The examples' ratios are stored rounded to 6 decimals (sltcheck.checking.entry_of).
RATIOS_ROUNDING = 5e-7


def side_tolerance(verdict: Verdict) -> mpmath.mpf:
    """How far a recorded side (measured or bound) may lie from its re-decision at the same digits:
    the verdict's own resolution (10^(GUARD_DIGITS - dps) of the larger side: ``decide`` trusts no
    more), the rounding to PRINTED_DIGITS significant digits, and the statement's noise floor."""
    scale = max(abs(verdict.measured), abs(verdict.bound))
    relative = mpmath.mpf(10) ** (GUARD_DIGITS - verdict.dps) + mpmath.mpf(10) ** (1 - PRINTED_DIGITS)
    return scale * relative + verdict.floor


def ratio_tolerance(verdict: Verdict) -> float:
    """How far a recorded float ratio may lie from ``verdict.ratio``: the sides' tolerance carried
    through measured / bound, and float64 rounding. ``inf`` where the bound is within its own tolerance
    of zero (the ratio is not determined at this precision); 0 for the exact ratios (0 at the noise
    floor, inf over a zero bound)."""
    if verdict.at_floor or verdict.bound == 0:
        return 0.0
    tolerance = side_tolerance(verdict)
    bound = abs(verdict.bound)
    if bound <= 2 * tolerance:
        return math.inf
    ratio = abs(verdict.ratio)
    return float(tolerance * (1 + ratio) / (bound - tolerance)) + RATIO_ULPS * ratio


def _number(value: Any) -> float | None:
    """A recorded ratio as a float ("inf"/"nan" strings included); None if it is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _ratio_differs(recorded: Any, verdict: Verdict) -> str | None:
    value = _number(recorded)
    if value is None:
        return f"recorded {recorded!r} is not a ratio"
    replayed, tolerance = verdict.ratio, ratio_tolerance(verdict)
    if math.isnan(value) or math.isinf(value) or math.isinf(replayed):
        same = value == replayed
    else:
        same = abs(value - replayed) <= tolerance
    return None if same else (f"recorded {recorded!r}, re-decided {replayed!r} at {verdict.dps} digits "
                               f"(precision +-{tolerance:.2g})")


def _side_differs(recorded: Any, value: mpmath.mpf, tolerance: mpmath.mpf, dps: int) -> str | None:
    with mpmath.workdps(max(dps, PRINTED_DIGITS) + 10):  # every digit of both counts
        try:
            number = mpmath.mpf(recorded) if isinstance(recorded, str) else None
        except (ValueError, TypeError):
            number = None
        if number is None or not mpmath.isfinite(number):
            return f"recorded {recorded!r} is not a finite number"
        if abs(number - value) <= tolerance:
            return None
    return (f"recorded {recorded}, re-decided {mpmath.nstr(value, PRINTED_DIGITS)} at {dps} digits "
            f"(precision +-{mpmath.nstr(tolerance, 3)})")


def _enclosure_differs(interval: Any, ratios: dict[str, Any], verdict: Verdict) -> list[str]:
    """A certified enclosure [low, high] of the ratio must hold the replayed ratio and each recorded one."""
    if not (isinstance(interval, list) and len(interval) == 2):
        return []
    low, high = (-math.inf if v is None else _number(v) for v in interval)
    if low is None or high is None:
        return [f"interval.certified_ratio: recorded {interval!r} is not an interval"]
    tolerance = ratio_tolerance(verdict)
    found = []
    for field, value in {"the replayed ratio": verdict.ratio, **ratios}.items():
        number = _number(value)
        if number is None or not low - tolerance <= number <= high + tolerance:
            found.append(f"interval.certified_ratio: [{low!r}, {high!r}] does not hold {field} {value!r}")
    return found


def finding_differences(entry: dict[str, Any], at: Verdict, replayed: Verdict) -> list[str]:
    """Every field of a finding that differs from its re-decision (``at``: at its recorded digits,
    ``replayed``: at the replay's)."""
    found: list[str] = []

    def differs(field: str, why: str | None) -> None:
        if why is not None:
            found.append(f"{field}: {why}")

    recorded = entry.get("verdict")
    enclosure = (entry.get("interval") or {}).get("certified_ratio")
    if recorded is not None:
        tolerance = side_tolerance(at)
        differs("verdict.measured", _side_differs(recorded.get("measured"), at.measured, tolerance, at.dps))
        differs("verdict.bound", _side_differs(recorded.get("bound"), at.bound, tolerance, at.dps))
        differs("verdict.ratio", _ratio_differs(recorded.get("ratio"), at))
        for flag in ("holds", "undecided", "attained"):  # attained: absent from files written before it
            if (flag != "attained" or flag in recorded) and recorded.get(flag) is not getattr(at, flag):
                found.append(f"verdict.{flag}: recorded {recorded.get(flag)!r}, re-decided {getattr(at, flag)!r}")
    if enclosure is not None:
        found += _enclosure_differs(enclosure, {"worst_ratio": entry.get("worst_ratio")}, replayed)
    else:
        differs("worst_ratio", _ratio_differs(entry.get("worst_ratio"), at))
    if entry.get("violated") is not replayed.violated:
        found.append(f"violated: recorded {entry.get('violated')!r}, decided {replayed.violated!r} at "
                     f"{replayed.dps} digits")
    if bool(entry.get("violated")) != (int(entry.get("violations") or 0) > 0):
        found.append(f"violations: {entry.get('violations')!r} does not agree with "
                     f"violated = {entry.get('violated')!r}")
    worst = _number(entry.get("worst_ratio"))
    if worst is not None and not math.isnan(worst):
        ceiling = worst + ratio_tolerance(at) + RATIOS_ROUNDING
        above = [r for r in map(_number, entry.get("ratios") or []) if r is not None and r > ceiling]
        if above:
            found.append(f"ratios: an example's ratio {max(above)!r} exceeds worst_ratio {entry.get('worst_ratio')!r}")
        search = _number((entry.get("search") or {}).get("ratio"))
        if search is not None and search > worst + ratio_tolerance(at):
            found.append(f"search.ratio: {search!r} exceeds worst_ratio {entry.get('worst_ratio')!r}")
    return found


def mutant_differences(row: dict[str, Any], at: Verdict, replayed: Verdict) -> list[str]:
    found = []
    if row.get("refuted") is not replayed.violated:
        found.append(f"refuted: recorded {row.get('refuted')!r}, decided {replayed.violated!r} at "
                     f"{replayed.dps} digits")
    enclosure = (row.get("interval") or {}).get("certified_ratio")
    if enclosure is not None:
        found += _enclosure_differs(enclosure, {"ratio": row.get("ratio")}, replayed)
    else:
        why = _ratio_differs(row.get("ratio"), at)
        if why is not None:
            found.append(f"ratio: {why}")
    return found


def _finite(value: Any) -> bool:
    import numpy as np

    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        number = _number(value)
        return number is None or math.isfinite(number)
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.all(np.isfinite(value)))
    if isinstance(value, tuple | list):
        return all(_finite(v) for v in value)
    return True


def decode(encoded: Any, path: Path, where: str, option: str = "--replay") -> Instance:
    """An encoded instance, or a one-line error naming the file and the field."""
    from sltcheck.harness.serialise import decode_instance

    if not isinstance(encoded, dict):
        raise StoredResultError(f"{option} {str(path)!r}: {where} is not an encoded instance (an object)")
    try:
        instance = cast("Instance", decode_instance(encoded))
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise StoredResultError(f"{option} {str(path)!r}: {where} is not an encoded instance ({error})") from None
    for key, value in instance.items():
        if not _finite(value):
            raise StoredResultError(f"{option} {str(path)!r}: {where}.{key} is not finite (NaN or infinity): "
                                    "not an instance any statement admits")
    return instance


def evaluate(name: str, variant: str, instance: Instance, dps: int, bound: Any, path: Path, where: str) -> Verdict:
    """The verdict at ``dps`` digits; an instance that cannot be evaluated because it breaks the
    statement's assumptions (edited by hand) is a one-line error, any other failure a bug."""
    from sltcheck.assumptions import violations
    from sltcheck.harness.runner import evaluate as decide

    try:
        return decide(name, variant, instance, dps=dps, bound=bound)
    except (ValueError, TypeError, ArithmeticError, KeyError, IndexError) as error:
        missing = error.args[0] if isinstance(error, KeyError) and error.args else None
        if isinstance(missing, str) and missing not in instance:  # a field deleted by hand
            raise StoredResultError(f"--replay {str(path)!r}: {where} has no field {missing!r}, which {name} "
                                    f"[{variant}] needs (it has {', '.join(sorted(instance))})") from None
        try:
            broken = [str(v) for v in violations(name, instance)]
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            broken = ["its fields are not those of the statement"]
        if not broken:
            raise
        raise StoredResultError(f"--replay {str(path)!r}: {where} cannot be evaluated ({error}); it breaks "
                                f"{name}'s assumptions: {'; '.join(broken)}") from None


def recorded_dps(entry: dict[str, Any], path: Path, where: str) -> int:
    verdict = entry.get("verdict")
    if verdict is None:
        return PROPERTY_DPS
    dps = verdict.get("dps")
    if isinstance(dps, bool) or not isinstance(dps, int) or not 1 <= dps <= MAX_DPS:
        raise StoredResultError(f"--replay {str(path)!r}: {where}.verdict.dps must be an integer from 1 to "
                                f"{MAX_DPS}, got {dps!r}")
    return dps


@dataclasses.dataclass
class Replayed:
    """What a replay found: ``differences`` (the file is not what its records re-derive to: a field, a
    missing or extra record, the digest), ``attention`` (what replays as recorded but needs attention:
    a violated variant, a mutant its counterexample does not refute) and how many instances it
    re-decided. ``status`` is the command's exit status (1 where either list is non-empty or nothing
    replayed); ``as_recorded``: every recorded instance and number replays as recorded."""

    differences: list[str] = dataclasses.field(default_factory=list)
    attention: list[str] = dataclasses.field(default_factory=list)
    replayed: int = 0

    @property
    def as_recorded(self) -> bool:
        return not self.differences and self.replayed > 0

    @property
    def status(self) -> int:
        return int(bool(self.differences or self.attention or not self.replayed))


def replay_records(path: Path, dps: int, only: tuple[str, ...] = (), rows: list[dict[str, Any]] | None = None,
                   allow_unsealed: bool = False,
                   whole_file: Callable[[dict[str, Any], tuple[str, ...]], list[str]] | None = None) -> Replayed:
    """Re-decide every recorded instance and number of the findings file ``path`` (module doc).

    ``only``: those of these statements; ``rows``, if given, gets one plain row per replayed instance
    (statement, variant or mutant, ratio and outcome at ``dps`` digits, the fields that differ from the
    record); ``whole_file(data, only)``: the differences of the file as a whole (the units, counts and
    derived numbers: :func:`sltcheck.rederive.replay_file` passes them). A file without a digest is a
    difference unless ``allow_unsealed``; one whose digest does not match always is."""
    from sltcheck.records import FindingsFile
    from sltcheck.schema import load as load_file

    data = load_file(path, FindingsFile, "--replay findings")
    tally = Replayed()
    sealed = seal_state(data)
    if sealed == "edited":
        tally.differences.append(f"{path}: its digest does not match its content (changed after sltcheck wrote it)")
    elif sealed == "unsealed":
        (LOG.warning if allow_unsealed else LOG.error)(
            "%s carries no digest: written by hand or by an sltcheck before digests%s", path,
            " (--allow-unsealed: its numbers are re-decided below)" if allow_unsealed else
            "; its numbers are re-decided below, and the file is refused unless --allow-unsealed")
        if not allow_unsealed:
            tally.differences.append(f"{path}: carries no digest (unsealed; --allow-unsealed accepts it)")
    for index, entry in enumerate(data["findings"]):
        if not only or entry["statement"] in only:
            tally.replayed += _replay_finding(path, dps, index, cast("dict[str, Any]", entry), tally, rows)
    for index, mutant in enumerate(data["mutants"]):
        if mutant["counterexample"] and not (only and mutant["statement"] not in only):
            _replay_mutant(path, dps, index, cast("dict[str, Any]", mutant), tally, rows)
            tally.replayed += 1
    if whole_file is not None:
        tally.differences += [f"{path}: {d}" for d in whole_file(cast("dict[str, Any]", data), only)]
    _conclude(path, dps, only, data, tally)
    return tally


def _replay_finding(path: Path, dps: int, index: int, entry: dict[str, Any], tally: Replayed,
                    rows: list[dict[str, Any]] | None) -> bool:
    """One finding's worst instance re-decided at ``dps`` digits (and at its recorded digits) and
    compared with its record, each problem added to ``tally``; whether it had an instance."""
    from sltcheck.assumptions import violations
    from sltcheck.registry import STATEMENT_MODULES, load

    name, variant = entry["statement"], entry["variant"]
    where = f"findings[{index}]"
    if not entry["instance"]:
        if entry["worst_ratio"] is not None or entry["verdict"] is not None:
            LOG.warning("  %s %s [%s]: records a worst ratio or a verdict but no instance to replay it",
                        where, name, variant)
            tally.differences.append(f"{path}: {where} {name} [{variant}] records numbers without an instance")
        return False
    if name not in STATEMENT_MODULES or variant not in load(name).VARIANTS:
        raise StoredResultError(f"--replay {str(path)!r}: {where} names {name} [{variant}], "
                                "which this sltcheck does not have")
    instance = decode(entry["instance"], path, f"{where}.instance")
    verdict = evaluate(name, variant, instance, dps, None, path, f"{where}.instance")
    digits = recorded_dps(entry, path, where)
    at = verdict if digits == dps else evaluate(name, variant, instance, digits, None, path, f"{where}.instance")
    broken = violations(name, instance)
    state = ("VIOLATED" if verdict.violated else "undecided" if verdict.undecided
             else "attained (measured = bound, exact)" if verdict.attained else "holds")
    LOG.info(
        "%s", f"{name} {variant}: measured {mpmath.nstr(verdict.measured, 25)} bound "
        f"{mpmath.nstr(verdict.bound, 25)} ratio {verdict.ratio:.17g} at {dps} digits: {state}"
        + (f"; assumptions violated: {'; '.join(map(str, broken))}" if broken else "")
    )
    if verdict.violated:
        tally.attention.append(f"{name} [{variant}] is violated")
    differences = finding_differences(entry, at, verdict)
    for difference in differences:
        LOG.warning("  %s %s [%s] %s", where, name, variant, difference)
    if differences:
        fields = ", ".join(dict.fromkeys(d.split(":", 1)[0] for d in differences))
        tally.differences.append(f"{path}: {where} {name} [{variant}] differs from its record in {fields}")
    if rows is not None:
        rows.append({"statement": name, "variant": variant, "mutant": None, "ratio": float(verdict.ratio),
                     "outcome": state, "dps": dps, "differences": differences})
    return True


def _replay_mutant(path: Path, dps: int, index: int, mutant: dict[str, Any], tally: Replayed,
                   rows: list[dict[str, Any]] | None) -> None:
    """One mutant's counterexample re-decided at ``dps`` digits (and at the harness's) and compared
    with its record: it must still refute the mutant; each problem added to ``problems``."""
    from sltcheck.registry import STATEMENT_MODULES, load

    where = f"mutants[{index}]"
    module = load(mutant["statement"]) if mutant["statement"] in STATEMENT_MODULES else None
    match = [m for m in module.MUTANTS if m.name == mutant["mutant"]] if module else []
    if not match:
        raise StoredResultError(f"--replay {str(path)!r}: {where} names {mutant['statement']} "
                                f"mutant {mutant['mutant']!r}, which this sltcheck does not have")
    instance = decode(mutant["counterexample"], path, f"{where}.counterexample")
    label = f"{mutant['statement']}:{mutant['mutant']}"
    verdict = evaluate(mutant["statement"], mutant["mutant"], instance, dps, match[0].bound, path, where)
    at = verdict if dps == PROPERTY_DPS else evaluate(mutant["statement"], mutant["mutant"], instance,
                                                      PROPERTY_DPS, match[0].bound, path, where)
    LOG.info("%s", f"{mutant['statement']} mutant {mutant['mutant']}: ratio {verdict.ratio:.17g} at {dps} digits: "
                   f"{'refuted' if verdict.violated else 'NOT refuted'}")
    if not verdict.violated:
        tally.attention.append(f"mutant {label} is not refuted by its counterexample")
    differences = mutant_differences(mutant, at, verdict)
    for difference in differences:
        LOG.warning("  %s mutant %s %s", where, label, difference)
    if differences:
        tally.differences.append(f"{path}: {where} mutant {label} differs from its record in "
                        + ", ".join(dict.fromkeys(d.split(":", 1)[0] for d in differences)))
    if rows is not None:
        rows.append({"statement": mutant["statement"], "variant": None, "mutant": mutant["mutant"],
                     "ratio": float(verdict.ratio), "outcome": "refuted" if verdict.violated else "NOT refuted",
                     "dps": dps, "differences": differences})


def _conclude(path: Path, dps: int, only: tuple[str, ...], data: FindingsFile, tally: Replayed) -> None:
    """The replay's conclusion, logged: one line per difference (each naming the file), then what needs attention."""
    if not tally.replayed:
        LOG.warning("nothing to replay: %s records no instance%s", path, f" of {', '.join(only)}" if only else "")
    if not data["complete"]:
        LOG.warning("note: %s is a partial run; only its finished units were replayed", path)
    for difference in tally.differences:
        LOG.warning("DIFFERS %s", difference)
    if tally.differences or tally.attention:
        verdict = ("does not replay as recorded" if tally.differences else
                   "replays as recorded, but needs attention")
        LOG.warning("\n%s replayed instances; %s %s%s", tally.replayed, path, verdict,
                    f": {'; '.join(tally.attention)}" if tally.attention else "")
    elif tally.replayed:
        LOG.info("\nall %s recorded instances replay as recorded at %s digits (every recorded number re-decided "
                 "at the digits it was recorded at; the units, counts and derived numbers of the whole file "
                 "re-derived)", tally.replayed, dps)
