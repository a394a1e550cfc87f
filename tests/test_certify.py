"""The branch-and-bound over families (sltcheck.certify): enclosures, verdicts, resume, executors."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import mpmath
import pytest

from sltcheck.certify import Dimension, Family, families, select
from sltcheck.certify.bnb import evaluate_box, point_ratio
from sltcheck.certify.run import certify_family
from sltcheck.certify.store import Store
from sltcheck.harness import interval_verdict as certified
from sltcheck.jsonfiles import seal
from sltcheck.numerics import dual
from sltcheck.numerics.balls import BACKENDS, arb_available, backend
from sltcheck.numerics.intervals import ends
from sltcheck.statements.lemma8 import family as lemma8_family

BACKEND_NAMES = [name for name in BACKENDS if name != "arb" or arb_available()]


def run(family: Family, tmp_path: Path, name: str = "boxes.sqlite", **options: Any) -> dict[str, Any]:
    store = Store(tmp_path / name)
    try:
        options = {"backend_name": "mpmath" if not arb_available() else "arb", "budget": 600.0,
                   "tolerance": 0.01, **options}
        return certify_family(family, store, **options)
    finally:
        store.close()


# --- the two backends enclose the true value ----------------------------------------------------

CASES = [  # (what, backend expression, exact value at 60 digits)
    ("exp", lambda B: B.exp(B.point(0.3)), lambda: mpmath.exp(mpmath.mpf(0.3))),
    ("expm1 tiny", lambda B: B.expm1(B.point(1e-12)), lambda: mpmath.expm1(mpmath.mpf(1e-12))),
    ("sqrt", lambda B: B.sqrt(B.point(2.0)), lambda: mpmath.sqrt(2)),
    ("exprel", lambda B: B.exprel(B.interval(0.5, 0.5)), lambda: mpmath.expm1(mpmath.mpf(0.5)) / mpmath.mpf(0.5)),
    ("quotient", lambda B: B.point(1.0) / B.point(3.0), lambda: mpmath.mpf(1) / 3),
]


@pytest.mark.parametrize("name", BACKEND_NAMES)
@pytest.mark.parametrize(("what", "expression", "exact"), CASES, ids=[c[0] for c in CASES])
def test_backend_encloses_the_exact_value(name: str, what: str, expression: Any, exact: Any) -> None:
    B = backend(name)
    with mpmath.workdps(60):
        value = exact()
        x = expression(B)
        assert B.lower(x) <= value <= B.upper(x)
        assert B.upper(x) - B.lower(x) <= 1e-12 * abs(value) + 1e-300


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_division_by_an_interval_around_zero_proves_nothing(name: str) -> None:
    B = backend(name)
    q = B.point(1.0) / B.interval(-1.0, 1.0)
    assert B.upper(q) == math.inf or B.lower(q) == -math.inf


def test_backend_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="backend must be one of"):
        backend("float")


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_mean_value_form_encloses_the_difference(name: str) -> None:
    """f(x) = x exp(x) / (1 + x): (f(x + h) - f(x)) / h lies in f'(x + [0, 1] h)."""
    B = backend(name)
    x, h = 0.7, 1e-3
    d = dual.Dual(B.point(x) + B.interval(0.0, 1.0) * h, 1)
    derivative = (d * dual.exp(B, d) / (1 + d)).d
    with mpmath.workdps(50):
        def f(t: Any) -> Any:
            return t * mpmath.exp(t) / (1 + t)
        quotient = (f(mpmath.mpf(x) + mpmath.mpf(h)) - f(mpmath.mpf(x))) / mpmath.mpf(h)
    assert B.lower(derivative) <= quotient <= B.upper(derivative)


# --- families: their enclosures agree with the statements' own interval evaluation ---------------

FAMILY_KEYS = ["lemma8/d1-T2/as-stated", "lemma8/d1-T3/as-stated", "lemma5/d1-T2/as-stated",
               "lemma12/d1-T3/as-stated", "lemma13/d1-T4/as-proven", "lemma13/d1-T2/as-stated"]


def first_row_ratio(family: Family, instance: dict[str, Any]) -> float:
    """measured / bound of the first row only (the family's row), by the statement's mpmath code."""
    import numpy as np

    from sltcheck.registry import load

    module = load(family.statement)
    bound = float(module.VARIANTS[family.variant](instance, 40))
    if "X_perturbed" not in instance:  # Lemmas 5, 8: every row is the same
        return float(module.measured(instance, 40)) / bound
    from sltcheck.statements.shared import lipschitz

    X, Xp = (np.asarray(instance[k], dtype=np.float64) for k in ("X", "X_perturbed"))
    mask, weights, rows = np.asarray(instance["mask"]), lipschitz.target(instance), np.asarray([0])
    with mpmath.workdps(60):
        a = lipschitz._rows_mha(X, mask, weights, rows, 60)[0, 0]
        b = lipschitz._rows_mha(Xp, mask, weights, rows, 60)[0, 0]
        if "fc_layers" in instance:  # one FC layer of weight 1: Blk = 2 (Attn + x)
            a, b = 2 * (a + mpmath.mpf(X[0, 0])), 2 * (b + mpmath.mpf(Xp[0, 0]))
        return float(abs(a - b)) / bound


def visible_points(
    B: Any, family: Any, rng: random.Random, tries: int, want: int = 6
) -> list[tuple[list[float], float, int, dict[str, Any]]]:
    """Up to ``want`` of ``tries`` random points of ``family`` whose point ratio is at least 1e-3,
    each with that ratio (a lower end), its candidate and its instance."""
    out: list[tuple[list[float], float, int, dict[str, Any]]] = []
    for _ in range(tries):
        if len(out) == want:
            break
        point = [rng.uniform(d.low, d.high) for d in family.dimensions]
        lower, choice = point_ratio(B, family, point)
        if lower == -math.inf or lower < 1e-3:
            continue
        instance = family.instance(dict(zip([d.name for d in family.dimensions], point, strict=True)), choice)
        out.append((point, lower, choice, instance))
    return out


@pytest.mark.parametrize("key", FAMILY_KEYS)
def test_family_point_ratio_matches_the_statement(key: str) -> None:
    """Two code paths: the family's enclosure at a point vs sltcheck.harness.interval_verdict on its instance."""
    family = families()[key]
    B = backend(BACKEND_NAMES[0])
    points = visible_points(B, family, random.Random(7), tries=60)
    for point, lower, choice, instance in points:
        result = certified.evaluate(family.statement, instance, family.variant)
        (m_lo, _), (_, b_hi) = ends(result["measured"]), ends(result["bound"])
        ratio = float(m_lo / b_hi)  # the max over every row: at least the family's row
        assert ratio >= lower * (1 - 1e-5), (point, choice)
        # the point's enclosure (a mean value over the perturbation's segment) holds the family's row
        upper = evaluate_box(B, family, (tuple(point), tuple(point))).upper
        row = first_row_ratio(family, instance)
        assert lower * (1 - 1e-9) <= row <= upper * (1 + 1e-9), (point, choice)
        assert upper <= lower * 1.25  # not blurred: the segment is at most eps_max = 0.1 long
        # and a box around the point encloses it too
        box = (tuple(p - 1e-9 * (d.high - d.low) for p, d in zip(point, family.dimensions, strict=True)),
               tuple(p + 1e-9 * (d.high - d.low) for p, d in zip(point, family.dimensions, strict=True)))
        assert evaluate_box(B, family, box).upper >= row * (1 - 1e-9)
    assert len(points) == 6


SUBSET_SUM_KEYS = ["lemma2/targets-2x1-n4-source0/as-proven", "lemma2/targets-2x1-n4-source0/bound-quartered",
                   "lemma4/targets-2x1-n4-source0/construction", "lemma7/targets-2x1-n4-source0/construction",
                   "lemma7/targets-2x1-n4-source0/bound-halved"]


@pytest.mark.parametrize("key", SUBSET_SUM_KEYS)
def test_subset_sum_family_encloses_the_statement(key: str) -> None:
    """Two code paths: the family's distance ranges at a point (and on a box around it) vs the
    statement's own mpmath code (enumeration of every mask pair, the subset-sum solver's masks)."""
    from sltcheck.assumptions import violations
    from sltcheck.harness.runner import evaluate
    from sltcheck.registry import load

    family = families()[key]
    module = load(family.statement)
    bound = {m.name: m.bound for m in module.MUTANTS}.get(family.variant)
    B = backend(BACKEND_NAMES[0])
    points = visible_points(B, family, random.Random(11), tries=80)
    for point, lower, choice, instance in points:
        assert not violations(family.statement, instance)
        assert family.contains is not None
        assert family.contains(instance)
        ratio = evaluate(family.statement, family.variant, instance, dps=40, bound=bound).ratio
        upper = evaluate_box(B, family, (tuple(point), tuple(point))).upper
        assert lower * (1 - 1e-9) <= ratio <= upper * (1 + 1e-9), (point, choice)
        box = (tuple(p - 1e-6 for p in point), tuple(p + 1e-6 for p in point))
        assert evaluate_box(B, family, box).upper >= ratio * (1 - 1e-9)
    assert len(points) == 6


def test_theorem9_family_point_ratio_is_below_the_statement() -> None:
    """Two code paths: the family's row-1 enclosure at a point vs the statement's own mpmath code
    (the max over both rows, so at least the family's row), and the two agree where row 1 is the max."""
    from sltcheck.harness.runner import evaluate

    family = families()["theorem9/d1-T2/as-proven"]
    B = backend(BACKEND_NAMES[0])
    rng = random.Random(3)
    agree = 0
    for _ in range(12):
        point = [rng.uniform(d.low, d.high) for d in family.dimensions]
        lower, choice = point_ratio(B, family, point)
        instance = family.instance(dict(zip([d.name for d in family.dimensions], point, strict=True)), choice)
        assert family.contains is not None
        assert family.contains(instance)
        ratio = evaluate("theorem9", "as-proven", instance, dps=40).ratio
        upper = evaluate_box(B, family, (tuple(point), tuple(point))).upper
        assert lower * (1 - 1e-6) <= ratio
        assert lower <= upper
        agree += ratio <= upper * (1 + 1e-6)
    assert agree >= 6


@pytest.mark.parametrize("key", [k for k in SUBSET_SUM_KEYS if families()[k].expected == "counterexample"])
def test_subset_sum_mutant_families_are_certified_counterexamples(tmp_path: Path, key: str) -> None:
    entry = run(families()[key], tmp_path, rounds=20)
    assert entry["verdict"] == "counterexample"
    assert entry["counterexample"]["certified_ratio"][0] > 1
    assert entry["counterexample"]["decided_by"] == "interval (sltcheck.certified)"  # a second code path


@pytest.mark.lemma12
@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_both_backends_give_close_box_enclosures(name: str) -> None:
    family = families()["lemma12/d1-T2/as-stated"]
    box = (tuple(d.low + 0.3 * (d.high - d.low) for d in family.dimensions),
           tuple(d.low + 0.35 * (d.high - d.low) for d in family.dimensions))
    result = evaluate_box(backend(name), family, box)
    reference = evaluate_box(backend("mpmath"), family, box)
    # balls (midpoint-radius) are a little wider than intervals on a wide box; both hold the midpoint
    assert result.upper == pytest.approx(reference.upper, rel=0.05)
    assert min(result.upper, reference.upper) >= max(result.lower, reference.lower)


# --- verdicts ------------------------------------------------------------------------------------


def test_lemma8_bracket_contains_the_closed_form(tmp_path: Path) -> None:
    family = families()["lemma8/d1-T2/as-stated"]
    entry = run(family, tmp_path, rounds=12)
    assert family.known_supremum is not None
    assert entry["sup_lower"] <= family.known_supremum <= entry["sup_upper"]
    assert entry["verdict"] in ("held", "undecided")
    assert entry["best"]["certified_ratio"][0] <= family.known_supremum


def test_lemma13_as_stated_is_a_certified_counterexample_that_replays(tmp_path: Path) -> None:
    """No seed given: the family seeds itself with the worst-case search restricted to it."""
    from sltcheck.harness.runner import evaluate
    from sltcheck.harness.serialise import decode_instance

    family = families()["lemma13/d1-T4/as-stated"]
    assert family.seeds is None
    entry = run(family, tmp_path, budget=30.0, search=True)
    assert entry["verdict"] == "counterexample"
    replay = entry["counterexample"]
    assert replay["found_by"].startswith("search_worst_case(lemma13, as-stated, seed ")
    assert entry["seeds"][-1]["in_family"]
    assert entry["seeds"][-1]["outcome"] == "violated"
    verdict = evaluate("lemma13", replay["variant"], decode_instance(replay["instance"]), dps=60)
    assert verdict.violated
    assert replay["certified_ratio"][0] > 1


@pytest.mark.lemma8
def test_a_bound_made_too_small_is_never_certified_held(tmp_path: Path) -> None:
    """The mutant exp(eps/2) - 1 (ratio near 2): the branch-and-bound must find it violated."""
    [mutant] = lemma8_family.MUTANT_FAMILIES
    assert mutant.key in families()
    entry = run(mutant, tmp_path, rounds=40)
    assert entry["verdict"] == "counterexample"
    assert entry["counterexample"]["certified_ratio"][0] > 1


@pytest.mark.lemma8
def test_a_toy_family_is_held_with_its_exact_supremum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ratio = 0.9 x y over [0, 1]^2: held, supremum 0.9 bracketed to the tolerance."""
    toy = Family(statement="lemma8", name="toy", variant="as-stated",
                 dimensions=(Dimension("x", 0.0, 1.0), Dimension("y", 0.0, 1.0)),
                 enclose=lambda B, v: [(v["x"] * v["y"] * 0.9, B.point(1.0))],
                 instance=lambda point, choice: {}, description="toy")
    monkeypatch.setitem(families(), toy.key, toy)
    entry = run(toy, tmp_path, backend_name="mpmath")
    assert entry["verdict"] == "held"
    assert entry["finished"]
    assert 0.9 / 1.01 <= entry["sup_lower"] <= 0.9 <= entry["sup_upper"] <= 0.9 * 1.01
    assert entry["proven_fraction"] == 1.0


@pytest.mark.lemma8
def test_a_box_enclosure_below_its_own_points_raises_instead_of_holding(tmp_path: Path) -> None:
    """A wrong enclosure (boxes at 0.5 while the points reach 0.9 x y): the run must not report "held" with a
    lower end above its upper end; nothing registers the toy (in this process the family travels itself)."""
    def enclose(B: Any, v: dict[str, Any]) -> list[Any]:
        point = all(B.is_point(x) for x in v.values())
        return [(v["x"] * v["y"] * 0.9 if point else B.interval(0.0, 0.5), B.point(1.0))]

    toy = Family(statement="lemma8", name="toy-wrong", variant="as-stated",
                 dimensions=(Dimension("x", 0.0, 1.0), Dimension("y", 0.0, 1.0)), enclose=enclose,
                 instance=lambda point, choice: {}, description="toy")
    assert toy.key not in families()
    with pytest.raises(RuntimeError, match="exceeds its proved upper end"):
        run(toy, tmp_path, backend_name="mpmath", rounds=3)


@pytest.mark.lemma8
def test_a_family_other_processes_cannot_rebuild_is_refused(tmp_path: Path) -> None:
    """Workers in other processes look a family up by its key: a changed family under a registered key is
    refused, not enclosed there as the registered one."""
    from sltcheck.executors import ProcessExecutor

    [mutant] = lemma8_family.MUTANT_FAMILIES
    changed = replace(mutant, enclose=lambda B, v: [(B.point(0.0), B.point(1.0))])
    with pytest.raises(ValueError, match="not the registered family"):
        run(changed, tmp_path, rounds=1, executor=ProcessExecutor(2))


@pytest.mark.lemma8
def test_the_climb_raises_the_lower_bound_to_an_interior_supremum(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """ratio = 0.9 - ((x - 0.3)^2 + (y - 0.7)^2) / 4: after one round the midpoints are far from
    (0.3, 0.7); the climb from the best of them reaches the supremum 0.9."""
    toy = Family(statement="lemma8", name="toy-interior", variant="as-stated",
                 dimensions=(Dimension("x", 0.0, 1.0), Dimension("y", 0.0, 1.0)),
                 enclose=lambda B, v: [(0.9 - ((v["x"] - 0.3) * (v["x"] - 0.3) + (v["y"] - 0.7) * (v["y"] - 0.7)) / 4,
                                        B.point(1.0))],
                 instance=lambda point, choice: {}, description="toy")
    monkeypatch.setitem(families(), toy.key, toy)
    climbed = run(toy, tmp_path, "a.sqlite", backend_name="mpmath", rounds=1)
    still = run(toy, tmp_path, "b.sqlite", backend_name="mpmath", rounds=1, climb=False)
    assert climbed["best_source"] == "climb"
    assert climbed["sup_lower"] > 0.9 - 1e-9
    assert still["best_source"] != "climb"
    assert still["sup_lower"] < 0.9 - 1e-3


# --- resume, determinism, executors --------------------------------------------------------------


def _stable(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in ("seconds", "boxes_per_second", "progress")}


@pytest.mark.lemma12
def test_same_rounds_same_result_and_resume_continues(tmp_path: Path) -> None:
    family = families()["lemma12/d1-T2/as-stated"]
    once = run(family, tmp_path, "a.sqlite", rounds=4)
    split = run(family, tmp_path, "b.sqlite", rounds=2)
    resumed = run(family, tmp_path, "b.sqlite", rounds=4)
    assert split["rounds"] == 2
    assert resumed["rounds"] == 4
    assert _stable(resumed) == _stable(once)


@pytest.mark.lemma12
def test_another_configuration_in_the_same_directory_is_refused(tmp_path: Path) -> None:
    family = families()["lemma12/d1-T2/as-stated"]
    run(family, tmp_path, rounds=1)
    with pytest.raises(ValueError, match="one configuration per run directory"):
        run(family, tmp_path, rounds=2, tolerance=0.05)


@pytest.mark.lemma12
@pytest.mark.slow  # starting worker processes takes a minute on a loaded machine
@pytest.mark.parametrize("where", ["processes", "dask"])
def test_parallel_executors_give_the_same_result(tmp_path: Path, where: str) -> None:
    from sltcheck.executors import DaskExecutor, ProcessExecutor

    if where == "dask":
        pytest.importorskip("distributed")
    family = families()["lemma12/d1-T2/as-stated"]
    alone = run(family, tmp_path, "alone.sqlite", rounds=2)
    with (ProcessExecutor(2) if where == "processes" else DaskExecutor(local_workers=2)) as executor:
        pooled = run(family, tmp_path, "pooled.sqlite", rounds=2, executor=executor)
    assert _stable(pooled) == _stable(alone)


# --- selection and the command line --------------------------------------------------------------


@pytest.mark.lemma8
def test_select_names_what_is_allowed() -> None:
    assert {f.statement for f in select(["lemma8"])} == {"lemma8"}
    with pytest.raises(ValueError, match="--only must name statements with families"):
        select(["lemma99"])
    with pytest.raises(ValueError, match="--family must be one of"):
        select(["lemma8"], ["d1-T9"])


@pytest.mark.lemma13
def test_cli_writes_replayable_counterexamples_and_findings(tmp_path: Path) -> None:
    from sltcheck.certify.session import replay_file
    from sltcheck.cli import main

    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps(seal(replay_file([]))))  # a findings.json with nothing in it
    out = tmp_path / "run"
    assert main(["certify", "--only", "lemma13", "--family", "lemma13/d1-T4/as-stated", "--budget", "5",
                 "--out", str(out), "--findings", str(findings), "--quiet"]) == 0
    data = json.loads((out / "certified.json").read_text())
    assert data["families"][0]["verdict"] == "counterexample"
    assert json.loads(findings.read_text())["certified_over_family"]["families"][0]["key"] == "lemma13/d1-T4/as-stated"
    # replay re-decides the instance at 50 digits: violated, hence exit status 1
    assert main(["check", "--replay", str(out / "counterexamples.json"), "--dps", "50"]) == 1


@pytest.mark.lemma13
def test_report_and_readme_show_the_certified_families(tmp_path: Path) -> None:
    from sltcheck.report import findings_text
    from sltcheck.report import page as report

    entry = run(families()["lemma13/d1-T4/as-stated"], tmp_path, budget=30.0, search=True)
    data = {"findings": [], "mutants": [], "certified_over_family": {"schema_version": 1, "families": [entry]}}
    html = report.render(report.build({"findings": [data], "synthetic": [], "lm": []}))
    assert "certified over family lemma13/d1-T4/as-stated" in html
    assert "counterexample" in html
    assert "| lemma13/d1-T4/as-stated | counterexample |" in findings_text.render(data)


@pytest.mark.lemma13
def test_search_findings_seed_the_lower_bound(tmp_path: Path) -> None:
    """A findings.json's worst instance inside the family raises the lower bound from the start."""
    from sltcheck.certify.session import replay_file
    from sltcheck.cli.certify import search_seeds
    from sltcheck.statements.lemma13 import COUNTEREXAMPLES

    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps(replay_file([{"statement": "lemma13", "variant": "as-proven", "family": "-",
                                                 "certified_ratio": [0.5], "instance": COUNTEREXAMPLES["as-stated"]}])))
    seeds = search_seeds(findings)
    assert len(seeds["lemma13"]) == 1
    bare = replace(families()["lemma13/d1-T4/as-proven"], seeds=None)
    assert bare.contains is not None
    assert bare.contains(seeds["lemma13"][0])
    entry = run(bare, tmp_path, rounds=0, seeds=seeds["lemma13"])
    assert entry["sup_lower"] == pytest.approx(0.5109, abs=1e-3)


# --- Theorem 11: an FC layer after Theorem 9's family ---------------------------------------------


# (family, the statement's forward in sltcheck.model.reference, rng seed, points)
FIRST_ROW_CASES = [
    ("theorem11/d1-T2-L1/as-proven", "block", 5, 8),
    ("theorem11/d1-T2-H2-L1/as-proven", "block", 6, 6),
    ("theorem14/B2-d1-T2/as-proven", "transformer", 9, 6),
    ("theorem14/B2-d1-T2/lipschitz-one", "transformer", 9, 6),
]


@pytest.mark.parametrize(("key", "forward", "seed", "points"), FIRST_ROW_CASES)
def test_chain_family_encloses_the_first_row_of_the_statement(key: str, forward: str, seed: int, points: int) -> None:
    """Two code paths: the family's row-1 enclosure at a point (and on a box around it) vs the
    statement's own mpmath forward (reference.block or reference.transformer) and bound at 40 digits."""
    import numpy as np

    from sltcheck.harness.runner import evaluate
    from sltcheck.model import reference
    from sltcheck.registry import load

    family = families()[key]
    module = load(family.statement)
    mutants = {m.name: m.bound for m in module.MUTANTS}
    bound = mutants[family.variant] if family.variant in mutants else module.VARIANTS[family.variant]
    run_forward = getattr(reference, forward)
    B = backend(BACKEND_NAMES[0])
    rng = random.Random(seed)
    for _ in range(points):
        point = [rng.uniform(d.low, d.high) for d in family.dimensions]
        lower, choice = point_ratio(B, family, point)
        instance = family.instance(dict(zip([d.name for d in family.dimensions], point, strict=True)), choice)
        assert family.contains is not None
        assert family.contains(instance)
        X, mask = np.asarray(instance["X"]), np.asarray(instance["mask"])
        with mpmath.workdps(40):
            gap = (run_forward(X, mask, module.source_of(instance), 40)[0, 0]
                   - run_forward(X, mask, module.target_of(instance), 40)[0, 0])
            row = float(abs(gap) / bound(instance, 40))
        upper = evaluate_box(B, family, (tuple(point), tuple(point))).upper
        assert lower * (1 - 1e-6) <= row <= upper * (1 + 1e-6), (point, choice)
        box = (tuple(p - 1e-9 * (d.high - d.low) for p, d in zip(point, family.dimensions, strict=True)),
               tuple(p + 1e-9 * (d.high - d.low) for p, d in zip(point, family.dimensions, strict=True)))
        assert evaluate_box(B, family, box).upper >= row * (1 - 1e-6)
        # the statement's ratio is the max over both rows: at least the family's row
        assert evaluate(family.statement, family.variant, instance, dps=40, bound=bound).ratio >= row * (1 - 1e-9)


def test_theorem11_half_family_is_a_certified_counterexample_that_replays(tmp_path: Path) -> None:
    from sltcheck.harness.runner import evaluate
    from sltcheck.harness.serialise import decode_instance
    from sltcheck.statements import theorem11

    family = families()["theorem11/d1-T2-L1/half"]
    entry = run(family, tmp_path, rounds=20)
    assert entry["verdict"] == "counterexample"
    replay = entry["counterexample"]
    assert replay["certified_ratio"][0] > 1
    half = {m.name: m.bound for m in theorem11.MUTANTS}["half"]
    verdict = evaluate("theorem11", "half", decode_instance(replay["instance"]), dps=60, bound=half)
    assert verdict.violated
    # and the same instance holds the as-proven bound (the mutant, not the statement, is refuted)
    assert not evaluate("theorem11", "as-proven", decode_instance(replay["instance"]), dps=60).violated


# --- Theorem 14: two blocks, the errors in block 1 propagated through block 2 ----------------------


def test_theorem14_lipschitz_one_family_is_a_certified_counterexample_that_replays(tmp_path: Path) -> None:
    from sltcheck.harness.runner import evaluate
    from sltcheck.harness.serialise import decode_instance
    from sltcheck.statements import theorem14

    entry = run(families()["theorem14/B2-d1-T2/lipschitz-one"], tmp_path, rounds=20)
    assert entry["verdict"] == "counterexample"
    replay = entry["counterexample"]
    assert replay["certified_ratio"][0] > 1
    instance = decode_instance(replay["instance"])
    mutant = {m.name: m.bound for m in theorem14.MUTANTS}["lipschitz-one"]
    assert evaluate("theorem14", "lipschitz-one", instance, dps=60, bound=mutant).violated
    assert not evaluate("theorem14", "as-proven", instance, dps=60).violated
