"""Callers that react (turneval.probe.caller): parts timed to the agent's speech, verdicts, repeats and many callers.

The first tests drive the live caller with made-up agent audio on a simulated clock (no sockets, no
waiting); the last ones call mock agents on 127.0.0.1 in real time, with structure and generous
bounds only (benchmarks/validation/probe_calls.py measures the tight targets).
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from turneval import cli
from turneval.probe.call import AgentStalled, Call, ReactiveCaller
from turneval.probe.caller import LiveCaller, ScriptPart, call_rng, human_gap
from turneval.probe.listener import AgentListener
from turneval.probe.scenarios import ScenarioError, build_sample, load_scenarios
from turneval.probe.summary import median_interval, wilson_interval
from turneval.probe.transports import AgentAudio


SR, FRAME = 16000, 320
REPO = Path(__file__).resolve().parents[1]


def _tone(seconds: float, level: float = 0.3) -> np.ndarray:
    return np.full(int(round(seconds * SR)), level, dtype=np.float32)


def _part(seconds: float, **trigger) -> ScriptPart:
    return ScriptPart(audio=_tone(seconds), words=[], text="x", **trigger)


def _simulate(parts: list[ScriptPart], agent: list[tuple[float, float]], seconds: float, **options) -> LiveCaller:
    """Run a live caller frame by frame while the agent 'plays' the given spans (each heard as its frames arrive)."""
    listener = AgentListener(SR)
    caller = LiveCaller(parts, SR, FRAME, listener, call_rng(0, "test"), timeout_s=options.get("timeout_s", 10.0),
                        tail_s=0.5)
    step = FRAME / SR
    for k in range(int(seconds / step)):
        now = (k + 1) * step
        for start, end in agent:  # the agent's audio arriving in the frame that just ended
            a, b = max(start, now - step), min(end, now)
            if a < b:
                listener.add(np.full(int(round((b - a) * SR)), 9000, dtype=np.int16), a)
        caller.frame(k, now)
    return caller


def test_a_barge_in_leaves_its_delay_after_the_agent_starts_whenever_that_is():
    for answer_at in (1.7, 3.13):  # a fast and a slow agent: the barge-in follows each
        caller = _simulate([_part(1.0), _part(0.5, on="agent_start", delay=0.5, mark=True)],
                           [(answer_at, answer_at + 3.0)], seconds=6.0)
        (left,) = caller.log()[1]["left"]
        assert left["event"] == {"name": "agent_start", "at_s": pytest.approx(answer_at, abs=0.006)}
        assert left["left_s"] == pytest.approx(answer_at + 0.5, abs=0.006) and not caller.log()[1]["timed_out"]


def test_an_answer_after_the_agent_ends_waits_for_the_hold_and_keeps_its_gap():
    caller = _simulate([_part(1.0), _part(0.5, on="agent_end", delay=0.3)], [(1.5, 2.2), (2.35, 3.0)], seconds=5.0)
    (left,) = caller.log()[1]["left"]
    assert left["event"]["at_s"] == pytest.approx(3.0, abs=0.006)  # the 0.15 s pause is not an end (hold 0.2 s)
    assert left["left_s"] == pytest.approx(3.3, abs=0.006)


def test_backchannels_repeat_while_the_agent_talks_and_stop_with_it():
    caller = _simulate([_part(1.0), _part(0.3, during="agent_speech", every=1.0, max_count=10)], [(1.5, 5.2)], seconds=7.0)
    starts = [e["left_s"] for e in caller.log()[1]["left"]]
    assert starts == pytest.approx([2.5, 3.5, 4.5], abs=0.006)  # none after the agent stopped at 5.2
    assert caller.log()[1]["done_s"] == pytest.approx(5.2, abs=0.006)


def test_a_part_whose_agent_never_acts_plays_at_its_timeout_and_says_so():
    caller = _simulate([_part(1.0), _part(0.5, on="agent_start", delay=0.5, timeout_s=2.0)], [], seconds=5.0)
    log = caller.log()[1]
    assert log["timed_out"] and log["left"][0]["event"] is None
    assert log["left"][0]["left_s"] == pytest.approx(1.3 + 2.0, abs=0.03)


def test_a_long_reply_is_waited_out_past_the_timeout():
    caller = _simulate([_part(1.0), _part(0.5, on="agent_end", delay=0.3, timeout_s=2.0)], [(1.8, 6.0)], seconds=8.0)
    (left,) = caller.log()[1]["left"]
    assert not caller.log()[1]["timed_out"] and left["left_s"] == pytest.approx(6.3, abs=0.006)


def test_human_gaps_come_from_switchboard_above_the_hold_and_repeat_per_seed():
    gaps = [human_gap(call_rng(7, "calls/dialogue/1", 0, i), 0.2) for i in range(200)]
    assert min(gaps) >= 0.2 and 0.25 < float(np.median(gaps)) < 0.7
    assert gaps == [human_gap(call_rng(7, "calls/dialogue/1", 0, i), 0.2) for i in range(200)]
    assert gaps != [human_gap(call_rng(8, "calls/dialogue/1", 0, i), 0.2) for i in range(200)]


def test_reactive_part_keys_are_checked(tmp_path):
    def build(*parts):
        return build_sample({"task": "dialogue", "user": [{"say": "hello"}, *parts]}, 0, "calls.yaml, sample 1", tmp_path)

    with pytest.raises(ScenarioError, match="part 2: `on: agent_talks` is not an agent event"):
        build({"say": "hi", "on": "agent_talks"})
    with pytest.raises(ScenarioError, match="part 2: give one of .*not after and on"):
        build({"say": "hi", "after": 1, "on": "agent_end"})
    with pytest.raises(ScenarioError, match="`during: agent_speech` needs `every: S`"):
        build({"say": "hi", "during": "agent_speech"})
    with pytest.raises(ScenarioError, match="`delay` belongs to a part that waits for the agent"):
        build({"say": "hi", "after": 1, "delay": 2})
    with pytest.raises(ScenarioError, match="`max` must be a whole number"):
        build({"say": "hi", "during": "agent_speech", "every": 1, "max": "lots"})
    path = tmp_path / "calls.yaml"  # YAML reads a bare `on:` as true; it still means `on`
    path.write_text("samples:\n  - task: barge_in\n    user:\n      - {say: hi}\n      - {say: wait, on: agent_start, delay: 1}\n")
    (sample,) = load_scenarios(path)
    assert sample.reacts and sample.parts[1].on == "agent_start" and sample.folder == "calls/barge_in/1"


def test_builtin_call_suites_load():
    tasks = {s.task: s for s in load_scenarios("calls")}
    assert set(tasks) == {"barge_in", "backchannel", "pause_hold", "dialogue"}
    assert [p.delay for p in tasks["dialogue"].parts[1:]] == ["human"] * 4
    assert not tasks["pause_hold"].reacts and tasks["pause_hold"].spans


def test_intervals():
    assert median_interval([1.0]) is None
    low, high = median_interval([1.0, 1.1, 1.2, 1.3, 5.0])
    assert 1.0 <= low <= 1.2 <= high <= 5.0
    assert wilson_interval(0, 0) is None and wilson_interval(5, 5)[1] == 1.0 and wilson_interval(5, 5)[0] > 0.5


def _outcome(task, spans, parts, agent, duration=10.0, expect=None, mark=1):
    from turneval.probe.verdicts import judge

    track = np.zeros(int(duration * SR), dtype=np.float32)
    for a, b in agent:
        track[int(a * SR) : int(b * SR)] = 0.3
    o = SimpleNamespace(sample=SimpleNamespace(task=task, expect=expect or {}, mark=mark), spans=spans, parts=parts,
                        caller=track, recording=SimpleNamespace(sample_rate=SR))
    return judge(o, track, SR)


def test_verdicts_read_the_recording():
    plan = {"part": 2, "plan": {"on": "agent_start", "delay": 1.0}, "gap_s": 1.0, "timed_out": False}
    barge = _outcome("barge_in", [(0.3, 1.5, 0), (3.0, 4.0, 1)],
                     [{"part": 1, "plan": {}, "left": [{"left_s": 0.3}]}, {**plan, "left": [{"left_s": 3.0}]}],
                     [(2.0, 3.3)])
    assert barge["passed"] and barge["time_to_yield_s"] == pytest.approx(0.3, abs=0.01)
    assert barge["leave_error_ms"] == pytest.approx(0.0, abs=6)
    held = _outcome("pause_hold", [(0.3, 1.5, 0), (2.5, 3.5, 1)], [], [(4.5, 6.0)])
    jumped = _outcome("pause_hold", [(0.3, 1.5, 0), (2.5, 3.5, 1)], [], [(2.1, 2.8)])
    assert held["passed"] and not jumped["passed"] and jumped["agent_started_in_pause_after_s"] == pytest.approx(0.6, abs=0.01)
    bc_parts = [{"part": 1, "plan": {}, "left": []},
                {"part": 2, "plan": {"during": "agent_speech"}, "left": [{"left_s": 3.0}, {"left_s": 4.5}]}]
    talks_on = _outcome("backchannel", [(0.3, 1.5, 0), (3.0, 3.4, 1), (4.5, 4.9, 1)], bc_parts, [(2.0, 8.0)])
    stops = _outcome("backchannel", [(0.3, 1.5, 0), (3.0, 3.4, 1), (4.5, 4.9, 1)], bc_parts, [(2.0, 3.3)])
    assert talks_on["passed"] and talks_on["inside_agent_speech"] == 2
    assert not stops["passed"] and stops["agent_stopped_after"] == 1
    dialogue = _outcome("dialogue", [(0.3, 1.5, 0), (3.3, 4.0, 1)],
                        [{"part": 1, "plan": {}, "left": [{"left_s": 0.3}]},
                         {"part": 2, "plan": {}, "gap_s": 0.3, "left": [{"left_s": 3.3, "event": {"name": "agent_end"}}]}],
                        [(2.5, 3.0), (5.0, 6.0), (3.5, 3.7)])
    first, second = dialogue["turns"]
    assert first["response_s"] == pytest.approx(1.0, abs=0.01) and second["gap_error_ms"] == pytest.approx(0.0, abs=6)
    assert second["cut_off_at_s"] == pytest.approx(3.5, abs=0.01) and not dialogue["passed"]


class _StallingAgent:
    """A transport whose agent says one thing, then nothing, and never hangs up."""

    name, url, sample_rate, frame_samples = "raw", "ws://stalling", SR, FRAME

    def __init__(self):
        self.sent = 0

    async def send_audio(self, samples):
        self.sent += 1

    async def receive(self):
        if self.sent < 5:
            await asyncio.sleep(0.05)
            return [AgentAudio(np.full(FRAME, 9000, dtype=np.int16))]
        await asyncio.sleep(3600)


def test_an_agent_that_goes_quiet_without_closing_is_given_up():
    async def go():
        listener = AgentListener(SR)
        live = LiveCaller([_part(0.2), _part(0.2, on="agent_start", timeout_s=30.0)], SR, FRAME, listener,
                          call_rng(0, "x"), timeout_s=30.0, tail_s=0.1)
        call = Call(_StallingAgent(), ReactiveCaller(live), timeout_s=30.0, listener=listener, agent_timeout_s=0.6)
        return await asyncio.wait_for(call.run(), 10)

    errors = asyncio.run(go())
    assert any(isinstance(e, AgentStalled) and "--agent-timeout" in str(e) for e in errors)


SETTLE = "0.2"


def test_barge_in_and_dialogue_against_a_mock_that_yields(tmp_path):
    from turneval.probe.mock_agents import MockAgent
    from turneval.probe.runner import ProbeSettings, run_samples

    path = tmp_path / "calls.yaml"
    path.write_text("""samples:
  - task: barge_in
    user:
      - {say: "what time is it", punct: "?"}
      - {say: "wait a moment", on: agent_start, delay: 0.5, mark: true}
    tail_s: 1.0
  - task: dialogue
    user:
      - {say: "hello there"}
      - {say: "for four people", on: agent_end, delay: human}
      - {say: "thanks", on: agent_end, delay: 0.4}
    tail_s: 2.0
  - task: user_interruption
    user:
      - {say: "what time is it", punct: "?"}
      - {say: "and tomorrow", on: agent_start, delay: 0.3, mark: true}
    tail_s: 0.5
""")
    samples = load_scenarios(path)
    with MockAgent("polite", answer="sure I can help with that") as url:
        barge, dialogue, fdb = run_samples(samples, ProbeSettings(agent=url, settle_s=float(SETTLE)), tmp_path / "run", url)
    assert barge.status == "ok" and dialogue.status == "ok", (barge.detail, dialogue.detail)
    # a benchmark task whose part waited for the agent: its metadata say where the part actually played
    meta = json.loads((tmp_path / "run" / "v1.5" / "user_interruption" / "1" / "metadata.json").read_text())
    assert meta["timestamps"][0] == pytest.approx(fdb.parts[1]["left"][0]["left_s"], abs=0.002)
    assert (tmp_path / "run" / "v1.5" / "user_interruption" / "1" / "input.wav").is_file()
    left = barge.parts[1]["left"][0]
    assert left["event"]["name"] == "agent_start" and 0.4 < left["left_s"] - left["event"]["at_s"] < 0.7
    assert barge.verdict["overlapped"] and 0.1 < barge.verdict["time_to_yield_s"] < 1.0
    turns = dialogue.verdict["turns"]
    assert len(turns) == 3 and all(t["response_s"] is not None for t in turns)
    assert all(abs(t["gap_error_ms"]) < 150 for t in turns[1:])
    log = json.loads((tmp_path / "run" / "calls" / "dialogue" / "1" / "probe.json").read_text())
    assert [p["plan"].get("on") for p in log["parts"]] == [None, "agent_end", "agent_end"] and log["verdict"]["turns"]
    assert sorted(p.name for p in (tmp_path / "run" / "calls" / "dialogue" / "1").iterdir()) == [
        "agent.wav", "caller.wav", "input.json", "probe.json", "stereo.wav"]


def test_many_callers_and_repeats_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "run"
    path = tmp_path / "hold.yaml"
    path.write_text("samples:\n  - task: pause_hold\n    user:\n      - {say: 'I would like', punct: ','}\n"
                    "      - {say: 'a table', after: 1.0}\n    tail_s: 1.6\n")  # the mock's answer is due 1.1 s into the pause
    code = cli.main(["probe", "mock:polite", "--scenarios", str(path), "--out", str(out), "--no-fdb", "--no-report",
                     "--settle", SETTLE, "--quiet", "--concurrency", "1,2", "--repeat", "2",
                     "--require", "failed_samples==0"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    run = json.loads((out / "probe.json").read_text())
    assert [r["concurrency"] for r in run["load"]] == [1, 2] and run["load"][1]["calls"] == 4
    assert (out / "load.png").is_file() and (out / "calls" / "pause_hold" / "1-n2c2-r2" / "probe.json").is_file()
    md = (out / "probe.md").read_text()
    assert "Response latency against concurrency" in md and "Calls: pass or fail" in md and "| pause_hold | " in md
    assert run["timing"]["pause_hold"]["judged"] == 6 and "pass_rate_ci" in run["timing"]["pause_hold"]
    assert cli.main(["probe", "mock:polite", "--scenarios", "smoke", "--out", str(tmp_path / "x"), "--concurrency", "0"]) == 1
