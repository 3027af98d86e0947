"""How a report prints a number (terminal, HTML, Space): one rule for every table."""
from __future__ import annotations

import math
from typing import Any

import numpy as np


def format_number(value: Any, digits: int = 4) -> str:
    """A figure for people: ``digits`` significant digits, whole numbers from ``10**digits`` on,
    ``n/a`` for a missing or non-finite value, yes/no for a flag."""
    if value is None:
        return "n/a"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            return "n/a"
        return f"{value:.{digits}g}" if abs(value) < 10**digits else f"{value:.0f}"
    return str(value)
