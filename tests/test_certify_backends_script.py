"""benchmarks/certify_backends.py runs end to end: a row per statement and enclosed variant, both backends."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from sltcheck.harness import interval_verdict as certified
from sltcheck.numerics.balls import arb_available

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not arb_available(), reason="the benchmark needs python-flint")
def test_every_enclosed_variant_gets_a_row(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("certify_backends", ROOT / "benchmarks" / "certify_backends.py")
    assert spec is not None
    assert spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(sys, "argv", ["certify_backends.py", "--instances-only", "--repeats", "1", "--dps", "20"])
    script.main()
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    rows = {cells[0]: cells for cells in lines if cells and "/" in cells[0] and cells[1][0].isdigit()}
    expected = {f"{s}/{v}" for s, variants in certified.supported().items() for v in variants}
    assert set(rows) == expected
    for row in rows.values():
        assert float(row[1]) > 0
        assert float(row[2]) > 0
        assert row[-1].split("/")[0] in certified.OUTCOMES
