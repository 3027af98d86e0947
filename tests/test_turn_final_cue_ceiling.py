"""benchmarks/experiments/turn_final_cue_ceiling.py: each IPU's truth, written into a word cache and carried by the words."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks" / "experiments"))

import turn_final_cue_ceiling as experiment  # noqa: E402

from turneval.dataset_scripts.dialogue import Dialogue, Word  # noqa: E402


def test_ipus_merge_short_gaps_and_know_whether_the_other_side_spoke_next():
    own = [(0.0, 1.0), (1.1, 2.0), (3.0, 4.0), (4.2, 4.5)]
    other = [(2.3, 2.8)]
    # 0.1 s merges; exactly 0.2 s ends the IPU; the other side speaks between the first IPU and the next one only
    assert experiment.ipu_truth(own, other, 5.0) == [(0.0, 2.0, True), (3.0, 4.0, False), (4.2, 4.5, False)]
    assert experiment.ipu_truth(own, [(4.6, 4.9)], 5.0)[-1] == (4.2, 4.5, True), "the last IPU looks to the end of the call"


def test_cue_magnitude_is_the_log_odds_of_being_right():
    assert experiment.cue_magnitude(0.0) == experiment.PERFECT_CUE
    assert experiment.cue_magnitude(0.2) == pytest.approx(math.log(4.0))


def test_words_carry_their_ipus_truth_and_lose_it_again():
    words = [[Word(0.0, 0.4, "so"), Word(0.5, 1.0, "yeah"), Word(3.0, 3.5, "right")], [Word(1.5, 2.0, "okay")]]
    dialogue = Dialogue("d", [[(0.0, 1.0), (3.0, 3.5)], [(1.5, 2.0)]], words=words, duration=5.0)
    tagged = experiment.tag_words(dialogue)
    assert [w.text for w in tagged.words[0]] == ["so|S", "yeah|S", "right|H"]
    assert [w.text for w in tagged.words[1]] == ["okay|S"], "speaker A goes on after B's turn"
    assert experiment.untag_words(tagged).words == dialogue.words
    flipped = experiment.tag_words(dialogue, flip=1.0)
    assert [w.text[-1] for w in flipped.words[0]] == ["H", "H", "S"]


def test_the_cache_holds_one_word_per_ipu_with_its_truth(tmp_path):
    va = np.zeros((250, 2), np.int8)
    va[0:50, 0] = 1      # A 0-1 s
    va[60:100, 1] = 1    # B answers
    va[150:200, 0] = 1   # A again, nobody after it
    src = tmp_path / "words.npz"
    empty = np.zeros(0, np.float32)
    np.savez(src, ids=np.array(["1"]), offsets=np.array([0, 250]), va=va, word_offsets=np.zeros((1, 2, 2), np.int64),
             word_starts=empty, word_ends=empty, word_buckets=np.zeros((0, 3), np.int32))
    report = experiment.write_cache(src, tmp_path / "cue.npz")
    assert report == {"calls": 1, "ipus": 3, "shift_share": pytest.approx(2 / 3)}
    from turneval.training.switchboard_words import load_words

    call = load_words(tmp_path / "cue.npz")[0]
    assert call["word_starts"][0].tolist() == [0.0, 3.0] and call["word_buckets"][0].tolist() == [[0, 0, 0], [1, 1, 1]]
    assert call["word_buckets"][1].tolist() == [[0, 0, 0]] and np.array_equal(call["va"], va)
