"""The verdict at the top of the report: headline figures beside the human ranges, marked when outside."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
import soundfile as sf

from turneval.dataset_scripts.dialogue import Dialogue
from turneval.gates import HEADLINE_FIGURES
from turneval.reporting import format_summary, report
from turneval.reporting.html_report import render_html
from turneval.reporting.verdict import about_models, human_range, human_ranges, mark, verdict_line, verdict_rows


def test_the_ranges_file_covers_every_headline_figure_and_says_where_it_came_from():
    data = human_ranges()
    assert set(data["figures"]) == set(HEADLINE_FIGURES)
    assert data["command"].startswith("python tools/build_human_ranges.py") and re.fullmatch(r"\d{4}-\d\d-\d\d", data["measured"])
    assert "Switchboard" in data["data"]["switchboard"] and "SpokenWOZ" in data["data"]["spokenwoz"]
    for name in ("response_latency_s", "talk_over_rate", "yield_rate", "cut_off_rate", "backchannels_per_min", "overlap_share"):
        for key in ("range", "range_with_words"):
            rng = data["figures"][name][key]
            assert rng["low"] <= rng["median"] <= rng["high"] and rng["n"] > 1000, (name, key)
            assert "Switchboard" in rng["source"]
    # people answer within a second, and talk at once for a few percent of the time
    assert 0.05 < data["figures"]["response_latency_s"]["range"]["median"] < 1.0
    assert 0.0 < data["figures"]["overlap_share"]["range"]["median"] < 0.2
    assert "naturalness_m" in data["figures"]  # the key a measured range of m goes under
    gaps = data["response_gaps"]["segments"]
    assert len(gaps["counts"]) == len(gaps["bin_edges_s"]) - 1 and sum(gaps["counts"]) == gaps["n"]


def test_marks_and_the_words_range():
    rng = {"low": 0.2, "high": 0.5}
    assert [mark(v, rng) for v in (0.1, 0.2, 0.35, 0.5, 0.9)] == ["below", "within", "within", "within", "above"]
    assert mark(None, rng) == "not measured" and mark(0.3, None) == "no range"
    ranges = {"figures": {"x": {"range": {"low": 1, "high": 2}, "range_with_words": {"low": 3, "high": 4}}, "y": {"range": None}}}
    assert human_range("x", False, ranges)["low"] == 1 and human_range("x", True, ranges)["low"] == 3
    assert human_range("y", True, ranges) is None and human_range("z", False, ranges) is None


def test_rows_show_rates_in_percent_and_sum_up_in_one_sentence():
    data = human_ranges()["figures"]
    slow = data["response_latency_s"]["range"]["high"] + 1.0
    rows = verdict_rows({"response_latency_s": slow, "talk_over_rate": data["talk_over_rate"]["range"]["median"], "naturalness_m": -3.0})
    by_name = {r["name"]: r for r in rows}
    assert set(by_name) == set(HEADLINE_FIGURES)
    assert by_name["response_latency_s"]["mark"] == "above" and by_name["talk_over_rate"]["mark"] == "within"
    assert by_name["talk_over_rate"]["unit"] == "%" and by_name["talk_over_rate"]["human_high"] == pytest.approx(100 * data["talk_over_rate"]["range"]["high"])
    assert by_name["yield_rate"]["mark"] == "not measured"
    if data["naturalness_m"].get("range") is None:
        assert by_name["naturalness_m"]["mark"] == "no range"
    line = verdict_line(rows)
    assert line.startswith("Verdict: 1 of 2 figures outside the human range") and "response latency above" in line


def test_m_is_read_against_the_range_of_its_own_predictor():
    from turneval.naturalness_range import human_m_range

    measured = human_m_range("future_activity_predictor_words")["range"]
    rows = {r["name"]: r for r in verdict_rows({"naturalness_m": measured["high"] + 1.0}, predictor="checkpoints/future_activity_predictor_words")}
    assert rows["naturalness_m"]["mark"] == "above" and rows["naturalness_m"]["human_low"] == pytest.approx(measured["low"])
    assert "future_activity_predictor_words" in rows["naturalness_m"]["human_source"]
    unknown = {r["name"]: r for r in verdict_rows({"naturalness_m": -4.0}, predictor="runs/my_own_predictor")}
    assert unknown["naturalness_m"]["mark"] == "no range"


def test_about_models_folds_the_warnings_into_one_note():
    models = {"judge": {"name": "j", "trained_on_synthetic_sound": True, "sound_sources": ["eSpeak NG"]},
              "predictor": {"name": "p", "trained_on_synthetic_sound": True, "sound_sources": ["Festival"]}}
    note = about_models(models)
    assert note.startswith("About the models:") and note.count("WARNING") == 0 and "eSpeak NG" in note and "Festival" in note
    assert about_models({"judge": {"name": "j", "trained_on_synthetic_sound": False, "provenance": "file"}}) is None


@pytest.fixture(scope="module")
def slow_report(tmp_path_factory):
    """A system that waits 1.5 s before every answer: its response latency is far above people's."""
    root = tmp_path_factory.mktemp("slow")
    user = [(k * 5.0, k * 5.0 + 2.0) for k in range(6)]
    system = [(k * 5.0 + 3.5, k * 5.0 + 4.7) for k in range(6)]
    wav = root / "slow.wav"
    sf.write(wav, np.random.default_rng(1).normal(0, 0.05, (30 * 16000, 2)).astype(np.float32), 16000)
    dialogue = Dialogue("slow", [user, system], duration=30.0, audio_path=str(wav))
    return report(dialogue, system_channel=1, judge=False, predictor=False, progress=False)


def test_terminal_leads_with_the_verdict(slow_report):
    text = format_summary(slow_report)
    lines = text.splitlines()
    assert lines[1].startswith("Verdict:") and "response latency above" in lines[1]
    latency = next(line for line in lines if line.startswith("Response latency"))
    assert "1.5 s" in latency and latency.rstrip().endswith("ABOVE")
    assert text.index("Verdict:") < text.index("All figures") < text.index("-- statistics")


def test_html_leads_with_the_verdict_and_the_gap_plot(slow_report):
    page = render_html(slow_report)
    headings = re.findall(r"<h2>(.*?)</h2>", page)
    assert headings[0].startswith("Verdict") and headings[1] == "Timeline" and headings[2] == "All figures" and headings[-1] == "Notes"
    first = page[page.index("<h2>"):page.index("<h2>Timeline")]
    assert "mark-above" in first and "response_latency_s" in first and 'class="gaps"' in first and "data:image/png;base64," in first
    data = json.loads(slow_report.to_json())
    rows = {r["name"]: r for r in data["headline"]["verdict"]}
    assert rows["response_latency_s"]["mark"] == "above" and data["headline"]["response_gaps_s"] == [1.5] * 6
