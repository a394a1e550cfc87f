"""``sltcheck check --replay FILE``: the whole findings file checked as a certificate
(:func:`sltcheck.rederive.replay_file`).

Every recorded instance is re-decided (:mod:`sltcheck.harness.replay`); the file is checked against
itself (:func:`sltcheck.certificates.findings_problems`, as every reader does); and what the records
only imply is recomputed here, as the run computed it:

- each worst instance's and each mutant counterexample's interval verdict
  (:mod:`sltcheck.harness.interval_verdict`, on the backend it was recorded with where that one is
  installed): its outcome, and its measured and bound enclosures;
- the repaired constants (:func:`sltcheck.repaired.table` on the file's findings);
- the slack rows (:func:`sltcheck.suprema.slack_table`; a searched bracket's lower end, which a
  search on another CPU may place elsewhere, within ``SEARCHED_LOWER`` of the recorded one);
- each ``certified_over_family`` counterexample, decided again by the statement's own evaluation
  (:func:`sltcheck.certify.seeds.certified_ratio`).

Each ``*_differences`` function returns one line per difference (empty: none), naming the field.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

from sltcheck.harness.replay import Replayed, decode, replay_records
from sltcheck.numerics.balls import arb_available

# A searched bracket's lower end: a search steered by float64 ratios may end elsewhere on another CPU.
SEARCHED_LOWER = 0.05
RELATIVE = 1e-9


def _backend(recorded: Any) -> str | None:
    """The backend to re-derive with: the recorded one where it is installed, else the default."""
    return "mpmath" if recorded == "mpmath" else "arb" if recorded == "arb" and arb_available() else None


def _overlap(a: Any, b: Any) -> bool:
    """Two enclosures [low, high] (decimal strings or floats; None: unbounded) of one number meet."""
    if a is None or b is None:
        return a is b
    try:
        (a_lo, a_hi), (b_lo, b_hi) = _ends(a), _ends(b)
    except (TypeError, ValueError, IndexError):
        return False
    slack = RELATIVE * max(abs(a_lo), abs(a_hi), abs(b_lo), abs(b_hi), 1e-300)
    return max(a_lo, b_lo) <= min(a_hi, b_hi) + slack


def _ends(pair: Any) -> tuple[float, float]:
    low, high = pair
    return -math.inf if low is None else float(low), math.inf if high is None else float(high)


def interval_differences(entry: dict[str, Any], instance: Any) -> list[str]:
    """A finding's recorded interval verdict against the one re-derived on its instance."""
    from sltcheck.harness import interval_verdict

    recorded = entry.get("interval") or {}
    if "certified_outcome" not in entry or entry["variant"] not in interval_verdict.supported().get(
            entry["statement"], ()):
        return []
    backend = _backend(entry.get("certified_backend"))
    again = interval_verdict.as_dict(interval_verdict.evaluate(entry["statement"], instance, entry["variant"],
                                                               backend=backend))
    found = []
    if again["outcome"] != entry["certified_outcome"]:
        found.append(f"certified_outcome: recorded {entry['certified_outcome']!r}, re-derived {again['outcome']!r} "
                     f"({again['backend']})")
    for field in ("measured_interval", "bound_interval"):
        if field in recorded and not _overlap(recorded[field], again[field]):
            found.append(f"interval.{field}: recorded {recorded[field]!r}, re-derived {again[field]!r} "
                         f"({again['backend']}): the two enclosures of one number do not meet")
    return found


def mutant_interval_differences(row: dict[str, Any], instance: Any) -> list[str]:
    """A mutant counterexample's recorded interval outcome against the one re-derived."""
    from sltcheck.harness import interval_verdict
    from sltcheck.registry import load

    if "certified_outcome" not in row:
        return []
    module = load(row["statement"])
    mutant = next(m for m in module.MUTANTS if m.name == row["mutant"])
    enclosed = interval_verdict.supported().get(row["statement"], ())
    bound = mutant.name if mutant.name in enclosed else next(
        (v for v, f in module.VARIANTS.items() if f is mutant.bound and v in enclosed), None)
    if bound is None:
        return [f"certified_outcome: recorded {row['certified_outcome']!r}, but no enclosure covers this mutant"]
    again = interval_verdict.evaluate(row["statement"], instance, bound, backend=_backend(row.get("certified_backend")))
    if again["outcome"] != row["certified_outcome"]:
        return [f"certified_outcome: recorded {row['certified_outcome']!r}, re-derived {again['outcome']!r}"]
    return []


def repaired_differences(data: dict[str, Any]) -> list[str]:
    """The repaired constants re-derived from the file's findings (:func:`sltcheck.repaired.table`)."""
    from sltcheck import repaired

    recorded = data.get("repaired_constants")
    if recorded is None:
        return []
    again = repaired.table([dict(f) for f in data["findings"]])
    if len(again) != len(recorded):
        return [f"repaired_constants: {len(recorded)} rows, re-derived {len(again)}"]
    found = []
    for index, (row, fresh) in enumerate(zip(recorded, again, strict=True)):
        where = f"repaired_constants[{index}] {fresh['statement']} [{fresh['variant']}]"
        low, high = row.get("lower") or {}, fresh.get("lower") or {}
        plain = ("certified", "backend", "outcome")
        fields = [k for k in dict.fromkeys([*row, *fresh]) if k != "lower" and row.get(k) != fresh.get(k)]
        fields += [f"lower.{k}" for k in dict.fromkeys([*low, *high]) if k not in plain and low.get(k) != high.get(k)]
        if fields:
            found.append(f"{where}: {', '.join(fields)} differ from the re-derivation on the file's findings "
                         f"(constant recorded {row.get('constant')!r}, re-derived {fresh.get('constant')!r})")
        elif low.get("backend") == high.get("backend") and low.get("certified") != high.get("certified"):
            found.append(f"{where} lower.certified: recorded {low.get('certified')!r}, re-derived "
                         f"{high.get('certified')!r} ({high.get('backend')})")
        elif not _overlap(low.get("certified"), high.get("certified")) or low.get("outcome") != high.get("outcome"):
            found.append(f"{where} lower.certified: recorded {low.get('certified')!r} ({low.get('outcome')}), "
                         f"re-derived {high.get('certified')!r} ({high.get('outcome')})")
    return found


def slack_differences(data: dict[str, Any]) -> list[str]:
    """The slack rows re-derived (:func:`sltcheck.suprema.slack_table` for the run's statements)."""
    if not data["slack"]:
        return []
    only = data["run"].get("only") or None
    again = _slack_table(tuple(only) if only else None)
    if len(again) != len(data["slack"]):
        return [f"slack: {len(data['slack'])} rows, re-derived {len(again)}"]
    found = []
    for index, (row, fresh) in enumerate(zip(data["slack"], again, strict=True)):
        where = f"slack[{index}] {fresh['statement']}"
        searched = fresh["kind"] == "bracket" and fresh["lower"] != row.get("lower")
        for field in ("statement", "kind", "supremum", "lower", "bound", "slack", "slack_range"):
            value, expected = row.get(field), fresh[field]
            tolerance = SEARCHED_LOWER if searched and field in ("lower", "slack_range") else RELATIVE
            if not _same(value, expected, tolerance):
                found.append(f"{where} {field}: recorded {value!r}, re-derived {expected!r}")
    return found


@functools.cache
def _slack_table(names: tuple[str, ...] | None) -> list[dict[str, Any]]:
    """The slack rows of ``names``, once per process (Lemmas 12 and 13 at d1 = 2 need a search)."""
    from sltcheck.suprema import slack_table

    return slack_table(statements=names)


def _same(value: Any, expected: Any, tolerance: float) -> bool:
    if isinstance(expected, list):
        return isinstance(value, list) and len(value) == len(expected) and all(
            _same(v, e, tolerance) for v, e in zip(value, expected, strict=True))
    if isinstance(expected, float) and isinstance(value, int | float) and not isinstance(value, bool):
        return math.isclose(value, expected, rel_tol=tolerance, abs_tol=1e-300)
    return bool(value == expected)


def family_differences(data: dict[str, Any]) -> list[str]:
    """Each ``certified_over_family`` counterexample decided again by the statement's own evaluation."""
    from sltcheck.certify import families
    from sltcheck.certify.seeds import certified_ratio
    from sltcheck.harness import interval_verdict
    from sltcheck.harness.serialise import decode_instance

    known = families()
    found = []
    for index, entry in enumerate((data.get("certified_over_family") or {}).get("families") or []):
        counterexample = entry.get("counterexample") if isinstance(entry, dict) else None
        family = known.get(str(entry.get("key"))) if isinstance(entry, dict) else None
        if not counterexample or family is None:
            continue
        where = f"certified_over_family.families[{index}] {family.key}"
        try:
            instance = decode_instance(counterexample.get("instance"))
            again = certified_ratio(interval_verdict, family, instance)
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as error:
            found.append(f"{where} counterexample.instance: cannot be evaluated ({error})")
            continue
        if again["outcome"] != "violated" or not _overlap(counterexample.get("certified_ratio"),
                                                         [again["lower"], again["upper"]]):
            found.append(f"{where} counterexample.certified_ratio: recorded {counterexample.get('certified_ratio')!r}, "
                         f"re-derived [{again['lower']!r}, {again['upper']!r}] ({again['outcome']})")
    return found


def regime_differences(data: dict[str, Any], path: Path) -> list[str]:
    """Each theorem's regime row (:mod:`sltcheck.regime`) against its instance: the instance in the
    regime (T >= 2, eps* < 1), its tokens and eps*, and its verdict re-decided at the recorded digits."""
    from sltcheck.assumptions import violations
    from sltcheck.harness.runner import evaluate
    from sltcheck.regime import star_in_regime, tokens

    found = []
    for index, row in enumerate(data.get("regime") or []):
        if not row.get("found") or not row.get("instance"):
            continue
        where = f"regime[{index}] {row['statement']} [{row['variant']}]"
        instance = decode(row["instance"], path, f"regime[{index}].instance")
        star = star_in_regime(row["statement"], instance)
        if violations(row["statement"], instance) or star is None:
            found.append(f"{where}: its instance is not an admissible one in the regime ({row.get('condition')})")
            continue
        if row.get("tokens") != tokens(instance):
            found.append(f"{where} tokens: recorded {row.get('tokens')!r}, the instance has {tokens(instance)}")
        if not _same(row.get("eps_star"), star, 1e-6):  # float64, whose last bits move with the CPU
            found.append(f"{where} eps_star: recorded {row.get('eps_star')!r}, re-derived {star!r}")
        recorded = row.get("verdict") or {}
        again = evaluate(row["statement"], row["variant"], instance, dps=int(recorded.get("dps") or 40))
        if not _same(recorded.get("ratio"), again.ratio, RELATIVE) or not _same(row.get("ratio"), again.ratio,
                                                                                  RELATIVE):
            found.append(f"{where} ratio: recorded {row.get('ratio')!r}, re-decided {again.ratio!r} at "
                         f"{int(recorded.get('dps') or 40)} digits")
        elif bool(recorded.get("holds")) != again.holds:
            found.append(f"{where} verdict.holds: recorded {recorded.get('holds')!r}, re-decided {again.holds!r}")
    return found


def replay(path: Path, dps: int, only: tuple[str, ...] = (), rows: list[dict[str, Any]] | None = None,
           allow_unsealed: bool = False) -> int:
    """``sltcheck check --replay``'s exit status (:attr:`~sltcheck.harness.replay.Replayed.status`)."""
    return replay_file(path, dps, only, rows, allow_unsealed).status


def replay_file(path: Path, dps: int, only: tuple[str, ...] = (), rows: list[dict[str, Any]] | None = None,
                allow_unsealed: bool = False) -> Replayed:
    """Every recorded instance and number of the findings file ``path`` re-decided (those of ``only``'s
    statements), and the whole file checked: its units, counts and lists whatever ``only`` says, its
    derived numbers derived again; ``rows`` and ``allow_unsealed`` as
    :func:`sltcheck.harness.replay.replay_records`."""
    return replay_records(path, dps, only, rows, allow_unsealed,
                          whole_file=lambda data, names: whole_file_differences(data, names, path))


def whole_file_differences(data: dict[str, Any], only: tuple[str, ...], path: Path) -> list[str]:
    """The file against itself, then its derived numbers (of ``only``'s statements) derived again."""
    from sltcheck.certificates import findings_problems

    found = findings_problems(data)
    if only:
        data = {**data, "findings": [f for f in data["findings"] if f["statement"] in only],
                "mutants": [m for m in data["mutants"] if m["statement"] in only],
                "repaired_constants": [r for r in data.get("repaired_constants") or [] if r.get("statement") in only],
                "slack": [r for r in data["slack"] if r.get("statement") in only],
                "regime": [r for r in data.get("regime") or [] if r.get("statement") in only],
                "run": {**data["run"], "only": list(only)}}
    for index, entry in enumerate(data["findings"]):
        if entry["instance"]:
            instance = decode(entry["instance"], path, f"findings[{index}].instance")
            found += [f"findings[{index}] {entry['statement']} [{entry['variant']}] {line}"
                      for line in interval_differences(entry, instance)]
    for index, row in enumerate(data["mutants"]):
        if row["counterexample"] and row["refuted"]:
            instance = decode(row["counterexample"], path, f"mutants[{index}].counterexample")
            found += [f"mutants[{index}] {row['statement']}:{row['mutant']} {line}"
                      for line in mutant_interval_differences(row, instance)]
    found += repaired_differences(data) + slack_differences(data) + regime_differences(data, path)
    return found + family_differences(data)


__all__ = ["family_differences", "interval_differences", "mutant_interval_differences", "regime_differences",
           "repaired_differences", "replay", "replay_file", "slack_differences", "whole_file_differences"]
