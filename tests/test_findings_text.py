"""The findings page (and the README's headline lines) are written from a findings.json by ``sltcheck findings``."""

import json
from pathlib import Path

import pytest

from sltcheck.cli import main
from sltcheck.report import findings_text


@pytest.fixture(scope="module")
def lemma8_findings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("check")
    assert main(["check", "--only", "lemma8", "--profile", "ci", "--out", str(out), "--no-mutants",
                 "--power"]) == 0
    return out / "findings.json"


@pytest.mark.lemma8
def test_check_writes_the_search_and_its_power(lemma8_findings: Path) -> None:
    data = json.loads(lemma8_findings.read_text())
    (entry,) = data["findings"]
    assert entry["search"]["evaluations"] > 0
    assert entry["search"]["shape"]["d1"] in (1, 2)
    assert entry["worst_ratio"] == pytest.approx(0.5, abs=1e-9)  # the supremum 2 tanh(eps/2) / (e^(2 eps) - 1) -> 1/2
    assert data["power"]
    assert all(row["statement"] == "lemma8" and row["passed"] for row in data["power"])


@pytest.mark.lemma8
def test_the_readme_section_is_replaced_between_its_markers(lemma8_findings: Path, tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{findings_text.START}\nold text\n{findings_text.END}\nafter\n")
    assert main(["findings", "--in", str(lemma8_findings), "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith("before\n")
    assert text.endswith("after\n")
    assert "old text" not in text
    assert "| lemma8 | as-stated * |" in text
    assert "No variant was violated" in text


@pytest.mark.lemma8
def test_the_headline_lines_are_replaced_between_their_markers(lemma8_findings: Path, tmp_path: Path) -> None:
    readme, page = tmp_path / "README.md", tmp_path / "findings.md"
    stale = f"intro\n{findings_text.HEADLINE_START}\nstale lines\n{findings_text.HEADLINE_END}\nquick start\n"
    readme.write_text(stale)
    page.write_text(f"{findings_text.START}\n{findings_text.END}\n")
    assert main(["findings", "--in", str(lemma8_findings), "--readme", str(page), "--headline", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith("intro\n")
    assert text.endswith("quick start\n")
    assert "stale lines" not in text
    assert "- 1 of 1 variants held" in text
    assert "the closest call is lemma8 `as-stated` at 0.5" in text
    assert "[all findings](docs/results/findings.md)" in text
    assert "| lemma8 | as-stated * |" in page.read_text()


@pytest.mark.lemma8
@pytest.mark.lemma13
def test_the_headline_names_each_violation_and_each_repaired_constant() -> None:
    data = {"profile": "dev", "seed": 0, "findings": [
        {"statement": "lemma8", "variant": "as-stated", "violated": False, "worst_ratio": 0.5, "examples": 50},
        {"statement": "lemma13", "variant": "as-stated", "violated": True, "worst_ratio": 1.0416,
         "certified_outcome": "violated", "certified_backend": "arb"},
    ], "repaired_constants": [{"statement": "lemma13", "variant": "as-stated", "constant": 25 / 24, "exact": "25/24",
                               "upper": {"kind": "proof", "where": "sltcheck/statements/lemma13/worst_case.py"}}],
        "mutants": [{"statement": "lemma8", "mutant": "halved", "refuted": True}]}
    text = findings_text.headline(data)
    assert "- **lemma13 `as-stated` is false**: measured / bound 1.0416" in text
    assert "(interval arithmetic: violated (arb))" in text
    assert "certified on an instance): lemma13 `as-stated` 25/24." in text
    assert "- 1 of 1 known-false mutants refuted" in text


@pytest.mark.lemma8
@pytest.mark.lemma13
def test_a_violation_leads_with_its_replay_command() -> None:
    data = {"profile": "ci", "seed": 0, "findings": [
        {"statement": "lemma8", "variant": "as-stated", "violated": False, "worst_ratio": 0.5, "examples": 50},
        {"statement": "lemma13", "variant": "as-stated", "violated": True, "worst_ratio": 1.02,
         "verdict": {"measured": "6.5e-5", "bound": "6.4e-5", "dps": 40}, "search": {"certified": "violated"}},
    ], "mutants": [{"statement": "lemma8", "mutant": "halved", "refuted": True}]}
    text = findings_text.render(data)
    assert text.index("lemma13 `as-stated` is violated") < text.index("| lemma8 | as-stated |") < text.index("Mutants")
    assert "Replay: `sltcheck check --replay findings.json --only lemma13`" in text
    assert "interval arithmetic: violated" in text


@pytest.mark.lemma8
@pytest.mark.lemma13
def test_a_ratio_stored_as_a_string_is_shown_as_stored() -> None:
    """A zero bound gives the ratio "inf" (or "nan"): strict JSON stores the string, not a float."""
    data = {"profile": "ci", "seed": 0, "findings": [
        {"statement": "lemma13", "variant": "as-stated", "violated": True, "worst_ratio": "inf",
         "verdict": {"measured": "1e-9", "bound": "0", "dps": 40}},
        {"statement": "lemma8", "variant": "as-stated", "violated": False, "worst_ratio": "nan", "examples": 50},
    ]}
    text = findings_text.render(data)
    assert "(ratio inf, decided at 40 digits" in text
    assert "| lemma8 |" not in text
    assert "Not measured (not counted as held): lemma8 `as-stated`." in text


@pytest.mark.lemma8
@pytest.mark.lemma12
def test_the_slack_table_shows_the_supremum_and_how_it_is_known_apart() -> None:
    data = {"findings": [], "slack": [
        {"statement": "lemma8", "params": {"d1": 1}, "kind": "closed-form", "supremum": 0.5, "lower": None,
         "bound": 1.0, "slack": 2.0, "slack_range": None},
        {"statement": "lemma12", "params": {"H": 1}, "kind": "bracket", "supremum": 0.3, "lower": 0.2,
         "bound": 1.0, "slack": 3.33, "slack_range": [3.33, 5.0]},
    ]}
    text = findings_text.render(data)
    assert "| statement | parameters | supremum | known as | slack |" in text
    assert "| lemma8 | d1 = 1 | 0.5 | closed-form | 2 |" in text
    assert "| lemma12 | H = 1 | 0.2 … 0.3 | bracket | 3.33 … 5 |" in text


def test_a_readme_without_markers_is_a_clear_error(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n")
    with pytest.raises(ValueError, match="readme must contain the markers"):
        findings_text.rewrite(readme, "x\n")


@pytest.mark.lemma2
def test_each_variant_shows_its_certified_verdict_and_backend(lemma8_findings: Path) -> None:
    """check certifies the worst instance of every variant with an enclosure; the text says how."""
    data = json.loads(lemma8_findings.read_text())
    (entry,) = data["findings"]
    assert entry["certified_outcome"] in ("holds", "undecided")
    assert entry["certified_backend"] in ("arb", "mpmath")
    assert entry["interval"]["backend"] == entry["certified_backend"]
    text = findings_text.render(data)
    assert f"| {entry['certified_outcome']} ({entry['certified_backend']}) |" in text
    violated = {"statement": "lemma2", "variant": "as-proven", "violated": True, "worst_ratio": 1.5,
                "certified_outcome": "violated", "certified_backend": "mpmath"}
    assert "interval arithmetic: violated (mpmath)" in findings_text.render({"findings": [violated]})


def test_the_page_states_its_command_and_date_once_and_nothing_of_the_machine() -> None:
    data = {"profile": "dev", "seed": 0, "findings": [
        {"statement": "lemma8", "variant": "as-stated", "violated": False, "worst_ratio": 0.5, "examples": 300}]}
    text = findings_text.render(data, "findings.json", date="2026-11-27")
    first = text.splitlines()[0]
    assert first == ("Generated on 2026-11-27 by `sltcheck findings` from the `findings.json` of "
                     "`sltcheck check --profile dev --seed 0`.")
    assert text.count("2026-11-27") == 1
    assert text.count("sltcheck check --profile") == 1
    assert "load" not in text.lower()
    assert findings_text.render(data).splitlines()[0].startswith("Generated by `sltcheck findings`")


@pytest.mark.theorem14
def test_a_bracketed_repaired_constant_reads_as_its_interval_and_scope() -> None:
    row = {"statement": "theorem14", "variant": "lemma13-as-stated", "constant": None, "bracket": [1.0, 34 / 33],
           "exact": "[1, 34/33]", "scope": "B <= 2 blocks (open for B >= 3)",
           "upper": {"kind": "proof", "where": "sltcheck/statements/theorem14/worst_case.py"}}
    assert findings_text.repair_constant(row) == "in [1, 34/33] = [1, 1.030303] for B <= 2 blocks (open for B >= 3)"
    text = findings_text.headline({"profile": "dev", "seed": 0, "findings": [], "repaired_constants": [row]})
    assert "theorem14 `lemma13-as-stated` in \\[1, 34/33\\] = [1, 1.030303] for B \\<= 2 blocks" in text
    assert "is open for" not in text


@pytest.mark.parametrize(("row", "fragment"), [
    ({"constant": 1.0, "bracket": [1.0, 2.0], "upper": "proof"}, "a constant or a bracket, not both"),
    ({"constant": None, "bracket": [1.0, 2.0], "upper": "open"}, "is known when its upper end is"),
    ({"constant": None, "bracket": [2.0, 1.0], "upper": "proof"}, "0 < low <= high"),
])
def test_a_repaired_constant_declared_wrongly_is_refused(monkeypatch: pytest.MonkeyPatch, row: dict,
                                                         fragment: str) -> None:
    from sltcheck import repaired
    from sltcheck.statements import theorem14

    monkeypatch.setattr(theorem14, "REPAIRED_CONSTANTS", [{"variant": "lemma13-as-stated", **row}])
    with pytest.raises(ValueError, match=fragment):
        repaired.declared("theorem14")
