"""Turn-taking events on hand-built dialogues (docs/events_and_labels.md, "Events")."""
from __future__ import annotations

import json

import pytest

from turneval.dataset_scripts.dialogue import Dialogue, DialogueError, Word
from turneval.dataset_scripts.events import extract_events, merge_into_ipus
from turneval.dataset_scripts.vocabulary import (
    is_backchannel_text,
    is_speech_word,
    load_backchannel_words,
    normalize_phrase,
)


def words(*items):
    """Words from (start, end, text) triples."""
    return [Word(s, e, t) for s, e, t in items]


# -- backchannel word list ------------------------------------------------------------


def test_default_list_has_switchboard_backchannels():
    phrases = load_backchannel_words()
    for phrase in ("uh huh", "um hum", "yeah", "right", "oh", "okay", "i see", "oh really", "that's right", "mhm"):
        assert phrase in phrases
    assert "so" not in phrases and "what" not in phrases


def test_list_from_file_and_errors(tmp_path):
    path = tmp_path / "bc.txt"
    path.write_text("# my list\nYeah\n\nUh-Huh.\n")
    assert load_backchannel_words(path) == frozenset({"yeah", "uh huh"})
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(DialogueError, match="empty.txt"):
        load_backchannel_words(empty)
    with pytest.raises(FileNotFoundError):
        load_backchannel_words(tmp_path / "missing.txt")


def test_phrase_matching():
    assert normalize_phrase("Uh-huh.") == "uh huh"
    assert is_backchannel_text(["yeah", "yeah"])
    assert is_backchannel_text(["that's", "right"])
    assert not is_backchannel_text(["right", "so", "what"])
    assert not is_backchannel_text([])
    assert is_backchannel_text(["sure"], backchannel_words=["sure"])
    assert not is_backchannel_text(["yeah"], backchannel_words=["sure"])
    assert not is_speech_word("[silence]") and is_speech_word("[laughter]")


# -- IPUs, silences, pauses, gaps, overlaps -------------------------------------------


def test_ipus_split_on_more_than_200ms():
    ipus = merge_into_ipus([(0.0, 1.0), (1.2, 2.0), (2.21, 3.0)], speaker=0)
    assert [(u.start, u.end) for u in ipus] == [(0.0, 2.0), (2.21, 3.0)]


def test_pause_gap_overlap_silence():
    # A: 0-2, pause, 2.5-4 ; B: 3.5-6 (overlap 3.5-4), gap 6-6.3, A 6.3-7 ; 7-8 trailing silence
    dlg = Dialogue("d", [[(0, 2), (2.5, 4), (6.3, 7)], [(3.5, 6)]], duration=8.0)
    ev = extract_events(dlg)
    assert [(u.speaker, u.start, u.end) for u in ev.ipus] == [(0, 0, 2), (0, 2.5, 4), (1, 3.5, 6), (0, 6.3, 7)]
    assert [(p.speaker, p.start, p.end) for p in ev.pauses] == [(0, 2, 2.5)]
    assert [(g.from_speaker, g.to_speaker, g.start, g.end) for g in ev.gaps] == [(1, 0, 6, 6.3)]
    assert [(o.start, o.end, o.first_speaker) for o in ev.overlaps] == [(3.5, 4, 0)]
    assert [(s.start, s.end) for s in ev.silences] == [(2, 2.5), (6, 6.3), (7, 8.0)]
    assert ev.total_duration("pauses") == pytest.approx(0.5)
    assert ev.total_duration("ipus") == pytest.approx(2 + 1.5 + 2.5 + 0.7)
    # A's turn continues across the pause; B's IPU (2.5 s, not a backchannel) takes the floor
    assert [(t.speaker, t.start, t.end) for t in ev.turns] == [(0, 0, 4), (1, 3.5, 6), (0, 6.3, 7)]
    assert [(i.speaker, i.start, i.kind) for i in ev.interruptions] == [(1, 3.5, "floor_taking")]
    json.dumps(ev.to_dict())  # JSON-ready


def test_ipus_from_words_ignore_non_speech_tokens():
    dlg = Dialogue(
        "w",
        [[], []],
        words=[words((0.0, 0.3, "so"), (0.3, 0.5, "[silence]"), (0.45, 0.9, "well"), (1.5, 2.0, "[noise]")), []],
    )
    ev = extract_events(dlg)
    assert [(u.start, u.end, u.text) for u in ev.ipus] == [(0.0, 0.9, "so well")]
    assert ev.has_words


# -- backchannels ---------------------------------------------------------------------


def test_backchannel_by_words_inside_turn():
    a = words((0.0, 1.0, "well"), (1.0, 3.0, "anyway"), (3.5, 5.0, "so"), (5.0, 6.0, "then"))
    b = words((2.0, 2.3, "uh-huh"), (3.1, 3.3, "yeah"), (7.0, 7.5, "right"), (7.5, 8.0, "so"))
    ev = extract_events(Dialogue("bc", [[], []], words=[a, b]))
    assert [(bc.start, bc.text, bc.method) for bc in ev.backchannels] == [(2.0, "uh-huh", "words"), (3.1, "yeah", "words")]
    # B's backchannels do not end A's turn; "right so" is not a backchannel phrase
    assert [(t.speaker, t.start, t.end) for t in ev.turns] == [(0, 0.0, 6.0), (1, 7.0, 8.0)]
    # a backchannel overlapping A's speech is not an interruption
    assert ev.interruptions == ()


def test_backchannel_words_is_a_parameter():
    a = words((0.0, 3.0, "talking"), (4.0, 6.0, "more"))
    b = words((2.0, 2.3, "gotcha"))
    assert not extract_events(Dialogue("p", [[], []], words=[a, b])).backchannels
    ev = extract_events(Dialogue("p", [[], []], words=[a, b]), backchannel_words=["gotcha"])
    assert [bc.text for bc in ev.backchannels] == ["gotcha"]


def test_response_token_followed_by_listener_turn_is_not_a_backchannel():
    # B says "yeah" after A's question and then takes the floor: a turn start, not feedback
    a = words((0.0, 2.0, "question"))
    b = words((2.3, 2.6, "yeah"), (3.0, 5.0, "answer"))
    ev = extract_events(Dialogue("r", [[], []], words=[a, b]))
    assert ev.backchannels == ()
    assert [(t.speaker, t.start) for t in ev.turns] == [(0, 0.0), (1, 2.3)]


def test_backchannel_by_duration_proxy():
    # no words: B's 0.5 s IPU inside A's turn is a backchannel; B's 0.8 s IPU after which B
    # keeps talking is not; B's 1.5 s IPU inside A's speech is too long (an interruption)
    dlg = Dialogue("proxy", [[(0, 4), (4.5, 9)], [(2, 2.5), (5, 6.5), (9.4, 10.2), (10.6, 13)]])
    ev = extract_events(dlg)
    assert [(bc.start, bc.method) for bc in ev.backchannels] == [(2, "duration")]
    assert [(i.start, i.kind) for i in ev.interruptions] == [(5, "butting_in")]
    assert [(t.speaker, t.start, t.end) for t in ev.turns] == [(0, 0, 9), (1, 5, 6.5), (1, 9.4, 13)]
    # the proxy limit is a parameter
    ev2 = extract_events(dlg, max_backchannel_s=0.4)
    assert ev2.backchannels == ()


def test_backchannel_needs_someone_holding_the_floor():
    # a short IPU before anyone spoke is not a backchannel
    ev = extract_events(Dialogue("s", [[(1, 4)], [(0, 0.4)]]))
    assert ev.backchannels == ()


# -- interruptions --------------------------------------------------------------------


def test_interruption_floor_taking_vs_butting_in():
    # B starts inside A's IPU and outlasts it: floor-taking
    ev = extract_events(Dialogue("ft", [[(0, 3)], [(2, 5)]]))
    assert [(i.speaker, i.interrupted_speaker, i.start, i.overlap_end, i.kind) for i in ev.interruptions] == [
        (1, 0, 2, 3, "floor_taking")
    ]
    # B starts inside A's IPU, A keeps talking after B stops: butting-in
    ev = extract_events(Dialogue("bi", [[(0, 6)], [(2, 3.3)]]))
    assert [(i.speaker, i.kind, i.floor_taking) for i in ev.interruptions] == [(1, "butting_in", False)]
    # starting together is an overlap, not an interruption
    ev = extract_events(Dialogue("joint", [[(0, 3)], [(0, 2)]]))
    assert ev.interruptions == () and len(ev.overlaps) == 1


def test_words_or_segments_switch():
    dlg = Dialogue("sw", [[(0, 3)], [(1, 1.4)]], words=[words((0, 3, "talking")), words((1, 1.4, "what"))])
    assert extract_events(dlg).backchannels == ()  # "what" is no backchannel word
    assert len(extract_events(dlg, use_words=False).backchannels) == 1  # 0.4 s proxy
    with pytest.raises(DialogueError):
        extract_events(Dialogue("nw", [[(0, 1)], []]), use_words=True)


def test_backchannel_after_butting_in_is_still_a_backchannel():
    # B butts in (2 s, not a backchannel) while A keeps talking; B's later "yeah" while A still
    # talks is feedback on A's turn, not B's floor
    a = words((0.0, 10.0, "monologue"))
    b = words((3.0, 5.0, "disagree"), (7.0, 7.3, "yeah"))
    ev = extract_events(Dialogue("bi", [[], []], words=[a, b]))
    assert [bc.text for bc in ev.backchannels] == ["yeah"]
    assert [(i.start, i.kind) for i in ev.interruptions] == [(3.0, "butting_in")]
