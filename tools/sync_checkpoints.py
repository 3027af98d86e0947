"""Refresh the copies that checkpoints carry (``make sync-checkpoints``).

    python tools/sync_checkpoints.py

A checkpoint carries ``configuration_*.py`` / ``modeling_*.py`` for ``trust_remote_code``; they
must be the package's own ``modeling/`` files (tests/test_package.py checks it). A checkpoint
that carries a README.md carries its model card of ``model_cards/`` (the one the release
publishes), so a local ``from_pretrained`` reader sees the same page. This is a developer tool
of a source checkout; finding a checkpoint at run time is :mod:`turneval.checkpoints`.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from turneval.checkpoints import EARLIER_GENERATIONS, bundled_root  # noqa: E402
from turneval.release.plan import MODEL_REPOS  # noqa: E402


MODELING = REPO / "modeling"
"""The package's own modeling code (``turneval.modeling``), the original of every copy."""


def checkpoint_folders(roots: list[Path] | None = None) -> list[Path]:
    """Every checkpoint folder under ``roots``: default, the bundled ones and the earlier
    generations a checkout keeps (they load the same code)."""
    if roots is None:
        roots = [bundled_root()] + ([EARLIER_GENERATIONS] if EARLIER_GENERATIONS.is_dir() else [])
    return sorted(p for root in roots for p in root.iterdir() if (p / "config.json").is_file())


def sync_code_copies(roots: list[Path] | None = None, source: Path = MODELING) -> list[Path]:
    """Copy ``source``'s modeling files (and the model cards) over the copies that the checkpoints
    under ``roots`` carry. Returns the files rewritten."""
    rewritten = []
    for folder in checkpoint_folders(roots):
        for copy in sorted(folder.glob("*.py")):
            original = source / copy.name
            if not original.is_file():
                raise FileNotFoundError(f"{copy} has no counterpart in {source}: remove it or add the module")
            if copy.read_bytes() != original.read_bytes():
                shutil.copyfile(original, copy)
                rewritten.append(copy)
        rewritten += _sync_card(folder)
    return rewritten


def _sync_card(folder: Path) -> list[Path]:
    """The checkpoint's README.md replaced by its model card when they differ."""
    copy = folder / "README.md"
    card = REPO / "model_cards" / MODEL_REPOS.get(folder.name, "") / "README.md"
    if not copy.is_file() or folder.name not in MODEL_REPOS or not card.is_file() or copy.read_bytes() == card.read_bytes():
        return []
    shutil.copyfile(card, copy)
    return [copy]


if __name__ == "__main__":
    changed = sync_code_copies()
    print("\n".join(f"rewrote {p}" for p in changed) or "checkpoint code copies are up to date")
