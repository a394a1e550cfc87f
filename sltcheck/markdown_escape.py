"""Strings read from a result file, made inert for the Markdown pages sltcheck generates.

The docs site renders the pages with MyST, which passes raw HTML through and reads ``$...$`` as math:
a string a result file holds (sealed, but anyone can reseal an edited file) must show as the text it
is, never as markup. :func:`escape` backslash-escapes every character with a meaning in CommonMark
or MyST (a backslash before ASCII punctuation always means "this character as text", and inside a
code span it is shown as it is: neither makes markup) and turns line breaks into spaces, so a string
can neither start a block nor end a table row. An underscore inside a word stays as it is
(``eps_max``): there it can neither open nor close emphasis. :func:`escaped` applies it to every
string of a document, keys included; :func:`fenced` puts text in a code block no line of it can close.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

# CommonMark's inline and HTML metacharacters, MyST's math ($) and roles ({...}), tables' cell separator.
_SPECIAL = re.compile(r"[\\`*\[\]<>&|$~{}!#]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_LINE_BREAK = re.compile(r"\r\n|[\r\n\v\f\x85\u2028\u2029]")


def escape(text: str) -> str:
    """``text`` as Markdown that renders as exactly ``text`` (line breaks as spaces)."""
    return _SPECIAL.sub(lambda found: "\\" + found[0], _LINE_BREAK.sub(" ", text))


def escaped(value: Any, verbatim: Collection[str] = ()) -> Any:
    """``value`` (a JSON document) with every string escaped, dictionary keys included; the
    top-level keys named in ``verbatim`` are left as they are (shown by the caller in a code block)."""
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, dict):
        return {escape(k) if isinstance(k, str) else k: v if k in verbatim else escaped(v)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [escaped(v) for v in value]
    return value


def fenced(text: str, info: str = "text") -> list[str]:
    """``text`` as a fenced code block whose fence is longer than any run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", text, fence]


__all__ = ["escape", "escaped", "fenced"]
