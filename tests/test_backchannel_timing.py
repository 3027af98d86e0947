"""Backchannel quantity and timing (SWOZ): rates, band, timing match, spacing, evaluate module."""
from __future__ import annotations

import doctest
import itertools
import math

import pytest

from turneval.metrics.swoz_backchannels import (
    backchannel_timing,
    band_share,
    fixed_segments,
    match_onsets,
    pool_backchannel_timing,
    rates_per_minute,
    spacing_violations,
    timing_match,
)


def test_fixed_segments_drop_a_short_tail():
    assert fixed_segments(150.0) == [(0.0, 60.0), (60.0, 120.0), (120.0, 150.0)]
    assert fixed_segments(125.0) == [(0.0, 60.0), (60.0, 120.0)]
    assert fixed_segments(5.0) == [(0.0, 5.0)]
    with pytest.raises(ValueError, match="duration"):
        fixed_segments(0.0)


def test_rates_per_minute_count_onsets_in_half_open_segments():
    times = [1.0, 10.0, 29.9, 30.0, 45.0]
    rates = rates_per_minute(times, [(0.0, 30.0), (30.0, 60.0)])
    assert rates.tolist() == [6.0, 4.0]  # 3 in 30 s, 2 in 30 s; 30.0 belongs to the second
    with pytest.raises(ValueError, match="segment 0"):
        rates_per_minute(times, [(5.0, 5.0)])


def test_band_share_is_inclusive():
    assert band_share([4.0, 6.0, 3.99, 6.01, 5.0]) == pytest.approx(3 / 5)
    assert math.isnan(band_share([]))


def test_timing_match_by_hand():
    system = [1.0, 1.2, 5.0, 9.6, 20.0]
    reference = [1.1, 5.5, 10.0, 30.0]
    result = timing_match(system, reference)
    # 1.0-1.1 match; 1.2 finds 1.1 taken; 5.0-5.5 match (exactly 0.5 s); 9.6-10.0 match.
    assert result["n_matched"] == 3
    assert result["precision"] == pytest.approx(3 / 5)
    assert result["recall"] == pytest.approx(3 / 4)
    assert result["f1"] == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert result["mean_abs_offset_s"] == pytest.approx((0.1 + 0.5 + 0.4) / 3)
    assert math.isnan(timing_match([], [1.0])["precision"]) and timing_match([], [1.0])["recall"] == 0.0
    assert timing_match([3.0], [1.0])["f1"] == 0.0


def test_greedy_matching_is_maximum():
    # Brute force over all one-to-one assignments on small random cases.
    import random

    rng = random.Random(0)
    for _ in range(200):
        system = sorted(round(rng.uniform(0, 5), 1) for _ in range(rng.randint(0, 4)))
        reference = sorted(round(rng.uniform(0, 5), 1) for _ in range(rng.randint(0, 4)))
        pairs = match_onsets(system, reference)
        assert all(abs(system[i] - reference[j]) <= 0.5 + 1e-9 for i, j in pairs)
        assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
        best = 0
        n = max(len(system), len(reference))
        for perm in itertools.permutations(range(n)):  # system i <-> reference perm[i], padded
            pairs_here = [(i, j) for i, j in enumerate(perm) if i < len(system) and j < len(reference)]
            best = max(best, sum(abs(system[i] - reference[j]) <= 0.5 + 1e-9 for i, j in pairs_here))
        assert len(pairs) == best


def test_spacing_violations():
    result = spacing_violations([3.0, 0.5, 1.2, 2.2, 10.0])
    # sorted 0.5, 1.2, 2.2, 3.0, 10.0: gaps 0.7, 1.0, 0.8, 7.0 -> 0.7 and 0.8 are under 1 s
    assert result["n_violations"] == 2 and result["n_pairs"] == 4
    assert result["times"] == [1.2, 3.0]
    assert math.isnan(spacing_violations([1.0])["share"])


def test_backchannel_timing_and_pooling():
    first = backchannel_timing([5, 15, 25, 35, 45, 45.5], duration=60.0, reference_times=[5.2, 30.0])
    assert first["rate_per_minute"] == [6.0] and first["in_band_share"] == 1.0
    assert first["spacing"]["n_violations"] == 1
    assert first["timing"]["n_matched"] == 1
    second = backchannel_timing([1.0], duration=130.0, reference_times=[1.4, 70.0])
    assert second["rate_per_minute"] == pytest.approx([1.0, 0.0, 0.0])  # 60 s, 60 s, 10 s tail
    pooled = pool_backchannel_timing([first, second])
    assert pooled["n_segments"] == 4 and pooled["in_band_share"] == 0.25
    assert pooled["timing"]["precision"] == pytest.approx(2 / 7)
    assert pooled["timing"]["recall"] == pytest.approx(2 / 4)
    assert pooled["spacing"]["share"] == pytest.approx(1 / 5)
    assert "timing" not in pool_backchannel_timing([backchannel_timing([1.0], duration=60.0)])
    with pytest.raises(ValueError, match="segments"):
        backchannel_timing([1.0])
    with pytest.raises(ValueError, match="NaN"):
        backchannel_timing([float("nan")], duration=60.0)


def test_evaluate_module(repo_root, monkeypatch):
    import evaluate

    monkeypatch.chdir(repo_root)
    relative = evaluate.load("metrics/backchannel_timing")
    absolute = evaluate.load(str(repo_root / "metrics" / "backchannel_timing"))
    times, durations, refs = [[5.0, 15.0, 25.0, 35.0], [1.0]], [60.0, 130.0], [[5.2], [1.4, 70.0]]
    expected = pool_backchannel_timing(
        [backchannel_timing(t, duration=d, reference_times=r) for t, d, r in zip(times, durations, refs)]
    )
    for module in (relative, absolute):
        assert module.compute(times=times, duration=durations, reference_times=refs) == expected
    rate_only = evaluate.load("metrics/backchannel_timing", config_name="rate_only")
    result = rate_only.compute(times=times, duration=durations, segment_s=30.0)
    assert "timing" not in result and result["n_segments"] == 2 + 5  # 130 s: four 30 s segments and a 10 s tail
    test = doctest.DocTestParser().get_doctest(relative.inputs_description, {}, "backchannel_timing", None, 0)
    assert test.examples
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
