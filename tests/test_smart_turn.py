"""smart-turn v3.2 as a turn-end judge: pipecat's input pipeline, the pause decisions, the report section.

The model file comes from ``pip install --no-deps pipecat-ai``; tests that run it skip when it
is absent, the rest (features, decisions, agreement, the message) run everywhere.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from turneval import smart_turn, smart_turn_report
from turneval.dataset_scripts.conversation_view import conversation_view
from turneval.dataset_scripts.synthetic import generate_dialogue
from turneval.pause_decision import ipu_pauses, smart_turn_clip


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _installed() -> bool:
    try:
        smart_turn.model_path()
    except smart_turn.SmartTurnUnavailable:
        return False
    return True


needs_pipecat = pytest.mark.skipif(not _installed(), reason="smart-turn model file absent (pip install --no-deps pipecat-ai)")


@pytest.fixture()
def no_pipecat(monkeypatch):
    """Pretend pipecat-ai is not installed."""
    real = importlib.util.find_spec
    monkeypatch.setattr(smart_turn.importlib.util, "find_spec", lambda name, *a: None if name == "pipecat" else real(name, *a))


class FixedTurnEnd(smart_turn.SmartTurnV3):
    """A stand-in turn-end model with a fixed P(complete) (no ONNX file needed)."""

    def __init__(self, p: float) -> None:
        self.p, self.path = p, Path("fixed.onnx")
        self.heard: list[int] = []

    def probability(self, user_audio: np.ndarray) -> float:
        self.heard.append(len(user_audio))
        return self.p


# ------------------------------------------------------------------------- pipecat's input pipeline
def test_segment_is_pipecats_last_8_s_of_int16_audio():
    short = np.full(16000, 0.5, dtype=np.float32)
    segment = smart_turn.pipecat_segment(short)
    assert segment.shape == (128000,) and not segment[:-16000].any()  # zero-padded at the start
    assert segment[-1] == np.float32(16384 / 32768)  # through int16, as pipecat buffers it
    ramp = np.arange(10 * 16000, dtype=np.float32) / (10 * 16000)
    kept = smart_turn.pipecat_segment(ramp)
    assert kept[-1] == pytest.approx(ramp[-1], abs=1 / 32768) and kept[0] == pytest.approx(ramp[2 * 16000], abs=1 / 32768)


def test_features_match_whisper_feature_extractor_and_pipecat():
    from transformers import WhisperFeatureExtractor

    rng = np.random.default_rng(0)
    audio = smart_turn.pipecat_segment((0.1 * rng.standard_normal(5 * 16000)).astype(np.float32))
    ours = smart_turn.log_mel_features(audio)
    reference = WhisperFeatureExtractor(chunk_length=8)(
        audio, sampling_rate=16000, padding="max_length", max_length=128000, truncation=True,
        do_normalize=True, return_tensors="np",
    ).input_features[0]
    assert ours.shape == (80, 800) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    with pytest.raises(ValueError, match="need 128000 samples"):
        smart_turn.log_mel_features(audio[:-1])
    if not _installed():
        return  # pipecat-ai not installed: the transformers check above stands
    # pipecat's own feature module imports numpy only, so it loads without the pipecat package.
    path = smart_turn.model_path().parents[1] / "_whisper_features.py"
    spec = importlib.util.spec_from_file_location("pipecat_whisper_features", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    np.testing.assert_array_equal(ours, module.compute_whisper_log_mel_features(audio, do_normalize=True))


# ------------------------------------------------------------------------- absent model file
def test_absent_model_file_says_what_to_install(no_pipecat):
    with pytest.raises(smart_turn.SmartTurnUnavailable, match=r"pip install --no-deps pipecat-ai"):
        smart_turn.model_path()
    with pytest.raises(smart_turn.SmartTurnUnavailable, match="pipecat-ai"):
        smart_turn.load_turn_end_judge("smart-turn")
    with pytest.raises(ValueError, match="unknown turn-end judge"):
        smart_turn.load_turn_end_judge("vap")


def test_report_cli_without_pipecat_exits_with_the_install_message(no_pipecat, tmp_path, capsys):
    from turneval.cli import main

    code = main(["report", str(EXAMPLES / "human_like.json"), "--no-judge", "--no-predictor", "--turn-end-judge", "smart-turn",
                 "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 1
    assert "pip install --no-deps pipecat-ai" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # the model is loaded before any work, nothing written


# ------------------------------------------------------------------------- pause decisions and agreement
def test_pause_decisions_of_both_metrics_follow_the_pausers_ipu_ends():
    dialogue = generate_dialogue(7, duration_s=40.0, style="human")
    dialogue.system_speaker = 1
    decisions = ipu_pauses(conversation_view(dialogue), smart_turn.VAD_STOP_S)
    assert {d.metric for d in decisions} == {"a", "d"}
    roles = {round(ipu["end"], 4): ipu["role"] for ipu in dialogue.metadata["ipus"]}
    for d in decisions:
        assert d.pauser == (0 if d.metric == "a" else 1)
        assert any(abs(e - d.speech_end) < 1e-9 for _, e in dialogue.segments[d.pauser])
        assert d.speech_end - 0.04 <= d.horizon <= d.speech_end + 0.25 and d.horizon <= d.time + 1e-9
        assert d.turn_start <= d.speech_end and d.until_pauser_resumes_s > 0 and d.silence_elapsed_s > 0
        assert roles[round(d.speech_end, 4)] == ("turn_final" if d.decision == "T" else "turn_internal")


def test_section_scores_p_complete_against_the_decisions_beside_the_judge():
    from turneval.dataset_scripts.labels import chunk_labels
    from turneval.metrics.agreement import conversation_agreement

    dialogue = generate_dialogue(7, duration_s=40.0, style="human")
    dialogue.system_speaker = 1
    labels = chunk_labels(dialogue)
    judge_probs = np.tile([0.0, 0.0, 0.0, 0.2, 0.8], (len(labels), 1))  # a judge that always says "continue"
    judge = conversation_agreement(dialogue, judge_probs, labels)
    model = FixedTurnEnd(0.9)  # always "the turn is complete"
    view = conversation_view(dialogue)
    section = smart_turn_report.turn_end_judge_section(view, model, judge)
    n = len(ipu_pauses(view, smart_turn.VAD_STOP_S))
    assert section["n_instances"] == n == len(model.heard) and section["name"] == "smart-turn v3.2"
    for metric in ("a", "d"):
        decisions = section["metrics"][metric]["decisions"]
        assert decisions["T"]["agreement"] == 1.0 and decisions["C"]["agreement"] == 0.0
        same = section["judge_same_instances"][metric]["decisions"]
        assert same["T"]["agreement"] == 0.0 and same["C"]["agreement"] == 1.0
    assert all(row["label"] == "T" and row["judge_label"] == "C" for row in section["instances"])
    # the audio heard: from the turn start minus 0.5 s to the horizon
    first = ipu_pauses(view, smart_turn.VAD_STOP_S)[0]
    assert model.heard[0] == len(smart_turn_clip(dialogue, first))
    assert smart_turn_report.turn_end_judge_section(view, FixedTurnEnd(0.1))["judge_same_instances"] is None


# ------------------------------------------------------------------------- the real model
@needs_pipecat
def test_smart_turn_model_gives_a_probability():
    model = smart_turn.SmartTurnV3()
    rng = np.random.default_rng(0)
    p = model.probability((0.05 * rng.standard_normal(3 * 16000)).astype(np.float32))
    assert 0.0 <= p <= 1.0


@needs_pipecat
def test_features_run_on_one_blas_thread_with_the_same_values(monkeypatch):
    # OpenBLAS's idle threads spin after the mel product: a second thread doubled the stage's CPU
    from threadpoolctl import threadpool_info

    def blas_threads() -> int:
        return max(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas")

    model = smart_turn.SmartTurnV3()
    audio = (0.05 * np.random.default_rng(1).standard_normal(3 * 16000)).astype(np.float32)
    before = blas_threads()
    real, seen = smart_turn.log_mel_features, []

    def spy(segment: np.ndarray) -> np.ndarray:
        seen.append(blas_threads())
        return real(segment)

    monkeypatch.setattr(smart_turn, "log_mel_features", spy)
    p = model.probability(audio)
    assert seen == [1] and blas_threads() == before
    features = real(smart_turn.pipecat_segment(audio))[None]  # with every BLAS thread
    (expected,) = model.session.run(None, {"input_features": features})[:1]
    assert p == float(np.asarray(expected).reshape(-1)[0])


@needs_pipecat
def test_report_with_smart_turn_labels_its_agreement(tmp_path):
    from turneval.cli import main

    out = tmp_path / "out"
    assert main(["report", str(EXAMPLES / "human_like.json"), "--no-predictor", "--turn-end-judge", "smart-turn", "--out", str(out), "--quiet"]) == 0
    data = json.loads((out / "report.json").read_text())
    te = data["turn_end_judge"]
    assert te["name"] == "smart-turn v3.2" and te["n_instances"] > 0 and set(te["metrics"]) <= {"a", "d"}
    assert te["judge_same_instances"] is not None
    assert data["judge"]["precision"] in ("float32", "bfloat16")  # the judge's encoder, streamed over the call
    assert data["judge"]["cue_precision"] in ("float32", "bfloat16")  # Whisper's cue, read at every (a)/(d) decision
    keys = {row["key"] for row in data["summary"]}
    assert "turn_end_judge.a.T" in keys and "agreement.a.T" in keys
    page = (out / "report.html").read_text()
    assert "Turn-end agreement: smart-turn v3.2 beside the judge" in page
    import jsonschema

    from turneval.reporting import report_schema

    jsonschema.validate(data, report_schema())
