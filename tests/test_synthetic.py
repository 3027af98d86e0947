"""Tests of the synthetic corpus: eSpeak binding, timing model, generator, corpus writer, CLI."""
from __future__ import annotations

import csv
import math
import threading
from dataclasses import replace

import numpy as np
import pytest
import soundfile as sf

from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.synthetic import (
    BACKCHANNELS,
    Voice,
    generate_dialogue,
    load_dialogue,
    style_behaviours,
    synthesize,
)
from turneval.dataset_scripts.synthetic.material import text_to_tokens
from turneval.dataset_scripts.synthetic.timing import HUMAN


SHORT_S = 20.0
LONG_S = 120.0


@pytest.fixture(scope="module")
def short_dialogue() -> Dialogue:
    return generate_dialogue(1, duration_s=SHORT_S)


@pytest.fixture(scope="module")
def human_long() -> list[Dialogue]:
    return [generate_dialogue(seed, duration_s=LONG_S, style="human") for seed in (10, 11, 12)]


def _turn_gaps(dialogue: Dialogue, speaker: str | None = None) -> np.ndarray:
    return np.array(
        [e["gap_before"] for e in dialogue.metadata["events"] if e["type"] == "turn" and e["gap_before"] is not None and speaker in (None, e["speaker"])]
    )


def _pauses(dialogue: Dialogue) -> list[float]:
    ipus = [i for i in dialogue.metadata["ipus"] if i["role"] in ("turn_internal", "turn_final")]
    out = []
    for spk in "AB":
        mine = [i for i in ipus if i["speaker"] == spk]
        out += [b["start"] - a["end"] for a, b in zip(mine, mine[1:]) if a["role"] == "turn_internal"]
    return out


# -- eSpeak binding ------------------------------------------------------------------


def test_synthesize_gives_word_times_inside_audio():
    tokens = text_to_tokens("well I think that the weekend was great", ".")
    utt = synthesize(tokens, Voice("en-us+f3"))
    assert utt.audio.dtype == np.float32 and utt.audio.ndim == 1
    assert 1.0 < utt.duration < 5.0
    assert [w.text for w in utt.words] == [t for t, _ in tokens]
    starts = [w.start for w in utt.words]
    assert starts == sorted(starts)
    assert utt.words[0].start == 0.0 and abs(utt.words[-1].end - utt.duration) < 1e-3
    assert all(0 <= w.start < w.end <= utt.duration + 1e-6 for w in utt.words)


def test_unknown_voice_is_a_clear_error():
    with pytest.raises(RuntimeError, match="no voice"):
        synthesize([("hello", "hello")], Voice("xx-nonexistent+zz9"))


def test_synthesize_is_thread_safe():
    texts = [text_to_tokens(f"number {i} is a {'big' if i % 2 else 'small'} one", ".") for i in range(8)]
    voices = [Voice("en-us+m3", pitch=35), Voice("en-us+f2", pitch=70)]
    serial = [synthesize(t, voices[i % 2]).audio for i, t in enumerate(texts)]
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        results[i] = synthesize(texts[i], voices[i % 2]).audio

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, audio in enumerate(serial):
        np.testing.assert_array_equal(results[i], audio)


# -- one dialogue ----------------------------------------------------------------------


def test_same_seed_same_dialogue(short_dialogue):
    again = generate_dialogue(1, duration_s=SHORT_S)
    assert again.to_dict() == short_dialogue.to_dict()
    np.testing.assert_array_equal(again.audio, short_dialogue.audio)


def test_different_seeds_differ(short_dialogue):
    texts = {" ".join(w.text for ws in generate_dialogue(s, duration_s=SHORT_S).words for w in ws) for s in (2, 3)}
    texts.add(" ".join(w.text for ws in short_dialogue.words for w in ws))
    assert len(texts) == 3


def test_audio_layout_and_ground_truth(short_dialogue):
    d = short_dialogue
    assert d.audio.shape == (2, int(SHORT_S * SAMPLE_RATE))
    assert d.duration == SHORT_S and d.system_speaker is None
    assert np.isfinite(d.audio).all() and np.abs(d.audio).max() <= 1.0
    assert all(d.segments) and all(d.words)
    for spk in (0, 1):
        segs = d.segments[spk]
        for w in d.words[spk]:
            assert 0 <= w.start < w.end <= d.duration
            assert any(s - 1e-3 <= w.start and w.end <= e + 1e-3 for s, e in segs), w
    # Each channel carries only its own speaker: silence outside that speaker's segments.
    for spk in (0, 1):
        inside = np.zeros(d.audio.shape[1], dtype=bool)
        for s, e in d.segments[spk]:
            inside[int(s * SAMPLE_RATE) : int(math.ceil(e * SAMPLE_RATE)) + 1] = True
        assert np.abs(d.audio[spk, ~inside]).max() < 1e-4


def test_words_aligned_with_energy(short_dialogue):
    d = short_dialogue
    for spk in (0, 1):
        x = d.audio[spk]
        for w in d.words[spk]:
            a, b = int(w.start * SAMPLE_RATE), int(w.end * SAMPLE_RATE)
            word = x[a:b]
            assert np.sqrt(np.mean(word**2)) > 0.01, w
            # The first and last 10 ms of a word are sound, not silence left before or after it.
            assert np.abs(word[:160]).max() > 0.003 and np.abs(word[-160:]).max() > 0.003, w


def test_prosodic_punctuation(human_long):
    for d in human_long:
        for ipu in d.metadata["ipus"]:
            if ipu["role"] == "turn_final":
                assert ipu["punct"] in ".?"
            elif ipu["role"] == "backchannel":
                assert ipu["punct"] == "."
        internal = [i for i in d.metadata["ipus"] if i["role"] == "turn_internal"]
        assert internal and sum(i["punct"] == "," for i in internal) / len(internal) > 0.8


def test_voices_are_one_male_one_female(short_dialogue):
    names = sorted(v["name"].split("+")[1][0] for v in short_dialogue.metadata["voices"])
    assert names == ["f", "m"]
    pitches = [v["pitch"] for v in short_dialogue.metadata["voices"]]
    assert abs(pitches[0] - pitches[1]) >= 10


def test_backchannels_are_in_the_shared_word_list():
    from turneval.dataset_scripts.vocabulary import is_backchannel_text, load_backchannel_words

    words = load_backchannel_words()
    for transcript, _ in BACKCHANNELS:
        assert is_backchannel_text(transcript.split(), words), transcript


# -- statistics --------------------------------------------------------------------------


def test_human_statistics_near_targets(human_long):
    gaps = np.concatenate([_turn_gaps(d) for d in human_long])
    pauses = np.array([p for d in human_long for p in _pauses(d)])
    minutes = sum(d.duration for d in human_long) / 60
    n_bc = sum(d.metadata["counts"]["backchannels"] for d in human_long)
    assert 0.1 <= np.median(gaps) <= 0.3
    assert 0.05 <= np.mean(gaps < 0) <= 0.35
    assert np.median(pauses) > np.median(gaps) + 0.15
    assert np.min(pauses) > 0.2  # every clause is its own IPU
    assert 2.0 <= n_bc / minutes <= 6.5
    n_int = sum(d.metadata["counts"]["interruptions"] for d in human_long)
    assert n_int / minutes < 2.0  # rare


def test_planned_events_match_detected_events(human_long):
    from turneval.dataset_scripts.events import extract_events

    for d in human_long:
        events = extract_events(d)
        assert len(events.ipus) == len(d.metadata["ipus"])
        assert len(events.backchannels) == d.metadata["counts"]["backchannels"]
        planned = {round(e["start"], 2) for e in d.metadata["events"] if e["type"] == "backchannel"}
        assert {round(b.start, 2) for b in events.backchannels} == planned


def test_floor_taking_share_follows_yield_probability():
    eager = replace(HUMAN, interruption_prob=1.0, backchannel_rate=0.0)
    ds = [generate_dialogue(s, duration_s=LONG_S, behaviours=(eager, eager)) for s in (20, 21)]
    ints = [e for d in ds for e in d.metadata["events"] if e["type"] == "interruption"]
    assert len(ints) >= 30
    share = np.mean([e["floor_taking"] for e in ints])
    assert 0.4 <= share <= 0.8
    for d in ds:  # a floor-taking interrupter holds the floor: the next turn is theirs
        turns = [e for e in d.metadata["events"] if e["type"] == "turn"]
        cut = [i for i in d.metadata["ipus"] if i["role"] == "interrupted"]
        taken = [e for e in d.metadata["events"] if e["type"] == "interruption" and e["floor_taking"]]
        assert len(cut) == len(taken)
        for e in taken:
            assert any(t["speaker"] == e["speaker"] and abs(t["start"] - e["start"]) < 1e-3 for t in turns)
            assert any(i["speaker"] == e["interrupted"] and abs(i["end"] - e["interrupted_end"]) < 1e-3 for i in cut)


def test_cascaded_system_waits_never_backchannels_and_yields():
    ds = [generate_dialogue(s, duration_s=LONG_S, style="cascaded", system_speaker=1) for s in (30, 31)]
    for d in ds:
        assert d.system_speaker == 1
        events = d.metadata["events"]
        assert not [e for e in events if e["type"] == "backchannel" and e["speaker"] == "B"]
        assert not [e for e in events if e["type"] == "interruption" and e["speaker"] == "B"]
        assert all(e["floor_taking"] for e in events if e["type"] == "interruption" and e["interrupted"] == "B")
        gaps = _turn_gaps(d, "B")
        assert len(gaps) >= 5 and np.all(gaps >= 1.0 - 1e-6) and np.all(gaps <= 2.0 + 1e-6)


def test_eager_duplex_system_enters_early_and_interrupts():
    ds = [generate_dialogue(s, duration_s=LONG_S, style="eager_duplex", system_speaker=0) for s in (40, 41)]
    gaps = np.concatenate([_turn_gaps(d, "A") for d in ds])
    assert np.mean(gaps < 0) > 0.5
    ints = [e for d in ds for e in d.metadata["events"] if e["type"] == "interruption" and e["speaker"] == "A"]
    assert len(ints) >= 4
    user_ints = [e for d in ds for e in d.metadata["events"] if e["type"] == "interruption" and e["speaker"] == "B"]
    if user_ints:  # the system rarely yields to the user
        assert np.mean([e["floor_taking"] for e in user_ints]) < 0.5


def test_noise_at_requested_snr():
    clean = generate_dialogue(5, duration_s=SHORT_S)
    noisy = generate_dialogue(5, duration_s=SHORT_S, snr_db=10.0)
    assert clean.to_dict()["segments"] == noisy.to_dict()["segments"]
    noise = noisy.audio - clean.audio
    for ch in (0, 1):
        mask = np.zeros(clean.audio.shape[1], dtype=bool)
        for s, e in clean.segments[ch]:
            mask[int(s * SAMPLE_RATE) : int(e * SAMPLE_RATE)] = True
        snr = 10 * np.log10(np.mean(clean.audio[ch, mask] ** 2) / np.mean(noise[ch] ** 2))
        assert abs(snr - 10.0) < 1.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"style": "chatty"}, "unknown style"),
        ({"duration_s": 2.0}, "at least 5"),
        ({"style": "cascaded", "system_speaker": 2}, "system_speaker"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        generate_dialogue(0, **kwargs)


def test_style_behaviours():
    a, b = style_behaviours("cascaded", 0)
    assert a.backchannel_rate == 0 and a.yield_prob == 1.0 and b.backchannel_rate > 0


# -- corpus and CLI -----------------------------------------------------------------------


def test_cli_writes_corpus(tmp_path, capsys):
    from turneval.cli import main

    out = tmp_path / "corpus"
    rc = main(["synth", str(out), "--n", "2", "--seed", "7", "--duration", "10", "--style", "human", "--style", "cascaded", "--quiet"])
    assert rc == 0
    rows = list(csv.DictReader((out / "manifest.csv").open()))
    assert [r["id"] for r in rows] == ["synth_7_00000", "synth_7_00001"]
    for row in rows:
        info = sf.info(str(out / row["audio"]))
        assert (info.samplerate, info.channels, info.subtype) == (SAMPLE_RATE, 2, "PCM_16")
        d = load_dialogue(out / row["annotations"])
        assert d.audio.shape == (2, 10 * SAMPLE_RATE) and d.audio_path == row["audio"]
        # Any conversation can be regenerated alone from the manifest's seed.
        again = generate_dialogue(
            int(row["seed"]), duration_s=10.0, style=row["style"],
            system_speaker=int(row["system_speaker"]) if row["system_speaker"] else None,
        )
        assert again.to_dict()["words"] == d.to_dict()["words"]
        np.testing.assert_allclose(again.audio, d.audio, atol=1.0 / 32768 + 1e-6)
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*"))


def test_cli_rejects_bad_options(tmp_path, capsys):
    from turneval.cli import main

    assert main(["synth", str(tmp_path / "x"), "--n", "0"]) == 1
    assert "--n must be at least 1" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_flac_output(tmp_path):
    from turneval.dataset_scripts.synthetic import write_dialogue

    dialogue = generate_dialogue(8, duration_s=6.0)
    audio_path, json_path = write_dialogue(dialogue, tmp_path, audio_format="flac")
    assert audio_path.suffix == ".flac" and sf.info(str(audio_path)).format == "FLAC"
    again = load_dialogue(json_path)
    np.testing.assert_allclose(again.audio, dialogue.audio, atol=1.0 / 32768 + 1e-6)


def test_bundled_examples_match_their_recipe(repo_root):
    """examples/ holds exactly what examples/regenerate.py produces (so its README recipe is true)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("regenerate_examples", repo_root / "examples" / "regenerate.py")
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    for name, (style, seed, system) in recipe.EXAMPLES.items():
        bundled = load_dialogue(repo_root / "examples" / f"{name}.json")
        fresh = generate_dialogue(seed, duration_s=recipe.DURATION_S, style=style, system_speaker=system, dialogue_id=name)
        assert bundled.system_speaker == system and bundled.metadata["style"] == style
        assert [[w.text for w in ws] for ws in bundled.words] == [[w.text for w in ws] for ws in fresh.words]
        for got, want in zip(bundled.segments, fresh.segments):
            np.testing.assert_allclose(np.array(got), np.array(want), atol=1e-3)
        assert np.corrcoef(bundled.audio.ravel(), fresh.audio.ravel())[0, 1] > 0.999
