"""The look-ahead FutureActivityPredictor (``vad_features="timing+ends"``): what it reads of each
speaker's future activity, that it reads no further, that long inputs stream to the same result,
and that its warm start predicts what the voice-activity predictor predicts."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.test_vap_targets import random_runs
from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel, speech_end_lookahead
from turneval.training.warm_start import widen_timing_predictor


TINY = dict(input_type="vad", vad_features="timing+ends", end_lookahead_s=0.2, hidden_size=16, num_attention_heads=2,
            conv_layers=2, conv_kernel_size=3, num_channel_layers=1, num_cross_layers=1, max_context_frames=200)


def ends_model(seed: int = 0, **fields) -> FutureActivityPredictorModel:
    torch.manual_seed(seed)
    model = FutureActivityPredictorModel(FutureActivityPredictorConfig(**{**TINY, **fields})).eval()
    with torch.no_grad():
        model.encoder.proj.weight[:, -2:] = 2.0  # the end inputs count
    return model


def random_activity(frames: int, seed: int = 0) -> np.ndarray:
    """[frames, 2] 0/1 float activity of random runs."""
    return random_runs(frames, seed).astype(np.float32)


def test_the_end_input_ramps_up_over_the_last_frames_of_each_stretch():
    x = torch.tensor([[0, 1, 1, 1, 1, 1, 0, 0, 1, 1]], dtype=torch.float32)
    got = speech_end_lookahead(x, 4).numpy()[0]
    # the stretch 1-5 ends at frame 6: 4 frames ahead is 0, then 0.25, 0.5, 0.75 on its last frames;
    # silence reads 0, and so does the stretch that runs past the input's end (its end is unknown)
    np.testing.assert_allclose(got, [0, 0, 0, 0.25, 0.5, 0.75, 0, 0, 0, 0])


def test_the_model_reads_no_further_than_its_look_ahead():
    model = ends_model()
    lookahead = model.lookahead_frames
    assert lookahead == 10
    va = random_activity(300)
    t = 150
    va[t - 20 : t + 30, 0] = 1.0  # speaker 0 talks on past the look-ahead of frame t
    changed = va.copy()
    changed[t + lookahead + 1 :] = 1.0 - changed[t + lookahead + 1 :]
    with torch.no_grad():
        a = model(voice_activity=torch.from_numpy(va)[None]).logits[0, : t + 1]
        b = model(voice_activity=torch.from_numpy(changed)[None]).logits[0, : t + 1]
    torch.testing.assert_close(a, b)
    # ...but it does read that far: a stretch's end inside the look-ahead changes the output before it
    earlier = va.copy()
    earlier[t + 3 : t + 30, 0] = 0.0  # ...or stops 3 frames after t
    with torch.no_grad():
        c = model(voice_activity=torch.from_numpy(earlier)[None]).logits[0, : t + 1]
    assert (a - c).abs().max() > 1e-3


def test_streaming_a_long_input_gives_the_whole_input_result():
    # every frame is taken from a window with 25 s of its history (the timing features read 20 s)
    # and, read past the window's end, its look-ahead
    model = ends_model(stream_window_s=30.0, stream_context_s=25.0, max_context_frames=100, end_lookahead_s=1.0)
    va = torch.from_numpy(random_activity(3000, seed=3))
    with torch.no_grad():
        whole = model(voice_activity=va[None]).probs[0]
    torch.testing.assert_close(model.predict_long(va), whole, atol=1e-6, rtol=1e-4)


def test_the_warm_start_predicts_what_the_voice_activity_predictor_predicts(tmp_path):
    torch.manual_seed(1)
    base = FutureActivityPredictorModel(FutureActivityPredictorConfig(**{**TINY, "vad_features": "timing"})).eval()
    base.save_pretrained(tmp_path / "base")
    model, state = widen_timing_predictor(tmp_path / "base", "timing+ends", end_lookahead_s=0.5)
    model.load_state_dict(state, strict=True)
    model.eval()
    assert model.config.vad_features == "timing+ends" and model.lookahead_frames == 25
    va = torch.from_numpy(random_activity(200, seed=2))[None]
    with torch.no_grad():
        torch.testing.assert_close(model(voice_activity=va).probs, base(voice_activity=va).probs)
    with pytest.raises(ValueError, match="timing"):
        widen_timing_predictor(tmp_path / "base", "activity")


def test_configuration_checks_the_look_ahead():
    with pytest.raises(ValueError, match="end_lookahead_s"):
        FutureActivityPredictorConfig(**{**TINY, "end_lookahead_s": 0.0})
    assert FutureActivityPredictorModel(FutureActivityPredictorConfig(**{**TINY, "vad_features": "timing"})).lookahead_frames == 0
