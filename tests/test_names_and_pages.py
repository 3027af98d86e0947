"""Names that say one thing and pages that read (STYLE.md): checked on the files as committed."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[1]
OUTSIDE_DOCUMENT = "SPEC " + "§"  # a specification that is not in the repository (split so this file does not match)


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    suffixes = {".py", ".md", ".json", ".yaml", ".yml", ".txt", ".toml", ".cfg"}
    return [REPO / name for name in out.splitlines() if Path(name).suffix in suffixes and (REPO / name).is_file()]


def test_no_file_points_to_a_document_outside_the_repository():
    found = [str(p.relative_to(REPO)) for p in _tracked_text_files() if OUTSIDE_DOCUMENT in p.read_text(encoding="utf-8", errors="replace")]
    assert not found, f"these files cite {OUTSIDE_DOCUMENT}N, a document that does not ship: {found}; cite a file of the repository"


@pytest.mark.parametrize("page", ["docs/performance.md", "docs/validation.md"])
def test_the_figure_pages_read_on_a_few_screens(page):
    lines = (REPO / page).read_text(encoding="utf-8").splitlines()
    assert len(lines) < 300, f"{page} has {len(lines)} lines; earlier runs belong in docs/history.md"


def test_the_performance_page_opens_with_its_figures():
    text = (REPO / "docs/performance.md").read_text(encoding="utf-8")
    assert text.index("## Summary") < text.index("## Headline figures") and "## All figures" not in text
    assert (REPO / "docs/performance_figures.md").is_file() and (REPO / "docs/performance.json").is_file()


CARDS = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "model_cards").rglob("README.md"))


@pytest.mark.parametrize("card", CARDS)
def test_every_card_is_under_250_lines_with_its_links_real(card):
    path = REPO / card
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 250, f"{card}: history belongs at the end of docs/history.md"
    links = [t for t in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text) if "://" not in t]
    missing = [t for t in links if not (path.parent / t).exists()]
    assert not missing, f"{card}: links to files that do not exist: {missing}"


def test_each_model_card_opens_with_what_it_heard_and_how_to_load_it():
    for card in (c for c in CARDS if "/datasets/" not in c):
        text = (REPO / card).read_text(encoding="utf-8")
        first_screen = text[text.index("\n# "):][:9000]
        assert "What it heard" in first_screen and "from_pretrained" in first_screen, f"{card}: see STYLE.md, model cards"
