"""Everything that quotes a number follows the code: a docstring's number and the code's constant agree.

Every number printed with four or more significant digits in a statement's docstrings (its package,
its ``worst_case.py``) and in its property file's docstring must be, to the digits printed, one of the
statement's known values: a float constant of the package or of its ``worst_case`` module (inside dicts
and lists too), or the ratio measured / bound of a pinned counterexample (``COUNTEREXAMPLES``,
``LARGEST_COUNTEREXAMPLES``) under its variant, decided at 60 digits. A constant changed without its
docstring, or a docstring number typed by hand, fails here.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import math
import re
from decimal import Decimal
from pathlib import Path
from types import ModuleType

import pytest

from sltcheck.contract import optional
from sltcheck.harness import evaluate
from sltcheck.harness.serialise import decode_instance
from sltcheck.registry import STATEMENT_MODULES, load

ROOT = Path(__file__).resolve().parent.parent
# A decimal number, not part of a name, a version, a fraction or an exponent's digits.
NUMBER = re.compile(r"(?<![\w.^/-])(\d+\.\d+(?:e[+-]?\d+)?)(?![\w.])")
DIGITS = 4  # numbers printed with fewer significant digits are prose ("about 0.85"), not quotes


def significant(text: str) -> int:
    mantissa = text.split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)


def quoted(text: str) -> list[str]:
    """The numbers of ``text`` printed with at least DIGITS significant digits."""
    return [n for n in NUMBER.findall(text) if significant(n) >= DIGITS]


def agrees(printed: str, value: float) -> bool:
    """Whether ``value`` rounds to ``printed`` at the digits printed (half a unit of the last digit)."""
    number = Decimal(printed)
    unit = Decimal(1).scaleb(number.as_tuple().exponent)  # type: ignore[arg-type]
    return math.isfinite(value) and abs(Decimal(repr(value)) - number) <= unit / 2


def _floats(value: object) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in _floats(v)]
    if isinstance(value, list | tuple):
        return [f for v in value for f in _floats(v)]
    return []


def _modules(statement: str) -> list[ModuleType]:
    out = [load(statement)]
    with contextlib.suppress(ModuleNotFoundError):
        out.append(importlib.import_module(f"sltcheck.statements.{statement}.worst_case"))
    return out


def known_values(statement: str) -> list[float]:
    """The values a docstring of ``statement`` may quote (see the module docstring)."""
    values = [f for module in _modules(statement) for name, value in vars(module).items()
              if name.isupper() for f in _floats(value)]
    module = load(statement)
    for pinned in ("COUNTEREXAMPLES", "LARGEST_COUNTEREXAMPLES"):
        for variant, encoded in optional(module, pinned).items():
            values.append(float(evaluate(statement, variant, decode_instance(encoded), dps=60).ratio))
    return values


def texts(statement: str) -> dict[str, str]:
    out = {module.__name__: module.__doc__ or "" for module in _modules(statement)}
    prop = ROOT / "properties" / f"test_{statement}.py"
    if prop.exists():
        out[str(prop.relative_to(ROOT))] = ast.get_docstring(ast.parse(prop.read_text())) or ""
    return out


@pytest.mark.parametrize("statement", STATEMENT_MODULES)
def test_every_quoted_number_is_a_value_of_the_code(statement: str) -> None:
    numbers = {(where, n) for where, text in texts(statement).items() for n in quoted(text)}
    if not numbers:
        return
    values = known_values(statement)
    stale = sorted((where, n) for where, n in numbers if not any(agrees(n, v) for v in values))
    assert not stale, f"quoted numbers that no constant of {statement} gives: {stale}"


@pytest.mark.lemma13
def test_the_check_can_fail() -> None:
    """The matcher itself: a number off in its last printed digit does not agree; a rounding does."""
    assert agrees("1.0416667", 25 / 24)
    assert agrees("0.5208333", 25 / 48)
    assert agrees("1.042", 25 / 24)
    assert not agrees("1.0416668", 25 / 24)
    assert not agrees("1.0402", 25 / 24)
    assert quoted("ratio 1.0402 at T = 5, 0.85, 2.07e-5, 2.071e-5 and v1.2.3") == ["1.0402", "2.071e-5"]
    values = known_values("lemma13")
    assert not any(agrees("1.04016", v) for v in values)  # the old "supremum at T = 5" is no value of the code


@pytest.mark.lemma12
@pytest.mark.lemma13
def test_recomputed_constants_match_their_computation() -> None:
    """The constants the docstrings quote that are computed elsewhere, recomputed."""
    from sltcheck.statements.lemma12 import worst_case as w12
    from sltcheck.statements.lemma13 import worst_case as w13

    assert w12.longest_supremum(64) == pytest.approx(w12.LONGEST, rel=1e-9)
    assert w12.FRACTION_AT_ONE == pytest.approx(w12.optimal_fraction(1.0), rel=1e-15)
    assert w12.SUPREMUM_AT_ONE == pytest.approx(w12.ratio_supremum(1.0), rel=1e-15)
    assert w13.SUPREMUM_AS_STATED == pytest.approx(w13.ratio_supremum(1.0), rel=1e-15)
    assert w13.SUPREMUM_AS_PROVEN == pytest.approx(w13.ratio_supremum(1.0, proven=True), rel=1e-15)
    assert load("lemma12").LONGEST_SUPREMUM == w12.LONGEST["ratio"]
