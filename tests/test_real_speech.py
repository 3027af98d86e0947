"""benchmarks/validation/real_speech.py and its AMI reader (benchmarks/_ami.py), on a small AMI-layout fixture."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch


REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "benchmarks" / "validation"), str(REPO / "benchmarks"), str(REPO / "tools")]

import _ami  # noqa: E402
import real_speech  # noqa: E402

from turneval.dataset_scripts.synthetic import generate_dialogue  # noqa: E402
from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig  # noqa: E402
from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig  # noqa: E402
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel  # noqa: E402
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge  # noqa: E402


TINY_WHISPER = {"d_model": 64, "encoder_layers": 2, "encoder_attention_heads": 4, "encoder_ffn_dim": 128, "max_source_positions": 1500}
TINY_PREDICTOR = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64, num_mel_bins=32, num_channel_layers=1, num_cross_layers=1)


def _rttm(file_id: str, name: str, segments) -> list[str]:
    return [f"SPEAKER {file_id} 1 {s:.3f} {e - s:.3f} <NA> <NA> {name} <NA> <NA>" for s, e in segments]


@pytest.fixture(scope="module")
def ami_root(tmp_path_factory) -> Path:
    """The AMI layout: an excerpt folder (mixture, per-speaker sources, speaker map) and an
    openings folder whose RTTM spells a speaker with an accent and a file id the .lst garbles."""
    root = tmp_path_factory.mktemp("ami")
    dialogue = generate_dialogue(11, duration_s=40.0, style="human")
    excerpt, openings = root / "ES2004a_excerpt", root / "openings"
    excerpt.mkdir()
    openings.mkdir()
    for k in (0, 1):
        sf.write(excerpt / f"source{k}.flac", dialogue.audio[k], 16000)
    sf.write(excerpt / "mixture.flac", dialogue.audio.sum(axis=0) / 2, 16000)
    (excerpt / "SPEAKER_MAP_inferred.txt").write_text("# inferred\nsource0.wav SPKA text A r=0.9\nsource1.wav SPKB text B r=0.8\n")
    (excerpt / "mixture.rttm").write_text("\n".join(_rttm("mixture", "SPKA", dialogue.segments[0]) + _rttm("mixture", "SPKB", dialogue.segments[1])) + "\n")
    sf.write(openings / "trn00.flac", dialogue.audio.mean(axis=0)[: 30 * 16000], 16000)
    early = [[(s, min(e, 30.0)) for s, e in spk if s < 30.0] for spk in dialogue.segments]
    (openings / "debug.train.rttm").write_text("\n".join(_rttm("trn00", "MÉO1", early[0]) + _rttm("trn00", "MEO2", early[1])) + "\n")
    (openings / "debug.train.lst").write_text("trñ00\n")
    (openings / "debug.test.rttm").write_text("\n".join(_rttm("tst09", "X", [(1.0, 2.0)])) + "\n")  # no audio: skipped
    return root


@pytest.fixture()
def tiny_models(tmp_path, monkeypatch) -> None:
    torch.manual_seed(0)
    judge = TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="causal", context_s=4.0))
    with torch.no_grad():
        judge.classifier.weight.normal_(std=2.0)
    judge.save_pretrained(tmp_path / "judge")
    FutureActivityPredictorModel(FutureActivityPredictorConfig(**TINY_PREDICTOR)).save_pretrained(tmp_path / "predictor")
    monkeypatch.setenv("TURNEVAL_JUDGE", str(tmp_path / "judge"))
    monkeypatch.setenv("TURNEVAL_PREDICTOR", str(tmp_path / "predictor"))


def test_reader_folds_names_and_pairs_audio_with_segments(ami_root):
    recordings = _ami.load_recordings(ami_root)
    assert [r.id for r in recordings] == ["ES2004a_excerpt", "trn00"], "the excerpt first; segments without audio skipped"
    excerpt, opening = recordings
    assert sorted(excerpt.sources) == ["SPKA", "SPKB"] and not opening.sources
    assert sorted(opening.speakers) == ["MEO1", "MEO2"], "MÉO1 folded to ASCII"
    assert excerpt.duration == pytest.approx(40.0, abs=0.05) and opening.duration == pytest.approx(30.0, abs=0.05)
    view = excerpt.view("SPKA", stereo=True)
    assert view.audio.shape == (2, excerpt.mixture.shape[0]) and view.segments[0] == excerpt.speakers["SPKA"]
    assert _ami.merge([(0.0, 1.0), (0.5, 2.0), (3.0, 3.0), (2.0, 2.5)]) == [(0.0, 2.5)]


def test_missing_data_skips_with_a_message(tmp_path, capsys):
    figures = real_speech.run_on(True, str(tmp_path / "nowhere"))
    assert len(figures) == 1 and math.isnan(figures[0]["value"])
    assert "no AMI data" in figures[0]["note"] and "--ami-root" in figures[0]["note"]
    assert "skipped" in capsys.readouterr().err


def test_decisions_are_shift_or_hold_after_200_ms_pauses(ami_root):
    recording = _ami.load_recordings(ami_root)[0]
    found = real_speech.turn_end_decisions(recording)
    assert found and {d.shift for d in found} == {True, False}
    onsets = sorted(s for segs in recording.speakers.values() for s, _ in segs)
    for d in found:
        assert d.silence_until_next_s >= real_speech.MIN_PAUSE_S - 1e-9
        assert d.ipu_end < d.horizon <= d.ipu_end + real_speech.MIN_PAUSE_S + 1e-9 and d.turn_start < d.ipu_end
        nxt = min(s for s in onsets if s > d.ipu_end)
        assert nxt == pytest.approx(d.ipu_end + d.silence_until_next_s)
        next_speaker = [k for k, segs in recording.speakers.items() if any(abs(s - nxt) < 1e-9 for s, _ in segs)]
        assert (not d.shift) == (next_speaker == [d.speaker]), "hold: the same speaker resumes first"


def test_perturbed_versions_break_the_timing(ami_root):
    view = _ami.load_recordings(ami_root)[0].view("SPKA", stereo=True)
    versions = real_speech.perturbed_versions(view)
    assert len(versions) == 3
    late = next(v for k, v in versions.items() if k.startswith("late"))
    n_changes = len(real_speech._speaker_changes(view))
    assert late.audio.shape[1] == view.audio.shape[1] + n_changes * int(real_speech.LATE_S * 16000)
    delayed = versions[f"partner delayed {real_speech.DELAY_S:g} s"]
    np.testing.assert_array_equal(delayed.audio[0], view.audio[0])
    assert delayed.segments[1][0][0] == pytest.approx(view.segments[1][0][0] + real_speech.DELAY_S)


def test_benchmark_figures_on_the_fixture(ami_root, tiny_models, tmp_path, monkeypatch):
    monkeypatch.setattr(real_speech, "BASELINE_JUDGE", tmp_path / "absent")  # one judge here, even where the repository keeps the baseline
    out = tmp_path / "figures.json"
    assert real_speech.main(["--ami-root", str(ami_root), "--quick", "--json", str(out)]) == 0
    figures = {f["name"]: f for f in json.loads(out.read_text())}
    n = figures["AMI turn-end decisions"]
    assert n["value"] > 0 and "2 recordings" in n["note"]
    judge_auc = figures["AMI turn-end ROC-AUC: judge judge"]
    assert 0.0 <= judge_auc["value"] <= 1.0 and "95 % CI" in judge_auc["note"]
    silence = figures["AMI turn-end ROC-AUC: silence length (any threshold)"]
    assert silence["value"] > 0.5, "on planned synthetic timing a long silence means a shift"
    agreement = [f for name, f in figures.items() if name.startswith("AMI agreement (a)")]
    assert len(agreement) == 2 and all(0 <= f["value"] <= 100 for f in agreement)
    pairwise = figures["AMI naturalness pairwise accuracy (natural > perturbed): predictor predictor"]
    assert 0.0 <= pairwise["value"] <= 1.0 and "pairs" in pairwise["note"]


def test_baseline_judge_is_compared_when_kept(tiny_models, tmp_path, monkeypatch):
    import os
    import shutil

    baseline = tmp_path / "baselines" / "espeak"
    shutil.copytree(os.environ["TURNEVAL_JUDGE"], baseline)
    monkeypatch.setattr(real_speech, "BASELINE_JUDGE", baseline)
    names = [name for name, _ in real_speech.judge_checkpoints()]
    assert names == ["judge judge", "judge espeak"]
    assert [name for name, _ in real_speech.judge_checkpoints(baseline=False)] == ["judge judge"]
    monkeypatch.setattr(real_speech, "BASELINE_JUDGE", tmp_path / "absent")
    assert len(real_speech.judge_checkpoints()) == 1
