"""Whisper tiny.en ASR converted offline (encoder + decoder + tokenizer) and the transcription module."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.test_whisper_conversion import _ESPEAK_SCRIPT
from turneval.dataset_scripts.dialogue import Dialogue, Word
from turneval.modeling.whisper_asr import (
    build_tokenizer,
    convert_ctranslate2_whisper,
    ctranslate2_to_whisper_decoder,
    whisper_asr_folder,
)
from turneval.modeling.whisper_conversion import (
    WhisperConversionError,
    bundled_ctranslate2_model,
    read_ctranslate2_model,
)
from turneval.transcribe import WhisperTranscriber, snap_words, speech_windows, transcribe_dialogue, word_error_rate


SR = 16000
SENTENCE = "Well, I think we should go to the lake this weekend, don't you?"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return convert_ctranslate2_whisper(cache=tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def transcriber(folder):
    import torch

    torch.set_num_threads(2)
    return WhisperTranscriber(folder, precision="float32")  # the same words on every machine; bfloat16: its own test


@pytest.fixture(scope="module")
def sentence(tmp_path_factory) -> np.ndarray:
    path = tmp_path_factory.mktemp("speech") / "sentence.npy"
    subprocess.run([sys.executable, "-c", _ESPEAK_SCRIPT, str(path)], check=True, timeout=60)
    return np.load(path)


# ------------------------------------------------------------------------- conversion
def test_decoder_mapping_splits_fused_projections():
    variables = read_ctranslate2_model(bundled_ctranslate2_model(), prefix="decoder/")
    state, config = ctranslate2_to_whisper_decoder(variables)
    assert config == {"vocab_size": 51864, "decoder_layers": 4, "decoder_attention_heads": 6, "decoder_ffn_dim": 1536, "max_target_positions": 448}
    fused = variables["decoder/layer_2/self_attention/linear_0/weight"].astype(np.float32)
    np.testing.assert_array_equal(state["layers.2.self_attn.k_proj.weight"], fused[384:768])
    cross = variables["decoder/layer_2/attention/linear_1/weight"].astype(np.float32)
    np.testing.assert_array_equal(state["layers.2.encoder_attn.v_proj.weight"], cross[384:])
    # Whisper's key projections have no bias: CTranslate2 stores zeros there, dropped by the split.
    assert not variables["decoder/layer_0/self_attention/linear_0/bias"][384:768].any()
    assert not variables["decoder/layer_0/attention/linear_1/bias"][:384].any()
    assert "layers.0.self_attn.k_proj.bias" not in state


def test_converted_folder_is_a_complete_hf_checkpoint(folder):
    from transformers import WhisperForConditionalGeneration, WhisperProcessor

    assert WhisperProcessor.from_pretrained(folder, local_files_only=True).feature_extractor.feature_size == 80
    model = WhisperForConditionalGeneration.from_pretrained(folder, local_files_only=True)
    assert model.proj_out.weight.data_ptr() == model.model.decoder.embed_tokens.weight.data_ptr()  # tied
    generation = json.loads((folder / "generation_config.json").read_text())
    assert generation["alignment_heads"] == [[1, 0], [2, 0], [2, 5], [3, 0], [3, 1], [3, 2], [3, 3], [3, 4]]
    assert generation["is_multilingual"] is False and generation["no_timestamps_token_id"] == 50362
    # a second call reuses the cache
    assert convert_ctranslate2_whisper(cache=folder.parent.parent) == folder


def test_the_vocabulary_projection_is_stored_transposed_and_stays_tied(transcriber):
    import torch

    model = transcriber.model
    weight = model.proj_out.weight
    assert weight is model.model.decoder.embed_tokens.weight  # still one parameter
    assert weight.shape[0] == model.config.vocab_size and weight.stride() == (1, weight.shape[0])
    rows = torch.randn(5, weight.shape[1], generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        reference = rows @ weight.contiguous().t()
        assert torch.allclose(model.proj_out(rows), reference, atol=1e-4)
        ids = torch.tensor([3, 50256, 13])
        assert torch.equal(model.model.decoder.embed_tokens(ids), weight.contiguous()[ids])


def test_tokenizer_has_timestamps_and_round_trips():
    tokenizer = build_tokenizer(bundled_ctranslate2_model().parent)
    assert len(tokenizer) == 51864
    assert tokenizer.convert_tokens_to_ids(["<|notimestamps|>", "<|0.00|>", "<|30.00|>"]) == [50362, 50363, 51863]
    assert tokenizer.all_special_ids[-1] == 50362  # timestamp decoding starts after the last special id
    ids = tokenizer(" Hello there, general Kenobi.", add_special_tokens=False).input_ids
    assert tokenizer.decode(ids) == " Hello there, general Kenobi."


def test_bad_source_is_explained(tmp_path):
    with pytest.raises(WhisperConversionError, match="no downloads"):
        whisper_asr_folder(tmp_path / "nope")
    (tmp_path / "model.bin").write_bytes(b"\x00")
    with pytest.raises(WhisperConversionError):
        whisper_asr_folder(tmp_path)


# ------------------------------------------------------------------------- transcription
def test_greedy_transcription_of_espeak_speech(transcriber, sentence):
    audio = np.concatenate([np.zeros(SR // 2, np.float32), sentence, np.zeros(SR // 2, np.float32)])
    speech = [(0.5, 0.5 + sentence.size / SR)]
    words, n_windows, seconds, dropped = transcriber.transcribe(audio, speech)
    assert n_windows == 1 and seconds == pytest.approx(speech[0][1] - speech[0][0] + 0.4, abs=0.01)
    assert word_error_rate(SENTENCE, words)["wer"] <= 0.25, [w.text for w in words]
    starts = [w.start for w in words]
    assert starts == sorted(starts)
    assert all(speech[0][0] <= w.start < w.end <= speech[0][1] for w in words)  # snapped into the speech
    assert dropped == 0


def test_word_timestamps_do_not_keep_the_encoders_attention_maps(transcriber, sentence):
    """The encoder's maps (216 MB a 30 s window) were the peak of `report --transcribe`; the words
    and their times are the same without them."""
    import torch

    encoder = transcriber.model.model.encoder
    features = transcriber.processor.feature_extractor(sentence, sampling_rate=SR, return_tensors="pt").input_features
    with torch.inference_mode():
        assert encoder(features, output_attentions=True).attentions is None
    audio = np.concatenate([np.zeros(SR // 2, np.float32), sentence, np.zeros(SR // 2, np.float32)])
    window = [(0.0, audio.size / SR)]
    hooked = transcriber.transcribe_windows(audio, window)
    hooks = dict(encoder._forward_pre_hooks)
    encoder._forward_pre_hooks.clear()
    try:
        assert transcriber.transcribe_windows(audio, window) == hooked
    finally:
        encoder._forward_pre_hooks.update(hooks)


def test_the_encoder_keeps_fused_attention_when_generate_turns_the_decoder_eager(transcriber, sentence):
    """Word timestamps make transformers switch the model's shared configuration to eager
    attention; the encoder (0.86 against 0.44 CPU s a window that way) keeps its own, and the words
    and times are the same as with the encoder eager."""
    audio = np.concatenate([np.zeros(SR // 2, np.float32), sentence, np.zeros(SR // 2, np.float32)])
    window = [(0.0, audio.size / SR)]
    words = transcriber.transcribe_windows(audio, window)
    model = transcriber.model
    assert model.config._attn_implementation == "eager"  # what generate did to the shared configuration
    encoder_attention = model.model.encoder.layers[0].self_attn
    assert encoder_attention.config._attn_implementation == "sdpa"
    assert model.model.decoder.layers[0].encoder_attn.config is model.config
    own = encoder_attention.config
    try:
        for module in model.model.encoder.modules():
            if getattr(module, "config", None) is own:
                module.config = model.config
        assert transcriber.transcribe_windows(audio, window) == words
    finally:
        for module in model.model.encoder.modules():
            if getattr(module, "config", None) is model.config:
                module.config = own


def test_the_encoder_in_bfloat16_hands_the_decoder_float32_and_hears_the_same_words(folder, transcriber, sentence):
    import torch

    audio = np.concatenate([np.zeros(SR // 2, np.float32), sentence, np.zeros(SR // 2, np.float32)])
    window = [(0.0, audio.size / SR)]
    half = WhisperTranscriber(folder, precision="bfloat16")
    assert half.encoder_precision == "bfloat16" and half.provenance.endswith("encoder in bfloat16")
    assert transcriber.encoder_precision == "float32" and next(transcriber.model.model.encoder.parameters()).dtype == torch.float32
    assert next(half.model.model.encoder.parameters()).dtype == torch.bfloat16
    assert next(half.model.model.decoder.parameters()).dtype == torch.float32
    features = half.processor.feature_extractor([audio], sampling_rate=SR, return_tensors="pt").input_features
    with torch.inference_mode():
        states = half.model.model.encoder(features).last_hidden_state
    assert states.dtype == torch.float32
    exact, rounded = transcriber.transcribe_windows(audio, window), half.transcribe_windows(audio, window)
    assert [w.text for w in rounded] == [w.text for w in exact] and exact
    assert max(abs(a.start - b.start) for a, b in zip(exact, rounded)) < 0.1


def test_transcribe_dialogue_uses_each_channels_segments(transcriber, sentence):
    n = sentence.size + SR
    audio = np.zeros((2, n), np.float32)
    audio[1, SR // 2 : SR // 2 + sentence.size] = sentence
    dialogue = Dialogue("d", segments=[[], [(0.5, 0.5 + sentence.size / SR)]], audio=audio)
    transcript = transcribe_dialogue(dialogue, transcriber)
    assert transcript.words[0] == [] and transcript.n_windows == [0, 1]
    assert "weekend" in transcript.texts[1].lower()
    assert json.dumps(transcript.to_dict())
    assert dialogue.words is None  # the dialogue is not changed


# ------------------------------------------------------------------------- windows, snapping, WER
def test_speech_windows_pack_segments_up_to_30_s():
    segments = [(1.0, 5.0), (6.0, 20.0), (25.0, 29.0), (31.0, 40.0)]
    windows = speech_windows(segments, duration=60.0)
    assert windows == [(0.8, 29.2), (30.8, 40.2)]
    assert all(hi - lo <= 30.0 for lo, hi in windows)


def test_long_segment_is_cut_at_the_quietest_point():
    audio = np.random.default_rng(0).normal(0, 0.1, 70 * SR).astype(np.float32)
    audio[int(27.0 * SR) : int(27.1 * SR)] = 0.0  # a near-silence inside the last 5 s of the first window
    windows = speech_windows([(0.0, 70.0)], duration=70.0, audio=audio)
    assert all(hi - lo <= 30.0 + 1e-9 for lo, hi in windows)
    assert windows[0][1] == pytest.approx(27.05 + 0.2, abs=0.06)
    assert windows[-1][1] == 70.0


def test_snap_words_clips_into_speech_and_drops_far_words():
    segments = [(1.0, 2.0), (5.0, 6.0)]
    words = [Word(0.9, 1.5, "a"), Word(1.8, 4.0, "b"), Word(3.0, 3.5, "ghost"), Word(4.8, 4.9, "c")]
    kept, dropped = snap_words(words, segments)
    assert dropped == 1
    assert [(w.text, round(w.start, 3), round(w.end, 3)) for w in kept] == [("a", 1.0, 1.5), ("b", 1.8, 2.0), ("c", 5.0, 5.02)]


def test_word_error_rate():
    assert word_error_rate("I think so", "i think so.")["wer"] == 0.0
    result = word_error_rate("uh huh i see", "I see")
    assert result["wer_verbatim"] == 0.5 and result["deletions_verbatim"] == 2
    assert result["wer"] < result["wer_verbatim"]  # Whisper's normaliser drops the filler "uh"
    assert word_error_rate("a b c", [Word(0, 1, "a"), Word(1, 2, "x")])["wer"] == pytest.approx(2 / 3)
    assert word_error_rate("", "words")["wer"] is None
    assert word_error_rate("red blue", "")["deletions"] == 2


# ------------------------------------------------------------------------- the report's --transcribe
def _two_speaker_dialogue(sentence: np.ndarray) -> Dialogue:
    """The user says the sentence, the system answers with it 0.6 s later."""
    n = sentence.size
    audio = np.zeros((2, 2 * n + 2 * SR), np.float32)
    audio[0, SR // 2 : SR // 2 + n] = sentence
    start = SR // 2 + n + int(0.6 * SR)
    audio[1, start : start + n] = sentence
    segments = [[(0.5, 0.5 + n / SR)], [(start / SR, (start + n) / SR)]]
    return Dialogue("asr", segments=segments, audio=audio, system_speaker=1)


def test_report_transcribes_and_uses_the_words(transcriber, sentence):
    import turneval
    from turneval.reporting import report_schema

    rep = turneval.report(_two_speaker_dialogue(sentence), judge=False, predictor=False, progress=False,
                          transcribe=transcriber, reference_text={"system": SENTENCE, "user": SENTENCE})
    assert rep.conversation["has_words"] is True
    assert rep.statistics["speaking_rate_wpm_system"] > 0  # n/a without words
    assert rep.full_duplex_timing["system_reply_unit"] == "words"
    tr = rep.transcript
    assert tr["channels"] == ["user", "system"] and tr["reference_source"] == "given"
    assert tr["wer"]["system"]["wer"] <= 0.25 and tr["wer"]["user"]["wer"] <= 0.25
    assert any("automatic speech recognition" in n for n in rep.notes)
    assert any(r["key"] == "transcript.wer.system" for r in rep.summary_rows())
    data = rep.to_dict()
    import jsonschema

    jsonschema.validate(data, report_schema())
    from turneval.reporting.html_report import render_html

    assert "Recognised words (--transcribe)" in render_html(rep)


def test_report_reference_text_file_and_errors(tmp_path):
    from turneval.transcribe import TranscriptionError, read_reference_text

    (tmp_path / "ref.txt").write_text("hello there")
    assert read_reference_text(tmp_path / "ref.txt") == {"system": "hello there"}
    (tmp_path / "ref.json").write_text(json.dumps({"user": "hi"}))
    assert read_reference_text(tmp_path / "ref.json") == {"user": "hi"}
    (tmp_path / "bad.json").write_text(json.dumps({"bot": "hi"}))
    with pytest.raises(TranscriptionError, match='"user" and/or "system"'):
        read_reference_text(tmp_path / "bad.json")
    with pytest.raises(TranscriptionError, match="cannot read"):
        read_reference_text(tmp_path / "missing.txt")


def test_report_cli_transcribe_options(tmp_path, capsys):
    from turneval.cli import main

    example = str(Path(__file__).resolve().parents[1] / "examples" / "human_like.json")
    assert main(["report", example, "--no-judge", "--no-predictor", "--asr-model", "x", "--out", str(tmp_path)]) == 1
    assert "only apply with --transcribe" in capsys.readouterr().err
    code = main(["report", example, "--no-judge", "--no-predictor", "--transcribe", "--asr-model", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert code == 1
    err = capsys.readouterr().err
    assert "not found" in err and "no downloads" in err
