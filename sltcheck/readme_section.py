"""A generated section of a page (``docs/results/*.md``): the text between two marker lines, rewritten in place.

Used by ``sltcheck findings --readme``/``--headline`` (the checks' findings), ``sltcheck repro readme``
(the paper beside sltcheck), ``sltcheck certify --readme`` and ``sltcheck bench solvers --readme``;
each owns its markers. Each command checks the page with :func:`section_problem` when it parses its
options, before any work, so a page it cannot rewrite never costs a run.
"""

from __future__ import annotations

from pathlib import Path


def section_problem(text: str, start: str, end: str) -> str | None:
    """Why the page ``text`` holds no section between ``start`` and ``end`` (None: it holds one):
    a marker missing, or the end marker only before the start marker."""
    missing = [marker for marker in (start, end) if marker not in text]
    if missing:
        return f"lacks the marker line {missing[0]!r} of the section it would rewrite"
    if end not in text.split(start, 1)[1]:
        return f"has its end marker {end!r} before its start marker {start!r}; put the start marker first"
    return None


def rewrite_section(readme: Path, start: str, end: str, text: str) -> None:
    """Replace what stands between ``start`` and ``end`` in ``readme`` by ``text``."""
    content = readme.read_text()
    problem = section_problem(content, start, end)
    if problem is not None:
        raise ValueError(f"readme must contain the markers {start!r} and {end!r}, in this order: {readme} {problem}")
    head, rest = content.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{start}\n{text}{end}{tail}")
