"""benchmarks/validation/real_perturbations.py, tools/build_naturalness_range.py and their SpokenWOZ reader,
on a SpokenWOZ-layout fixture made by the synthesizer (the real calls stay out of the repository)."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr
import torch


REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "benchmarks" / "validation"), str(REPO / "benchmarks"), str(REPO / "tools")]

import _real_calls  # noqa: E402
import _spokenwoz  # noqa: E402
import build_naturalness_range as naturalness_range  # noqa: E402
import real_perturbations  # noqa: E402

from turneval.dataset_scripts.dialogue import DialogueError  # noqa: E402
from turneval.dataset_scripts.perturbations.edits import PERTURBATION_TYPES  # noqa: E402
from turneval.dataset_scripts.synthetic import generate_dialogue  # noqa: E402
from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig  # noqa: E402
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel  # noqa: E402


TINY_PREDICTOR = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64, num_mel_bins=32, num_channel_layers=1, num_cross_layers=1)


def _words_json(dialogue) -> list[dict]:
    return [{"speaker": "AB"[k], "word": w.text, "start": w.start, "end": w.end} for k in (0, 1) for w in dialogue.words[k]]


@pytest.fixture(scope="module")
def spokenwoz_root(tmp_path_factory) -> Path:
    """The SpokenWOZ layout: one call with 8 kHz stereo audio and words, one with words only."""
    root = tmp_path_factory.mktemp("spokenwoz")
    (root / "audio").mkdir()
    (root / "words").mkdir()
    call = generate_dialogue(3, duration_s=60.0, style="human")
    sf.write(root / "audio" / "SYN0001.flac", soxr.resample(call.audio.T, 16000, 8000), 8000)
    (root / "words" / "SYN0001.json").write_text(json.dumps(_words_json(call)))
    (root / "words" / "SYN0002.json").write_text(json.dumps(_words_json(generate_dialogue(4, duration_s=20.0, style="human"))))
    return root


@pytest.fixture()
def tiny_predictors(monkeypatch) -> list:
    """An audio and a voice-activity predictor with random weights, in place of the bundled ones."""
    torch.manual_seed(0)
    models = [(name, FutureActivityPredictorModel(FutureActivityPredictorConfig(input_type=kind, **TINY_PREDICTOR)).eval())
              for name, kind in (("tiny_audio", "audio"), ("tiny_va", "vad"))]
    monkeypatch.setattr(_real_calls, "predictors", lambda extra=(): models)
    return models


def test_reader_loads_audio_words_and_vad_speech(spokenwoz_root):
    calls = _spokenwoz.load_calls(spokenwoz_root)
    assert [c.id for c in calls] == ["SYN0001"], "the words-only call has no audio to load"
    call = calls[0]
    assert call.audio.shape[0] == 2 and call.duration == pytest.approx(60.0, abs=0.01), "8 kHz read back at 16 kHz"
    assert all(call.segments) and call.metadata["segments"] == "silero"
    original = generate_dialogue(3, duration_s=60.0, style="human")
    assert [len(w) for w in call.words] == [len(w) for w in original.words]
    timed = _spokenwoz.word_time_calls(spokenwoz_root)
    assert [c.id for c in timed] == ["SYN0001", "SYN0002"] and timed[1].audio is None
    # speech from word times: the words' union, words closer than 200 ms joined
    for segs, words in zip(timed[0].segments, original.words):
        assert segs[0][0] == pytest.approx(words[0].start) and segs[-1][1] == pytest.approx(max(w.end for w in words))
        assert all(b[0] - a[1] >= _spokenwoz.WORD_JOIN_S for a, b in zip(segs, segs[1:]))


def test_malformed_words_name_the_file_and_the_entry(tmp_path):
    bad = tmp_path / "words" / "BAD.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps([{"speaker": "A", "word": "hi", "start": 0.1, "end": 0.3}, {"speaker": "C", "word": "x", "start": 1, "end": 2}]))
    with pytest.raises(DialogueError, match=r"BAD\.json: word 1 .*speaker A/B"):
        _spokenwoz.read_words(bad)


def test_missing_folder_skips_with_one_figure(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(_spokenwoz.ENV_VAR, str(tmp_path / "nowhere"))
    for module in (real_perturbations, naturalness_range):
        figures = module.run(quick=True)
        assert len(figures) == 1 and math.isnan(figures[0]["value"])
        assert "skipped" in figures[0]["note"] and _spokenwoz.ENV_VAR in figures[0]["note"]
    assert "skipped" in capsys.readouterr().err


def test_perturbation_pairs_are_distinct_places_with_edited_audio(spokenwoz_root):
    call = _spokenwoz.load_calls(spokenwoz_root)[0]
    pairs, failed = real_perturbations.perturbation_pairs(call, seeds=4)
    assert pairs, "a minute of human-like dialogue hosts some perturbation"
    for kind in PERTURBATION_TYPES:
        made = sum(p.perturbation_type == kind for p in pairs)
        assert made + sum(failed[kind].values()) <= 4, "at most one pair per seed"
    for pair in pairs:
        assert pair.natural.audio.shape[0] == 2 and pair.perturbed.audio.shape[0] == 2
        n = min(pair.natural.audio.shape[1], pair.perturbed.audio.shape[1])
        assert not np.allclose(pair.natural.audio[:, :n], pair.perturbed.audio[:, :n]), f"{pair.pair_id}: the audio was edited"
    places = [(p.perturbation_type, p.edit.get("source_timeline_boundaries_ms") or p.edit.get("boundaries_ms")) for p in pairs]
    assert len({(k, json.dumps(b)) for k, b in places}) == len(pairs), "a place drawn twice counts once"


def test_benchmark_counts_and_figures(spokenwoz_root, tiny_predictors, tmp_path, monkeypatch):
    monkeypatch.setenv("TURNEVAL_HARPER_VALLEY_ROOT", str(tmp_path / "no_harper_valley"))
    result = real_perturbations.evaluate(str(spokenwoz_root), str(tmp_path / "no_ami"), seeds=2)
    assert result["recordings"] == ["SYN0001"] and any("no AMI data" in m for m in result["missing"])
    assert any("no Harper Valley data" in m for m in result["missing"])
    for name, per_type in result["summary"]["models"].items():  # every edit pooled, per corpus of the calls
        assert {c: g["pairs"] for c, g in per_type["all"]["by_corpus"].items()} == {"spokenwoz": per_type["all"]["pairs"]}
    summary = result["summary"]
    timer = real_perturbations.SILENCE_TIMER  # scored beside the predictors, on the same VAD segments
    assert list(summary["models"]) == [name for name, _ in tiny_predictors] + [timer]
    assert all(r[side][timer] <= 0 for r in result["pairs"] for side in ("natural_m", "perturbed_m")), "minus a mean absolute gap"
    for name in summary["models"]:
        per_type = summary["models"][name]
        assert per_type["all"]["pairs"] == len(result["pairs"]) == sum(per_type[k]["pairs"] for k in PERTURBATION_TYPES)
        for kind, s in per_type.items():
            assert 0 <= s["wins"] <= s["pairs"]
            if s["pairs"]:
                assert s["share"] == pytest.approx(s["wins"] / s["pairs"]) and s["ci95"][0] <= s["share"] <= s["ci95"][1]
                assert s["ci95_resampling_recordings"][0] <= s["share"] <= s["ci95_resampling_recordings"][1]
                wins = sum(r["natural_m"][name] > r["perturbed_m"][name] for r in result["pairs"] if kind in ("all", r["type"]))
                assert s["wins"] == wins
    for kind, info in summary["types"].items():
        assert bool(info["hosted_by"]) != bool(info["cannot_host"]), "one recording: it hosts the type or says why not"
        late = [r for r in result["pairs"] if r["type"] == "late_response"]
        split = per_type["late_response"]["by_original_gap"]
        assert sum(g["pairs"] for g in split.values()) == per_type["late_response"]["pairs"] == len(late)
        assert split["< 1 s"]["pairs"] == sum(r["original_gap_s"] < real_perturbations.LATE_GAP_SPLIT_S for r in late)
        backchannels = [r for r in result["pairs"] if r["type"] == "excessive_backchannel"]
        heard = per_type["excessive_backchannel"]["by_copies_heard"]
        assert sum(g["pairs"] for g in heard.values()) == len(backchannels)
        assert heard["every copy"]["pairs"] == sum(r["backchannels_heard"][0] == r["backchannels_heard"][1] for r in backchannels)
    assert all((r["backchannels_heard"] is None) == (r["type"] != "excessive_backchannel") for r in result["pairs"])
    scorers = len(tiny_predictors) + 1
    figures = real_perturbations.figures(result)
    split_figures = [f for f in figures if "original gap" in f["name"] or "VAD heard" in f["name"]]
    corpus_figures = [f for f in figures if "calls:" in f["name"]]
    per_type_figures = [f for f in figures if f not in split_figures and f not in corpus_figures]
    assert len(per_type_figures) == scorers * (len(PERTURBATION_TYPES) + 1)
    assert len(corpus_figures) == scorers, "every edit pooled, once per corpus (one corpus here)"
    assert len(split_figures) == 4 * scorers, "late responses by the gap they lengthen, backchannels by what the VAD heard"
    assert all("target >= 0.90" in f["note"] and "TurnNat" in f["note"] for f in per_type_figures)
    table = real_perturbations.markdown(result)
    assert "| all, spokenwoz calls |" in table
    assert "| late_response |" in table and "original gap >= 1 s" in table and "| silence timer |" in table.splitlines()[2]
    assert "| excessive_backchannel, VAD heard not every copy |" in table


def test_backchannels_heard_counts_copies_the_vad_found_only_after_the_edit():
    edit = {"source_channel": "b", "inserted_backchannels": [{"start_ms": 1000.0, "end_ms": 1500.0},
                                                             {"start_ms": 4000.0, "end_ms": 4600.0},
                                                             {"start_ms": 8000.0, "end_ms": 8400.0}]}
    natural = [[(0.0, 9.0)], [(7.9, 8.5)]]  # the listener's channel already has speech where the third copy lands
    perturbed = [[(0.0, 9.0)], [(1.05, 1.45), (7.9, 8.5)]]  # the second copy was not heard
    assert real_perturbations.backchannels_heard(edit, natural, perturbed) == [1, 3]
    assert real_perturbations.backchannels_heard({"pre_response_gap_ms": 500.0}, natural, perturbed) is None
    swapped = {**edit, "source_channel": "a"}  # copies in channel a: speech there in both crops, none new
    assert real_perturbations.backchannels_heard(swapped, natural, perturbed) == [0, 3]


def test_range_scores_each_source_with_the_predictors_that_can_read_it(spokenwoz_root, tiny_predictors, tmp_path, monkeypatch):
    monkeypatch.setenv("TURNEVAL_SWB_ROOT", str(tmp_path / "no_swb"))
    monkeypatch.setenv("TURNEVAL_HARPER_VALLEY_ROOT", str(tmp_path / "no_harper_valley"))
    result = naturalness_range.evaluate(str(spokenwoz_root), str(tmp_path / "no_ami"), quick=False)
    assert any("no Harper Valley data" in m for m in result["missing"])
    audio, va = result["predictors"]["tiny_audio"], result["predictors"]["tiny_va"]
    assert set(audio["sources"]) == {"spokenwoz_audio"}, "word times carry no sound"
    assert set(va["sources"]) == {"spokenwoz_audio", "spokenwoz_word_times"}
    assert va["pooled"]["n"] == 3 and va["pooled"]["min"] <= va["pooled"]["median"] <= va["pooled"]["max"]
    document = naturalness_range.data_file(result, "python tools/build_naturalness_range.py --write x.json")
    entry = document["naturalness_m"]["tiny_va"]
    assert entry["range"]["low"] <= entry["range"]["median"] <= entry["range"]["high"] and entry["range"]["n"] == 3 and entry["input"] == "vad"
    assert document["command"].startswith("python tools/build_naturalness_range.py") and "spokenwoz_word_times" in document["source"]


def test_run_all_passes_the_spokenwoz_folder_to_the_benchmarks(tmp_path, monkeypatch, capsys):
    import run_all

    monkeypatch.setenv(_spokenwoz.ENV_VAR, "unchanged")  # restored after the test
    args = run_all.build_parser().parse_args(["--spokenwoz-root", str(tmp_path), "--list", "--only", "real_perturbations"])
    assert run_all.run_from_args(args) == 0
    assert _spokenwoz.default_root() == tmp_path.resolve()
    assert capsys.readouterr().out.startswith("real_perturbations")
