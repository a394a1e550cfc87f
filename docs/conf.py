"""Sphinx configuration of sltcheck's documentation (``tox -e docs``: ``sphinx-build -n -W --keep-going``).

Offline by design: no intersphinx (references to numpy, mpmath, torch... are written as plain
literals or listed in ``nitpick_ignore_regex`` below), the tutorial notebook runs in the build
(MyST-NB, ``nb_execution_mode = "force"``), and the theme's assets are shipped by the furo package.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's sltcheck (tox installs the same into the env)
sys.path.insert(0, str(Path(__file__).parent / "_ext"))

import sltcheck  # noqa: E402

project = "sltcheck"
author = "the sltcheck authors"
copyright = "2026, the sltcheck authors"  # Sphinx's name
release = version = sltcheck.__version__

extensions = [
    "myst_nb",  # Markdown (MyST) pages and executed notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "mathml",  # docs/_ext/mathml.py: formulas as MathML, offline
    "sphinxarg.ext",  # the CLI reference from the parsers
]
html_math_renderer = "mathml"  # MathJax would load a script from a CDN

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}  # .rst first: autosummary writes rst
exclude_patterns = ["reference/_modules.rst", "_build", "jupyter_execute", "**.ipynb_checkpoints"]
html_theme = "furo"
html_title = f"sltcheck {release}"
html_static_path = ["_static"]
html_css_files = ["sltcheck.css"]  # room for tall display formulas (no vertical scrollbar)
templates_path = ["_templates"]  # autosummary's module page: the module's docstring and members, no summary tables

myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
# A ```pycon fence (a Python session, highlighted as such on GitHub) is a doctest the doctest builder runs
# (the directive "pycon" is sphinx.ext.doctest's "doctest", registered in setup below): the README's example,
# included into the how-to, runs in every docs build like the pages' own.
myst_fence_as_directive = ["pycon"]
# Each page's doctests run in a fresh temporary directory (their "runs/..." land there, not in the checkout).
doctest_global_setup = """
import importlib.util, os, shutil, tempfile
_checkout, _scratch = os.getcwd(), tempfile.mkdtemp(prefix="sltcheck-doctest-")
os.chdir(_scratch)
"""
doctest_global_cleanup = "os.chdir(_checkout); shutil.rmtree(_scratch, ignore_errors=True)"
# No typographer's quotes or dashes: "--seed" stays two hyphens (an en dash breaks a copied command).
smartquotes = False
myst_heading_anchors = 3
nb_execution_mode = "force"  # every build runs the tutorial notebook
nb_execution_timeout = 300
nb_execution_raise_on_error = True

autosummary_generate = ["reference/_modules.rst"]  # the generated list (below), included by reference/modules.md
autodoc_default_options = {"members": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_mock_imports = ["torch", "transformers", "tokenizers"]

nitpicky = True
# No intersphinx (no network): names from other projects resolve to nothing, by design.
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|mpmath|mpf|torch|scipy|hypothesis|pandas|argparse|collections|typing|pathlib|"
               r"dataclasses|fractions|concurrent|sqlite3|logging|types|enum|os|io|abc|json|jinja2|markupsafe|"
               r"tqdm|dask|distributed|flint|matplotlib|numba|cvxpy|highspy|gurobipy|transformers|tokenizers|"
               r"threading|multiprocessing|subprocess|random|re|datetime|contextlib|functools|itertools|"
               r"decimal|math|builtins|_io|typing_extensions)(\..*)?"),
    (r"py:.*", r"(Any|Callable|Iterable|Iterator|Sequence|Mapping|NDArray|ArrayLike|Path|Fraction|Instance|"
               r"T|Self|TypedDict|NotRequired|Literal|TypeAlias|ModuleType|TracebackType|Generator)"),
    (r"py:.*", r"(_pytest|pytest|st|strategies)\..*"),  # pytest's and Hypothesis's types in signatures
    (r"py:.*", r".*\.T"),  # a TypeVar
    (r"py:class", r"'.*"),  # a quoted annotation autodoc splits ('dict[str, Any]'), not a name
]
# A name re-exported by a package (sltcheck.harness.Record) resolves to either of its two homes.
suppress_warnings = ["ref.python"]

# --- the module reference: every module that imports without the heavy extras -----------------------
# torch cannot be mocked here (scipy tests ``issubclass(x, torch.Tensor)`` at import), and the docs
# environment does not install it: the modules that import torch or transformers at their top level
# (directly or through another sltcheck module) are listed by name, the others documented in full.
HEAVY = ("torch", "transformers", "tokenizers")


def _top_level_imports(path: Path) -> set[str]:
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)  # extras.require("torch", ...)
              and getattr(node.value.func, "id", getattr(node.value.func, "attr", None)) == "require"
              and node.value.args and isinstance(node.value.args[0], ast.Constant)):
            names.add(str(node.value.args[0].value))
    return names


def _modules() -> dict[str, set[str]]:
    found = {}
    for path in sorted((ROOT / "sltcheck").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if parts[-1] != "__main__":
            found[name] = _top_level_imports(path)
    return found


def _needs_heavy(modules: dict[str, set[str]]) -> set[str]:
    heavy = {m for m, imports in modules.items() if any(i.split(".")[0] in HEAVY for i in imports)}
    grew = True
    while grew:
        grew = False
        for module, imports in modules.items():
            if module not in heavy and any(i in heavy for i in imports):
                heavy.add(module)
                grew = True
    return heavy


def _write_module_reference() -> None:
    modules = _modules()
    heavy = _needs_heavy(modules)
    own_page = ("sltcheck.api", "sltcheck.records")  # reference/api.md, reference/schemas.md
    light = [m for m in modules if m not in heavy and m not in own_page]
    lines = [".. autosummary::", "   :toctree: generated", ""] + [f"   {m}" for m in light]
    lines += ["", "Modules that import torch or transformers when imported (the extras ``repro``, ``search``, "
              "``lm``), read in their source:", ""] + [f"- ``{m}``" for m in sorted(heavy)]
    target = Path(__file__).parent / "reference" / "_modules.rst"
    text = "\n".join(lines) + "\n"
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
    # A page autosummary wrote in an earlier build for a module that is now heavy (or gone) would be
    # a document in no toctree: -W fails on it.
    for page in (target.parent / "generated").glob("sltcheck*.rst"):
        if page.stem not in light:
            page.unlink()


_write_module_reference()
# The heavy modules have no page: a reference to one is plain text.
nitpick_ignore_regex += [(r"py:.*", rf"{module}(\..*)?".replace(".", r"\.")) for module in _needs_heavy(_modules())]
autodoc_mock_imports: list[str] = []


def _skip_shadowed(app: Any, what: str, name: str, obj: object, skip: bool, options: object) -> bool | None:
    """A package's re-export named like one of its submodules (``sltcheck.harness.instances``, the function
    and the module) is documented on the submodule's page only (one name, one target)."""
    import importlib.util

    if what != "module":
        return None
    package = importlib.import_module(getattr(obj, "__module__", "") or "builtins").__name__.rsplit(".", 1)[0]
    if getattr(obj, "__module__", "") == f"{package}.{name}" and importlib.util.find_spec(f"{package}.{name}"):
        current = app.env.temp_data.get("autodoc:module") or app.env.ref_context.get("py:module")
        if current == package:
            return True
    return None


def _escape_bars(line: str) -> str:
    """Plain-text formulas as text, not reStructuredText: ``|x|`` and ``||x||`` (absolute values and norms)
    are no substitutions, ``d_+`` no reference, a lone ``*`` (``+, -, *, /``) no emphasis. Inline literals are
    left as they are."""
    parts = line.split("``")
    for index in range(0, len(parts), 2):  # outside ``...``
        text = parts[index].replace("|", "\\|")
        text = re.sub(r"(?<=\w)_(?=[^\w{`]|$)", r"\\_", text)
        parts[index] = re.sub(r"(?<=[\s(,])\*(?=[\s,)]|$)", r"\\*", text)
    return "``".join(parts)


def _plain_math(app: Any, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    """The docstrings write formulas in plain text; outside literal blocks, their bars are escaped."""
    literal_indent: int | None = None
    for index, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal_indent is not None:
            if stripped and indent <= literal_indent:
                literal_indent = None
            else:
                continue
        if stripped.startswith((">>>", "...")):
            continue
        lines[index] = _escape_bars(line)
        if line.rstrip().endswith("::"):
            literal_indent = indent
    # "Variants:" followed at once by "- item": a list needs a blank line before it.
    out: list[str] = []
    for line in lines:
        if line.startswith("- ") and out and out[-1].strip() and not out[-1].startswith(("- ", "  ")):
            out.append("")
        out.append(line)
    lines[:] = out


def setup(app: Any) -> None:
    from sphinx.ext.doctest import DoctestDirective

    class PyconDirective(DoctestDirective):
        """A ```pycon fence: sphinx.ext.doctest's ``doctest`` under another name (it reads its own name)."""

        def run(self) -> list[Any]:
            self.name = "doctest"
            return super().run()

    app.add_directive("pycon", PyconDirective)
    app.connect("autodoc-skip-member", _skip_shadowed)
    app.connect("autodoc-process-docstring", _plain_math)
