"""Tests for turneval.metrics.intervals and turneval.metrics.scorer_discrimination."""
from __future__ import annotations

import math

import numpy as np
import pytest

from turneval.metrics.intervals import mean_interval, sample_variance, wilson_interval, z_for_confidence
from turneval.metrics.scorer_discrimination import (
    c_index,
    evaluate_pairs,
    naturalness_margin,
    pairwise_accuracy,
    per_type_accuracy,
)


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


# --------------------------------------------------------------------------- naturalness
def _c_index_quadratic(natural, perturbed):
    """O(N*M) reference straight from TurnNat Eq. 13 (NLL direction)."""
    diff = np.asarray(perturbed)[:, None] - np.asarray(natural)[None, :]
    return int((diff > 0).sum()), int((diff < 0).sum()), int((diff == 0).sum())


def _tied_samples(seed: int, n_nat: int, n_pert: int):
    rng = np.random.default_rng(seed)
    # rounding to a coarse grid makes ties within and across the two sides common
    natural = np.round(rng.normal(2.0, 1.0, n_nat), 1)
    perturbed = np.round(rng.normal(2.4, 1.0, n_pert), 1)
    return natural, perturbed


@pytest.mark.parametrize("seed,n_nat,n_pert", [(0, 50, 50), (1, 1, 30), (2, 200, 170), (3, 7, 1)])
def test_c_index_matches_quadratic_reference(seed: int, n_nat: int, n_pert: int) -> None:
    natural, perturbed = _tied_samples(seed, n_nat, n_pert)
    concordant, wrong, tied = _c_index_quadratic(natural, perturbed)
    result = c_index(natural, perturbed)
    assert (result.concordant, result.wrong, result.tied) == (concordant, wrong, tied)
    assert result.total_pairs == n_nat * n_pert
    assert result.comparable_pairs == concordant + wrong
    assert result.c_index == pytest.approx(concordant / (concordant + wrong))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_c_index_matches_lifelines(seed: int) -> None:
    from lifelines.utils import concordance_index

    natural, perturbed = _tied_samples(seed, 80, 60)
    # two "times" (0 natural, 1 perturbed): lifelines compares exactly the cross pairs,
    # and scores a tied prediction as half a concordance instead of leaving it out
    times = np.r_[np.zeros(natural.size), np.ones(perturbed.size)]
    expected = concordance_index(times, np.r_[natural, perturbed], np.ones(times.size))
    result = c_index(natural, perturbed)
    assert (result.concordant + 0.5 * result.tied) / result.total_pairs == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_c_index_is_roc_auc_of_perturbed_vs_natural(seed: int) -> None:
    """With ties counted as half (as ROC-AUC does), the C-index is scikit-learn's ROC-AUC."""
    from sklearn.metrics import roc_auc_score

    natural, perturbed = _tied_samples(seed, 70, 90)
    result = c_index(natural, perturbed)  # NLL-like: perturbed should be higher
    labels = np.r_[np.zeros(natural.size), np.ones(perturbed.size)]
    expected = roc_auc_score(labels, np.r_[natural, perturbed])
    assert (result.concordant + 0.5 * result.tied) / result.total_pairs == pytest.approx(expected, rel=1e-12)


def test_c_index_direction_is_a_sign_flip() -> None:
    natural, perturbed = _tied_samples(4, 40, 40)
    as_nll = c_index(natural, perturbed, higher_is_better=False)
    as_score = c_index(-natural, -perturbed, higher_is_better=True)
    assert as_nll == as_score
    flipped = c_index(natural, perturbed, higher_is_better=True)
    assert (flipped.concordant, flipped.wrong, flipped.tied) == (as_nll.wrong, as_nll.concordant, as_nll.tied)


def test_c_index_all_tied_is_nan_and_nonfinite_dropped_per_side() -> None:
    assert math.isnan(c_index([2.0, 2.0], [2.0, 2.0]).c_index)
    result = c_index([1.0, 1.0, 2.0], [2.0, math.nan, 1.5])
    assert (result.concordant, result.wrong, result.tied) == (4, 1, 1)


def test_c_index_is_fast_on_1e5_by_1e5() -> None:
    import time

    rng = np.random.default_rng(5)
    natural = rng.integers(0, 1000, 100_000).astype(float)
    perturbed = rng.integers(0, 1000, 100_000).astype(float) + 50
    start = time.perf_counter()
    result = c_index(natural, perturbed)
    assert time.perf_counter() - start < 2.0
    assert result.total_pairs == 10**10
    assert 0.5 < result.c_index < 0.6


def test_pairwise_accuracy_and_ties() -> None:
    result = pairwise_accuracy([1.0, 1.0, 2.0, 0.0], [2.0, 1.0, 1.5, math.inf])
    assert (result.n, result.correct) == (3, 1)  # the inf pair is dropped, the tie is wrong
    from statsmodels.stats.proportion import proportion_confint

    assert (result.ci_low, result.ci_high) == pytest.approx(proportion_confint(1, 3, method="wilson"))
    scores = pairwise_accuracy([-1.0, -1.0, -2.0], [-2.0, -1.0, -1.5], higher_is_better=True)
    assert scores.correct == 1


def test_margin_direction() -> None:
    assert naturalness_margin([1.0], [3.0]).tolist() == [2.0]
    assert naturalness_margin([1.0], [3.0], higher_is_better=True).tolist() == [-2.0]
    with pytest.raises(ValueError, match="one value per pair"):
        naturalness_margin([1.0, 2.0], [3.0])


def test_per_type_accuracy() -> None:
    natural = [1.0, 1.0, 1.0, 1.0, 1.0]
    perturbed = [2.0, 0.5, 2.0, 2.0, math.nan]
    types = ["late_response", "late_response", "early_entry", "early_entry", "early_entry"]
    result = per_type_accuracy(natural, perturbed, types)
    assert list(result) == ["early_entry", "late_response"]
    assert (result["early_entry"].n, result["early_entry"].accuracy) == (2, 1.0)
    assert result["late_response"].accuracy == 0.5


def test_evaluate_pairs_drops_incomplete_pairs_everywhere() -> None:
    report = evaluate_pairs(
        natural=[1.0, 1.0, 2.0],
        perturbed=[2.0, math.nan, 1.5],
        perturbation_types=["a", "b", "a"],
        parts={"mean_nll": ([0.75, 0.75, 1.75], [1.75, math.nan, 1.25])},
    )
    assert (report.n, report.n_dropped) == (2, 1)
    assert report.c_index.c_index == pytest.approx(2 / 3)
    assert report.pairwise.accuracy == 0.5
    assert report.scores.delta.mean == pytest.approx(0.25)
    assert report.parts["mean_nll"].delta.mean == pytest.approx(0.25)
    assert list(report.per_type) == ["a"]
