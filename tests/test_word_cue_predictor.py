"""The word-reading FutureActivityPredictor (``vad_features="timing+words"``): its word cue, the
Switchboard words it is fitted and trained on, and scoring a dialogue with and without words."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from turneval.dataset_scripts.dialogue import Dialogue, Word
from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
from turneval.modeling.modeling_future_activity_predictor import (
    FutureActivityPredictorModel,
    hash_bucket,
    normalize_word,
    word_buckets,
    word_cue_keys,
    word_cue_track,
)
from turneval.training.future_activity_data import FutureActivityWindows, WindowConfig
from turneval.training.switchboard_words import init_checkpoint, speech_stops, word_examples


TINY = dict(input_type="vad", vad_features="timing+words", hidden_size=16, num_attention_heads=2, conv_layers=2,
            conv_kernel_size=3, num_channel_layers=0, num_cross_layers=0, word_cue_buckets=64)


def words_model(seed: int = 0) -> FutureActivityPredictorModel:
    torch.manual_seed(seed)
    model = FutureActivityPredictorModel(FutureActivityPredictorConfig(**TINY)).eval()
    with torch.no_grad():  # a cue that says "stops here" after "thanks", "goes on" elsewhere
        model.word_cue.weights.zero_()
        model.word_cue.weights[hash_bucket("last1=thanks", 64)] = 3.0
        model.word_cue.weights[-1] = -1.0
        model.encoder.proj.weight[:, -2:] = 1.0  # the cue inputs count
    return model


def test_words_are_read_as_the_cue_reads_them():
    assert [normalize_word(w) for w in ["Thanks.", "[laughter]", "th[e]-", "<noise>", "don't", "?"]] == \
        ["thanks", None, "<partial>", None, "don't", None]
    assert word_cue_keys(["a", "b", "c"])[2] == ("last1=c", "last2=b c", "last3=a b c")
    assert word_cue_keys(["a"])[0] == ("last1=a", "last2=a", "last3=a")
    assert hash_bucket("last1=thanks", 64) == hash_bucket("last1=thanks", 64) < 64


def test_each_word_is_read_from_its_start_until_the_next_word():
    track = word_cue_track(100, [np.array([0.2, 0.5]), np.array([])], [np.array([1.0, 9.0]), np.array([])], frame_hz=50)
    assert (track[:10, 0] == 0).all() and (track[10:25, 0] == 1.0).all()
    assert (track[25:, 0] == 6.0).all()  # clipped: a cue is evidence, not certainty
    assert not track[:, 1].any()


def test_vad_inputs_carry_the_cue_and_none_without_words():
    model = words_model()
    va = np.zeros((150, 2), np.float32)
    va[10:60, 0] = 1
    words = [[(0.2, 0.6, "okay"), (0.8, 1.2, "thanks")], []]
    x = model.vad_inputs(va, words)
    assert x.shape == (150, 4) and np.array_equal(x[:, :2], va)
    assert x[30, 2] == pytest.approx(-1.0) and x[45, 2] == pytest.approx(2.0)  # "okay", then "thanks"
    assert not model.vad_inputs(va, None)[:, 2:].any()
    with pytest.raises(ValueError, match=r"\[batch, frames, 4\]"):
        model(voice_activity=torch.from_numpy(va)[None])


def test_the_word_model_is_causal_and_its_cue_weights_survive_saving(tmp_path):
    model = words_model()
    va = np.zeros((200, 2), np.float32)
    va[10:80, 0] = 1
    early = model.vad_inputs(va, [[(0.2, 1.0, "okay")], []])
    late = model.vad_inputs(va, [[(0.2, 1.0, "okay"), (1.2, 1.5, "thanks")], []])
    a = model(voice_activity=torch.from_numpy(early)[None]).probs[0]
    b = model(voice_activity=torch.from_numpy(late)[None]).probs[0]
    assert torch.equal(a[:60], b[:60]) and not torch.allclose(a[60:], b[60:])  # "thanks" starts at frame 60
    model.save_pretrained(tmp_path)
    again = FutureActivityPredictorModel.from_pretrained(tmp_path).eval()
    assert torch.equal(again.word_cue.weights, model.word_cue.weights) and again.reads_words


def _call(va: np.ndarray, words: list[list[tuple[float, float, str]]], n_buckets: int = 64) -> dict:
    buckets = [word_buckets([w[2] for w in side], n_buckets)[1] for side in words]
    return {"id": "x", "va": va.astype(np.int8), "word_starts": [np.array([w[0] for w in side]) for side in words],
            "word_ends": [np.array([w[1] for w in side]) for side in words], "word_buckets": buckets}


def test_stops_and_word_labels_say_who_speaks_next():
    va = np.zeros((300, 2), np.int8)
    va[0:50, 0] = 1  # A: "so and" ... pause ... "that's it"
    va[70:120, 0] = 1  # 400 ms later A goes on: a hold
    va[150:200, 1] = 1  # then B: a shift
    call = _call(va, [[(0.0, 0.5, "so"), (0.6, 1.0, "and"), (1.4, 1.9, "that's"), (2.0, 2.4, "it")], [(3.0, 4.0, "right")]])
    stops = speech_stops(va, call["word_ends"])
    assert (0, 50, 70, 1) in stops and (0, 120, 300, 3) in stops
    _, labels, kinds = word_examples([call])
    assert labels.tolist() == [0, 0, 0, 1, 0] and kinds.tolist() == [0, 2, 0, 1, 2]  # B's last stop: nobody speaks again


def test_training_windows_give_the_cue_on_the_crop_clock(tmp_path):
    rng = np.random.default_rng(0)
    va = np.repeat(rng.integers(0, 2, (300, 2)), 10, axis=0).astype(np.int8)  # 60 s, a pattern no crop repeats
    texts = ["okay", "thanks"]
    words = [[(0.5 * k, 0.5 * k + 0.4, texts[k % 2]) for k in range(120)], [(7.0, 7.5, "sure")]]
    call = _call(va, words)
    model = words_model()
    config = WindowConfig(window_s=10.0, channel_swap_p=0.0, mask_p=0.0)
    windows = FutureActivityWindows.from_voice_activity([va], config, draws=6, seed=1).with_words([call], model.word_cue)
    logits = [np.array([2.0 if k % 2 else -1.0 for k in range(120)]), np.array([-1.0])]
    for i in range(6):
        x = windows[i]["voice_activity"].numpy()
        assert x.shape == (500, 4)
        padded = np.concatenate([va, np.zeros((500, 2), np.int8)])  # a crop may run past the end of the call
        matches = np.flatnonzero(np.all(np.lib.stride_tricks.sliding_window_view(padded, (500, 2))[:, 0] == x[:, :2], axis=(1, 2)))
        assert matches.size == 1
        start_s = matches[0] / 50
        expected = word_cue_track(500, [np.array([w[0] for w in side]) - start_s for side in words], logits, 50)
        assert np.allclose(x[:, 2:], expected)
    dropped = FutureActivityWindows.from_voice_activity([va], WindowConfig(window_s=10.0, word_dropout_p=1.0), draws=2, seed=1)
    assert not dropped.with_words([call], model.word_cue)[0]["voice_activity"][:, 2:].any()
    with pytest.raises(ValueError, match="word_cue_buckets"):
        windows.with_words([_call(va, words, n_buckets=65536)], model.word_cue)


def test_init_checkpoint_starts_as_the_voice_activity_model(tmp_path):
    torch.manual_seed(1)
    base_config = FutureActivityPredictorConfig(**{**TINY, "vad_features": "timing"})
    base = FutureActivityPredictorModel(base_config).eval()
    base.save_pretrained(tmp_path / "base")
    weights = np.linspace(-1, 1, 64 + 1).astype(np.float32)
    init = FutureActivityPredictorModel.from_pretrained(init_checkpoint(tmp_path / "base", weights, tmp_path / "init")).eval()
    assert init.reads_words and np.allclose(init.word_cue.weights.numpy(), weights)
    va = np.random.default_rng(0).integers(0, 2, (120, 2)).astype(np.float32)
    words = [[(0.1, 0.5, "thanks")], [(1.0, 1.4, "sure")]]
    with torch.no_grad():
        expected = base(voice_activity=torch.from_numpy(va)[None]).probs
        got = init(voice_activity=torch.from_numpy(init.vad_inputs(va, words))[None]).probs
    assert torch.allclose(expected, got)  # the cue inputs start at weight 0


def test_init_checkpoint_from_a_lookahead_model_reads_words_and_ends_and_starts_as_it(tmp_path):
    torch.manual_seed(2)
    base = FutureActivityPredictorModel(FutureActivityPredictorConfig(**{**TINY, "vad_features": "timing+ends", "end_lookahead_s": 0.4})).eval()
    with torch.no_grad():  # end inputs that matter, so a misplaced column would show
        base.encoder.proj.weight[:, -2:] = torch.randn_like(base.encoder.proj.weight[:, -2:])
    base.save_pretrained(tmp_path / "base")
    init = FutureActivityPredictorModel.from_pretrained(init_checkpoint(tmp_path / "base", np.ones(65, np.float32), tmp_path / "init")).eval()
    assert (init.config.vad_features, init.lookahead_frames, init.reads_words) == ("timing+words+ends", 20, True)
    va = np.random.default_rng(3).integers(0, 2, (150, 2)).astype(np.float32)
    va[40:90, 0] = 1
    words = [[(0.1, 0.5, "thanks"), (0.9, 1.7, "so")], [(1.0, 1.4, "sure")]]
    with torch.no_grad():
        expected = base(voice_activity=torch.from_numpy(va)[None]).probs
        got = init(voice_activity=torch.from_numpy(init.vad_inputs(va, words))[None]).probs
    assert torch.allclose(expected, got, atol=1e-6)  # word inputs at weight 0, the end inputs where they were


def test_score_dialogue_reads_the_words_when_the_dialogue_has_them():
    from turneval.naturalness_inference import dialogue_words, score_dialogue

    model = words_model()
    segments = [[(0.5, 2.0), (6.0, 7.5)], [(2.3, 4.0), (8.0, 9.5)]]
    words = [[Word(0.5, 1.0, "okay"), Word(1.2, 2.0, "thanks"), Word(6.0, 7.5, "thanks")], [Word(2.3, 4.0, "sure"), Word(8.0, 9.5, "bye")]]
    with_words = Dialogue("w", segments, words=words, duration=12.0)
    without = Dialogue("n", segments, duration=12.0)
    assert dialogue_words(without) is None and dialogue_words(with_words)[0][1] == (1.2, 2.0, "thanks")
    assert score_dialogue(with_words, model).score != score_dialogue(without, model).score
