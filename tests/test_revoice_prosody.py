"""Turn prosody in re-voicing (``--prosody turns``): the planned ending of every IPU from dialogue
acts or words, whole-turn synthesis cut back to each IPU's real span, determinism, the default
mode untouched, the pitch tracker that measures it, and the benchmark's skip.

The call and its dialogue acts are written here (made-up words, times and tags in the ms98 and
``-word-da.csv`` formats); no Switchboard text enters the repository. eSpeak NG comes with the
wheel; Festival, Flite and Pico tests skip when ``make synth-deps`` did not install them.
"""
from __future__ import annotations

import json
import math
import tarfile

import numpy as np
import pytest
import soundfile as sf

from turneval.dataset_scripts.dialogue import DialogueError
from turneval.dataset_scripts.readers.switchboard import read_switchboard
from turneval.dataset_scripts.readers.switchboard_acts import read_switchboard_acts
from turneval.dataset_scripts.synthetic import engines as eng
from turneval.dataset_scripts.synthetic import revoice
from turneval.dataset_scripts.synthetic.pitch import end_slope
from turneval.dataset_scripts.synthetic.turn_prosody import act_from_words, act_of_tag
from turneval.dataset_scripts.synthetic.turn_synthesis import (
    parse_festival_tokens,
    parse_flite_segments,
    spans_at_pauses,
    speak_turns,
    unit_spans_from_phones,
    unit_spans_from_tokens,
)

from .test_revoice import write_call


SR = 16000

# (start, end, tokens, SWDA tag) per side. A asks, pauses (B backchannels), goes on and ends
# with a declarative question; B answers in two IPUs around A's backchannel, the second a "+"
# continuation of its statement; A asks again in two IPUs 100 ms apart (one IPU for the events).
CALL = {
    "A": [
        (0.50, 2.00, ["so", "what", "do", "you", "think", "about", "it"], "qw"),
        (2.50, 3.60, ["i", "mean", "the", "new", "one"], "qy^d"),
        (5.90, 6.40, ["yeah"], "b"),
        (8.50, 9.00, ["do", "you"], "qy"),
        (9.10, 9.60, ["have", "one"], "qy"),
    ],
    "B": [
        (2.10, 2.40, ["uh-huh"], "b"),
        (4.00, 5.50, ["well", "i", "guess", "it", "works"], "sd"),
        (6.60, 8.00, ["and", "it", "is", "cheap"], "+"),
    ],
}
EXPECTED_WITH_ACTS = {  # (speaker, start) -> (role, act)
    (0, 0.5): ("internal", "continue"), (0, 2.5): ("final", "question"), (0, 5.9): ("backchannel", "backchannel"),
    (0, 8.5): ("internal", "continue"), (0, 9.1): ("final", "question"),
    (1, 2.1): ("backchannel", "backchannel"), (1, 4.0): ("internal", "continue"), (1, 6.6): ("final", "statement"),
}


def _ms98_call(call):
    return {side: [(s, e, toks) for s, e, toks, _ in ipus] for side, ipus in call.items()}


def write_acts(folder, number, call=CALL):
    """``sw<number>{A,B}-word-da.csv`` with the word times write_call gives (tokens share the IPU evenly)."""
    folder.mkdir(parents=True, exist_ok=True)
    for side, ipus in call.items():
        lines = []
        for k, (start, end, tokens, tag) in enumerate(ipus):
            step = (end - start) / len(tokens)
            for i, tok in enumerate(tokens):
                lines.append(f"sw{number}{side}-ms98-a-{k:04d},{start + i * step:.6f},{start + (i + 1) * step:.6f},{tok},{'B' if i == 0 else 'I'},{tag},u-{k}-1")
        (folder / f"sw{number}{side}-word-da.csv").write_text("\n".join(lines) + "\n")


@pytest.fixture()
def corpus(tmp_path):
    swb, acts = tmp_path / "swb", tmp_path / "acts" / "swb_dialog_acts_words"
    for number in (2001, 2002):
        write_call(swb, number, _ms98_call(CALL))
        write_acts(acts, number)
    return swb, acts


def _dialogue(swb, number=2001):
    return read_switchboard(swb / "20" / f"{number}" / f"sw{number}A-ms98-a-word.text", load_audio=False)


def _plans(dialogue, acts):
    return {(u.speaker, round(u.start, 3)): (p.role, p.act, u.ending) for u, p in revoice.unit_plans(dialogue, acts)}


# -- what each IPU ends with ------------------------------------------------------------------


@pytest.mark.parametrize("tag, act", [
    ("sd", "statement"), ("sv", "statement"), ("aa", "statement"), ("qh", "statement"), ("sd(^q)", "statement"),
    ("qy", "question"), ("qw", "question"), ("qy^d", "question"), ("^g", "question"), ("qo", "question"), ("bh", "question"),
    ("b", "backchannel"), ("ba", "backchannel"), ("bk", "backchannel"), ("b^m", "backchannel"),
    ("%", None), ("+", None), ("", None),
])
def test_act_of_swda_tag(tag, act):
    assert act_of_tag(tag) == act


@pytest.mark.parametrize("words, act", [
    ("do they have one", "question"), ("so uh what do you think", "question"), ("you like it or not", "question"),
    ("i think so", "statement"), ("well it works", "statement"), ("uh-huh", "backchannel"), ("yeah yeah", "backchannel"),
])
def test_act_from_words(words, act):
    assert act_from_words(words.split()) == act


def test_endings_from_dialogue_acts(corpus):
    swb, acts_dir = corpus
    acts = read_switchboard_acts(acts_dir, ["2001"])["2001"]
    plans = _plans(_dialogue(swb), acts)
    assert {k: v[:2] for k, v in plans.items()} == EXPECTED_WITH_ACTS
    punct = {"continue": ",", "statement": ".", "question": "?", "backchannel": ","}
    assert all(ending == punct[act] for _, act, ending in plans.values())


def test_endings_from_words_without_acts(corpus):
    plans = _plans(_dialogue(corpus[0]), None)
    # "i mean the new one" is a question only by its act; "do you | have one" by its words
    assert plans[(0, 2.5)] == ("final", "statement", ".")
    assert plans[(0, 9.1)] == ("final", "question", "?")
    assert plans[(1, 6.6)] == ("final", "statement", ".")
    assert plans[(0, 0.5)] == ("internal", "continue", ",")


def test_turns_are_planned_on_the_whole_call_not_the_excerpt(corpus):
    full = _dialogue(corpus[0])
    excerpt = full.crop(0.0, 2.05, new_id="x")  # A's first IPU only; A's turn goes on after it
    alone = revoice.unit_plans(excerpt)
    in_call = revoice.unit_plans(excerpt, None, full, 0.0)
    assert [p.role for _, p in alone] == ["final"] and [p.role for _, p in in_call] == ["internal"]
    with pytest.raises(DialogueError, match="not in the call"):
        revoice.unit_plans(excerpt, None, full, 0.3)


def test_dialogue_acts_from_folder_and_archive_and_bad_lines(corpus, tmp_path):
    _, acts_dir = corpus
    archive = tmp_path / "acts.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(acts_dir, arcname="swb_dialog_acts_words")
    from_dir, from_tar = read_switchboard_acts(acts_dir, ["sw2001", "2002", "2999"]), read_switchboard_acts(archive, ["2001"])
    assert sorted(from_dir) == ["2001", "2002"] and from_tar["2001"] == from_dir["2001"]
    assert [w.tag for w in from_dir["2001"][1]][-4:] == ["+"] * 4
    bad = acts_dir / "sw2001A-word-da.csv"
    bad.write_text(bad.read_text() + "sw2001A-ms98-a-0009,1.0,oops,word,B,sd,u-9-1\n")
    with pytest.raises(DialogueError, match=r"sw2001A-word-da\.csv:\d+: start and end must be seconds"):
        read_switchboard_acts(acts_dir, ["2001"])
    with pytest.raises(FileNotFoundError, match="dialogue acts not found"):
        read_switchboard_acts(tmp_path / "nowhere", ["2001"])


# -- speaking: default unchanged, eSpeak endings, determinism ----------------------------------


def _recorded_texts(monkeypatch):
    seen = []
    real = revoice.synthesize_batch

    def record(texts, voice, rates=None):
        seen.extend(texts)
        return real(texts, voice, rates)

    monkeypatch.setattr(revoice, "synthesize_batch", record)
    return seen


def test_default_mode_speaks_bare_units_and_turns_mode_adds_endings(corpus, monkeypatch):
    dialogue = _dialogue(corpus[0])
    voices = (eng.EngineVoice("espeak", "en-us+m3", rate=175, pitch=50, pitch_range=50),
              eng.EngineVoice("espeak", "en-gb-x-rp+f2", rate=175, pitch=50, pitch_range=70))
    seen = _recorded_texts(monkeypatch)
    units_audio, units_fit = revoice.revoice_dialogue(dialogue, voices)
    # every text spoken (some twice: the engine-rate retry) is a unit's bare text
    assert set(seen) == {u.text for u in revoice.dialogue_units(dialogue)[0]}
    assert "endings" not in units_fit
    seen.clear()
    turns_audio, turns_fit = revoice.revoice_dialogue(dialogue, voices, prosody="turns")
    planned = revoice.turn_units(dialogue)[0]
    assert [u.ending for u in planned] == [",", ".", ",", ",", "?", ",", ",", "."]
    assert set(seen) == {u.text + u.ending for u in planned}
    assert turns_fit["endings"]["internal continue (role)"] == 3
    # eSpeak speaks a bare text as with "." (only its breath noise, seeded by the text, differs):
    # units ending "." sound the same in both modes, the others do not
    for unit, plan in revoice.unit_plans(dialogue):
        span = slice(int(round(unit.start * SR)), int(round(unit.end * SR)))
        a, b = units_audio[unit.speaker, span], turns_audio[unit.speaker, span]
        change = float(np.linalg.norm(a - b) / np.linalg.norm(a))
        assert (change < 0.15) == (plan.punctuation == "."), (unit.text, plan.punctuation, change)
    with pytest.raises(ValueError, match="prosody must be one of"):
        revoice.revoice_dialogue(dialogue, voices, prosody="sentences")


def test_espeak_continuation_does_not_fall_like_a_statement():
    voice = eng.EngineVoice("espeak", "en-us+m3", rate=175, pitch=50, pitch_range=50)
    comma, stop, question = eng.synthesize_batch(["and then we went home" + p for p in ",.?"], voice)
    slopes = [end_slope(a, 0.0, len(a) / SR) for a in (comma, stop, question)]
    assert slopes[1] < -5 and slopes[0] > slopes[1] + 15 and slopes[2] > slopes[1] + 15, slopes


def test_turn_prosody_split_is_deterministic_and_labelled(corpus, tmp_path):
    swb, acts = corpus
    runs = []
    for name in ("a", "b"):
        manifest = revoice.revoice_split(swb, "train", ["espeak"], tmp_path / name, options=revoice.RevoiceOptions(excerpt_s=0, seed=3, prosody="turns", dialog_acts=acts.parent), progress=False)
        rows = [json.loads(line) for line in manifest.read_text().splitlines()]
        runs.append([(sf.read(r["audio_path"])[0], r) for r in rows])
    assert len(runs[0]) == 2
    for (audio_a, row_a), (audio_b, row_b) in zip(*runs):
        assert np.array_equal(audio_a, audio_b)
        assert row_a["metadata"]["prosody"] == {"mode": "turns", "dialogue_acts": True}
        assert row_a["metadata"]["fit"]["endings"] == row_b["metadata"]["fit"]["endings"]
        assert row_a["metadata"]["fit"]["endings"]["final question (acts)"] == 2
    plain = revoice.revoice_split(swb, "train", ["espeak"], tmp_path / "plain", options=revoice.RevoiceOptions(excerpt_s=0, seed=3), progress=False)
    row = json.loads(plain.read_text().splitlines()[0])
    assert "prosody" not in row["metadata"] and "endings" not in row["metadata"]["fit"]
    assert not np.array_equal(sf.read(row["audio_path"])[0], runs[0][0][0])
    with pytest.raises(ValueError, match="--prosody turns"):
        revoice.revoice_split(swb, "train", ["espeak"], tmp_path / "c", options=revoice.RevoiceOptions(dialog_acts=acts.parent))


def test_cli_prosody_option(corpus, tmp_path):
    swb, acts = corpus
    assert revoice.main(["--swb-root", str(swb), "--split", "train", "--out", str(tmp_path / "o"), "--excerpt-s", "0",
                         "--max-calls", "1", "--prosody", "turns", "--dialog-acts", str(acts), "--quiet", "--no-augment"]) == 0
    row = json.loads((tmp_path / "o" / "train" / "manifest.jsonl").read_text().splitlines()[0])
    assert row["metadata"]["prosody"]["mode"] == "turns"


# -- cutting a turn spoken whole ---------------------------------------------------------------


def test_flite_phone_times_deal_out_units():
    segments = parse_flite_segments("pau:0.2 s:0.3 ow:0.5 pau:0.7 ae:0.8 n:0.9 d:1.0 pau:1.2")
    assert unit_spans_from_phones(segments, [2, 3]) == [(0.2, 0.5), (0.7, 1.0)]
    with pytest.raises(eng.SynthesisError, match="5 phones but its units alone have"):
        unit_spans_from_phones(segments, [2, 2])


def test_festival_token_times_give_unit_spans():
    printed = "noise\nUTT 0\nTOK well 0.1 0.4\nTOK uh-huh 0.4 0.5 0.5 0.66\nTOK so 0.8 1.1\nUTT 1\nTOK yeah 0.2 0.5\n"
    tokens = parse_festival_tokens(printed)
    assert unit_spans_from_tokens(tokens[0], [2, 1]) == [(0.1, 0.66), (0.8, 1.1)]
    assert unit_spans_from_tokens(tokens[1], [1]) == [(0.2, 0.5)]
    with pytest.raises(eng.SynthesisError, match="3 tokens"):
        unit_spans_from_tokens(tokens[0], [1, 1])


def test_pico_turn_is_cut_at_its_comma_pauses():
    tone = lambda s: (0.3 * np.sin(2 * np.pi * 150 * np.arange(int(s * SR)) / SR)).astype(np.float32)  # noqa: E731
    gap = lambda s: np.zeros(int(s * SR), np.float32)  # noqa: E731
    audio = np.concatenate([tone(0.5), gap(0.05), tone(0.3), gap(0.2), tone(0.4), gap(0.15), tone(0.2)])
    spans = spans_at_pauses(audio, 3, 0.08)
    assert [(round(a, 2), round(b, 2)) for a, b in spans] == [(0.0, 0.85), (1.05, 1.45), (1.6, 1.8)]
    with pytest.raises(eng.SynthesisError, match="3 comma pause"):
        spans_at_pauses(audio, 4, 0.08)
    # a stop closure longer than the comma pause: the units' own durations pick the right silence
    audio = np.concatenate([tone(0.5), gap(0.15), tone(0.3), gap(0.1), tone(0.6)])
    assert [round(b, 2) for _, b in spans_at_pauses(audio, 2, 0.08)] == [0.5, 1.65]
    assert [round(b, 2) for _, b in spans_at_pauses(audio, 2, 0.08, [0.9, 0.55])] == [0.95, 1.65]


WHOLE_TURN_VOICES = [
    pytest.param(eng.EngineVoice("flite", "rms"), marks=pytest.mark.skipif(not eng.flite_available(), reason="flite not installed (make synth-deps)")),
    pytest.param(eng.EngineVoice("festival", "slt_hts"), marks=pytest.mark.skipif(
        "slt_hts" not in eng.installed_festival_voices() or not eng.festival_available(), reason="Festival slt_hts not installed (make synth-deps)")),
    pytest.param(eng.EngineVoice("pico", "en-US"), marks=pytest.mark.skipif(not eng.pico_available(), reason="SVOX Pico not installed (make synth-deps)")),
]


@pytest.mark.parametrize("voice", WHOLE_TURN_VOICES, ids=lambda v: v.engine)
def test_whole_turn_pieces_differ_from_sentences_and_keep_real_timing(voice, corpus):
    texts = ["so what do you think about it,", "i mean the new one."]
    (pieces,) = speak_turns([texts], voice)
    alone = eng.synthesize_batch(texts, voice)
    assert len(pieces) == 2 and all(0.3 < len(p) / len(a) < 1.6 for p, a in zip(pieces, alone))
    assert not np.array_equal(pieces[0], alone[0])  # the turn-internal IPU is not spoken as a sentence
    # rendered: each unit sounds exactly inside its real span, silence between
    dialogue = _dialogue(corpus[0])
    units = [u for u in revoice.turn_units(dialogue)[0] if u.speaker == 0]
    n = int(round(float(dialogue.duration) * SR))
    channel, stats = revoice.render_channel(units, voice, n)
    assert stats["spoken_alone"] == 0 and stats["units"] == len(units)
    inside = np.zeros(n, bool)
    for u in units:
        lo, hi = int(round(u.start * SR)), int(round(u.end * SR))
        inside[lo:hi] = True
        edge, level = int(0.05 * SR), np.sqrt(np.mean(channel[lo:hi] ** 2))  # speech reaches both ends of the span
        assert np.sqrt(np.mean(channel[lo : lo + edge] ** 2)) > 0.01 * level and np.sqrt(np.mean(channel[hi - edge : hi] ** 2)) > 0.01 * level, u.text
    assert np.all(channel[~inside] == 0)


# -- the pitch tracker and the benchmark --------------------------------------------------------


def _glide(start_hz, semitones_per_s, seconds=1.0):
    t = np.arange(int(seconds * SR)) / SR
    f = start_hz * 2 ** (semitones_per_s * t / 12)
    phase = 2 * np.pi * np.cumsum(f) / SR
    return (np.sin(phase) + 0.5 * np.sin(2 * phase) + 0.3 * np.sin(3 * phase)).astype(np.float32)


@pytest.mark.parametrize("slope", [-12.0, 0.0, 9.0])
def test_end_slope_of_a_glide(slope):
    assert end_slope(_glide(180, slope), 0.0, 1.0) == pytest.approx(slope, abs=1.5)


def test_end_slope_survives_an_octave_jump_and_skips_noise():
    x = _glide(200, -10)
    x[int(0.8 * SR) : int(0.84 * SR)] = _glide(100, -10, 0.04)  # a frame or two an octave down
    assert end_slope(x, 0.0, 1.0) == pytest.approx(-10, abs=2)
    assert math.isnan(end_slope(np.random.default_rng(0).normal(size=SR).astype(np.float32), 0.0, 1.0))


def test_benchmark_skips_with_one_nan_figure_without_data(monkeypatch):
    from .test_switchboard_benchmarks import _load

    bench = _load("revoice_prosody")
    monkeypatch.setattr(bench, "find_dialog_acts", lambda explicit=None: None)
    figures = bench.run(quick=True)
    assert len(figures) == 1 and math.isnan(figures[0]["value"]) and "dialogue acts" in figures[0]["note"]


def test_espeak_klatt_noise_does_not_depend_on_what_ran_before():
    import ctypes

    voice = eng.EngineVoice("espeak", "en+caleb", rate=176, pitch=59, pitch_range=67)  # whispered: noise from libc rand()
    (first,) = eng.synthesize_batch(["and then we went home"], voice)
    libc = ctypes.CDLL(None)
    for _ in range(13):
        libc.rand()
    (again,) = eng.synthesize_batch(["and then we went home"], voice)
    assert np.array_equal(first, again)


@pytest.mark.skipif(not eng.pico_available(), reason="SVOX Pico not installed (make synth-deps)")
def test_pico_speaks_a_text_the_same_whatever_it_spoke_before():
    voice = eng.EngineVoice("pico", "en-US", pitch=100)
    (first,) = eng.synthesize_batch(["and then we went home."], voice)
    eng.synthesize_batch(["so what do you think about it, i mean the new one?", "yeah,"], voice, [1.3, 0.7])
    (again,) = eng.synthesize_batch(["and then we went home."], voice)
    assert np.array_equal(first, again)
