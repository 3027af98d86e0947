"""ROC-AUC and its bootstrap intervals (turneval.metrics.intervals), used by the decision benchmarks."""
from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from turneval.metrics.intervals import bootstrap_roc_auc, bootstrap_roc_auc_difference, roc_auc


def test_roc_auc_equals_sklearn_with_ties():
    rng = np.random.default_rng(3)
    for _ in range(20):
        y = rng.integers(0, 2, 40)
        y[:2] = [0, 1]
        score = np.round(rng.normal(size=40) + y, 1)  # rounding makes ties
        assert roc_auc(y, score) == pytest.approx(roc_auc_score(y, score), abs=1e-12)
    assert math.isnan(roc_auc([1, 1], [0.2, 0.3]))
    with pytest.raises(ValueError, match="differ in length"):
        roc_auc([0, 1], [0.5])


def test_bootstrap_interval_brackets_the_value_and_is_reproducible():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 120)
    score = rng.normal(size=120) + 0.8 * y
    ci = bootstrap_roc_auc(y, score, n_resamples=500, seed=1)
    assert ci.low < ci.value < ci.high and ci.unit == "decision" and ci.n_units == 120 and ci.n_resamples == 500
    assert bootstrap_roc_auc(y, score, n_resamples=500, seed=1) == ci
    # a chance scorer's interval holds 0.5; a perfect one is [1, 1]
    noise = bootstrap_roc_auc(y, rng.normal(size=120), n_resamples=500)
    assert noise.low < 0.5 < noise.high
    perfect = bootstrap_roc_auc(y, y + 0.0, n_resamples=200)
    assert (perfect.value, perfect.low, perfect.high) == (1.0, 1.0, 1.0)


def test_cluster_bootstrap_resamples_recordings_and_is_wider():
    # 8 recordings; each holds 10 copies of one positive and one negative decision: the
    # copies carry no more information than one, which only the cluster bootstrap knows
    rng = np.random.default_rng(2)
    pos, neg = rng.normal(size=8) + 0.5, rng.normal(size=8)
    y = np.tile(np.repeat([1, 0], 10), 8)
    score = np.concatenate([np.repeat([p, n], 10) for p, n in zip(pos, neg)])
    clusters = np.repeat(np.arange(8), 20)
    by_decision = bootstrap_roc_auc(y, score, n_resamples=400)
    by_cluster = bootstrap_roc_auc(y, score, clusters=clusters, n_resamples=400)
    assert by_cluster.unit == "cluster" and by_cluster.n_units == 8
    assert by_cluster.high - by_cluster.low > by_decision.high - by_decision.low
    with pytest.raises(ValueError, match="one label per decision"):
        bootstrap_roc_auc(y, score, clusters=[0, 1])


def test_paired_difference():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 200)
    good, bad = rng.normal(size=200) + 1.5 * y, rng.normal(size=200)
    d = bootstrap_roc_auc_difference(y, good, bad, n_resamples=400)
    assert d.value == pytest.approx(roc_auc(y, good) - roc_auc(y, bad))
    assert d.low > 0, "a clearly better scorer's difference interval clears 0"
    same = bootstrap_roc_auc_difference(y, good, good, n_resamples=100)
    assert (same.value, same.low, same.high) == (0.0, 0.0, 0.0)
