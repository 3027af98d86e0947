"""40 ms labels: the recipe's channel rule, mono state machine, ms98 path and Dialogue path."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from turneval.dataset_scripts.dialogue import Dialogue, Word
from turneval.dataset_scripts.grids import true_runs
from turneval.dataset_scripts.labels import (
    LABELS,
    RECIPE_START_S,
    ChunkLabels,
    LabelError,
    channel_activity,
    chunk_bounds,
    chunk_labels,
    floor_labels,
    next_speaker_targets,
    recipe_chunk_count,
)
from turneval.dataset_scripts.readers.espnet_switchboard import (
    BackchannelRow,
    Ms98Word,
    parse_backchannel_csv_lines,
    parse_ms98_word_lines,
    recipe_clean_token,
    recipe_labels_from_ms98,
    recipe_split_backchannel_words,
)


def runs(labels):
    """Run-length compress a label sequence to its distinct runs."""
    return [k for k, _ in itertools.groupby(labels)]


def ms98(file_name, utterances):
    """ms98 word lines from [(utt_no, [(start, end, word), ...]), ...]."""
    return [f"{file_name}-{n:04d} {s:.6f} {e:.6f} {w}" for n, ws in utterances for s, e, w in ws]


# -- grid and channel rule ------------------------------------------------------------


def test_recipe_chunk_count_truncates():
    # (2.4 - 0.2) / 0.04 is 54.99999999999999 in floats: 54 chunks, not 55
    assert recipe_chunk_count(2.4) == 54
    assert recipe_chunk_count(8.0) == 195
    assert recipe_chunk_count(10.0) == 245
    assert recipe_chunk_count(0.1) == 0


def test_channel_activity_lookahead_and_end_chunk():
    starts, ends = chunk_bounds(20, RECIPE_START_S)
    active = channel_activity([(0.5, 0.7)], starts, ends)
    # [0.44, 0.48) is the chunk before speech: labelled by the one-chunk look-ahead;
    # [0.68, 0.72) holds the interval's end and already looks at the (absent) next interval
    assert [i for i, a in enumerate(active) if a] == [6, 7, 8, 9, 10, 11]
    assert starts[6] == pytest.approx(0.44) and starts[12] == pytest.approx(0.68)


def test_channel_activity_skips_early_words_and_strict_order():
    starts, ends = chunk_bounds(10, RECIPE_START_S)
    assert not any(channel_activity([(0.0, 0.1)], starts, ends))  # ended before the first chunk
    with pytest.raises(LabelError, match="time order"):
        channel_activity([(0.3, 0.4), (0.0, 0.35)], starts, ends, strict=True)
    channel_activity([(0.3, 0.4), (0.0, 0.35)], starts, ends)  # lenient: skipped


# -- mono state machine ---------------------------------------------------------------


def test_floor_labels_table():
    a = ["NA", "IPU", "IPU", "IPU", "NA", "NA", "BC", "NA", "BC", "IPU"]
    b = ["NA", "NA", "IPU", "NA", "NA", "IPU", "NA", "BC", "BC", "IPU"]
    mono, before, after = floor_labels(a, b)
    assert mono == ["NA", "T", "I", "C", "NA", "T", "BC", "BC_1", "BC_2", "I"]
    assert before == ["NA", "NA", "A", "AB", "A", "A", "B", "B", "B", "B"]
    assert after == before[1:] + ["BA"]
    with pytest.raises(LabelError):
        floor_labels(["XX"], ["NA"])


def test_floor_taking_vs_butting_in_sequences():
    # floor-taking: A, both, B alone -> I ... T C ; butting-in: A, both, A alone -> I ... C
    mono, _, after = floor_labels(["IPU", "IPU", "NA", "NA"], ["NA", "IPU", "IPU", "IPU"])
    assert mono == ["T", "I", "T", "C"] and after[-1] == "B"
    mono, _, after = floor_labels(["IPU", "IPU", "IPU"], ["NA", "IPU", "NA"])
    assert mono == ["T", "I", "C"] and after[-1] == "A"


# -- ms98 path ------------------------------------------------------------------------


def test_recipe_floor_taking_interruption_from_ms98():
    a = ms98("sw0003A-ms98-a", [(1, [(0.0, 0.4, "[silence]")]), (2, [(0.4, 1.0, "one"), (1.0, 2.0, "two"), (2.0, 3.0, "three")]), (3, [(3.0, 6.0, "[silence]")])])
    b = ms98("sw0003B-ms98-a", [(1, [(0.0, 2.5, "[silence]")]), (2, [(2.5, 3.5, "wait"), (3.5, 5.0, "listen")]), (3, [(5.0, 6.0, "[silence]")])])
    labels = recipe_labels_from_ms98([a, b], [], 6.0)
    assert len(labels) == recipe_chunk_count(6.0)
    assert runs(labels.recipe_labels) == ["NA", "T", "C", "I", "T", "C", "NA"]
    assert labels.mono_rows()[0] == ["0.2", "0.24", "NA", "NA"]
    # the T after the overlap is where the floor passes from "A then B" to B
    t_after = [i for i, lab in enumerate(labels.recipe_labels) if lab == "T"][1]
    assert labels.floor_before[t_after] == "AB" and labels.floor[t_after] == "B"


def test_recipe_backchannel_rows_and_bc1():
    a = ms98("sw0009A-ms98-a", [(1, [(0.0, 1.0, "[silence]")]), (2, [(1.0, 3.0, "talking")]), (3, [(3.0, 4.0, "[silence]")])])
    b = ms98("sw0009B-ms98-a", [(1, [(0.0, 0.4, "[silence]")]), (2, [(0.4, 0.6, "yeah")]), (3, [(0.6, 2.0, "[silence]")]), (4, [(2.0, 2.3, "uh-huh")]), (5, [(2.3, 4.0, "[silence]")])])
    csv_lines = [
        "start,end,text,utt_idx,speaker,starts,ends,words,da,da_boi,bc_label,session",
        "0.4,0.6,yeah,sw0009B-ms98-a-0002,B,[0.4],[0.6],['yeah'],['b'],['B'],bc,0009",
        "2.0,2.3,uh-huh,sw0009B-ms98-a-0004,B,[2.0],[2.3],['uh-huh'],['b'],['B'],bc,0009",
        "1.0,1.2,other,sw0010A-ms98-a-0002,A,[1.0],[1.2],['other'],['b'],['B'],bc,0010",
    ]
    labels = recipe_labels_from_ms98([a, b], parse_backchannel_csv_lines(csv_lines), 4.0)
    assert runs(labels.recipe_labels) == ["NA", "BC_1", "NA", "T", "C", "BC", "C", "NA"]
    assert "IPU" not in labels.channel_labels[1]  # B's words were all backchannels
    assert "BC" in labels.labels and "BC_1" not in labels.labels


def test_recipe_split_backchannel_words_quirks():
    words = [
        Ms98Word("x-0001", 0.0, 1.0, "[silence]"),
        Ms98Word("x-0002", 1.0, 1.2, "yeah"),
        Ms98Word("x-0002", 1.2, 1.4, "right"),
        Ms98Word("x-0002", 1.4, 1.6, "so"),
        Ms98Word("x-0003", 1.6, 2.0, "[laughter]"),
        Ms98Word("x-0003", 2.0, 2.2, "[noise]"),
    ]
    rows = [BackchannelRow("x-0002", 1.0, 1.2), BackchannelRow("x-0002", 1.4, 1.6)]
    speech, bc = recipe_split_backchannel_words(words, rows)
    # the recipe re-examines "yeah" for the second row and keeps it as speech too
    assert [w.token for w in bc] == ["yeah", "so"]
    assert [w.token for w in speech] == ["yeah", "right", "[laughter]"]
    assert recipe_clean_token("[laughter]") == "laughter" and recipe_clean_token("[vocalized-noise]") == ""


def test_parsers_name_the_bad_line():
    with pytest.raises(LabelError, match="words.txt:2"):
        parse_ms98_word_lines(["a-0001 0.0 1.0 hi", "a-0001 x 1.0 hi"], source="words.txt")
    with pytest.raises(LabelError, match="bc.csv:2"):
        parse_backchannel_csv_lines(["start,end,text,utt_idx", "0.1,0.2"], source="bc.csv")


# -- Dialogue path --------------------------------------------------------------------


def test_chunk_labels_dialogue_matches_recipe_on_recipe_grid():
    a_words = [Word(0.3, 1.0, "well"), Word(1.0, 2.45, "think"), Word(3.05, 7.5, "going")]
    b_words = [Word(2.5, 2.8, "uh-huh"), Word(4.8, 5.05, "yeah"), Word(7.9, 8.6, "so")]
    dlg = Dialogue("d", [[], []], words=[a_words, b_words], duration=9.0)
    a = ms98("sw0002A-ms98-a", [(1, [(0.0, 0.3, "[silence]")]), (2, [(0.3, 1.0, "well"), (1.0, 2.45, "think"), (2.45, 3.05, "[silence]"), (3.05, 7.5, "going")]), (3, [(7.5, 9.0, "[silence]")])])
    b = ms98("sw0002B-ms98-a", [(1, [(0.0, 2.5, "[silence]")]), (2, [(2.5, 2.8, "uh-huh")]), (3, [(2.8, 4.8, "[silence]")]), (4, [(4.8, 5.05, "yeah")]), (5, [(5.05, 7.9, "[silence]")]), (6, [(7.9, 8.6, "so")]), (7, [(8.6, 9.0, "[silence]")])])
    rows = [BackchannelRow("sw0002B-ms98-a-0002", 2.5, 2.8), BackchannelRow("sw0002B-ms98-a-0004", 4.8, 5.05)]
    reference = recipe_labels_from_ms98([a, b], rows, 9.0)
    # backchannels found by events (words) equal the csv rows here
    ours = chunk_labels(dlg, start_s=RECIPE_START_S, n_chunks=recipe_chunk_count(9.0))
    assert ours.mono_rows() == reference.mono_rows()
    assert ours.two_channel_rows() == reference.two_channel_rows()


def test_chunk_labels_own_grid_and_training_ids():
    # no words: B's 0.4 s IPU inside A's turn is a backchannel by the duration proxy
    dlg = Dialogue("g", [[(0.0, 2.0), (2.5, 3.0)], [(1.0, 1.4), (3.5, 4.0)]], duration=4.0)
    labels = chunk_labels(dlg)
    assert isinstance(labels, ChunkLabels)
    assert len(labels) == 100 and labels.chunk_starts[0] == 0.0
    assert np.allclose(labels.chunk_starts, np.arange(100) * 0.04)
    assert runs(labels.labels) == ["T", "C", "BC", "C", "NA", "C", "NA", "T", "C", "NA"]
    ids = labels.label_ids()
    assert ids.dtype == np.int64 and set(ids.tolist()) <= set(range(len(LABELS)))
    assert labels.floor[-1] == "B" and labels.floor_ids()[-1] == 2
    assert labels.to_dict()["labels"] == list(labels.labels)
    assert labels.labels is labels.labels  # made once: a report reads them hundreds of times
    import pickle

    assert pickle.loads(pickle.dumps(labels)).labels == labels.labels
    from turneval.dataset_scripts.events import extract_events

    again = chunk_labels(dlg, events=extract_events(dlg))
    assert again.recipe_labels == labels.recipe_labels
    assert "BC" not in chunk_labels(dlg, backchannel_intervals=[[], []]).labels


def test_next_speaker_targets_mark_every_silent_chunk_of_a_pause():
    # A talks, pauses 0.5 s, goes on (hold); B answers after 0.5 s (shift); silence to the end
    dlg = Dialogue("p", [[(0.0, 1.0), (1.5, 2.0)], [(2.5, 3.0)]], duration=4.0)
    ids = chunk_labels(dlg).label_ids()
    target = next_speaker_targets(ids)
    assert target.dtype == np.int64 and len(target) == len(ids)
    na = LABELS.index("NA")
    pauses = true_runs(ids == na)
    (hold_i, hold_j), (shift_i, shift_j), (end_i, end_j) = pauses[-3:]
    assert set(target[hold_i:hold_j]) == {0} and ids[hold_j] == LABELS.index("C")
    assert set(target[shift_i:shift_j]) == {1} and ids[shift_j] == LABELS.index("T")
    assert set(target[end_i:end_j]) == {-100}  # the conversation ends in silence: no answer
    assert (target[ids != na] == -100).all()  # speech chunks never carry the target


def test_next_speaker_targets_skip_silence_before_speech_and_other_endings():
    ids = [LABELS.index(x) for x in "NA NA T C NA BC C NA I I NA".split()]
    # leading silence (nobody spoke yet), a pause ending in a backchannel, one ending in an
    # interruption, trailing silence: nothing to learn; -100 labels break "after speech"
    assert next_speaker_targets(ids).tolist() == [-100] * len(ids)
    assert next_speaker_targets([LABELS.index("C"), -100, LABELS.index("NA"), LABELS.index("T")]).tolist() == [-100, -100, -100, -100]


def test_label_ids_unclear_backchannels():
    dlg = Dialogue("u", [[(3.0, 5.0)], [(0.5, 0.8)]], duration=5.0)
    labels = chunk_labels(dlg, backchannel_intervals=[[], [(0.5, 0.8)]])
    assert "BC_1" in labels.recipe_labels
    bc1 = labels.recipe_labels.index("BC_1")
    assert labels.label_ids()[bc1] == LABELS.index("BC")
    assert labels.label_ids(unclear_backchannel="ignore", ignore_index=-1)[bc1] == -1
