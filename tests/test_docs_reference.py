"""docs/ reads as reference: dated headings live only in history.md, table cells stay short.

STYLE.md (docs/): pages are written in the present tense; dated runs and superseded
generations go to docs/history.md, and table cells stay short (long explanations go in a
sentence or a note list under the table).
"""

from __future__ import annotations

import re
from pathlib import Path


DOCS = Path(__file__).resolve().parent.parent / "docs"
MAX_CELL_CHARS = 250
MONTHS = (
    "Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    "|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?"
)
DATE = re.compile(rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b(?:{MONTHS})\.? \d{{1,2}}\b")
FENCE = re.compile(r"^\s*(```|~~~)")


def _prose_lines(path: Path) -> list[tuple[int, str]]:
    """Lines of a page outside fenced code blocks, numbered from 1."""
    lines, in_code = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if not in_code:
            lines.append((number, line))
    return lines


def _cells(line: str) -> list[str]:
    """The cells of a markdown table row; escaped pipes stay inside their cell."""
    body = line.strip().strip("|")
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", body)]


def dated_headings(path: Path) -> list[str]:
    return [
        f"{path.name}:{number}: {line.strip()}"
        for number, line in _prose_lines(path)
        if line.lstrip().startswith("#") and DATE.search(line)
    ]


def long_cells(path: Path) -> list[str]:
    found = []
    for number, line in _prose_lines(path):
        if not line.lstrip().startswith("|"):
            continue
        for cell in _cells(line):
            if len(cell) > MAX_CELL_CHARS:
                found.append(f"{path.name}:{number}: {len(cell)} chars: {cell[:60]}...")
    return found


def test_checker_finds_dated_headings_and_long_cells(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# Judge\n## A retune (2026-11-25)\n### Runs of Nov 27\n## Marks 3 and Maybe 4\n"
        f"| a | b |\n|---|---|\n| {'x' * 251} | short |\n| {'y' * 250} | ok |\n"
        "```\n# 2026-11-25 inside code\n```\n",
        encoding="utf-8",
    )
    assert dated_headings(page) == [
        "page.md:2: ## A retune (2026-11-25)",
        "page.md:3: ### Runs of Nov 27",
    ]
    assert len(long_cells(page)) == 1 and "251 chars" in long_cells(page)[0]


def _pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def test_no_dated_heading_outside_history():
    offenders = [
        hit for page in _pages() if page.name != "history.md" for hit in dated_headings(page)
    ]
    assert not offenders, (
        "docs/ pages are reference in the present tense; move dated sections to "
        "docs/history.md (a changelog, newest first):\n" + "\n".join(offenders)
    )


def test_no_long_table_cell_in_docs():
    offenders = [hit for page in _pages() for hit in long_cells(page)]
    assert not offenders, (
        f"table cells in docs/ stay under {MAX_CELL_CHARS} characters; put the long text in a "
        "sentence or a note list under the table:\n" + "\n".join(offenders)
    )
