"""Tests for turneval.metrics.intervals and turneval.metrics.naturalness."""
from __future__ import annotations

import math

import numpy as np
import pytest

from turneval.metrics.intervals import mean_interval, sample_variance, wilson_interval, z_for_confidence


# --------------------------------------------------------------------------- intervals
@pytest.mark.parametrize("successes,n", [(0, 1), (1, 1), (0, 7), (3, 7), (7, 7), (81, 143), (5000, 10000), (1, 100000)])
def test_wilson_matches_statsmodels(successes: int, n: int) -> None:
    from statsmodels.stats.proportion import proportion_confint

    expected = proportion_confint(successes, n, alpha=0.05, method="wilson")
    assert wilson_interval(successes, n) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_wilson_other_confidence_matches_statsmodels() -> None:
    from statsmodels.stats.proportion import proportion_confint

    expected = proportion_confint(12, 40, alpha=0.1, method="wilson")
    assert wilson_interval(12, 40, confidence=0.9) == pytest.approx(expected, rel=1e-12)


def test_wilson_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(3, 2)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_z_for_confidence() -> None:
    assert z_for_confidence(0.95) == pytest.approx(1.959963984540054)
    with pytest.raises(ValueError):
        z_for_confidence(1.0)


def test_mean_interval_formula() -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(size=37)
    ci = mean_interval(values)
    sd = np.std(values, ddof=1)
    assert ci.n == 37
    assert ci.mean == pytest.approx(values.mean())
    assert ci.var == pytest.approx(sd**2)
    assert ci.half_width == pytest.approx(1.96 * sd / math.sqrt(37))
    assert (ci.low, ci.high) == pytest.approx((values.mean() - ci.half_width, values.mean() + ci.half_width))


def test_mean_interval_edge_sizes() -> None:
    one = mean_interval([4.0])
    assert (one.n, one.mean, one.var, one.half_width, one.low, one.high) == (1, 4.0, 0.0, 0.0, 4.0, 4.0)
    empty = mean_interval([])
    assert empty.n == 0 and math.isnan(empty.mean) and math.isnan(empty.half_width)
    assert sample_variance([1.0]) == 0.0 and math.isnan(sample_variance([]))


def test_mean_interval_nonfinite() -> None:
    assert math.isnan(mean_interval([1.0, math.nan]).mean)
    assert mean_interval([1.0, math.nan, 3.0], drop_nonfinite=True).mean == 2.0


def test_mean_interval_dict_layouts() -> None:
    ci = mean_interval([1.0, 2.0])
    assert set(ci.to_dict()) == {"n", "mean", "var", "ci95_low", "ci95_high", "ci95_half_width"}
    assert set(ci.to_dict("delta_")) == {"delta_mean", "delta_var", "delta_ci95_low", "delta_ci95_high", "delta_ci95_half_width"}
