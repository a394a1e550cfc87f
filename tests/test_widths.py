"""The width calculator reproduces the paper's formulas and refuses bad inputs."""

from __future__ import annotations

import importlib
import json
import math

import pytest

from sltcheck.pruning import calibration, widths
from sltcheck.statements import theorem9 as t9
from sltcheck.statements import theorem11 as t11
from sltcheck.statements import theorem14 as t14


@pytest.mark.parametrize(("eps", "H", "d1", "d2", "alpha", "C"), [(0.1, 1, 2, 2, None, 1.0), (0.01, 4, 8, 3, 5.0, 2.5),
                                               (0.5, 2, 1, 9, 3.0, 0.7)])
def test_theorem9_and_11_formulas(eps, H, d1, d2, alpha, C):
    r = widths.widths(eps, H, d1, d2, alpha, L=3, C=C)
    a = max(math.sqrt(d1), math.sqrt(d2)) if alpha is None else alpha
    assert r["parameters"]["alpha"] == a
    assert r["theorem9"]["n_K"]["bound"] == pytest.approx(d1 * C * math.log(8 * H * a**3 * d1**1.5 / eps), rel=1e-12)
    assert r["theorem9"]["n_V"]["bound"] == pytest.approx(d1 * C * math.log(2 * H * a * d1 * math.sqrt(d2) / eps),
                                                          rel=1e-12)
    assert r["theorem11"]["n_MHA"]["bound"] == pytest.approx(d1 * C * math.log(32 * a**3 * H * d1**1.5 / eps),
                                                             rel=1e-12)
    assert r["theorem11"]["n_FC"]["bound"] == pytest.approx(d1 * C * math.log(24 * a * 3 * H * d1**2.5 / eps),
                                                            rel=1e-12)
    for w in (r["theorem9"]["n_K"], r["theorem11"]["n_FC"]):
        assert w["ceil"] >= w["bound"] > w["ceil"] - 1
        assert w["construction"] % d1 == 0


@pytest.mark.theorem9
@pytest.mark.theorem11
def test_agrees_with_statement_modules():
    r = widths.widths(0.02, 3, 4, 4, 2.5, L=2, C=1.7)
    ref9 = t9.required_widths(0.02, 3, 4, 4, 2.5, 1.7)
    ref11 = t11.required_widths(0.02, 3, 4, 2.5, 2, 1.7)
    assert r["theorem9"]["n_K"]["bound"] == pytest.approx(ref9["n_K"], rel=1e-12)
    assert r["theorem9"]["n_V"]["bound"] == pytest.approx(ref9["n_V"], rel=1e-12)
    assert r["theorem11"]["n_MHA"]["bound"] == pytest.approx(ref11["n_MHA"], rel=1e-12)
    assert r["theorem11"]["n_FC"]["bound"] == pytest.approx(ref11["n_FC"], rel=1e-12)


@pytest.mark.parametrize("B", [2, 3, 5])
def test_theorem14_blocks_match_proof_and_helper(B):
    eps, H, d1, a, L, C = 0.05, 2, 3, 2.0, 2, 1.3
    r = widths.widths(eps, H, d1, alpha=a, L=L, B=B, C=C)
    ref = t14.required_widths(eps, H, d1, a, L, B, C)
    for b, block in enumerate(r["theorem14"]["blocks"]):
        assert block["n_MHA"]["bound"] == pytest.approx(ref["n_MHA"][b], rel=1e-12)
        assert block["n_FC"]["bound"] == pytest.approx(ref["n_FC"][b], rel=1e-12)
        ex = t14.exponents(b + 1, B)
        mono = widths.block_monomial(b + 1, B)
        assert ex["mha"] == mono["mha"]
        assert ex["fc"] == mono["fc"]
        for key, value in widths.statement_exponents(b + 1, B).items():
            assert ex[key] == value
    # the proof's own expression for the last block: 32 (2 beta_B)^3 H d1^{3/2} 2 / eps
    beta_B = a * (4 * H * math.sqrt(d1)) ** (B - 1)
    last = r["theorem14"]["blocks"][-1]["n_MHA"]["bound"]
    assert last == pytest.approx(d1 * C * math.log(32 * (2 * beta_B) ** 3 * H * d1**1.5 * 2 / eps), rel=1e-10)


def test_exponents_are_quadratic_in_b_and_B():
    # second differences in b (at fixed B) are constant: the f's and g's are quadratic forms
    for B in (4, 6):
        for key in ("f1", "f2", "f3", "g1", "g2", "g3"):
            values = [widths.statement_exponents(b, B)[key] for b in range(2, B + 1)]
            second = {values[i + 2] - 2 * values[i + 1] + values[i] for i in range(len(values) - 2)}
            assert len(second) <= 1


@pytest.mark.theorem9
def test_growth():
    g = widths.growth(0.01, 2, 4, B=2, C=2.0)
    n = g["widths"]["theorem9.n_K"]
    assert g["derivative"]["theorem9.n_K"]["log(1/eps)"] == 8.0
    assert g["derivative"]["theorem9.n_K"]["log(alpha)"] == 24.0
    assert g["doubled"]["eps/2"]["theorem9.n_K"] == pytest.approx(n + 8.0 * math.log(2), rel=1e-12)
    assert g["doubled"]["Hx2"]["theorem9.n_K"] == pytest.approx(n + 8.0 * math.log(2), rel=1e-12)
    # d n / d log d1 against a numerical derivative (alpha fixed)
    h = 1e-6
    def nk(d1: float) -> float:
        return d1 * 2.0 * math.log(8 * 2 * 2.0**3 * d1**1.5 / 0.01)  # alpha = sqrt(4), held fixed
    numeric = (nk(4 * math.exp(h)) - nk(4 * math.exp(-h))) / (2 * h)
    assert g["derivative"]["theorem9.n_K"]["log(d1)"] == pytest.approx(numeric, rel=1e-6)


@pytest.mark.parametrize(("kwargs", "word"), [
    (dict(eps=0.0, H=1, d1=2), "eps"), (dict(eps=1.0, H=1, d1=2), "eps"), (dict(eps=-0.1, H=1, d1=2), "eps"),
    (dict(eps=0.1, H=0, d1=2), "H"), (dict(eps=0.1, H=1, d1=0), "d1"), (dict(eps=0.1, H=1, d1=2, d2=0), "d2"),
    (dict(eps=0.1, H=1, d1=4, alpha=1.9), "alpha"), (dict(eps=0.1, H=1, d1=2, B=1), "B"),
    (dict(eps=0.1, H=1, d1=2, L=0), "L"), (dict(eps=0.1, H=1, d1=2, C=0.0), "C"),
    (dict(eps=0.1, H=1.5, d1=2), "H"),
])
def test_bad_inputs(kwargs, word):
    with pytest.raises(ValueError, match=word):
        widths.widths(**kwargs)


@pytest.mark.theorem14
def test_cli(capsys, tmp_path):
    from sltcheck.cli import CommandLine
    from sltcheck.cli import widths as widths_cli

    assert "sltcheck.cli.widths" in importlib.import_module("sltcheck.cli").COMMAND_MODULES
    cli = CommandLine()
    widths_cli.register(cli)
    args = cli.parser.parse_args(["widths", "--eps", "0.1", "--heads", "2", "--d1", "4", "--blocks", "2", "--json"])
    assert args.handler(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["theorem14"]["blocks"][1]["b"] == 2
    assert data["parameters"]["C"] == 1.0
    args = cli.parser.parse_args(["widths", "--eps", "0.1", "--heads", "2", "--d1", "4", "--calibrated"])
    assert args.handler(args) == 0
    assert f"C={calibration.STORED_C:.6g}" in capsys.readouterr().out
    path = tmp_path / "cal.json"
    path.write_text(json.dumps({"C": 3.25}))
    args = cli.parser.parse_args(["widths", "--eps", "0.1", "--heads", "1", "--d1", "1", "--calibrated", str(path),
                                  "--json"])
    assert args.handler(args) == 0
    assert json.loads(capsys.readouterr().out)["parameters"]["C"] == 3.25
    with pytest.raises(SystemExit):  # refused by the parser (sltcheck.cli.options), before the handler
        cli.parser.parse_args(["widths", "--eps", "2", "--heads", "1", "--d1", "1"])
    assert "--eps: must be a number > 0 and < 1, got '2'" in capsys.readouterr().err
