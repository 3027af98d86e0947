"""VAP zero-shot events and their balanced sampling (beyond golden/vap_events)."""
from __future__ import annotations

import numpy as np
import pytest

from turneval.dataset_scripts import vap_events as ve


def frames(vad_list, duration):
    return ve.vad_list_to_onehot(vad_list, duration)


def flip(events: dict) -> dict:
    """Events with speakers exchanged, as sets for order-free comparison."""
    return {k: {(s, e, 1 - spk) for s, e, spk in v} for k, v in events.items()}


def as_sets(events: dict) -> dict:
    return {k: set(v) for k, v in events.items()}


def test_vad_list_to_onehot_truncates_like_vap() -> None:
    va = frames([[[0.3, 5.3]], [[4.6, 6.0]]], 12.0)
    assert va.shape == (600, 2) and va.dtype == np.int8
    # hop = 1/50: 0.3 / hop -> 15 and 5.3 / hop -> 265, but 4.6 / hop = 229.99... -> 229.
    assert np.flatnonzero(va[:, 0]).tolist() == list(range(15, 265))
    assert np.flatnonzero(va[:, 1])[0] == 229
    with pytest.raises(ValueError, match="one segment list per speaker"):
        ve.vad_list_to_onehot([[[0, 1]]], 2.0)


def test_find_islands_and_dialog_states() -> None:
    islands = ve.find_islands(np.array([1, 1, 0, 0, 0, 3]))
    assert islands.start.tolist() == [0, 2, 5]
    assert islands.duration.tolist() == [2, 3, 1]
    assert islands.value.tolist() == [1, 0, 3]
    assert len(ve.find_islands(np.array([]))) == 0
    va = np.array([[1, 0], [0, 0], [1, 1], [0, 1]])
    assert ve.dialog_states(va).tolist() == [ve.STATE_ONLY_A, ve.STATE_SILENCE, ve.STATE_BOTH, ve.STATE_ONLY_B]


def test_clean_shift_gives_shift_long_and_prediction() -> None:
    va = frames([[[0.0, 5.0]], [[5.5, 9.0]]], 10.0)
    events = ve.turn_taking_events(va)
    assert events["shift"] == [(250, 275, 1)]
    assert events["long"] == [(275, 285, 1)]
    assert events["pred_shift"] == [(225, 250, 1)]
    assert events["hold"] == [] and events["pred_hold"] == []


def test_hold_pause_is_filled_and_gives_hold() -> None:
    va = frames([[[0.0, 5.0], [5.6, 9.0]], []], 10.0)
    filled = ve.fill_pauses(va)
    assert filled[250:280, 0].all() and not va[250:280, 0].any()
    events = ve.turn_taking_events(va)
    assert events["hold"] == [(250, 280, 0)]
    assert events["pred_hold"] == [(225, 250, 0)]
    assert events["shift"] == []


def test_events_are_symmetric_in_speakers() -> None:
    va = frames(
        [[[0.0, 3.6], [4.2, 6.8], [9.9, 10.3], [12.4, 15.2], [15.9, 18.4]], [[2.1, 2.4], [7.4, 9.4], [10.8, 12.0], [13.5, 13.8], [18.3, 19.6]]],
        20.0,
    )
    events = ve.turn_taking_events(va)
    assert sum(len(v) for v in events.values()) > 8
    assert flip(events) == as_sets(ve.turn_taking_events(va[:, ::-1]))


def test_backchannel_needs_own_silence_around_it_only() -> None:
    # B says something short while A talks, and again with nobody else talking.
    va = frames([[[0.0, 14.0]], [[10.0, 10.5]]], 14.0)
    events = ve.turn_taking_events(va)
    assert events["backchannel"] == [(500, 525, 1)]
    assert events["pred_backchannel"] == [(475, 500, 1)]
    lone = frames([[], [[6.0, 6.4]]], 10.0)
    assert ve.turn_taking_events(lone)["backchannel"] == [(300, 320, 1)]
    too_long = frames([[[0.0, 14.0]], [[6.0, 7.2]]], 14.0)
    assert ve.turn_taking_events(too_long)["backchannel"] == []


def test_nothing_before_min_context_or_after_max_time() -> None:
    early = frames([[[0.0, 2.0]], [[2.5, 6.0]]], 8.0)
    assert ve.turn_taking_events(early)["shift"] == []
    late = frames([[[0.0, 21.0]], [[21.5, 25.0]]], 26.0)
    assert ve.turn_taking_events(late)["shift"] == []
    assert ve.turn_taking_events(late, max_time=30)["shift"] == [(1050, 1075, 1)]


def test_event_config_frames_and_validation() -> None:
    config = ve.EventConfig()
    assert config.min_silence_frames == 12
    assert config.min_context_frames == 150
    assert config.max_frame == 1000
    assert config.prediction_region_frames == 25
    with pytest.raises(ValueError, match="min_context_time"):
        ve.EventConfig(min_context_time=30)
    with pytest.raises(ValueError, match="prediction_region_time"):
        ve.EventConfig(prediction_region_time=0)


def many_events_va() -> np.ndarray:
    """A 20 s dialogue with several holds and one shift."""
    return frames([[[0.0, 4.0], [4.6, 8.0], [8.6, 12.0], [12.6, 14.0]], [[14.5, 19.5]]], 20.0)


def test_sampler_balances_and_is_seeded() -> None:
    events = ve.turn_taking_events(many_events_va())
    assert len(events["hold"]) > len(events["shift"]) == 1
    first = ve.BalancedEventSampler(seed=3)(events)
    again = ve.BalancedEventSampler(seed=3)(events)
    assert first == again
    assert len(first["hold"]) == 1 and first["hold"][0] in events["hold"]
    assert first["short"] == events["backchannel"]
    for start, end, speaker in first["pred_backchannel_neg"]:
        assert end - start == 25
        assert any(rs <= start and end <= re and speaker == rspk for rs, re, rspk in events["pred_backchannel_neg_regions"])
    # The deterministic events are never modified.
    assert ve.turn_taking_events(many_events_va()) == events


def test_sampler_carries_shortfall_to_later_calls() -> None:
    sampler = ve.BalancedEventSampler(seed=0)
    no_holds = ve.turn_taking_events(frames([[[0.0, 5.0]], [[5.5, 9.0]]], 10.0))
    assert sampler(no_holds)["hold"] == []
    assert sampler.carry_over["shift"] == 1
    holds_only = ve.turn_taking_events(frames([[[0.0, 4.0], [4.6, 8.0], [8.6, 12.0]], []], 13.0))
    assert len(holds_only["hold"]) >= 1 and holds_only["shift"] == []
    assert len(sampler(holds_only)["hold"]) == 1
    assert sampler.carry_over["shift"] == 0
    with pytest.raises(ValueError, match="bc_negatives_follow"):
        ve.BalancedEventSampler(bc_negatives_follow="shift")
