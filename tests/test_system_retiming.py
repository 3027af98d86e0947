"""dataset_scripts/system_retiming.py: a real call re-laid with a system's response timing."""
from __future__ import annotations

import pytest

from turneval.dataset_scripts.events import extract_events
from turneval.dataset_scripts.synthetic import generate_dialogue
from turneval.dataset_scripts.synthetic.timing import CASCADED_SYSTEM, EAGER_DUPLEX_SYSTEM
from turneval.dataset_scripts.system_retiming import retime_as_system


SYSTEM = 1


def _call():
    return generate_dialogue(11, duration_s=90.0, style="human")


def _response_gaps(dialogue, system: int) -> list[float]:
    """Start of each system turn minus the end of the user turn right before it."""
    turns = extract_events(dialogue).turns
    return [t.start - p.end for p, t in zip(turns, turns[1:]) if t.speaker == system and p.speaker != system]


def test_human_keeps_the_calls_own_timing():
    call = _call()
    same = retime_as_system(call, SYSTEM, "human")
    ipus = extract_events(call).ipus
    for speaker in (0, 1):
        assert same.segments[speaker] == [(u.start, u.end) for u in ipus if u.speaker == speaker]
    assert same.duration == call.duration and same.system_speaker == SYSTEM


@pytest.mark.parametrize("style,behaviour", [("cascaded", CASCADED_SYSTEM), ("eager_duplex", EAGER_DUPLEX_SYSTEM)])
def test_system_turns_take_the_styles_response_gaps(style, behaviour):
    call = _call()
    before = _response_gaps(call, SYSTEM)
    gaps = _response_gaps(retime_as_system(call, SYSTEM, style, seed=3), SYSTEM)
    assert len(gaps) >= 5 and len(before) >= 5
    low, high = behaviour.response_gap.low, behaviour.response_gap.high
    # re-laid turns can merge or split around overlaps, so most (not all) gaps are the style's
    inside = [low - 0.05 <= g <= high + 0.05 for g in gaps]
    assert sum(inside) >= 0.8 * len(gaps)
    assert sum(low - 0.05 <= g <= high + 0.05 for g in before) < sum(inside)


def test_the_user_keeps_every_ipu_and_a_cascaded_system_its_turns_but_not_its_backchannels():
    call = _call()
    events = extract_events(call)
    system_bcs = [bc for bc in events.backchannels if bc.speaker == SYSTEM]
    assert system_bcs, "the fixture call should have system backchannels"
    speech = sum(u.duration for u in events.ipus if u.speaker == SYSTEM) - sum(bc.duration for bc in system_bcs)
    cascaded = retime_as_system(call, SYSTEM, "cascaded", seed=1)
    kept = retime_as_system(call, SYSTEM, "cascaded", seed=1, keep_backchannels=True)
    for version in (cascaded, kept):
        user = sum(e - s for s, e in version.segments[1 - SYSTEM])
        assert user == pytest.approx(sum(u.duration for u in events.ipus if u.speaker != SYSTEM), abs=0.05)
    assert sum(e - s for s, e in cascaded.segments[SYSTEM]) == pytest.approx(speech, abs=0.05)
    assert sum(e - s for s, e in kept.segments[SYSTEM]) > sum(e - s for s, e in cascaded.segments[SYSTEM])
    # a cascaded system waits longer: the call gets longer
    assert cascaded.duration > call.duration


def test_bad_arguments_say_what_is_allowed():
    with pytest.raises(ValueError, match="human, cascaded, eager_duplex"):
        retime_as_system(_call(), SYSTEM, "polite")
    with pytest.raises(ValueError, match="system_speaker"):
        retime_as_system(_call(), 2, "human")
