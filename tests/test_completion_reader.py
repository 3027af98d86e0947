"""The completion reader: Whisper's turn-completion cue through an 8 s window (modeling_completion_reader)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from turneval.modeling.modeling_completion_reader import (
    CompletionReader,
    CompletionReaderConfig,
    _head_module,
    valid_positions,
)
from turneval.pause_decision import completion_cue
from turneval.pause_decision.features import COMPLETION_READER_ENV_VAR, PauseDecisionError, load_cue_reader


torch = pytest.importorskip("torch")
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_config_round_trip_and_derived_sizes(tmp_path):
    config = CompletionReaderConfig(window_s=6.0, tail_s=0.3, hidden=32)
    config.save(tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["model_type"] == "whisper_completion_reader"
    back = CompletionReaderConfig.load(tmp_path)
    assert back == config and (back.positions, back.tail_frames) == (300, 15)
    with pytest.raises(FileNotFoundError, match="distill_completion_reader"):
        CompletionReaderConfig.load(tmp_path / "nope")


def test_valid_positions_count_the_clip_not_the_padding():
    assert [valid_positions(n, 400) for n in (0, 1, 320, 321, 16000 * 8, 16000 * 30)] == [1, 1, 1, 2, 400, 400]


def test_the_head_never_reads_past_a_clip():
    torch.manual_seed(0)
    head = _head_module(CompletionReaderConfig()).eval()
    torch.nn.init.normal_(head.query)  # a trained head's query is not zero
    states = torch.randn(1, 400, 384).repeat(2, 1, 1)
    states[1, 120:] = torch.randn(280, 384) * 50  # what follows the clip differs between the rows
    with torch.no_grad():
        same = head(states, torch.tensor([120, 120]))
        longer = head(states, torch.tensor([120, 121]))
    assert float(same[0]) == pytest.approx(float(same[1]), abs=1e-5)
    assert abs(float(longer[0]) - float(longer[1])) > 1e-3  # one position more is read


@pytest.fixture(scope="module")
def reader_folder(tmp_path_factory):
    """A completion reader with a head of seeded random weights (none ships), saved as a checkpoint."""
    torch.manual_seed(0)
    reader = CompletionReader()
    torch.nn.init.normal_(reader.head.query)
    folder = tmp_path_factory.mktemp("completion_reader")
    reader.save(folder)
    return folder


def test_a_saved_reader_reads_speech_and_leaves_silence_unread(reader_folder):
    from turneval.dataset_scripts.audio import load_audio

    reader = CompletionReader(reader_folder)
    audio = load_audio(EXAMPLES / "human_like.wav")[0]
    clips = [audio[0, : 16000 * 5], np.zeros(16000 * 3, np.float32), audio[1, 16000 * 2 : 16000 * 14]]
    values = reader.logits(clips)
    assert np.isfinite(values[[0, 2]]).all() and np.isnan(values[1])
    # a clip's value does not depend on the clips read beside it
    alone = reader.logits(clips[2:])
    assert alone[0] == pytest.approx(values[2], abs=1e-3)
    (reader_folder / "model.safetensors").rename(reader_folder / "moved.safetensors")
    try:
        with pytest.raises(FileNotFoundError, match="head weights are missing"):
            CompletionReader(reader_folder)
    finally:
        (reader_folder / "moved.safetensors").rename(reader_folder / "model.safetensors")


def test_the_reader_of_completion_reader_logit_comes_from_the_environment(reader_folder, monkeypatch):
    monkeypatch.delenv(COMPLETION_READER_ENV_VAR, raising=False)
    with pytest.raises(PauseDecisionError, match="no completion reader ships"):
        load_cue_reader("completion_reader_logit")
    monkeypatch.setenv(COMPLETION_READER_ENV_VAR, str(reader_folder))
    assert isinstance(load_cue_reader("completion_reader_logit"), CompletionReader)


def test_cue_names_and_readers():
    assert completion_cue(["log_silence_s"]) is None
    with pytest.raises(PauseDecisionError, match="twice"):
        completion_cue(["completion_reader_logit", "whisper_complete_logit"])
    with pytest.raises(PauseDecisionError, match="not a turn-completion cue"):
        load_cue_reader("turn_end_logit")


def test_a_rule_may_not_read_both_cues():
    from turneval.modeling.configuration_turn_taking_judge import PauseRule, TurnTakingJudgeConfig

    both = PauseRule.from_dict({"features": ["completion_reader_logit", "whisper_complete_logit"], "weight": [1.0, 1.0], "bias": 0.0}, "pause_decision")
    with pytest.raises(ValueError, match="one cue read two ways"):
        TurnTakingJudgeConfig(pause_decision=both)
    fallback = PauseRule.from_dict({"features": ["completion_reader_logit"], "weight": [1.0], "bias": 0.0}, "pause_decision_fallback")
    with pytest.raises(ValueError, match="pause_decision_fallback may not read"):
        TurnTakingJudgeConfig(pause_decision_fallback=fallback)
