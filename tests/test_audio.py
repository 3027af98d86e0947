"""Audio loading, checks, resampling, streaming blocks, atomic writes, dialogue_from_audio."""
from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from turneval.dataset_scripts.audio import (
    AudioError,
    audio_duration,
    iter_audio_blocks,
    load_audio,
    load_stereo,
    load_two_mono,
    mono_mix,
    read_wav_bytes,
    resample,
    wav_bytes,
    write_audio,
)
from turneval.dataset_scripts.dialogue import DialogueError
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.vad import SileroVAD, dialogue_from_audio

from .test_vad import place


def _tone(freq: float, seconds: float, sr: int, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def _peak_hz(signal: np.ndarray, sr: int) -> float:
    spectrum = np.abs(np.fft.rfft(signal * np.hanning(signal.size)))
    return float(np.fft.rfftfreq(signal.size, 1 / sr)[spectrum.argmax()])


@pytest.mark.parametrize("suffix", [".wav", ".flac", ".ogg"])
def test_round_trip_formats(tmp_path, suffix):
    audio = np.stack([_tone(440, 0.5, SAMPLE_RATE), _tone(660, 0.5, SAMPLE_RATE, 0.25)])
    path = tmp_path / f"x{suffix}"
    write_audio(path, audio, SAMPLE_RATE)
    loaded, sr = load_audio(path)
    assert sr == SAMPLE_RATE and loaded.dtype == np.float32 and loaded.shape[0] == 2
    assert abs(loaded.shape[1] - audio.shape[1]) <= (0 if suffix != ".ogg" else 1024)
    n = min(loaded.shape[1], audio.shape[1])
    tolerance = 1e-3 if suffix != ".ogg" else 0.1  # vorbis is lossy
    assert np.abs(loaded[:, :n] - audio[:, :n]).mean() < tolerance
    assert list(tmp_path.iterdir()) == [path]  # no temp file left behind


@pytest.mark.parametrize("orig_sr", [8000, 22050, 44100, 48000])
def test_resampling_to_16k_keeps_length_and_pitch(tmp_path, orig_sr):
    path = tmp_path / "tone.wav"
    sf.write(path, _tone(440, 2.0, orig_sr), orig_sr, subtype="FLOAT")
    audio, sr = load_audio(path)
    assert sr == SAMPLE_RATE and audio.shape == (1, 2 * SAMPLE_RATE)
    assert _peak_hz(audio[0], SAMPLE_RATE) == pytest.approx(440, abs=1.0)
    middle = audio[0, 4000:-4000]
    assert np.abs(middle).max() == pytest.approx(0.5, abs=0.01)
    kept, native = load_audio(path, target_sr=None)
    assert native == orig_sr and kept.shape == (1, 2 * orig_sr)


def test_resample_matches_between_shapes():
    mono = _tone(300, 0.3, 44100)
    np.testing.assert_allclose(resample(mono, 44100)[None], resample(mono[None], 44100), atol=1e-6)
    assert resample(mono, 16000, 16000) is not None


def test_errors_name_the_file_and_the_problem(tmp_path):
    with pytest.raises(AudioError, match=r"missing\.wav: audio file not found"):
        load_audio(tmp_path / "missing.wav")
    text = tmp_path / "notes.wav"
    text.write_text("not audio")
    with pytest.raises(AudioError, match=r"notes\.wav: not a readable audio file"):
        load_audio(text)
    empty = tmp_path / "empty.wav"
    sf.write(empty, np.zeros((0, 1), np.float32), SAMPLE_RATE)
    with pytest.raises(AudioError, match=r"empty\.wav: audio is empty"):
        load_audio(empty)
    bad = tmp_path / "nan.wav"
    data = np.zeros((100, 2), np.float32)
    data[42, 1] = np.nan
    sf.write(bad, data, SAMPLE_RATE, subtype="FLOAT")
    with pytest.raises(AudioError, match=r"nan\.wav: audio holds NaN or infinite samples \(first at channel 1, sample 42\)"):
        load_audio(bad)
    with pytest.raises(AudioError, match=r"nan\.wav: audio holds NaN"):
        list(iter_audio_blocks(bad, 0.001))
    mono = tmp_path / "mono.wav"
    sf.write(mono, _tone(200, 3.0, SAMPLE_RATE), SAMPLE_RATE)
    with pytest.raises(AudioError, match=r"mono\.wav: expected 2 channel\(s\), found 1"):
        load_stereo(mono)
    with pytest.raises(AudioError, match=r"mono\.wav: audio is 3\.0 s long, more than the limit of 2 s"):
        load_audio(mono, max_seconds=2)
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros((1000, 2), np.float32), SAMPLE_RATE)
    assert load_stereo(silent).shape == (2, 1000)
    with pytest.raises(AudioError, match=r"silent\.wav: audio is silent"):
        load_stereo(silent, allow_silent=False)
    assert issubclass(AudioError, DialogueError)  # the CLI reports it as a user error


def test_two_mono_files_are_padded_and_placed(tmp_path):
    user, system = tmp_path / "user.wav", tmp_path / "system.wav"
    sf.write(user, np.full(800, 0.25, np.float32), SAMPLE_RATE, subtype="FLOAT")
    sf.write(system, np.full(500, -0.5, np.float32), 8000, subtype="FLOAT")  # 1000 samples at 16 kHz
    both = load_two_mono(user, system, system_channel=0)
    assert both.shape == (2, 1000)
    assert np.allclose(both[1, :800], 0.25) and np.all(both[1, 800:] == 0)
    assert np.allclose(both[0, 100:900], -0.5, atol=0.02)
    flipped = load_two_mono(user, system, system_channel=1)
    np.testing.assert_array_equal(flipped, both[::-1])
    with pytest.raises(ValueError):
        load_two_mono(user, system, system_channel=2)


def test_mono_mix_and_write_checks(tmp_path):
    audio = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    np.testing.assert_array_equal(mono_mix(audio), [0.5, 0.5])
    np.testing.assert_array_equal(mono_mix(audio[0]), audio[0])
    target = tmp_path / "out.wav"
    with pytest.raises(ValueError, match="NaN"):
        write_audio(target, np.array([0.0, np.inf]))
    with pytest.raises(ValueError, match="unknown audio format"):
        write_audio(tmp_path / "out.xyz", audio)
    assert not any(tmp_path.iterdir())  # nothing half-written


@pytest.mark.parametrize("file_sr", [SAMPLE_RATE, 48000])
def test_blocks_tile_the_loaded_audio(tmp_path, file_sr):
    rng = np.random.default_rng(0)
    path = tmp_path / "long.wav"
    sf.write(path, (0.1 * rng.standard_normal((int(5.3 * file_sr), 2))).astype(np.float32), file_sr, subtype="FLOAT")
    whole, _ = load_audio(path)
    blocks = list(iter_audio_blocks(path, block_s=1.0, read_s=0.7))
    assert [b.start_s for b in blocks] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    joined = np.concatenate([b.audio for b in blocks], axis=1)
    assert joined.shape == whole.shape
    # soxr's streaming resampler gives the whole-file result (float32 rounding at most).
    np.testing.assert_allclose(joined, whole, atol=1e-6)
    overlapping = list(iter_audio_blocks(path, block_s=2.0, hop_s=1.5))
    assert [b.start_s for b in overlapping] == [0.0, 1.5, 3.0, 4.5]
    assert all(b.audio.shape[1] == 2 * SAMPLE_RATE for b in overlapping[:-1])
    assert overlapping[-1].start_s * SAMPLE_RATE + overlapping[-1].audio.shape[1] == whole.shape[1]
    assert audio_duration(path) == pytest.approx(5.3)
    with pytest.raises(ValueError):
        next(iter_audio_blocks(path, block_s=0))


def test_dialogue_from_audio_runs_vad_per_channel(tmp_path):
    a = place([(0.5, 2.0)], 5.0, seed=3)
    b = place([(2.6, 4.2)], 5.0, seed=4)
    path = tmp_path / "call.wav"
    write_audio(path, np.stack([a, b]), SAMPLE_RATE, subtype="FLOAT")
    vad = SileroVAD()
    dialogue = dialogue_from_audio(path, system_speaker=1, vad=vad)
    assert dialogue.id == "call" and dialogue.system_speaker == 1 and dialogue.audio.shape == (2, 5 * SAMPLE_RATE)
    assert dialogue.duration == pytest.approx(5.0)
    assert len(dialogue.segments[0]) == 1 and len(dialogue.segments[1]) == 1
    assert abs(dialogue.segments[0][0][0] - 0.5) < 0.15 and abs(dialogue.segments[1][0][1] - 4.2) < 0.25
    streamed = dialogue_from_audio(path, vad=vad, keep_audio=False, block_s=0.7)
    assert streamed.audio is None and streamed.segments == dialogue.segments
    assert streamed.duration == pytest.approx(5.0)
    silent = tmp_path / "silent.wav"
    write_audio(silent, np.zeros((2, 1600)), SAMPLE_RATE)
    for keep in (True, False):
        with pytest.raises(AudioError, match="silent"):
            dialogue_from_audio(silent, vad=vad, keep_audio=keep)


def test_vad_command_writes_csv_and_json(tmp_path, capsys):
    import argparse

    from turneval.commands import vad as vad_command
    from turneval.dataset_scripts.readers import read_dialogue

    path = tmp_path / "call.wav"
    write_audio(path, np.stack([place([(0.5, 2.0)], 4.0, seed=3), place([(2.4, 3.6)], 4.0, seed=4)]), SAMPLE_RATE, subtype="FLOAT")
    parser = argparse.ArgumentParser()
    vad_command.add_parser(parser.add_subparsers())
    for out in ("call.csv", "call.json"):
        args = parser.parse_args(["vad", str(path), "--out", str(tmp_path / out), "--system-channel", "1", "--stream"])
        assert vad_command.run(args) == 0
        dialogue = read_dialogue(tmp_path / out)
        assert [len(s) for s in dialogue.segments] == [1, 1]
    assert "channel 1 (system): 1 segments" in capsys.readouterr().out
    from turneval.cli import UserError

    with pytest.raises(UserError, match="use a .csv"):
        vad_command.run(parser.parse_args(["vad", str(path), "--out", str(tmp_path / "x.txt")]))
    with pytest.raises(UserError, match="threshold"):
        vad_command.run(parser.parse_args(["vad", str(path), "--threshold", "2"]))


def test_wav_bytes_round_trip_and_header_channel_check(tmp_path):
    stereo = np.stack([_tone(220, 0.1, SAMPLE_RATE), -_tone(330, 0.1, SAMPLE_RATE)])
    np.testing.assert_allclose(read_wav_bytes(wav_bytes(stereo, subtype="FLOAT")), stereo)
    assert read_wav_bytes(wav_bytes(stereo[0])).shape == (1, stereo.shape[1])  # 1-D is one channel
    write_audio(tmp_path / "mono.wav", stereo[0])
    assert audio_duration(tmp_path / "mono.wav") == pytest.approx(0.1)
    with pytest.raises(AudioError, match="expected 2 channel"):
        audio_duration(tmp_path / "mono.wav", channels=2)
