"""The README's reproduction section is generated from run directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sltcheck.jsonfiles import seal
from sltcheck.repro import readme, synthetic


def fig8_document(losses: dict[float, list[float]]) -> dict:
    """A Figure 8 ``results.json`` that agrees with itself: every run's fields, its summary derived from them."""
    from sltcheck.repro.lm_results import summarize

    runs = [{"run_id": f"edge-popup-s{s:g}-seed{i}", "mode": "edge-popup", "scale": s, "keep_fraction": 0.3,
             "seed": i, "best_val_loss": v, "final_val_loss": v + 0.1, "nonzero_params": 1000}
            for s, values in losses.items() for i, v in enumerate(values)]
    return {"schema_version": 1, "figure": "fig8", "preset": "cpu-learn", "runs": runs, "summary": summarize(runs),
            "complete": True, "missing": [],
            "config": {"theory_scale": 2.378, "head_dim": 32,
                       "train": {"epochs": 4, "steps_per_epoch": 100, "batch_size": 32, "lr": 0.03, "min_lr": 0.003,
                                 "weight_decay": 0.0},
                       "model": {"n_layer": 2, "n_embd": 128, "block_size": 32, "vocab_size": 512}}}


def write_sealed(path: Path, document: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(seal(document)))
    return path


def test_fig8_minimum_has_intervals_and_says_where_the_minimum_is():
    analysis = readme.fig8_minimum(fig8_document({1.0: [5.0, 5.1, 5.2], 2.378: [4.5, 4.6, 4.55],
                                                  5.0: [4.9, 5.0, 4.95]}))
    assert analysis["best_scale"] == 2.378
    assert analysis["theory_within_best_interval"] is True
    assert all(r["half_width"] > 0 for r in analysis["rows"])
    far = readme.fig8_minimum(fig8_document({1.0: [4.0, 4.01, 4.02], 2.378: [5.0, 5.01, 5.02]}))
    assert far["best_scale"] == 1.0
    assert far["theory_within_best_interval"] is False
    single = readme.fig8_minimum(fig8_document({1.0: [4.0], 2.378: [5.0]}))
    assert single["theory_within_best_interval"] is None


def test_the_section_puts_the_paper_beside_each_run(tmp_path: Path):
    config = synthetic.preset_config("fig4", "quick", "theory", widths=(4, 8, 12), sources=2, test_samples=30,
                                     train_target=False)
    synthetic.run(config, str(tmp_path / "fig4"), progress=False)
    write_sealed(tmp_path / "fig8" / "results.json", fig8_document({1.0: [5.0, 5.2], 2.378: [4.9, 5.0]}))
    target = tmp_path / "README.md"
    target.write_text(f"intro\n{readme.START}\nold\n{readme.END}\nrest\n")
    from sltcheck.cli import main

    assert main(["repro", "readme", "--in", str(tmp_path / "fig4"), str(tmp_path / "fig8"),
                 "--readme", str(target)]) == 0
    text = target.read_text()
    assert text.startswith("intro\n")
    assert text.endswith("rest\n")
    assert "\nold\n" not in text
    assert ("| fit delta (95 % interval) | 0.06 (workshop version: 0.055) (Section 4.2, \"Varying the Hidden "
            "Dimensions\"; workshop version, Section 4)") in text
    assert "sltcheck, mode theory (`" in text
    assert "**Figure 8.**" in text
    assert "| s = 2.38 |" in text
    assert "4.950 ± " in text
    assert text.count("What differs and why:") == 2


def fig7_document(losses: dict[tuple[str, str, float], list[float]]) -> dict:
    """A combined Figure 7 document: (size, mode, scale) -> best validation losses over seeds."""
    runs = [{"size": size, "mode": mode, "scale": scale, "best_val_loss": value, "seed": seed,
             "nonzero_params": 100 if mode == "edge-popup" else 300}
            for (size, mode, scale), values in losses.items() for seed, value in enumerate(values)]
    train = {"epochs": 4, "steps_per_epoch": 50, "batch_size": 32, "lr": 0.03, "min_lr": 0.003, "weight_decay": 0.0}
    config = {"model": {"n_layer": 1, "n_embd": 128, "block_size": 32, "vocab_size": 512}, "head_dim": 64,
              "train": train, "dense_train": {**train, "lr": 0.003, "min_lr": 0.0003}}
    return {"schema_version": 1, "figure": "fig7", "preset": "a,b", "_source": "runs/fig7", "runs": runs,
            "config": {"sizes": ["a", "b"], "per_size": {"a": config, "b": config},
                       "theory_scale": {"a": 2.828, "b": 2.828}}}


def test_fig7_compares_the_series_of_each_size_by_intervals():
    document = fig7_document({
        ("a", "edge-popup", 1.0): [5.0, 5.1, 5.05], ("a", "edge-popup", 2.828): [4.5, 4.55, 4.6],
        ("a", "dense", 1.0): [4.0, 4.1, 4.05],
        ("b", "edge-popup", 1.0): [4.5, 4.6, 4.4], ("b", "edge-popup", 2.828): [4.45, 4.5, 4.4],
        ("b", "dense", 1.0): [4.0, 4.1, 4.05]})
    a, b = readme.fig7_comparison(document)
    assert a["theory_minus_s1"]["mean"] == pytest.approx(-0.5)
    assert a["theory_minus_dense"]["apart"]
    assert b["theory_minus_s1"]["mean"] == pytest.approx(-0.05)  # paired by seed: -0.05, -0.1, 0.0
    text = readme.render([document])
    assert "a: s = n_K^(1/4) below s = 1 by 0.500 ± 0.124 nats, paired over 3 seeds (interval below 0)" in text
    assert "b: s = n_K^(1/4) below s = 1 by 0.050 ± 0.124 nats, paired over 3 seeds (interval contains 0)" in text
    assert "dense below s = n_K^(1/4) by 0.500 nats (intervals apart)" in text
    assert "scores: lr 0.03 cosine to 0.003" in text
    assert "dense: lr 0.003 cosine to 0.0003" in text
    assert "(3 seeds)" in text
    assert "| a, dense (trained) (300 nonzero) | plot only, not in the text" in text


def test_missing_inputs_and_markers_are_named(tmp_path: Path):
    with pytest.raises(ValueError, match="paths must be run directories"):
        readme.load([str(tmp_path)])
    (tmp_path / "README.md").write_text("no markers")
    with pytest.raises(ValueError, match="readme must contain the markers"):
        readme.rewrite(tmp_path / "README.md", "x")


def test_a_rewrite_keeps_the_figures_it_was_not_given(tmp_path: Path):
    path = tmp_path / "README.md"
    path.write_text(f"head\n{readme.START}\n**Figure 4.**\n\nold four\n\n**Figure 7.**\n\nseven\n{readme.END}\ntail\n")
    readme.rewrite(path, "**Figure 4.**\n\nnew four\n\n**Figure 5.**\n\nfive\n")
    text = path.read_text()
    assert text.index("new four") < text.index("five") < text.index("seven")
    assert "old four" not in text
    assert text.startswith("head\n")
    assert text.endswith(f"{readme.END}\ntail\n")


SVG = "<svg onload=alert(1)>"


@pytest.mark.parametrize(("edit", "fragment"), [
    (lambda d: d["summary"][0].update(best_val_loss_mean=1.0), "summary[0].best_val_loss_mean: recorded 1.0"),
    (lambda d: d["runs"].pop(), "summary[1]"),
    (lambda d: d.update(complete=False), "complete: recorded False"),
    (lambda d: d.pop("digest"), "carries no digest"),
    (lambda d: d.update(preset="edited"), "was changed after sltcheck wrote it"),
])
def test_a_language_model_results_file_is_sealed_and_re_derived(tmp_path: Path, edit, fragment: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Figures 7-8's results.json follows the rule of every result file: sealed, its summary re-derived from its
    runs where it is read (an edit resealed is caught there, one not resealed by the digest)."""
    from sltcheck.cli import main

    document = seal(fig8_document({1.0: [5.0, 5.2], 2.378: [4.9, 5.0]}))
    edit(document)
    resealed = fragment not in ("carries no digest", "was changed after sltcheck wrote it")
    path = tmp_path / "fig8" / "results.json"
    path.parent.mkdir()
    path.write_text(json.dumps(seal(document) if resealed else document))
    for argv in (["repro", "readme", "--in", str(path.parent)],
                 ["report", "--in", str(path.parent), "--out", str(tmp_path / "r.html")]):
        assert main(argv) == 2
        line = capsys.readouterr().err
        assert fragment in line, line
        assert str(path) in line


def test_a_run_that_differs_from_its_sealed_run_file_is_refused(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from sltcheck.cli import main

    document = fig8_document({1.0: [5.0], 2.378: [4.9]})
    run = document["runs"][0]
    write_sealed(tmp_path / "fig8" / "runs" / f"{run['run_id']}.json",
                 {"schema_version": 1, "spec": {}, "result": {**run, "best_val_loss": 4.0}})
    write_sealed(tmp_path / "fig8" / "results.json", document)
    assert main(["repro", "readme", "--in", str(tmp_path / "fig8")]) == 2
    assert f"runs[{run['run_id']}].best_val_loss: recorded 5.0, derived 4.0" in capsys.readouterr().err


def test_repro_readme_shows_a_forged_string_as_text(tmp_path: Path) -> None:
    """A string of a result file (sealed again after the edit: the digest has no secret) never becomes markup."""
    from test_certificates import _html

    from sltcheck.cli import main

    document = fig8_document({1.0: [5.0, 5.2], 2.378: [4.9, 5.0]})
    document["preset"] = f"{SVG} *em* | $x$"
    write_sealed(tmp_path / "fig8" / "results.json", document)
    target = tmp_path / "page.md"
    target.write_text(f"{readme.START}\n{readme.END}\n")
    assert main(["repro", "readme", "--in", str(tmp_path / "fig8"), "--readme", str(target)]) == 0
    html = _html(target.read_text())
    assert "&lt;svg onload=alert(1)&gt; *em* | $x$" in html
    assert "<svg" not in html
    assert "<em>" not in html
    assert "math" not in html
