"""The arguments that decide boxes where a bound is attained (sltcheck.certify.arguments), and that
they never prove a false bound: each runs on its family's mutant, which must end a counterexample."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import numpy as np
import pytest

from sltcheck.certify import Family, families
from sltcheck.certify.arguments import (
    Factor,
    distance_to,
    dominated,
    increasing_range,
    magnitude,
    room,
    slack_holds,
)
from sltcheck.certify.bnb import argued, point_ratio
from sltcheck.certify.run import certify_family
from sltcheck.certify.store import Store
from sltcheck.numerics.balls import BACKENDS, arb_available, backend

BACKEND_NAMES = [name for name in BACKENDS if name != "arb" or arb_available()]


def run(family: Family, tmp_path: Path, **options: Any) -> dict[str, Any]:
    store = Store(tmp_path / "boxes.sqlite")
    try:
        options = {"backend_name": BACKEND_NAMES[0], "budget": 600.0, "tolerance": 0.01, **options}
        return certify_family(family, store, **options)
    finally:
        store.close()


# --- the pieces ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_factors_keep_an_exact_zero(name: str) -> None:
    """|t| on a box around t = 0 and the distance to a face the box reaches start at 0 exactly (a
    midpoint-radius ball around [0, x] reaches below 0), and a product with a zero factor is 0."""
    B = backend(name)
    assert magnitude(B, B.interval(-1e-3, 2e-3)).low == 0.0
    assert magnitude(B, B.interval(0.0, 0.7)).low == 0.0
    assert room(1.0, 0.3, 1.0).low == 0.0
    assert room(1.0, 0.3, 1.0).high >= 0.7
    assert room(0.5, 0.3, 1.0).low < 0  # the face u = 1/2 is inside the box: no sign
    assert slack_holds([[Factor(-1.0, 1.0), Factor(0.0, 0.0)], [Factor(0.0, 2.0), Factor(1.0, 1.0)]])
    assert not slack_holds([[Factor(-1e-300, 1.0)]])
    assert not slack_holds([[Factor(0.0, 1.0)], [Factor(-1.0, 0.5), Factor(0.0, 1.0)]])


def test_distance_and_maximum_are_exact_and_linear_between_their_breakpoints() -> None:
    rng = random.Random(4)
    for _ in range(20):
        points = [Fraction(rng.randint(-50, 50), rng.randint(1, 9)) for _ in range(rng.randint(1, 5))]
        others = [Fraction(rng.randint(-50, 50), rng.randint(1, 9)) for _ in range(rng.randint(1, 5))]
        f, g = distance_to(points), distance_to(others)
        top = f.maximum(g)
        for _ in range(30):
            x = Fraction(rng.randint(-700, 700), rng.randint(1, 11))
            assert f.value(x) == min(abs(x - p) for p in points)
            assert top.value(x) == max(f.value(x), g.value(x))
        breaks = list(top.breaks)
        for a, b in zip([breaks[0] - 3, *breaks], [*breaks, breaks[-1] + 3], strict=True):
            assert top.value((a + b) / 2) * 2 == top.value(a) + top.value(b)  # linear on each piece


def test_dominated_is_decided_exactly_even_where_the_two_sides_coincide() -> None:
    every, part = distance_to([Fraction(0), Fraction(1)]), distance_to([Fraction(0)])
    assert dominated(every, part, Fraction(1), -1.0, 2.0)  # a subset's distance is never smaller
    assert not dominated(every, part, Fraction(1, 2), 0.4, 0.6)
    assert not dominated(every, part, Fraction(1, 2), -0.1, 0.1)  # |x| <= |x| / 2 only at 0
    assert dominated(every, part, Fraction(1, 2), 0.0, 0.0)  # ... where it holds exactly


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_increasing_range_encloses_a_monotone_function_over_a_wide_box(name: str) -> None:
    """exp(40 x) y over x in [0, 1], y in [0, 3]: e^40 between the corners, where one ball reaches below 0."""
    B = backend(name)

    def f(arith: Any, x: Any, y: Any) -> Any:
        return arith.exp(40 * x) * y

    low, high = increasing_range(B, f, [B.interval(0.0, 1.0), B.interval(-0.5, 3.0)], [None, 0.0])
    assert low == 0.0 or low <= 1e-300
    rng = random.Random(1)
    with mpmath.workdps(30):
        for _ in range(50):
            x, y = rng.uniform(0, 1), rng.uniform(0, 3)
            assert low <= mpmath.exp(40 * mpmath.mpf(x)) * y <= high
    assert high <= 3 * math.exp(40) * (1 + 1e-6)  # a ball around [0, 1] reaches a little past 1


# --- every family with an argument: proved where the bound holds, never where it does not ---------

ATTAINED = ["lemma2/targets-2x1-n4-source0/as-proven", "lemma4/targets-2x1-n4-source0/construction",
            "lemma7/targets-2x1-n4-source0/construction", "theorem9/d1-T2/as-proven", "theorem9/d1-T2-H2/as-proven",
            "theorem11/d1-T2-L1/as-proven", "theorem11/d1-T2-H2-L1/as-proven"]
MUTANTS = ["lemma2/targets-2x1-n4-source0/bound-quartered", "lemma4/targets-2x1-n4-source0/bound-halved",
           "lemma7/targets-2x1-n4-source0/bound-halved", "theorem9/d1-T2/half", "theorem11/d1-T2-L1/half",
           "theorem14/B2-d1-T2/lipschitz-one"]


@pytest.mark.parametrize("key", ATTAINED)
def test_an_attained_family_is_held_on_all_of_its_volume(tmp_path: Path, key: str) -> None:
    entry = run(families()[key], tmp_path, rounds=4)
    assert entry["verdict"] == "held"
    assert entry["proven_fraction"] == 1.0
    assert entry["sup_upper"] == 1.0  # sup 1, attained
    assert entry["sup_lower"] > 1 - 1e-9
    assert sum(entry["proved_by_argument"].values()) > 0


@pytest.mark.parametrize("key", MUTANTS)
def test_an_argument_never_proves_its_mutant_family(tmp_path: Path, key: str) -> None:
    """The known-false bound: its family ends a certified counterexample; the argument, run at the
    mutant's factor, proves neither the whole box nor a box around the counterexample."""
    family = families()[key]
    assert family.expected == "counterexample"
    entry = run(family, tmp_path, rounds=20)
    assert entry["verdict"] == "counterexample"
    assert entry["counterexample"]["certified_ratio"][0] > 1
    B = backend(BACKEND_NAMES[0])
    lows = [d.low for d in family.dimensions]
    highs = [d.high for d in family.dimensions]
    values = {d.name: B.interval(d.low, d.high) for d in family.dimensions}
    assert argued(B, family, values, lows, highs) is None
    point = entry["best"]["point"]
    around = [(max(d.low, point[d.name] - 1e-6), min(d.high, point[d.name] + 1e-6)) for d in family.dimensions]
    values = {d.name: B.interval(*ends) for d, ends in zip(family.dimensions, around, strict=True)}
    assert argued(B, family, values, [e[0] for e in around], [e[1] for e in around]) is None


# --- the chain slack's terms are a lower bound of the true slack (a second code path) -------------

SLACK_CASES = [("theorem9/d1-T2/as-proven", "mha"), ("theorem9/d1-T2-H2/as-proven", "mha"),
               ("theorem11/d1-T2-L1/as-proven", "block"), ("theorem11/d1-T2-H2-L1/as-proven", "block")]


def _terms(key: str, arith: Any, values: dict[str, Any], ends: dict[str, Any], scale: float,
           candidate: tuple[Any, ...]) -> list[list[Factor]]:
    if key.startswith("theorem9"):
        from sltcheck.statements.theorem9 import family as t9

        _, axis, sign = candidate
        heads = 1 if key == "theorem9/d1-T2/as-proven" else 2
        return t9.slack_terms(arith, values, ends, heads, scale, axis, sign)
    from sltcheck.statements.theorem11 import family as t11

    w, axis, sign, _, _ = candidate
    heads = 1 if key == "theorem11/d1-T2-L1/as-proven" else 2
    return t11.slack_terms(arith, values, ends, heads, scale, axis, sign, w)


@pytest.mark.parametrize("scale", [1.0, 0.5])
@pytest.mark.parametrize(("key", "forward"), SLACK_CASES)
def test_chain_slack_terms_never_exceed_the_statements_own_slack(key: str, forward: str, scale: float) -> None:
    """At random points, every candidate: sum_k prod_j f_kj (the family's terms, over rho) <=
    (c bound - |row 1's output gap|) / rho by the statement's mpmath code at 40 digits."""
    from sltcheck.model import reference
    from sltcheck.registry import load

    family = families()[key]
    module = load(family.statement)
    B = backend(BACKEND_NAMES[0])
    rng = random.Random(12)
    heads = 1 if "H2" not in key else 2
    module_candidates = (__import__(f"sltcheck.statements.{family.statement}.family", fromlist=["candidates"])
                         .candidates(heads))
    checked = 0
    for _ in range(4):
        point = {d.name: rng.uniform(d.low, d.high) for d in family.dimensions}
        point["log10_rho"] = rng.uniform(-6.0, -2.0)
        values = {name: B.point(v) for name, v in point.items()}
        ends = {name: (v, v) for name, v in point.items()}
        rho = 10.0 ** point["log10_rho"]
        for choice in rng.sample(range(len(module_candidates)), 6):
            instance = family.instance(point, choice)
            terms = _terms(key, B, values, ends, scale, module_candidates[choice])
            lower = math.fsum(math.prod((f.low + f.high) / 2 for f in term) for term in terms)
            X, mask = np.asarray(instance["X"]), np.asarray(instance["mask"])
            run_forward = getattr(reference, forward)
            with mpmath.workdps(40):
                gap = abs(run_forward(X, mask, module.source_of(instance), 40)[0, 0]
                          - run_forward(X, mask, module.target_of(instance), 40)[0, 0])
                bound = module.VARIANTS["as-proven"](instance, 40)
                slack = float((scale * bound - gap) / rho)
            assert lower <= slack + 1e-7 * float(bound / rho), (point, choice)
            checked += 1
    assert checked == 24


def test_theorem9_two_head_family_point_ratio_is_below_the_statement() -> None:
    """Two code paths: the two-head family's row-1 enclosure at points vs the statement's own mpmath code."""
    from sltcheck.harness.runner import evaluate

    family = families()["theorem9/d1-T2-H2/as-proven"]
    B = backend(BACKEND_NAMES[0])
    rng = random.Random(5)
    for _ in range(8):
        point = [rng.uniform(d.low, d.high) for d in family.dimensions]
        lower, choice = point_ratio(B, family, point)
        instance = family.instance(dict(zip([d.name for d in family.dimensions], point, strict=True)), choice)
        assert family.contains is not None
        assert family.contains(instance)
        assert lower * (1 - 1e-6) <= evaluate("theorem9", "as-proven", instance, dps=40).ratio


@pytest.mark.lemma8
def test_best_split_halves_the_dimension_that_matters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ratio = 0.9 x on [0, 1]^2 (y never matters, and is listed first): "best" halves x from the
    first round, so its lower bound rises where "widest"'s does not."""
    from dataclasses import replace

    from sltcheck.certify import Dimension

    best = Family(statement="lemma8", name="toy-best", variant="as-stated",
                  dimensions=(Dimension("y", 0.0, 1.0), Dimension("x", 0.0, 1.0)),
                  enclose=lambda B, v: [(0.9 * v["x"], B.point(1.0))],
                  instance=lambda point, choice: {}, description="toy", split="best")
    widest = replace(best, name="toy-widest", split="widest")
    found = {}
    for toy in (best, widest):
        monkeypatch.setitem(families(), toy.key, toy)
        (tmp_path / toy.name).mkdir()
        found[toy.split] = run(toy, tmp_path / toy.name, backend_name="mpmath", rounds=1, climb=False)
    assert found["best"]["sup_lower"] == pytest.approx(0.9)  # the x-halves' midpoints rise, then snap to x = 1
    assert found["widest"]["sup_lower"] == pytest.approx(0.45)  # the y-halves' midpoints never rise
    assert found["best"]["verdict"] == found["widest"]["verdict"] == "held"


@pytest.mark.theorem14
def test_a_family_with_an_unknown_split_is_refused() -> None:
    from dataclasses import replace

    with pytest.raises(ValueError, match="split must be one of widest, best, got 'random'"):
        replace(families()["theorem14/B2-d1-T2/as-proven"], split="random")


@pytest.mark.theorem9
def test_the_readme_table_says_what_each_argument_proved_and_on_what_machine() -> None:
    from sltcheck.cli.certify import readme_table

    entry = {"statement": "theorem9", "family": "d1-T2", "variant": "as-proven", "expected": "held",
             "verdict": "held", "sup_lower": 1 - 4e-15, "sup_upper": 1.0, "proven_fraction": 1.0,
             "proved_by_argument": {"chain slack": 1.0}, "known_supremum": 1.0, "boxes": 3, "rounds": 1,
             "boxes_per_second": 0.7, "seconds": 4.0, "finished": True}
    text = readme_table([entry], "sltcheck certify --budget 60", "2 cores; 4 s in all")
    assert "| rounds | boxes | boxes/s | seconds |" in text
    assert "| 1 | 3 | 0.7 | 4 (finished) |" in text
    assert "(boxes/s and seconds on the machine it ran on: 2 cores; 4 s in all)." in text
    assert "load" not in text
    assert "**held** (proved on 100%; chain slack on 100.0%), sup measured / bound in [1 - 4.0e-15, 1]" in text


def test_the_readme_table_shows_the_command_without_where_the_table_went() -> None:
    from sltcheck.cli.certify import without_readme

    assert without_readme(["--budget", "60", "--readme", "docs/results/certify.md", "--only", "lemma8"]) == \
        ["--budget", "60", "--only", "lemma8"]
    assert without_readme(["--readme=x.md", "--budget", "60"]) == ["--budget", "60"]
