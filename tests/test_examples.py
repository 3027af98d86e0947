"""The bundled example conversations show the timing they are meant to show (issue 4, "Must show").

Ground truth only (no audio decoding, no model): ``read_annotations`` on ``examples/*.json``, then
:func:`~turneval.metrics.turn_statistics.dialogue_statistics` and the extracted events. The ranges are the
human ranges of Talking Turns §3.2 (gaps of a few hundred ms, overlaps present, a few backchannels
per minute) and the cascaded-system signature (long response gaps, no system backchannels).
"""
from __future__ import annotations

import statistics as pystats

import pytest

from turneval.dataset_scripts.events import extract_events
from turneval.dataset_scripts.readers import read_annotations
from turneval.metrics.turn_statistics import dialogue_statistics


@pytest.fixture(scope="module")
def examples(repo_root):
    """Events and statistics of each bundled example, by name."""
    out = {}
    for name in ("human_like", "cascaded_like", "eager_duplex_like"):
        dialogue = read_annotations(repo_root / "examples" / f"{name}.json", load_audio=False, require_audio=True)
        events = extract_events(dialogue)
        out[name] = (dialogue, events, dialogue_statistics(events))
    return out


def _gaps(events, to_speaker: int | None = None) -> list[float]:
    return [g.duration for g in events.gaps if to_speaker is None or g.to_speaker == to_speaker]


def test_examples_are_one_to_three_minutes(examples):
    for name, (dialogue, _, stats) in examples.items():
        assert 60.0 <= stats["duration_s"] <= 180.0, name
        assert dialogue.words is not None and all(len(w) > 0 for w in dialogue.words), name


def test_human_like_gaps_are_a_few_hundred_ms(examples):
    _, events, stats = examples["human_like"]
    gaps = _gaps(events)
    assert len(gaps) >= 5, "too few gaps to speak of a distribution"
    assert 0.05 <= stats["gap_mean_s"] <= 0.6
    assert 0.05 <= pystats.median(gaps) <= 0.6


def test_human_like_has_overlaps_and_human_backchannel_rate(examples):
    dialogue, _, stats = examples["human_like"]
    assert dialogue.system_speaker is None
    assert stats["overlap_count"] > 0 and stats["overlap_percent"] > 0
    assert 2.0 <= stats["backchannels_per_min"] <= 6.0
    # both speakers backchannel: it is a conversation between peers
    assert stats["backchannel_count_A"] > 0 and stats["backchannel_count_B"] > 0
    assert stats["interruption_count"] > 0


def test_cascaded_like_has_long_response_gaps_and_no_system_backchannels(examples):
    dialogue, events, stats = examples["cascaded_like"]
    system = dialogue.system_speaker
    assert system == 1
    response_gaps = _gaps(events, to_speaker=system)
    assert len(response_gaps) >= 3
    assert pystats.mean(response_gaps) > 0.8
    assert pystats.median(response_gaps) > 0.8
    # all gaps pooled (the user's are short) are still far above the human example's
    assert stats["gap_mean_s"] > 0.8
    assert stats["gap_mean_s"] > 2 * examples["human_like"][2]["gap_mean_s"]
    assert stats[f"backchannel_count_{'AB'[system]}"] == 0
    assert stats[f"backchannel_count_{'AB'[1 - system]}"] > 0  # the user still backchannels


def test_eager_duplex_like_overlaps_more_than_humans(examples):
    dialogue, _, stats = examples["eager_duplex_like"]
    system = dialogue.system_speaker
    assert system == 1
    human = examples["human_like"][2]
    assert stats["overlap_per_min"] > human["overlap_per_min"]
    assert stats[f"interruptions_per_min_{'AB'[system]}"] > 0
