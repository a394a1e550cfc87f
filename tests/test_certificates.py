"""Every stored result is a certificate its readers check whole (issue 42's probe, kept as tests).

The digest has no secret, so each edit here is resealed (:func:`tamper`): only what the readers
re-derive can catch it. Each case must be caught with a line naming the file and what differs:
``check --replay`` (units against records, counts against lists, derived numbers re-derived),
``findings``/``report``/a resumed ``check`` (the same checks without the evaluations), a resumed
``certify`` (a NULL digest), the sweeps' readers and ``repro verify`` (rows sealed, the summary
re-derived from them, the sources recomputed)."""

from __future__ import annotations

import copy
import json
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sltcheck
from sltcheck.cli import main
from sltcheck.errors import StoredResultError
from sltcheck.jsonfiles import read_json, seal, write_json_atomic

Edit = Callable[[dict[str, Any]], Any]


def tamper(source: Path, where: Path, edit: Edit, reseal: bool = True) -> Path:
    """``source`` (a JSON file) edited by ``edit`` and written to ``where``, sealed again unless ``reseal`` is False."""
    data = copy.deepcopy(read_json(source))
    edit(data)
    where.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(where, seal(data) if reseal else data)
    return where


def differs(capsys: pytest.CaptureFixture[str]) -> list[str]:
    captured = capsys.readouterr()
    return [line for line in (captured.out + captured.err).splitlines() if line.startswith("DIFFERS")]


@pytest.fixture(scope="module")
def lemma8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete check of Lemma 8 with its mutants (no search: ~10 s): a finding with its interval
    verdict, 4 mutants, a repaired constant, slack rows."""
    out = tmp_path_factory.mktemp("lemma8") / "run"
    assert main(["check", "-q", "--only", "lemma8", "--profile", "ci", "--no-search", "--out", str(out)]) == 0
    return out / "findings.json"


def _forged_family(data: dict[str, Any]) -> None:
    from sltcheck.certify import families

    family = families()["lemma8/d1-T3/as-stated"]
    data["certified_over_family"] = {"schema_version": 1, "backend": "arb", "families": [{
        "key": family.key, "statement": family.statement, "family": family.name, "variant": family.variant,
        "expected": family.expected, "known_supremum": family.known_supremum, "verdict": "counterexample",
        "sup_lower": 3.5, "sup_upper": 3.6, "proven_fraction": None,
        "counterexample": {"statement": "lemma8", "variant": "as-stated", "family": family.key,
                           "certified_ratio": [3.5, 3.6], "instance": data["findings"][0]["instance"]}}]}


CASES: dict[str, tuple[Edit, str]] = {
    "a finding deleted": (lambda d: d["findings"].pop(0), "0 records of lemma8/as-stated, which is done"),
    "a record duplicated": (lambda d: d["findings"].append(copy.deepcopy(d["findings"][0])), "2 records of lemma8"),
    "a mutant deleted": (lambda d: d["mutants"].pop(1), "mutants: lemma8's rows"),
    "every mutant deleted": (lambda d: d.update(mutants=[]), "mutants: lemma8's rows []"),
    "complete without its units": (lambda d: d["done"].pop(), "complete: recorded True"),
    "a constant below its certified end": (lambda d: d["repaired_constants"][0].update(constant=0.1),
                                           "constant: 0.1 lies below its own certified lower end"),
    "a slack row's supremum": (lambda d: d["slack"][0].update(supremum=0.5), "slack[0] lemma8 supremum: recorded 0.5"),
    "a held variant certified violated": (lambda d: d["findings"][0].update(certified_outcome="violated"),
                                          "certified_outcome: 'violated'"),
    "a family turned into a counterexample": (_forged_family, "counterexample"),
    "a forged measured interval": (lambda d: d["findings"][0]["interval"].update(measured_interval=["1.0", "1.1"]),
                                   "interval.measured_interval: recorded ['1.0', '1.1']"),
    "a false decimal repr": (lambda d: d["findings"][0]["instance"]["alpha"].update(repr="0.5"),
                             "findings[0].instance.alpha: repr '0.5' is not the float"),
    "examples beside the ratios": (lambda d: d["findings"][0].update(examples=5000),
                                   "examples: 5000 examples recorded beside 50 ratios"),
    "digits below the harness's": (lambda d: d["findings"][0]["verdict"].update(dps=5), "verdict.dps: 5 digits"),
    "a repaired constant's proof moved": (lambda d: d["repaired_constants"][0]["upper"].update(where="`x`.py"),
                                          "upper.where: recorded '`x`.py'"),
}


@pytest.mark.lemma8
@pytest.mark.parametrize("case", CASES)
def test_replay_catches_every_edit_of_a_resealed_findings_file(lemma8: Path, tmp_path: Path, case: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    edit, fragment = CASES[case]
    path = tamper(lemma8, tmp_path / "edited" / "findings.json", edit)
    assert main(["check", "-q", "--replay", str(path), "--dps", "30"]) == 1
    lines = differs(capsys)
    assert any(fragment in line and str(path) in line for line in lines), lines
    assert not sltcheck.replay(path, dps=30).ok
    # the readers that do not evaluate refuse it too, with one line naming the file
    if case not in ("a forged measured interval",):
        assert main(["findings", "--in", str(path)]) == 2
        assert str(path) in capsys.readouterr().err


@pytest.mark.lemma8
@pytest.mark.parametrize(("where", "edit"), [
    ("findings[0].instance", lambda d: d["findings"][0]["instance"].pop("alpha")),
    ("mutants[0]", lambda d: d["mutants"][0]["counterexample"].pop("alpha")),
])
def test_replaying_an_instance_without_a_field_is_one_line(lemma8: Path, tmp_path: Path, where: str, edit: Edit,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 42: an instance without ``alpha`` ended the replay in a KeyError traceback."""
    path = tamper(lemma8, tmp_path / "edited" / "findings.json", edit)
    assert main(["check", "-q", "--replay", str(path), "--dps", "30"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("sltcheck: error")]
    assert len(lines) == 1, lines
    assert f"{where} has no field 'alpha', which lemma8" in lines[0], lines
    assert str(path) in lines[0], lines
    with pytest.raises(StoredResultError, match=f"{re.escape(where)} has no field 'alpha'"):
        sltcheck.replay(path, dps=30)


@pytest.mark.lemma8
def test_an_untouched_findings_file_replays_as_recorded(lemma8: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "-q", "--replay", str(lemma8), "--dps", "30"]) == 0
    assert not differs(capsys)
    replayed = sltcheck.replay(lemma8, dps=30)
    assert replayed.ok
    assert replayed.status == 0
    assert not replayed.differences


@pytest.mark.lemma8
def test_an_unsealed_findings_file_is_named_and_refused_unless_allowed(lemma8: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tamper(lemma8, tmp_path / "unsealed" / "findings.json", lambda d: d.pop("digest"), reseal=False)
    assert main(["check", "-q", "--replay", str(path), "--dps", "30"]) == 1
    output = "".join(capsys.readouterr())
    assert f"{path} carries no digest" in output
    assert main(["check", "-q", "--replay", str(path), "--dps", "30", "--allow-unsealed"]) == 0
    assert f"{path} carries no digest" in "".join(capsys.readouterr())
    assert not sltcheck.replay(path, dps=30).ok
    assert sltcheck.replay(path, dps=30, allow_unsealed=True).ok
    for argv in (["findings", "--in", str(path)], ["report", "--in", str(path), "--out", str(tmp_path / "r.html")]):
        assert main(argv) == 2
        assert "carries no digest" in capsys.readouterr().err


@pytest.mark.lemma8
def test_a_resumed_check_refuses_a_resealed_file_with_a_unit_without_its_record(lemma8: Path, tmp_path: Path,
                                                                                capsys: pytest.CaptureFixture[str]
                                                                                ) -> None:
    out = tmp_path / "run"
    tamper(lemma8, out / "findings.json", lambda d: d["mutants"].pop())
    assert main(["check", "-q", "--only", "lemma8", "--profile", "ci", "--no-search", "--out", str(out)]) == 2
    assert "mutants: lemma8's rows" in capsys.readouterr().err


@pytest.mark.lemma13
def test_replay_ok_means_as_recorded_a_recorded_violation_included(tmp_path: Path) -> None:
    """Issue 43: ``replay(path).ok`` is "every recorded instance and number replays as recorded"; a
    recorded violation that replays as one is as recorded (``status`` 1: it needs attention)."""
    from sltcheck.certify.session import replay_file
    from sltcheck.harness.serialise import decode_instance
    from sltcheck.repaired import certified_ratio
    from sltcheck.statements.lemma13 import COUNTEREXAMPLES

    instance = COUNTEREXAMPLES["as-stated"]
    ratio = certified_ratio("lemma13", "as-stated", decode_instance(instance))["certified"]
    counterexample = {"statement": "lemma13", "variant": "as-stated", "family": "pinned", "certified_ratio": ratio,
                      "instance": instance}
    path = tmp_path / "counterexamples.json"
    write_json_atomic(path, seal(replay_file([counterexample])))
    replayed = sltcheck.replay(path, dps=30)
    assert replayed.ok, replayed.differences
    assert replayed.status == 1
    forged = tamper(path, tmp_path / "forged" / "counterexamples.json",
                    lambda d: d["findings"][0].update(violated=False, violations=0))
    assert not sltcheck.replay(forged, dps=30).ok


@pytest.mark.parametrize(("call", "fragment"), [
    (lambda: sltcheck.check("ci"), "config: give a CheckConfig"),
    (lambda: sltcheck.check(out=123), "out: must name a directory"),
    (lambda: sltcheck.check(nosuch=1), "options: 'nosuch' is not an option of check"),
    (lambda: sltcheck.replay(None), "path: give the path of a findings.json"),
    (lambda: sltcheck.replay(123), "path: give the path of a findings.json"),
    (lambda: sltcheck.replay("findings.json", only=["nosuch"]), "only: 'nosuch' is not a statement"),
    (lambda: sltcheck.replay("findings.json", only="lemma8"), "only: give a list or tuple"),
])
def test_the_api_refuses_bad_arguments_in_one_value_error(call: Callable[[], Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        call()


def test_a_figure_refuses_an_unknown_option() -> None:
    pytest.importorskip("torch")
    from sltcheck import repro

    with pytest.raises(ValueError, match="nosuch: not an option of a synthetic sweep"):
        repro.figure("fig6", nosuch=1)


@pytest.mark.lemma8
def test_a_resumed_proof_refuses_a_store_whose_digest_was_nulled(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 42: open boxes deleted, closed_upper lowered and the digest set to NULL was resumed as
    "held": a NULL digest was read as a store from before digests."""
    out = tmp_path / "certify"
    argv = ["certify", "--only", "lemma8", "--family", "d1-T3", "--no-search", "--quiet", "--out", str(out)]
    assert main([*argv, "--rounds", "2"]) == 0
    with sqlite3.connect(out / "boxes.sqlite") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
        db.execute("UPDATE family SET digest = NULL")
    assert main([*argv, "--rounds", "4"]) == 2
    line = capsys.readouterr().err
    assert "has no digest" in line
    assert str(out / "boxes.sqlite") in line


# --- the sweeps -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("sweep") / "fig6"
    assert main(["repro", "fig6", "--out", str(out), "--sources", "2", "--widths", "8,16", "--no-progress"]) == 0
    return out


def _copy(sweep: Path, tmp_path: Path) -> Path:
    shutil.copytree(sweep, tmp_path / "run")
    return tmp_path / "run"


def _edit_row(run: Path, edit: Edit, reseal: bool) -> str:
    from sltcheck.repro.store import sealed_row

    with sqlite3.connect(run / "results.sqlite") as db:
        key, text, fingerprint = db.execute("SELECT key, record, fingerprint FROM results ORDER BY key").fetchone()
        row = json.loads(text)
        edit(row["record"])
        stored = sealed_row(key, fingerprint, row["record"]) if reseal else row
        db.execute("UPDATE results SET record = ? WHERE key = ?", (json.dumps(stored), key))
    return str(key)


def _resume(run: Path) -> int:
    return main(["repro", "fig6", "--out", str(run), "--sources", "2", "--widths", "8,16", "--no-progress"])


def _tripled(record: dict[str, Any]) -> None:
    record["records"][0]["error"] *= 3


@pytest.mark.parametrize(("edit", "fragment"), [
    (_tripled, "was changed after sltcheck wrote it"),
    (lambda r: r.update(records=[]), "holds no records"),
    (lambda r: r["records"][0].pop("blocks"), "has a record without 'blocks'"),
])
def test_a_sweep_refuses_a_row_edited_by_hand(sweep: Path, tmp_path: Path, edit: Edit, fragment: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(sweep, tmp_path)
    key = _edit_row(run, edit, reseal=fragment != "was changed after sltcheck wrote it")
    for argv in (["repro", "readme", "--in", str(run)], ["report", "--in", str(run), "--out", str(tmp_path / "r.html")],
                 ["repro", "verify", str(run), "--quiet"]):
        assert main(argv) == 2
        line = capsys.readouterr().err
        assert fragment in line, line
        assert key in line
        assert str(run / "results.sqlite") in line
    assert _resume(run) == 2
    assert fragment in capsys.readouterr().err


def test_repro_verify_recomputes_a_resealed_row(sweep: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repro", "verify", str(sweep), "--quiet", "--sample", "2"]) == 0
    capsys.readouterr()
    run = _copy(sweep, tmp_path)
    key = _edit_row(run, _tripled, reseal=True)
    assert main(["repro", "verify", str(run), "--quiet"]) == 1
    assert any(key in line and ".error: recorded" in line for line in differs(capsys))


@pytest.mark.parametrize(("edit", "fragment"), [
    (lambda s: s["fits"]["B=1"].update(gamma=0.5), "fits.B=1.gamma: recorded 0.5, derived"),
    (lambda s: s.update(violations=[{"forged": True}]), "violations"),
    (lambda s: s.update(schema_version=99), "has schema_version 99"),
])
def test_every_reader_of_a_summary_re_derives_it(sweep: Path, tmp_path: Path, edit: Edit, fragment: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(sweep, tmp_path)
    tamper(sweep / "summary.json", run / "summary.json", edit)
    report = ["report", "--in", str(run), "--out", str(tmp_path / "r.html")]
    for argv in (["repro", "readme", "--in", str(run)], report):
        assert main(argv) == 2
        line = capsys.readouterr().err
        assert fragment in line, line
        assert str(run / "summary.json") in line


def test_an_unsealed_summary_is_refused(sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(sweep, tmp_path)
    tamper(sweep / "summary.json", run / "summary.json", lambda s: s.pop("digest"), reseal=False)
    assert main(["repro", "readme", "--in", str(run)]) == 2
    assert "carries no digest" in capsys.readouterr().err


def test_a_readings_conclusion_is_re_derived(tmp_path: Path) -> None:
    from sltcheck.repro.readings_text import conclusion
    from sltcheck.repro.verify import readings_differences

    document = {"figure": "fig6", "complete": True, "readings": [], "target": [], "runs_done": 0, "runs_planned": 0}
    document["conclusion"] = conclusion(document)
    assert readings_differences(document, tmp_path / "readings.json") == []
    forged = {**document, "conclusion": "Every reading confirms the paper."}
    assert "conclusion: not the conclusion its own table gives" in readings_differences(
        forged, tmp_path / "readings.json")[0]


# --- Markdown output: what the file says shown as text ---------------------------------------------------

SVG = "<svg onload=alert(1)>"


def _forged_strings(data: dict[str, Any]) -> None:
    """Every free string ``sltcheck findings`` shows set to markup; the file still agrees with itself."""
    data["profile"] = f"`{SVG}`"
    data["mutants"][0].update(refuted=False, why=f"{SVG} *em* [link](http://x) `code` | $x$ &lt;b&gt;\n# heading")
    data["findings"][0]["certified_backend"] = SVG
    data["findings"][0]["verdict"]["measured"] = SVG
    data["slack"][0].update(kind=f"{SVG}|", params={SVG: SVG})
    data["repaired_constants"][0]["lower"]["backend"] = SVG


def _html(markdown: str) -> str:
    """The page as the docs site renders it (MyST: raw HTML passed through, $...$ as math)."""
    pytest.importorskip("myst_parser")
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    config = MdParserConfig(enable_extensions={"colon_fence", "dollarmath", "deflist"})  # docs/conf.py's
    return str(create_md_parser(config, RendererHTML).render(markdown))


@pytest.mark.lemma8
def test_findings_shows_a_forged_string_as_text_never_as_markup(lemma8: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 42: ``sltcheck findings`` wrote forged string fields raw into the Markdown the docs site
    renders as HTML (MyST passes raw HTML through)."""
    from sltcheck.report import findings_text

    path = tamper(lemma8, tmp_path / "forged" / "findings.json", _forged_strings)
    assert main(["findings", "--in", str(path)]) == 0  # the forged strings are no number any check derives
    page = capsys.readouterr().out
    headline = findings_text.headline(read_json(path))
    for text in (page, headline):
        assert SVG not in text
    assert page.count(SVG.replace("<", "\\<").replace(">", "\\>")) >= 6
    html = _html(page)
    for markup in ("<svg", "<em>", "<a ", "<h1", "math"):
        assert markup not in html
        assert markup not in _html(headline).replace('<a href="docs/results/findings.md">', "")
    assert "&lt;svg onload=alert(1)&gt; *em* [link](http://x) `code` | $x$ &amp;lt;b&amp;gt; # heading" in html
    assert "<td>&lt;svg onload=alert(1)&gt;|</td>" in html  # one cell: a forged '|' splits none


@pytest.mark.parametrize("text", [SVG, "*a* _b_ **c** `d` [e](f) ![g](h) <i> &amp; | $j$ {k}`l` ~m~ \\n #o",
                                  "line\nbreak\r\n| cell", "eps_max as-stated 0x1.0624dd2f1a9fcp-9 25/24 T = 2"])
def test_an_escaped_string_renders_as_exactly_itself(text: str) -> None:
    from sltcheck.markdown_escape import escape

    html = _html(f"before {escape(text)} after")
    import html as entities

    shown = entities.unescape(html.removeprefix("<p>").removesuffix("</p>\n"))
    assert shown == f"before {' '.join(text.replace(chr(13) + chr(10), chr(10)).split(chr(10)))} after"


def test_benign_strings_are_left_as_they_are() -> None:
    from sltcheck.markdown_escape import escape

    for text in ("eps_max", "as-stated", "lemma13/d1-T4/as-stated", "0x1.0624dd2f1a9fcp-9", "25/24", "closed-form",
                 "sltcheck/statements/lemma8/worst_case.py", "d1 = 1, T = 2"):
        assert escape(text) == text


def test_no_line_of_a_fenced_text_ends_its_code_block() -> None:
    from sltcheck.markdown_escape import fenced

    text = "a table\n```\n" + SVG + "\n````\nend"
    html = _html("\n".join(fenced(text)))
    assert html.count("<pre>") == 1
    assert "<svg" not in html


# --- certify's certified.json -------------------------------------------------------------------------------

CERTIFY = ["certify", "--only", "lemma8", "--no-search", "--quiet", "--rounds", "2"]


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A certify run directory holding two families of Lemma 8 (two runs: the second carries the first's)."""
    out = tmp_path_factory.mktemp("certify") / "run"
    assert main([*CERTIFY, "--family", "d1-T3", "--out", str(out)]) == 0
    assert main([*CERTIFY, "--family", "lemma8/d1-T2/as-stated", "--out", str(out)]) == 0
    return out


def _t3(data: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in data["families"] if e["key"] == "lemma8/d1-T3/as-stated")


@pytest.mark.lemma8
@pytest.mark.parametrize(("edit", "reseal", "fragment"), [
    (lambda d: _t3(d).update(sup_upper=0.6), False, "was changed after sltcheck wrote it"),
    (lambda d: d.pop("digest"), False, "carries no digest"),
    (lambda d: _t3(d).update(sup_upper=0.6), True, "lemma8/d1-T3/as-stated: sup_upper differ from what its stored"),
    (lambda d: _t3(d).update(open_boxes=0, boxes=1), True, "open_boxes, boxes differ"),
    (lambda d: _t3(d).update(verdict="undecided"), True, "as-stated: verdict differ from what its stored state"),
])
def test_certified_json_is_sealed_and_checked_against_its_store(certified: Path, tmp_path: Path, edit: Edit,
                                                                reseal: bool, fragment: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 42: certified.json (every family's verdict) carried no digest and was read back as it stood."""
    from sltcheck.jsonfiles import seal_state

    assert seal_state(read_json(certified / "certified.json")) == "sealed"
    out = tmp_path / "run"
    shutil.copytree(certified, out)
    tamper(certified / "certified.json", out / "certified.json", edit, reseal=reseal)
    before = (out / "certified.json").read_bytes()
    assert main([*CERTIFY, "--family", "lemma8/d1-T2/as-stated", "--out", str(out)]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert fragment in lines[0], lines
    assert str(out / "certified.json") in lines[0], lines
    assert (out / "certified.json").read_bytes() == before


@pytest.mark.lemma8
def test_a_family_its_store_does_not_hold_is_refused(certified: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    shutil.copytree(certified, out)
    with sqlite3.connect(out / "boxes.sqlite") as db:
        db.execute("DELETE FROM box WHERE key = 'lemma8/d1-T3/as-stated'")
        db.execute("DELETE FROM family WHERE key = 'lemma8/d1-T3/as-stated'")
    assert main([*CERTIFY, "--family", "lemma8/d1-T2/as-stated", "--out", str(out)]) == 2
    line = capsys.readouterr().err
    assert "lemma8/d1-T3/as-stated: not in the box store" in line
    assert str(out / "certified.json") in line


@pytest.mark.lemma8
def test_a_stale_entry_of_an_interrupted_run_is_derived_again_from_the_store(certified: Path, tmp_path: Path) -> None:
    """A family rerun with more rounds and interrupted before it wrote its entry leaves the store ahead of
    certified.json: honest, so the next run carries the entry the store gives, not a refusal."""
    out = tmp_path / "run"
    shutil.copytree(certified, out)
    stale = (out / "certified.json").read_bytes()
    assert main([*CERTIFY[:-1], "4", "--family", "d1-T3", "--out", str(out)]) == 0  # the store at round 4
    (out / "certified.json").write_bytes(stale)  # as if interrupted before its entry was written
    assert _t3(read_json(out / "certified.json"))["rounds"] == 2
    assert main([*CERTIFY, "--family", "lemma8/d1-T2/as-stated", "--out", str(out)]) == 0
    entry = _t3(read_json(out / "certified.json"))
    assert entry["rounds"] == 4
    assert entry["rests_on_store"]["resumed_at_round"] == 4


@pytest.mark.lemma8
@pytest.mark.parametrize(("edit", "reseal", "fragment"), [
    (lambda d: d.pop("digest"), False, "carries no digest"),
    (lambda d: d["findings"].pop(0), True, "0 records of lemma8/as-stated, which is done"),
])
def test_certify_refuses_to_seal_an_unsealed_or_inconsistent_findings_file(lemma8: Path, tmp_path: Path, edit: Edit,
                                                                          reseal: bool, fragment: str,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """certify --findings writes the file back sealed: it must not seal what sltcheck did not write."""
    path = tamper(lemma8, tmp_path / "check" / "findings.json", edit, reseal=reseal)
    before = path.read_bytes()
    assert main([*CERTIFY, "--family", "d1-T3", "--out", str(tmp_path / "run"), "--findings", str(path)]) == 2
    line = capsys.readouterr().err
    assert fragment in line
    assert str(path) in line
    assert path.read_bytes() == before
    assert not (tmp_path / "run").exists()  # refused before any work


@pytest.mark.parametrize("only", [["theorem9"], ["lemma8"], ["lemma8", "theorem14"], []])
@pytest.mark.parametrize("no_search", [False, True])
def test_a_check_plans_exactly_the_units_a_replay_holds_it_to(only: list[str], no_search: bool) -> None:
    """One list of units: what sltcheck.checking works through is what certificates.planned_units
    expects of the file (a theorem's run plans the regime unit; without the search it does not)."""
    from sltcheck.certificates import planned_units
    from sltcheck.checking import planned, statement_names

    run = {"only": only, "no_search": no_search, "no_mutants": False, "power": True, "probability": not only}
    expected = planned_units(run)
    assert planned(statement_names(only or None), run) == expected  # type: ignore[arg-type]
    theorem = not only or any(name.startswith("theorem") for name in only)
    assert ("regime" in expected) is (theorem and not no_search)


def test_regime_rows_without_their_unit_and_a_unit_without_rows_are_caught() -> None:
    from sltcheck.certificates import table_problems

    row = {"statement": "theorem9", "variant": "as-proven", "found": True}
    assert table_problems({"power": [], "regime": [row]}, []) == [
        "regime: 1 rows, and the unit regime is not done"]
    assert table_problems({"power": [], "regime": []}, ["regime"]) == ["regime: 0 rows, and the unit regime is done"]
    assert table_problems({"power": [], "regime": [row]}, ["regime"]) == []


@pytest.mark.theorem9
@pytest.mark.parametrize(("edit", "fragment"), [
    (lambda row: row.update(ratio=0.5), "ratio: recorded 0.5"),
    (lambda row: row.update(tokens=7), "tokens: recorded 7"),
    (lambda row: row.update(eps_star=0.25), "eps_star: recorded 0.25"),
    (lambda row: row["verdict"].update(holds=False), "verdict.holds"),
    (lambda row: row.update(instance={**row["instance"], "alpha": {"float": "0x1.0p+30"}}), "not an admissible"),
    (lambda row: None, None),
])
def test_a_regime_row_is_re_decided_from_its_instance(tmp_path: Path, edit: Edit, fragment: str | None) -> None:
    """Replay re-decides each theorem's regime row (sltcheck.regime) from its instance: an edited ratio,
    token count, eps* or verdict, or an instance outside the regime, is one line; an untouched row none."""
    from sltcheck import regime
    from sltcheck.harness.budget import Budget
    from sltcheck.rederive import regime_differences

    row = regime.worst_in_regime("theorem9", Budget(shapes=1, starts=4, climbs=1, climb_evaluations=30,
                                                    polish_evaluations=20), 0)
    assert row["found"]
    edit(row)
    found = regime_differences({"regime": [row]}, tmp_path / "findings.json")
    if fragment is None:
        assert found == []
    else:
        assert len(found) == 1, found
        assert fragment in found[0]
