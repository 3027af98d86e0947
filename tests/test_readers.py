"""Corpus readers: every format into a Dialogue, and file:line errors on malformed input."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from turneval.dataset_scripts.audio import write_audio
from turneval.dataset_scripts.dialogue import Dialogue, DialogueError, Word
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.readers import (
    guess_format,
    parse_ms98_lines,
    read_annotations,
    read_dialogue,
    read_fisher,
    read_rttm,
    read_rttm_all,
    read_seamless,
    read_switchboard,
    read_vad_csv,
    read_word_json,
    switchboard_from_lines,
)


DATA = Path(__file__).parent / "data" / "readers"


def _error(call, *args, **kwargs) -> str:
    with pytest.raises(DialogueError) as info:
        call(*args, **kwargs)
    return str(info.value)


# -- Switchboard ms98 ------------------------------------------------------------------------
def test_switchboard_words_drop_non_speech_and_keep_times():
    dialogue = read_switchboard(DATA / "switchboard" / "sw0001B-ms98-a-word.text")  # either side works
    assert dialogue.id == "sw0001" and dialogue.duration == 8.0
    assert dialogue.segments == [[(0.5, 2.1), (4.9, 6.3)], [(2.4, 3.1), (3.35, 4.6), (6.95, 7.8)]]
    assert [w.text for w in dialogue.words[1]] == ["it", "was", "great", "we", "went", "hiking", "yeah", "it", "was"]
    assert dialogue.words[0][0] == Word(0.5, 0.68, "so")
    assert dialogue.metadata["format"] == "switchboard"


def test_switchboard_trans_files_give_utterance_spans():
    dialogue = read_switchboard(DATA / "switchboard" / "sw0001A-ms98-a-trans.text")
    assert dialogue.words is None
    # The utterance with a [silence] inside stays one span.
    assert dialogue.segments[1] == [(2.4, 4.6), (6.95, 7.8)]


def test_switchboard_laughter_is_speech_and_noise_is_not():
    lines_a = ["sw9A-ms98-a-1 0.0 1.0 [silence]", "sw9A-ms98-a-2 1.0 1.5 [laughter]", "sw9A-ms98-a-2 1.5 1.9 [noise]"]
    lines_b = ["sw9B-ms98-a-1 0.0 0.4 [vocalized-noise]", "sw9B-ms98-a-2 0.4 0.9 uh-huh", "sw9B-ms98-a-3 0.9 2.0 [silence]"]
    dialogue = switchboard_from_lines((lines_a, lines_b), "sw9")
    assert dialogue.segments == [[(1.0, 1.5)], [(0.4, 0.9)]]
    assert [w.text for w in dialogue.words[0]] == ["[laughter]"] and dialogue.duration == 2.0


def test_switchboard_errors_point_at_the_line(tmp_path):
    message = _error(read_switchboard, DATA / "switchboard_bad" / "sw0002B-ms98-a-word.text")
    assert message.endswith("sw0002A-ms98-a-word.text:3: end time must be a number of seconds, got '0.7x0000'")
    message = _error(read_switchboard, DATA / "switchboard_bad" / "sw0003A-ms98-a-word.text")
    assert "sw0003A-ms98-a-word.text:2: expected 'utt_id start end word' (4 fields), got 6" in message
    assert "wrong.text: not a Switchboard ms98 file name" in _error(read_switchboard, DATA / "wrong.text")
    lonely = tmp_path / "sw0004A-ms98-a-word.text"
    lonely.write_text("sw0004A-ms98-a-0001 0.0 1.0 hello\n")
    assert "sw0004B-ms98-a-word.text (side B) is missing" in _error(read_switchboard, lonely)
    assert "x.text:2: utterance id 'sw1B-ms98-a-1' does not belong" in _error(
        parse_ms98_lines, ["sw1A-ms98-a-1 0 1 hi", "sw1B-ms98-a-1 1 2 there"], "x.text", utt_prefix="sw1A"
    )


# -- Fisher ---------------------------------------------------------------------------------
def test_fisher_utterances():
    dialogue = read_fisher(DATA / "fisher" / "fe_03_00001.txt")
    assert dialogue.id == "fe_03_00001" and dialogue.words is None
    # A's "[noise]" line is not speech; B's "(( mhm ))" (uncertain transcription) is.
    assert dialogue.segments == [[(0.36, 2.36), (6.1, 7.25)], [(2.1, 2.81), (3.05, 5.4)]]
    assert dialogue.metadata["utterances"][1][0] == [2.1, 2.81, "(( mhm ))"]


def test_fisher_errors():
    assert _error(read_fisher, DATA / "fisher" / "fe_03_bad.txt").endswith("fe_03_bad.txt:4: speaker must be A, B, 0 or 1, got 'C'")
    assert _error(read_fisher, DATA / "fisher" / "fe_03_bad_time.txt").endswith(
        "fe_03_bad_time.txt:2: end time 2.81 is before start time 3.50"
    )


# -- RTTM -----------------------------------------------------------------------------------
def test_rttm_speaker_mappings():
    path = DATA / "rttm" / "call_0001.rttm"
    by_name = read_rttm(path)  # sorted: spk_agent -> A, spk_user -> B
    assert by_name.id == "call_0001" and by_name.metadata["speaker_names"] == [["spk_agent"], ["spk_user"]]
    assert by_name.segments == [[(2.8, 4.05), (4.6, 5.6)], [(0.5, 2.6), (4.3, 4.7)]]
    by_order = read_rttm(path, speaker_map="first")
    assert by_order.segments == by_name.segments[::-1]
    explicit = read_rttm(path, speaker_map={"spk_user": 0, "spk_agent": 1}, system_speaker=1)
    assert explicit.segments == by_order.segments and explicit.system_speaker == 1
    recordings = read_rttm_all(DATA / "rttm" / "two_files.rttm", speaker_map="channel")
    assert [d.id for d in recordings] == ["rec1", "rec2"]
    assert recordings[1].segments == [[(0.2, 0.7)], [(1.0, 1.5)]]
    assert read_rttm(DATA / "rttm" / "two_files.rttm", file_id="rec1").segments == recordings[0].segments


def test_rttm_errors():
    assert "bad_fields.rttm:2: a SPEAKER line has 10 fields" in _error(read_rttm, DATA / "rttm" / "bad_fields.rttm")
    assert "three_speakers.rttm:3: more than two speakers (alice, bob, carol)" in _error(read_rttm, DATA / "rttm" / "three_speakers.rttm")
    assert "three_speakers.rttm:3: speaker 'carol' is not in speaker_map" in _error(
        read_rttm, DATA / "rttm" / "three_speakers.rttm", speaker_map={"alice": 0, "bob": 1}
    )
    assert "pass file_id" in _error(read_rttm, DATA / "rttm" / "two_files.rttm")
    assert "has no recording 'rec9'" in _error(read_rttm, DATA / "rttm" / "two_files.rttm", file_id="rec9")


# -- word JSON -----------------------------------------------------------------------------
def test_word_json_two_files_both_layouts():
    dialogue = read_word_json([DATA / "word_json" / "user.json", DATA / "word_json" / "system.json"], system_speaker=1)
    assert dialogue.segments == [[(0.5, 2.1)], [(2.4, 3.1), (3.35, 4.6)]]
    assert [w.text for w in dialogue.words[0]] == ["so", "how", "was", "your", "weekend"]
    # The second segment has no word times: it is speech, but adds no words.
    assert [w.text for w in dialogue.words[1]] == ["It", "was", "great."]
    assert dialogue.system_speaker == 1 and dialogue.user_speaker == 0


def test_word_json_combined_file():
    dialogue = read_dialogue(DATA / "word_json" / "combined.json")
    assert dialogue.id == "session_7" and dialogue.system_speaker == 1
    assert dialogue.segments == [[(0.2, 0.9)], [(1.2, 1.4)]]


def test_word_json_errors_have_lines():
    good = DATA / "word_json" / "system.json"
    message = _error(read_word_json, [DATA / "word_json" / "bad_null_end.json", good])
    assert message.endswith("bad_null_end.json:5: word 'how' has no end time (timestamp [0.68, null]); give it one or drop it")
    message = _error(read_word_json, [DATA / "word_json" / "bad_syntax.json", good])
    assert "bad_syntax.json:4: invalid JSON (column 21): Expecting ',' delimiter" in message
    assert "pass both channels" in _error(read_dialogue, DATA / "word_json" / "user.json")


def test_word_json_schema_errors(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"channels": [\n  [{"word": "a", "start": 0.1, "end": 0.2}],\n  [{"word": "b",\n    "start": -1, "end": 0.2}]\n]}')
    assert _error(read_word_json, path).endswith("c.json:3: start time is negative: -1")
    path.write_text('{"channels": [[]]}')
    assert "c.json:1: 'channels' must hold 2 transcripts" in _error(read_word_json, path)


# -- VAD CSV -------------------------------------------------------------------------------
def test_vad_csv():
    dialogue = read_vad_csv(DATA / "vad_csv" / "session.csv")
    assert dialogue.segments == [[(0.5, 2.1), (3.8, 4.2)], [(2.35, 4.0), (4.5, 5.5)]]  # touching B rows merge
    assert dialogue.words is None and dialogue.duration == 5.5


def test_vad_csv_errors():
    assert _error(read_vad_csv, DATA / "vad_csv" / "bad_speaker.csv").endswith("bad_speaker.csv:3: speaker must be A, B, 0 or 1, got 'C'")
    assert "bad_header.csv:1: header lacks column(s) speaker" in _error(read_vad_csv, DATA / "vad_csv" / "bad_header.csv")
    # Blank lines still count: the NaN is on line 4.
    assert _error(read_vad_csv, DATA / "vad_csv" / "bad_time.csv").endswith("bad_time.csv:4: end time is not finite: 'nan'")


# -- Seamless Interaction style -------------------------------------------------------------
def test_seamless_sidecar_without_audio():
    dialogue = read_seamless(DATA / "seamless" / "V00_S0001_I00000001.json")
    assert dialogue.id == "V00_S0001_I00000001" and dialogue.audio is None
    assert dialogue.segments == [[(0.5, 1.4)], [(1.7, 2.3)]]
    # Participant 2 has no word times: its utterance span is used.
    assert dialogue.metadata["segments_from"] == ["words", "transcript"]
    vad = read_seamless(DATA / "seamless" / "V00_S0001_I00000001.json", segments_from="vad")
    assert vad.segments == [[(0.45, 1.45)], [(1.65, 2.35)]]


def test_seamless_sidecar_with_stereo_audio(tmp_path):
    shutil.copy(DATA / "seamless" / "V00_S0001_I00000001.json", tmp_path)
    write_audio(tmp_path / "V00_S0001_I00000001.wav", np.full((2, 3 * 8000), 0.1, np.float32), 8000)
    for path in ("V00_S0001_I00000001.wav", "V00_S0001_I00000001.json"):
        dialogue = read_dialogue(tmp_path / path)
        assert dialogue.audio.shape == (2, 3 * SAMPLE_RATE) and dialogue.duration == pytest.approx(3.0)
    lazy = read_seamless(tmp_path / "V00_S0001_I00000001.json", load_audio=False)
    assert lazy.audio is None and lazy.audio_path.endswith(".wav") and lazy.duration == pytest.approx(3.0)


def test_seamless_release_pair_finds_partner_and_mono_audio(tmp_path):
    for name in ("V00_S0002_I00000002_P0011.json", "V00_S0002_I00000002_P0012.json"):
        shutil.copy(DATA / "seamless" / name, tmp_path)
    dialogue = read_dialogue(tmp_path / "V00_S0002_I00000002_P0012.json")
    assert dialogue.id == "V00_S0002_I00000002" and dialogue.segments == [[(0.3, 0.8)], [(1.0, 1.3)]]
    write_audio(tmp_path / "V00_S0002_I00000002_P0011.wav", np.full(16000, 0.2, np.float32), SAMPLE_RATE)
    assert "P0012.json: has no mono audio beside it" in _error(read_seamless, tmp_path / "V00_S0002_I00000002_P0011.json")
    write_audio(tmp_path / "V00_S0002_I00000002_P0012.wav", np.full(24000, -0.2, np.float32), SAMPLE_RATE)
    with_audio = read_seamless(tmp_path / "V00_S0002_I00000002_P0011.json")
    assert with_audio.audio.shape == (2, 24000)
    assert np.allclose(with_audio.audio[0, :16000], 0.2, atol=1e-3) and np.all(with_audio.audio[0, 16000:] == 0)
    (tmp_path / "V00_S0002_I00000002_P0013.json").write_text("{}")
    assert "expected exactly one partner" in _error(read_seamless, tmp_path / "V00_S0002_I00000002_P0011.json")


def test_seamless_errors():
    message = _error(read_seamless, DATA / "seamless" / "V00_S0003_I00000003.json")
    assert message.endswith("V00_S0003_I00000003.json:6: end time 0.5 is before start time 0.9")


# -- audio beside annotations, dispatcher, round trip ----------------------------------------
def test_audio_is_attached_and_checked(tmp_path):
    audio = tmp_path / "session.wav"
    write_audio(audio, np.zeros((2, 6 * SAMPLE_RATE)), SAMPLE_RATE)
    dialogue = read_vad_csv(DATA / "vad_csv" / "session.csv", audio=audio)
    assert dialogue.audio.shape == (2, 6 * SAMPLE_RATE) and dialogue.audio_path == str(audio)
    assert dialogue.duration == pytest.approx(6.0)
    short = tmp_path / "short.wav"
    write_audio(short, np.zeros((2, 2 * SAMPLE_RATE)), SAMPLE_RATE)
    message = _error(read_vad_csv, DATA / "vad_csv" / "session.csv", audio=short)
    assert "session.csv: speech runs to 5.50 s but the audio" in message and "is only 2.00 s long" in message
    mono = tmp_path / "mono.wav"
    write_audio(mono, np.zeros(SAMPLE_RATE), SAMPLE_RATE)
    assert "mono.wav: expected 2 channel(s), found 1" in _error(read_fisher, DATA / "fisher" / "fe_03_00001.txt", audio=mono)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("switchboard/sw0001A-ms98-a-word.text", "switchboard"),
        ("fisher/fe_03_00001.txt", "fisher"),
        ("rttm/call_0001.rttm", "rttm"),
        ("vad_csv/session.csv", "vad_csv"),
        ("word_json/combined.json", "word_json"),
        ("seamless/V00_S0001_I00000001.json", "seamless"),
        ("seamless/V00_S0002_I00000002_P0011.json", "seamless"),
    ],
)
def test_guess_format(name, expected):
    assert guess_format(DATA / name) == expected
    assert isinstance(read_dialogue(DATA / name), Dialogue)


def test_dispatcher_rejects_unknown_input(tmp_path):
    assert guess_format([DATA / "word_json" / "user.json", DATA / "word_json" / "system.json"]) == "word_json"
    assert guess_format(tmp_path / "call.wav") == "audio"
    assert "cannot tell the format" in _error(read_dialogue, tmp_path / "notes.doc")
    assert "missing.rttm: file not found" in _error(read_dialogue, tmp_path / "missing.rttm")
    with pytest.raises(ValueError, match="unknown format"):
        read_dialogue(DATA / "rttm" / "call_0001.rttm", format="nope")
    odd = tmp_path / "odd.json"
    odd.write_text("[1, 2]")
    assert "odd.json:1: unknown JSON layout" in _error(read_dialogue, odd)


def test_annotations_round_trip(tmp_path):
    original = read_switchboard(DATA / "switchboard" / "sw0001A-ms98-a-word.text", system_speaker=0)
    path = tmp_path / "sw0001.json"
    original.save_annotations(path)
    assert guess_format(path) == "turneval"
    again = read_dialogue(path)
    assert again.segments == original.segments and again.words == original.words
    assert again.system_speaker == 0 and again.duration == original.duration
    data = json.loads(path.read_text())
    write_audio(tmp_path / "sw0001.wav", np.zeros((2, 8 * SAMPLE_RATE)), SAMPLE_RATE)
    path.write_text(json.dumps(dict(data, audio_path="sw0001.wav")))
    assert read_annotations(path).audio.shape == (2, 8 * SAMPLE_RATE)
    assert read_annotations(path, load_audio=False).audio is None
    data.pop("segments")
    path.write_text(json.dumps(data))
    assert "not a turneval annotation file (no 'segments')" in _error(read_annotations, path)


def _annotated_pair(folder: Path, name: str, seconds: int = 2, channels: int = 2) -> Path:
    """Write NAME.json (audio_path: the bare file name, as turneval synth does) + NAME.wav."""
    folder.mkdir(parents=True, exist_ok=True)
    write_audio(folder / f"{name}.wav", np.zeros((channels, seconds * SAMPLE_RATE)), SAMPLE_RATE)
    dialogue = Dialogue(id=name, segments=[[(0.1, 0.9)], [(1.0, 1.5)]], duration=9.0, audio_path=f"{name}.wav")
    dialogue.save_annotations(folder / f"{name}.json")
    return folder / f"{name}.json"


def test_annotations_resolve_relative_audio(tmp_path):
    path = _annotated_pair(tmp_path / "corpus", "c1", seconds=2)
    light = read_annotations(path, load_audio=False)
    assert light.audio is None and Path(light.audio_path) == tmp_path / "corpus" / "c1.wav"
    assert light.duration == 2.0  # the audio's length, not the JSON's 9.0
    as_written = read_annotations(path, resolve_audio_path=False)
    assert as_written.audio_path == "c1.wav" and as_written.audio.shape == (2, 2 * SAMPLE_RATE)
    (tmp_path / "corpus" / "c1.wav").unlink()
    assert read_annotations(path).audio is None  # missing audio is tolerated unless required
    assert "its audio file" in _error(read_annotations, path, require_audio=True)
    mono = _annotated_pair(tmp_path / "mono", "m1", channels=1)
    assert "expected 2 channel(s), found 1" in _error(read_annotations, mono, load_audio=False)


def test_annotated_corpus_from_folder_and_manifest(tmp_path):
    from turneval.dataset_scripts.readers import read_annotated_corpus

    folder = tmp_path / "corpus"
    for name in ("b2", "a1"):
        _annotated_pair(folder, name)
    (folder / "notes.json").write_text("{}")  # no audio beside it: passed over
    assert [d.id for d in read_annotated_corpus(folder)] == ["a1", "b2"]
    manifest = folder / "manifest.csv"
    manifest.write_text("id,audio,annotations\nx,b2.wav,b2.json\n")
    (dialogue,) = read_annotated_corpus(manifest)
    assert dialogue.id == "b2" and Path(dialogue.audio_path) == folder / "b2.wav" and dialogue.audio is None
    manifest.write_text("id,audio\nx,b2.wav\n")
    assert "manifest.csv:1: manifest needs the columns" in _error(read_annotated_corpus, manifest)
    (tmp_path / "empty").mkdir()
    assert "no annotated dialogues" in _error(read_annotated_corpus, tmp_path / "empty")
    assert "expected a folder" in _error(read_annotated_corpus, folder / "a1.json")


def test_vad_csv_writer_round_trip(tmp_path):
    from turneval.dataset_scripts.readers import write_vad_csv

    original = read_rttm(DATA / "rttm" / "call_0001.rttm")
    path = tmp_path / "out.csv"
    write_vad_csv(original, path)
    assert path.read_text().splitlines()[:2] == ["speaker,start,end", "B,0.500,2.600"]
    assert read_vad_csv(path).segments == original.segments


def test_read_corpus_gives_one_dialogue_per_conversation(tmp_path):
    from turneval.dataset_scripts.readers import read_corpus

    for name in ("V00_S0002_I00000002_P0011.json", "V00_S0002_I00000002_P0012.json", "V00_S0001_I00000001.json"):
        shutil.copy(DATA / "seamless" / name, tmp_path)
    files = sorted((DATA / "switchboard").glob("*-word.text")) + sorted(tmp_path.glob("*.json"))
    files.append(DATA / "rttm" / "call_0001.rttm")
    dialogues = list(read_corpus(files))
    assert [d.id for d in dialogues] == ["sw0001", "V00_S0001_I00000001", "V00_S0002_I00000002", "call_0001"]
    trans = list(read_corpus(sorted((DATA / "switchboard").glob("*.text"))))
    assert [(d.id, d.metadata["alignment"]) for d in trans] == [("sw0001", "trans"), ("sw0001", "word")]


def test_harper_valley_reader_names_the_file_and_the_bad_utterance(tmp_path):
    import json

    from turneval.dataset_scripts.dialogue import DialogueError
    from turneval.dataset_scripts.readers import read_harper_valley

    path = tmp_path / "call.json"
    path.write_text(json.dumps([{"speaker_role": "manager", "offset_ms": 0, "duration_ms": 500}]))
    with pytest.raises(DialogueError, match=r"call.json: utterance 0: speaker_role 'manager'"):
        read_harper_valley(path, load_audio=False)
    path.write_text(json.dumps([{"speaker_role": "agent", "duration_ms": 500}]))
    with pytest.raises(DialogueError, match="lacks 'offset_ms'"):
        read_harper_valley(path, load_audio=False)


def test_harper_valley_reader_on_a_real_call_keeps_roles_on_their_channels():
    from pathlib import Path

    from turneval.dataset_scripts.readers import read_harper_valley

    transcript = Path(__file__).resolve().parents[2] / "shared" / "real" / "harper_valley" / "transcript" / "0002f70f7386445b.json"
    if not transcript.is_file():
        pytest.skip("the Harper Valley dev calls (../shared/real/harper_valley) are not here")
    call = read_harper_valley(transcript, load_audio=False)
    assert call.metadata["corpus"] == "harper_valley" and call.words[0][0].text == "hello"
    assert all(s < e for side in call.segments for s, e in side)
