"""The shell examples of the README and the documentation run as written.

The Python examples are doctests that the documentation build runs (``tox -e docs``: ``sphinx-build -b
doctest``; the README's are included into docs/howto/python-api.md), so no page shows Python that was not
run. The shell examples (```` ```bash ```` blocks) are held here:

- every ``sltcheck ...`` line of every block parses: the command exists and every option, choice and value
  is one the CLI accepts (a path it names need not exist here: ``RUN/findings.json`` is a placeholder);
  ``tox -e NAME`` names an environment of tox.ini, ``python benchmarks/NAME.py`` a script that exists;
- a block right after the line ``<!-- runnable -->`` runs, command by command, in a fresh directory and must
  exit 0: the cheap variant of an expensive example (the full one is shown beside it, parsed only).
"""

from __future__ import annotations

import argparse
import configparser
import re
import shlex
from pathlib import Path

import pytest

from sltcheck.cli import complete_parser, main
from sltcheck.cli import options as cli_options

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "tests" / "README.md",
                *(ROOT / "docs").rglob("*.md")])
RUNNABLE = "<!-- runnable -->"
FENCE = re.compile(r"^(?P<mark><!-- runnable -->\n)?```bash\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, bool, str]]:
    """(page:line, runnable, text) of every ```bash block."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            where = f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, match.start('body')) + 1}"
            found.append((where, bool(match.group("mark")), match.group("body")))
    return found


def commands(block: str) -> list[list[str]]:
    """The block's commands as argument lists: continuations joined, comments dropped, split at ``&&``,
    ``;`` and ``|``, leading ``VAR=value`` assignments dropped."""
    found = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        current: list[str] = []
        for word in [*words, "&&"]:
            if word in ("&&", ";", "|", "||"):
                while current and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", current[0]):
                    current.pop(0)
                if current:
                    found.append(current)
                current = []
            else:
                current.append(word)
    return found


def sltcheck_arguments(command: list[str]) -> list[str] | None:
    """The arguments of an ``sltcheck`` (or ``.venv/bin/sltcheck``, ``python -m sltcheck``) command, else None."""
    if Path(command[0]).name == "sltcheck":
        return command[1:]
    if Path(command[0]).name.startswith("python") and command[1:3] == ["-m", "sltcheck"]:
        return command[3:]
    return None


EXAMPLES = blocks()


def _tox_envs() -> set[str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini", encoding="utf-8")
    envs = {s.removeprefix("testenv:") for s in parser.sections() if s.startswith("testenv:")}
    return envs | set(parser["tox"]["env_list"].replace(",", " ").split())


def _parse(parser: argparse.ArgumentParser, arguments: list[str]) -> int:
    """0 where ``arguments`` parse, else the parser's exit status (its one line on stderr)."""
    try:
        parser.parse_args(arguments)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 2
    return 0


def test_the_pages_have_shell_examples_and_some_run():
    assert len(EXAMPLES) > 10
    assert sum(runnable for _, runnable, _ in EXAMPLES) >= 3


@pytest.mark.parametrize(("where", "block"), [(w, b) for w, _, b in EXAMPLES], ids=[w for w, _, _ in EXAMPLES])
def test_every_command_of_a_shell_example_parses(where, block, monkeypatch, tmp_path, capsys):
    # A path an example names is a placeholder here: checked as a path, not for existence.
    monkeypatch.setattr(cli_options.InputPath, "__call__", lambda self, text: cli_options._check_path_text(self, text)
                        or text)
    monkeypatch.chdir(tmp_path)
    parser = complete_parser()
    for command in commands(block):
        arguments = sltcheck_arguments(command)
        if arguments is not None:
            status = _parse(parser, arguments)
            assert status == 0, f"{where}: `{shlex.join(command)}`: {capsys.readouterr().err.strip()}"
        elif command[0] == "tox" and "-e" in command:
            for env in command[command.index("-e") + 1].split(","):
                assert env in _tox_envs(), f"{where}: `{shlex.join(command)}`: tox.ini has no environment {env}"
        elif command[0].startswith("python") and len(command) > 1 and command[1].endswith(".py"):
            assert (ROOT / command[1]).is_file(), f"{where}: `{shlex.join(command)}`: no file {command[1]}"


@pytest.mark.parametrize(("where", "block"), [(w, b) for w, r, b in EXAMPLES if r],
                         ids=[w for w, r, _ in EXAMPLES if r])
def test_a_runnable_shell_example_runs(where, block, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for command in commands(block):
        arguments = sltcheck_arguments(command)
        assert arguments is not None, f"{where}: a runnable example runs sltcheck only, not `{shlex.join(command)}`"
        assert main(arguments) == 0, f"{where}: `{shlex.join(command)}` failed"


def test_the_parser_of_this_test_reads_a_block_as_a_shell_would():
    block = ("sltcheck check --only lemma8 \\\n    --no-search   # a comment\n"
             "X=1 sltcheck widths --eps 0.1 && tox -e docs | head\n")
    assert commands(block) == [["sltcheck", "check", "--only", "lemma8", "--no-search"],
                               ["sltcheck", "widths", "--eps", "0.1"], ["tox", "-e", "docs"], ["head"]]


def test_a_wrong_option_in_an_example_fails(monkeypatch, tmp_path, capsys):
    """The check can fail: an en dash for ``--seed`` (what a typographer's quotes make of it), an unknown choice."""
    for bad in ("sltcheck check \u2013seed 0\n", "sltcheck check --profile fast\n", "tox -e nope\n"):
        with pytest.raises(AssertionError):
            test_every_command_of_a_shell_example_parses("example", bad, monkeypatch, tmp_path, capsys)


def test_the_docs_keep_two_hyphens_in_an_option():
    """Sphinx's smartquotes would print ``--seed`` in the CLI reference as an en dash (a copied command fails)."""
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    assert re.search(r"^smartquotes = False$", conf, re.MULTILINE)


def test_no_page_shows_python_that_the_docs_build_does_not_run():
    """A ```python block would be shown and never run: examples are ```pycon or {doctest} blocks (run by
    ``sphinx-build -b doctest``) or notebook cells (run by MyST-NB)."""
    shown = [f"{page.relative_to(ROOT)}" for page in PAGES
             if re.search(r"^```python\s*$", page.read_text(encoding="utf-8"), re.MULTILINE)]
    assert shown == []


SKIPPABLE = re.compile(r"^```\{doctest\}\n:skipif: (?P<condition>.*?)\n\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)


def test_the_examples_the_docs_build_may_skip_run_where_torch_is(monkeypatch, tmp_path):
    """``tox -e docs`` installs no torch, so a doctest that needs it is skipped there (``:skipif:``); the
    test environment has torch (the extra ``all``), and runs it here, as the page shows it."""
    pytest.importorskip("torch")
    import doctest

    import sltcheck

    found = [(page, match.group("body")) for page in PAGES
             for match in SKIPPABLE.finditer(page.read_text(encoding="utf-8"))]
    assert found, "docs/howto/python-api.md has a reproduction doctest"
    monkeypatch.chdir(tmp_path)
    for page, body in found:
        test = doctest.DocTestParser().get_doctest(body, {"sltcheck": sltcheck}, page.name, str(page), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        assert runner.tries > 0
        assert runner.failures == 0, f"{page.relative_to(ROOT)}: a doctest failed (above)"
