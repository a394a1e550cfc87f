"""The statement contract (:mod:`sltcheck.contract`): every folder meets it, and it can fail."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import sltcheck
from sltcheck import contract
from sltcheck.registry import NOT_STATEMENTS, STATEMENT_MODULES

PACKAGE = Path(sltcheck.__file__).parent  # the installed package (tox tests the wheel, not the checkout)
ROOT = PACKAGE.parent
CHECKOUT = Path(__file__).resolve().parents[1]  # CONTRIBUTING.md is not part of the package
# Read from the file system, not from the package: a folder the package missed would still be checked.
LOOKUPS = ("getattr", "hasattr")
# Every sub-package of statements/ is a statement, except the folders the discovery skips (shared/).
PACKAGES = sorted(p.name for p in (PACKAGE / "statements").iterdir() if (p / "__init__.py").is_file())
FOLDERS = [name for name in PACKAGES if name not in NOT_STATEMENTS]


def test_the_folders_were_found():
    assert len(FOLDERS) >= 10
    assert "lemma13" in FOLDERS


def test_discovery_skips_the_shared_folder_and_nothing_else():
    """statements/shared/ (code several statements use) is no statement; every other folder is one."""
    assert NOT_STATEMENTS == ("shared",)
    assert "shared" in PACKAGES
    assert list(STATEMENT_MODULES) == sorted(FOLDERS, key=list(STATEMENT_MODULES).index)
    assert set(STATEMENT_MODULES) == set(FOLDERS)
    with pytest.raises(ValueError, match=r"statement must be one of lemma2, .*, got 'shared'"):
        contract.validate("shared")


@pytest.mark.parametrize("statement", FOLDERS)
def test_every_statement_folder_meets_the_contract(statement):
    assert contract.validate(statement) == []


def _fake(name: str, **names: Any) -> ModuleType:
    module = ModuleType(name)
    for key, value in names.items():
        setattr(module, key, value)
    return module


def _complete() -> dict[str, ModuleType]:
    """A fake statement with every part, each defining exactly its required names."""
    def function(*args: Any, **kwargs: Any) -> None:
        return None

    return {key: _fake(f"fake.{key}", **{n.name: function if n.function else () for n in part.names if n.required})
            for key, part in contract.PARTS.items()}


def test_a_complete_fake_statement_meets_the_contract():
    assert contract.check("fake", _complete()) == []


def test_a_statement_without_mutants_fails():
    modules = _complete()
    del modules["statement"].MUTANTS
    [problem] = contract.check("fake", modules)
    assert problem.startswith("sltcheck/statements/fake/__init__.py: missing required MUTANTS: implement known-false")


def test_a_misspelt_optional_name_fails():
    modules = _complete()
    modules["instances"].SEARCH_COSTS = 4  # the search would silently use the default 1
    modules["statement"].noise_flor = lambda instance, dps: 0
    problems = contract.check("fake", modules)
    assert problems == [
        "sltcheck/statements/fake/__init__.py: defines noise_flor, unknown to the contract: did you mean noise_floor "
        "of __init__.py?",
        "sltcheck/statements/fake/instances.py: defines SEARCH_COSTS, unknown to the contract: did you mean "
        "SEARCH_COST of instances.py?",
    ]


def test_an_optional_name_in_the_wrong_part_fails():
    modules = _complete()
    modules["statement"].SEARCH_COST = 4  # read only from instances.py
    [problem] = contract.check("fake", modules)
    assert "defines SEARCH_COST, which the framework reads only from instances.py" in problem


def test_a_submodule_lacking_a_required_name_fails():
    modules = _complete()
    del modules["differentiable"].BOUNDS
    modules["enclosure"].measured = 1.0  # not callable
    problems = contract.check("fake", modules)
    assert [p.split(":")[:2] for p in problems] == [
        ["sltcheck/statements/fake/differentiable.py", " missing required BOUNDS"],
        ["sltcheck/statements/fake/enclosure.py", " measured must be a function"],
    ]


def test_a_missing_required_part_fails_and_an_optional_one_does_not():
    modules = _complete()
    modules["instances"] = None  # type: ignore[assignment]
    del modules["worst_case"]
    [problem] = contract.check("fake", modules)
    assert problem.startswith("sltcheck/statements/fake/instances.py: missing; add it, defining instances, project, "
                              "FREE, shapes, start")


def test_helpers_of_a_statement_are_not_flagged():
    modules = _complete()
    modules["statement"].EDGE = 0.97  # a statement's own constant, far from every hook
    modules["statement"].required_widths = lambda *args: None
    assert contract.check("fake", modules) == []


def test_optional_names_have_one_part_each_and_declared_defaults():
    optional = [n.name for part in contract.PARTS.values() for n in part.names if not n.required]
    assert len(optional) == len(set(optional))
    assert contract.default("SEARCH_COST") == 1
    assert contract.default("SEQUENCE") is None
    assert contract.optional(_fake("m"), "noise_floor")({}, 30) == 0
    assert contract.optional(_fake("m", SEARCH_COST=3), "SEARCH_COST") == 3
    with pytest.raises(ValueError, match=r"name must be an optional name of the statement contract .* 'SEARCH_COSTS'"):
        contract.optional(_fake("m"), "SEARCH_COSTS")


def test_submodule_finds_a_part_or_none():
    assert contract.submodule("lemma2", "worst_case") is None  # Lemma 2's worst case is not derived
    assert contract.submodule("lemma13", "worst_case") is not None
    assert not contract.has("lemma2", "differentiable")
    assert contract.has("lemma13", "differentiable")
    with pytest.raises(ValueError, match=r"part must be one of statement, instances, .*, got 'worst-case'"):
        contract.submodule("lemma13", "worst-case")
    with pytest.raises(ValueError, match=r"statement must be one of lemma2, .*, got 'lemma99'"):
        contract.validate("lemma99")


def _framework_sources() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if "statements" not in p.relative_to(PACKAGE).parts]


def test_the_framework_reads_no_optional_name_around_the_contract():
    """Every optional name is read through contract.optional: no getattr/hasattr with a hook's name
    outside contract.py (the defaults live in one place)."""
    hooks = {n.name for part in contract.PARTS.values() for n in part.names}
    offenders = []
    for path in [*_framework_sources(), *(PACKAGE / "statements").rglob("*.py")]:
        if path.name == "contract.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in LOOKUPS \
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in hooks:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.func.id}(..., {node.args[1].value!r})")
    assert offenders == []


def _unnamed(section: str) -> list[str]:
    """The parts and required names of the contract that no code span of ``section`` names."""
    quoted = re.findall(r"`([^`]+)`", section)  # code spans: `FREE`, `supremum(**params)`

    def named(name: str) -> bool:
        return any(re.search(rf"(?<![\w.]){re.escape(name)}\b", span) for span in quoted)

    missing = [f"{part.file}: {n.name}" for part in contract.PARTS.values() for n in part.names
               if n.required and not named(n.name)]
    return missing + [part.file for part in contract.PARTS.values() if not named(part.file)]


def test_contributing_names_every_required_name_of_every_part():
    text = (CHECKOUT / "CONTRIBUTING.md").read_text()
    section = re.search(r"^## Adding a statement\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section is not None, "CONTRIBUTING.md has no '## Adding a statement' section"
    assert _unnamed(section.group(1)) == []
    # The check can fail: the section without FREE, or naming only a longer name that contains it.
    assert _unnamed(section.group(1).replace("`FREE`", "the free fields")) == ["instances.py: FREE"]
    assert "instances.py: FREE" in _unnamed("`BLOCK_FREE` `harness.FREE`")
