"""benchmarks/experiments/turn_end_cue_predictor.py: a per-IPU turn-end cue, laid out for the look-ahead predictor."""
import sys
from pathlib import Path

import numpy as np
import pytest


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks" / "experiments"))

import turn_end_cue_predictor as experiment  # noqa: E402

from turneval.dataset_scripts.dialogue import Dialogue, Word  # noqa: E402


def test_the_cue_shows_in_the_ipus_last_second_and_stays_until_the_next_ipu():
    steps = experiment.cue_entries([(0.0, 3.0, 2.0), (3.5, 3.9, -8.0)], lookahead_s=1.0)
    # 0 from the first IPU's start, its cue 1 s before its end; the short second IPU shows its (clipped) cue at once
    assert steps == [(0.0, 0.0), (2.0, 2.0), (3.5, -6.0)]


@pytest.mark.parametrize("value", [-9.0, -6.0, -2.35, 0.0, 1.47, 5.96, 6.0])
def test_values_survive_the_trip_through_buckets(value):
    weights = experiment.bucket_weights()
    # a "word" reads three equal buckets and the bias (0)
    assert 3 * weights[experiment.value_bucket(value)] + weights[-1] == pytest.approx(np.clip(round(value, 1), -6, 6), abs=1e-5)
    assert experiment.value_bucket(value) not in (0, 1), "buckets 0 and 1 belong to the ceiling experiment"


def test_a_predictor_reads_the_cue_track_through_its_word_cue():
    from turneval.checkpoints import bundled_root
    from turneval.naturalness_inference import dialogue_words, load_predictor

    model = experiment.read_cue_values(load_predictor(str(bundled_root() / "future_activity_predictor_words")))
    dialogue = Dialogue("d", [[(0.0, 3.0)], [(3.4, 4.0)]], duration=6.0)
    track = model.vad_inputs(np.zeros((300, 2), np.float32), dialogue_words(experiment.with_cue(dialogue, [[(0.0, 3.0, 2.5)], [(3.4, 4.0, -1.0)]], 1.0)))
    assert np.all(track[:100, 2] == 0) and np.all(track[100:, 2] == pytest.approx(2.5)), "speaker A: from 1 s before the IPU's end on"
    assert np.all(track[:170, 3] == 0) and np.all(track[170:, 3] == pytest.approx(-1.0))


def test_an_ipu_takes_its_last_words_cue():
    units = experiment.ipu_truth([(0.0, 1.0), (1.1, 2.0), (3.0, 4.0), (5.0, 5.5)], [(2.3, 2.8)], 6.0)
    ipus = experiment.last_word_ipus(units, np.array([0.1, 0.6, 1.5, 3.2]), np.array([-3.0, -1.0, 2.0, -2.0]))
    assert ipus == [(0.0, 2.0, 2.0), (3.0, 4.0, -2.0), (5.0, 5.5, 0.0)], "gaps under 0.2 s merge; no words: 0"


def test_tags_carry_each_ipus_draw_from_the_natural_call():
    words = [[Word(0.0, 0.4, "so"), Word(0.5, 1.0, "yeah"), Word(3.0, 3.5, "right")], [Word(1.5, 2.0, "okay")]]
    dialogue = Dialogue("d", [[(0.0, 1.0), (3.0, 3.5)], [(1.5, 2.0)]], words=words, duration=5.0)
    tagged = experiment.tag_cues(dialogue, seed=3)
    first, second = (float(w.text.rsplit("|", 1)[1]) for w in tagged.words[0][1:])
    assert float(tagged.words[0][0].text.rsplit("|", 1)[1]) == first, "one draw per IPU"
    ipus = experiment.tagged_ipus(tagged)
    assert [v for _, _, v in ipus[0]] == pytest.approx([first, second], abs=1e-4)
    assert experiment.untag_words(tagged).words == dialogue.words


def test_calibration_summary_gives_the_mean_and_sd_per_truth():
    rows = [{"shift": True, "logit": 2.0}, {"shift": True, "logit": 4.0}, {"shift": False, "logit": -1.0}, {"shift": False, "logit": 3.0}]
    summary = experiment.calibration_summary(rows)
    assert summary["shift"] == [3.0, 1.0] and summary["hold"] == [1.0, 2.0]
    assert summary["roc_auc"] == 0.75 and summary["ipus"] == 4 and summary["shifts"] == 2


def test_the_cache_holds_one_drawn_cue_per_ipu(tmp_path):
    from turneval.training.switchboard_words import load_words, save_word_cache

    va = np.zeros((500, 2), np.int8)
    va[0:100, 0] = va[110:200, 0] = va[260:300, 1] = va[350:450, 0] = 1  # A: IPU 0-4 s (a 0.2 s gap), B answers, A again
    empty = (np.zeros(0, np.float32), np.zeros(0, np.float32), np.zeros((0, 3), np.int32))
    save_word_cache(tmp_path / "words.npz", [("c1", va, [empty, empty])])
    summary = experiment.write_cache(tmp_path / "words.npz", tmp_path / "cue.npz", "smart-turn", lookahead_s=1.0)
    assert summary["ipus"] == 4 and summary["shifts"] == 2
    (call,) = load_words(tmp_path / "cue.npz")
    assert np.array_equal(call["va"], va)
    # A's IPUs 0-2 s, 2.2-4 s (a 0.2 s gap ends one) and 7-9 s: 0 from each start, the cue from 1 s before each end
    starts = call["word_starts"][0]
    assert starts.tolist() == pytest.approx([0.0, 1.0, 2.2, 3.0, 7.0, 8.0])
    assert call["word_buckets"][0][0].tolist() == [experiment.value_bucket(0.0)] * 3


def test_the_gru_reads_the_words_before_the_unit_a_mark_and_the_units_words():
    starts, tokens = np.array([0.1, 0.6, 1.5, 3.2]), np.array([10, 11, 12, 13])
    seqs = experiment.gru_sequences(starts, tokens, [(0.0, 2.0, True), (3.0, 4.0, False), (5.0, 5.5, False)])
    mark, pad = experiment._MARK, experiment._PAD
    assert seqs.shape == (3, experiment.GRU_WORDS)
    assert seqs[0, -4:].tolist() == [mark, 10, 11, 12] and np.all(seqs[0, :-4] == pad)
    assert seqs[1, -5:].tolist() == [10, 11, 12, mark, 13]
    assert seqs[2, -1] == mark and np.all(seqs[2, :-1] == pad), "a unit without words is its mark alone"


def test_the_gru_learns_a_turn_final_word():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    x = rng.integers(0, 50, size=(512, experiment.GRU_WORDS))
    y = rng.random(512) < 0.5
    x[y, -1] = 7  # "right." ends the turn
    model = experiment.fit_gru(x, y, seed=0, epochs=8)
    assert roc_auc_score(y, experiment.gru_scores(model, x)) > 0.95
