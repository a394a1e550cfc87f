"""benchmarks/independent_search.py, the red team's search: it reaches a known supremum on its
own (its power), stays admissible, and writes the same strict JSON for the same seed."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from sltcheck.statements.lemma8 import worst_case

ROOT = Path(__file__).resolve().parents[1]


def load_script():
    spec = importlib.util.spec_from_file_location("independent_search", ROOT / "benchmarks" / "independent_search.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_it_reaches_lemma8s_closed_form_supremum() -> None:
    """Not told the answer, it gets within 3% of sup measured / bound = 1/2 (d1 = 1, eps_max -> 0;
    the closed form of sltcheck/statements/lemma8/worst_case.py), decided at 60 digits."""
    script = load_script()
    record = script.search_statement("lemma8", seed=0, evaluations=300, seconds=600.0, max_shapes=2,
                                     progress=False)
    [entry] = record["variants"]
    known = worst_case.supremum("lemma8", d1=1, alpha=1.0, eps_max=1e-9)
    supremum = known["value"] / known["bound"]  # tends to 1/2 as eps_max -> 0
    assert math.isclose(supremum, 0.5, rel_tol=1e-6)
    assert entry["best_ratio"] >= 0.97 * supremum
    assert entry["best_ratio"] <= supremum * (1 + 1e-9)  # never above the proved supremum
    assert all(d["admissible"] for d in entry["decided"])
    assert not entry["violated"]


@pytest.mark.slow
def test_it_finds_lemma13_as_stated_false_in_the_smallest_shape() -> None:
    """The statement as printed is false at d = H = L = 1, T = 4 (sltcheck's finding); the red team
    finds that on its own, admissible and decided at 60 digits."""
    script = load_script()
    shape = [s for s in script.shapes("lemma13", 0) if s["T"] == 4 and s["mask"] == "full"
             and s["d1"] == s["H"] == s["dK"] == s["dV"] == s["L"] == 1]
    module = script.load("lemma13")
    _, u, _ = script.search_shape(module, module.VARIANTS["as-stated"], script.FAMILIES["lemma13"].decode,
                                  shape[0], 1500, 0)
    instance = script.FAMILIES["lemma13"].decode(shape[0], script.Cursor(u))
    verdict = script.decide("lemma13", module, module.VARIANTS["as-stated"], instance)
    assert verdict["admissible"], verdict
    assert verdict["violated"], verdict
    assert verdict["ratio"] > 1.02


@pytest.mark.lemma5
def test_same_seed_same_strict_json(tmp_path: Path) -> None:
    script = load_script()
    outputs = []
    for name in ("first.json", "second.json"):
        out = tmp_path / name
        assert script.main(["--only", "lemma5", "--shapes", "1", "--evaluations", "60", "--seconds", "600",
                            "--out", str(out)]) == 0
        payload = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"{c} in strict JSON"))
        assert payload["schema_version"] == 1
        payload["statements"][0].pop("seconds")
        outputs.append(payload)
    assert outputs[0] == outputs[1]


@pytest.mark.lemma5
@pytest.mark.parametrize("argument", [["--evaluations", "0"], ["--shapes", "-1"], ["--variants", "nonsense"]])
def test_bad_arguments_name_themselves(argument: list[str], tmp_path: Path) -> None:
    script = load_script()
    with pytest.raises(ValueError, match=argument[0].lstrip("-")):
        script.main(["--only", "lemma5", *argument, "--out", str(tmp_path / "x.json")])


@pytest.mark.lemma13
def test_the_largest_known_violation_replays() -> None:
    """Lemma 13 as stated, the largest violation known (7 of 38 tokens at +alpha): admissible, violated at
    60 digits, within 3e-7 of the proved supremum 25/24 and below it."""
    from sltcheck.assumptions import violations
    from sltcheck.harness import evaluate
    from sltcheck.harness.serialise import decode_instance
    from sltcheck.statements.lemma13 import LARGEST_COUNTEREXAMPLES

    instance = decode_instance(LARGEST_COUNTEREXAMPLES["as-stated"])
    assert not violations("lemma13", instance)
    verdict = evaluate("lemma13", "as-stated", instance, dps=60)
    assert verdict.violated
    assert 25 / 24 * (1 - 3e-7) < verdict.ratio < 25 / 24


@pytest.mark.lemma8
def test_an_output_replays_at_100_digits(tmp_path: Path) -> None:
    script = load_script()
    out = tmp_path / "out.json"
    assert script.main(["--only", "lemma8", "--shapes", "1", "--evaluations", "60", "--out", str(out)]) == 0
    assert script.main(["--replay", str(out)]) == 0  # Lemma 8 holds: nothing violated


def test_where_selects_the_shapes_and_rejects_unknown_dimensions() -> None:
    script = load_script()
    assert script.parse_where(["d1=2", "H=2"]) == {"d1": 2, "H": 2}
    with pytest.raises(ValueError, match="--where takes DIM=VALUE"):
        script.parse_where(["width=2"])
    with pytest.raises(ValueError, match="got 'H=two'"):
        script.parse_where(["H=two"])
