"""What both benchmark-run evaluators share: plain JSON values, number formatting, progress, schemas."""
from __future__ import annotations

import json
import math
import sys
from importlib import resources
from typing import Any, Iterable


def plain(value: Any) -> Any:
    """JSON-ready values: tuples become lists, NaN/inf become None, dataclasses go through ``to_dict``."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "to_dict"):
        return plain(value.to_dict())
    if hasattr(value, "item"):  # numpy scalars
        return plain(value.item())
    return str(value)


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
