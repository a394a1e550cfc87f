"""One pytest marker per statement folder: ``pytest tests properties -m lemma13`` runs Lemma 13's tests.

The markers are registered and set by sltcheck's pytest plugin (:mod:`sltcheck.harness.pytest_plugin`):
from the node id where it names the statement, from ``@pytest.mark.<statement>`` where it does not.
"""

import subprocess
import sys
from pathlib import Path

from package_env import ENV

from sltcheck.harness.pytest_plugin import statements_named
from sltcheck.registry import STATEMENT_MODULES

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ("-p", "sltcheck.harness.pytest_plugin")  # what pyproject.toml's addopts load

PROBE = '''
import pytest

from sltcheck.harness.pytest_plugin import every_statement


def test_lemma13_by_its_name():
    pass


@pytest.mark.parametrize("statement", ["lemma13", "lemma8"])
def test_by_a_parametrize_id(statement):
    pass


@pytest.mark.lemma13
def test_marked_by_hand():
    pass


def test_lemma8_only():
    pass


@every_statement
def test_looping_over_every_folder():
    pass


def test_lemma12_and_lemma130():
    pass
'''


def test_a_statement_is_a_word_of_the_node_id() -> None:
    assert statements_named("properties/test_lemma13.py::test_lemma13_as_proven") == {"lemma13"}
    assert statements_named("tests/test_x.py::test_bound[lemma12-as-stated-0.425]") == {"lemma12"}
    assert statements_named("tests/test_x.py::test_pair[theorem11-theorem14]") == {"theorem11", "theorem14"}
    assert statements_named("tests/test_x.py::test_lemma1_or_lemma130_or_xlemma13") == set()


def test_every_statement_folder_has_a_registered_marker(pytester) -> None:
    result = pytester.runpytest_subprocess(*PLUGIN, "--markers", "-p", "no:cacheprovider")
    assert result.ret == 0
    for name in STATEMENT_MODULES:
        result.stdout.fnmatch_lines([f"@pytest.mark.{name}: *"])


def test_the_marker_selects_by_name_by_id_and_by_hand_and_nothing_else(pytester) -> None:
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--collect-only", "-q", "--strict-markers", "-m", "lemma13", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    selected = {line for line in result.stdout.lines if "::" in line}
    assert selected == {"test_probe.py::test_lemma13_by_its_name",
                        "test_probe.py::test_by_a_parametrize_id[lemma13]",
                        "test_probe.py::test_marked_by_hand",
                        "test_probe.py::test_looping_over_every_folder"}


def test_minus_m_lemma13_selects_lemma13s_tests_of_the_tree_and_not_lemma8s() -> None:
    """On the real files: the property file (by name), a test marked by hand; not Lemma 8's property,
    nor a test marked by hand for Lemma 12 only."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "lemma13", "-p", "no:cacheprovider",
         "properties/test_lemma13.py", "properties/test_lemma8.py", "tests/test_worst_case.py"],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    selected = {line for line in done.stdout.splitlines() if "::" in line}
    assert {"properties/test_lemma13.py::test_lemma13_as_proven",
            "tests/test_worst_case.py::test_the_suprema_of_the_ratios"} <= selected
    assert "properties/test_lemma8.py::test_lemma8_every_variant_holds" not in selected
    assert "tests/test_worst_case.py::test_phi_is_the_first_order_supremum" not in selected
    assert all("lemma13" in line or "test_worst_case.py::" in line for line in selected), selected


def test_the_tests_readme_names_every_test_file() -> None:
    """tests/README.md maps a change to its tests: a test file it does not name is a file nobody finds."""
    readme = (ROOT / "tests" / "README.md").read_text()
    files = sorted(p.name for p in (ROOT / "tests").glob("test_*.py"))

    def unnamed(names: list[str]) -> list[str]:
        return [name for name in names if f"`{name}" not in readme]

    assert "test_markers.py" in files
    assert unnamed(files) == []
    assert unnamed([*files, "test_no_such_file.py"]) == ["test_no_such_file.py"]  # the check can fail
