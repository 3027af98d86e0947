"""training/fit_turn_end_head.py: features at turn-end decisions read only the past of one channel."""
from __future__ import annotations

import json

import numpy as np
import soundfile as sf
import torch

from turneval.dataset_scripts.synthetic import generate_dialogue
from turneval.dataset_scripts.turn_end_decisions import turn_end_decisions
from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge
from turneval.training import fit_turn_end_head as fitter


TINY_WHISPER = {"d_model": 32, "encoder_layers": 3, "encoder_attention_heads": 2, "encoder_ffn_dim": 64, "max_source_positions": 1500}


def _encoder() -> TurnTakingJudge:
    torch.manual_seed(0)
    return TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="window", context_s=2.0)).eval()


def test_window_ends_at_the_decision_and_pads_the_start():
    channel = np.arange(16000 * 3, dtype=np.float32)
    window = fitter.decision_window(channel, 1.0, 2.0)
    assert window.shape == (1, 32000)
    assert (window[0, :16000] == 0).all() and window[0, -1].item() == 15999.0
    # an end off the 40 ms grid is rounded down: nothing after it is read
    assert fitter.decision_window(channel, 1.03, 2.0)[0, -1].item() == 15999.0


def test_features_do_not_see_audio_after_the_decision():
    encoder = _encoder()
    rng = np.random.default_rng(0)
    channel = (0.1 * rng.standard_normal(16000 * 4)).astype(np.float32)
    later = channel.copy()
    later[int(2.5 * 16000):] = 0.5  # change only what follows the decision at 2.5 s
    a = fitter.decision_features(encoder, fitter.decision_window(channel, 2.5, 2.0))
    b = fitter.decision_features(encoder, fitter.decision_window(later, 2.5, 2.0))
    assert a.shape == (3 * 32,)
    np.testing.assert_array_equal(a, b)
    c = fitter.decision_features(encoder, fitter.decision_window(later, 3.0, 2.0))
    assert not np.allclose(a, c)


def test_manifest_decisions_cover_every_turn_end_and_the_head_fits(tmp_path):
    lines, expected = [], []
    for seed in (3, 4):
        dialogue = generate_dialogue(seed, duration_s=20.0, style="human")
        sf.write(tmp_path / f"d{seed}.flac", dialogue.audio.T, 16000)
        lines.append(json.dumps({**dialogue.to_dict(), "audio_path": f"d{seed}.flac"}))
        expected += [int(d.shift) for d in turn_end_decisions(dialogue, fitter.DECISION_DELAY_S)]
    (tmp_path / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    x, y = fitter.manifest_decisions(_encoder(), tmp_path, 2.0)
    assert x.shape == (len(expected), 96) and y.tolist() == expected
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, 200)
    separable = rng.standard_normal((200, 5)) + 3.0 * labels[:, None]
    assert (fitter.fit_linear_head(separable, labels).predict(separable) == labels).mean() > 0.95


def test_manifests_share_one_cache_folder_without_overwriting(tmp_path):
    encoder = _encoder()
    for seed in (3, 4):
        folder = tmp_path / f"part{seed}"
        folder.mkdir()
        dialogue = generate_dialogue(seed, duration_s=20.0, style="human")
        sf.write(folder / "d.flac", dialogue.audio.T, 16000)
        (folder / "manifest.jsonl").write_text(json.dumps({**dialogue.to_dict(), "audio_path": "d.flac"}) + "\n")
    cache = tmp_path / "cache"
    first = [fitter.cached_decisions(encoder, tmp_path / f"part{s}", 2.0, cache, "train") for s in (3, 4)]
    assert len(list(cache.glob("train-*.npz"))) == 2 and not list(cache.glob("*.partial.npz"))
    assert first[0][0].shape != first[1][0].shape or not np.array_equal(first[0][0], first[1][0])
    # read back, not recomputed: an encoder with other weights would give other features
    other = TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="window", context_s=2.0)).eval()
    again = [fitter.cached_decisions(other, tmp_path / f"part{s}", 2.0, cache, "train") for s in (3, 4)]
    for (x, y), (x2, y2) in zip(first, again):
        np.testing.assert_array_equal(x, x2)
        np.testing.assert_array_equal(y, y2)
    # another window is another file
    fitter.cached_decisions(encoder, tmp_path / "part3", 1.0, cache, "train")
    assert len(list(cache.glob("train-*.npz"))) == 3
