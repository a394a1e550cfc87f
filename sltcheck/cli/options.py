"""The command line's one validation layer: every option's value is checked while it is parsed.

Each option names a validator as its argparse ``type``: a callable that turns the command-line
string into the value or raises :class:`argparse.ArgumentTypeError` saying what is allowed. The
parser (:mod:`sltcheck.cli`) prints that as one line, ``sltcheck: error: --OPTION: ...``, and
exits 2, so a bad value stops the command before its handler runs: before any file is written.

A validator states its domain (``kind``, bounds, names), which the parser-walking test
(``tests/test_bad_input.py``) reads to know what each option must refuse: it feeds every option
of every command a table of hostile values and needs no row per option. :func:`harden` gives an
option added with a bare ``type=int``, ``type=float``, ``type=str`` or no type the conservative
default (``DEFAULT_FOR``), so no option of a new command escapes the layer; give an explicit
validator to say more (a range, names, a path that must exist).

What needs two options at once, or the machine (a licence, a GPU), is checked by the command's
``validate`` function (``CommandLine.command(..., validate=...)``), which runs after parsing and
before the handler.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

MAX_INT = 2**63 - 1  # what SQLite and JSON readers hold exactly
MAX_SEED = 2**32 - 1  # numpy's legacy seeding takes no more
MAX_WORKERS = 1024
NAME_MAX = 255  # bytes in one path component (Linux, macOS)
PATH_MAX = 4000  # bytes in a whole path (Linux allows 4096 with its terminator)
TEXT_MAX = 1000


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


class Validator:
    """An argparse ``type``: ``validator(text)`` is the value, or an ArgumentTypeError."""

    kind = "custom"
    # What the value must be, in words ("an integer from 1 to 1024").
    description = "a valid value"

    def __call__(self, text: str) -> Any:
        raise NotImplementedError

    def refuse(self, text: str, why: str | None = None) -> argparse.ArgumentTypeError:
        return argparse.ArgumentTypeError(why or f"must be {self.description}, got {_shown(text)}")

    def example(self, workdir: Path) -> str:
        """A value this validator accepts (files it needs are made under ``workdir``)."""
        raise NotImplementedError

    def __repr__(self) -> str:  # argparse names the type in some messages
        return self.description


class Integer(Validator):
    kind = "integer"

    def __init__(self, low: int = 0, high: int = MAX_INT) -> None:
        self.low, self.high = low, high
        self.description = f"an integer from {low} to {high}"

    def __call__(self, text: str) -> int:
        try:
            value = int(text.strip(), 10)
        except ValueError:
            raise self.refuse(text) from None
        if not self.low <= value <= self.high:
            raise self.refuse(text)
        return value

    def example(self, workdir: Path) -> str:
        return str(self.low)


class Number(Validator):
    """A finite float in [low, high] (``low_open``/``high_open``: the end excluded)."""

    kind = "number"

    def __init__(self, low: float, high: float, *, low_open: bool = False, high_open: bool = False) -> None:
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open
        self.description = (f"a number {'>' if low_open else '>='} {low:g} and {'<' if high_open else '<='} "
                            f"{high:g}")

    def contains(self, value: float) -> bool:
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return math.isfinite(value) and above and below

    def __call__(self, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise self.refuse(text) from None
        if not self.contains(value):
            raise self.refuse(text)
        return value

    def example(self, workdir: Path) -> str:
        if not self.low_open:
            return repr(float(self.low))
        return repr((self.low + self.high) / 2 if self.high - self.low < 1 else self.low + 1)


class Choice(Validator):
    """One of ``names`` (the value is the name)."""

    kind = "choice"

    def __init__(self, names: Iterable[str], description: str | None = None) -> None:
        self.names = tuple(names)
        self.description = description or "one of " + ", ".join(self.names)

    def __call__(self, text: str) -> str:
        if text not in self.names:
            raise self.refuse(text)
        return text

    def example(self, workdir: Path) -> str:
        return self.names[0]


class Names(Validator):
    """Distinct names from ``names`` joined by ``separator`` (a list of them)."""

    kind = "names"

    def __init__(self, names: Iterable[str], separator: str = ",") -> None:
        self.names, self.separator = tuple(names), separator
        self.description = f"distinct names joined by {separator!r} from {', '.join(self.names)}"

    def __call__(self, text: str) -> list[str]:
        parts = [part.strip() for part in text.split(self.separator)]
        if not text.strip() or any(p not in self.names for p in parts) or len(set(parts)) != len(parts):
            raise self.refuse(text)
        return parts

    def example(self, workdir: Path) -> str:
        return self.names[0]


class Numbers(Validator):
    """Comma-separated values, each ``element`` (an :class:`Integer` or :class:`Number`) or one of ``words``;
    ``increasing``: strictly increasing numbers."""

    kind = "numbers"

    def __init__(self, element: Integer | Number, words: Sequence[str] = (), increasing: bool = False) -> None:
        self.element, self.words, self.increasing = element, tuple(words), increasing
        also = f" or {', '.join(map(repr, self.words))}" if self.words else ""
        order = "strictly increasing " if increasing else ""
        self.description = f"{order}comma-separated values, each {element.description}{also}"

    def __call__(self, text: str) -> list[Any]:
        parts = [part.strip() for part in text.split(",")]
        if not text.strip() or not all(parts):
            raise self.refuse(text)
        values: list[Any] = []
        for part in parts:
            if part in self.words:
                values.append(part)
                continue
            try:
                values.append(self.element(part))
            except argparse.ArgumentTypeError:
                raise self.refuse(text) from None
        if self.increasing and any(b <= a for a, b in itertools.pairwise(values)):
            raise self.refuse(text)
        return values

    def example(self, workdir: Path) -> str:
        return self.element.example(workdir)


def _check_path_text(validator: Validator, text: str) -> None:
    if not text.strip() or "\x00" in text:
        raise validator.refuse(text, f"must name a path, got {_shown(text)}")
    if len(os.fsencode(text)) > PATH_MAX or any(len(os.fsencode(part)) > NAME_MAX for part in Path(text).parts):
        raise validator.refuse(text, f"is too long a path (a name over {NAME_MAX} bytes or a path over "
                                     f"{PATH_MAX}): {_shown(text)}")


class InputPath(Validator):
    """An existing file (``what='file'``), directory (``'directory'``) or either (``'path'``);
    ``check(path)`` may refuse it further (raising ValueError: the content is wrong)."""

    kind = "input"

    def __init__(self, what: str = "file", check: Callable[[Path], object] | None = None,
                 description: str | None = None, example_text: str | None = None) -> None:
        self.what, self.check, self.example_text = what, check, example_text
        self.description = description or f"an existing {what}"

    def __call__(self, text: str) -> str:
        _check_path_text(self, text)
        path = Path(text)
        exists = {"file": path.is_file, "directory": path.is_dir, "path": path.exists}[self.what]
        if not exists():
            found = "does not exist" if not path.exists() else f"is not a {self.what}"
            raise self.refuse(text, f"{text!r} {found}; give {self.description}")
        if not os.access(path, os.R_OK):
            raise self.refuse(text, f"{text!r} cannot be read")
        if self.check is not None:
            try:
                self.check(path)
            except (ValueError, OSError) as error:
                raise self.refuse(text, f"{text!r}: {error}") from None
        return text

    def example(self, workdir: Path) -> str:
        if self.what == "directory" and self.check is None:
            return str(workdir)
        if self.what == "directory" or (self.check is not None and self.example_text is None):
            raise NotImplementedError(f"no example of {self.description}")
        path = workdir / "example-input.json"
        path.write_text(self.example_text or "{}\n", encoding="utf-8")
        return str(path)


class OutputPath(Validator):
    """A path to create or replace: a directory (``what='directory'``) or a file with one of
    ``suffixes``. Nothing is created here; the command proves it writable before its work."""

    kind = "output"

    def __init__(self, what: str = "directory", suffixes: Sequence[str] = ()) -> None:
        self.what, self.suffixes = what, tuple(suffixes)
        ending = f" ending in {' or '.join(self.suffixes)}" if self.suffixes else ""
        self.description = f"a {what} to write{ending}"

    def __call__(self, text: str) -> str:
        _check_path_text(self, text)
        path = Path(text)
        if self.suffixes and path.suffix not in self.suffixes:
            raise self.refuse(text)
        wrong = path.is_file() if self.what == "directory" else path.is_dir()
        if wrong:
            raise self.refuse(text, f"{text!r} is a {'file' if self.what == 'directory' else 'directory'}; "
                                    f"give {self.description}")
        ancestor = path.parent if self.what == "file" or path.exists() else path
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        ancestor = ancestor if ancestor.exists() else Path(".")
        if not ancestor.is_dir():
            raise self.refuse(text, f"{text!r} cannot be written: {str(ancestor)!r} is a file, "
                                    "not a directory")
        if not os.access(ancestor, os.W_OK | os.X_OK):
            raise self.refuse(text, f"{text!r} cannot be written ({str(ancestor)!r} is not writable)")
        return text

    def example(self, workdir: Path) -> str:
        return str(workdir / f"new-output{self.suffixes[0] if self.suffixes else ''}")


class Text(Validator):
    """Free text: not blank, at most ``max_length`` characters, no control characters."""

    kind = "text"

    def __init__(self, max_length: int = TEXT_MAX) -> None:
        self.max_length = max_length
        self.description = f"text of 1 to {max_length} characters"

    def __call__(self, text: str) -> str:
        if not text.strip() or len(text) > self.max_length or any(ord(c) < 32 for c in text):
            raise self.refuse(text)
        return text

    def example(self, workdir: Path) -> str:
        return "text"


class SchedulerAddress(Validator):
    """A Dask scheduler's address: ``tcp://HOST:PORT`` (or tls, ws, wss, ucx)."""

    kind = "address"
    description = "a scheduler address such as tcp://10.0.0.5:8786"
    _PATTERN = re.compile(r"^(tcp|tls|ws|wss|ucx)://[A-Za-z0-9_.\-\[\]:]+:(\d{1,5})$")

    def __call__(self, text: str) -> str:
        match = self._PATTERN.match(text)
        if not match or not 1 <= int(match[2]) <= 65535:
            raise self.refuse(text)
        return text

    def example(self, workdir: Path) -> str:
        return "tcp://127.0.0.1:8786"


class Checked(Validator):
    """A value that ``parse`` (raising ValueError) turns into the option's value; the domain
    knowledge stays where the code that uses it lives."""

    def __init__(self, parse: Callable[[str], Any], description: str, example: str | None = None) -> None:
        self.parse, self.description, self._example = parse, description, example

    def __call__(self, text: str) -> Any:
        if not text.strip():
            raise self.refuse(text)
        try:
            return self.parse(text)
        except (ValueError, TypeError, ImportError) as error:  # ImportError: a missing extra, named by it
            raise self.refuse(text, f"{error}") from None

    def example(self, workdir: Path) -> str:
        if self._example is None:
            raise NotImplementedError(f"no example of {self.description}")
        return self._example


# Shared options, written once.
SEED = Integer(0, MAX_SEED)
WORKERS = Integer(1, MAX_WORKERS)
OUT_DIRECTORY = OutputPath("directory")
JSON_OUT = OutputPath("file", (".json",))
INPUT_FILE = InputPath("file")
SCHEDULER = SchedulerAddress()


def readme(start: str, end: str) -> InputPath:
    """A page (the README or a docs/results/ file) holding both markers of the section a command rewrites."""

    def has_markers(path: Path) -> None:
        from sltcheck.readme_section import section_problem

        problem = section_problem(path.read_text(encoding="utf-8", errors="replace"), start, end)
        if problem is not None:
            raise ValueError(problem)

    return InputPath("file", has_markers, f"a page (README or docs/results/*.md) with the lines {start!r} and {end!r}",
                     f"{start}\n{end}\n")


DEFAULT_FOR: dict[Any, Callable[[], Validator]] = {
    int: lambda: Integer(0, MAX_INT),
    float: lambda: Number(0.0, 1e300),
    str: Text,
    None: Text,
}


def harden(parser: argparse.ArgumentParser) -> None:
    """Give every value-taking option without a validator its default one (``DEFAULT_FOR``)
    and escape a lone ``%`` in help texts (argparse formats them with ``%``)."""
    for action in parser._actions:
        if action.help and action.help is not argparse.SUPPRESS:  # "%%" and "%(default)s" stay as they are
            action.help = re.sub(r"%%|%\(|%", lambda found: "%%" if found[0] == "%" else found[0], action.help)
        takes_value = action.nargs != 0 and not isinstance(action, argparse._SubParsersAction | argparse._HelpAction)
        if (takes_value and action.choices is None and not isinstance(action.type, Validator)
                and action.type in DEFAULT_FOR):
            action.type = DEFAULT_FOR[action.type]()


def validator_of(action: argparse.Action) -> Validator | None:
    """The validator of a value-taking option (argparse ``choices`` count as a :class:`Choice`)."""
    if isinstance(action.type, Validator):
        return action.type
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return Choice([str(c) for c in action.choices])
    return None
