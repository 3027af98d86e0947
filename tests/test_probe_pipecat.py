"""turneval probe against real Pipecat 1.14 servers on loopback: the example bots of examples/agents/.

Each bot is built with pipecat's own serializer (or transport) for its wire, so these are the
probe's interoperability tests: the protobuf WebSocket server, every telephone provider's
serializer, and SmallWebRTC through aiortc. They need pipecat-ai's run-time packages
(examples/agents/requirements.txt; `make install` brings them) and skip cleanly without them.
Timing is not asserted here (benchmarks/validation/probe_wires.py compares it with the bots' logs).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest


pytest.importorskip("loguru", reason="pipecat-ai's run-time packages are not installed (make install)")
pytest.importorskip("pipecat.serializers.twilio", reason="pipecat-ai 1.14 is not installed (make install)")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples" / "agents"))

from serve import PROVIDERS, serve_bot  # noqa: E402

from turneval.probe.runner import ProbeSettings, play_sample, run_samples  # noqa: E402
from turneval.probe.scenarios import build_sample, load_scenarios  # noqa: E402


def _interruption():
    # the bot answers ~1.3 s after the first part (VAD stop_secs 0.8 + 0.5 s); the second part talks over it
    return build_sample({"task": "synthetic_user_interruption", "tail_s": 2.5,
                         "user": [{"say": "what time does the pharmacy open"}, {"say": "wait what about sunday", "after": 2.2}]},
                        0, "test", REPO)


def _events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("wire", ["pipecat", *PROVIDERS])
def test_probe_speaks_each_wire_to_a_pipecat_bot(wire, tmp_path):
    events = tmp_path / "events.jsonl"
    with serve_bot(wire, events, log=tmp_path / "bot.log") as (url, transport):
        outcome = play_sample(ProbeSettings(agent=url, transport=transport, settle_s=0.5), url, _interruption())
    assert outcome.status == "ok", outcome.detail + "\n" + (tmp_path / "bot.log").read_text()[-3000:]
    from turneval.probe.recorder import timing

    figures = timing(outcome.recording.agent_track(outcome.caller.size), outcome.recording.sample_rate,
                     outcome.sample.reference_s, outcome.sample.event)
    assert figures["response_latency_s"] is not None and figures["stop_latency_s"] is not None
    assert len(outcome.recording.clears) == 1  # pipecat's InterruptionFrame, in the wire's own words, read as a clear
    kinds = [e["event"] for e in _events(events)]
    assert "vad_stop" in kinds and "first_audio_out" in kinds and "interrupted" in kinds  # the bot heard the caller


def test_probe_calls_a_smallwebrtc_bot(tmp_path):
    pytest.importorskip("aiortc", reason="aiortc is not installed (make install)")
    events = tmp_path / "events.jsonl"
    with serve_bot("webrtc", events, log=tmp_path / "bot.log") as (url, transport):
        outcome = play_sample(ProbeSettings(agent=url, transport=transport, settle_s=0.5), url, _interruption())
    assert outcome.status == "ok", outcome.detail + "\n" + (tmp_path / "bot.log").read_text()[-3000:]
    assert outcome.recording.received_audio and not outcome.recording.clears  # WebRTC has no clear: the audio stops
    kinds = [e["event"] for e in _events(events)]
    assert "first_audio_out" in kinds and "interrupted" in kinds
    # and the same two moments as the audio leaves (dated by the Opus packets aiortc sends from the output track)
    sent = [e for e in _events(events) if e["event"] in ("first_audio_sent", "last_audio_sent")]
    assert [e["event"] for e in sent][:2] == ["first_audio_sent", "last_audio_sent"], sent
    interrupted = next(e for e in _events(events) if e["event"] == "interrupted")
    assert sent[1]["t"] >= interrupted["t"] - 0.05 and sent[1]["stop_latency_s"] > 0


def test_single_client_server_calls_do_not_bleed(tmp_path):
    # each call hangs up as the bot's answer begins (the recording stops 0.3 s after the caller; the probe waits for
    # the first answer audio): on a single-client server the answer streams on into the next connection, where
    # the probe waits for it to end before the caller speaks
    path = tmp_path / "calls.json"
    path.write_text(json.dumps({"samples": [{"task": "candor_turn_taking", "user": [{"say": text}], "tail_s": 0.3}
                                            for text in ("hello there", "good morning", "thanks a lot")]}))
    samples = load_scenarios(path)
    events = tmp_path / "events.jsonl"
    with serve_bot("pipecat", events, log=tmp_path / "bot.log") as (url, transport):
        outcomes = run_samples(samples, ProbeSettings(agent=url, transport=transport, settle_s=1.0), tmp_path / "run", url)
    assert [o.status for o in outcomes] == ["ok", "ok", "ok"], [o.detail for o in outcomes]
    assert any(o.settle["agent_sound_heard_s"] > 0.5 for o in outcomes[1:])  # it did hear the last call's answer
    starts = [o.settle["call_start_monotonic"] for o in outcomes]
    log = _events(events)
    answers = [e["t"] for e in log if e["event"] == "first_audio_out"]
    stops = [e["t"] for e in log if e["event"] == "bot_stopped"]
    for start in starts[1:]:  # no answer of the bot was still playing when a call began
        assert not any(a < start < s for a, s in zip(answers, stops)), (start, answers, stops)


def test_a_pipecat_bot_takes_the_calls_that_react(tmp_path):
    # the barge-in, backchannel and dialogue calls, timed to the bot's own speech as the probe hears it; the bot
    # answers ~1.3 s after the caller (VAD stop_secs 0.8 + 0.5 s) and yields to any caller speech (VAD start_secs 0.2).
    # The phone bot runs a pipeline per connection, so no call waits for the last one's answer to end (--settle)
    path = tmp_path / "calls.yaml"
    path.write_text("""samples:
  - task: barge_in
    user:
      - {say: "what time does the pharmacy open", punct: "?"}
      - {say: "wait what about sunday", on: agent_start, delay: 1.0, mark: true}
    tail_s: 1.5
  - task: backchannel
    user:
      - {say: "when does the pharmacy open", punct: "?"}
      - {say: "uh huh", during: agent_speech, every: 1.5, max: 1, mark: true}
    tail_s: 1.5
  - task: dialogue
    user:
      - {say: "hello there", punct: "."}
      - {say: "thanks a lot", on: agent_end, delay: human, hold: 0.5}
    tail_s: 2.5
""")
    samples = load_scenarios(path)
    events = tmp_path / "events.jsonl"
    with serve_bot("twilio", events, log=tmp_path / "bot.log") as (url, transport):
        outcomes = run_samples(samples, ProbeSettings(agent=url, transport=transport, settle_s=0.5), tmp_path / "run", url)
    assert [o.status for o in outcomes] == ["ok"] * 3, [o.detail for o in outcomes]
    barge, backchannel, dialogue = outcomes
    assert barge.parts[1]["left"][0]["event"]["name"] == "agent_start" and barge.verdict["overlapped"]
    assert barge.verdict["time_to_yield_s"] is not None and barge.recording.clears  # it yielded: Twilio's clear
    assert backchannel.verdict["backchannels"] == 1
    turns = dialogue.verdict["turns"]
    assert len(turns) == 2 and turns[0]["response_s"] is not None and turns[1]["planned_gap_s"] >= 0.5
    assert "interrupted" in [e["event"] for e in _events(events)]
