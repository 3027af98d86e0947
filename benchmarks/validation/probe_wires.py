"""turneval probe against real Pipecat 1.14 bots on every wire: do its latencies agree with the bot's own log?

    python benchmarks/validation/probe_wires.py [--calls 3] [--back-to-back 20] [--wires pipecat,twilio,...]

Each example bot of examples/agents/ (pipecat's own serializer or transport for its wire: protobuf
WebSocket, Twilio, Telnyx, Plivo, Exotel, Vonage, Genesys AudioHook, SmallWebRTC) is served on loopback and called
with interruption samples: the caller asks, the bot answers (Silero VAD stop_secs 0.8 + 0.5 s),
the caller talks over the answer, the bot yields (VAD start) and answers again. Per call, three
figures from each side:

- first answer: the probe's (first agent sound less the end of the caller's question) beside
  the bot's log (its first answer audio leaving, below, less the end of the caller's sound as the
  bot received it);
- stop latency: the probe's (end of the agent's sound less the first sound of the caller's
  interruption) beside the bot's (its answer's audio stopping leaving, below, less the barge-in's
  onset as received);
- second answer: the probe's (first agent sound after the caller's last sound) beside the bot's.

Both sides find the caller's sound edges the same way (5 ms windows above -42 dBFS).
The bot's log is read two ways. Its own figures count from the caller's sound as it reached the
bot, so the probe's figure less the whole transport delay (loopback echo round trip, same wire:
the way in and the way back) should equal them; but a bot that receives its audio in bursts
(WebRTC: aiortc's jitter buffer, pipecat's resampling) misplaces the caller's end by its burst.
On the shared clock (probe and bot run on one machine; both log time.monotonic) the bot's event
counts from the moment the caller's sound left the probe, which the probe knows exactly: the
probe's figure less half the transport delay (the way back) should equal it. The bot's events are
those of what leaves it: on the WebSocket wires its serializer's bytes (``first_audio_sent``,
``clear_sent``, and ``audio_after_clear`` for answer audio that still left after the clear); on
WebRTC, which has neither serializer nor clear message, the 10 ms chunks aiortc pulls from its
output track, dated when the Opus packet carrying each is sent (``first_audio_sent``;
``last_audio_sent``, the end of an interrupted answer's last loud chunk; webrtc_bot.log_track).
Target: within 30 ms on the shared clock.

Then back-to-back calls to the single-client WebSocket server (one pipeline for every
connection), each hanging up as the bot's answer begins, so the rest of the answer streams into
the next connection: with the probe's default --settle no sample may hold another call's audio,
checked twice: by the probe (agent sound before the caller's first sound) and by the bot's log
(no answer of the bot was playing when a call's clock started). A few calls with --settle 0 show
the bleed the wait prevents.

``run(quick)`` gives the figures to benchmarks/run_all.py (quick: one call on each wire family,
protobuf, Twilio, WebRTC, and 3 back-to-back calls; about 1.5 minutes). It needs pipecat-ai's run-time packages (make install); without them it reports NaN.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np


REPO = Path(__file__).resolve().parents[2]
TARGET_MS = 30.0
WIRES = ("pipecat", "twilio", "telnyx", "plivo", "exotel", "vonage", "genesys", "webrtc")
QUICK_WIRES = ("pipecat", "twilio", "webrtc")
"""--quick (CI): one wire of each family; tests/test_probe_pipecat.py calls every wire's bot anyway."""
CALLS = (("what time does the pharmacy open", "wait what about on sunday"),
         ("can you book me a table for two tonight", "actually make it three people"),
         ("how long should I boil an egg", "sorry I meant a soft boiled one"))


def _bots():
    sys.path.insert(0, str(REPO / "examples" / "agents"))
    import serve

    return serve


def _interruptions(n: int) -> list[Any]:
    from turneval.probe.scenarios import build_sample

    return [build_sample({"task": "synthetic_user_interruption", "id": str(i + 1), "tail_s": 2.5,
                          "user": [{"say": first}, {"say": second, "after": 2.2}]}, i, "probe_wires", REPO)
            for i, (first, second) in enumerate(CALLS[i % len(CALLS)] for i in range(n))]


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _call_figures(outcome: Any, log: list[dict[str, Any]]) -> dict[str, Any]:
    """The probe's and the bot's figures for one interruption call (seconds; None where one side has none).

    Both sides read the caller's sound edges the same way (5 ms windows above -42 dBFS): the bot on
    the audio it received, the probe on the audio it sent. (The probe's own probe.md figures count
    from the scenario's part boundaries, which a soft onset such as an "s" precedes by a few tens
    of ms.)"""
    from turneval.probe.energy import sound_spans

    sr = outcome.recording.sample_rate
    start = outcome.settle["call_start_monotonic"]
    end = start + outcome.caller.size / sr
    mine = [e for e in log if start <= e["t"] <= end + 1.0]
    # the bot's wire events, what leaves it: its serializer's bytes (first_audio_sent, clear_sent) or, on WebRTC, the
    # Opus packets aiortc sends from its output track (first_audio_sent, last_audio_sent); a log without them (an
    # older bot): when the pipeline hands the frame to the output transport (first_audio_out, interrupted)
    kinds = {e["event"] for e in mine}
    wire = "first_audio_sent" in kinds
    answers = [e for e in mine if e["event"] == ("first_audio_sent" if wire else "first_audio_out")]
    stop_event = next((k for k in ("clear_sent", "last_audio_sent") if k in kinds), "interrupted")
    stops = [e for e in mine if e["event"] == stop_event]
    if stops and stop_event == "clear_sent":  # answer audio that left after the clear plays on at the caller's end
        late = [e for e in mine if e["event"] == "audio_after_clear" and e["t"] >= stops[0]["t"]
                and (len(answers) < 2 or e["t"] < answers[-1]["t"])]
        if late:
            last = late[-1]["t"] + late[-1]["duration_s"]
            stops = [{**stops[0], "t": last, "stop_latency_s": round(last - stops[0]["barge_in_onset"], 4),
                      "audio_after_clear_s": round(last - stops[0]["t"], 4)}]
    barge = outcome.sample.event[0]  # where the second part (the interruption) begins
    caller = sound_spans(outcome.caller, sr)
    agent = sound_spans(outcome.recording.agent_track(outcome.caller.size), sr)
    first_end = max((e for s, e in caller if e <= barge - 1.0), default=None)  # the question's last sound
    onset = min((s for s, e in caller if s >= barge - 0.05), default=None)  # the interruption's first sound
    last_end = caller[-1][1] if caller else None
    first = [s for s in agent if first_end is not None and s[0] >= first_end]
    talking = [s for s in agent if onset is not None and s[0] <= onset < s[1]]
    after = [s for s in agent if last_end is not None and s[0] >= last_end]

    def shared(event: dict[str, Any] | None, caller_s: float | None) -> float | None:
        """The bot's event time less the moment the caller's sound left the probe (one machine, one clock)."""
        return None if event is None or caller_s is None else round(event["t"] - (start + caller_s), 4)

    return {
        "first_answer": (round(first[0][0] - first_end, 4) if first else None,
                         answers[0]["response_latency_s"] if answers else None,
                         shared(answers[0] if answers else None, first_end)),
        "stop": (round(talking[0][1] - onset, 4) if talking else None, stops[0]["stop_latency_s"] if stops else None,
                 shared(stops[0] if stops else None, onset)),
        "second_answer": (round(after[0][0] - last_end, 4) if after else None,
                          answers[-1]["response_latency_s"] if len(answers) > 1 else None,
                          shared(answers[-1] if len(answers) > 1 else None, last_end)),
        "probe_md": {"response_latency_s": outcome.timing.get("response_latency_s"),
                     "stop_latency_s": outcome.timing.get("stop_latency_s")},
        # which event of the bot's dates its stop, and how far after the pipeline's own interruption it fell
        "stop_event": {"event": stop_event, **{k: stops[0][k] for k in ("audio_after_clear_s", "after_interrupted_s")
                                               if stops and k in stops[0]}},
    }


def check_wire(wire: str, n_calls: int, work: Path) -> dict[str, Any]:
    """Call the example bot of ``wire`` ``n_calls`` times; the probe's figures beside the bot's log."""
    from turneval.probe.runner import ProbeSettings, measure_transport_delay, play_sample

    serve = _bots()
    events = work / f"{wire}_events.jsonl"
    rows = []
    with serve.serve_bot(wire, events, log=work / f"{wire}_bot.log") as (url, transport):
        settings = ProbeSettings(agent=url, transport=transport)
        delay = measure_transport_delay(settings)
        outcomes = [play_sample(settings, url, sample) for sample in _interruptions(n_calls)]
    log = _events(events)
    for outcome in outcomes:
        if outcome.status != "ok":
            rows.append({"status": outcome.status, "detail": outcome.detail})
            continue
        from turneval.probe.recorder import timing

        outcome.timing = timing(outcome.recording.agent_track(outcome.caller.size), outcome.recording.sample_rate,
                                outcome.sample.reference_s, outcome.sample.event)
        rows.append({"status": "ok", **_call_figures(outcome, log)})
    return {"wire": wire, "transport_delay_ms": delay["median_ms"], "calls": rows}


def differences_ms(result: dict[str, Any], clock: str = "shared",
                   keys: tuple[str, ...] = ("first_answer", "stop", "second_answer")) -> list[float]:
    """For every figure both sides have (ms): ``own``: probe less the transport delay, less the bot's own figure
    (its clock of the caller: when the audio reached it); ``shared``: probe less half the transport delay (the
    way back), less the bot's event on the shared clock counted from when the caller's sound left the probe."""
    out = []
    for row in result["calls"]:
        for key in keys:
            probe, own, shared = row.get(key, (None, None, None))
            bot, less = (own, result["transport_delay_ms"]) if clock == "own" else (shared, result["transport_delay_ms"] / 2)
            if probe is not None and bot is not None:
                out.append(1000 * (probe - bot) - less)
    return out


def back_to_back(n_calls: int, settle_s: float | None, work: Path) -> dict[str, Any]:
    """``n_calls`` calls to the single-client WebSocket bot, each hanging up as the answer begins."""
    from turneval.probe.runner import SETTLE_S, ProbeSettings, run_samples
    from turneval.probe.scenarios import load_scenarios

    serve = _bots()
    texts = ["hello there", "good morning", "thanks a lot", "one more thing", "is it open today"]
    calls = work / f"back_to_back_{settle_s}.json"
    calls.write_text(json.dumps({"samples": [{"task": "candor_turn_taking", "id": str(i + 1), "tail_s": 0.3,
                                              "user": [{"say": texts[i % len(texts)]}]} for i in range(n_calls)]}))
    events = work / f"back_to_back_{settle_s}_events.jsonl"
    settle = SETTLE_S if settle_s is None else settle_s
    with serve.serve_bot("pipecat", events, log=work / "back_to_back_bot.log") as (url, transport):
        outcomes = run_samples(load_scenarios(calls), ProbeSettings(agent=url, transport=transport, settle_s=settle),
                               work / f"run_{settle}", url)
    log = _events(events)
    answers = [e["t"] for e in log if e["event"] == "first_audio_out"]
    stopped = [e["t"] for e in log if e["event"] == "bot_stopped"]
    starts = [o.settle.get("call_start_monotonic") for o in outcomes]
    crossing = sum(any(a < s < b for a, b in zip(answers, stopped)) for s in starts if s is not None)
    return {"settle_s": settle, "calls": n_calls, "statuses": [o.status for o in outcomes],
            "probe_flagged": sum(o.status == "agent_first" for o in outcomes), "bot_log_crossings": crossing,
            "waited_s": [o.settle.get("waited_s") for o in outcomes],
            "heard_s": [o.settle.get("agent_sound_heard_s") for o in outcomes]}


def _ms(value: float | None, less: float = 0.0) -> str:
    return "n/a" if value is None else f"{1000 * value - less:.0f}"


def format_wire(result: dict[str, Any]) -> str:
    d = result["transport_delay_ms"]
    lines = [f"### {result['wire']}: transport delay (loopback echo round trip) {d:.1f} ms", "",
             "| call | figure | probe | bot's own figure | probe less delay, less bot's own | bot on the shared clock "
             "| probe less half the delay, less bot on the shared clock |",
             "|---|---|---|---|---|---|---|"]
    for i, row in enumerate(result["calls"], 1):
        if row["status"] != "ok":
            lines.append(f"| {i} | {row['status']}: {row['detail'][:80]} | | | | | |")
            continue
        for key in ("first_answer", "stop", "second_answer"):
            probe, own, shared = row[key]
            own_diff = "n/a" if probe is None or own is None else f"{1000 * (probe - own) - d:+.0f}"
            shared_diff = "n/a" if probe is None or shared is None else f"{1000 * (probe - shared) - d / 2:+.0f}"
            lines.append(f"| {i} | {key.replace('_', ' ')} | {_ms(probe)} | {_ms(own)} | {own_diff} | {_ms(shared)} "
                         f"| {shared_diff} |")
    for clock, what in (("own", "bot's own figures"), ("shared", "bot on the shared clock")):
        diffs = differences_ms(result, clock)
        worst = max((abs(x) for x in diffs), default=float("nan"))
        lines.append(f"\nworst |difference| against the {what}: {worst:.0f} ms over {len(diffs)} figures "
                     f"(target {TARGET_MS:.0f} ms)")
    parts = []
    for what, keys in (("answers", ("first_answer", "second_answer")), ("stops", ("stop",))):
        diffs = differences_ms(result, "shared", keys)
        if diffs:
            parts.append(f"{what} {min(diffs):+.0f} to {max(diffs):+.0f} ms (mean {np.mean(diffs):+.0f}), "
                         f"{sum(abs(x) <= TARGET_MS for x in diffs)} of {len(diffs)} within {TARGET_MS:.0f} ms")
    events = Counter(row["stop_event"]["event"] for row in result["calls"] if row["status"] == "ok")
    lines.append(f"on the shared clock: {'; '.join(parts)}; stops dated by {dict(events)}")
    return "\n".join(lines)


def format_back_to_back(result: dict[str, Any]) -> str:
    return (f"### {result['calls']} back-to-back calls, single-client server, --settle {result['settle_s']:g}: "
            f"{result['probe_flagged']} flagged by the probe (agent sound before the caller's), "
            f"{result['bot_log_crossings']} call starts while the bot's answer was playing (its log); "
            f"statuses {dict(Counter(result['statuses']))}; "
            f"waited {min(result['waited_s']):.1f}-{max(result['waited_s']):.1f} s before the calls")


def _available() -> bool:
    """pipecat-ai and the packages its bots need here (found without importing pipecat, which prints a banner)."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("pipecat", "loguru", "wait_for2", "aiortc", "av"))


def run(quick: bool) -> list[dict]:
    """Figures for benchmarks/run_all.py: the worst probe-vs-bot difference per wire, and the back-to-back calls."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from _harness import figure

    if not _available():
        return [figure("probe vs Pipecat bot log: worst difference", float("nan"), "ms",
                       note="pipecat-ai's run-time packages are not installed (make install)")]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for wire in QUICK_WIRES if quick else WIRES:
            result = check_wire(wire, 1 if quick else 3, work)
            diffs, own = differences_ms(result), differences_ms(result, "own")
            out.append(figure(f"probe vs Pipecat bot log, {wire}: worst |difference|",
                              max((abs(x) for x in diffs), default=float("nan")), "ms",
                              note=f"{len(diffs)} figures (answers, stop) against the bot's events on the shared clock, "
                              f"probe less half its transport delay {result['transport_delay_ms']:.1f} ms (against the "
                              f"bot's own figures: {max((abs(x) for x in own), default=float('nan')):.0f} ms); "
                              f"target {TARGET_MS:.0f} ms"))
        calls = back_to_back(3 if quick else 20, None, work)
        out.append(figure("single-client server, back-to-back calls holding another call's audio",
                          calls["probe_flagged"] + calls["bot_log_crossings"], "calls",
                          note=f"{calls['calls']} calls at the default --settle {calls['settle_s']:g} s: probe flags "
                          f"{calls['probe_flagged']}, bot-log crossings {calls['bot_log_crossings']}"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wires", default=",".join(WIRES))
    parser.add_argument("--calls", type=int, default=3, help="interruption calls per wire (default 3)")
    parser.add_argument("--back-to-back", type=int, default=20, help="calls to the single-client server (default 20)")
    parser.add_argument("--bleed-calls", type=int, default=4, help="of those, with --settle 0, to show the bleed (default 4)")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the results as JSON")
    args = parser.parse_args()
    if not _available():
        print("pipecat-ai's run-time packages are not installed (make install)")
        return 1
    results: dict[str, Any] = {"wires": [], "back_to_back": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for wire in args.wires.split(","):
            result = check_wire(wire, args.calls, work)
            print(format_wire(result) + "\n", flush=True)
            results["wires"].append(result)
        for n, settle in ((args.back_to_back, None), (args.bleed_calls, 0.0)):
            if n:
                result = back_to_back(n, settle, work)
                print(format_back_to_back(result) + "\n", flush=True)
                results["back_to_back"].append(result)
    if args.json:
        from turneval.dataset_scripts.files import to_jsonable

        Path(args.json).write_text(json.dumps(to_jsonable(results), indent=1) + "\n")
    worst = [max((abs(x) for x in differences_ms(r)), default=float("nan")) for r in results["wires"]]  # shared clock
    missed = [r["wire"] for r, w in zip(results["wires"], worst) if not w <= TARGET_MS]
    print(f"wires within {TARGET_MS:.0f} ms: {len(worst) - len(missed)} of {len(worst)}"
          + (f" (not: {', '.join(missed)})" if missed else ""))
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
