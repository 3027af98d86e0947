"""The papers' human reference values (Talking Turns Tables 2, 6, 8) that reports print beside ours."""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any


@lru_cache(maxsize=1)
def _reference_text() -> str:
    return resources.files("turneval").joinpath("data/reference_values.json").read_text(encoding="utf-8")


def reference_values() -> dict[str, Any]:
    """The papers' reference values (``turneval/data/reference_values.json``), a fresh copy."""
    return json.loads(_reference_text())


def reference_lookup() -> dict[str, dict[str, Any]]:
    """The reference entries by key (e.g. ``"statistics.gap_per_min"``)."""
    return {entry["key"]: entry for entry in reference_values()["values"]}
