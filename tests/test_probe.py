"""turneval probe, the parts that need no connection: wire formats, placement on the clock, scenarios, figures."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from turneval.probe import pipecat_frames
from turneval.probe.energy import sound_spans
from turneval.probe.recorder import Recording, timing, write_sample
from turneval.probe.scenarios import ScenarioError, build_sample, load_scenarios, load_stimuli
from turneval.probe.summary import gate_figures, known_figures, task_timing
from turneval.probe.transports import (
    AgentAudio,
    AgentClear,
    AgentFormatError,
    AgentMessage,
    PipecatTransport,
    RawPCMTransport,
)


REPO = Path(__file__).resolve().parents[1]

# Bytes written by pipecat-ai 1.14.0's own frames_pb2 (protobuf 7.36) for the same frames.
PIPECAT_AUDIO = "120b1a040100ffff20807d2801"  # audio=01 00 ff ff, sample_rate=16000, num_channels=1
PIPECAT_INTERRUPTION = "2a00"
PIPECAT_TEXT = "0a041a026869"  # text "hi"
PIPECAT_MESSAGE = "220a0a087b2261223a20317d"  # message data '{"a": 1}'
PIPECAT_OUTPUT_AUDIO = ("122a080712154f7574707574417564696f5261774672616d6523301a02000120c0bb0128013094b4e4f4cb03")
# id=7, name=OutputAudioRawFrame#0, audio=00 01, 24000 Hz, mono, pts=123456789012


def test_pipecat_frames_encode_as_pipecat_does():
    assert pipecat_frames.encode_audio(bytes([1, 0, 255, 255]), 16000, 1).hex() == PIPECAT_AUDIO
    assert pipecat_frames.encode_interruption().hex() == PIPECAT_INTERRUPTION
    assert pipecat_frames.encode_message({"a": 1}).hex() == PIPECAT_MESSAGE


def test_pipecat_frames_decode_what_pipecat_sends():
    frame = pipecat_frames.decode_frame(bytes.fromhex(PIPECAT_OUTPUT_AUDIO))
    assert (frame.kind, frame.audio, frame.sample_rate, frame.num_channels) == ("audio", b"\x00\x01", 24000, 1)
    assert frame.fields[6] == 123456789012  # pts, a varint past 32 bits
    assert pipecat_frames.decode_frame(bytes.fromhex(PIPECAT_TEXT)).text == "hi"
    assert pipecat_frames.decode_frame(bytes.fromhex(PIPECAT_MESSAGE)).message == {"a": 1}
    assert pipecat_frames.decode_frame(bytes.fromhex(PIPECAT_INTERRUPTION)).kind == "interruption"
    with pytest.raises(pipecat_frames.PipecatWireError):
        pipecat_frames.decode_frame(b"\x12\x0b\x1a")  # truncated


def test_transports_decode_and_refuse_wrong_formats():
    raw = RawPCMTransport("ws://127.0.0.1:1/x", sample_rate=16000)
    (event,) = raw.decode(np.array([1, -2], dtype="<i2").tobytes())
    assert isinstance(event, AgentAudio) and event.samples.tolist() == [1, -2]
    assert isinstance(raw.decode('{"type": "clear"}')[0], AgentClear)
    assert isinstance(raw.decode('{"type": "transcript", "text": "hi"}')[0], AgentMessage)
    with pytest.raises(AgentFormatError, match="not 16-bit PCM"):
        raw.decode(b"\x00\x01\x02")
    with pytest.raises(AgentFormatError, match=r"ws://127.0.0.1:1/x.*24000 Hz.*--sample-rate 24000"):
        raw.decode('{"type": "config", "sample_rate": 24000}')

    pc = PipecatTransport("ws://127.0.0.1:1/ws", sample_rate=16000)
    assert pc.encode_audio(np.array([1, -1], dtype=np.int16)) == bytes.fromhex(PIPECAT_AUDIO)
    assert isinstance(pc.decode(bytes.fromhex(PIPECAT_INTERRUPTION))[0], AgentClear)
    with pytest.raises(AgentFormatError, match="24000 Hz.*audio_out_sample_rate"):
        pc.decode(bytes.fromhex(PIPECAT_OUTPUT_AUDIO))
    with pytest.raises(AgentFormatError, match="not a Pipecat protobuf frame"):
        pc.decode(b"\xff\xff")


def test_start_and_end_messages_travel_in_each_wire_format():
    raw = RawPCMTransport("ws://x", start_message={"type": "start"}, end_message={"type": "stop"})
    assert raw.start_messages() == ['{"type": "start"}'] and raw.end_messages() == ['{"type": "stop"}']
    pc = PipecatTransport("ws://x", start_message={"a": 1})
    assert pc.start_messages() == [bytes.fromhex(PIPECAT_MESSAGE)] and pc.end_messages() == []


def test_recording_plays_bursts_back_to_back_and_clears_the_queue():
    rec = Recording(1000)
    rec.add_audio(np.full(100, 1000, dtype=np.int16), 0.5)  # 0.1 s arriving at 0.5 s
    rec.add_audio(np.full(100, 2000, dtype=np.int16), 0.5)  # a burst: queued after the first
    rec.add_audio(np.full(100, 3000, dtype=np.int16), 1.0)  # after a gap: plays on arrival
    track = rec.agent_track(1200)
    assert track[500:600].max() == pytest.approx(1000 / 32768) and track[600:700].min() == pytest.approx(2000 / 32768)
    assert not track[700:1000].any() and track[1000:1100].min() > 0
    rec.clear(1.05)  # interrupted 50 ms into the last chunk: the rest is dropped
    track = rec.agent_track(1200)
    assert track[1000:1050].min() > 0 and not track[1050:].any()
    assert rec.clears == [1.05]


def test_timing_reads_response_and_stop_latency_from_the_agent_track():
    sr = 16000
    agent = np.zeros(5 * sr, dtype=np.float32)
    agent[int(1.0 * sr) : int(1.3 * sr)] = 0.3  # a backchannel before the reference
    agent[int(2.25 * sr) : int(4.0 * sr)] = 0.3  # the answer
    out = timing(agent, sr, reference_s=1.5, event=(3.0, 3.5))
    assert out["response_latency_s"] == pytest.approx(0.75, abs=0.006)
    assert out["talking_at_reference"] is False
    assert out["stop_latency_s"] == pytest.approx(1.0, abs=0.006)
    assert sound_spans(agent, sr) == [(1.0, 1.3), (2.25, 4.0)]


def test_write_sample_is_all_or_nothing(tmp_path, monkeypatch):
    from turneval.probe import recorder

    caller = np.zeros(1600, dtype=np.float32)
    folder = tmp_path / "v1.0" / "candor_turn_taking" / "1"
    real = recorder._write_wav

    def fail_on_output(path, audio, sr):
        if path.name == "output.wav":
            raise KeyboardInterrupt  # Ctrl-C while writing
        real(path, audio, sr)

    monkeypatch.setattr(recorder, "_write_wav", fail_on_output)
    with pytest.raises(KeyboardInterrupt):
        write_sample(folder, caller, caller, 16000, lambda d: None, {})
    assert not folder.exists() and list(folder.parent.iterdir()) == []  # no half-written sample, no temp folder
    monkeypatch.setattr(recorder, "_write_wav", real)
    write_sample(folder, caller, caller, 16000, lambda d: (d / "turn_taking.json").write_text("[]"), {"status": "ok"})
    assert sorted(p.name for p in folder.iterdir()) == ["input.wav", "output.wav", "probe.json", "stereo.wav",
                                                          "turn_taking.json"]


def test_scenario_metadata_follows_the_parts():
    pause = build_sample({"task": "synthetic_pause_handling",
                          "user": [{"say": "so I was thinking", "punct": ","}, {"say": "we could go", "after": 1.0}]},
                         0, "test", REPO)
    (start, end) = pause.metadata["pause.json"][0]["timestamp"]
    assert end - start == pytest.approx(1.0, abs=0.002) and pause.reference_s == pytest.approx(start, abs=0.001)
    assert pause.tail_s == 0.0  # the recording stops with the caller
    words = pause.metadata["input.json"]["chunks"]
    assert [w["text"] for w in words] == ["so", "i", "was", "thinking", "we", "could", "go"]
    assert words[0]["timestamp"][0] == pytest.approx(0.3, abs=0.01)

    inter = build_sample({"task": "synthetic_user_interruption", "id": "7",
                          "user": [{"say": "how long should I boil an egg"}, {"say": "sorry soft boiled", "after": 2.0}]},
                         1, "test", REPO)
    (i_start, i_end) = inter.metadata["interrupt.json"][0]["timestamp"]
    assert inter.reference_s == pytest.approx(i_end, abs=0.001) and inter.event[0] == pytest.approx(i_start, abs=0.001)
    assert inter.folder == "v1.0/synthetic_user_interruption/7"
    assert inter.duration_s == pytest.approx(i_end + 3.0, abs=0.01)

    v15 = build_sample({"task": "background_speech", "user": [{"say": "how do I reset my router"},
                        {"say": "did you see the match", "after": 2.0, "gain": 0.3, "voice": "en-us+f3"}]}, 0, "t", REPO)
    assert v15.folder.startswith("v1.5/") and v15.metadata["metadata.json"]["current_turn_text"] == "did you see the match"


def test_scenario_errors_name_the_file_and_the_fix(tmp_path):
    with pytest.raises(ScenarioError, match="not a Full-Duplex-Bench task folder"):
        build_sample({"task": "chit_chat", "user": [{"say": "hi"}]}, 0, "calls.yaml, sample 1", tmp_path)
    with pytest.raises(ScenarioError, match="calls.yaml, sample 1.*`user` must be a list"):
        build_sample({"task": "candor_turn_taking"}, 0, "calls.yaml, sample 1", tmp_path)
    bad = tmp_path / "calls.yaml"
    bad.write_text("samples: [unclosed")
    with pytest.raises(ScenarioError, match="calls.yaml: not a valid scenario file"):
        load_scenarios(bad)
    (tmp_path / "x.json").write_text(json.dumps({"name": "no samples"}))
    with pytest.raises(ScenarioError, match="`samples:` list"):
        load_scenarios(tmp_path / "x.json")
    with pytest.raises(ScenarioError, match="no such scenario file or stimuli folder.*smoke"):
        load_scenarios(tmp_path / "missing.yaml")
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps({"samples": [{"task": "candor_turn_taking", "id": "1", "user": [{"say": "hi"}]}] * 2}))
    with pytest.raises(ScenarioError, match="share the id 1"):
        load_scenarios(dup)


def test_builtin_suites_cover_the_benchmark_tasks():
    samples = load_scenarios("fdb")
    tasks = {s.task for s in samples}
    assert {"synthetic_pause_handling", "candor_turn_taking", "synthetic_user_interruption", "icc_backchannel"} <= tasks
    assert {"user_interruption", "user_backchannel", "talking_to_other", "background_speech"} <= tasks
    assert len({s.folder for s in samples}) == len(samples)
    voices = {s.metadata["input.json"]["chunks"][0]["timestamp"][1] for s in samples if s.task == "candor_turn_taking"}
    assert len(voices) == 2  # different callers, different words: not one clip twice


def test_stimuli_folder_plays_input_wav_and_copies_its_metadata():
    (sample,) = load_stimuli(REPO / "tests" / "data" / "fdb_run" / "v1.5")
    assert sample.task == "user_interruption" and sample.folder == "v1.5/user_interruption/1"
    assert set(sample.copies) == {"metadata.json", "input.json", "content_tag.json"}  # the old output.json is not copied
    assert sample.reference_s == pytest.approx(5.0) and sample.duration_s == pytest.approx(9.0, abs=0.01)
    with pytest.raises(ScenarioError, match="no sample folder holds an input.wav"):
        load_stimuli(REPO / "tests" / "data" / "fdb_run" / "v1.0" / "candor_turn_taking")


class _Outcome:
    def __init__(self, task, status, response, stop):
        from types import SimpleNamespace

        self.sample = SimpleNamespace(task=task)
        self.status = status
        self.timing = {"response_latency_s": response, "stop_latency_s": stop}


def test_gate_figures_feed_the_report_gates():
    from turneval.gates import evaluate, parse_requirement

    outcomes = [_Outcome("candor_turn_taking", "ok", 0.6, None), _Outcome("candor_turn_taking", "ok", 0.8, None),
                _Outcome("candor_turn_taking", "disconnected", None, None),
                _Outcome("candor_turn_taking", "agent_first", 0.0, None),  # an earlier call's audio: not scored
                _Outcome("user_interruption", "ok", 1.1, 0.2)]
    by_task = task_timing(outcomes)
    assert by_task["candor_turn_taking"] == {"n": 4, "failed": 1, "excluded": 1, "response_latency_s": 0.7,
                                             "n_response": 2, "stop_latency_s": None, "n_stop": 0,
                                             "response_latency_ci_s": [0.6, 0.8]}
    figures = gate_figures(by_task, {"median_ms": 1.5}, None, {"response_latency_s": 0.65})
    assert figures["probe.response_latency_s"] == 0.7 and figures["failed_samples"] == 1
    assert figures["excluded_samples"] == 1
    assert figures["transport_delay_ms"] == 1.5 and figures["probe.user_interruption.stop_latency_s"] == 0.2
    names = known_figures()
    results = evaluate([parse_requirement(t, names) for t in
                        ("probe.response_latency_s<=0.6", "failed_samples==0", "response_latency_s<=1",
                         "fdb.candor_turn_taking.tor>=0.5")], figures)
    assert [r.passed for r in results] == [False, False, True, False]  # fdb did not run: not measured fails
    with pytest.raises(ValueError, match="unknown figure"):
        parse_requirement("probe.nonsense<=1", names)
