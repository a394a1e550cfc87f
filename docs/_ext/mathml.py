"""Math in the HTML pages as MathML, converted at build time by latex2mathml (no script, no network;
the same conversion as the report's formulas, :mod:`sltcheck.report.formulas`)."""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx


def _mathml(latex: str, display: str) -> str:
    from latex2mathml.converter import convert

    return convert(latex, display=display)


def _visit_inline(self: Any, node: nodes.Element) -> None:
    self.body.append(_mathml(node.astext(), "inline"))
    raise nodes.SkipNode


def _visit_block(self: Any, node: nodes.Element) -> None:
    if node.get("number"):
        self.body.append(f'<span class="eqno">({node["number"]})</span>')
    self.body.append(f'<div class="math">{_mathml(node.astext(), "block")}</div>')
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_html_math_renderer("mathml", (_visit_inline, None), (_visit_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
