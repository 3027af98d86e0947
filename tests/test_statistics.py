"""Corpus statistics: hand-computed values, pooling, word rates, the evaluate module and the CLI."""
from __future__ import annotations

import argparse
import json

import pytest

from turneval.dataset_scripts.dialogue import Dialogue, Word
from turneval.dataset_scripts.events import extract_events
from turneval.metrics.turn_statistics import corpus_statistics, dialogue_statistics


# A: 0-20, pause 20-21, 21-40 ; B: backchannel 10-10.4 (proxy), gap 40-40.5, 40.5-60 ; 60 s
SEGMENTS = [[(0, 20), (21, 40)], [(10, 10.4), (40.5, 60)]]


def test_dialogue_statistics_hand_computed():
    stats = dialogue_statistics(Dialogue("d", SEGMENTS, duration=60.0))
    assert stats["duration_min"] == 1.0
    assert stats["ipu_count"] == 4 and stats["ipu_per_min"] == 4.0
    assert stats["ipu_percent"] == pytest.approx(100 * (20 + 19 + 0.4 + 19.5) / 60)
    assert stats["pause_count"] == 1 and stats["pause_percent"] == pytest.approx(100 / 60)
    assert stats["gap_count"] == 1 and stats["gap_mean_s"] == pytest.approx(0.5)
    assert stats["overlap_count"] == 1 and stats["overlap_percent"] == pytest.approx(100 * 0.4 / 60)
    assert stats["backchannel_count"] == 1 and stats["backchannel_count_B"] == 1
    assert stats["turn_count"] == 2 and stats["interruption_count"] == 0
    assert stats["floor_taking_share"] is None
    assert stats["ipu_count_A"] == 2 and stats["ipu_percent_B"] == pytest.approx(100 * 19.9 / 60)
    # no words: word-based rates are not available
    assert stats["speaking_rate_wpm"] is None and stats["backchannel_word_rate"] is None


def test_corpus_statistics_pool_totals_not_rates():
    one = Dialogue("one", [[(0, 10), (11, 20)], []], duration=30.0)  # 1 pause in 0.5 min
    two = Dialogue("two", [[(0, 80)], [(81, 90)]], duration=90.0)  # 1 gap in 1.5 min
    stats = corpus_statistics([one, extract_events(two)], per_dialogue=True)
    assert stats["n_dialogues"] == 2 and stats["duration_min"] == 2.0
    assert stats["pause_per_min"] == 0.5 and stats["gap_per_min"] == 0.5
    assert stats["ipu_per_min"] == 2.0  # 4 IPUs / 2 min; the mean of per-dialogue rates would be 3.0
    assert stats["dialogues"]["one"]["pause_per_min"] == 2.0
    assert stats["dialogues"]["two"]["interruption_count"] == 0
    twice = corpus_statistics([one, one], per_dialogue=True)
    assert set(twice["dialogues"]) == {"one", "one#2"}


def test_word_rates():
    a = [Word(0.0, 15.0, "long"), Word(15.0, 30.0, "story"), Word(40.0, 50.0, "again")]
    b = [Word(10.0, 10.5, "uh-huh"), Word(20.0, 20.5, "yeah"), Word(20.5, 21.0, "right"), Word(31.0, 31.5, "so")]
    stats = dialogue_statistics(Dialogue("w", [[], []], words=[a, b], duration=60.0))
    assert stats["backchannel_count"] == 2
    assert stats["backchannel_word_rate_B"] == 3.0  # 3 backchannel words in 1 min
    assert stats["backchannel_word_rate_A"] == 0.0
    assert stats["speaking_rate_wpm_A"] == pytest.approx(3 / (40 / 60))  # 3 words in 40 s of speech
    assert stats["speaking_rate_wpm_B"] == pytest.approx(4 / (2.0 / 60))  # IPUs of 0.5 s and 1.0 s and 0.5 s
    assert stats["word_count"] == 7


def test_empty_dialogue_and_bad_input():
    stats = dialogue_statistics(Dialogue("e", [[], []], duration=10.0))
    assert stats["ipu_count"] == 0 and stats["silence_percent"] == 100.0 and stats["ipu_mean_s"] is None
    assert corpus_statistics([])["ipu_per_min"] is None
    with pytest.raises(TypeError):
        dialogue_statistics("not a dialogue")


def test_evaluate_module_matches_functions(repo_root):
    import evaluate

    module = evaluate.load(str(repo_root / "metrics" / "turn_taking_statistics"))
    segments = [[list(s) for s in spk] for spk in SEGMENTS]
    result = module.compute(segments_a=[segments[0]], segments_b=[segments[1]], duration=[60.0], max_backchannel_s=0.3)
    expected = dialogue_statistics(Dialogue("d", SEGMENTS, duration=60.0), max_backchannel_s=0.3)
    assert result == {**expected, "n_dialogues": 1}
    assert result["backchannel_count"] == 0  # the 0.4 s IPU is longer than 0.3 s


def test_stats_command(tmp_path, capsys):
    from turneval.commands import stats as stats_command

    paths = []
    for i in range(2):
        path = tmp_path / f"d{i}.json"
        Dialogue(f"d{i}", SEGMENTS, duration=60.0).save_annotations(path)
        paths.append(str(path))
    parser = argparse.ArgumentParser()
    stats_command.add_parser(parser.add_subparsers())
    out = tmp_path / "stats.json"
    args = parser.parse_args(["stats", *paths, "--per-dialogue", "--json", str(out)])
    assert stats_command.run(args) == 0
    printed = capsys.readouterr().out
    assert "Pause" in printed and "d0" in printed
    data = json.loads(out.read_text())
    assert data["n_dialogues"] == 2 and data["ipu_per_min"] == 4.0 and set(data["dialogues"]) == {"d0", "d1"}


def test_stats_via_cli_main(tmp_path, capsys):
    from turneval.cli import main

    path = tmp_path / "one.json"
    Dialogue("one", SEGMENTS, duration=60.0).save_annotations(path)
    assert main(["stats", str(path), "--max-backchannel", "0.3"]) == 0
    assert "Backchannel" in capsys.readouterr().out
    assert main(["stats", str(tmp_path / "missing.json")]) == 1
    assert "missing.json" in capsys.readouterr().err
