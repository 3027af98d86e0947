"""`turneval probe`: drive a live voice agent with scripted callers, record both sides, score them.

    turneval probe ws://localhost:8765 --scenarios fdb --out runs/my-agent
    turneval probe ws://localhost:7860/ws --transport pipecat --scenarios fdb-v1 --out runs/bot
    turneval probe ws://localhost:8765/ws --transport twilio --scenarios fdb-v1 --out runs/phone-bot
    turneval probe http://localhost:7860/api/offer --transport webrtc --scenarios fdb-v1 --out runs/webrtc-bot
    turneval probe mock:duplex --scenarios smoke --out runs/mock --no-report
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from turneval.cli import UserError


MAX_REPEAT = 50
"""More runs of each scenario than this is a soak test, not a probe run."""


_EPILOG = """\
AGENT is a WebSocket URL (ws://HOST:PORT/PATH), a SmallWebRTC offer URL (http://HOST:PORT/api/offer, with
--transport webrtc) or a loopback mock agent: mock:cascaded, mock:eager, mock:duplex (docs/probe.md).

Each call waits, on its new connection, until the agent has been silent for --settle seconds before the
caller speaks; a call in which the agent's sound still begins before the caller's (the rest of an earlier
call: a single-client server keeps its pipeline between connections) is written under excluded/ and kept
out of the scores.

scenarios: a built-in suite (fdb-v1: the four Full-Duplex-Bench v1.0 tasks; fdb-v1.5: its four overlap
cases; fdb: both; smoke: two short calls; calls timed to the agent's own speech, each judged pass/fail:
barge-in, backchannel, pause-hold, dialogue (five-turn calls), calls: all four), a YAML/JSON scenario file
(parts at set times, or `on: agent_start|agent_end` with `delay: S|human`, `during: agent_speech` with
`every: S`, `timeout: S`), or a folder of stimuli in the benchmark's layout (task folders of sample
folders with input.wav and the task's metadata).

RUN_DIR gets one Full-Duplex-Bench sample folder per sample (input.wav, output.wav, stereo.wav, the task's
metadata, probe.json with the agent audio's arrival times and each caller part's plan, the agent event it
waited for and when it left), calls/<task>/<id>/ for turneval's own calls (caller.wav, agent.wav, the
verdict in probe.json), failed/ for samples the agent broke (disconnected, timeout, stalled, busy),
excluded/, conversation.wav (all samples, caller left, agent right), probe.json and probe.md (the probe's
timing beside the transport delay, the calls' pass/fail, latency against --concurrency; load.png),
fdb/ (turneval full-duplex-bench, words by offline Whisper) and report/ (turneval report).

examples:
  turneval probe mock:duplex --scenarios smoke --out runs/mock --overwrite
  turneval probe mock:polite --scenarios barge-in --out runs/barge --no-fdb --no-report --repeat 3
  turneval probe ws://127.0.0.1:8765 --scenarios dialogue --out runs/load --concurrency 1,2,4,8 --no-report
  turneval probe ws://127.0.0.1:8765 --scenarios my_calls.yaml --out runs/a --timeout 20
  turneval probe ws://127.0.0.1:7860/ws --transport pipecat --scenarios fdb --out runs/bot \\
      --require 'probe.response_latency_s<=1.0' --require 'fdb.synthetic_pause_handling.tor<=0.5'
  turneval probe ws://host:9000/audio --start-message '{"type": "start"}' --scenarios fdb-v1 --out runs/x

exit codes: 0 done; 1 error (agent unreachable, wrong audio format, bad scenario); 3 a --require failed;
130 / 143 interrupted by Ctrl-C / SIGTERM (the samples written are complete)."""


def _requirement(text: str):
    from turneval.gates import GateError, parse_requirement
    from turneval.probe.summary import known_figures

    try:
        return parse_requirement(text, known_figures())
    except GateError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _json_arg(text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"not JSON: {err}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object, e.g. '{\"type\": \"start\"}'")
    return value


def add_parser(subparsers) -> argparse.ArgumentParser:
    from turneval.probe.runner import AGENT_TIMEOUT_S, SETTLE_S
    from turneval.probe.transport_registry import TRANSPORT_NAMES

    parser = subparsers.add_parser(
        "probe",
        help="test a live voice agent: stream scripted callers over WebSocket, record both sides, score them",
        description="Stream scripted callers to a running voice agent in real time (20 ms frames), record the "
        "agent's audio with the time each frame arrived, write each call as a Full-Duplex-Bench sample folder and "
        "the stereo recording, then score the run with `turneval full-duplex-bench` and `turneval report`. The transport's own "
        "delay is measured with a loopback echo agent and printed beside every latency.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("agent", metavar="AGENT",
                        help="the agent's WebSocket URL, its SmallWebRTC offer URL, or "
                        "mock:cascaded|eager|duplex|polite|steady|variable")
    parser.add_argument("--scenarios", required=True, metavar="SUITE|FILE|DIR",
                        help="fdb, fdb-v1, fdb-v1.5, smoke, barge-in, backchannel, pause-hold, dialogue, calls, a "
                        "YAML/JSON scenario file, or a stimuli folder")
    parser.add_argument("--out", required=True, metavar="RUN_DIR", help="the run folder to write")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an earlier probe run in RUN_DIR (default: refuse, so old samples are not scored)")
    wire = parser.add_argument_group("transport")
    wire.add_argument("--transport", choices=TRANSPORT_NAMES, default="raw",
                      help="raw: 16-bit PCM in binary messages, JSON control in text messages (default); "
                      "pipecat: Pipecat's ProtobufFrameSerializer frames; twilio, telnyx, plivo, exotel, vonage, genesys: "
                      "the provider's media stream, as the provider sends it (8 kHz mu-law; exotel 8 kHz PCM; vonage "
                      "16 kHz PCM; genesys AudioHook, binary PCMU); webrtc: a Pipecat SmallWebRTC endpoint (offer/answer over HTTP)")
    wire.add_argument("--sample-rate", type=int, default=None,
                      help="audio rate both ways (default: 16000; a telephone wire: its provider's rate)")
    wire.add_argument("--frame-ms", type=int, default=20, help="caller frame length in ms (default 20)")
    wire.add_argument("--start-message", type=_json_arg, default=None, metavar="JSON",
                      help="a JSON message sent once connected (raw: a text message, e.g. a session config; pipecat: a "
                      "MessageFrame, e.g. RTVI's client-ready)")
    wire.add_argument("--end-message", type=_json_arg, default=None, metavar="JSON", help="a JSON message sent before closing")
    wire.add_argument("--clear-type", default="clear",
                      help="raw: the `type` (or `action`) of the agent's JSON message that drops its queued audio "
                      "(default clear)")
    wire.add_argument("--header", action="append", default=[], metavar="NAME:VALUE", help="an HTTP header for the handshake")
    wire.add_argument("--settle", type=float, default=SETTLE_S, metavar="S",
                      help=f"before each call, wait until the agent has sent no sound for this long on the new "
                      f"connection (default {SETTLE_S:g}; raise it above the agent's longest reply delay)")
    wire.add_argument("--timeout", type=float, default=10.0, metavar="S",
                      help="per sample: how long after the caller finishes to wait for an agent that has sent nothing "
                      "(default 10); also how long a caller part waits for the agent event it is timed to, unless the "
                      "part sets its own `timeout`")
    wire.add_argument("--agent-timeout", type=float, default=AGENT_TIMEOUT_S, metavar="S",
                      help=f"give a call up when the agent has sent nothing at all for S seconds while the caller "
                      f"waits on it, without closing the connection: the call is marked stalled, the run goes on "
                      f"(default {AGENT_TIMEOUT_S:g})")
    calls = parser.add_argument_group("repeats and load")
    calls.add_argument("--repeat", type=int, default=1, metavar="K",
                       help="play each scenario K times; every figure gets a 95%% interval (default 1)")
    calls.add_argument("--concurrency", default="1", metavar="N|N,N,...",
                       help="N callers at once, each on its own connection, every one playing the whole scenario list; "
                       "a list (1,2,4,8) runs each level in turn and adds a table and load.png of response latency "
                       "(median, p90) against concurrency (default 1)")
    calls.add_argument("--seed", type=int, default=0,
                       help="the callers' random draws (gaps of `delay: human`); the same seed gives the same calls")
    after = parser.add_argument_group("scoring")
    after.add_argument("--no-fdb", action="store_true", help="do not run turneval full-duplex-bench on the run folder")
    after.add_argument("--no-report", action="store_true", help="do not run turneval report on conversation.wav")
    after.add_argument("--no-judge", action="store_true", help="report without the judge (faster)")
    after.add_argument("--no-predictor", action="store_true", help="report without the naturalness score (faster)")
    after.add_argument("--asr-model", metavar="PATH", default=None, help="Whisper for the agent's words (default tiny.en, offline)")
    after.add_argument("--require", metavar="'NAME<=X'", action="append", type=_requirement, default=[],
                       help="a pass/fail gate (as turneval report --require) on the probe's figures: the report's headline "
                       "figures, transport_delay_ms, failed_samples, probe.response_latency_s, probe.<task>.response_latency_s, "
                       ".stop_latency_s or .pass_rate, fdb.<task folder>.<figure> (e.g. fdb.candor_turn_taking.tor); exit 3 on failure")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def run(args: argparse.Namespace) -> int:
    from turneval.gates import run_gates
    from turneval.input_checks import check_output_dir
    from turneval.probe.load import parse_levels
    from turneval.probe.runner import ProbeSettings
    from turneval.probe.scenarios import load_scenarios
    from turneval.probe.session import prepare_run_dir, probe, score, write_run_files
    from turneval.probe.summary import EXCLUDED
    from turneval.probe.transports import ProbeError

    check_output_dir(args.out)
    headers = {}
    for item in args.header:
        name, sep, value = item.partition(":")
        if not sep:
            raise UserError(f"--header {item!r}: give NAME:VALUE")
        headers[name.strip()] = value.strip()
    options = {"headers": headers, "start_message": args.start_message, "end_message": args.end_message}
    if args.transport == "raw":
        options["clear_type"] = args.clear_type
    show = not args.quiet and sys.stderr.isatty()
    try:
        settings = ProbeSettings(agent=args.agent, transport=args.transport, sample_rate=args.sample_rate,
                                 frame_ms=args.frame_ms, timeout_s=args.timeout, settle_s=args.settle,
                                 transport_options=options, agent_timeout_s=args.agent_timeout, seed=args.seed)
        settings.make()  # a wrong rate for the wire fails before the folder is touched
        levels = parse_levels(args.concurrency)
        if not 1 <= args.repeat <= MAX_REPEAT:
            raise ProbeError(f"--repeat {args.repeat}: give 1 to {MAX_REPEAT} runs of each scenario")
        samples = load_scenarios(args.scenarios)  # a bad scenario file fails before the folder is touched
        prepare_run_dir(args.out, overwrite=args.overwrite)
        result = probe(samples, settings, args.out, scenarios=args.scenarios, progress=show, repeat=args.repeat,
                       concurrency=levels)
        print(result.table())
        if not any(o.status == "ok" for o in result.outcomes):
            raise UserError(_nothing_to_score(args, result.outcomes))
        from turneval.reporting import ReportOptions

        report_options = ReportOptions(judge=False if args.no_judge else None, predictor=False if args.no_predictor else None)
        score(result, fdb=not args.no_fdb, report=not args.no_report, asr_model=args.asr_model,
              report_options=report_options, progress=show)
        write_run_files(result, settings, args.scenarios)  # again, now with the gate figures
    except ProbeError as err:
        written = [name for name in ("v1.0", "v1.5", "calls", "failed", "excluded") if (Path(args.out) / name).is_dir()]
        raise UserError(f"{err} (samples written so far stay in {args.out})" if written else str(err)) from None
    except KeyboardInterrupt as err:  # Ctrl-C, or SIGTERM (turneval.interrupts raises it as Terminated)
        from turneval.interrupts import exit_code, stop_at_once_on_next_signal

        stop_at_once_on_next_signal()
        print(f"turneval probe: interrupted; the complete samples are in {args.out} (probe.json lists them)", file=sys.stderr)
        return exit_code(err)
    failed = [o for o in result.outcomes if o.status not in ("ok", *EXCLUDED)]
    if failed:
        print(f"{len(failed)} sample(s) failed (see {args.out}/failed/ and probe.json)", file=sys.stderr)
    excluded = [o for o in result.outcomes if o.status in EXCLUDED]
    if excluded:
        print(f"{len(excluded)} sample(s) kept out of the scores: the agent's audio began before the caller spoke "
              f"(see {args.out}/excluded/ and probe.json; raise --settle)", file=sys.stderr)
    print(f"wrote {args.out}")
    if args.require:
        table, code = run_gates(args.require, result.figures)
        print(table)
        return code
    return 0


def _nothing_to_score(args: argparse.Namespace, outcomes: list) -> str:
    """Why no sample can be scored, with what to change."""
    counts = Counter(o.status for o in outcomes)
    where = ", ".join(f"{n} {status}" for status, n in counts.items())
    text = f"no sample completed against {args.agent} ({where}); nothing to score (see {args.out}/failed/)"
    if counts.get("disconnected") == len(outcomes):
        text += (f"; the agent closed every call: check that --transport {args.transport} is the wire format it speaks "
                 "(a Pipecat bot: the serializer its transport uses)")
    elif counts.get("agent_first"):
        text += "; raise --settle so the agent falls silent before each call"
    return text
