"""turneval probe's telephone wires and call isolation, against the loopback mock agents (no network).

The end-to-end runs against real Pipecat servers built with pipecat's own serializers are in
tests/test_probe_pipecat.py (skipped where pipecat's dependencies are not installed).
"""
from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest

from turneval import cli
from turneval.probe import telephony
from turneval.probe.mock_agents import MockAgent, MockFaults
from turneval.probe.runner import ProbeSettings, play_sample, run_samples
from turneval.probe.scenarios import build_sample, load_scenarios
from turneval.probe.transport_registry import make_transport
from turneval.probe.transports import AgentAudio, AgentClear, AgentFormatError, AgentMark, AgentMessage


REPO = Path(__file__).resolve().parents[1]

# The interrupt message each provider's agent sends, as pipecat-ai 1.14's serializers write it.
PIPECAT_CLEARS = {
    "twilio": {"event": "clear", "streamSid": "MZ1"},
    "telnyx": {"event": "clear"},
    "plivo": {"event": "clearAudio", "streamId": "S1"},
    "exotel": {"event": "clear", "stream_sid": "S1"},
    "vonage": {"action": "clear"},
    "genesys": {"version": "2", "type": "event", "seq": 3, "clientseq": 9, "id": "5f1e", "position": "PT1.2S",
                "parameters": {"entities": [{"type": "barge_in", "data": {}}]}},
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_mu_law_is_g711():
    # bytes from the reference G.711 coder (CPython's audioop.lin2ulaw / ulaw2lin, as pipecat uses)
    pcm = np.array([0, 1, -1, 100, -100, 1000, -1000, 8000, -8000, 32767, -32768], dtype=np.int16)
    assert telephony.ulaw_encode(pcm).hex() == "ffff7ef272ce4ea0208000"
    assert telephony.ulaw_decode(bytes([0x00, 0x7F, 0x80, 0xFF, 0x12, 0x9A])).tolist() == [-32124, 0, 32124, 0, -14972,
                                                                                           10876]
    ramp = np.linspace(-30000, 30000, 4001).astype(np.int16)
    back = telephony.ulaw_decode(telephony.ulaw_encode(ramp)).astype(float)
    assert np.max(np.abs(back - ramp) / np.maximum(np.abs(ramp), 64)) < 0.07  # 8-bit log: a few percent


@pytest.mark.parametrize("name", sorted(telephony.WIRES))
def test_each_wire_reads_its_providers_interrupt_and_media(name):
    transport = make_transport(name, "ws://127.0.0.1:1/ws")
    (clear,) = transport.decode(json.dumps(PIPECAT_CLEARS[name]))
    assert isinstance(clear, AgentClear)
    if name in ("plivo", "vonage"):  # these providers answer a clear
        assert json.loads(clear.reply)["event"] in ("clearedAudio", "websocket:cleared")
    pcm = (8000 * np.sin(np.arange(160) / 5)).astype(np.int16)
    wire = telephony.WIRES[name]()
    (audio,) = transport.decode(wire.agent_media(pcm))
    assert isinstance(audio, AgentAudio) and audio.samples.size == pcm.size
    assert np.max(np.abs(audio.samples.astype(int) - pcm)) < 400  # mu-law or exact PCM
    assert isinstance(transport.decode(json.dumps({"event": "something-else"}))[0], AgentMessage)


def test_wire_messages_carry_the_keys_the_agents_read():
    twilio = telephony.TwilioWire()
    connected, start = (json.loads(m) for m in twilio.caller_open())
    assert connected["event"] == "connected" and start["event"] == "start"
    assert {"streamSid", "callSid"} <= set(start["start"]) and start["start"]["mediaFormat"]["sampleRate"] == 8000
    media = [json.loads(twilio.caller_media(np.zeros(160, dtype=np.int16))) for _ in range(2)]
    assert [m["media"]["chunk"] for m in media] == ["1", "2"] and [m["media"]["timestamp"] for m in media] == ["0", "20"]
    assert json.loads(twilio.caller_close()[0])["event"] == "stop"
    telnyx = json.loads(telephony.TelnyxWire().caller_open()[1])
    assert "stream_id" in telnyx and telnyx["start"]["media_format"]["encoding"] == "PCMU"
    assert "call_control_id" in telnyx["start"]
    plivo = json.loads(telephony.PlivoWire().caller_open()[0])
    assert {"streamId", "callId"} <= set(plivo["start"])
    exotel = json.loads(telephony.ExotelWire().caller_open()[1])
    assert {"stream_sid", "call_sid", "account_sid"} <= set(exotel["start"])
    vonage = telephony.VonageWire(8000)
    assert json.loads(vonage.caller_open()[0])["content-type"] == "audio/l16;rate=8000"
    assert vonage.caller_media(np.ones(160, dtype=np.int16)) == np.ones(160, dtype="<i2").tobytes()


def test_marks_are_answered_in_each_providers_words():
    for name, message, reply_event in (("twilio", {"event": "mark", "mark": {"name": "m1"}}, "mark"),
                                       ("plivo", {"event": "checkpoint", "name": "m1"}, "playedStream"),
                                       ("vonage", {"action": "notify", "payload": {"id": 1}}, "websocket:notify")):
        (mark,) = make_transport(name, "ws://x").decode(json.dumps(message))
        assert isinstance(mark, AgentMark) and json.loads(mark.reply)["event"] == reply_event


def test_a_wire_refuses_another_rate_and_another_format():
    with pytest.raises(Exception, match="8000 Hz, not 16000 Hz; leave --sample-rate out"):
        make_transport("twilio", "ws://x", sample_rate=16000)
    assert ProbeSettings(agent="ws://x", transport="twilio").sample_rate == 8000
    assert ProbeSettings(agent="ws://x", transport="vonage").sample_rate == 16000
    with pytest.raises(AgentFormatError, match="not twilio media.*--transport twilio"):
        make_transport("twilio", "ws://x").decode(b"\x12\x0b\x1a\x04")  # a Pipecat protobuf frame


def _interruption(tail_s: float = 1.0):
    return build_sample({"task": "synthetic_user_interruption", "tail_s": tail_s,
                         "user": [{"say": "what time does the pharmacy open"}, {"say": "wait what about sunday", "after": 1.6}]},
                        0, "test", REPO)


@pytest.mark.parametrize("name", sorted(telephony.WIRES))
def test_each_wire_round_trips_a_call_with_barge_in(name):
    sample = _interruption()
    settings = ProbeSettings(agent="mock", transport=name, settle_s=0.2)
    with MockAgent("duplex", wire=name) as url:
        outcome = play_sample(settings, url, sample)
    assert outcome.status == "ok", outcome.detail
    assert outcome.recording.sample_rate == settings.sample_rate
    assert len(outcome.recording.clears) == 1  # the mock's interrupt, in the provider's words, read as a clear
    agent = outcome.recording.agent_track(outcome.caller.size)
    assert np.abs(agent).max() > 0.1


def _calls(tmp_path: Path, n: int, tail_s: float) -> Path:
    path = tmp_path / "calls.json"
    texts = ["hello there", "good morning", "thanks a lot"]
    path.write_text(json.dumps({"samples": [{"task": "candor_turn_taking", "user": [{"say": texts[i % 3]}], "tail_s": tail_s}
                                            for i in range(n)]}))
    return path


def test_a_single_client_servers_leftover_answer_is_excluded_not_scored(tmp_path):
    # the answer starts 1.2 s after the caller and plays ~4 s: the call hangs up 1.5 s after the caller, so the
    # rest of the answer reaches the next connection of a single-client server
    samples = load_scenarios(_calls(tmp_path, n=2, tail_s=1.5))
    with MockAgent("cascaded", single_client=True) as url:
        outcomes = run_samples(samples, ProbeSettings(agent="mock", settle_s=0.0), tmp_path / "bleed", url)
    assert [o.status for o in outcomes] == ["ok", "agent_first"]
    log = json.loads((tmp_path / "bleed" / "excluded" / "v1.0" / "candor_turn_taking" / "2" / "probe.json").read_text())
    assert "before the caller's first sound" in log["detail"] and "single-client" in log["detail"]
    assert not (tmp_path / "bleed" / "v1.0" / "candor_turn_taking" / "2").exists()

    with MockAgent("cascaded", single_client=True) as url:
        outcomes = run_samples(samples, ProbeSettings(agent="mock", settle_s=1.0), tmp_path / "clean", url)
    assert [o.status for o in outcomes] == ["ok", "ok"]
    assert outcomes[1].settle["agent_sound_heard_s"] > 1.0  # it waited while the first call's answer finished


def test_a_greeting_is_waited_out_before_the_call(tmp_path):
    (sample,) = load_scenarios(_calls(tmp_path, n=1, tail_s=2.0))
    with MockAgent("echo") as url:  # an echo of the quiet line is silence: nothing to wait for
        outcome = play_sample(ProbeSettings(agent="mock", settle_s=0.3), url, sample)
    assert outcome.settle["waited_s"] == pytest.approx(0.3, abs=0.1) and outcome.settle["agent_sound_heard_s"] == 0


def test_an_agent_that_hangs_up_at_once_gets_the_wire_hint(tmp_path, capsys):
    samples = load_scenarios(_calls(tmp_path, n=2, tail_s=0.2))
    with MockAgent("eager", faults=MockFaults(disconnect_after_s=0.0, disconnect_sessions=5)) as url:
        code = cli.main(["probe", url, "--scenarios", str(_calls(tmp_path, n=2, tail_s=0.2)), "--out",
                         str(tmp_path / "run"), "--quiet", "--settle", "0.1", "--no-fdb", "--no-report"])
        outcomes = run_samples(samples, ProbeSettings(agent="mock", settle_s=0.1), tmp_path / "run2", url)
    err = capsys.readouterr().err
    assert code == 1 and "check that --transport raw is the wire format it speaks" in err
    assert "before it sent anything" in outcomes[0].detail and "--transport raw" in outcomes[0].detail


def test_a_refused_connection_leaves_nothing_that_blocks_a_retry(tmp_path, capsys):
    url = f"ws://127.0.0.1:{_free_port()}/ws"
    args = ["probe", url, "--scenarios", str(_calls(tmp_path, n=1, tail_s=0.2)), "--out", str(tmp_path / "run"), "--quiet"]
    assert cli.main(args) == 1
    first = capsys.readouterr().err
    assert "connection refused" in first and "samples written so far" not in first
    assert not (tmp_path / "run").exists() or not list((tmp_path / "run").iterdir())
    assert cli.main(args) == 1
    again = capsys.readouterr().err
    assert "connection refused" in again and "already holds a probe run" not in again


def test_raw_wire_reads_a_vonage_style_clear():
    (event,) = make_transport("raw", "ws://x").decode(json.dumps({"action": "clear"}))
    assert isinstance(event, AgentClear)


def test_sound_without_words_names_the_samples_whisper_heard_nothing_in():
    from types import SimpleNamespace

    from turneval.probe.session import sound_without_words

    def outcome(task, sid, spans):
        sample = SimpleNamespace(task=task, sample_id=sid, folder=f"v1.0/{task}/{sid}")
        return SimpleNamespace(sample=sample, status="ok", timing={"agent_speech": spans})

    fdb = SimpleNamespace(tasks=[SimpleNamespace(name="candor_turn_taking", samples={"1": {"n_words": 0},
                                                                                      "2": {"n_words": 5},
                                                                                      "3": {"n_words": 0}})])
    run = SimpleNamespace(fdb=fdb, outcomes=[outcome("candor_turn_taking", "1", [[1.0, 2.0]]),  # a tone
                                             outcome("candor_turn_taking", "2", [[1.0, 2.0]]),  # speech
                                             outcome("candor_turn_taking", "3", [])])  # silence: a different problem
    assert sound_without_words(run) == ["v1.0/candor_turn_taking/1"]


def test_mock_agents_refuse_webrtc_with_the_fix(tmp_path):
    from turneval.probe.session import probe
    from turneval.probe.transports import ProbeError

    with pytest.raises(ProbeError, match="mock agents speak the WebSocket wires"):
        probe([], ProbeSettings(agent="mock:duplex", transport="webrtc"), tmp_path / "run", log=lambda _: None)


def test_fdb_markdown_gives_jsd_once_when_it_is_not_measured():
    import math

    from turneval.benchmark_runs.full_duplex_bench_scorers import FullDuplexBenchTaskResult
    from turneval.benchmark_runs.full_duplex_bench_tables import run_markdown

    note = "JSD: n/a; it needs the benchmark's human timing distributions"
    task = FullDuplexBenchTaskResult("icc_backchannel", "backchannel", "v1.0", "x", 1,
                         {"tor": 0.0, "freq_per_s": 0.0, "jsd": math.nan, "jsd_std": math.nan, "n_jsd": 0,
                          "gt_distribution_file": None}, {}, notes=[note])
    from types import SimpleNamespace

    text = run_markdown(SimpleNamespace(model_name="bot", run_dir="x", tasks=[task]), per_sample=False)
    assert "- jsd" not in text and "1.000" not in text and text.count(note) == 1
