"""The pytest plugin of sltcheck's test tree: Hypothesis profiles, and per-property example counts.

Loaded by ``-p sltcheck.harness.pytest_plugin`` (pyproject.toml's addopts), not by a root
``conftest.py``: pytest puts a root conftest's folder (the checkout) first on ``sys.path``, so
under tox every test would import the checkout instead of the installed wheel.

``pytest [tests|properties|any file] --hypothesis-profile ci|ci-random|dev|deep`` (default ci;
see :mod:`sltcheck.harness.profiles`). For every property (a test that runs
``sltcheck.harness.check_property``) the run reports how many examples were *valid*
(held every assumption and were evaluated), how many of those were *undecided* (too close
to call at the declared precision) and how many were *filtered* (rejected by an
assumption), and fails the property when its valid examples fall below
:func:`sltcheck.harness.profiles.valid_floor` of the profile's ``max_examples``: a
strategy that silently drew mostly rejected or undecidable instances would otherwise
pass while checking almost nothing.

It also registers one marker per statement folder (``lemma13``, ``theorem9``, ...), so that
``pytest tests properties -m lemma13`` runs Lemma 13's tests: a test whose node id names the
statement (its file, its name or a parametrize id, e.g. ``[lemma13-as-stated]``) carries the
marker without being told; a test that checks a statement without naming it says so with
``@pytest.mark.lemma13``, one that loops over every folder with :func:`every_statement`
(``tests/README.md``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from typing import cast

import pytest
from hypothesis import settings

from sltcheck.harness.profiles import register_profiles, valid_floor
from sltcheck.harness.runner import RECORDER
from sltcheck.registry import STATEMENT_MODULES

register_profiles()
settings.load_profile("ci")  # the Hypothesis plugin loads --hypothesis-profile after this

_ROWS: list[tuple[str, dict[str, int]]] = []

# A statement's name as a word of a node id: "lemma1" never matches "lemma13", "lemma13" matches
# "test_lemma13.py", "test_lemma13_bound" and "[lemma13-as-stated]".
_NAMED = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, STATEMENT_MODULES)) + r")(?![0-9])")


def statements_named(nodeid: str) -> set[str]:
    """The statements a test's node id names (its path, its name, its parametrize ids)."""
    return set(_NAMED.findall(nodeid)) if STATEMENT_MODULES else set()


def pytest_configure(config: pytest.Config) -> None:
    for name in STATEMENT_MODULES:
        config.addinivalue_line(
            "markers", f"{name}: the tests of sltcheck.statements.{name} (set from the node id, or explicitly)")


def every_statement(test: Callable[..., None]) -> Callable[..., None]:
    """Mark a test that checks every statement folder in one body (a loop, not a parametrize) with
    every statement's marker, so ``-m <statement>`` finds it for any of them."""
    for name in STATEMENT_MODULES:
        test = getattr(pytest.mark, name)(test)
    return test


@pytest.hookimpl(tryfirst=True)  # before pytest's own -m deselection, which reads the markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for name in sorted(statements_named(item.nodeid)):
            if item.get_closest_marker(name) is None:
                item.add_marker(name)


def _counts() -> dict[tuple[str, str], tuple[int, int, int]]:
    return {key: (r.examples, r.undecided, r.filtered) for key, r in RECORDER.records.items()}


def _examined(before: dict[tuple[str, str], tuple[int, int, int]]) -> dict[str, int]:
    """What one test added, per variant it checked; a property over several variants
    (``check_variants``) counts as its least-examined one (the floor holds for each)."""
    added = [tuple(now - was for now, was in zip(counts, before.get(key, (0, 0, 0)), strict=True))
             for key, counts in _counts().items()]
    added = [row for row in added if any(row)]
    if not added:
        return {"valid": 0, "undecided": 0, "filtered": 0}
    return {"valid": min(row[0] for row in added), "undecided": max(row[1] for row in added),
            "filtered": max(row[2] for row in added)}


def _effective_settings(item: pytest.Item) -> settings:
    """The settings Hypothesis runs this test with: its own ``@settings(...)`` over the profile.
    Hypothesis keeps them on the wrapped test (private attribute; no public accessor exists)."""
    own = getattr(item.obj, "_hypothesis_internal_use_settings", None)  # type: ignore[attr-defined]
    if isinstance(own, settings):
        return own
    assert settings.default is not None  # a profile is always loaded (register_profiles above)
    return settings.default


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    if not getattr(getattr(item, "obj", None), "is_hypothesis_test", False):  # not an @given test
        return (yield)
    before = _counts()
    result = yield
    counts = _examined(before)
    if not any(counts.values()):  # not a property (no check_property call)
        return result
    max_examples = _effective_settings(item).max_examples
    floor = valid_floor(max_examples)
    item.user_properties.append(("examples", {**counts, "floor": floor}))  # reaches the controller under xdist
    if counts["valid"] < floor:
        raise AssertionError(
            f"only {counts['valid']} valid examples (floor {floor} of max_examples "
            f"{max_examples}); undecided {counts['undecided']}, filtered {counts['filtered']}"
        )
    return result


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _ROWS.extend((report.nodeid, cast(dict[str, int], value))
                     for key, value in report.user_properties if key == "examples")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _ROWS:
        return
    terminalreporter.section("examples per property (valid / of which undecided / filtered; floor)")
    for nodeid, counts in sorted(_ROWS):
        mark = "" if counts["valid"] >= counts["floor"] else "   BELOW FLOOR"
        terminalreporter.write_line(
            f"{counts['valid']:6d} {counts['undecided']:6d} {counts['filtered']:6d}   (>= {counts['floor']})"
            f"  {nodeid}{mark}"
        )
