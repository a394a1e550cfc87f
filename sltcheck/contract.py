"""The statement contract: every name the framework reads from a statement folder, in one place.

A statement is a folder ``sltcheck/statements/<name>/`` (discovered by :mod:`sltcheck.registry`: a
new folder is a new statement, except ``shared/``, the code several statements use). A folder
imports only itself, ``shared/``, the lower layers and, where the paper proves it from another
statement's bound, that statement (the edges are listed in ``tests/test_imports.py``); the framework
reaches a folder only by name, through :func:`submodule` and :func:`parts`.
The framework reads its package ``__init__.py`` (the part ``statement``) and the
optional modules beside it (``differentiable.py``, ``worst_case.py``, ``enclosure.py``,
``family.py``, ``formulas.py``; ``instances.py`` is required). :data:`PARTS` declares, per part,
each name the framework reads: whether it is required, what it means and, for an optional name,
the default the framework uses when it is absent. The framework reads the optional names only
through :func:`optional` and finds the optional modules only through :func:`submodule` and
:func:`parts`, so the defaults live here and nowhere else.

:func:`validate` names every missing required module or name, every hook of the wrong kind (a
function that is not callable) and every name that looks like a hook but is none: a near miss
(``SEARCH_COSTS`` for ``SEARCH_COST``) or an optional name of another part (``SEARCH_COST`` in
``__init__.py``, where nothing reads it); ``tests/test_contract.py`` runs it over every folder.
A module may define any other public helper of its own (a statement's tests and its siblings
read many): only names within reach of a typo of a hook are flagged, since an optional hook
misspelt is silently replaced by its default.

Where the framework disagreed with itself, this contract decides: ``FREE`` is required of every
``instances.py`` (the search varies those fields and the simplifier shrinks them; no instance
module serves only the strategies), and ``MUTANTS`` is required (the suite must refute every
statement's known-false variants; a statement with none declares ``MUTANTS = []`` and says why).
"""

from __future__ import annotations

import ast
import difflib
import importlib
import importlib.util
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import Any

from sltcheck.registry import STATEMENT_MODULES


def _no_noise_floor(instance: Any, dps: int | None) -> int:
    """Without ``noise_floor``: the measured side is decided against 0 (no rounding floor)."""
    return 0


def _no_limits(shape: Any) -> dict[str, tuple[float | None, float | None]]:
    """Without ``limits``: no box bounds on the scalar fields (only the projection holds them)."""
    return {}


@dataclass(frozen=True)
class Name:
    """One name the framework reads from a part: required, or optional with its ``default``.

    A lower-case name is a function (it must be callable); an upper-case one is a value."""

    name: str
    meaning: str
    required: bool = True
    default: Any = None

    @property
    def function(self) -> bool:
        return not self.name.isupper()


def _optional(name: str, meaning: str, default: Any) -> Name:
    return Name(name, meaning, required=False, default=default)


@dataclass(frozen=True)
class Part:
    """A module of a statement folder: ``file`` (``__init__.py`` for the package itself), whether the
    folder must have it, what it is for, who reads it and the names read from it."""

    key: str
    file: str
    required: bool
    meaning: str
    readers: str
    names: tuple[Name, ...]

    def module_name(self, statement: str) -> str:
        return f"sltcheck.statements.{statement}" + ("" if self.key == "statement" else f".{self.key}")

    def declared(self, name: str) -> Name | None:
        return next((n for n in self.names if n.name == name), None)


#: Each part of a statement folder, keyed ``statement`` (the package), ``instances``, ``differentiable``,
#: ``worst_case``, ``enclosure``, ``family``, ``formulas``.
PARTS: dict[str, Part] = {p.key: p for p in (
    Part("statement", "__init__.py", True,
         "the statement: its docstring quotes the paper (with its numbers in the full paper and the workshop "
         "version); the module holds the left-hand side, the right-hand sides (variants) and the mutants",
         "harness.runner, harness.search, harness.simplify, harness.power, assumptions, certify, checking, "
         "report, repaired", (
             Name("ASSUMPTIONS", "the names of its hypotheses, keys of sltcheck.assumptions.ASSUMPTIONS: the one "
                  "source of what an instance must satisfy (assumptions.violations, the report)"),
             Name("measured", "measured(instance, dps): the left-hand side, in mpmath at dps digits (float64 "
                  "when dps is None)"),
             Name("VARIANTS", "{variant name: bound(instance, dps)}: the right-hand sides (as-stated, as-proven, ...)"),
             Name("DEFAULT_VARIANT", "the variant the proofs use, a key of VARIANTS"),
             Name("MUTANTS", "known-false variants the suite must refute, as sltcheck.statement_types.Mutant (a "
                  "bound made too small, a hypothesis dropped)"),
             _optional("noise_floor", "noise_floor(instance, dps): the measured side's rounding floor, below "
                       "which measured <= bound is decided as held (absent: 0)", _no_noise_floor),
             _optional("POWER_CASES", "search-power cases against known suprema (see sltcheck.harness.power)", ()),
             _optional("REPAIRED_CONSTANTS", "the smallest c with measured <= c x a variant's bound, per variant "
                       "(see sltcheck.repaired)", ()),
             _optional("COUNTEREXAMPLES", "{variant: exact JSON instance}: the first violation found of each false "
                       "variant, pinned by @example in properties/ and replayed by the tests",
                       MappingProxyType({})),
             _optional("LARGEST_COUNTEREXAMPLES", "{variant: exact JSON instance}: the largest violation known of "
                       "each false variant, pinned beside COUNTEREXAMPLES", MappingProxyType({})),
             _optional("FINDINGS", "{variant: one sentence in the paper's terms}: what a false variant's "
                       "violation means (the report leads with it)", MappingProxyType({})),
         )),
    Part("instances", "instances.py", True,
         "the Hypothesis strategy of instances and the worst-case search's space: shapes, starts, the "
         "projection onto the assumptions", "harness.instances, harness.search, harness.sequence, harness.simplify", (
             Name("instances", "instances(drop=()) -> SearchStrategy[Instance]: instances satisfying the assumptions "
                  "except those in drop (broken freely, for mutants that drop a hypothesis)"),
             Name("project", "project(instance) -> Instance: pull a modified instance back inside the assumptions "
                  "(tokens into the alpha-ball, matrices to spectral norm <= 1, perturbations clipped)"),
             Name("FREE", "the float fields the search varies and the simplifier shrinks"),
             Name("shapes", "shapes() -> [shape]: the discrete sizes (dimensions, lengths) the search tries, "
                  "smallest first"),
             Name("start", "start(shape, rng, on_boundary=...) -> Instance: a random start of the search"),
             _optional("SEARCH_COST", "the cost of one evaluation relative to the others': the search's budget "
                       "is divided by it (absent: 1)", 1),
             _optional("SIMPLIFY_EVALUATIONS", "a cap on the simplifier's evaluations below its own "
                       "(absent: None, the simplifier's MAX_EVALUATIONS)", None),
             _optional("simplifications", "simplifications(instance) -> Iterable[(label, Instance)]: structural "
                       "simplifications (fewer tokens, ...) tried first on a counterexample (absent: None, none)",
                       None),
             _optional("SEQUENCE", "a sltcheck.harness.sequence.Structure: weighted tokens on the search's "
                       "structured shapes (absent: None, none)", None),
             _optional("RELATIVE", "{field: (base field or None, scale field)}: fields the search moves relative "
                       "to others (absent: none)", MappingProxyType({})),
             _optional("limits", "limits(shape) -> {field: (low, high)}: box bounds of the search's scalar fields "
                       "(L-BFGS-B's box; every searched point is clipped into it), e.g. eps_max no smaller than "
                       "float64 resolves (absent: none)", _no_limits),
         )),
    Part("differentiable", "differentiable.py", False,
         "a float64 torch version of the measured side and bounds, written from the paper independently of the "
         "numpy path: the search climbs by autograd where it covers a variant", "harness.gradients, harness.search", (
             Name("project", "project(fields) -> fields: the instance module's projection on torch tensors"),
             Name("measured", "measured(fields) -> Tensor: the measured side (0-d)"),
             Name("BOUNDS", "{name: bound(fields) -> Tensor}: the variants (and mutant:<name> bounds, and closed "
                  "forms a caller names, e.g. a power case's supremum) it covers"),
             _optional("AUTOGRAD_COST", "the cost of one gradient relative to a float64 evaluation: the gradient "
                       "climbs are divided by it (absent: 1)", 1),
         )),
    Part("worst_case", "worst_case.py", False,
         "the derived worst case: the supremum of the measured side, closed form or bracket",
         "sltcheck.suprema, the report's slack table", (
             Name("supremum", "supremum(**params) -> dict: value, lower, upper, kind, instance, bound, slack"),
             Name("PARAMS", "the parameters supremum takes"),
             _optional("SLACK_ROWS", "(statement, params) rows of the report's slack table (absent: none)", ()),
         )),
    Part("enclosure", "enclosure.py", False,
         "interval enclosures of both sides, so a verdict is certified", "sltcheck.harness.interval_verdict", (
             Name("measured", "measured(instance) -> enclosure of the measured side"),
             Name("BOUNDS", "{variant or mutant:<name>: bound(instance) -> enclosure}: the bounds it encloses"),
         )),
    Part("family", "family.py", False,
         "families of instances certified over whole parameter boxes", "sltcheck.certify", (
             Name("FAMILIES", "the sltcheck.certify.Family objects of the statement"),
         )),
    Part("formulas", "formulas.py", False,
         "LaTeX of the statement for the report's page", "sltcheck.report.formulas", (
             Name("PAPER", "the inequality as the paper prints it"),
             Name("MEASURED", "the side sltcheck measures"),
             Name("BOUNDS", "{variant: its bound as encoded}"),
             _optional("WHERE", "what the symbols stand for (absent: None, no line)", None),
         )),
)}

# Each optional name belongs to one part (checked by the tests), so optional(module, name) needs no part.
_OPTIONAL: dict[str, Name] = {n.name: n for p in PARTS.values() for n in p.names if not n.required}


def default(name: str) -> Any:
    """The default of the optional name ``name`` (ValueError for a name the contract does not declare)."""
    if name not in _OPTIONAL:
        raise ValueError(f"name must be an optional name of the statement contract ({', '.join(_OPTIONAL)}), "
                         f"got {name!r}")
    return _OPTIONAL[name].default


def optional(module: ModuleType, name: str) -> Any:
    """``module``'s ``name``, or the contract's default where the module does not define it."""
    return getattr(module, name, default(name))


def _part(part: str) -> Part:
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")
    return PARTS[part]


def has(statement: str, part: str) -> bool:
    """Whether the folder of ``statement`` has the module ``part``, without importing it."""
    try:
        return importlib.util.find_spec(_part(part).module_name(statement)) is not None
    except ModuleNotFoundError:  # no such statement
        return False


def submodule(statement: str, part: str) -> ModuleType | None:
    """The module ``part`` of ``statement`` (``"statement"``: the package itself), or None where the
    folder has none (an import error inside the module is raised, not taken for absence)."""
    name = _part(part).module_name(statement)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name not in (name, f"sltcheck.statements.{statement}"):
            raise
        return None


def parts(part: str) -> dict[str, ModuleType]:
    """Statement -> its module ``part`` (``worst_case``, ``enclosure``, ...), for the statements whose
    folder has one, in the paper's order."""
    found = {}
    for statement in STATEMENT_MODULES:
        module = submodule(statement, part)
        if module is not None:
            found[statement] = module
    return found


def _defined(module: ModuleType) -> list[str]:
    """The public names ``module`` defines itself (top-level assignments and definitions in its source;
    every public name for a module without a source file)."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return [n for n in vars(module) if not n.startswith("_")]
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                elements = target.elts if isinstance(target, ast.Tuple) else [target]
                names.extend(e.id for e in elements if isinstance(e, ast.Name))
    return [n for n in names if not n.startswith("_")]


def _near(name: str, names: list[str]) -> str | None:
    """The hook ``name`` is a near miss of (same case style, a typo's distance), or None."""
    style = [n for n in names if n.isupper() == name.isupper() and n != name]
    close = difflib.get_close_matches(name, style, n=1, cutoff=0.85)
    return close[0] if close else None


def _unknown(where: str, part: Part, module: ModuleType) -> list[str]:
    own = [n.name for n in part.names]
    hooks = sorted({n.name for p in PARTS.values() for n in p.names})
    found = []
    for name in _defined(module):
        if name in own:
            continue
        if name in _OPTIONAL:
            owner = next(p for p in PARTS.values() if _OPTIONAL[name] in p.names)
            found.append(f"{where}: defines {name}, which the framework reads only from {owner.file}: "
                         f"move it there ({_OPTIONAL[name].meaning})")
            continue
        near = _near(name, own) or (_near(name, hooks) if name.isupper() else None)
        if near is not None:
            home = next(p for p in PARTS.values() if p.declared(near) is not None)
            found.append(f"{where}: defines {name}, unknown to the contract: did you mean {near} of {home.file}?")
    return found


def check(statement: str, modules: Mapping[str, ModuleType | None]) -> list[str]:
    """The problems of ``statement`` given its modules per part (a part absent from ``modules`` or None:
    the folder has no such module). :func:`validate` passes the folder's own modules; tests pass fakes."""
    problems = []
    for part in PARTS.values():
        module = modules.get(part.key)
        where = f"sltcheck/statements/{statement}/{part.file}"
        if module is None:
            if part.required:
                required = ", ".join(n.name for n in part.names if n.required)
                problems.append(f"{where}: missing; add it, defining {required} ({part.meaning})")
            continue
        for name in part.names:
            if not hasattr(module, name.name):
                if name.required:
                    problems.append(f"{where}: missing required {name.name}: implement {name.meaning}")
            elif name.function and not callable(getattr(module, name.name)):
                problems.append(f"{where}: {name.name} must be a function: {name.meaning}")
        problems.extend(_unknown(where, part, module))
    return problems


def validate(statement: str) -> list[str]:
    """Every missing required module or hook of ``statement``, every hook of the wrong kind and every
    name that looks like a hook but is none, each naming its file and what to implement (empty: the
    folder meets the contract)."""
    if statement not in STATEMENT_MODULES:
        raise ValueError(f"statement must be one of {', '.join(STATEMENT_MODULES)}, got {statement!r}")
    return check(statement, {key: submodule(statement, key) for key in PARTS})
