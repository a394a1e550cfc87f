"""Input-space brackets (``--input-space``): the difference form against the paper's objects in mpmath, its
enclosures containing them, brackets whose lower end is decided and whose upper end is proved, a mutant
enclosure refuted, and a sweep's records verified and re-derived."""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest

from sltcheck.model import reference
from sltcheck.model.difference import merged_difference, mha_difference, token_norms, transformer_difference
from sltcheck.model.weights import BlockWeights, FCWeights, MHAWeights, TransformerWeights
from sltcheck.numerics.interval_arrays import Intervals
from sltcheck.repro import input_space

RNG_SEED = 44


def _mha(rng: np.random.Generator, d_out: int = 1, width: int = 8, scale: float = 1.0) -> MHAWeights:
    return MHAWeights(*(rng.uniform(-scale, scale, shape) for shape in
                        ((1, 2, width), (1, 2, width), (1, 2, width), (1, width, d_out))))


def _near(weights: MHAWeights, rng: np.random.Generator, size: float) -> MHAWeights:
    return MHAWeights(*(w + rng.uniform(-size, size, w.shape) for w in weights.tensors()))


def _transformer(rng: np.random.Generator, blocks: int, hidden: int | None) -> TransformerWeights:
    fc = (lambda: FCWeights((rng.uniform(-1, 1, (hidden, 2)), rng.uniform(-1, 1, (2, hidden))))) if hidden else (
        lambda: FCWeights((rng.uniform(-1, 1, (2, 2)),)))
    return TransformerWeights(tuple(BlockWeights(_mha(rng, 2), fc()) for _ in range(blocks)))


def _mp_difference(evaluate, target, source, X: np.ndarray) -> np.ndarray:
    mask = np.ones((X.shape[0], X.shape[0]), dtype=bool)
    with mpmath.workdps(40):
        difference = evaluate(X, mask, source, 40) - evaluate(X, mask, target, 40)
        return np.vectorize(float)(difference)


def _pairs():
    rng = np.random.default_rng(RNG_SEED)
    target = _mha(rng)
    yield "mha", reference.mha, target, _near(target, rng, 1e-3), None
    target_tf, source_tf = _transformer(rng, 2, None), _transformer(rng, 2, 6)
    yield "transformer", reference.transformer, target_tf, source_tf, None


CASES = list(_pairs())


def _difference(target, source, X, intervals: bool):
    if isinstance(target, MHAWeights):
        return mha_difference(X, None, merged_difference(target, source, intervals))[1]
    merged = [merged_difference(t.attention, s.attention, intervals)
              for t, s in zip(target.blocks, source.blocks, strict=True)]
    return transformer_difference(X, target, source, merged)[1]


@pytest.mark.parametrize(("name", "evaluate", "target", "source", "_"), CASES, ids=[c[0] for c in CASES])
def test_difference_form_is_the_papers_difference(name, evaluate, target, source, _):
    X = np.random.default_rng(1).uniform(-1, 1, (3, 5, 2))
    found = _difference(target, source, X, intervals=False)
    for row in range(3):
        exact = _mp_difference(evaluate, target, source, X[row])
        assert np.allclose(found[row], exact, rtol=1e-9, atol=1e-14 * np.abs(exact).max())


@pytest.mark.parametrize(("name", "evaluate", "target", "source", "_"), CASES, ids=[c[0] for c in CASES])
def test_enclosure_over_a_box_contains_every_point(name, evaluate, target, source, _):
    rng = np.random.default_rng(2)
    low = rng.uniform(-1, 1, (4, 5, 2))
    high = low + rng.uniform(0, 0.05, low.shape)
    enclosed = _difference(target, source, Intervals(low, high), intervals=True)
    for row in range(4):
        for _trial in range(3):
            X = low[row] + (high[row] - low[row]) * rng.uniform(0, 1, low[row].shape)
            exact = _mp_difference(evaluate, target, source, X)
            assert np.all(enclosed.lo[row] <= exact)
            assert np.all(exact <= enclosed.hi[row])


def test_the_difference_stays_sharp_where_the_weights_nearly_agree():
    """Errors of 1e-13 are enclosed to a few percent: S and T enclosed apart would lose all of them."""
    rng = np.random.default_rng(3)
    target = _mha(rng)
    source = _near(target, rng, 1e-13)
    X = Intervals(rng.uniform(-1, 1, (1, 5, 2)))
    norms = token_norms(mha_difference(X, None, merged_difference(target, source, True))[1])
    assert np.all(norms.hi <= norms.lo * 1.05 + 1e-30)


@pytest.fixture
def small_budget(monkeypatch):
    monkeypatch.setattr(input_space, "BOX_BUDGET", {name: dict.fromkeys(input_space.FORMS, budget)
                                                    for name, budget in (("task", 4096), ("ball", 8192))})
    monkeypatch.setattr(input_space, "SAMPLE", 256)
    monkeypatch.setattr(input_space, "REFINED", 2)


def _bracket(space_name: str, target, source, length: int = 2):
    token = np.array([0.3, -0.2])
    space = (input_space.task_space(length, token) if space_name == "task"
             else input_space.ball_space(length, token, float(np.sqrt(2.0))))
    pair = input_space.SourcePair.of(target, source)
    starts = np.array([[0.5, 1.0]]) if space_name == "task" else np.zeros((0, 2 * length))
    return input_space.bracket(space, pair, starts, np.random.default_rng(0), 30)[0], pair, space


@pytest.mark.parametrize("space_name", input_space.SPACES)
def test_bracket_lower_is_decided_at_its_instance_and_upper_is_above_it(small_budget, space_name):
    rng = np.random.default_rng(4)
    target = _mha(rng)
    bracket, pair, space = _bracket(space_name, target, _near(target, rng, 1e-2))
    assert 0 < bracket.lower <= bracket.upper
    at_instance = pair.mp_error(space.mp_tokens(np.array(bracket.instance), 30), 30)
    assert bracket.lower == pytest.approx(float(at_instance), rel=1e-20)
    low, high = space.inner
    assert np.all(low <= bracket.instance)
    assert np.all(np.array(bracket.instance) <= high)


def _shrunk(merged, factor: float):
    return type(merged)(merged.qk, merged.qk_error * factor, merged.vo, merged.vo_error * factor)


def test_a_shrunken_enclosure_is_refuted_by_the_containment_check():
    """The mutant: the boxes' weight errors scaled by 0.9. The points' differences, decided in mpmath,
    leave its enclosure."""
    rng = np.random.default_rng(5)
    target = _mha(rng)
    source = _near(target, rng, 1e-2)
    merged = _shrunk(merged_difference(target, source, True), 0.9)
    low = rng.uniform(-1, 1, (4, 5, 2))
    high = low + 0.01
    enclosed = token_norms(mha_difference(Intervals(low, high), None, merged)[1])
    outside = 0
    for row in range(4):
        exact = _mp_difference(reference.mha, target, source, low[row])
        outside += int(np.any(np.linalg.norm(exact, axis=-1) > enclosed.hi[row]))
    assert outside > 0


def test_a_bracket_whose_upper_end_falls_below_its_decided_lower_end_refuses_to_stand(small_budget, monkeypatch):
    """The mutant: weight errors dropped from the boxes (upper 0). The error decided in mpmath at the search's
    instance exceeds it, and the bracket raises instead of recording a false certificate."""
    rng = np.random.default_rng(5)
    target = _mha(rng)
    source = _near(target, rng, 1e-2)
    honest = input_space.SourcePair.of(target, source)
    monkeypatch.setattr(input_space.SourcePair, "of", classmethod(
        lambda cls, t, s: cls(t, s, honest.points, [_shrunk(m, 0.0) for m in honest.boxes])))
    with pytest.raises(RuntimeError, match="exceeds its proved upper end"):
        _bracket("task", target, source)


def test_a_sweep_records_brackets_and_verify_rederives_them(tmp_path, small_budget):
    from sltcheck.jsonfiles import seal
    from sltcheck.repro import synthetic
    from sltcheck.repro.verify import summary_differences, verify

    config = synthetic.preset_config("fig4", "quick", "theory", widths=(4,), sources=1, test_samples=20,
                                     train_target=False, input_space=True)
    summary = synthetic.run(config, str(tmp_path / "run"), progress=False)
    brackets = summary["input_space"]
    row = brackets["rows"][0]
    assert row["test_max"] <= row["task"]["upper"]
    assert row["task"]["lower"] <= row["ball"]["upper"]
    assert (tmp_path / "run" / "input-space.svg").is_file()
    assert verify(tmp_path / "run") == []
    path = tmp_path / "run" / "summary.json"
    edited = json.loads(path.read_text())
    edited["input_space"]["rows"][0]["ball"]["upper"] *= 0.5
    path.write_text(json.dumps(seal({k: v for k, v in edited.items() if k != "digest"})))
    assert any("input_space" in line for line in summary_differences(json.loads(path.read_text()), path))


def test_verify_says_which_records_another_engine_bracketed(tmp_path, small_budget, monkeypatch):
    from sltcheck.repro import synthetic
    from sltcheck.repro.verify import verify

    config = synthetic.preset_config("fig4", "quick", "theory", widths=(4,), sources=1, test_samples=20,
                                     train_target=False, input_space=True)
    synthetic.run(config, str(tmp_path / "run"), progress=False)
    monkeypatch.setattr(input_space, "ENGINE", input_space.ENGINE + 1)  # as a later sltcheck would verify it
    found = verify(tmp_path / "run")
    assert found, "a record no engine here can recompute passed verify"
    assert all(f"engine {input_space.ENGINE - 1}, this sltcheck's is {input_space.ENGINE}" in line for line in found)


def test_a_record_of_another_engine_is_named_and_the_rest_of_it_still_compared():
    from sltcheck.repro.verify import other_engines

    def record(engine, error):
        brackets = {"task": {"upper": 1.0}} if engine is None else {"engine": engine, "task": {"upper": 1.0}}
        return {"error": error, "input_space": brackets}

    current = input_space.ENGINE
    recorded, derived = [record(None, 0.5), record(current, 0.5)], [record(current, 0.7), record(current, 0.5)]
    found = other_engines(recorded, derived, "row")
    assert found == [f"row[0].input_space: bracketed by input-space engine 1, this sltcheck's is {current}, so it "
                     "cannot be recomputed here (run the figure again with --input-space into a new --out)"]
    assert recorded[0] == {"error": 0.5}  # the error is still compared
    assert derived[0] == {"error": 0.7}
    assert recorded[1] == derived[1] == record(current, 0.5)  # the same engine: compared whole


def test_a_run_directory_holds_one_engine_s_brackets(tmp_path, monkeypatch):
    from sltcheck.errors import StoredResultError
    from sltcheck.repro.store import RunDirectory
    from sltcheck.repro.sweep_config import preset_config

    config = preset_config("fig4", "quick", "theory", widths=(4,), sources=1, input_space=True)
    with RunDirectory(tmp_path / "run", config.as_record()) as run:
        run.add("0", {"records": []})
    monkeypatch.setattr(input_space, "ENGINE", input_space.ENGINE + 1)
    with pytest.raises(StoredResultError, match="input_space_engine"):
        RunDirectory(tmp_path / "run", config.as_record())


@pytest.mark.parametrize("model", ["mha", "transformer"])
@pytest.mark.parametrize("space", input_space.SPACES)
def test_every_form_a_space_takes_has_a_budget(space, model):
    forms = {input_space.FORM[space, model]} | ({"interval"} if (space, model) == ("ball", "transformer") else set())
    assert all(form in input_space.BOX_BUDGET[space] for form in forms)


def test_readme_section_and_report_card_show_the_brackets(tmp_path, small_budget):
    from sltcheck.cli import main
    from sltcheck.repro import input_space_text, synthetic

    config = synthetic.preset_config("fig4", "quick", "theory", widths=(4,), sources=1, test_samples=20,
                                     train_target=False, input_space=True)
    synthetic.run(config, str(tmp_path / "run"), progress=False)
    page = tmp_path / "paper.md"
    from sltcheck.repro.readme import END, START

    page.write_text(f"# page\n\n{START}\n{END}\n\n{input_space_text.START}\nold\n{input_space_text.END}\n")
    assert main(["repro", "readme", "--in", str(tmp_path / "run"), "--readme", str(page)]) == 0
    text = page.read_text()
    assert "**Figure 4, every input.**" in text
    assert "The test set underestimates the worst error" in text
    assert "(input-space-fig4.svg)" in text
    assert (tmp_path / "input-space-fig4.svg").is_file()
    assert "old" not in text
    assert main(["report", "--in", str(tmp_path / "run"), "--out", str(tmp_path / "r.html")]) == 0
    assert "Every input: certified worst errors" in (tmp_path / "r.html").read_text()


def test_a_run_without_the_option_keeps_its_fingerprint():
    from sltcheck.repro import synthetic

    config = synthetic.preset_config("fig4", "quick", "theory")
    assert "input_space" not in config.as_record()
    assert synthetic.preset_config("fig4", "quick", "theory", input_space=True).as_record()["input_space"] is True


def _task_enclosure(pair, space, lows, highs, scale_gradient: float = 1.0):
    from sltcheck.numerics.jets import Jet, mean_value

    middle = lows + (highs - lows) / 2
    at_middle = pair.differences(space.tokens(middle, middle))
    jet = pair.differences(space.tokens(lows, highs, "mean-value"))
    jet = Jet(jet.value, jet.grad * scale_gradient)
    return mean_value(at_middle, jet, lows, highs, middle)


def _points_outside(pair, space, lows, highs, enclosure, rng) -> int:
    outside = 0
    for row in range(len(lows)):
        for _trial in range(3):
            point = lows[row] + (highs[row] - lows[row]) * rng.uniform(0, 1, lows.shape[1])
            X = space.mp_tokens(point, 40)
            evaluate = reference.mha if isinstance(pair.target, MHAWeights) else reference.transformer
            mask = np.ones((X.shape[0], X.shape[0]), dtype=bool)
            with mpmath.workdps(40):
                exact = np.vectorize(float)(evaluate(X, mask, pair.pruned, 40) - evaluate(X, mask, pair.target, 40))
            outside += int(np.any(exact < enclosure.lo[row]) or np.any(exact > enclosure.hi[row]))
    return outside


@pytest.mark.parametrize(("name", "evaluate", "target", "source", "_"), CASES, ids=[c[0] for c in CASES])
def test_mean_value_enclosure_over_task_boxes_contains_every_point(name, evaluate, target, source, _):
    rng = np.random.default_rng(6)
    pair = input_space.SourcePair.of(target, source)
    space = input_space.task_space(3, np.array([0.3, -0.2]) if name == "mha" else None)
    lows = rng.uniform([-3.0, 0.0], [3.0, 3.0], (4, 2))
    highs = lows + 0.02
    assert _points_outside(pair, space, lows, highs, _task_enclosure(pair, space, lows, highs), rng) == 0


@pytest.mark.parametrize("space_name", input_space.SPACES)
@pytest.mark.parametrize(("name", "evaluate", "target", "source", "_"), CASES, ids=[c[0] for c in CASES])
def test_affine_enclosure_over_boxes_contains_every_point(name, evaluate, target, source, _, space_name):
    rng = np.random.default_rng(8)
    pair = input_space.SourcePair.of(target, source)
    token = np.array([0.3, -0.2]) if name == "mha" else None
    if space_name == "task":
        space = input_space.task_space(3, token)
        lows = rng.uniform([-3.0, 0.0], [3.0, 3.0], (4, 2))
        highs = lows + 0.05
    else:
        space = input_space.ball_space(3, token, 1.0)
        lows = rng.uniform(-0.7, 0.5, (4, 6))
        highs = lows + 0.2
    enclosure = pair.differences(space.tokens(lows, highs, "affine")).range()
    assert _points_outside(pair, space, lows, highs, enclosure, rng) == 0


def test_a_mean_value_form_without_its_gradient_is_refuted():
    """The mutant: the jets' gradients dropped, leaving f(m) alone; points of the box fall outside it."""
    _, _, target, source, _ = CASES[0]
    rng = np.random.default_rng(7)
    pair = input_space.SourcePair.of(target, source)
    space = input_space.task_space(3, np.array([0.3, -0.2]))
    lows = rng.uniform([-3.0, 0.0], [3.0, 3.0], (4, 2))
    highs = lows + 0.02
    enclosure = _task_enclosure(pair, space, lows, highs, scale_gradient=0.0)
    assert _points_outside(pair, space, lows, highs, enclosure, rng) > 0
