"""`turneval report` and `turneval.report()`: the pipeline, the files, the HTML, bad input."""
from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import soundfile as sf
import torch

import turneval
from turneval.cli import main
from turneval.dataset_scripts.audio import load_stereo
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.synthetic import generate_dialogue, write_dialogue
from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge
from turneval.reporting import (
    Report,
    format_summary,
    judge_precision,
    judge_probabilities,
    report,
    report_schema,
    save_report,
)


TINY_WHISPER = {"d_model": 64, "encoder_layers": 2, "encoder_attention_heads": 4, "encoder_ffn_dim": 128, "max_source_positions": 1500}
TINY_PREDICTOR = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64, num_mel_bins=32, num_channel_layers=1, num_cross_layers=1)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    """Random-init judge (causal, 4 s context) and predictor saved as safetensors checkpoints."""
    root = tmp_path_factory.mktemp("checkpoints")
    torch.manual_seed(0)
    judge = TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="causal", context_s=4.0))
    with torch.no_grad():
        judge.classifier.weight.normal_(std=2.0)  # spread the probabilities so labels differ
    judge.save_pretrained(root / "judge")
    FutureActivityPredictorModel(FutureActivityPredictorConfig(**TINY_PREDICTOR)).save_pretrained(root / "predictor")
    return {"judge": root / "judge", "predictor": root / "predictor"}


@pytest.fixture(scope="module")
def conversation(tmp_path_factory) -> dict[str, Path]:
    """A 20 s synthetic eager-duplex session (system on channel 1): stereo wav + annotation JSON."""
    root = tmp_path_factory.mktemp("conversation")
    dialogue = generate_dialogue(3, duration_s=20.0, style="eager_duplex", system_speaker=1)
    wav, annotations = write_dialogue(dialogue, root)
    return {"wav": wav, "json": annotations, "dialogue": dialogue, "root": root}


@pytest.fixture(scope="module")
def full_report(conversation, checkpoints) -> Report:
    return report(conversation["wav"], system_channel=1, judge=checkpoints["judge"], predictor=checkpoints["predictor"], progress=False)


def test_report_has_every_section_with_times(full_report, conversation):
    rep = full_report
    duration = conversation["dialogue"].duration
    assert rep.conversation["system_channel"] == 1 and rep.conversation["user_channel"] == 0
    assert rep.conversation["segments_source"] == "vad"
    assert all(rep.segments), "VAD found speech on both channels"
    n_chunks = int(duration / 0.04 + 1e-9)
    probs = np.asarray(rep.judge["probabilities"], dtype=float)
    assert probs.shape == (n_chunks, 5)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-3)
    instances = rep.agreement["instances"]
    assert instances and rep.agreement["n_instances"] == len(instances)
    for inst in instances:
        assert 0 < inst["time"] < duration
        assert inst["agrees"] == (inst["judge_label"] == inst["decision"])
    assert rep.naturalness["worst_units"] and np.isfinite(rep.naturalness["naturalness_score"])
    assert rep.full_duplex_timing["fdbench"]["n_rounds"] >= 1
    assert "derived" in rep.full_duplex_timing["derived_from"]
    assert rep.statistics["ipu_count"] > 0 and rep.backchannel_timing["listener"] == "system"


def test_every_section_is_a_dataclass_of_its_own(full_report):
    """No section's figures in an untyped dict: each is a Section with named fields, read by
    attribute or, as report.json names it, by key."""
    from dataclasses import fields

    from turneval.reporting import Section

    for f in fields(Report):
        assert "dict[str, Any]" not in str(f.type), f.name
        value = getattr(full_report, f.name)
        if f.name not in ("segments", "notes", "summary", "transcript", "turn_end_judge"):
            assert isinstance(value, Section), f.name
    assert full_report.statistics.gap_mean_s == full_report.statistics["gap_mean_s"]
    assert full_report.naturalness.lambda_ == full_report.naturalness["lambda"] == full_report.to_dict()["naturalness"]["lambda"]
    assert "audio" in full_report.conversation and "user_audio" not in full_report.conversation.to_dict()
    with pytest.raises(TypeError, match="no field for surprise"):
        type(full_report.statistics).from_dict({**full_report.statistics.to_dict(), "surprise": 1})


def test_json_round_trip_and_references(full_report):
    data = json.loads(full_report.to_json())
    assert data["schema_version"] == 1
    keys = {row["key"]: row for row in data["summary"]}
    assert keys["occurrence.a"]["reference"] == 15.9  # Talking Turns Table 2, human in domain
    assert keys["agreement.a.T"]["reference"] == 81.2  # Table 6
    assert keys["statistics.speaking_rate_wpm"]["reference"] == 204.5  # Table 8
    assert all(entry["table"] in ("Table 2", "Table 6", "Table 8") for entry in data["reference_values"]["values"])
    assert "reference" in format_summary(full_report)


def test_json_schema(full_report):
    schema = report_schema()
    jsonschema.validate(json.loads(full_report.to_json()), schema)
    broken = json.loads(full_report.to_json())
    del broken["conversation"]["duration_s"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_api_is_reachable_from_the_package(conversation):
    rep = turneval.report(conversation["json"], judge=False, predictor=False, progress=False)
    assert isinstance(rep, turneval.Report)
    assert rep.conversation["segments_source"] == "annotations"
    assert rep.judge is None and rep.agreement is None and rep.naturalness is None
    assert any("--no-judge" in n for n in rep.notes) and any("--no-predictor" in n for n in rep.notes)
    # annotations carry words: the word rates of Talking Turns Table 8 exist
    assert rep.statistics["speaking_rate_wpm_system"] > 0


def test_reading_a_conversation_returns_its_facts_and_changes_no_dialogue(conversation):
    """The input's facts (files, where the segments came from, band) come back beside the Dialogue,
    not through its metadata, and a Dialogue handed in is copied, not changed."""
    from turneval.reporting import ConversationInput, InputSettings, read_conversation

    dialogue, facts = read_conversation(ConversationInput(conversation["json"]), InputSettings())
    assert facts.segments_source == "annotations" and facts.annotations == str(conversation["json"])
    assert facts.source == {"audio": str(conversation["wav"])} and facts.bandwidth["input_sample_rate_hz"] == SAMPLE_RATE
    assert not {"segments_source", "source", "bandwidth", "input_notes"} & set(dialogue.metadata)

    given = conversation["dialogue"]
    audio, metadata, system = given.audio, dict(given.metadata), given.system_speaker
    copy, facts = read_conversation(ConversationInput(given, system_channel=0), InputSettings(band_limit="telephone"))
    assert given.audio is audio and given.metadata == metadata and given.system_speaker == system
    assert copy.system_speaker == 0 and copy.audio is not audio and facts.segments_source == "given"
    assert facts.bandwidth["band_limit"] == "telephone"


def test_streamed_judge_equals_whole_file_scoring(checkpoints, conversation):
    judge = TurnTakingJudge.from_pretrained(str(checkpoints["judge"])).eval()
    audio = conversation["dialogue"].audio[:, : 9 * SAMPLE_RATE]
    streamed = judge_probabilities(judge, audio, precision="float32")
    whole = judge.score(audio.mean(axis=0)).probabilities
    np.testing.assert_allclose(streamed, whole, atol=1e-5)


def test_judge_in_bfloat16_streams_close_to_float32_and_leaves_the_judge_as_it_was(checkpoints, conversation, monkeypatch):
    from turneval.whisper_completion import PRECISION_ENV_VAR, encoder_dtype

    judge = TurnTakingJudge.from_pretrained(str(checkpoints["judge"])).eval()
    audio = conversation["dialogue"].audio[:, : 12 * SAMPLE_RATE]
    exact = judge_probabilities(judge, audio, precision="float32")
    low = judge_probabilities(judge, audio, precision="bfloat16")  # a copy's encoder in bfloat16, its head in float32
    assert judge.encoder.conv1.weight.dtype == torch.float32  # the judge itself is not lowered
    assert not np.array_equal(low, exact) and np.abs(low - exact).max() < 0.1
    assert np.corrcoef(low.ravel(), exact.ravel())[0, 1] > 0.999
    np.testing.assert_allclose(low.sum(axis=1), 1.0, atol=1e-5)  # distributions, from a float32 softmax
    assert judge_precision(judge, "bfloat16") == "bfloat16" and judge_precision(judge, "float32") == "float32"
    monkeypatch.setenv(PRECISION_ENV_VAR, "float32")  # one setting for every Whisper encoder of the report
    assert judge_precision(judge) == "float32"
    monkeypatch.delenv(PRECISION_ENV_VAR)
    assert judge_precision(judge) == str(encoder_dtype("auto", judge.device)).removeprefix("torch.")


def test_two_mono_files_equal_the_stereo_file(conversation, tmp_path):
    audio = conversation["dialogue"].audio
    sf.write(tmp_path / "user.wav", audio[0], SAMPLE_RATE)
    sf.write(tmp_path / "system.wav", audio[1], SAMPLE_RATE)
    mono = report(user_audio=tmp_path / "user.wav", system_audio=tmp_path / "system.wav", judge=False, predictor=False, progress=False)
    stereo = report(conversation["wav"], judge=False, predictor=False, progress=False)
    assert mono.conversation["user_audio"].endswith("user.wav")
    for ours, theirs in zip(mono.segments, stereo.segments):
        np.testing.assert_allclose(ours, theirs, atol=0.05)


def test_cli_writes_json_and_self_contained_html(conversation, checkpoints, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["report", str(conversation["wav"]), "--system-channel", "1", "--judge", str(checkpoints["judge"]),
                 "--predictor", str(checkpoints["predictor"]), "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "reference (human)" in printed and "15.9 %" in printed
    data = json.loads((out / "report.json").read_text())
    page = (out / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') == 1  # the response gaps, embedded
    assert page.count("<svg ") == 1 and 'class="timeline"' in page  # the timeline, inline
    assert "<script" not in page and not re.search(r'(src|href)="https?://', page)  # nothing fetched
    assert f"{data['naturalness']['naturalness_score']:.3g}" in page
    assert "Turn-taking agreement" in page and "Worst boundary units" in page and "FD-Bench" in page
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json"]


def _fails(argv: list[str], capsys) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0, err
    return err


def test_bad_input_is_explained_and_nothing_is_written(tmp_path, conversation, capsys):
    out = tmp_path / "out"
    base = ["--out", str(out), "--no-judge", "--no-predictor", "--quiet"]
    mono = tmp_path / "mono.wav"
    sf.write(mono, conversation["dialogue"].audio[0], SAMPLE_RATE)
    err = _fails(["report", str(mono), *base], capsys)
    assert "mono.wav" in err and "expected 2 channel(s), found 1" in err
    corrupt = tmp_path / "corrupt.wav"
    corrupt.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunkjunk")
    assert "corrupt.wav" in _fails(["report", str(corrupt), *base], capsys)
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros((SAMPLE_RATE * 2, 2), dtype=np.float32), SAMPLE_RATE)
    assert "silent" in _fails(["report", str(silent), *base], capsys)
    quiet = tmp_path / "no_speech.wav"
    noise = 1e-4 * np.random.default_rng(0).standard_normal((SAMPLE_RATE * 3, 2)).astype(np.float32)
    sf.write(quiet, noise, SAMPLE_RATE)
    assert "no speech" in _fails(["report", str(quiet), *base], capsys)
    assert "not found" in _fails(["report", str(tmp_path / "missing.wav"), *base], capsys)
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"segments": [[[0, 1]],\n oops')
    assert "bad.json:2" in _fails(["report", str(conversation["wav"]), "--annotations", str(bad_json), *base], capsys)
    assert not out.exists()
    out.write_text("a file, not a folder")
    # the output location is checked before the analysis
    assert "--out" in (err := _fails(["report", str(conversation["json"]), *base], capsys)) and "is a file, not a folder" in err


def test_missing_checkpoint_says_how_to_fix(tmp_path, conversation, capsys):
    err = _fails(["report", str(conversation["wav"]), "--judge", str(tmp_path / "nowhere"), "--no-predictor", "--out", str(tmp_path / "o")], capsys)
    assert "nowhere" in err and "--no-judge" in err
    err = _fails(["report", str(conversation["wav"]), "--no-judge", "--predictor", str(tmp_path), "--out", str(tmp_path / "o")], capsys)
    assert "--no-predictor" in err
    err = _fails(["report", str(conversation["wav"]), "--judge", "nobody/no-such-judge", "--no-predictor", "--out", str(tmp_path / "o")], capsys)
    assert "nobody/no-such-judge" in err and "Hub id" in err and "--no-judge" in err
    assert not (tmp_path / "o").exists()


def test_failed_html_leaves_no_json(full_report, tmp_path, monkeypatch):
    import turneval.reporting.html_report as html_page

    def broken(_):
        raise RuntimeError("plot failed")

    monkeypatch.setattr(html_page, "render_html", broken)
    with pytest.raises(RuntimeError):
        save_report(full_report, tmp_path / "out")
    assert not (tmp_path / "out" / "report.json").exists()


def test_bundled_examples_show_the_system_behaviours(repo_root):
    """Cascaded: long gaps, no backchannels; eager duplex: interruptions (ground-truth segments)."""
    examples = repo_root / "examples"
    reps = {
        name: report(examples / f"{name}.json", system_channel=1, judge=False, predictor=False, progress=False)
        for name in ("human_like", "cascaded_like", "eager_duplex_like")
    }
    gap = {name: r.statistics["gap_mean_s"] for name, r in reps.items()}
    assert gap["cascaded_like"] > gap["human_like"] and gap["cascaded_like"] > gap["eager_duplex_like"]
    assert reps["cascaded_like"].backchannel_timing["n_backchannels"] == 0
    interruptions = {name: r.statistics["interruption_count_B"] for name, r in reps.items()}
    assert interruptions["eager_duplex_like"] > interruptions["cascaded_like"]
    assert interruptions["eager_duplex_like"] > interruptions["human_like"]


def test_default_predictor_hears_timing_not_the_voice_on_the_examples(repo_root):
    """The default predictor reads voice activity only (trained on real Switchboard timing) and, a
    second ahead, when each speaker's stretch of speech ends, so it expects an answer when a turn
    ends: the human-like example ranks above the cascaded-like one (long silences after each turn)
    and the eager-duplex-like one (talks over the user). The voice-activity predictor without the
    look-ahead ranks cascaded-like above human-like (model card, "Known groups")."""
    from turneval.checkpoints import bundled_checkpoint

    examples = repo_root / "examples"
    predictor = bundled_checkpoint("predictor")
    assert predictor is not None and predictor.name == "future_activity_predictor_lookahead"
    names = ("human_like", "cascaded_like", "eager_duplex_like")
    score = {name: report(examples / f"{name}.json", judge=False, predictor=predictor, progress=False).naturalness["naturalness_score"]
             for name in names}
    assert score["human_like"] > score["cascaded_like"] and score["human_like"] > score["eager_duplex_like"]


def test_transformers_pipeline_task(checkpoints, conversation):
    from transformers import pipeline

    import turneval.pipelines  # noqa: F401  (registers the task)

    judge = pipeline("turn-taking-judgement", model=str(checkpoints["judge"]))
    rows = judge(str(conversation["wav"]))
    expected = judge_probabilities(judge.model, load_stereo(conversation["wav"]), precision="float32")  # the file holds 16-bit samples
    assert len(rows) == len(expected)
    assert rows[0]["chunk"] == 1 and rows[0]["time"] == pytest.approx(0.04)
    np.testing.assert_allclose([list(r["scores"].values()) for r in rows], expected, atol=1e-4)
    assert all(r["label"] == max(r["scores"], key=r["scores"].get) for r in rows)


def test_system_channel_defaults_to_the_annotations(conversation, tmp_path, capsys):
    data = json.loads(conversation["json"].read_text())
    data["system_speaker"] = 0
    data["audio_path"] = str(conversation["wav"])
    (tmp_path / "swapped.json").write_text(json.dumps(data))
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "swapped.json"), "--no-judge", "--no-predictor", "--no-html", "--out", str(out), "--quiet"]) == 0
    assert json.loads((out / "report.json").read_text())["conversation"]["system_channel"] == 0
    assert main(["report", str(tmp_path / "swapped.json"), "--system-channel", "1", "--no-judge", "--no-predictor", "--out", str(out), "--quiet"]) == 0
    assert json.loads((out / "report.json").read_text())["conversation"]["system_channel"] == 1


def test_json_only_save_removes_an_older_page(full_report, tmp_path):
    out = tmp_path / "out"
    assert set(save_report(full_report, out)) == {"report.json", "report.html"}
    assert set(save_report(full_report, out, html=False)) == {"report.json"}
    assert not (out / "report.html").exists()  # the old page no longer described this report.json


def test_inputs_are_checked_before_any_model_loads(tmp_path, monkeypatch):
    import turneval.reporting.build as build

    def no_model(*args, **kwargs):
        raise AssertionError("a model was loaded before the input was checked")

    monkeypatch.setattr(build, "load_judge_model", no_model)
    monkeypatch.setattr(build, "load_predictor_model", no_model)
    with pytest.raises(Exception, match="missing.wav"):
        report(tmp_path / "missing.wav")
    broken = tmp_path / "call.json"
    broken.write_text('{"segments": [[], []], "audio_path": "gone.wav"}', encoding="utf-8")
    with pytest.raises(Exception, match="gone.wav"):
        report(broken)


def test_devices_are_parsed_not_guessed():
    from turneval.reporting import ReportError, check_device

    assert check_device("cpu") == "cpu"
    with pytest.raises(ReportError, match="not a device"):
        check_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ReportError, match="CUDA is not available"):
            check_device("cuda:1")
    if not torch.backends.mps.is_available():
        with pytest.raises(ReportError, match="MPS"):
            check_device("mps")


def test_report_help_shows_examples_and_where_checkpoints_come_from(capsys):
    from turneval.cli import main

    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = capsys.readouterr().out
    assert "examples:" in text and "--user user.wav --system agent.wav" in text
    assert "$TURNEVAL_JUDGE" in text and "$TURNEVAL_PREDICTOR" in text and "Hub id" in text and "cuda:N" in text


def test_the_report_uses_the_judge_checkpoints_own_thresholds(conversation, checkpoints, tmp_path):
    import shutil

    from turneval.metrics.agreement import DEFAULT_THRESHOLDS

    tuned = tmp_path / "judge"
    shutil.copytree(checkpoints["judge"], tuned)
    config = json.loads((tuned / "config.json").read_text())
    config["agreement_thresholds"] = {"a": -0.8, "b": 0.9}
    (tuned / "config.json").write_text(json.dumps(config))
    rep = report(conversation["wav"], system_channel=1, judge=tuned, predictor=False, progress=False)
    used = rep.agreement["thresholds"]
    assert used["a"] == used["d"] == -0.8 and used["b"] == 0.9 and used["c"] == DEFAULT_THRESHOLDS["c"]
    assert rep.settings["agreement_thresholds"] == used and "checkpoint" in rep.settings["agreement_thresholds_source"]
    for inst in rep.agreement["instances"]:
        score = inst["probs"][3] - inst["probs"][4]
        if inst["metric"] == "a":
            assert inst["judge_label"] == ("T" if score > -0.8 else "C")
    for metric, result in rep.agreement["metrics"].items():
        assert result["threshold"] == used[metric]
