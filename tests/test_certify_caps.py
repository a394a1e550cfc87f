"""A family capped by another (``Family.capped_by``): the cap's certified upper end closes the boxes it proves, the
cap runs first, the results record it and every reader checks it; and Lemma 13's cap, the limit family
``d1-T{T}-limit`` (the ratio at eps -> 0 over the whole cube), bounds the statement's own ratio, evaluated in
mpmath from the lemma's formula (a second code path), at every eps of the segment family; mutants are refuted.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import mpmath
import numpy as np
import pytest

from sltcheck.certificates import family_problems
from sltcheck.certify import Dimension, Family, check_caps, families
from sltcheck.certify.session import CertifyConfig, earlier_families, rederived, run
from sltcheck.certify.store import Store
from sltcheck.numerics.balls import backend
from sltcheck.statements.lemma12 import token_families

RNG_SEED = 20261208


def _toys() -> tuple[Family, Family]:
    """A cap (ratio 0.9 x over [0, 1]: supremum 0.9) and a family it caps, whose own enclosure proves nothing
    (5 on every box) while its points reach 0.8 x y."""
    cap = Family(statement="lemma8", name="toy-cap", variant="as-stated", dimensions=(Dimension("x", 0.0, 1.0),),
                 enclose=lambda B, v: [(v["x"] * 0.9, B.point(1.0))], instance=lambda point, choice: {},
                 description="toy cap")

    def enclose(B: Any, v: dict[str, Any]) -> list[Any]:
        point = all(B.is_point(x) for x in v.values())
        return [(v["x"] * v["y"] * 0.8 if point else B.point(5.0), B.point(1.0))]

    capped = Family(statement="lemma8", name="toy-capped", variant="as-stated",
                    dimensions=(Dimension("x", 0.0, 1.0), Dimension("y", 0.0, 1.0)), enclose=enclose,
                    instance=lambda point, choice: {}, description="toy capped", capped_by=cap.key)
    return cap, capped


@pytest.fixture
def toys(monkeypatch: pytest.MonkeyPatch) -> tuple[Family, Family]:
    cap, capped = _toys()
    monkeypatch.setitem(families(), cap.key, cap)
    monkeypatch.setitem(families(), capped.key, capped)
    return cap, capped


def _certify(tmp_path: Path, *keys: str, rounds: int = 200) -> dict[str, Any]:
    return run(CertifyConfig(family=keys, out=tmp_path, backend="mpmath", rounds=rounds, search=False))


def _narrowing_cap() -> Family:
    """A cap whose upper end falls as its boxes narrow: 0.9 x plus half the box's width (1.4 on the whole box,
    1.15 after one round, below 1 after three)."""
    return replace(_toys()[0], enclose=lambda B, v: [(v["x"] * 0.9 + (B.upper(v["x"]) - B.lower(v["x"])) * 0.5,
                                                      B.point(1.0))])


@pytest.mark.lemma8
def test_the_cap_runs_first_even_when_not_selected(toys: tuple[Family, Family]) -> None:
    cap, capped = toys
    for keys in ((capped.key,), (capped.key, cap.key), (cap.key, capped.key)):
        assert [f.key for f in CertifyConfig(family=keys).families()] == [cap.key, capped.key]


@pytest.mark.lemma8
def test_a_capped_family_is_held_at_its_cap_s_upper_end(tmp_path: Path, toys: tuple[Family, Family]) -> None:
    cap, capped = toys
    data = _certify(tmp_path, capped.key)
    entries = {e["key"]: e for e in data["families"]}
    assert data["this_run"] == [cap.key, capped.key]
    held = entries[capped.key]
    assert held["verdict"] == "held"
    assert held["finished"]
    assert held["proven_fraction"] == 1.0
    assert held["sup_upper"] == entries[cap.key]["sup_upper"] == held["capped_by"]["cap"]
    assert 0.9 <= held["sup_upper"] <= 0.9 * 1.01
    assert held["proved_by_argument"] == {f"capped by {cap.key}": 1.0}
    assert family_problems(list(entries.values())) == []


@pytest.mark.lemma8
def test_without_its_cap_the_same_family_proves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutant: the capped family with no cap is undecided (its own enclosure is 5 everywhere)."""
    _, capped = _toys()
    alone = replace(capped, capped_by=None)
    monkeypatch.setitem(families(), alone.key, alone)
    entry = run(CertifyConfig(family=(alone.key,), out=tmp_path, backend="mpmath", rounds=5,
                              search=False))["families"][0]
    assert entry["verdict"] == "undecided"
    assert entry["proven_fraction"] == 0.0
    assert entry["capped_by"] is None


@pytest.mark.lemma8
def test_a_cap_above_1_closes_nothing_and_a_later_narrower_cap_decides(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap after one round of its family is 1.15: the capped family's boxes take it but stay open (undecided,
    nothing proved); once the cap's family goes on below 1, the capped family resumes and is held at the new cap,
    the least cap it took; a finished capped family resumed after its cap narrowed again runs no round and its
    results still agree with its store (the cap recorded is the one its rounds took)."""
    _, capped = _toys()
    cap = _narrowing_cap()
    monkeypatch.setitem(families(), cap.key, cap)
    monkeypatch.setitem(families(), capped.key, capped)
    _certify(tmp_path, cap.key, rounds=1)
    first = {e["key"]: e for e in _certify(tmp_path, capped.key, rounds=1)["families"]}
    assert first[cap.key]["sup_upper"] > 1
    assert first[capped.key]["verdict"] == "undecided"
    assert first[capped.key]["proven_fraction"] == 0.0
    assert first[capped.key]["capped_by"]["cap"] == first[cap.key]["sup_upper"]
    later = {e["key"]: e for e in _certify(tmp_path, capped.key, rounds=4)["families"]}
    assert later[cap.key]["sup_upper"] <= 1
    assert later[capped.key]["verdict"] == "held"
    assert later[capped.key]["capped_by"]["cap"] == later[cap.key]["sup_upper"]
    _certify(tmp_path, cap.key, rounds=200)
    last = {e["key"]: e for e in _certify(tmp_path, capped.key, rounds=200)["families"]}
    assert last[cap.key]["sup_upper"] < later[cap.key]["sup_upper"]
    assert last[capped.key]["capped_by"] == later[capped.key]["capped_by"]
    store = Store(tmp_path / "boxes.sqlite")
    try:
        assert earlier_families(tmp_path, store)[capped.key]["verdict"] == "held"  # re-read: nothing differs
    finally:
        store.close()


@pytest.mark.lemma8
def test_a_cap_below_what_its_family_proves_is_reported(tmp_path: Path, toys: tuple[Family, Family],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutant: the capped family's boxes take half the proved cap; re-reading its results says so."""
    import sltcheck.certify.run as driver

    _, capped = toys
    proved = driver.capping
    def halved(family: Family, store: Store) -> float | None:
        cap = proved(family, store)
        return None if cap is None else cap / 2

    monkeypatch.setattr(driver, "capping", halved)
    entry = {e["key"]: e for e in _certify(tmp_path, capped.key)["families"]}[capped.key]
    monkeypatch.setattr(driver, "capping", proved)
    store = Store(tmp_path / "boxes.sqlite")
    try:
        problems = rederived(entry, store)[1]
    finally:
        store.close()
    assert len(problems) == 1, problems
    assert "proves only" in problems[0]


@pytest.mark.lemma8
def test_a_cap_the_store_no_longer_proves_is_reported(tmp_path: Path, toys: tuple[Family, Family]) -> None:
    cap, capped = toys
    data = _certify(tmp_path, capped.key)
    entry = next(e for e in data["families"] if e["key"] == capped.key)
    store = Store(tmp_path / "boxes.sqlite")
    try:
        assert rederived(entry, store)[1] == []
    finally:
        store.close()
    with sqlite3.connect(tmp_path / "boxes.sqlite") as db:  # the cap's rows gone: nothing proves the cap now
        db.execute("DELETE FROM family WHERE key = ?", (cap.key,))
        db.execute("DELETE FROM box WHERE key = ?", (cap.key,))
    store = Store(tmp_path / "boxes.sqlite")
    try:
        problems = rederived(entry, store)[1]
    finally:
        store.close()
    assert len(problems) == 1, problems
    assert "proves no cap" in problems[0]


@pytest.mark.lemma8
def test_results_whose_cap_is_below_its_family_s_upper_end_are_refused(tmp_path: Path,
                                                                        toys: tuple[Family, Family]) -> None:
    cap, capped = toys
    entries = _certify(tmp_path, capped.key)["families"]
    edited = [{**e, "sup_upper": e["sup_upper"] * 1.5} if e["key"] == cap.key else e for e in entries]
    assert any("capped_by.cap" in p for p in family_problems(edited))
    dropped = [e for e in entries if e["key"] != cap.key]
    assert any("capped_by.cap" in p for p in family_problems(dropped))
    other = [{**e, "capped_by": {"family": "lemma8/toy/as-stated", "cap": 0.5}} if e["key"] == capped.key else e
             for e in entries]
    assert any("the family's cap is" in p for p in family_problems(other))


def test_a_cap_must_name_an_uncapped_family_of_the_same_statement() -> None:
    cap, capped = _toys()
    check_caps({cap.key: cap, capped.key: capped})
    for found in ({capped.key: capped},  # its cap missing
                  {cap.key: replace(cap, statement="lemma5"), capped.key: capped},
                  {cap.key: replace(cap, variant="as-proven"), capped.key: capped},  # another bound
                  {cap.key: replace(cap, capped_by=capped.key), capped.key: capped}):
        with pytest.raises(ValueError, match="capped_by must name an uncapped family of lemma8 as-stated"):
            check_caps(found)
    with pytest.raises(ValueError, match="capped_by must name another family"):
        replace(cap, capped_by=cap.key)


def test_every_registered_cap_is_a_registered_family() -> None:
    capped = [f for f in families().values() if f.capped_by]
    assert {f.key for f in capped} >= {"lemma13/d1-T3/as-stated", "lemma13/d1-T2/as-proven"}
    check_caps(families())


# --- Lemma 13's cap: the limit family bounds the statement at every eps --------------------------------------


def _row_one(a: Any, c: Any, tokens: list[Any]) -> Any:
    """The first row of Lemma 13's block at d = 1, w = 1, from the statement: 2 (c sum_k sigma_k x_k + x_1),
    sigma = softmax(a x_1 x_k), in mpmath."""
    weights = [mpmath.exp(a * tokens[0] * xk) for xk in tokens]
    return 2 * (c * mpmath.fsum(v * xk for v, xk in zip(weights, tokens, strict=True)) / mpmath.fsum(weights)
                + tokens[0])


def _statement_ratio(alpha: float, a: float, c: float, X: list[float], Xp: list[float], factor: float) -> float:
    """measured / bound of the first row, Lemma 13's bound factor (alpha (exp(4 alpha eps) - 1) + 2 eps) with eps
    the largest move, in mpmath at 50 digits."""
    with mpmath.workdps(50):
        eps = max(abs(mpmath.mpf(p) - mpmath.mpf(x)) for x, p in zip(X, Xp, strict=True))
        mp = [mpmath.mpf(v) for v in X], [mpmath.mpf(v) for v in Xp]
        measured = abs(_row_one(mpmath.mpf(a), mpmath.mpf(c), mp[1]) - _row_one(mpmath.mpf(a), mpmath.mpf(c), mp[0]))
        alpha_mp = mpmath.mpf(alpha)
        return float(measured / (factor * (alpha_mp * mpmath.expm1(4 * alpha_mp * eps) + 2 * eps)))


Instance = tuple[float, float, float, list[float], list[float]]  # alpha, a, W_V W_O, X, X'


def _instances(T: int, rng: np.random.Generator, count: int) -> list[Instance]:
    """(alpha, a, c, X, X') over the whole space: any signs and order, eps from 1e-6 to 0.1, any direction inside
    the ball; half with the tokens where Lemma 13's worst cases lie (x_1 near alpha, the others near -alpha)."""
    out = []
    while len(out) < count:
        kind = len(out) % 3  # 0: anywhere; 1: the worst region; 2: the worst region, a vertex direction, eps small
        alpha, a, c = rng.uniform(1, 2), rng.uniform(-1, 1), float(rng.choice([-1.0, 1.0]))
        eps = 10.0 ** (rng.uniform(-6, -4) if kind == 2 else rng.uniform(-6, -1))
        if kind:
            u = [rng.uniform(0.9, 1.0), *(-rng.uniform(0.9, 1.0) for _ in range(T - 1))]
        else:
            u = list(rng.uniform(-1, 1, T))
        X = [alpha * v for v in u]
        s = rng.choice([-1.0, 1.0], T) if kind == 2 else rng.uniform(-1, 1, T)
        Xp = [x + eps * sk for x, sk in zip(X, s, strict=True)]
        if all(abs(p) <= alpha for p in Xp):
            out.append((alpha, a, c, X, Xp))
    return out


def _limit_upper(enclose: Any, alpha: float, a: float, X: list[float], Xp: list[float]) -> float:
    """The limit family's upper over the box that holds the whole segment from X to X' (u_k over the hull of
    x_k / alpha and x'_k / alpha: any signs and order, the enclosure is a formula of them), every candidate."""
    arith = backend("arrays").scalar
    widen = 2.0 ** -50  # x / alpha rounded: the box must hold the exact quotients
    values = {"alpha": arith.point(alpha), "a": arith.point(a),
              **{f"u{k}": arith.interval(min(x, p) / alpha - widen, max(x, p) / alpha + widen)
                 for k, (x, p) in enumerate(zip(X, Xp, strict=True), start=1)}}
    return max(arith.magnitude(numerator)[1] / arith.lower(denominator) for numerator, denominator
               in enclose(arith, values))


@pytest.mark.lemma13
@pytest.mark.parametrize("T", [2, 3])
@pytest.mark.parametrize(("variant", "factor"), [("as-stated", 1.0), ("as-proven", 2.0)])
def test_the_limit_bounds_the_statement_at_every_eps(T: int, variant: str, factor: float) -> None:
    """The cap's argument, instance by instance: the statement's own ratio at any eps is at most the limit
    family's enclosure over the segment (the mean-value theorem, exprel >= 1)."""
    enclose = families()[f"lemma13/d1-T{T}-limit/{variant}"].enclose
    for alpha, a, c, X, Xp in _instances(T, np.random.default_rng(RNG_SEED), 40):
        ratio = _statement_ratio(alpha, a, c, X, Xp, factor)
        assert ratio <= _limit_upper(enclose, alpha, a, X, Xp), (alpha, a, c, X, Xp)


@pytest.mark.lemma13
@pytest.mark.parametrize(("with_block", "scale"), [(False, 1.0), (True, 1.02)])
def test_a_limit_without_the_block_s_factor_or_2_percent_low_is_refuted(with_block: bool, scale: float) -> None:
    """The mutants: the attention's derivative alone (no (1 + w) x (c Attn + x)), and the limit 2% too low (its
    bound 2% too large): some instance exceeds each (at a vertex direction and small eps the statement's ratio is
    within about eps of the limit's)."""
    mutant = token_families.limit_enclosure(3, with_block, scale, 2.0 * scale)
    exceeded = [_statement_ratio(alpha, a, c, X, Xp, 1.0) > _limit_upper(mutant, alpha, a, X, Xp)
                for alpha, a, c, X, Xp in _instances(3, np.random.default_rng(RNG_SEED), 40)]
    assert any(exceeded)


@pytest.mark.lemma13
def test_the_limit_is_the_same_at_minus_x_and_with_tokens_2_to_t_permuted() -> None:
    """The limit family's reductions (u_1 >= 0, u_2 <= ... <= u_T): its largest candidate at a point X is its
    largest at -X and at X with tokens 2 and 3 swapped (its candidates run over every vertex direction)."""
    family = families()["lemma13/d1-T3-limit/as-stated"]
    arith = backend("arrays").scalar
    rng = np.random.default_rng(RNG_SEED)

    def largest(alpha: float, a: float, u: list[float]) -> float:
        values = {"alpha": arith.point(alpha), "a": arith.point(a),
                  **{f"u{k}": arith.point(v) for k, v in enumerate(u, start=1)}}
        return max(arith.magnitude(numerator)[1] for numerator, _one in family.enclose(arith, values))

    for _ in range(12):
        alpha, a, u = rng.uniform(1, 2), rng.uniform(-1, 1), list(rng.uniform(-1, 1, 3))
        at = largest(alpha, a, u)
        assert largest(alpha, a, [-v for v in u]) == pytest.approx(at, rel=1e-12)
        assert largest(alpha, a, [u[0], u[2], u[1]]) == pytest.approx(at, rel=1e-12)


@pytest.mark.lemma13
def test_the_limit_at_a_point_is_the_statement_at_a_vanishing_eps() -> None:
    """The limit family's point value (a lower end of its supremum) is the statement's ratio as eps -> 0, along the
    candidate's direction (eps = 1e-30 at 50 digits: the two agree to far below float64's rounding)."""
    family = families()["lemma13/d1-T3-limit/as-stated"]
    arith = backend("arrays").scalar
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(12):
        point = {"alpha": rng.uniform(1, 2), "a": rng.uniform(-1, 1), "u1": rng.uniform(0, 0.9),
                 **{f"u{k}": rng.uniform(-0.9, 0.9) for k in (2, 3)}}
        values = {name: arith.point(v) for name, v in point.items()}
        for choice, (numerator, _one) in enumerate(family.enclose(arith, values)):
            direction, c = token_families.output_sign(choice, True)
            s = token_families.directions(3)[direction]
            X = [point["alpha"] * point[f"u{k}"] for k in (1, 2, 3)]
            with mpmath.workdps(50):
                eps = mpmath.mpf("1e-30")
                Xp = [mpmath.mpf(x) + eps * sk for x, sk in zip(X, s, strict=True)]
                alpha = mpmath.mpf(point["alpha"])
                measured = abs(_row_one(mpmath.mpf(point["a"]), mpmath.mpf(c), Xp)
                               - _row_one(mpmath.mpf(point["a"]), mpmath.mpf(c), [mpmath.mpf(x) for x in X]))
                exact = float(measured / (alpha * mpmath.expm1(4 * alpha * eps) + 2 * eps))
            low, high = arith.magnitude(numerator)[0], arith.magnitude(numerator)[1]
            assert math.isclose(exact, low, rel_tol=1e-12, abs_tol=1e-15)
            assert math.isclose(exact, high, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.lemma8
def test_a_box_s_upper_never_exceeds_its_parent_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An enclosure that is not inclusion-monotone (0.5 on the whole box, 0.8 on every smaller one, over the ratio
    0.4 x): the children keep their parent's 0.5, so the family's upper end never rises between rounds (a cap taken
    from it stays proved)."""
    def enclose(B: Any, v: dict[str, Any]) -> list[Any]:
        if all(B.is_point(x) for x in v.values()):
            return [(v["x"] * 0.4, B.point(1.0))]
        whole = B.upper(v["x"]) - B.lower(v["x"]) > 0.9
        return [(B.interval(0.0, 0.5 if whole else 0.8), B.point(1.0))]

    toy = replace(_toys()[0], name="toy-wider", enclose=enclose)
    monkeypatch.setitem(families(), toy.key, toy)
    entry = _certify(tmp_path, toy.key, rounds=3)["families"][0]
    assert entry["sup_upper"] < 0.6  # 0.5 rounded outward, not 0.8
    assert all(row[3] < 0.6 for row in entry["progress"])
