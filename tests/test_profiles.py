"""Examples depend on the seed and the strategies, not on which modules are imported."""

import subprocess
import sys
import types
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers

from sltcheck.harness.profiles import register_profiles


def _draws() -> list[float]:
    seen: list[float] = []

    @settings(max_examples=30, derandomize=True, database=None)
    @given(st.floats(-10, 10))
    def record(x: float) -> None:
        seen.append(x)

    record()
    return seen


def test_a_new_local_module_does_not_change_the_examples(tmp_path) -> None:
    register_profiles()
    before = _draws()
    path = tmp_path / "odd_constants_module.py"
    path.write_text("ODD = 7.123456789\nOTHER = -3.3333\n")
    module = types.ModuleType("odd_constants_module")
    module.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    sys.modules["odd_constants_module"] = module
    try:
        assert not len(providers._get_local_constants())
        assert _draws() == before
    finally:
        del sys.modules["odd_constants_module"]


ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ("-p", "sltcheck.harness.pytest_plugin")  # what pyproject.toml's addopts load


def test_profiles_work_for_any_test_file() -> None:
    """The profiles are registered by sltcheck's pytest plugin (pyproject's addopts) for every file."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_widths.py", "--hypothesis-profile", "deep", "-q",
         "-p", "no:cacheprovider", "-k", "theorem9_and_11_formulas"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "not registered" not in done.stdout + done.stderr


def test_hypothesis_private_shrink_limit_is_left_alone() -> None:
    from hypothesis.internal.conjecture import engine

    from sltcheck.harness import mutants

    assert not hasattr(mutants, "MAX_SHRINKS")
    assert engine.MAX_SHRINKS == 500  # Hypothesis's own default


STARVED = '''
from hypothesis import given, strategies as st
from sltcheck.harness import check_property
from sltcheck.statements.lemma8.worst_case import extremal_instance

GOOD = extremal_instance(1, 1.0, 0.1)
BAD = dict(GOOD, eps_max=-1.0)  # breaks eps_max >= 0: filtered


@given(st.sampled_from([GOOD, BAD]))
def test_starved(instance):
    check_property("lemma8", "as-stated", instance)
'''


def test_a_property_with_too_few_valid_examples_fails(pytester: pytest.Pytester) -> None:
    """Two possible draws, one filtered: Hypothesis stops after exhausting them, with 1 valid
    example, far below the floor; the plugin fails the property and reports the counts."""
    pytester.makepyfile(test_starved=STARVED)
    result = pytester.runpytest_subprocess(*PLUGIN, "--hypothesis-profile", "ci", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*only 1 valid examples (floor 40*filtered 1*", "*BELOW FLOOR*"])


OWN_SETTINGS = '''
from hypothesis import given, settings, strategies as st
from sltcheck.harness import check_property
from sltcheck.statements.lemma8.worst_case import extremal_instance

INSTANCES = [extremal_instance(1, 1.0, k / 100) for k in range(1, 61)]


@settings(max_examples=200)
@given(st.sampled_from(INSTANCES))
def test_own_budget(instance):
    check_property("lemma8", "as-stated", instance)
'''


def test_the_floor_follows_a_propertys_own_settings(pytester: pytest.Pytester) -> None:
    """60 distinct valid draws under its own max_examples=200: starved against its own budget
    (floor 160), though above the profile's floor (40 of 50)."""
    pytester.makepyfile(test_own_budget=OWN_SETTINGS)
    result = pytester.runpytest_subprocess(*PLUGIN, "--hypothesis-profile", "ci", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*valid examples (floor 160 of max_examples 200)*"])


VARIANTS_PROPERTY = '''
from hypothesis import given
from sltcheck.harness import check_variants, instances


@given(instances("lemma5"))
def test_every_variant(instance):
    check_variants("lemma5", ["as-stated", "via-lemma8"], instance)
'''


def test_a_property_over_several_variants_counts_its_examples_once(pytester: pytest.Pytester) -> None:
    """Each variant records every example; the plugin reports the property's 50, not 100."""
    pytester.makepyfile(test_every_variant=VARIANTS_PROPERTY)
    result = pytester.runpytest_subprocess(*PLUGIN, "--hypothesis-profile", "ci", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*    50 * (>= 40)*test_every_variant*"])


@pytest.mark.lemma13
def test_check_variants_decides_each_variant_and_fails_on_the_false_one() -> None:
    """Lemma 13's pinned counterexample: as-proven holds (ratio 0.51), as-stated is violated; both
    are recorded with the same measured side, and the failure names the variant."""
    from hypothesis import HealthCheck, Phase

    from sltcheck.harness import Recorder, check_variants, decode_instance, evaluate
    from sltcheck.statements.lemma13 import COUNTEREXAMPLES

    instance = decode_instance(COUNTEREXAMPLES["as-stated"])
    recorder = Recorder()

    @settings(max_examples=1, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(st.just(instance))
    def once(drawn: dict) -> None:
        check_variants("lemma13", ["as-proven", "as-stated"], drawn, recorder=recorder)

    with pytest.raises(AssertionError, match=r"lemma13 \(as-stated\) violated"):
        once()
    proven, stated = recorder.records[("lemma13", "as-proven")], recorder.records[("lemma13", "as-stated")]
    assert proven.worst_verdict is not None
    assert not proven.worst_verdict.violated
    assert stated.worst_verdict is not None
    assert stated.worst_verdict.violated
    assert proven.worst_verdict.measured == stated.worst_verdict.measured
    assert stated.worst_ratio == evaluate("lemma13", "as-stated", instance).ratio
