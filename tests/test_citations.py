"""The paper is cited by section, equation and lemma number, never by a line of a text file the
repository does not hold (``shared/paper/paper.txt`` is the project's copy, not the package's)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What a reader sees: the package (code, docstrings, its READMEs), the README, the docs, the changelog.
SEARCHED = ("sltcheck", "docs", "README.md", "CHANGELOG.md", "CONTRIBUTING.md")
LINE_CITATION = re.compile(r"(paper|workshop-version)\.txt:\s*\d|paper\.txt:")


def _texts() -> list[Path]:
    files: list[Path] = []
    for name in SEARCHED:
        path = ROOT / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files += [p for p in path.rglob("*") if p.is_file() and p.suffix in (".py", ".md", ".j2", ".rst", ".txt")
                      and "_build" not in p.parts and "generated" not in p.parts]
    return files


def test_no_citation_by_a_line_of_paper_txt() -> None:
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
             for path in _texts()
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if LINE_CITATION.search(line)]
    assert not found, "cite the paper by section, equation and lemma number instead:\n" + "\n".join(found)


def test_the_check_can_fail() -> None:
    """The pattern catches the forms the issue found (a check that cannot fail is a defect)."""
    for cited in ("(paper.txt:841)", "shared/paper/paper.txt:468 sums", "workshop-version.txt:110",
                  "paper.txt:240, :841"):
        assert LINE_CITATION.search(cited), cited
    assert not LINE_CITATION.search("Appendix B.1; Section 4.2, \"Varying the Hidden Dimensions\"")
