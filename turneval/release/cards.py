"""Cards (README.md with YAML front matter): read, change the metadata, write back."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def split_front_matter(card: Path) -> tuple[dict[str, Any], str]:
    """(the YAML metadata as a dict, the Markdown body) of a card; raises naming the file."""
    import yaml

    from .plan import ReleaseError

    try:
        text = card.read_text(encoding="utf-8")
    except OSError as err:
        raise ReleaseError(f"{card}: cannot read the card ({err.strerror}); the release runs from a source checkout") from None
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ReleaseError(f"{card}: the YAML front matter opened by '---' is never closed")
    try:
        meta = yaml.safe_load(text[4:end]) or {}
    except yaml.YAMLError as err:
        raise ReleaseError(f"{card}: the YAML front matter does not parse: {err}") from None
    return dict(meta), text[end + len("\n---\n"):]


def join_front_matter(meta: dict[str, Any], body: str) -> str:
    """A card's text from its metadata and body (keys in the order given)."""
    import yaml

    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{head}---\n{body if body.startswith(chr(10)) else chr(10) + body}"


def insert_after_title(body: str, section: str) -> str:
    """``section`` placed after the card's first '# ' title line (or at the top when there is none)."""
    lines = body.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "".join(lines[: i + 1]) + "\n" + section.rstrip("\n") + "\n" + "".join(lines[i + 1:])
    return section.rstrip("\n") + "\n\n" + body
