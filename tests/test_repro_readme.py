"""The README's reproduction section is generated from run directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sltcheck.repro import readme, synthetic


def fig8_document(losses: dict[float, list[float]]) -> dict:
    runs = [{"mode": "edge-popup", "scale": s, "best_val_loss": v, "seed": i}
            for s, values in losses.items() for i, v in enumerate(values)]
    return {"figure": "fig8", "preset": "cpu-learn", "_source": "runs/x", "runs": runs,
            "config": {"theory_scale": 2.378, "head_dim": 32, "train": {"epochs": 4, "steps_per_epoch": 100,
                                                                         "lr": 0.03},
                       "model": {"n_layer": 2, "n_embd": 128, "vocab_size": 512}}}


def test_fig8_minimum_has_intervals_and_says_where_the_minimum_is():
    analysis = readme.fig8_minimum(fig8_document({1.0: [5.0, 5.1, 5.2], 2.378: [4.5, 4.6, 4.55],
                                                  5.0: [4.9, 5.0, 4.95]}))
    assert analysis["best_scale"] == 2.378 and analysis["theory_within_best_interval"] is True
    assert all(r["half_width"] > 0 for r in analysis["rows"])
    far = readme.fig8_minimum(fig8_document({1.0: [4.0, 4.01, 4.02], 2.378: [5.0, 5.01, 5.02]}))
    assert far["best_scale"] == 1.0 and far["theory_within_best_interval"] is False
    single = readme.fig8_minimum(fig8_document({1.0: [4.0], 2.378: [5.0]}))
    assert single["theory_within_best_interval"] is None


def test_the_section_puts_the_paper_beside_each_run(tmp_path: Path):
    config = synthetic.preset_config("fig4", "quick", "theory", widths=(4, 8, 12), sources=2, test_samples=30,
                                     train_target=False)
    synthetic.run(config, str(tmp_path / "fig4"), progress=False)
    (tmp_path / "fig8").mkdir()
    (tmp_path / "fig8" / "results.json").write_text(json.dumps(fig8_document({1.0: [5.0, 5.2], 2.378: [4.9, 5.0]})))
    target = tmp_path / "README.md"
    target.write_text(f"intro\n{readme.START}\nold\n{readme.END}\nrest\n")
    from sltcheck.cli import main

    assert main(["repro", "readme", "--in", str(tmp_path / "fig4"), str(tmp_path / "fig8"),
                 "--readme", str(target)]) == 0
    text = target.read_text()
    assert text.startswith("intro\n") and text.endswith("rest\n") and "old" not in text
    assert "Paper: eps = 0.8 exp(-0.06 n_K)" in text and "**mode theory**" in text
    assert "Fit all: gamma = " in text and "**Figure 8.**" in text and "s = 2.38: 4.950 ±" in text


def test_missing_inputs_and_markers_are_named(tmp_path: Path):
    with pytest.raises(ValueError, match="paths must be run directories"):
        readme.load([str(tmp_path)])
    (tmp_path / "README.md").write_text("no markers")
    with pytest.raises(ValueError, match="readme must contain the markers"):
        readme.rewrite(tmp_path / "README.md", "x")
