"""The range of naturalness m on real human conversations, per predictor checkpoint.

m has no fixed scale: its level depends on the predictor (and, for an audio predictor, on the
voices and the band). So the range it is read against is measured per checkpoint, on real
human conversations (``tools/build_naturalness_range.py`` writes
``turneval/data/naturalness_human_range.json``: SpokenWOZ telephone calls, AMI headset channel
pairs, Switchboard test calls' timing; the file names its sources, command and commit).

    >>> entry = human_m_range("checkpoints/future_activity_predictor_lookahead")
    >>> sorted(entry["range"])
    ['high', 'low', 'median', 'n', 'source']
    >>> human_m_range("somewhere/my_own_predictor") is None
    True

A checkpoint is known by the name in its ``provenance.json``, else by its folder's name.
Imports nothing heavy (the CLI reads it before any model loads).
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any


RANGE_FILE = "data/naturalness_human_range.json"
"""The data file, inside the ``turneval`` package."""


@lru_cache(maxsize=1)
def _text() -> str:
    return resources.files("turneval").joinpath(RANGE_FILE).read_text(encoding="utf-8")


def naturalness_ranges() -> dict[str, Any]:
    """The whole data file (a fresh copy): description, sources, command, commit, and
    ``naturalness_m``: checkpoint name -> its range on real conversations."""
    return json.loads(_text())


def checkpoint_key(checkpoint: str | Path) -> str:
    """The name under which a checkpoint's range is stored: its ``provenance.json`` name when
    the folder has one, else the folder's (or a Hub id's last part's) name, with the run folder
    for a training run's ``final`` / ``step_N`` (as the benchmarks name checkpoints)."""
    folder = Path(str(checkpoint))
    provenance = folder / "provenance.json"
    if provenance.is_file():
        try:
            name = json.loads(provenance.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError):
            name = None
        if isinstance(name, str) and name:
            return name
    if folder.name == "final" or folder.name.startswith("step_"):
        return f"{folder.parent.name}/{folder.name}"
    return folder.name


def human_m_range(checkpoint: str | Path | None) -> dict[str, Any] | None:
    """The range of m on real human conversations measured with ``checkpoint`` (a folder, a Hub
    id or a name): ``{"range": {"low", "high", "median", "n", "source"}, "sd", "min", "max",
    "measured_on", ...}``; None when that predictor was never measured (its m has no reference)."""
    if checkpoint is None:
        return None
    return naturalness_ranges()["naturalness_m"].get(checkpoint_key(checkpoint))
