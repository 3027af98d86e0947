"""turneval.naturalness_inference: scoring whole dialogues with a FutureActivityPredictor."""
import numpy as np
import pytest
import soundfile as sf

from turneval.dataset_scripts.dialogue import Dialogue, DialogueError
from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel
from turneval.naturalness_inference import NaturalnessUndefinedWarning, load_predictor, score_dialogue


TINY = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64, num_channel_layers=0, num_cross_layers=1)


@pytest.fixture(scope="module")
def vad_model():
    return FutureActivityPredictorModel(FutureActivityPredictorConfig(input_type="vad", **TINY)).eval()


def test_scores_a_dialogue_with_units(vad_model):
    d = Dialogue(id="d", segments=[[(0.5, 4.0), (9.0, 12.0)], [(4.2, 8.8)]], duration=14.0)
    result = score_dialogue(d, vad_model)
    assert result.is_defined and np.isfinite(result.score) and result.num_units > 0


def test_no_units_is_undefined_and_says_so(vad_model):
    d = Dialogue(id="quiet", segments=[[], []], duration=3.2)
    with pytest.warns(NaturalnessUndefinedWarning, match="quiet"):
        result = score_dialogue(d, vad_model)
    assert not result.is_defined and np.isnan(result.score)


def test_mono_audio_is_refused_with_the_fix(tmp_path):
    model = FutureActivityPredictorModel(FutureActivityPredictorConfig(**TINY)).eval()
    mono = tmp_path / "mono.wav"
    sf.write(mono, np.zeros(16000 * 5, dtype=np.float32), 16000)
    d = Dialogue(id="m", segments=[[(0.5, 2.0)], []], audio_path=str(mono), duration=5.0)
    with pytest.raises(DialogueError, match="channel"):
        score_dialogue(d, model)


def test_missing_checkpoint_is_explained(tmp_path):
    with pytest.raises(FileNotFoundError, match="checkpoint"):
        load_predictor(tmp_path / "nothing")
