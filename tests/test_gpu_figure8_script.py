"""benchmarks/gpu_figure8.py runs end to end (its --tiny form, on the CPU)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from sltcheck.repro.lm.data import synthetic_text

ROOT = Path(__file__).resolve().parents[1]


def load_script():
    spec = importlib.util.spec_from_file_location("gpu_figure8", ROOT / "benchmarks" / "gpu_figure8.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_gpu_script_writes_what_the_report_reads(tmp_path: Path) -> None:
    data = tmp_path / "text"
    data.mkdir()
    (data / "valid.txt").write_text(synthetic_text(8_000, seed=0))
    (data / "test.txt").write_text(synthetic_text(3_000, seed=1))
    out = tmp_path / "out"
    assert load_script().main(["--tiny", "--out", str(out), "--data", str(data), "--device", "cpu"]) == 0
    summary = json.loads((out / "gpu-figure8.json").read_text())
    assert summary["tiny"]
    assert summary["edge_popup_over_dense"] > 0
    fig8 = json.loads((out / "fig8-cpu-xs" / "results.json").read_text())
    assert fig8["figure"] == "fig8"
    assert len(fig8["runs"]) == 2
    from sltcheck.report import page

    assert page.load_inputs([str(out / "fig8-cpu-xs")])["lm"][0]["figure"] == "fig8"
