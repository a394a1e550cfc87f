"""A generated section of a page (``docs/results/*.md``): the text between two marker lines, rewritten in place.

Used by ``sltcheck findings --readme`` (the checks' findings) and ``sltcheck repro readme``
(the paper beside sltcheck); each owns its markers.
"""

from __future__ import annotations

from pathlib import Path


def rewrite_section(readme: Path, start: str, end: str, text: str) -> None:
    """Replace what stands between ``start`` and ``end`` in ``readme`` by ``text``."""
    content = readme.read_text()
    if start not in content or end not in content:
        raise ValueError(f"readme must contain the markers {start!r} and {end!r}: {readme} has not")
    head, rest = content.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{start}\n{text}{end}{tail}")
