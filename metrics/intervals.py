"""Confidence intervals shared by the turneval metrics.

Two kinds of interval are used across the papers turneval implements:

* the normal-approximation interval of a mean, ``mean +- z * sd / sqrt(n)`` with the sample
  standard deviation (ddof=1) and ``z = 1.96`` (Talking Turns §4, TurnNat's
  ``mean_var_ci95``); see :func:`mean_interval`;
* the Wilson score interval of a proportion (TurnNat pairwise accuracy); see
  :func:`wilson_interval`. It agrees with ``statsmodels``'
  ``proportion_confint(count, nobs, alpha, method="wilson")``.

Everything here is plain Python/numpy so that any metric can import it cheaply.

Example:

    >>> from turneval.metrics.intervals import mean_interval, wilson_interval
    >>> ci = mean_interval([1.0, 2.0, 3.0])
    >>> round(ci.mean, 3), round(ci.half_width, 4)
    (2.0, 1.1316)
    >>> low, high = wilson_interval(8, 10)
    >>> round(low, 4), round(high, 4)
    (0.4902, 0.9433)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Iterable

import numpy as np

Z95 = 1.96
"""The rounded two-sided 95 % normal quantile the reference implementations use."""

__all__ = [
    "Z95",
    "MeanInterval",
    "z_for_confidence",
    "sample_variance",
    "mean_interval",
    "wilson_interval",
]


def z_for_confidence(confidence: float = 0.95) -> float:
    """Two-sided standard-normal quantile for a confidence level in (0, 1).

    >>> round(z_for_confidence(0.95), 6)
    1.959964
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def _as_float_array(values: Iterable[float]) -> np.ndarray:
    array = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"expected a 1-D sequence of numbers, got an array of shape {array.shape}")
    return array


def sample_variance(values: Iterable[float]) -> float:
    """Sample variance (ddof=1); 0.0 for a single value and NaN for none.

    The single-value convention is the one of TurnNat's ``mean_var_ci95``: one observation
    gives a zero-width interval rather than an undefined one.
    """
    array = _as_float_array(values)
    if array.size == 0:
        return math.nan
    if array.size == 1:
        return 0.0
    return float(array.var(ddof=1))


@dataclass(frozen=True)
class MeanInterval:
    """A mean with its normal-approximation confidence interval.

    Attributes:
        n: number of values.
        mean: their mean (NaN when ``n == 0``).
        var: sample variance (ddof=1; 0 when ``n == 1``; NaN when ``n == 0``).
        low, high: ``mean -+ half_width``.
        half_width: ``z * sqrt(var / n)``.
    """

    n: int
    mean: float
    var: float
    low: float
    high: float
    half_width: float

    def to_dict(self, prefix: str = "") -> dict[str, float | int]:
        """The reference layout: ``n, mean, var, ci95_low, ci95_high, ci95_half_width``.

        ``prefix`` is prepended to every key except ``n`` (e.g. ``"delta_nll_"`` gives
        ``delta_nll_mean``, ``delta_nll_ci95_low``, ...), and ``n`` is left out when a prefix
        is given, as in TurnNat's ``summarize_pairs``.
        """
        body = {
            "mean": self.mean,
            "var": self.var,
            "ci95_low": self.low,
            "ci95_high": self.high,
            "ci95_half_width": self.half_width,
        }
        if prefix:
            return {prefix + key: value for key, value in body.items()}
        return {"n": self.n, **body}


def mean_interval(values: Iterable[float], z: float = Z95, drop_nonfinite: bool = False) -> MeanInterval:
    """Mean with the interval ``mean +- z * sqrt(var / n)`` (sample variance, ddof=1).

    Args:
        values: the observations (e.g. per-session agreement, per-pair NLL deltas).
        z: normal quantile; the default 1.96 is the references' rounded 95 % value
            (use :func:`z_for_confidence` for another level).
        drop_nonfinite: drop NaN/inf values first. When False they propagate into the result.

    Returns:
        A :class:`MeanInterval`; every float is NaN when there are no values, and the width
        is 0 for a single value.

    >>> mean_interval([2.0]).half_width
    0.0
    >>> mean_interval([]).n
    0
    """
    array = _as_float_array(values)
    if drop_nonfinite:
        array = array[np.isfinite(array)]
    n = int(array.size)
    if n == 0:
        return MeanInterval(0, math.nan, math.nan, math.nan, math.nan, math.nan)
    mean = float(array.mean())
    var = sample_variance(array)
    half_width = float(z * math.sqrt(var / n)) if var == var else math.nan
    return MeanInterval(n, mean, var, mean - half_width, mean + half_width, half_width)


def wilson_interval(
    successes: int | float, n: int | float, confidence: float = 0.95, z: float | None = None
) -> tuple[float, float]:
    """Wilson score interval of the proportion ``successes / n``.

    Args:
        successes: number of successes, ``0 <= successes <= n``.
        n: number of trials.
        confidence: two-sided confidence level (ignored when ``z`` is given).
        z: normal quantile to use instead of the exact one for ``confidence``.

    Returns:
        ``(low, high)``, clipped to [0, 1]; ``(nan, nan)`` when ``n == 0``.

    >>> wilson_interval(0, 0)
    (nan, nan)
    >>> wilson_interval(5, 5)[1]
    1.0
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes!r}, n={n!r}")
    if n == 0:
        return (math.nan, math.nan)
    crit = z_for_confidence(confidence) if z is None else float(z)
    p = successes / n
    crit2 = crit * crit
    denom = 1.0 + crit2 / n
    center = (p + crit2 / (2.0 * n)) / denom
    dist = crit * math.sqrt(p * (1.0 - p) / n + crit2 / (4.0 * n * n)) / denom
    return (max(0.0, center - dist), min(1.0, center + dist))
