"""Examples depend on the seed and the strategies, not on which modules are imported."""

import sys
import types

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


def test_a_new_local_module_does_not_change_the_examples(tmp_path) -> None:  # noqa: ANN001
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
