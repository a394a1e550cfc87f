"""Formulas and docstrings for the report's page: LaTeX typeset as MathML, reStructuredText as HTML.

Each statement folder may hold a ``formulas.py`` (``PAPER``: the inequality as the paper prints it;
``MEASURED``: the side sltcheck measures; ``BOUNDS``: each variant's bound as encoded; ``WHERE``: what
their symbols stand for); each assumption's LaTeX is :data:`sltcheck.assumptions.LATEX`. They are
converted here to MathML by latex2mathml, offline and without a script, so the browser typesets them.
Docstring text (a statement's wording, its "Finding:" paragraph) is shown with its markup rendered:
inline literals and cross-references as code, indented blocks as preformatted text; nothing raw.
Knows no statement by name.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from markupsafe import Markup, escape


def mathml(latex: str, display: str = "inline") -> Markup:
    """``latex`` as a ``<math>`` element (latex2mathml's output is markup it built, not user text)."""
    from latex2mathml.converter import convert

    return Markup(convert(latex, display=display))


@functools.cache
def statement_formulas(name: str) -> dict[str, Any]:
    """The statement's formulas as MathML (empty where its folder has no ``formulas.py``): ``paper``,
    ``encoded`` (one row per variant: its name and measured <= bound), ``where``."""
    from sltcheck.contract import optional, submodule

    module = submodule(name, "formulas")
    if module is None:
        return {}
    measured = module.MEASURED
    encoded = [{"variant": variant, "math": mathml(f"{measured} \\le {bound}", "block")}
               for variant, bound in module.BOUNDS.items()]
    where = optional(module, "WHERE")
    return {"paper": mathml(module.PAPER, "block"), "encoded": encoded,
            "where": mathml(where) if where else None}


def assumption_formulas(names: tuple[str, ...] | list[str]) -> list[dict[str, Any]]:
    """Each assumption: its words and, where :data:`sltcheck.assumptions.LATEX` has it, its MathML."""
    from sltcheck.assumptions import ASSUMPTIONS, LATEX

    return [{"name": name, "text": ASSUMPTIONS[name].text, "source": ASSUMPTIONS[name].source,
             "math": mathml(LATEX[name]) if name in LATEX else None}
            for name in names if name in ASSUMPTIONS]


_ROLE = re.compile(r":(?:py:)?(?:func|mod|class|data|meth|attr|obj|exc|const):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def _inline(text: str) -> Markup:
    """One paragraph's inline markup as HTML: cross-references and ``literals`` as code (escaped)."""
    out: list[str] = []
    position = 0
    pattern = re.compile(f"{_ROLE.pattern}|{_LITERAL.pattern}")
    for match in pattern.finditer(text):
        out.append(str(escape(text[position:match.start()])))
        out.append(f"<code>{escape(match.group(1) or match.group(2))}</code>")
        position = match.end()
    out.append(str(escape(text[position:])))
    return Markup("".join(out))


def plain(text: str) -> str:
    """Docstring text with its markup stripped (roles and literals to their names), for plain-text places."""
    text = _ROLE.sub(lambda m: m.group(1), text)
    return _LITERAL.sub(lambda m: m.group(1), text)


def docstring_html(text: str) -> Markup:
    """Docstring text as HTML: paragraphs as ``<p>``, indented blocks (formulas, usage) as ``<pre>``,
    list items as lines, inline markup rendered; every piece of text escaped."""
    blocks: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text.strip("\n")):
        lines = paragraph.splitlines()
        if all(line.startswith("    ") or not line.strip() for line in lines):
            body = "\n".join(line[4:] for line in lines)
            blocks.append(f'<pre class="formula">{_inline(body)}</pre>')
        elif any(line.startswith("- ") for line in lines):
            items: list[str] = []
            for line in lines:
                if line.startswith("- ") or not items:
                    items.append(line.removeprefix("- "))
                else:
                    items[-1] += " " + line.strip()
            blocks.append("<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in items) + "</ul>")
        else:
            joined = re.sub(r"::$", ":", " ".join(line.strip() for line in lines))
            blocks.append(f"<p>{_inline(joined)}</p>")
    return Markup("\n".join(blocks))
