"""One source for every label (sltcheck.report.labels): the report, the findings page and the README's
headline name the same attained, near and closest-call sets; a label follows from its certificate, never
from a ratio that prints as 1; the theorems' regime; vacuous checks counted beside violations."""

from __future__ import annotations

import re
from html import unescape

import pytest

from sltcheck.report import findings_text, labels
from sltcheck.report import page as report
from sltcheck.report.display import summarise


def variant(statement: str, name: str, ratio: float | None, *, attained: int = 0, certified: str | None = None,
            violated: bool = False, default: bool = False) -> dict[str, object]:
    entry: dict[str, object] = {
        "statement": statement, "variant": name, "default": default, "examples": 50, "worst_ratio": ratio,
        "violated": violated, "violations": int(violated), "undecided": 0, "attained": attained, "filtered": 0,
        "verdict": None, "instance": None, "seed": 0, "examples_per_second": 10.0, "seconds": 1.0, "failure": "",
        "search": None, "ratios": []}
    if certified is not None:
        entry.update(certified=True, certified_outcome=certified, certified_backend="arb")
    return entry


# The mislabels of issue 43: ratio 1 (or 1 - 3e-15) with the certificate "holds" is not "attained".
FINDINGS = [
    variant("lemma2", "as-proven", 1.0, attained=29, certified="holds", default=True),  # equality proved
    variant("lemma4", "construction", 1.0, certified="holds", default=True),  # prints as 1, not proved
    variant("theorem9", "as-proven", 0.9999999999999966, certified="holds", default=True),
    variant("theorem9", "tight", 1.0, attained=114, certified="attained"),
    variant("theorem11", "sharp", 1.0, certified="attained"),  # the worst instance's certificate
    variant("lemma13", "as-proven", 0.520827, certified="holds", default=True),
    variant("lemma5", "as-stated", 0.25, certified="holds", default=True),
    variant("lemma13", "as-stated", 1.04165, violated=True, certified="violated"),
]
ATTAINED = {("lemma2", "as-proven"), ("theorem9", "tight"), ("theorem11", "sharp")}
NEAR = {("lemma4", "construction"), ("theorem9", "as-proven")}


def findings_file(entries: list[dict[str, object]]) -> dict[str, object]:
    return {"profile": "ci", "seed": 0, "findings": entries, "mutants": [], "power": [], "slack": [],
            "_source": "/tmp/run/findings.json"}


def test_attained_only_where_equality_is_proved():
    derived = labels.derive(FINDINGS)
    assert {labels.name(e) for e in derived.attained} == ATTAINED
    assert {labels.name(e) for e in derived.near} == NEAR
    assert labels.name(derived.closest) == ("lemma13", "as-proven")
    assert labels.verdict(FINDINGS[2]) == "held, within 1e-09 of its bound"
    assert labels.verdict(FINDINGS[0]) == "held, bound attained"


def test_a_closest_call_is_never_1():
    derived = labels.derive([variant("theorem9", "as-proven", 1.0), variant("lemma8", "as-stated", 1 - 1e-12)])
    assert derived.closest is None
    assert labels.derive([*FINDINGS[:2], variant("lemma8", "as-stated", 0.5)]).closest["statement"] == "lemma8"


def _names_in(text: str, statements: set[tuple[str, str]]) -> set[tuple[str, str]]:
    return {(s, v) for s, v in statements if re.search(rf"{s}\W+{v}\b", text)}


def test_every_writer_names_the_same_attained_near_and_closest_sets():
    """The report's glance and page, the findings page and the README headline, from the same findings."""
    data = findings_file(FINDINGS)
    content = report.build({"findings": [data], "synthetic": [], "lm": []})
    glance = content["glance"]
    assert {tuple(n[:-1].split(" [")) for n in glance["attained"]} == ATTAINED
    assert {tuple(n[:-1].split(" [")) for n in glance["near"]} == NEAR
    assert (glance["tightest"]["statement"], glance["tightest"]["variant"]) == ("lemma13", "as-proven")

    page = findings_text.render(data)
    attained_line = next(line for line in page.splitlines() if line.startswith("Bounds attained"))
    near_line = next(line for line in page.splitlines() if line.startswith("Within 1e-09"))
    everything = {labels.name(e) for e in FINDINGS}
    assert _names_in(attained_line, everything) == ATTAINED
    assert _names_in(near_line, everything) == NEAR
    rows = {(m[0], m[1]): m[2] for m in re.findall(r"^\| (\w+) \| ([\w-]+)(?: \*)? \| [^|]+ \| ([^|]+) \|", page, re.M)}
    assert {k for k, v in rows.items() if v.strip() == "held, bound attained"} == ATTAINED

    headline = findings_text.headline(data)
    assert f"{len(ATTAINED)} reach their bound exactly" in headline
    assert f"{len(NEAR)} come within 1e-09 of it" in headline
    assert "closest call is lemma13 `as-proven`" in headline

    html = " ".join(unescape(re.sub(r"<[^>]+>", " ", report.render(content))).split())
    lead = html[:html.index("Cannot fail")]
    proved = lead[lead.index("Bound attained"):lead.index("Within 1e-09")]
    assert _names_in(proved, everything) == ATTAINED
    assert html.count("held, bound attained") == 2 * len(ATTAINED)  # the overview and each statement card


@pytest.mark.theorem9
def test_a_one_token_maximum_is_explained_and_the_regime_row_shown_first():
    one_token = {"X": {"shape": [1, 1], "dtype": "float64", "hex": ["0x1.0p+0"]}}
    assert "one token" in labels.degenerate_reason("theorem9", one_token)
    worst = {**variant("theorem9", "as-proven", 0.9999999999999966, default=True), "instance": one_token}
    regime_row = {"statement": "theorem9", "variant": "as-proven", "found": True, "condition": "T >= 2",
                  "ratio": 0.9999999999999964, "tokens": 2, "eps_star": 3.6e-6,
                  "verdict": {"ratio": 0.9999999999999964, "attained": False}, "certified_outcome": "holds",
                  "instance": {"X": {"shape": [2, 1], "dtype": "float64", "hex": ["-0x1.0p+1", "0x1.0p+1"]}}}
    data = {**findings_file([worst]), "regime": [regime_row]}
    (row,) = labels.theorem_regimes([data])
    assert row["label"] == "within 1e-09 of its bound (equality not proved)"
    assert "softmax is the identity" in row["degenerate"]
    html = " ".join(unescape(re.sub(r"<[^>]+>", " ", report.render(report.build(
        {"findings": [data], "synthetic": [], "lm": []})))).split())
    regime_at = html.index("The theorems in their own regime")
    assert regime_at < html.index("Contents:")
    assert "1 - 3.6e-15 : within 1e-09 of its bound" in html[regime_at:]
    assert "T = 2 (2 distinct), eps* = 3.6e-6" in html[regime_at:]
    assert "| Theorem 9 | as-proven | 1 - 3.6e-15 (T = 2, 2 distinct; eps* = 3.6e-6) |" in findings_text.render(data)
    copies = {"X": {"shape": [5, 1], "dtype": "float64", "hex": ["0x1.0p+0"] * 5}}
    assert "5 copies of one token" in labels.degenerate_reason("theorem9", copies)


def test_the_closing_line_counts_vacuous_checks_beside_violations():
    glance = {"held": 24, "statements_checked": 25, "attained": ["a"] * 7, "near": ["b"] * 11, "violated": ["c"],
              "reproductions": [labels.reproduction({"figure": "fig6", "checked": 27, "violations": [], "vacuous": 25}),
                                labels.reproduction({"figure": "fig4", "checked": 30, "violations": [], "vacuous": 11}),
                                labels.reproduction({"figure": "fig5", "checked": 6, "violations": []})]}
    line = labels.closing_line(glance)
    assert "0 reproduction violations; 25 of 27 Figure 6 checks vacuous, 11 of 30 Figure 4 checks vacuous" in line
    assert "vacuity not recorded for Figure 5" in line
    assert "7 with the bound attained" in line


@pytest.mark.parametrize(("value", "digits", "shown"), [
    ("0.00002209470932704822922", 4, "2.209e-5"), (0.5, 4, "0.5"), ("1e400", 4, "1e400"), ("1.5e-400", 4, "1.5e-400"),
    (123456.0, 3, "1.23e5"), (None, 4, "—"), ("inf", 4, "inf"),
    ("1.02966e+30102999566398119521373889472449302676818988146210854131042746112710818", 3, "1.03 × 10^(3.01e70)"),
])
def test_numbers_in_scientific_notation_at_the_digits_that_matter(value, digits, shown):
    assert labels.scientific(value, digits) == shown


def test_measured_and_bound_print_at_the_digits_that_tell_them_apart():
    assert labels.telling_digits("1.6029295856733681562e-7", "1.5388358915586424622e-7") == 4
    assert labels.telling_digits(1.00000012, 1.00000011) == 9


def test_a_long_instance_is_summarised_as_distinct_tokens_with_their_counts():
    tokens = {"shape": [49, 1], "dtype": "float64", "hex": [(0.99999).hex()] * 9 + [(-0.99999).hex()] * 40}
    assert summarise(tokens) == "2 distinct of 49: [0.99999] × 9, [-0.99999] × 40"
    assert summarise({"shape": [3, 3], "dtype": "int8", "int": [1, 0, 0, 1, 1, 0, 1, 1, 1]}).startswith("causal")
    assert summarise({"shape": [2, 2], "dtype": "int8", "int": [1] * 4}).startswith("full")


@pytest.mark.theorem9
def test_the_regime_search_keeps_only_instances_the_theorem_speaks_about():
    """The search's constraint (the bound times PENALTY outside the regime) and its membership test:
    one token or errors beyond the allocation are outside; a tiny search returns a row inside."""
    import numpy as np

    from sltcheck import regime
    from sltcheck.harness.budget import Budget
    from sltcheck.registry import load

    module = load("theorem9")
    found = regime.worst_in_regime("theorem9", Budget(shapes=1, starts=4, climbs=1, climb_evaluations=30,
                                                      polish_evaluations=20), 0)
    assert found["found"]
    assert found["tokens"] >= 2
    assert found["eps_star"] < 1
    assert 0 < found["ratio"] <= 1
    from sltcheck.harness.serialise import decode_instance

    instance = decode_instance(found["instance"])
    assert regime.inside("theorem9", instance)
    one = {**instance, "X": np.asarray(instance["X"])[:1], "mask": np.ones((1, 1), dtype=np.int8)}
    assert not regime.inside("theorem9", one)
    far = {**instance, "S_V": np.asarray(instance["S_V"]) + 10.0}  # errors far beyond the allocation
    assert not regime.inside("theorem9", far)
    constrained = regime.regime_bound("theorem9", "as-proven")
    bound = module.VARIANTS["as-proven"]
    assert constrained(instance, None) == bound(instance, None)
    assert constrained(far, None) == regime.PENALTY * bound(far, None)
