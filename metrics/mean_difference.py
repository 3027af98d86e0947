"""The difference of two groups' means with its 95 % interval (independent samples).

Two systems in ``turneval compare``, and two slices of a fleet in ``turneval batch --by``, are
put side by side with the same numbers: each side's mean with its normal-approximation interval
(:func:`~turneval.metrics.intervals.mean_interval`) and the difference B - A with the interval
``+- 1.96 sqrt(sd_A^2 / n_A + sd_B^2 / n_B)``.

    >>> d = mean_difference([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])["difference"]
    >>> d["mean"], round(d["ci95_half_width"], 4)
    (1.0, 1.6003)
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from .intervals import Z95, mean_interval


def mean_difference(values_a: Sequence[float], values_b: Sequence[float]) -> dict[str, Any]:
    """Each side's mean with its 95 % CI (``a``, ``b``) and the difference B - A with its CI
    (``difference``: ``mean``, ``ci95_low``, ``ci95_high``, ``ci95_half_width``; NaN when a side
    is empty)."""
    ci_a, ci_b = mean_interval(values_a), mean_interval(values_b)
    diff = ci_b.mean - ci_a.mean
    # independent samples, so the variances of the two means add
    half = Z95 * math.sqrt(ci_a.var / ci_a.n + ci_b.var / ci_b.n) if ci_a.n and ci_b.n else math.nan
    return {"a": ci_a.to_dict(), "b": ci_b.to_dict(),
            "difference": {"mean": diff, "ci95_low": diff - half, "ci95_high": diff + half, "ci95_half_width": half}}
