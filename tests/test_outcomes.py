"""A variant is "held" only when something was measured and decided; "not measured" otherwise."""

from __future__ import annotations

import mpmath
import pytest

from sltcheck.checking import entry_of
from sltcheck.harness.runner import Record
from sltcheck.numerics.verdict import Verdict
from sltcheck.report import findings_text
from sltcheck.report.labels import outcome


def _search_only_record() -> Record:
    """No Hypothesis example ran (all filtered), but the worst-case search decided one instance."""
    record = Record("lemma8", "as-stated", examples=0, filtered=50)
    record.worst_verdict = Verdict(mpmath.mpf("0.5"), mpmath.mpf(1), 40, holds=True, undecided=False)
    record.worst_ratio, record.worst_instance = 0.5, {}
    return record


def test_a_ratio_the_search_measured_is_kept_without_examples():
    entry = entry_of(_search_only_record(), "as-stated", 1.0, "", None)
    assert entry["worst_ratio"] == 0.5
    assert outcome(dict(entry)) == "held"


@pytest.mark.lemma8
def test_nothing_measured_is_not_held():
    entry = entry_of(Record("lemma8", "as-stated"), "as-stated", 1.0, "", None)
    assert entry["worst_ratio"] is None
    assert outcome(dict(entry)) == "not measured"


@pytest.mark.lemma5
@pytest.mark.lemma8
def test_the_readme_section_lists_unmeasured_variants_apart_from_the_held_ones():
    held = dict(entry_of(_search_only_record(), "as-stated", 1.0, "", None))
    unmeasured = {**dict(entry_of(Record("lemma5", "as-stated"), "as-stated", 1.0, "", None))}
    text = findings_text.render({"findings": [held, unmeasured], "mutants": [], "power": [], "slack": []}, "f.json")
    assert "| lemma8 | as-stated * | 0.5 |" in text
    assert "| lemma5 |" not in text
    assert "Not measured (not counted as held): lemma5 `as-stated`." in text
