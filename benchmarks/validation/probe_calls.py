"""turneval probe's callers that react, on loopback: do the parts leave when planned, and do many callers agree with
the agent's own log?

    python benchmarks/validation/probe_calls.py [--quick] [--json FILE]

Against mock agents on 127.0.0.1 (turneval.probe.mock_agents, raw wire), in real time:

- ``polite`` (answers 1.1 s after the caller stops, yields 0.3 s into any overlap), the ``barge-in`` suite:
  each barge-in, planned 0.5, 1 and 2 s after the agent's first sound, leaves within 30 ms of plan
  (its start on the caller's track against the agent's first sound in the recording plus the delay);
  the time to yield reads 300 +- 30 ms;
- the ``backchannel`` suite against ``polite`` and ``steady`` (talks on through caller sound under
  0.6 s): every backchannel falls inside the agent's speech; ``steady`` passes, ``polite`` stops;
- the ``dialogue`` suite (five-turn calls, gaps drawn from Switchboard) against ``polite`` with a
  short answer: every caller turn starts within 50 ms of its planned gap after the agent's end of turn;
- ``--concurrency 8``: eight callers at once against ``variable`` (each reply's latency drawn uniform
  1.1 +- 0.2 s; the mock tells each reply's latency in a text message, its own log): every call's
  response latency within 60 ms of the agent's log, each call hearing only its own agent (one reply
  each, no call whose agent sound came first).

Targets are printed, not asserted. ``run(quick)`` gives the figures to benchmarks/run_all.py
(quick: one barge-in, one backchannel call, one three-turn dialogue, eight callers once; about 50 s).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any


LEAVE_TOLERANCE_MS = 30.0
YIELD_S, YIELD_TOLERANCE_MS = 0.3, 30.0
GAP_TOLERANCE_MS = 50.0
LOG_TOLERANCE_MS = 60.0
SHORT_ANSWER = "sure I can help you with that"


def _play(samples: list, mock: str, out: Path, callers: int = 1, **overrides: Any) -> list:
    from turneval.probe.mock_agents import MockAgent
    from turneval.probe.runner import ProbeSettings, call_slots, run_samples

    with MockAgent(mock, announce=True, **overrides) as url:
        return run_samples(samples, ProbeSettings(agent=url, settle_s=0.2), out, url, plan=call_slots(samples, 1, callers))


def _suite(name: str, n: int | None, tail_s: float | None = None, turns: int | None = None) -> list:
    from turneval.probe.scenarios import load_scenarios

    samples = load_scenarios(name)[:n]
    if turns is not None:
        samples = [dataclasses.replace(s, parts=s.parts[:turns]) for s in samples]
    if tail_s is not None:
        samples = [dataclasses.replace(s, tail_s=tail_s) for s in samples]
    return samples


def barge_ins(quick: bool, out: Path) -> dict[str, Any]:
    samples = _suite("barge-in", None, tail_s=1.0)
    if quick:
        samples = samples[1:2]  # the 1 s barge-in
    outcomes = _play(samples, "polite", out / "barge")
    rows = [{"call": o.path, "status": o.status, **{k: o.verdict.get(k) for k in
             ("delay_s", "leave_error_ms", "time_to_yield_s", "passed")}} for o in outcomes]
    errors = [abs(r["leave_error_ms"]) for r in rows if r["leave_error_ms"] is not None]
    yields = [r["time_to_yield_s"] for r in rows if r["time_to_yield_s"] is not None]
    return {"calls": rows, "worst_leave_error_ms": max(errors) if len(errors) == len(rows) else None,
            "yield_ms": [round(1000 * y, 1) for y in yields],
            "worst_yield_error_ms": max(abs(1000 * (y - YIELD_S)) for y in yields) if len(yields) == len(rows) else None}


def backchannels(quick: bool, out: Path) -> dict[str, Any]:
    samples = _suite("backchannel", 1 if quick else None, tail_s=1.0)
    result = {}
    for mock in ("steady",) if quick else ("steady", "polite"):
        outcomes = _play(samples, mock, out / f"bc-{mock}")
        result[mock] = [{"call": o.path, "status": o.status, **{k: o.verdict.get(k) for k in
                         ("backchannels", "inside_agent_speech", "agent_stopped_after", "passed")}} for o in outcomes]
    every = [r for rows in result.values() for r in rows]
    result["all_inside"] = bool(every) and all(r["backchannels"] and r["inside_agent_speech"] == r["backchannels"]
                                               for r in every)
    return result


def dialogues(quick: bool, out: Path) -> dict[str, Any]:
    samples = _suite("dialogue", 1 if quick else None, tail_s=1.6, turns=3 if quick else None)
    outcomes = _play(samples, "polite", out / "dialogue", answer=SHORT_ANSWER)
    turns = [t for o in outcomes for t in (o.verdict.get("turns") or [])]
    errors = [abs(t["gap_error_ms"]) for t in turns if "planned_gap_s" in t]
    planned = [t for t in turns if "planned_gap_s" in t]
    return {"calls": [{"call": o.path, "status": o.status, "passed": o.verdict.get("passed")} for o in outcomes],
            "turns": turns, "worst_gap_error_ms": max(errors) if errors and len(errors) == len(planned) else None,
            "caller_turns_timed": len(planned)}


def _agent_log(outcome: Any) -> list[float]:
    return [m["latency_s"] for _, m in outcome.recording.messages if isinstance(m, dict) and m.get("type") == "mock_reply"]


def many_callers(quick: bool, out: Path, callers: int = 8) -> dict[str, Any]:
    from turneval.probe.scenarios import build_sample

    texts = ["what time does the pharmacy open tomorrow", "how long does the train to the airport take"]
    samples = [build_sample({"task": "candor_turn_taking", "id": str(i + 1), "tail_s": 2.0,
                             "user": [{"say": t, "punct": "?"}]}, i, "probe_calls", Path("."))
               for i, t in enumerate(texts[: 1 if quick else 2])]
    outcomes = _play(samples, "variable", out / "load", callers=callers)
    rows, diffs = [], []
    for o in outcomes:
        log = _agent_log(o)
        probe_s = o.timing.get("response_latency_s")
        diff = None if probe_s is None or len(log) != 1 else round(1000 * (probe_s - log[0]), 1)
        rows.append({"call": o.path, "status": o.status, "probe_s": probe_s, "agent_log_s": log, "diff_ms": diff})
        if diff is not None:
            diffs.append(abs(diff))
    own = all(r["status"] == "ok" and len(r["agent_log_s"]) == 1 for r in rows)
    lateness = max((x for o in outcomes for x in o.recording.send_lateness_s), default=0.0)
    return {"callers": callers, "calls": rows, "worst_diff_ms": max(diffs) if len(diffs) == len(rows) else None,
            "each_call_its_own_agent": own, "latest_caller_frame_ms": round(1000 * lateness, 1)}


def measure(quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        return {"barge_in": barge_ins(quick, out), "backchannel": backchannels(quick, out),
                "dialogue": dialogues(quick, out), "concurrency": many_callers(quick, out)}


def _holds(value: Any, limit: float) -> str:
    return "n/a" if value is None else ("yes" if value <= limit else "NO")


def format_result(r: dict[str, Any]) -> str:
    b, d, c = r["barge_in"], r["dialogue"], r["concurrency"]
    lines = ["| target | measured | holds |", "|---|---|---|",
             f"| barge-ins leave within {LEAVE_TOLERANCE_MS:g} ms of plan (agent's first sound + 0.5/1/2 s) "
             f"| worst {b['worst_leave_error_ms']} ms over {len(b['calls'])} calls | {_holds(b['worst_leave_error_ms'], LEAVE_TOLERANCE_MS)} |",
             f"| time to yield 300 +- {YIELD_TOLERANCE_MS:g} ms | {b['yield_ms']} ms | {_holds(b['worst_yield_error_ms'], YIELD_TOLERANCE_MS)} |",
             f"| backchannels inside the agent's turns | {json.dumps({k: v for k, v in r['backchannel'].items() if k != 'all_inside'})} "
             f"| {'yes' if r['backchannel']['all_inside'] else 'NO'} |",
             f"| dialogue turns within {GAP_TOLERANCE_MS:g} ms of their planned gap | worst {d['worst_gap_error_ms']} ms over "
             f"{d['caller_turns_timed']} caller turns | {_holds(d['worst_gap_error_ms'], GAP_TOLERANCE_MS)} |",
             f"| --concurrency {c['callers']}: latency within {LOG_TOLERANCE_MS:g} ms of the agent's log | worst "
             f"{c['worst_diff_ms']} ms over {len(c['calls'])} calls; latest caller frame {c['latest_caller_frame_ms']} ms "
             f"| {_holds(c['worst_diff_ms'], LOG_TOLERANCE_MS)} |",
             f"| no call holds another's audio (one reply each, none heard before its caller) | "
             f"{c['each_call_its_own_agent']} | {'yes' if c['each_call_its_own_agent'] else 'NO'} |"]
    return "\n".join(lines)


def run(quick: bool) -> list[dict]:
    """Figures for benchmarks/run_all.py."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness
    from _harness import figure

    r = measure(quick)
    nan = float("nan")

    def value(v: Any) -> float:
        return nan if v is None else float(v)

    b, d, c = r["barge_in"], r["dialogue"], r["concurrency"]
    return [
        figure("probe calls: worst barge-in leave error vs plan", value(b["worst_leave_error_ms"]), "ms",
               note=f"{len(b['calls'])} barge-ins against mock:polite; target {LEAVE_TOLERANCE_MS:g} ms"),
        figure("probe calls: worst time-to-yield error (0.3 s mock)", value(b["worst_yield_error_ms"]), "ms",
               note=f"measured {b['yield_ms']} ms; target {YIELD_TOLERANCE_MS:g} ms"),
        figure("probe calls: backchannels inside the agent's speech", 1.0 if r["backchannel"]["all_inside"] else 0.0, "bool"),
        figure("probe calls: worst dialogue gap error vs plan", value(d["worst_gap_error_ms"]), "ms",
               note=f"{d['caller_turns_timed']} caller turns; target {GAP_TOLERANCE_MS:g} ms"),
        figure(f"probe calls: worst |probe - agent log| latency, {c['callers']} callers at once", value(c["worst_diff_ms"]), "ms",
               note=f"{len(c['calls'])} calls; target {LOG_TOLERANCE_MS:g} ms; latest caller frame {c['latest_caller_frame_ms']} ms"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one call per target (about 50 s)")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write every call's figures as JSON")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness
    from _harness import emit_result

    return emit_result(measure(args.quick), args.json, format_result)


if __name__ == "__main__":
    sys.exit(main())
