"""The end-of-turn arithmetic of benchmarks/validation/pause_decision_corpora.py (eot-bench's view)."""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np


def _bench():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "validation" / "pause_decision_corpora.py"
    spec = importlib.util.spec_from_file_location("pause_decision_corpora", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GRID = (0.2, 0.3, 0.4, 0.5)


def test_fire_times_take_the_first_time_at_or_above_the_threshold():
    bench = _bench()
    scores = np.array([[0.1, 0.6, 0.9, 0.9], [0.1, 0.2, 0.3, np.nan], [0.7, 0.1, 0.1, 0.1]])
    np.testing.assert_allclose(bench.fire_times(scores, GRID, 0.5), [0.3, np.inf, 0.2])


def test_a_timer_at_five_percent_false_cutoffs_waits_past_the_holds():
    bench = _bench()
    # holds of 0.25 and 0.45 s, turn ends of 0.5 s: a timer that cuts off no hold fires at 0.5 s
    silence = np.array([0.25, 0.45, 0.5, 0.5])
    shift = np.array([False, False, True, True])
    elapsed = np.tile(np.asarray(GRID), (4, 1))
    elapsed[0, 1:] = np.nan  # the first hold is over after 0.25 s
    latency, cut = bench.latency_at_false_cutoffs(elapsed, GRID, shift, silence)
    assert latency == 0.5 and cut == 0.0
    # allowed half the holds, it fires at 0.3 s and cuts the 0.45 s hold
    latency, cut = bench.latency_at_false_cutoffs(elapsed, GRID, shift, silence, limit=0.5)
    assert latency == 0.3 and cut == 0.5


def test_no_threshold_within_the_grid_is_reported_as_such():
    bench = _bench()
    silence = np.array([5.0, 0.5])  # a hold longer than the grid: every threshold cuts it
    shift = np.array([False, True])
    latency, cut = bench.latency_at_false_cutoffs(np.tile(np.asarray(GRID), (2, 1)), GRID, shift, silence)
    assert math.isinf(latency) and math.isnan(cut)


def test_eot_figures_name_each_detector_and_count_the_holds():
    bench = _bench()
    grid = (0.3, 0.6)
    silence = np.array([0.4, 1.0, 0.8])
    shift = np.array([False, False, True])
    elapsed = np.tile(np.asarray(grid), (3, 1))
    figures = bench.eot_figures("X", {"VAD timer": elapsed}, shift, silence, grid)
    by_name = {f["name"]: f for f in figures}
    # at 300 ms both holds are still silent and the timer says done: 2 of 2 cut off
    assert by_name["X false cut-offs at 300 ms of silence: VAD timer"]["value"] == 1.0
    # at 600 ms only the 1.0 s hold is still silent
    assert by_name["X false cut-offs at 600 ms of silence: VAD timer"]["value"] == 0.5
    assert "2 holds, 1 turn ends" in by_name["X false cut-offs at 300 ms of silence: VAD timer"]["note"]
