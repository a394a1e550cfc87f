"""Every label a reader sees, derived in one place from the result files.

The report's views (:mod:`sltcheck.report.page`, :mod:`~sltcheck.report.check_views`), the findings page
and the README's headline (:mod:`sltcheck.report.findings_text`) and the last line ``sltcheck report``
prints only *format* what this module derives, so no two of them can disagree:

- :func:`outcome`: a checked variant is violated, held, undecided or not measured (held only when
  something was measured and its worst instance decided at the declared precision);
- :func:`attained`: held *with equality proved* (examples whose two sides are equal in exact
  arithmetic, ``attained`` in findings.json, or the worst instance's certificate ``attained``); a ratio
  that prints as 1 is not enough;
- :func:`near`: held, within ``NEAR`` of 1, equality not proved ("reaches its bound to rounding");
- :func:`derive`: the lists a page shows (violated, attained, near, the rest, undecided, not measured)
  and the *closest call*, the largest ratio among the rest: never 1;
- :func:`theorem_regimes`: per theorem, its worst instance in its own regime (``regime`` rows of
  findings.json, :mod:`sltcheck.regime`) beside the degenerate maximum, with why that one reaches 1;
- :func:`reproduction` and :func:`closing_line`: a reproduction's checks that can fail, apart from the
  vacuous ones (bound at or above the trivial bound), counted beside its violations.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

OUTCOMES: tuple[str, ...] = ("violated", "held", "undecided", "not measured")
# A worst ratio this close to 1, without equality proved, reaches its bound "to rounding": neither
# "attained" nor a closest call.
NEAR = 1e-9

Entry = dict[str, Any]


def outcome(entry: Entry) -> str:
    if entry.get("violated"):
        return "violated"
    ratio = entry.get("worst_ratio")
    if ratio is None or ratio == "nan" or (isinstance(ratio, float) and math.isnan(ratio)):
        return "not measured"  # strict JSON stores a NaN ratio as "nan": no measurement
    if (entry.get("verdict") or {}).get("undecided"):
        return "undecided"
    return "held"


def certificate(entry: Entry) -> str | None:
    """The worst instance's verdict in interval (or exact) arithmetic: holds, attained, violated, ..."""
    found = entry.get("certified_outcome") or (entry.get("search") or {}).get("certified")
    return str(found) if found else None


def attained(entry: Entry) -> bool:
    """Held, and measured = bound proved on some instance (never read off a ratio that prints as 1)."""
    if outcome(entry) != "held":
        return False
    examples = entry.get("attained")
    proved = isinstance(examples, int | bool) and int(examples) > 0
    return proved or bool((entry.get("verdict") or {}).get("attained")) or certificate(entry) == "attained"


def _ratio(entry: Entry) -> float | None:
    ratio = entry.get("worst_ratio")
    return float(ratio) if isinstance(ratio, int | float) and not isinstance(ratio, bool) else None


def near(entry: Entry) -> bool:
    """Held, not proved attained, within NEAR of 1."""
    ratio = _ratio(entry)
    return outcome(entry) == "held" and not attained(entry) and ratio is not None and ratio >= 1 - NEAR


def verdict(entry: Entry) -> str:
    """The verdict column: violated, "held, bound attained", "held, within 1e-9 of its bound", held, ..."""
    if attained(entry):
        return "held, bound attained"
    if near(entry):
        return f"held, within {NEAR:g} of its bound"
    return outcome(entry)


def rank(entry: Entry) -> tuple[int, float]:
    """Violations first, then the closest calls (largest ratio first), those within NEAR of 1, the
    attained bounds, and what was not measured or decided last."""
    ratio = _ratio(entry) or 0.0
    if entry.get("violated"):
        return (0, -ratio)
    if attained(entry):
        return (3, 0.0)
    if near(entry):
        return (2, -ratio)
    if outcome(entry) != "held" or _ratio(entry) is None:
        return (4, 0.0)
    return (1, -ratio)


@dataclass(frozen=True)
class CheckLabels:
    """The labels of one or more findings files' variants (each list in the files' order)."""

    variants: list[Entry]
    violated: list[Entry] = field(default_factory=list)
    held: list[Entry] = field(default_factory=list)
    attained: list[Entry] = field(default_factory=list)
    near: list[Entry] = field(default_factory=list)
    below: list[Entry] = field(default_factory=list)  # held, neither attained nor within NEAR of 1
    undecided: list[Entry] = field(default_factory=list)
    not_measured: list[Entry] = field(default_factory=list)
    closest: Entry | None = None  # the largest ratio of ``below``: a closest call is never 1


def derive(entries: list[Entry]) -> CheckLabels:
    """The labels of the checked variants ``entries`` (findings.json's ``findings``)."""
    held = [e for e in entries if outcome(e) == "held"]
    below = [e for e in held if not attained(e) and not near(e) and _ratio(e) is not None]
    return CheckLabels(
        variants=list(entries), violated=[e for e in entries if outcome(e) == "violated"], held=held,
        attained=[e for e in held if attained(e)], near=[e for e in held if near(e)], below=below,
        undecided=[e for e in entries if outcome(e) == "undecided"],
        not_measured=[e for e in entries if outcome(e) == "not measured"],
        closest=max(below, key=lambda e: _ratio(e) or 0.0, default=None))


def name(entry: Entry) -> tuple[str, str]:
    """(statement, variant) of a variant's entry."""
    return str(entry.get("statement")), str(entry.get("variant"))


def paper_name(statement: str) -> str:
    """A statement folder as the paper names it: ``lemma13`` -> "Lemma 13", ``theorem9`` -> "Theorem 9"."""
    found = re.fullmatch(r"(lemma|theorem)(\d+)", statement)
    return f"{found[1].capitalize()} {found[2]}" if found else statement


# --- what is false ----------------------------------------------------------------------------------


def finding_sentence(entry: Entry) -> str:
    """A violated variant's finding in one sentence: its statement's ``FINDINGS`` (the paper's terms), or
    what the run shows."""
    from sltcheck.contract import optional
    from sltcheck.registry import STATEMENT_MODULES, load

    statement, variant = name(entry)
    if statement in STATEMENT_MODULES:
        sentence = dict(optional(load(statement), "FINDINGS")).get(variant)
        if sentence:
            return str(sentence)
    return (f"{paper_name(statement)} ({variant}) is false: measured exceeds the bound on an admissible "
            f"instance (measured / bound {scientific(entry.get('worst_ratio'), 6)}).")


def smallest_counterexample(entry: Entry) -> dict[str, Any] | None:
    """The fewest-token counterexample of a violated variant proved violated in interval arithmetic: the
    run's worst instance (its certificate in findings.json) or the one its statement records
    (``COUNTEREXAMPLES``, certified here); None if neither is certified."""
    from sltcheck.contract import optional
    from sltcheck.registry import STATEMENT_MODULES, load
    from sltcheck.repaired import certified_ratio

    statement, variant = name(entry)
    found = []
    if entry.get("instance") is not None and certificate(entry) == "violated":
        found.append({"instance": entry["instance"], "tokens": tokens_of(entry["instance"]), "where": "this run",
                      "ratio": entry.get("worst_ratio"), "enclosure": None, "backend": entry.get("certified_backend")})
    if statement in STATEMENT_MODULES:
        recorded = dict(optional(load(statement), "COUNTEREXAMPLES")).get(variant)
        if recorded is not None:
            from sltcheck.harness.serialise import decode_instance

            proof = certified_ratio(statement, variant, decode_instance(recorded))
            if proof["outcome"] == "violated" and proof["certified"]:
                low, high = proof["certified"]
                found.append({"instance": recorded, "tokens": tokens_of(recorded), "ratio": low,
                              "enclosure": [low, high],
                              "where": f"recorded in sltcheck/statements/{statement} (COUNTEREXAMPLES)",
                              "backend": proof["backend"]})
    return min(found, key=lambda c: c["tokens"] or 0, default=None)


# --- the theorems in their regime --------------------------------------------------------------------


def tokens_of(instance: Any) -> int | None:
    """The number of tokens (rows of X) of an instance as findings.json stores it."""
    X = instance.get("X") if isinstance(instance, dict) else None
    if isinstance(X, dict) and isinstance(X.get("shape"), list) and X["shape"]:
        return int(X["shape"][0])
    return None


def distinct_tokens(instance: Any) -> int | None:
    """The number of distinct tokens (rows of X) of a stored instance."""
    X = instance.get("X") if isinstance(instance, dict) else None
    if not (isinstance(X, dict) and isinstance(X.get("shape"), list) and X["shape"] and "hex" in X):
        return None
    rows, width = int(X["shape"][0]), len(X["hex"]) // max(int(X["shape"][0]), 1)
    return len({tuple(float.fromhex(h) for h in X["hex"][i * width:(i + 1) * width]) for i in range(rows)})


def _single_token_row(mask: Any) -> bool:
    """Whether a stored (T, T) 0/1 mask has a row with exactly one 1."""
    if not (isinstance(mask, dict) and "int" in mask and len(mask.get("shape") or []) == 2):
        return False
    size = int(mask["shape"][1])
    values = [int(v) for v in mask["int"]]
    return any(sum(values[i:i + size]) == 1 for i in range(0, len(values), size))


def degenerate_reason(statement: str, instance: Any) -> str | None:
    """Why a worst instance that reaches 1 says nothing of the theorem's tightness where it applies
    (None when the instance lies in the theorem's regime)."""
    count = tokens_of(instance)
    if count == 1:
        return ("one token: every attention row is the one-hot on it (the softmax is the identity), so the "
                "chain's softmax term vanishes and its value term is an algebraic identity")
    if count is None or not isinstance(instance, dict):
        return None
    if distinct_tokens(instance) == 1:
        return (f"{count} copies of one token: every attention row averages copies of it, so the softmax drops "
                "out and the chain's value term is an algebraic identity")
    if _single_token_row(instance.get("mask")):
        return ("the mask leaves a row a single token (a causal mask's first row): on that row the softmax is the "
                "identity, and the chain's bound, the same for every row, is reached there")
    from sltcheck import regime
    from sltcheck.harness.serialise import decode_instance

    try:
        star = regime.eps_star(statement, decode_instance(instance))
    except (KeyError, TypeError, ValueError, ZeroDivisionError, OverflowError, FloatingPointError):
        return None
    if not star < 1:
        return (f"errors outside the proof's allocation (eps* = {scientific(star)} >= 1): the theorem claims "
                "nothing there, and the chain's terms are each attained")
    return None


def theorem_regimes(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per theorem with a ``regime`` row: its worst instance in the regime (T >= 2, eps* < 1) and the
    default variant's overall worst beside it, with why the latter reaches 1 where it is degenerate."""
    rows = []
    for data in findings:
        defaults = {e.get("statement"): e for e in data.get("findings", []) if e.get("default")}
        for row in data.get("regime") or []:
            worst = defaults.get(row.get("statement"), {})
            rows.append({
                "statement": row.get("statement"), "variant": row.get("variant"), "paper": paper_name(
                    str(row.get("statement"))), "found": bool(row.get("found")), "condition": row.get("condition"),
                "ratio": row.get("ratio"), "tokens": row.get("tokens"), "eps_star": row.get("eps_star"),
                "distinct": distinct_tokens(row.get("instance")),
                "single_row": _single_token_row((row.get("instance") or {}).get("mask")),
                "label": _regime_label(row), "certified": row.get("certified_outcome"),
                "backend": row.get("certified_backend"), "instance": row.get("instance"),
                "worst_ratio": worst.get("worst_ratio"), "worst_tokens": tokens_of(worst.get("instance")),
                "degenerate": degenerate_reason(str(row.get("statement")), worst.get("instance"))
                if worst.get("instance") is not None else None})
    return rows


def _regime_label(row: dict[str, Any]) -> str:
    if not row.get("found"):
        return "no instance in the regime found"
    as_entry = {"worst_ratio": row.get("ratio"), "verdict": row.get("verdict"),
                "certified_outcome": row.get("certified_outcome")}
    if attained(as_entry):
        return "bound attained (certified)"
    if near(as_entry):
        return f"within {NEAR:g} of its bound (equality not proved)"
    return "below its bound"


# --- reproductions ----------------------------------------------------------------------------------

FIGURES = {"fig4": "Figure 4", "fig5": "Figure 5", "fig6": "Figure 6", "fig7": "Figure 7", "fig8": "Figure 8"}


def reproduction(summary: dict[str, Any]) -> dict[str, Any]:
    """A sweep's checks: ``checked``, ``violations``, ``vacuous`` (None where an older sltcheck did not
    record it: its bound at or above the trivial bound, so it cannot fail), ``can_fail`` and ``held``."""
    checked = int(summary.get("checked") or 0)
    vacuous = summary.get("vacuous")
    return {"figure": summary.get("figure"), "name": FIGURES.get(str(summary.get("figure")), summary.get("figure")),
            "checked": checked, "violations": len(summary.get("violations") or []),
            "vacuous": vacuous, "held": summary.get("held"),
            "can_fail": None if vacuous is None else checked - int(vacuous),
            "worst_ratio": summary.get("worst_ratio"), "source": summary.get("_source")}


def closing_line(glance: dict[str, Any]) -> str:
    """The last line of ``sltcheck report``: what held, what was proved attained, the reproductions'
    violations with the checks that could not fail counted beside them."""
    parts = [f"{glance['held']} of {glance['statements_checked']} statement variants held "
             f"({len(glance['attained'])} with the bound attained, proved; {len(glance['near'])} within "
             f"{NEAR:g} of it), {len(glance['violated'])} violated"]
    reproductions = glance.get("reproductions") or []
    if reproductions:
        text = f"{sum(int(r['violations']) for r in reproductions)} reproduction violations"
        vacuous = [f"{r['vacuous']} of {r['checked']} {r['name']} checks vacuous" for r in reproductions
                   if r.get("vacuous")]
        unknown = [str(r["name"]) for r in reproductions if r.get("vacuous") is None]
        if vacuous:
            text += "; " + ", ".join(vacuous) + " (bound at or above the trivial bound: they cannot fail)"
        if unknown:
            text += f"; vacuity not recorded for {', '.join(unknown)}"
        parts.append(text)
    return "; ".join(parts) + "."


# --- numbers ----------------------------------------------------------------------------------------


def scientific(value: Any, digits: int = 4) -> str:
    """A number in scientific notation at ``digits`` significant digits (plain below 1e4 and above
    1e-3); a decimal string beyond float64 (a bound of 1e400) keeps its exponent; "—" for none."""
    if value is None:
        return "—"
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isnan(number):
        return "—"
    beyond = (math.isinf(number) and "inf" not in text.lower()) or (number == 0 and re.search(r"[1-9].*e", text))
    if beyond:  # beyond float64's range: mantissa and exponent read from the text (never expanded)
        return _beyond_float(text, digits)
    if number == 0 or math.isinf(number) or 1e-3 <= abs(number) < 1e4:
        return f"{number:.{digits}g}"
    mantissa, exponent = f"{number:.{digits - 1}e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


# An exponent longer than this is itself written in scientific notation: 10^(3.0103e107).
EXPONENT_DIGITS = 6


def _beyond_float(text: str, digits: int) -> str:
    """A decimal string beyond float64's range ("1.03e+301029...") as mantissa and exponent."""
    found = re.fullmatch(r"\s*([-+]?\d*\.?\d*)[eE]([-+]?\d+)\s*", text)
    if not found:
        return text
    mantissa, exponent = float(found[1]), int(found[2])
    head = f"{mantissa:.{digits}g}"
    if len(str(abs(exponent))) <= EXPONENT_DIGITS:
        return f"{head}e{exponent}"
    return f"{head} × 10^({scientific(float(exponent), digits)})"


def ratio_text(value: Any, digits: int = 6) -> str:
    """A ratio measured / bound; within 1e-4 of 1 as its distance from 1 ("1 - 3.6e-15"), so a ratio
    below 1 never prints as 1."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value != 1:
        gap = float(value) - 1.0
        if abs(gap) < 1e-4:
            return f"1 {'+' if gap > 0 else '-'} {scientific(abs(gap), 2)}"
    return scientific(value, digits)


def telling_digits(a: Any, b: Any, least: int = 4, most: int = 20) -> int:
    """The fewest significant digits (at least ``least``) at which ``a`` and ``b`` print differently."""
    for digits in range(least, most + 1):
        if scientific(a, digits) != scientific(b, digits):
            return digits
    return most
