"""The front door (STYLE.md): README.md short, its picture and links real, its commands known."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from turneval.cli import build_parser


REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _links(path: Path) -> list[str]:
    return [t for t in LINK.findall(path.read_text(encoding="utf-8")) if "://" not in t]


def test_readme_is_two_screens_with_its_sections_in_order():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    order = ["## Set-up", "## Quick start", "## What you get", "## How far to trust the models", "## Commands",
             "## Documentation", "## Citation", "## Licences"]
    positions = [text.index(h) for h in order]
    assert positions == sorted(positions)
    assert "--require" in text and "make demo" in text and "make test" in text


@pytest.mark.parametrize("doc", ["README.md", "docs/history.md", "docs/report.md", "docs/validation.md", "docs/performance.md"])
def test_relative_links_resolve(doc):
    path = REPO / doc
    missing = [t for t in _links(path) if not (path.parent / t).exists()]
    assert not missing, f"{doc}: links to files that do not exist: {missing}"


def test_the_readme_picture_is_a_small_png():
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README.read_text(encoding="utf-8"))
    assert len(images) == 1
    png = REPO / images[0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size < 300_000


def test_every_command_in_the_readme_exists():
    text = README.read_text(encoding="utf-8")
    named = set(re.findall(r"`turneval ([a-z][a-z-]*[a-z])", text))
    known = set(build_parser()._subparsers._group_actions[0].choices)  # argparse keeps them there
    assert named and named <= known, f"README names commands turneval does not have: {named - known}"
