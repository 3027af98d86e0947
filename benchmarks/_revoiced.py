"""The re-voiced Switchboard corpus for the benchmarks (docs/revoicing.md).

The folder (``$TURNEVAL_REVOICED``, default ``../cache/revoice`` beside the repository) holds one
sub-folder per split with its ``manifest.jsonl``: ``test/`` (test calls, Flite voices that no
training excerpt used) and ``val/``. Benchmarks that need it say so and return no figure when
it is absent.
"""
from __future__ import annotations

import os
from pathlib import Path


ENV_VAR = "TURNEVAL_REVOICED"
DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "cache" / "revoice"


def revoiced_root(split: str = "test") -> Path | None:
    """The corpus folder that has ``split/manifest.jsonl``: ``$TURNEVAL_REVOICED``, else the
    default place; None when neither has it."""
    for candidate in (os.environ.get(ENV_VAR), DEFAULT_ROOT):
        if candidate and (Path(candidate) / split / "manifest.jsonl").is_file():
            return Path(candidate)
    return None


def split_folder(split: str = "test") -> Path:
    """Where ``split`` is looked for (it may not exist): under ``$TURNEVAL_REVOICED`` when set,
    else under the default place."""
    return Path(os.environ.get(ENV_VAR) or DEFAULT_ROOT) / split
