"""torch is an extra: the statement checks run without it, and what needs it names the extra."""

from __future__ import annotations

import fnmatch
import importlib.util
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

# Runs the CLI with torch made unimportable (as in an environment without the extra): a finder
# that refuses it (not sys.modules['torch'] = None, which scipy's array-API helpers trip over)
# and records every attempt, so a command that tries torch and swallows the error is seen.
WITHOUT_TORCH = """
import sys
class NoTorch:
    attempts = []
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            NoTorch.attempts.append(name)
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoTorch())
from sltcheck.cli import main
try:
    status = main(sys.argv[1:])
finally:
    print(f"torch imports attempted: {len(NoTorch.attempts)}", file=sys.stderr)
sys.exit(status)
"""


def _cli_without_torch(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_TORCH, *argv], capture_output=True, text=True, timeout=300)


def test_torch_is_no_core_dependency_but_the_repro_lm_and_search_extras():
    core = PYPROJECT["project"]["dependencies"]
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert not any(d.startswith("torch") for d in core)
    for extra in ("repro", "lm", "search"):
        assert any(d.startswith("torch") for d in extras[extra]), extra
        assert extra in extras["all"][0], extra


@pytest.mark.lemma8
def test_check_runs_without_torch(tmp_path):
    result = _cli_without_torch("check", "--only", "lemma8", "--profile", "ci", "--no-search", "--no-mutants",
                                "--out", str(tmp_path), "-q")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "findings.json").exists()
    assert "torch imports attempted: 0" in result.stderr
    report = _cli_without_torch("report", "--in", str(tmp_path), "--out", str(tmp_path / "r.html"))
    assert report.returncode == 0, report.stderr[-2000:]
    assert "torch imports attempted: 0" in report.stderr


def test_a_reproduction_without_torch_names_its_extra():
    for figure, extra in (("fig4", "repro"), ("fig8", "lm")):
        result = _cli_without_torch("repro", figure)
        assert result.returncode == 2
        assert f"pip install 'sltcheck[{extra}]'" in result.stderr, result.stderr[-2000:]
        assert "torch imports attempted: 0" not in result.stderr  # the finder did refuse it


# A fresh interpreter: ``sltcheck.repro.figure`` without ``import sltcheck.repro`` (the README's and the
# how-to's call), and ``sltcheck --help``, both with torch refused and every attempt counted.
REACH_REPRO = WITHOUT_TORCH.split("from sltcheck.cli import main")[0] + """
import sltcheck
figure = sltcheck.repro.figure
print(figure.__module__, callable(sltcheck.certify))
from sltcheck.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
print(f"torch imports attempted: {len(NoTorch.attempts)}", "torch" in sys.modules)
"""


def test_sltcheck_repro_is_reachable_from_import_sltcheck_without_torch():
    result = subprocess.run([sys.executable, "-c", REACH_REPRO], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "sltcheck.repro True" in result.stdout
    assert "torch imports attempted: 0 False" in result.stdout


def test_an_unknown_attribute_of_sltcheck_is_still_an_attribute_error():
    import sltcheck

    with pytest.raises(AttributeError, match="no attribute 'reproo'"):
        _ = sltcheck.reproo  # type: ignore[attr-defined]


def test_every_template_ships_as_package_data():
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["sltcheck.report"]
    templates = ROOT / "sltcheck" / "report" / "templates"
    for path in templates.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            relative = path.relative_to(templates.parent).as_posix()
            assert any(fnmatch.fnmatch(relative, p) and relative.count("/") == p.count("/") for p in patterns), relative


def test_the_built_wheel_renders_the_report_from_its_own_templates(tmp_path):
    """What ``pip install .`` (not editable) installs: a wheel built from a copy of the sources,
    unpacked as an installer would; the page renders from the templates inside it."""
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("setuptools is not installed here, so no wheel can be built offline")
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "sltcheck", source / "sltcheck", ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "wheel"), str(source)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "wheel").glob("sltcheck-*.whl")
    site = tmp_path / "site-packages"
    zipfile.ZipFile(wheel).extractall(site)
    code = ("import sltcheck.report.page as page; "
            "print(page.__file__); print(page.environment().get_template('report.html.j2').filename); "
            "print(len(page.render(page.build({'findings': [], 'synthetic': [], 'lm': []}))))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                           env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)})
    assert shown.returncode == 0, shown.stderr[-2000:]
    module, template, length = shown.stdout.split()
    assert module.startswith(str(site))
    assert template.startswith(str(site))
    assert int(length) > 1000
