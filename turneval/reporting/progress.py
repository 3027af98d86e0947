"""Progress bars of the report's long stages (on stderr, so stdout stays the result)."""
from __future__ import annotations

import sys
from typing import Iterable


def progress_bar(iterable: Iterable, total: int | None, desc: str, enabled: bool) -> Iterable:
    """``iterable`` with a tqdm bar when ``enabled`` (the bar disappears when done)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit="block", disable=not enabled, leave=False, file=sys.stderr)
