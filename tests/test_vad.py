"""Voice activity: the bundled Silero model, the segment rule, streaming == whole file."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import lfilter

from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.vad import (
    FRAME_SAMPLES,
    VAD_BANDS,
    SegmentTracker,
    SileroVAD,
    StreamingVAD,
    VADConfig,
    detect_speech,
    detect_speech_channels,
)


_VOWELS = [(700, 1220, 2600), (300, 2300, 3000), (500, 1000, 2500), (400, 1900, 2600), (600, 1700, 2500)]


def speechlike(duration_s: float, seed: int = 0, sr: int = SAMPLE_RATE, f0: float = 120.0) -> np.ndarray:
    """A voiced, vowel-like signal: a glottal pulse train through changing formant filters,
    modulated at a syllable rate of 4 Hz. Silero VAD scores it as speech; a pure tone it does not."""
    rng = np.random.default_rng(seed)
    n = int(duration_s * sr)
    t = np.arange(n) / sr
    pitch = f0 * (1 + 0.08 * np.sin(2 * np.pi * 0.7 * t))
    source = (np.diff(np.floor(np.cumsum(pitch) / sr), prepend=0) > 0).astype(float)
    source += 0.02 * rng.standard_normal(n)
    out = np.zeros(n)
    step = int(0.12 * sr)
    for first in range(0, n, step):
        y = source[first : first + step]
        for fc, bw in zip(_VOWELS[rng.integers(len(_VOWELS))], (80, 100, 120)):
            r, theta = np.exp(-np.pi * bw / sr), 2 * np.pi * fc / sr
            y = lfilter([1 - r], [1, -2 * r * np.cos(theta), r * r], y)
        out[first : first + step] = y
    out *= 0.6 + 0.4 * np.cos(2 * np.pi * 4 * t)  # syllables; loud from the first sample
    fade = min(n, int(0.01 * sr))
    out[:fade] *= np.linspace(0, 1, fade)
    out[n - fade :] *= np.linspace(1, 0, fade)
    return (0.5 * out / (np.abs(out).max() + 1e-9)).astype(np.float32)


def place(bursts: list[tuple[float, float]], total_s: float, seed: int = 0, sr: int = SAMPLE_RATE) -> np.ndarray:
    """Silence (with faint noise) of ``total_s`` seconds with speech-like bursts at ``bursts``."""
    rng = np.random.default_rng(seed)
    audio = (1e-3 * rng.standard_normal(int(total_s * sr))).astype(np.float32)
    for k, (start, end) in enumerate(bursts):
        burst = speechlike(end - start, seed=seed * 100 + k, sr=sr)
        audio[int(start * sr) : int(start * sr) + burst.size] += burst
    return audio


BURSTS = [(0.8, 2.4), (3.3, 4.3), (5.5, 7.0)]


@pytest.fixture(scope="module")
def conversation_side() -> np.ndarray:
    return place(BURSTS, 8.0, seed=1)


@pytest.fixture(scope="module")
def whole_file_segments(conversation_side) -> list[tuple[float, float]]:
    return SileroVAD().detect_speech(conversation_side)


def test_detects_speechlike_bursts(whole_file_segments):
    assert len(whole_file_segments) == len(BURSTS)
    for (start, end), (true_start, true_end) in zip(whole_file_segments, BURSTS):
        assert abs(start - true_start) < 0.2
        assert abs(end - true_end) < 0.25


def test_silence_and_tone_are_not_speech():
    t = np.arange(3 * SAMPLE_RATE) / SAMPLE_RATE
    assert detect_speech(np.zeros(3 * SAMPLE_RATE, np.float32)) == []
    assert detect_speech((0.3 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32)) == []
    assert detect_speech(np.zeros(0, np.float32)) == []


@pytest.mark.parametrize("band", VAD_BANDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_streaming_gives_the_whole_file_segments(conversation_side, seed, band):
    whole_file_segments = SileroVAD(band=band).detect_speech(conversation_side)
    rng = np.random.default_rng(seed)
    stream = StreamingVAD(VADConfig(band=band))
    emitted_before_end = []
    position = 0
    while position < conversation_side.size:
        size = int(rng.choice([1, 7, FRAME_SAMPLES, 1000, 5000, 24000]))
        emitted_before_end += stream.accept_audio(conversation_side[position : position + size])
        position += size
    segments = emitted_before_end + stream.finish()
    assert segments == whole_file_segments
    # Segments come out while streaming, not only at the end.
    assert len(emitted_before_end) >= len(BURSTS) - 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # silero-vad uses importlib.resources.path
def test_sequence_model_matches_stock_silero_onnx(conversation_side):
    torch = pytest.importorskip("torch")
    from silero_vad import load_silero_vad

    stock = load_silero_vad(onnx=True)
    expected = stock.audio_forward(torch.from_numpy(conversation_side)[None], SAMPLE_RATE).numpy().ravel()
    ours = SileroVAD(band="full").speech_probabilities(conversation_side)
    assert ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, atol=1e-6)


def _reference_segments(probs, config: VADConfig, n_samples: int):
    from silero_vad.utils_vad import get_speech_timestamps_from_probs

    found = get_speech_timestamps_from_probs(
        list(probs),
        threshold=config.threshold,
        neg_threshold=config.neg_threshold,
        min_speech_duration_ms=config.min_speech_ms,
        min_silence_duration_ms=config.min_silence_ms,
        speech_pad_ms=config.speech_pad_ms,
        audio_length_samples=n_samples,
    )
    return [(d["start"], d["end"]) for d in found]


def test_segment_tracker_matches_silero_rule_in_any_chunking():
    rng = np.random.default_rng(0)
    for trial in range(400):
        n = int(rng.integers(0, 250))
        walk = np.cumsum(rng.normal(0, 0.25, n)) % 1.0
        probs = walk if trial % 2 else rng.random(n)
        config = VADConfig(
            threshold=float(rng.choice([0.3, 0.5, 0.7])),
            min_speech_ms=float(rng.choice([0, 32, 250])),
            min_silence_ms=float(rng.choice([0, 20, 100, 300])),
            speech_pad_ms=float(rng.choice([0, 10, 30, 200])),
        )
        n_samples = max(0, n * FRAME_SAMPLES - int(rng.integers(0, FRAME_SAMPLES)))
        tracker = SegmentTracker(config)
        got, i = [], 0
        while i < n:
            step = int(rng.integers(1, 20))
            got += tracker.push(probs[i : i + step])
            i += step
        got += tracker.finish(n_samples)
        assert got == _reference_segments(probs, config, n_samples), (trial, config)


def test_parameters_change_the_segments(conversation_side, whole_file_segments):
    # A minimum speech length above every burst removes them all.
    assert detect_speech(conversation_side, min_speech_ms=2000) == []
    # More padding widens every segment by the extra padding on each side.
    padded = detect_speech(conversation_side, speech_pad_ms=130)
    for (s0, e0), (s1, e1) in zip(whole_file_segments, padded):
        assert s1 == pytest.approx(max(0.0, s0 - 0.1), abs=1e-9)
        assert e1 == pytest.approx(e0 + 0.1, abs=1e-9)
    # Bridging the 0.9 s gap between the first two bursts merges them.
    merged = detect_speech(conversation_side, min_silence_ms=1200)
    assert len(merged) < len(whole_file_segments)


def test_other_sample_rates_are_resampled(conversation_side, whole_file_segments):
    from turneval.dataset_scripts.audio import resample

    full = SileroVAD(band="full").detect_speech(conversation_side)
    at_8k = resample(conversation_side, SAMPLE_RATE, 8000)
    segments = detect_speech(at_8k, 8000, band="full")
    assert len(segments) == len(full)
    for (s0, e0), (s1, e1) in zip(full, segments):
        assert abs(s0 - s1) < 0.07 and abs(e0 - e1) < 0.07
    # The default telephone band hears the wideband signal as its 8 kHz version: the same segments.
    assert detect_speech(at_8k, 8000) == whole_file_segments


@pytest.mark.parametrize("seed", [0, 1])
def test_telephone_band_stream_is_the_whole_signal_result(seed):
    from turneval.dataset_scripts.audio import TelephoneBandStream, telephone_band

    rng = np.random.default_rng(seed)
    signal = rng.standard_normal(3 * SAMPLE_RATE + 77).astype(np.float32)
    stream, out, position = TelephoneBandStream(), [], 0
    while position < signal.size:
        size = int(rng.choice([1, 300, FRAME_SAMPLES, 4001, 16000]))
        out.append(stream.accept(signal[position : position + size]))
        position += size
    out.append(stream.finish())
    np.testing.assert_array_equal(np.concatenate(out), telephone_band(signal))
    # Nothing above 4 kHz is left.
    spectrum = np.abs(np.fft.rfft(telephone_band(signal))) ** 2
    freqs = np.fft.rfftfreq(signal.size, 1 / SAMPLE_RATE)
    assert spectrum[freqs > 4100].sum() < 1e-4 * spectrum.sum()


def test_channels_and_bad_input(conversation_side):
    stereo = np.stack([conversation_side, np.zeros_like(conversation_side)])
    per_channel = detect_speech_channels(stereo)
    assert len(per_channel[0]) == len(BURSTS) and per_channel[1] == []
    with pytest.raises(ValueError, match="one channel"):
        detect_speech(stereo)
    with pytest.raises(ValueError, match="NaN"):
        detect_speech(np.array([0.0, np.nan], np.float32))
    with pytest.raises(ValueError, match="threshold"):
        VADConfig(threshold=1.5)
    with pytest.raises(ValueError, match="min_silence_ms"):
        VADConfig(min_silence_ms=-1)
    with pytest.raises(ValueError, match="band must be one of telephone, full"):
        VADConfig(band="wide")
    with pytest.raises(TypeError):
        SileroVAD(VADConfig(), threshold=0.4)
    assert SileroVAD(threshold=0.4).describe()["threshold"] == 0.4
