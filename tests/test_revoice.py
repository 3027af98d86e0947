"""Re-voiced Switchboard (dataset_scripts.synthetic.revoice): text, stretching, excerpts, audio
fitted to the real times, labels from the real times, augmentation, resume.

The corpus fixture is written here in the ms98 format (made-up words and times, so no
Switchboard text enters the repository). eSpeak NG comes with the wheel; Festival and Flite
are Debian packages (`make synth-deps`) that CI does not install, so their tests skip when
the binaries are absent.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from turneval.dataset_scripts.labels import chunk_labels
from turneval.dataset_scripts.readers.switchboard import read_switchboard
from turneval.dataset_scripts.synthetic import engines as eng
from turneval.dataset_scripts.synthetic.augment import (
    Augmentation,
    apply_augmentation,
    draw_augmentation,
    mulaw_roundtrip,
    telephone_band,
)
from turneval.dataset_scripts.synthetic.revoice import (
    CallSelection,
    RevoiceOptions,
    dialogue_units,
    excerpt_bounds,
    main,
    render_channel,
    revoice_split,
    speakable,
)
from turneval.dataset_scripts.synthetic.stretch import shift_pitch_formants, trim_silence, wsola


SR = 16000
DATA = Path(__file__).parent / "data" / "readers" / "switchboard"

# (start, end, tokens) per side; words inside one IPU touch, as in ms98
CALL = {
    "A": [
        (0.50, 2.10, ["hi", "how", "are", "you", "doing"]),
        (2.60, 4.00, ["i'm", "th[e]-", "the", "one", "who", "called"]),
        (6.20, 7.00, ["[laughter]"]),
        (9.40, 11.60, ["so", "what", "do", "you", "think", "about", "it"]),
        (13.10, 13.60, ["uh-huh"]),
        (15.80, 18.00, ["well", "i", "guess", "that", "makes", "sense"]),
    ],
    "B": [
        (2.20, 2.50, ["yeah"]),
        (4.20, 6.00, ["oh", "okay", "[laughter-yes]", "that's", "right"]),
        (7.30, 9.20, ["i", "was", "going", "to", "ask", "you"]),
        (11.50, 13.30, ["i", "think", "it's", "a", "good", "idea", "really"]),
        (13.80, 15.60, ["and", "um", "we", "should", "try", "it"]),
        (18.50, 19.00, ["right"]),
    ],
}


def write_call(root: Path, number: int, call: dict = CALL, tail_s: float = 1.0) -> Path:
    """Write sw<number>{A,B}-ms98-a-word.text (with [silence] fill and one [noise]) under root."""
    folder = root / f"{number // 100:02d}" / f"{number:04d}"
    folder.mkdir(parents=True, exist_ok=True)
    end_all = max(ipus[-1][1] for ipus in call.values()) + tail_s
    for side, ipus in call.items():
        lines, t, utt = [], 0.0, f"sw{number:04d}{side}-ms98-a-0001"
        for start, end, tokens in ipus:
            if start > t:
                lines.append(f"{utt} {t:.6f} {start:.6f} [silence]")
            step = (end - start) / len(tokens)
            for i, tok in enumerate(tokens):
                lines.append(f"{utt} {start + i * step:.6f} {start + (i + 1) * step:.6f} {tok}")
            t = end
        lines.append(f"{utt} {t:.6f} {end_all:.6f} [noise]")
        (folder / f"sw{number:04d}{side}-ms98-a-word.text").write_text("\n".join(lines) + "\n")
    return folder / f"sw{number:04d}A-ms98-a-word.text"


@pytest.fixture()
def swb(tmp_path):
    root = tmp_path / "swb"
    for n in (2001, 2002, 2003):
        write_call(root, n)
    return root


# -- text ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "token, said",
    [
        ("[laughter]", "ha ha"), ("[laughter-yes]", "yes"), ("th[e]-", "the"), ("-[tha]t's", "that's"),
        ("[ananimous/unanimous]", "unanimous"), ("them_1", "them"), ("{alrighty}", "alrighty"),
        ("uh-huh", "uh-huh"), ("<b_aside>", None), ("[silence]", None), ("[noise]", None), ("[vocalized-noise]", None),
    ],
)
def test_speakable(token, said):
    assert speakable(token) == said


def test_units_are_the_real_ipus_with_their_words(swb):
    dialogue = read_switchboard(swb / "20" / "2001" / "sw2001A-ms98-a-word.text", load_audio=False)
    units, unspoken = dialogue_units(dialogue)
    assert unspoken == 0
    assert [(u.start, u.end) for u in units if u.speaker == 0] == [(s, e) for s, e, _ in CALL["A"]]
    assert units[1].text == "i'm the the one who called"
    assert units[2].text == "ha ha"


# -- stretching ----------------------------------------------------------------------------


def _pitch(x):
    seg = x[len(x) // 4 : len(x) // 4 + 8192]
    return np.argmax(np.abs(np.fft.rfft(seg * np.hanning(len(seg))))) * SR / len(seg)


@pytest.mark.parametrize("factor", [0.6, 0.8, 1.3, 1.9])
def test_wsola_exact_length_and_same_pitch(factor):
    t = np.arange(2 * SR) / SR
    x = (0.5 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    y = wsola(x, int(len(x) * factor))
    assert len(y) == int(len(x) * factor)
    assert abs(_pitch(y) - 220) < 4
    resampled = np.interp(np.linspace(0, len(x) - 1, len(y)), np.arange(len(x)), x)
    assert abs(_pitch(resampled) - 220 / factor) < 6  # what WSOLA avoids


def test_wsola_short_input_and_pitch_shift():
    assert len(wsola(np.ones(100, np.float32), 333)) == 333
    assert len(wsola(np.ones(100, np.float32), 0)) == 0
    t = np.arange(SR) / SR
    x = np.sin(2 * np.pi * 200 * t).astype(np.float32)
    y = shift_pitch_formants(x, 1.1)
    assert abs(len(y) - len(x) / 1.1) < 5 and abs(_pitch(y) - 220) < 4


def test_trim_silence():
    x = np.concatenate([np.zeros(1600), 0.5 * np.ones(800), np.zeros(1600)]).astype(np.float32)
    assert abs(len(trim_silence(x)) - 800) <= 80


# -- excerpts ------------------------------------------------------------------------------


def test_excerpt_ends_in_joint_silence_and_cuts_no_ipu(swb):
    dialogue = read_switchboard(swb / "20" / "2001" / "sw2001A-ms98-a-word.text", load_audio=False)
    for seed in range(10):
        bounds = excerpt_bounds(dialogue, 8.0, np.random.default_rng(seed))
        assert bounds is not None
        start, end = bounds
        assert 4.0 <= end - start
        for spk in dialogue.segments:
            for s, e in spk:
                assert not (s < start < e) and not (s < end < e)
    assert excerpt_bounds(dialogue, 0, np.random.default_rng(0)) == (0.0, dialogue.duration)


# -- the corpus ----------------------------------------------------------------------------


def _rows(split_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (split_dir / "manifest.jsonl").read_text().splitlines()]


def test_revoice_split_espeak_fits_real_times_and_labels_come_from_them(swb, tmp_path):
    out = tmp_path / "corpus"
    manifest = revoice_split(swb, "train", ["espeak"], out, options=RevoiceOptions(excerpt_s=0, seed=3), progress=False)
    rows = _rows(out / "train")
    assert len(rows) == 3 and manifest == out / "train" / "manifest.jsonl"
    assert {r["split"] for r in rows} == {"train"}
    for row in rows:
        meta = row["metadata"]
        real = read_switchboard(swb / "20" / meta["conversation"][2:] / f"{meta['conversation']}A-ms98-a-word.text", load_audio=False)
        assert row["segments"] == [[list(s) for s in spk] for spk in real.segments]  # the real IPU times
        assert all(v["engine"] == "espeak" for v in meta["voices"])
        clean, sr = sf.read(meta["clean_audio_path"], dtype="float32", always_2d=True)
        audio, _ = sf.read(row["audio_path"], dtype="float32", always_2d=True)
        assert sr == SR and clean.shape == audio.shape and clean.shape[1] == 2
        assert abs(clean.shape[0] / SR - row["duration"]) < 0.01
        # speech exactly inside the real IPUs: loud inside, digital silence outside
        act = real.activity(100, count=clean.shape[0] // 160)
        for k in range(2):
            frames = clean[: act.shape[1] * 160, k].reshape(-1, 160)
            rms = np.sqrt((frames**2).mean(axis=1))
            assert np.median(rms[act[k] == 1]) > 0.01
            assert np.max(rms[act[k] == 0]) < 1e-3
        assert meta["fit"]["units"] == sum(len(s) for s in real.segments)
    # the labels the judge trains on are those of the real word times
    from turneval.training.judge_data import load_chunk_rows

    chunk_rows = {r["conversation_id"]: r for r in load_chunk_rows(out / "train", "train", cache_dir=tmp_path / "hf")}
    real = read_switchboard(swb / "20" / "2001" / "sw2001A-ms98-a-word.text", load_audio=False)
    expected = [int(i) for i in chunk_labels(real).label_ids()]
    (conv_id,) = [k for k in chunk_rows if k.startswith("sw2001")]
    assert chunk_rows[conv_id]["labels"] == expected
    assert "T" in chunk_labels(real).labels and "BC" in chunk_labels(real).labels
    assert (out / "STATUS.md").is_file() and "| train | 3 | 3 |" in (out / "STATUS.md").read_text()


def test_revoice_is_deterministic_and_resumes(swb, tmp_path):
    a = tmp_path / "a"
    revoice_split(swb, "val", ["espeak"], a, options=RevoiceOptions(excerpt_s=0, seed=1), calls=CallSelection(max_calls=2), progress=False)
    first = {p.name: p.stat().st_mtime_ns for p in (a / "val" / "audio").iterdir()}
    assert len(first) == 2 and (a / "val" / "STATE").read_text().strip() == "complete"
    revoice_split(swb, "val", ["espeak"], a, options=RevoiceOptions(excerpt_s=0, seed=1), calls=CallSelection(max_calls=2), progress=False)  # nothing to do
    assert {p.name: p.stat().st_mtime_ns for p in (a / "val" / "audio").iterdir()} == first
    revoice_split(swb, "val", ["espeak"], a, options=RevoiceOptions(excerpt_s=0, seed=1), calls=CallSelection(max_calls=3), progress=False)  # extends
    assert len(list((a / "val" / "audio").iterdir())) == 3
    assert {r["split"] for r in _rows(a / "val")} == {"validation"}
    b = tmp_path / "b"
    revoice_split(swb, "val", ["espeak"], b, options=RevoiceOptions(excerpt_s=0, seed=1), calls=CallSelection(max_calls=3), progress=False)
    for name in first:
        x, _ = sf.read(a / "val" / "clean" / name)
        y, _ = sf.read(b / "val" / "clean" / name)
        assert np.array_equal(x, y)
    assert [r["metadata"]["voices"] for r in _rows(a / "val")] == [r["metadata"]["voices"] for r in _rows(b / "val")]


def test_first_call_continues_the_same_order_disjointly(swb, tmp_path):
    def calls(folder: Path) -> dict:
        return {r["metadata"]["conversation"]: r["metadata"]["voices"] for r in _rows(folder / "val")}

    revoice_split(swb, "val", ["espeak"], tmp_path / "whole", options=RevoiceOptions(excerpt_s=0, seed=1), calls=CallSelection(max_calls=3), progress=False)
    revoice_split(swb, "val", ["espeak"], tmp_path / "head", options=RevoiceOptions(excerpt_s=0, seed=1), calls=CallSelection(max_calls=1), progress=False)
    revoice_split(swb, "val", ["espeak"], tmp_path / "rest", options=RevoiceOptions(excerpt_s=0, seed=1), calls=CallSelection(first_call=1, max_calls=5), progress=False)
    head, rest = calls(tmp_path / "head"), calls(tmp_path / "rest")
    assert len(head) == 1 and len(rest) == 2 and not head.keys() & rest.keys()
    assert {**head, **rest} == calls(tmp_path / "whole")  # the same calls, each voiced as in one run
    assert (tmp_path / "rest" / "val" / "STATE").read_text().strip() == "complete"
    with pytest.raises(ValueError, match="first_call"):
        revoice_split(swb, "val", ["espeak"], tmp_path / "bad", calls=CallSelection(first_call=-1), progress=False)


def test_cli_with_split_list_and_clear_errors(swb, tmp_path, capsys):
    splits = tmp_path / "splits"
    splits.mkdir()
    (splits / "test.txt").write_text("2002\n")
    assert main(["--swb-root", str(swb), "--split", "test", "--splits-dir", str(splits), "--engines", "espeak",
                 "--out", str(tmp_path / "c"), "--excerpt-s", "0", "--quiet"]) == 0
    rows = _rows(tmp_path / "c" / "test")
    assert [r["metadata"]["conversation"] for r in rows] == ["sw2002"]
    with pytest.raises(FileNotFoundError, match="split list not found"):
        main(["--swb-root", str(swb), "--split", "val", "--splits-dir", str(splits), "--out", str(tmp_path / "c")])
    with pytest.raises(FileNotFoundError, match="Switchboard ms98 folder not found"):
        main(["--swb-root", str(tmp_path / "nope"), "--split", "val", "--out", str(tmp_path / "c")])
    with pytest.raises(eng.SynthesisError, match="unknown engine"):
        main(["--swb-root", str(swb), "--split", "val", "--engines", "sam", "--out", str(tmp_path / "c")])


def test_committed_fixture_revoices(tmp_path):
    manifest = revoice_split(DATA, "train", ["espeak"], tmp_path, options=RevoiceOptions(excerpt_s=0, augment=False), progress=False)
    (row,) = _rows(manifest.parent)
    clean, _ = sf.read(row["metadata"]["clean_audio_path"])
    audio, _ = sf.read(row["audio_path"])
    assert np.array_equal(clean, audio)  # --no-augment stores the clean audio
    assert row["metadata"]["augmentation"]["snr_db"] is None


# -- voices and augmentation ------------------------------------------------------------------


def test_voice_draws_are_seeded_and_distinct():
    from turneval.dataset_scripts.synthetic.revoice import draw_speaker_voices

    v1 = draw_speaker_voices(["espeak"], np.random.default_rng(5))
    v2 = draw_speaker_voices(["espeak"], np.random.default_rng(5))
    assert v1 == v2 and v1[0].name != v1[1].name
    names = {draw_speaker_voices(["espeak"], np.random.default_rng(s))[0].name for s in range(40)}
    assert len(names) > 20
    restricted = eng.draw_voice("flite", np.random.default_rng(0), ["awb"])
    assert restricted.name == "awb"


def test_telephone_band_mulaw_and_noise():
    rng = np.random.default_rng(0)
    t = np.arange(SR) / SR
    x = (0.3 * (np.sin(2 * np.pi * 1000 * t) + np.sin(2 * np.pi * 6000 * t))).astype(np.float32)
    y = telephone_band(x)
    spec = np.abs(np.fft.rfft(y))
    assert len(y) == len(x) and spec[6000] < 0.01 * spec[1000]
    z = mulaw_roundtrip(x)
    assert np.max(np.abs(z - np.clip(x, -1, 1))) < 0.03
    audio = np.stack([x, np.zeros_like(x)])
    out = apply_augmentation(audio, [[(0.0, 1.0)], []], Augmentation(snr_db=(20.0, 20.0)), rng)
    noise = out[0] - x
    snr = 10 * np.log10(np.mean(x**2) / np.mean(noise**2))
    assert abs(snr - 20) < 0.5 and np.all(out[1] == 0)  # no speech on channel 1: no reference power, no noise
    augs = [draw_augmentation(np.random.default_rng(s)) for s in range(200)]
    assert 0.35 < np.mean([a.telephone for a in augs]) < 0.65 and 0.55 < np.mean([a.snr_db is not None for a in augs]) < 0.85


# -- Festival and Flite (Debian packages; CI does not install them) ----------------------------


@pytest.mark.skipif(not eng.festival_available(), reason="Festival and its voices are not installed (make synth-deps)")
@pytest.mark.parametrize("voice", ["slt_hts", "kal_diphone"])
def test_festival_speaks_and_fits(voice):
    if voice not in eng.installed_festival_voices():
        pytest.skip(f"Festival voice {voice} not installed")
    from turneval.dataset_scripts.synthetic.revoice import Unit

    ev = eng.EngineVoice("festival", voice)
    (a, b) = eng.synthesize_batch(["well i guess that makes sense", "uh-huh"], ev)
    assert 0.8 < len(a) / SR < 4.0 and 0.1 < len(b) / SR < 1.0
    units = [Unit(0, 0.5, 2.0, "well i guess that makes sense"), Unit(0, 3.0, 3.3, "uh-huh")]
    channel, stats = render_channel(units, ev, 4 * SR)
    assert stats["units"] == 2 and np.all(channel[: int(0.5 * SR)] == 0) and np.all(channel[int(3.3 * SR) + 1 :] == 0)
    assert np.abs(channel[int(0.6 * SR) : int(1.9 * SR)]).max() > 0.01


@pytest.mark.skipif(not eng.flite_available(), reason="flite is not installed (make synth-deps)")
@pytest.mark.parametrize("voice", eng.FLITE_VOICES)
def test_flite_voices_speak(voice):
    (a,) = eng.synthesize_batch(["so what do you think about it"], eng.EngineVoice("flite", voice))
    (slow,) = eng.synthesize_batch(["so what do you think about it"], eng.EngineVoice("flite", voice), [1.8])
    assert 0.6 < len(a) / SR < 4.0 and len(slow) > 1.4 * len(a)


@pytest.mark.skipif(not eng.pico_available(), reason="SVOX Pico is not installed (make synth-deps)")
@pytest.mark.parametrize("voice", eng.PICO_VOICES)
def test_pico_voices_speak_at_rate_and_pitch(voice):
    text = "so what do you think about it"
    (a,) = eng.synthesize_batch([text], eng.EngineVoice("pico", voice))
    (slow,) = eng.synthesize_batch([text], eng.EngineVoice("pico", voice), [1.8])
    (low,) = eng.synthesize_batch([text], eng.EngineVoice("pico", voice, pitch=75))
    assert a.dtype == np.float32 and 0.6 < len(a) / SR < 4.0 and 1.5 * len(a) < len(slow) < 2.1 * len(a)
    n = min(len(a), len(low)) // 2
    assert 0.8 * len(a) < len(low) < 1.2 * len(a) and not np.allclose(low[:n], a[:n])
    rng = np.random.default_rng(0)
    drawn = [eng.draw_voice("pico", rng) for _ in range(50)]
    assert {v.name for v in drawn} == set(eng.PICO_VOICES)
    assert all(eng.PICO_PITCH_PERCENT[0] <= v.pitch <= eng.PICO_PITCH_PERCENT[1] and 0.9 <= v.rate <= 1.15 for v in drawn)


def test_adding_pico_changes_no_other_engines_voices():
    # draw_voice draws Pico's pitch last: existing corpora keep their voices
    for engine in ("festival", "flite"):
        a = eng.draw_voice(engine, np.random.default_rng(3), ["x", "y"])
        assert a.pitch == 0 and a == eng.draw_voice(engine, np.random.default_rng(3), ["x", "y"])


def test_missing_engines_name_the_fix(monkeypatch):
    monkeypatch.setattr(eng.shutil, "which", lambda name: None)
    monkeypatch.setattr(eng, "pico_available", lambda: False)
    with pytest.raises(eng.SynthesisError, match="make synth-deps"):
        eng.check_engines(["pico"])
    with pytest.raises(eng.SynthesisError, match="make synth-deps"):
        eng.check_engines(["flite"])
    with pytest.raises(eng.SynthesisError, match="make synth-deps"):
        eng.check_engines(["festival"])
    assert eng.available_engines() == ["espeak"]
