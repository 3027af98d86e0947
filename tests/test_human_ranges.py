"""tools/build_human_ranges.py (it writes turneval/data/human_ranges.json) on the one-call Switchboard fixture: the ranges are the report's own figures."""
from __future__ import annotations

import json

import pytest

from tests.test_switchboard_benchmarks import _load
from turneval.dataset_scripts.events import extract_events
from turneval.dataset_scripts.readers import iter_switchboard_calls
from turneval.gates import HEADLINE_FIGURES
from turneval.reporting.headline import event_figures


def test_ranges_are_the_reports_figures_over_both_seats(swb_one_call, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TURNEVAL_SPOKENWOZ_ROOT", str(tmp_path / "no_spokenwoz"))
    bench = _load("build_human_ranges", folder="tools")
    out = tmp_path / "ranges.json"
    assert bench.main(["--swb-root", str(swb_one_call[0]), "--splits", str(swb_one_call[1]), "--no-judge", "--out", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data["figures"]) == set(HEADLINE_FIGURES) and data["command"].startswith("python tools/build_human_ranges.py")
    dialogue = next(iter_switchboard_calls(swb_one_call[0], ["0001"]))
    events = extract_events(dialogue, use_words=False)
    sides = [event_figures(events, system) for system in (0, 1)]
    for name in bench.EVENT_FIGURES:
        values = [s[name] for s in sides if s[name] is not None]
        rng = data["figures"][name]["range"]
        assert rng["n"] == len(values) and "1 calls" in rng["source"]
        if values:
            assert min(values) <= rng["low"] <= rng["median"] <= rng["high"] <= max(values)
    assert data["figures"]["judge_agreement_a"]["range"] is None and data["figures"]["naturalness_m"]["range"] is None
    gaps = data["response_gaps"]["segments"]
    assert sum(gaps["counts"]) == gaps["n"] == sum(len(bench.response_gaps(events, s)) for s in (0, 1))
    assert data["figures"]["response_latency_s"]["spokenwoz"] is None  # no SpokenWOZ folder: left out, not made up


def test_spread_leaves_out_what_was_not_measured():
    bench = _load("build_human_ranges", folder="tools")
    assert bench.spread([None, 1.0, 2.0, 3.0, float("nan")]) == pytest.approx({"low": 1.2, "high": 2.8, "median": 2.0, "n": 3})
    assert bench.spread([None]) == {"low": None, "high": None, "median": None, "n": 0}


def test_a_judge_tuned_on_the_dev_calls_is_marked_in_sample(tmp_path):
    bench = _load("build_human_ranges", folder="tools")
    (tmp_path / "config.json").write_text(json.dumps({"agreement_thresholds_source": "tuned on SNG0072, ES2004a_excerpt/source0+source1"}))
    calls = ["SNG0072", "SNG0480", "ES2004a_excerpt:FEE013+FEE016"]
    assert bench._tuned_on(str(tmp_path), calls) == ["SNG0072", "ES2004a_excerpt:FEE013+FEE016"]
    assert bench._tuned_on(str(tmp_path / "nowhere"), calls) == []
