# A copy of turneval.metrics.intervals for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""Confidence intervals shared by the turneval metrics.

Two kinds of interval are used across the papers turneval implements:

* the normal-approximation interval of a mean, ``mean +- z * sd / sqrt(n)`` with the sample
  standard deviation (ddof=1) and ``z = 1.96`` (Talking Turns §4, TurnNat's
  ``mean_var_ci95``); see :func:`mean_interval`;
* the Wilson score interval of a proportion (TurnNat pairwise accuracy); see
  :func:`wilson_interval`. It agrees with ``statsmodels``'
  ``proportion_confint(count, nobs, alpha, method="wilson")``.

And, for the decision benchmarks (a turn-end detector's shift-vs-hold ROC-AUC), the percentile
bootstrap interval of a ROC-AUC and of the paired difference of two ROC-AUCs, resampling the
decisions or, with ``clusters``, whole recordings (decisions of one recording are not
independent); see :func:`bootstrap_roc_auc`.

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
from typing import Iterable, Sequence

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
    "AucInterval",
    "roc_auc",
    "bootstrap_interval",
    "bootstrap_roc_auc",
    "bootstrap_roc_auc_difference",
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


# --------------------------------------------------------------------------- ROC-AUC bootstrap
@dataclass(frozen=True)
class AucInterval:
    """A ROC-AUC (or a difference of two) with its percentile-bootstrap interval.

    ``n_resamples`` counts the resamples that had both classes (the others are redrawn);
    ``unit`` is ``"decision"`` or ``"cluster"`` (what was resampled), ``n_units`` how many.
    """

    value: float
    low: float
    high: float
    n: int
    n_positive: int
    n_units: int
    unit: str
    n_resamples: int

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def roc_auc(y: Iterable[int], score: Iterable[float]) -> float:
    """ROC-AUC of ``score`` for the positive class ``y == 1`` (Mann-Whitney, ties count 1/2).

    NaN when ``y`` has one class only; equals ``sklearn.metrics.roc_auc_score``.

    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    y_arr = np.asarray(list(y) if not isinstance(y, np.ndarray) else y).astype(bool)
    s = _as_float_array(score)
    if y_arr.shape != s.shape:
        raise ValueError(f"y and score differ in length: {y_arr.size} vs {s.size}")
    n_pos = int(y_arr.sum())
    n_neg = y_arr.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    upper = np.cumsum(counts)
    average_rank = upper - (counts - 1) / 2.0  # 1-based mean rank of each tie group
    rank_sum = float(average_rank[inverse][y_arr].sum())
    return (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def _resample_indices(rng: np.random.Generator, groups: list[np.ndarray]) -> np.ndarray:
    picked = rng.integers(0, len(groups), size=len(groups))
    return np.concatenate([groups[i] for i in picked])


def _groups(n: int, clusters: Iterable | None) -> tuple[list[np.ndarray], str]:
    if clusters is None:
        return [np.array([i]) for i in range(n)], "decision"
    labels = np.asarray(list(clusters) if not isinstance(clusters, np.ndarray) else clusters)
    if labels.shape != (n,):
        raise ValueError(f"clusters needs one label per decision ({n}), got shape {labels.shape}")
    _, inverse = np.unique(labels, return_inverse=True)
    return [np.flatnonzero(inverse == k) for k in range(inverse.max() + 1)], "cluster"


def _resampled_statistics(statistic, arrays: list[np.ndarray], groups: list[np.ndarray], n_resamples: int, seed: int) -> list[float]:
    """``statistic(*arrays)`` on ``n_resamples`` resamples of whole ``groups`` of rows; a resample
    whose statistic is not finite (e.g. one class only, no AUC) is redrawn, up to 10x the budget."""
    rng = np.random.default_rng(seed)
    draws: list[float] = []
    attempts = 0
    while len(draws) < n_resamples and attempts < 10 * n_resamples:
        attempts += 1
        idx = _resample_indices(rng, groups)
        stat = statistic(*(a[idx] for a in arrays))
        if math.isfinite(stat):
            draws.append(stat)
    return draws


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")


def _bootstrap(y, scores, clusters, n_resamples, confidence, seed, statistic) -> AucInterval:
    _check_confidence(confidence)
    y_arr = np.asarray(list(y) if not isinstance(y, np.ndarray) else y).astype(int)
    arrays = [_as_float_array(s) for s in scores]
    for a in arrays:
        if a.shape != y_arr.shape:
            raise ValueError(f"y and score differ in length: {y_arr.size} vs {a.size}")
    value = statistic(y_arr, *arrays)
    groups, unit = _groups(y_arr.size, clusters)
    n_pos = int(y_arr.sum())
    if not math.isfinite(value):
        return AucInterval(value, math.nan, math.nan, y_arr.size, n_pos, len(groups), unit, 0)
    draws = _resampled_statistics(statistic, [y_arr, *arrays], groups, n_resamples, seed)
    if not draws:
        return AucInterval(value, math.nan, math.nan, y_arr.size, n_pos, len(groups), unit, 0)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [alpha, 1.0 - alpha])
    return AucInterval(float(value), float(low), float(high), y_arr.size, n_pos, len(groups), unit, len(draws))


def bootstrap_interval(
    statistic,
    arrays: Sequence[Iterable[float]],
    *,
    clusters: Iterable | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``statistic(*arrays)`` and its percentile-bootstrap interval ``(value, low, high)``.

    The rows of ``arrays`` (all of one length) are resampled together, or with ``clusters`` (one
    label per row, e.g. the recording a pair was cut from) whole clusters, as
    :func:`bootstrap_roc_auc` does; resamples with a non-finite statistic are redrawn. Paired
    statistics (a difference of two scorers on the same rows) come out paired.

    >>> bootstrap_interval(lambda a: float(np.mean(a)), [[1.0, 1.0, 1.0, 1.0]], n_resamples=50)
    (1.0, 1.0, 1.0)
    """
    _check_confidence(confidence)
    data = [_as_float_array(a) for a in arrays]
    if len({a.shape for a in data}) != 1:
        raise ValueError(f"arrays differ in length: {[a.size for a in data]}")
    value = float(statistic(*data))
    groups, _ = _groups(data[0].size, clusters)
    draws = _resampled_statistics(statistic, data, groups, n_resamples, seed)
    if not draws:
        return value, math.nan, math.nan
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [alpha, 1.0 - alpha])
    return value, float(low), float(high)


def bootstrap_roc_auc(
    y: Iterable[int],
    score: Iterable[float],
    *,
    clusters: Iterable | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> AucInterval:
    """ROC-AUC of ``score`` (positive: ``y == 1``) with a percentile-bootstrap interval.

    Resamples the decisions with replacement, or with ``clusters`` (one label per decision,
    e.g. the recording) whole clusters: the interval then also holds the variation between
    recordings. Resamples with a single class are redrawn. Deterministic for a ``seed``.

    >>> ci = bootstrap_roc_auc([0, 0, 1, 1, 0, 1], [0.1, 0.4, 0.35, 0.8, 0.2, 0.9], n_resamples=200)
    >>> round(ci.value, 3), ci.low <= ci.value <= ci.high, ci.unit
    (0.889, True, 'decision')
    """
    return _bootstrap(y, [score], clusters, n_resamples, confidence, seed, lambda yy, s: roc_auc(yy, s))


def bootstrap_roc_auc_difference(
    y: Iterable[int],
    score_a: Iterable[float],
    score_b: Iterable[float],
    *,
    clusters: Iterable | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> AucInterval:
    """ROC-AUC of ``score_a`` minus that of ``score_b`` on the same decisions, with a paired
    percentile-bootstrap interval (both scored on every resample): an interval above 0 says
    that a is better than b on this data.

    >>> d = bootstrap_roc_auc_difference([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8], [0.9, 0.1, 0.2, 0.8], n_resamples=100)
    >>> d.value  # 1.0 - 0.25
    0.75
    """
    return _bootstrap(y, [score_a, score_b], clusters, n_resamples, confidence, seed,
                      lambda yy, a, b: roc_auc(yy, a) - roc_auc(yy, b))
