"""The layout: statements are discovered folders; the command line starts without heavy imports."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sltcheck
from sltcheck import suprema
from sltcheck.contract import parts
from sltcheck.harness import interval_verdict as certified
from sltcheck.registry import STATEMENT_MODULES, load

PACKAGE = Path(sltcheck.__file__).parent
HELPERS = {"num", "sqrt", "expm1", "spectral", "max_abs", "rounded", "stable", "guided_precision",
           "stated_or_proven", "scalar", "HUGE_EXPONENT", "VACUOUS_BITS"}


def _folders(having: str = "__init__.py") -> list[str]:
    """The statement folders on disk that hold ``having``, read from the file system (not the package);
    ``shared/`` holds code several statements use and is no statement."""
    return [p.name for p in (PACKAGE / "statements").iterdir()
            if (p / "__init__.py").is_file() and (p / having).is_file() and p.name != "shared"]


def _paper_order(name: str) -> tuple[int, int]:
    kind, number = re.fullmatch(r"(lemma|theorem)(\d+)", name).groups()  # type: ignore[union-attr]
    return (("lemma", "theorem").index(kind), int(number))


def test_statements_are_discovered_in_the_papers_order():
    folders = sorted(_folders(), key=_paper_order)
    assert len(folders) >= 10  # the folders were found
    assert folders[0] == "lemma2"
    assert STATEMENT_MODULES == tuple(folders)
    assert tuple(parts("instances")) == STATEMENT_MODULES  # every statement has its instances
    assert set(suprema.statements()) == set(_folders("worst_case.py"))
    assert tuple(certified.supported()) == STATEMENT_MODULES  # every statement has an enclosure
    assert set(_folders("enclosure.py")) == set(folders)


def test_unknown_statement_names_the_allowed_ones():
    with pytest.raises(ValueError, match=r"statement must be one of lemma2, .*theorem14, got 'theorem99'"):
        load("theorem99")


def test_no_module_takes_numeric_helpers_from_a_statement():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sltcheck.statements"):
                offenders += [f"{path.relative_to(PACKAGE)}: {a.name}" for a in node.names if a.name in HELPERS]
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in HELPERS \
                    and node.value.id in ("t9", "t11", "t14", "theorem9", "lemma8"):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not offenders


def test_help_imports_no_command_dependencies():
    code = ("import sys; from sltcheck.cli import build_parser; build_parser().format_help(); "
            "print(sorted(m for m in ('torch', 'scipy', 'hypothesis') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_importing_the_solvers_compiles_nothing():
    code = "import sys; import sltcheck.pruning.subset_sum; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_python_minus_m_sltcheck_is_the_command_line():
    done = subprocess.run([sys.executable, "-m", "sltcheck", "--help"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage: sltcheck"), done.stderr[-2000:]
    bad = subprocess.run([sys.executable, "-m", "sltcheck", "widths"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.startswith("sltcheck: error: --eps, --heads and --d1 are required")


def test_tests_import_the_installed_package_not_the_checkout():
    """Under tox (a regular, non-editable install of the wheel) the tests must import that install:
    a checkout first on sys.path (e.g. from a root conftest.py) would test code the user never gets."""
    from package_env import installed_package

    installed = installed_package()
    if installed is None:
        pytest.skip("no regular install of sltcheck (an editable install or a bare checkout)")
    assert Path(sltcheck.__file__).resolve() == installed


LONGEST_MODULE = 520  # "modules of one concern, none over ~500 lines" (issue 29)


def test_no_module_is_longer_than_about_500_lines():
    """A module past this has grown a second concern: split it along its seam (docs/reference/layout.md)."""
    package = Path(sltcheck.__file__).parent
    long = {str(p.relative_to(package)): n for p in package.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > LONGEST_MODULE}
    assert long == {}
