"""TurnTakingJudge: front end, encoder, both context modes, streaming, save/load, bad input."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from transformers import AutoConfig, AutoModel, WhisperConfig, WhisperFeatureExtractor
from transformers.models.whisper.modeling_whisper import WhisperEncoder

import turneval  # noqa: F401  (registers the Auto classes)
from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
from turneval.modeling.judge_loading import JudgeCheckpointError, load_judge
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge, TurnTakingJudgeStream, causal_window_plan


SR = 16000
SPC = 640
TINY = {"d_model": 64, "encoder_layers": 2, "encoder_attention_heads": 4, "encoder_ffn_dim": 128, "max_source_positions": 1500}


def tiny_judge(mode: str = "causal", context_s: float = 2.0, seed: int = 0, **kwargs) -> TurnTakingJudge:
    torch.manual_seed(seed)
    model = TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY, context_mode=mode, context_s=context_s, **kwargs))
    # Random, non-uniform layer weights and head so that every part matters in the outputs.
    with torch.no_grad():
        model.layer_weights.normal_()
        model.classifier.weight.normal_(std=0.5)
    return model.eval()


def speechlike(seconds: float, seed: int = 0) -> np.ndarray:
    """Vowel-like bursts: harmonics of a gliding f0 under a syllable-rate envelope, with pauses."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    f0 = 120 + 30 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / SR
    voice = sum(np.sin(k * phase) / k for k in range(1, 12))
    envelope = np.clip(np.sin(2 * np.pi * 3.5 * t), 0, None) * (np.sin(2 * np.pi * 0.3 * t) > -0.3)
    return (0.3 * voice * envelope + 0.003 * rng.standard_normal(t.size)).astype(np.float32)


def test_log_mel_matches_whisper_feature_extractor():
    model = tiny_judge(mode="window")
    audio = speechlike(30.0)
    expected = WhisperFeatureExtractor(feature_size=80)(audio, sampling_rate=SR, return_tensors="np").input_features[0]
    ours = model.log_mel(torch.from_numpy(audio)[None], causal=False)[0].numpy()
    assert ours.shape == expected.shape == (80, 3000)
    np.testing.assert_allclose(ours, expected, atol=2e-4)


def test_encoder_parts_equal_transformers_whisper_encoder():
    model = tiny_judge(mode="window")
    reference = WhisperEncoder(WhisperConfig(**TINY)).eval()
    reference.load_state_dict(model.encoder.state_dict())
    features = model.log_mel(torch.from_numpy(speechlike(30.0))[None], causal=False)
    with torch.no_grad():
        expected = reference(features).last_hidden_state
        ours = model.encoder(features, causal=False)[-1]
    torch.testing.assert_close(ours, expected, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("mode", ["window", "causal"])
def test_no_leakage_after_chunk_end(mode):
    """Changing audio after the end of chunk t leaves the prediction for chunk t+1 unchanged."""
    model = tiny_judge(mode=mode, context_s=1.2, stream_hop_s=0.4)
    audio = speechlike(2.0)
    base = model.score(audio).probabilities
    for t in (3, 37):  # inside the first window, and in later overlapping windows
        changed = audio.copy()
        rng = np.random.default_rng(t)
        changed[(t + 1) * SPC :] = rng.standard_normal(changed.size - (t + 1) * SPC).astype(np.float32)
        probs = model.score(changed).probabilities
        np.testing.assert_allclose(probs[: t + 1], base[: t + 1], atol=1e-5)  # row t: chunk t + 1
        assert np.abs(probs[t + 1 :] - base[t + 1 :]).max() > 1e-4  # later predictions see the change


def test_causal_pass_equals_prefix_passes():
    """One causal pass scores every chunk: prediction t equals a pass over the first t+1 chunks."""
    model = tiny_judge(mode="causal")
    audio = torch.from_numpy(speechlike(1.0))[None]
    with torch.no_grad():
        full = model(input_values=audio).probabilities[0]
        for t in (0, 7, 24):
            prefix = model(input_values=audio[:, : (t + 1) * SPC]).probabilities[0]
            torch.testing.assert_close(prefix[t], full[t], atol=1e-5, rtol=1e-5)
    assert full.shape == (25, 5)


def test_window_scores_equal_direct_windows():
    model = tiny_judge(mode="window", context_s=0.8)
    audio = speechlike(2.0)
    probs = model.score(audio, batch_size=7).probabilities
    assert probs.shape == (50, 5) and np.isfinite(probs).all()
    t = 30  # window ends at the end of chunk t, predicts chunk t + 1
    window = torch.from_numpy(audio[(t + 1) * SPC - 20 * SPC : (t + 1) * SPC])[None]
    with torch.no_grad():
        direct = model(input_values=window).probabilities[0, -1].numpy()
    np.testing.assert_allclose(probs[t], direct, atol=1e-5)
    # Before 0.8 s of audio exist the window is left-padded with silence.
    early = np.concatenate([np.zeros(16 * SPC, np.float32), audio[: 4 * SPC]])
    with torch.no_grad():
        direct = model(input_values=torch.from_numpy(early)[None]).probabilities[0, -1].numpy()
    np.testing.assert_allclose(probs[3], direct, atol=1e-5)


def test_causal_window_plan_covers_each_chunk_once():
    for n in (1, 5, 20, 21, 57):
        plan = causal_window_plan(n, context_chunks=10, hop_chunks=4)
        covered = [t for s, e, keep in plan for t in range(keep, e)]
        assert covered == list(range(n))
        assert all(e - s <= 10 and s <= keep for s, e, keep in plan)


@pytest.mark.parametrize("incremental", [True, False])
def test_stream_equals_offline_causal(incremental):
    model = tiny_judge(mode="causal", context_s=1.2, stream_hop_s=0.4)
    audio = speechlike(2.6, seed=3)
    offline = model.score(audio).probabilities
    stream = TurnTakingJudgeStream(model, incremental=incremental)
    rng = np.random.default_rng(0)
    indices, rows, pos = [], [], 0
    while pos < audio.size:
        size = int(rng.integers(1, 2500))
        idx, probs = stream.push(audio[pos : pos + size])
        indices.append(idx)
        rows.append(probs)
        pos += size
    indices, rows = np.concatenate(indices), np.concatenate(rows)
    n = offline.shape[0]
    assert list(indices) == list(range(n))  # one prediction per completed chunk
    np.testing.assert_allclose(rows, offline, atol=1e-5)
    with pytest.raises(ValueError, match="causal"):
        TurnTakingJudgeStream(tiny_judge(mode="window"))


def test_loss_with_last_chunk_and_all_chunk_labels():
    model = tiny_judge(mode="causal").train()
    audio = torch.from_numpy(speechlike(0.4))[None].repeat(2, 1)
    out = model(input_values=audio, labels=torch.tensor([3, 1]))
    assert out.loss.ndim == 0 and torch.isfinite(out.loss)
    labels = torch.randint(0, 5, (2, 10))
    labels[0, :4] = -100
    out = model(input_values=audio, labels=labels)
    out.loss.backward()
    assert model.layer_weights.grad is not None and model.classifier.weight.grad.abs().sum() > 0
    np.testing.assert_allclose(out.chunk_times.numpy(), np.arange(1, 11) * 0.04, atol=1e-6)
    window = tiny_judge(mode="window")(input_values=audio, attention_mask=torch.ones_like(audio))
    assert window.logits.shape == (2, 1, 5) and float(window.chunk_times[0]) == pytest.approx(0.4)


def test_frozen_backbone_trains_only_head_and_layer_weights():
    model = tiny_judge()
    model.freeze_backbone(True)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {"layer_weights", "classifier.weight", "classifier.bias"}
    model.freeze_backbone(False)
    assert "encoder.layers.0.fc1.weight" in {n for n, p in model.named_parameters() if p.requires_grad}


@pytest.mark.parametrize(
    "audio, sample_rate, message",
    [
        (np.zeros(600, np.float32) + 0.1, SR, "too short"),
        (np.zeros(SR, np.float32), SR, "silent"),
        (speechlike(1.0), 8000, "16000 Hz"),
        (np.full(SR, np.nan, np.float32), SR, "NaN"),
        (np.ones((5, 5, 5), np.float32), SR, "mono"),
    ],
)
def test_bad_audio_gives_clear_errors(audio, sample_rate, message):
    with pytest.raises(ValueError, match=message):
        tiny_judge().score(audio, sample_rate=sample_rate)


def test_stereo_is_mixed_to_mono():
    model = tiny_judge()
    stereo = np.stack([speechlike(1.0, 1), speechlike(1.0, 2)])
    np.testing.assert_allclose(model.score(stereo).probabilities, model.score(stereo.mean(0)).probabilities, atol=1e-6)


def test_forward_rejects_partial_chunks():
    with pytest.raises(ValueError, match="whole number"):
        tiny_judge()(input_values=torch.zeros(1, 1000))


@pytest.fixture(scope="module")
def saved_judge(tmp_path_factory):
    model = tiny_judge(mode="causal", context_s=1.2)
    folder = tmp_path_factory.mktemp("judge")
    model.save_pretrained(folder)
    audio = speechlike(2.0)
    return model, folder, audio, model.score(audio).probabilities


def test_save_load_round_trips(saved_judge):
    model, folder, audio, expected = saved_judge
    assert (folder / "model.safetensors").is_file() and not list(folder.glob("*.bin"))
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "turn_taking_judge" and "AutoModel" in config["auto_map"]
    assert isinstance(AutoConfig.from_pretrained(folder), TurnTakingJudgeConfig)
    for loaded in (AutoModel.from_pretrained(folder), TurnTakingJudge.from_pretrained(folder), load_judge(folder)):
        assert isinstance(loaded, TurnTakingJudge)
        np.testing.assert_array_equal(loaded.eval().score(audio).probabilities, expected)


def test_trust_remote_code_in_fresh_process(saved_judge, tmp_path):
    _, folder, audio, expected = saved_judge
    np.save(tmp_path / "audio.npy", audio)
    script = (
        "import sys, numpy as np, torch\n"
        "from transformers import AutoModel\n"
        f"m = AutoModel.from_pretrained({str(folder)!r}, trust_remote_code=True).eval()\n"
        "assert not any(k == 'turneval' or k.startswith('turneval.') for k in sys.modules), 'turneval was imported'\n"
        f"p = m.score(np.load({str(tmp_path / 'audio.npy')!r})).probabilities\n"
        f"np.save({str(tmp_path / 'out.npy')!r}, p)\n"
        "print(type(m).__module__)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules")}
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "transformers_modules" in result.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), expected)


def test_damaged_checkpoints_give_clear_errors(saved_judge, tmp_path):
    _, folder, _, _ = saved_judge
    import shutil

    missing = tmp_path / "missing"
    shutil.copytree(folder, missing)
    (missing / "model.safetensors").unlink()
    with pytest.raises(JudgeCheckpointError, match="model.safetensors is missing"):
        load_judge(missing)
    corrupt = tmp_path / "corrupt"
    shutil.copytree(folder, corrupt)
    data = (corrupt / "model.safetensors").read_bytes()
    (corrupt / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(JudgeCheckpointError, match="damaged"):
        load_judge(corrupt)
    bad_config = tmp_path / "bad_config"
    shutil.copytree(folder, bad_config)
    (bad_config / "config.json").write_text('{"model_type": "turn_taking_judge",\n oops}')
    with pytest.raises(JudgeCheckpointError, match="config.json:2"):
        load_judge(bad_config)
    with pytest.raises(JudgeCheckpointError, match="does not exist"):
        load_judge(tmp_path / "nowhere")


def test_compact_checkpoint_is_lossless(saved_judge, tmp_path):
    import shutil

    from turneval.modeling.judge_loading import compact_checkpoint

    model, folder, audio, expected = saved_judge
    copy = tmp_path / "compact"
    shutil.copytree(folder, copy)
    with torch.no_grad():  # weights that fp16 holds exactly, as in a converted fp16 backbone
        model_half = TurnTakingJudge.from_pretrained(copy)
        for param in model_half.encoder.parameters():
            param.copy_(param.half().float())
    model_half.save_pretrained(copy)
    before = (copy / "model.safetensors").stat().st_size
    after = compact_checkpoint(copy)
    assert after < 0.6 * before
    reloaded = load_judge(copy)
    assert all(p.dtype == torch.float32 for p in reloaded.parameters())
    for (name, a), b in zip(model_half.state_dict().items(), reloaded.state_dict().values()):
        assert torch.equal(a, b), name


def test_config_validation():
    with pytest.raises(ValueError, match="context_mode"):
        TurnTakingJudgeConfig(context_mode="bidirectional")
    with pytest.raises(ValueError, match="whole number"):
        TurnTakingJudgeConfig(context_s=1.01)
    with pytest.raises(ValueError, match="exceeds"):
        TurnTakingJudgeConfig(context_s=40.0)
    config = TurnTakingJudgeConfig()
    assert config.id2label[3] == "T" and config.context_chunks == 750 and config.hop_chunks == 375


def test_demo_checkpoint_loads_and_scores():
    from turneval.checkpoints import bundled_checkpoint

    folder = bundled_checkpoint("judge")
    assert folder is not None and (folder / "model.safetensors").stat().st_size < 40e6
    judge = load_judge()
    assert judge.config.context_mode == "causal" and all(p.dtype == torch.float32 for p in judge.parameters())
    probs = judge.score(speechlike(2.0)).probabilities
    assert probs.shape == (50, 5) and np.isfinite(probs).all()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
