"""The import structure of sltcheck: every module imports alone, and no import cycle joins two packages.

Layers, lowest first: the neutral modules (``statement_types``, ``registry``, ``contract``, ``errors``,
``jsonfiles``, ``schema``, ...), ``numerics``, ``model``, ``pruning``, the harness's strategies,
``certify``'s families, the statements (``statements/shared/`` and the statement folders), then the
framework that reads them (harness runner and search, ``suprema``, ``certified``, ``checking``,
``report``, ``api``, ``cli``). The framework reaches a statement only by name, through
``registry.load()`` and the contract's ``parts()`` / ``submodule()`` (importlib): that plugin lookup is
no static import, so it is no edge here. The graph is checked twice: with ``sltcheck.statements`` one
node (the framework never imports the statements package), and with each statement folder a node (a
folder imports another only where the paper proves it from that one).
"""

from __future__ import annotations

import ast
import collections
import itertools
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from package_env import ENV

import sltcheck

PACKAGE = Path(sltcheck.__file__).parent
STATEMENTS = PACKAGE / "statements"
# Optional extras: a module that needs one is skipped when it is missing, never when it is present.
EXTRAS = ("torch", "gurobipy", "transformers", "dask", "datasets", "tiktoken", "distributed")

# A statement folder may import another only where the paper proves it from that statement's bound;
# every other cross-statement import is a bug (shared code belongs in statements/shared/).
PROVED_FROM = {
    ("lemma4", "lemma7"): "Lemma 4 (Section 3.2) is the main-text form of Lemma 7, proved in Appendix A.1",
    ("lemma5", "lemma8"): "Lemma 5 (Section 3.2) is the main-text form of Lemma 8, proved in Appendix A.2",
    ("lemma13", "lemma12"): "Lemma 13's proof starts from Lemma 12's bound (Appendix A.5)",
    ("lemma2", "lemma7"): "Lemma 7 is the paper's variant of Lemma 2 (Section 3.2): both prune by one subset-sum "
                          "construction, written once in lemma7",
    ("lemma2", "theorem11"): "Lemma 2 is the one-layer case of Theorem 10 (Pensia et al.'s Theorem 1, Appendix A.4), "
                             "whose bound sltcheck keeps beside Theorem 11, the theorem that uses it (fc_bound)",
    ("theorem11", "theorem9"): "Theorem 11 combines Theorem 9 with Theorem 10 (Appendix A.4)",
    ("theorem14", "theorem9"): "Theorem 14 chains blocks whose MHA error is Theorem 9's, via Theorem 11 (A.5)",
    ("theorem14", "theorem11"): "Theorem 14's proof applies Theorem 11 to every block (Appendix A.5)",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> list[str]:
    return sorted(_module_name(p) for p in PACKAGE.rglob("*.py"))


def _node(module: str, folders: bool = True) -> str:
    """The package-level unit of ``module``: ``sltcheck.<top>``; with ``folders``, each folder of
    ``statements/`` (a statement, or ``shared``) is a node of its own, else the statements package,
    ``shared/`` included, is one node."""
    parts = module.split(".")
    if folders and parts[:2] == ["sltcheck", "statements"] and len(parts) > 2 and (STATEMENTS / parts[2]).is_dir():
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for each sltcheck import of ``path`` (imports under
    ``if TYPE_CHECKING:`` are no runtime edge)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                continue
            inner = local or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, local) for a in child.names if a.name.startswith("sltcheck"))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.startswith("sltcheck"):
                    # ``from pkg import sub``: the edge goes to the submodule where there is one.
                    for alias in child.names:
                        sub = f"{target}.{alias.name}"
                        found.append((sub if _is_module(sub) else target, child.lineno, local))
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return found


def _is_module(name: str) -> bool:
    relative = Path(*name.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative / "__init__.py").is_file()


def _graph(folders: bool = True) -> dict[str, dict[str, list[str]]]:
    """node -> {imported node: ['file:line', ...]} over module-level and function-local imports (each
    statement folder a node with ``folders``, else the statements package one node)."""
    graph: dict[str, dict[str, list[str]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _node(_module_name(path), folders)
        for target, line, _ in _imports(path):
            if _node(target, folders) != source:
                graph[source][_node(target, folders)].append(f"{path.relative_to(PACKAGE.parent)}:{line}")
    return graph


def _cycle(graph: dict[str, dict[str, list[str]]]) -> list[str] | None:
    """One cycle of ``graph`` as its nodes (first = last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        state[node] = 2
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


@pytest.mark.parametrize("folders", [False, True], ids=["statements-one-node", "each-statement-folder-a-node"])
def test_no_import_cycle_between_packages(folders):
    """sltcheck's packages and top-level modules import each other without a cycle, counting
    function-local imports too: with the statements package (``shared/`` included) one node, so the
    framework imports no statement and the statements reach the framework only below them; and with
    each statement folder a node, so no two statements import each other."""
    graph = _graph(folders)
    cycle = _cycle(graph)
    if cycle is not None:
        steps = [f"{a} -> {b} ({', '.join(graph[a][b][:3])})" for a, b in itertools.pairwise(cycle)]
        pytest.fail("import cycle between packages:\n  " + "\n  ".join(steps))


def test_the_framework_imports_the_statements_package_for_no_name_of_its_own():
    """Outside ``statements/``, sltcheck imports a statement folder or nothing from it: discovery and
    the contract are ``sltcheck.registry`` and ``sltcheck.contract``, the types ``sltcheck.statement_types``."""
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line}"
                 for path in sorted(PACKAGE.rglob("*.py")) if "statements" not in path.relative_to(PACKAGE).parts
                 for target, line, _ in _imports(path) if target == "sltcheck.statements"]
    assert offenders == []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b": ["x:1"]}, "b": {"c": ["x:2"]}, "c": {"a": ["x:3"]}, "d": {"a": ["x:4"]}}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b": ["x:1"]}}) is None


def test_a_statement_imports_another_only_where_the_paper_proves_it_from_that_one():
    folders = {p.name for p in STATEMENTS.iterdir() if (p / "__init__.py").is_file()} - {"shared"}
    found = collections.defaultdict(list)
    for path in sorted(STATEMENTS.rglob("*.py")):
        source = _node(_module_name(path)).rsplit(".", 1)[-1]
        for target, line, _ in _imports(path):
            other = _node(target).rsplit(".", 1)[-1]
            if source in folders and other in folders and other != source:
                found[(source, other)].append(f"{path.relative_to(PACKAGE.parent)}:{line}")
    unexplained = {edge: where for edge, where in found.items() if edge not in PROVED_FROM}
    assert unexplained == {}, "a statement imports another it is not proved from: move the code to statements/shared/"
    assert set(PROVED_FROM) == set(found), "an edge of PROVED_FROM no longer exists: remove it"


def test_no_private_module_is_imported_from_another_package():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rsplit(".", 1)[0]
        for target, line, _ in _imports(path):
            parts = target.split(".")
            private = [i for i, part in enumerate(parts)
                       if part.startswith("_") and _is_module(".".join(parts[: i + 1]))]
            if private and not package.startswith(".".join(parts[: private[0]])):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {target}")
    assert offenders == []


# Each module imported in a child forked from an interpreter that holds the third-party packages but
# no sltcheck module: the child starts from a fresh sltcheck (as ``python -c "import X"`` would), at a
# fraction of an interpreter's start-up per module.
_FORKER = textwrap.dedent("""
    import importlib, importlib.util, os, sys, traceback
    import hypothesis, mpmath, numpy, scipy.optimize  # noqa: F401  (shared by most modules: load once)
    extras = sys.argv[1].split(",")
    for extra in extras:
        if importlib.util.find_spec(extra) is not None and extra == "torch":
            import torch  # noqa: F401
    assert not any(name == "sltcheck" or name.startswith("sltcheck.") for name in sys.modules)
    for name in sys.stdin.read().split():
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            try:
                importlib.import_module(name)
                message = "ok"
            except ModuleNotFoundError as error:
                missing = (error.name or "").split(".")[0]
                present = importlib.util.find_spec(missing) is not None if missing else True
                message = f"skip {missing}" if missing in extras and not present else traceback.format_exc()
            except BaseException:
                message = traceback.format_exc()
            os.write(write, message.encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            message = pipe.read().decode()
        os.waitpid(pid, 0)
        print(name, message.replace(chr(10), chr(10) + "    "), sep=chr(9), flush=True)
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_every_module_imports_alone():
    """Each module of sltcheck imports in a fresh sltcheck (no module of it loaded before): an import
    that works only after another module was loaded first is a hidden cycle or a missing import."""
    result = subprocess.run([sys.executable, "-c", _FORKER, ",".join(EXTRAS)], input="\n".join(_modules()),
                            capture_output=True, text=True, env=ENV, timeout=600)
    assert result.returncode == 0, result.stderr
    entries = re.split(r"\n(?=sltcheck)", result.stdout.strip())  # "module<TAB>ok", "...<TAB>skip torch", a traceback
    assert [entry.split("\t", 1)[0] for entry in entries] == _modules()
    failures = [entry for entry in entries if not entry.split("\t", 1)[1].startswith(("ok", "skip"))]
    assert failures == [], "\n".join(failures)
