"""One rule for every stored result: sealed, whole, and consistent with itself where it is read.

Every result file sltcheck writes for later reading carries a ``digest`` (:func:`sltcheck.jsonfiles.seal`):
``findings.json``, ``counterexamples.json`` and ``certified.json`` (``check``, ``certify``),
``summary.json`` and ``readings.json`` (``repro``), and each row of a sweep's ``results.sqlite``
(:mod:`sltcheck.repro.store`); ``boxes.sqlite`` chains one per round (:mod:`sltcheck.certify.store`).
:func:`sltcheck.jsonfiles.require_sealed` is the one reader's rule: a digest that does not match is an edit; a missing
one is an error too (no schema version of these files predates their digests; only
``sltcheck check --replay --allow-unsealed``, which re-decides every number, reads one).

The digest has no secret: anyone can reseal an edited file. So every reader also checks what a file
says against itself (:func:`findings_problems`: every planned and finished unit has exactly one
record, counts agree with lists, derived numbers agree with the records they are derived from,
decimal ``repr``\\ s with their ``float.hex``, digits at or above the harness's), and the re-derivations
(``check --replay``, ``repro verify``) recompute the numbers themselves
(:mod:`sltcheck.rederive`, :mod:`sltcheck.repro.verify`).
"""

from __future__ import annotations

import math
from typing import Any

from sltcheck.jsonfiles import checked as checked  # the readers' rule lives with the seal; read here too
from sltcheck.jsonfiles import require_sealed as require_sealed

# A recorded float compared with the same quantity computed from other fields of the file.
RELATIVE = 1e-9


# --- findings.json -------------------------------------------------------------------------------------


def planned_units(run: dict[str, Any]) -> list[str]:
    """The units a check with the ``run`` block plans, in order: ``statement/variant``,
    ``statement/mutants``, ``power``, ``regime``, ``probability``: the one list :func:`sltcheck.checking.run`
    works through and a replay holds the file to."""
    from sltcheck.regime import REGIME_STATEMENTS
    from sltcheck.registry import STATEMENT_MODULES, load

    given = set(run.get("only") or STATEMENT_MODULES)
    units = []
    for name in (n for n in STATEMENT_MODULES if n in given):
        module = load(name)
        units += [f"{name}/{variant}" for variant in module.VARIANTS]
        if not run.get("no_mutants") and module.MUTANTS:
            units.append(f"{name}/mutants")
    if run.get("power"):
        units.append("power")
    if not run.get("no_search") and given & set(REGIME_STATEMENTS):
        units.append("regime")  # the theorems' worst instance in their own regime (sltcheck.regime)
    if run.get("probability"):
        units.append("probability")
    return units


def findings_problems(data: dict[str, Any]) -> list[str]:
    """Every way a findings.json disagrees with itself, one line each (empty: none): units against
    records, counts against lists, derived numbers against the records they derive from, decimal
    ``repr``\\ s against their ``float.hex``, recorded digits below the harness's."""
    from sltcheck.registry import STATEMENT_MODULES

    names = [f["statement"] for f in data["findings"]] + [m["statement"] for m in data["mutants"]]
    unknown = sorted({n for n in names if n not in STATEMENT_MODULES})
    if unknown:
        return [f"names {', '.join(unknown)}, which this sltcheck does not have"]
    found = _unit_problems(data) if data.get("profile") != "certify" else _certify_file_problems(data)
    for index, entry in enumerate(data["findings"]):
        found += [f"findings[{index}] {entry['statement']} [{entry['variant']}] {p}" for p in _finding_problems(entry)]
    for index, row in enumerate(data["mutants"]):
        if row["refuted"] and not row["counterexample"]:
            found.append(f"mutants[{index}] {row['statement']}:{row['mutant']}: refuted without a counterexample")
    found += _repr_problems(data)
    found += _repaired_problems(data)
    found += _slack_problems(data)
    found += _power_problems(data)
    found += family_problems((data.get("certified_over_family") or {}).get("families") or [])
    return found


def _unit_problems(data: dict[str, Any]) -> list[str]:
    """Every planned unit once; each finished one with exactly its records; ``complete`` as the lists say."""
    from sltcheck.registry import load

    found = []
    planned, done = list(data["planned"]), list(data["done"])
    expected = planned_units(dict(data["run"]))
    if planned != expected:
        found.append(f"planned: {_listed(planned)} is not what its run block plans ({_listed(expected)})")
    if len(set(done)) != len(done):
        found.append(f"done: lists a unit twice ({_listed(done)})")
    if not set(done) <= set(planned):
        found.append(f"done: {_listed(sorted(set(done) - set(planned)))} was never planned")
    complete = set(planned) <= set(done)
    if data["complete"] is not complete:
        found.append(f"complete: recorded {data['complete']!r}, but {len(set(done) & set(planned))} of "
                     f"{len(planned)} planned units are done")
    records: dict[str, int] = {}
    for entry in data["findings"]:
        unit = f"{entry['statement']}/{entry['variant']}"
        records[unit] = records.get(unit, 0) + 1
    for unit in sorted(set(records) | {u for u in done if "/" in u and not u.endswith("/mutants")}):
        count, finished = records.get(unit, 0), unit in done
        if count != int(finished):
            found.append(f"findings: {count} records of {unit}, which is {'' if finished else 'not '}done "
                         f"(exactly {int(finished)} expected)")
    for name in sorted({m["statement"] for m in data["mutants"]} | {u[:-8] for u in done if u.endswith("/mutants")}):
        rows = [m["mutant"] for m in data["mutants"] if m["statement"] == name]
        declared = [m.name for m in load(name).MUTANTS] if f"{name}/mutants" in done else []
        if rows != declared:
            found.append(f"mutants: {name}'s rows {_listed(rows)} are not its mutants {_listed(declared)} "
                         f"({name}/mutants is {'' if declared else 'not '}done)")
    return found + table_problems(data, done)


def table_problems(data: dict[str, Any], done: list[str]) -> list[str]:
    """The units that fill one table of the file (power, regime, probability): rows exactly where done."""
    found = []
    for unit in ("power", "regime"):
        rows = data.get(unit) or []
        if (unit in done) != bool(rows):
            found.append(f"{unit}: {len(rows)} rows, and the unit {unit} is {'' if unit in done else 'not '}done")
    if ("probability" in done) != ("probability" in data):
        found.append("probability: present without its unit done, or its unit done without it")
    return found


def _certify_file_problems(data: dict[str, Any]) -> list[str]:
    """counterexamples.json of ``sltcheck certify``: no units, every record a certified counterexample."""
    found = []
    if data["planned"] or data["done"]:
        found.append("planned/done: a certify file plans no units")
    for index, entry in enumerate(data["findings"]):
        if not (entry.get("interval") or {}).get("certified_ratio") or not entry["violated"]:
            found.append(f"findings[{index}]: a certify counterexample without its certified ratio")
    return found


def _listed(units: list[str]) -> str:
    return "[" + ", ".join(units[:8]) + (", ..." if len(units) > 8 else "") + "]"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _finding_problems(entry: dict[str, Any]) -> list[str]:
    """A record's counts against its lists and flags, its default flag and its digits."""
    from sltcheck.numerics.defaults import PROPERTY_DPS
    from sltcheck.registry import load

    module = load(entry["statement"])
    found = []
    if entry["variant"] not in module.VARIANTS:
        return [f"is not a variant of {entry['statement']} ({', '.join(module.VARIANTS)})"]
    if entry["default"] is not (entry["variant"] == module.DEFAULT_VARIANT):
        found.append(f"default: recorded {entry['default']!r}, but {module.DEFAULT_VARIANT} is the default variant")
    examples = entry["examples"]
    if examples != len(entry["ratios"]):
        found.append(f"examples: {examples} examples recorded beside {len(entry['ratios'])} ratios (one per example)")
    searched = 1 if entry["search"] or entry.get("seed") is None else 0  # a search's (or certify's) instance
    for field in ("violations", "undecided", "attained", "filtered"):
        count = entry.get(field, 0)
        ceiling = examples + searched if field == "violations" else None if field == "filtered" else examples
        if count < 0 or (ceiling is not None and count > ceiling):
            found.append(f"{field}: {count} of {examples} examples")
    if entry["verdict"] is not None and entry["verdict"]["dps"] < PROPERTY_DPS and entry.get("seed") is not None:
        found.append(f"verdict.dps: {entry['verdict']['dps']} digits, below the {PROPERTY_DPS} every verdict of "
                     "sltcheck check is decided at")
    if (entry["worst_ratio"] is None) != (entry["instance"] is None):
        found.append("worst_ratio: recorded without its instance, or an instance without its ratio")
    return found + _certified_problems(entry)


def _certified_problems(entry: dict[str, Any]) -> list[str]:
    """A record's interval verdict against its own flags (re-derived by ``check --replay``)."""
    outcome = entry.get("certified_outcome")
    if outcome is None:
        return []
    found = []
    if entry.get("certified") is not (outcome != "undecided"):
        found.append(f"certified: recorded {entry.get('certified')!r} beside the outcome {outcome!r}")
    if outcome == "violated" and not entry["violated"]:
        found.append("certified_outcome: 'violated' (proved in interval arithmetic) beside violated = false")
    if outcome in ("holds", "attained") and entry["violated"] and entry["verdict"] and entry["verdict"]["holds"]:
        found.append(f"certified_outcome: {outcome!r} beside a violated verdict")
    interval = entry.get("interval") or {}
    if interval.get("outcome") not in (None, outcome):
        found.append(f"interval.outcome: {interval.get('outcome')!r} beside certified_outcome {outcome!r}")
    return found


def _repr_problems(data: dict[str, Any]) -> list[str]:
    """Every {"float": hex, "repr": decimal} pair of every instance in the file: the decimal must be the hex."""
    found: list[str] = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            if set(value) == {"float", "repr"}:
                try:
                    same = float.fromhex(value["float"]) == float(value["repr"]) or (
                        math.isnan(float.fromhex(value["float"])) and math.isnan(float(value["repr"])))
                except (TypeError, ValueError):
                    same = False
                if not same:
                    found.append(f"{where}: repr {value['repr']!r} is not the float {value['float']!r} it rides along")
                return
            for key, item in value.items():
                walk(item, f"{where}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}]")

    for key in ("findings", "mutants", "repaired_constants", "certified_over_family"):
        walk(data.get(key), key)
    return found


def _repaired_problems(data: dict[str, Any]) -> list[str]:
    """Each repaired constant as its statement declares it, its lower end the run's worst instance of
    that variant, and the constant at or above its own certified lower end."""
    from sltcheck import repaired

    rows = data.get("repaired_constants")
    if rows is None:
        return []
    found = []
    statements = list(dict.fromkeys(f["statement"] for f in data["findings"]))
    expected = [(s, r["variant"]) for s in statements for r in repaired.declared(s)]
    recorded = [(r.get("statement"), r.get("variant")) for r in rows]
    if recorded != expected:
        found.append(f"repaired_constants: rows {recorded} are not the declared repairs {expected}")
    for index, row in enumerate(rows):
        where = f"repaired_constants[{index}] {row.get('statement')} [{row.get('variant')}]"
        declared = next((r for r in repaired.declared(row["statement"]) if r["variant"] == row["variant"]), None) \
            if row.get("statement") in statements else None
        if declared is None:
            continue
        found += [f"{where} {p}" for p in _declared_problems(row, declared)]
        lower = row.get("lower") or {}
        match = next((f for f in data["findings"] if (f["statement"], f["variant"]) == (row["statement"],
                                                                                        row["variant"])), None)
        if match is not None and lower.get("instance") != match["instance"]:
            found.append(f"{where} lower.instance: not the run's worst instance of that variant")
        if match is not None and lower and lower.get("ratio") != match["worst_ratio"]:
            found.append(f"{where} lower.ratio: recorded {lower.get('ratio')!r}, the finding's worst_ratio "
                         f"{match['worst_ratio']!r}")
        low = _number((lower.get("certified") or [None])[0])
        constant = _number(row.get("constant") if row.get("bracket") is None else row["bracket"][1])
        if constant is not None and low is not None and constant < low:
            found.append(f"{where} constant: {constant!r} lies below its own certified lower end {low!r}")
    return found


def _declared_problems(row: dict[str, Any], declared: dict[str, Any]) -> list[str]:
    """A repaired-constants row's fields against its statement's declaration (``REPAIRED_CONSTANTS``)."""
    upper = row.get("upper") or {}
    bracket = declared.get("bracket")
    pairs = [("constant", row.get("constant"), declared.get("constant")),
             ("bracket", row.get("bracket"), None if bracket is None else [float(bracket[0]), float(bracket[1])]),
             ("scope", row.get("scope"), declared.get("scope")),
             ("exact", row.get("exact"), declared.get("exact")),
             ("attained", row.get("attained"), bool(declared.get("attained"))),
             ("upper.kind", upper.get("kind"), declared["upper"]),
             ("upper.where", upper.get("where"), declared.get("where"))]
    return [f"{field}: recorded {recorded!r}, declared {value!r}" for field, recorded, value in pairs
            if recorded != value or (field == "attained" and recorded is not value)]


def _slack_problems(data: dict[str, Any]) -> list[str]:
    """The slack rows: those of the run's statements, each slack = bound / supremum, lower <= supremum."""
    from sltcheck.contract import optional, parts

    rows = data["slack"]
    if not rows:
        return []
    only = set(data["run"].get("only") or [])
    expected = [name for module in parts("worst_case").values()
                for name, _ in optional(module, "SLACK_ROWS") if not only or name in only]
    found = []
    if [r.get("statement") for r in rows] != expected:
        found.append(f"slack: rows of {[r.get('statement') for r in rows]} are not the slack rows of the run's "
                     f"statements ({expected})")
    for index, row in enumerate(rows):
        where = f"slack[{index}] {row.get('statement')}"
        bound, upper, lower, slack = (_number(row.get(k)) for k in ("bound", "supremum", "lower", "slack"))
        if bound is not None and upper and slack is not None and not _close(slack, bound / upper):
            found.append(f"{where} slack: recorded {slack!r}, bound / supremum = {bound / upper!r}")
        if lower is not None and upper is not None and lower > upper * (1 + RELATIVE):
            found.append(f"{where} lower: {lower!r} exceeds the supremum {upper!r}")
    return found


def _power_problems(data: dict[str, Any]) -> list[str]:
    """The power rows: the run's statements' cases, power and passed as their best and known values say,
    a closed form's best at most its proved supremum (1)."""
    from sltcheck.contract import optional
    from sltcheck.registry import STATEMENT_MODULES, load

    rows = data["power"]
    if not rows:
        return []
    required = 0.99  # sltcheck.harness.power.REQUIRED (not imported: it imports the search)
    names = data["run"].get("only") or list(STATEMENT_MODULES)
    expected = [(n, dict(case["fixed"])) for n in names for case in optional(load(n), "POWER_CASES")]
    found = []
    if [(r.get("statement"), r.get("fixed")) for r in rows] != expected:
        found.append("power: its rows are not the power cases of the run's statements")
    for index, row in enumerate(rows):
        where = f"power[{index}] {row.get('statement')}"
        best, known, power = (_number(row.get(k)) for k in ("best", "known", "power"))
        if best is None or known is None:
            found.append(f"{where}: best or known is not a number")
            continue
        if row.get("kind") == "closed-form" and (known != 1.0 or best > 1 + RELATIVE):
            found.append(f"{where} best: {best!r} above the proved supremum (known {known!r}, must be 1)")
        if known and power is not None and not _close(power, best / known):
            found.append(f"{where} power: recorded {power!r}, best / known = {best / known!r}")
        if row.get("passed") is not (best >= known * required):
            found.append(f"{where} passed: recorded {row.get('passed')!r}, best {best!r} against {required} x known "
                         f"{known!r}")
    return found


def family_problems(entries: list[Any]) -> list[str]:
    """certify's families (``certified.json``, a findings file's ``certified_over_family``): each as its
    family defines it, its verdict as its bracket says, its counterexample's ratio above 1."""
    from sltcheck.certify import families

    known = families()
    found = []
    for index, entry in enumerate(entries):
        where = f"families[{index}] {entry.get('key') if isinstance(entry, dict) else entry!r}"
        family = known.get(str(entry.get("key"))) if isinstance(entry, dict) else None
        if family is None:
            found.append(f"{where}: not a family of this sltcheck")
            continue
        for field, value in (("statement", family.statement), ("variant", family.variant),
                             ("expected", family.expected), ("known_supremum", family.known_supremum)):
            if entry.get(field) != value:
                found.append(f"{where} {field}: recorded {entry.get(field)!r}, the family's is {value!r}")
        found += [f"{where} {p}" for p in _verdict_problems(entry, family.known_supremum)]
        found += [f"{where} {p}" for p in _cap_problems(entry, family.capped_by, entries)]
    return found


def _cap_problems(entry: dict[str, Any], capped_by: str | None, entries: list[Any]) -> list[str]:
    """A capped family's cap: its family's, and at least that family's upper end as the same results hold it."""
    recorded = entry.get("capped_by")
    if capped_by is None:
        return [] if recorded is None else [f"capped_by: recorded {recorded!r}, the family has no cap"]
    if not isinstance(recorded, dict) or recorded.get("family") != capped_by:
        return [f"capped_by: recorded {recorded!r}, the family's cap is {capped_by!r}"]
    cap = _number(recorded.get("cap"))
    if cap is None:
        return []  # no box took a cap
    capping = [e for e in entries if isinstance(e, dict) and e.get("key") == capped_by]
    upper = _number(capping[0].get("sup_upper")) if capping else None
    if upper is None or upper > cap:
        return [f"capped_by.cap: {cap!r} rests on {capped_by}, whose upper end here is {upper!r}"]
    return []


def _verdict_problems(entry: dict[str, Any], known_supremum: float | None) -> list[str]:
    verdict, low, high = entry.get("verdict"), _number(entry.get("sup_lower")), _number(entry.get("sup_upper"))
    found = []
    if verdict not in ("held", "counterexample", "undecided"):
        return [f"verdict: {verdict!r} is not held, counterexample or undecided"]
    counterexample = entry.get("counterexample")
    if (verdict == "counterexample") != bool(counterexample):
        found.append(f"verdict: {verdict!r} {'without' if verdict == 'counterexample' else 'beside'} a counterexample")
    if counterexample:
        ratio = _number((counterexample.get("certified_ratio") or [None])[0])
        if ratio is None or ratio <= 1:
            found.append(f"counterexample.certified_ratio: {counterexample.get('certified_ratio')!r} does not "
                         "exceed 1")
        if counterexample.get("family") != entry.get("key"):
            found.append(f"counterexample.family: {counterexample.get('family')!r}")
    if verdict == "held" and (high is None or high > 1):
        found.append(f"verdict: held beside a supremum bracket up to {high!r} (above 1)")
    if verdict == "held" and (_number(entry.get("proven_fraction")) or 0) < 1 - RELATIVE:
        found.append(f"verdict: held beside a proven fraction {entry.get('proven_fraction')!r}")
    if low is not None and high is not None and low > high:
        found.append(f"sup_lower: {low!r} exceeds sup_upper {high!r}")
    outside = known_supremum is not None and (
        (low is not None and low > known_supremum * (1 + RELATIVE) + RELATIVE)
        or (high is not None and high < known_supremum * (1 - RELATIVE) - RELATIVE))
    if outside and verdict != "counterexample":
        found.append(f"[sup_lower, sup_upper] = [{low!r}, {high!r}] does not hold the family's known supremum "
                     f"{known_supremum!r}")
    if known_supremum is not None and verdict == "counterexample" and known_supremum <= 1:
        found.append(f"verdict: a counterexample in a family whose known supremum is {known_supremum!r} (<= 1)")
    return found


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=RELATIVE, abs_tol=1e-300)

