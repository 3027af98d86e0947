"""What both benchmark-run evaluators share: number formatting, progress, schemas (JSON values: dataset_scripts.files)."""
from __future__ import annotations

import json
import math
import sys
from importlib import resources
from typing import Any, Iterable


def fmt(value: Any, digits: int = 3) -> str:
    """A table cell: ``n/a`` for missing or NaN, fixed digits for floats."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def progress(iterable: Iterable, total: int | None, desc: str, enabled: bool) -> Iterable:
    """A tqdm bar on stderr (nothing when disabled)."""
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit="sample", leave=False, file=sys.stderr)


def load_schema(name: str) -> dict[str, Any]:
    """A JSON schema shipped under ``turneval/data/``."""
    return json.loads(resources.files("turneval").joinpath(f"data/{name}").read_text(encoding="utf-8"))
