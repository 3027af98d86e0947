"""turneval probe against the mock agents: does it measure what each mock was told to do?

    python benchmarks/validation/probe_mocks.py [--suite fdb] [--mocks cascaded,eager,duplex] [--wire raw]

Each mock agent (turneval.probe.mock_agents) is served on 127.0.0.1 and probed in real time
with a scenario suite; the run folder is scored by `turneval full-duplex-bench` (the agent's words by
offline Whisper tiny.en). Checked against the mock's settings:

- response latency (caller turn end -> first agent sound, from arrival times) on the smooth
  turn-taking samples: the mock's silence_s + delay_s, within 20 ms;
- stop latency on interruption samples for a mock that yields: its yield_after_s, within 20 ms;
- take-over rates (Full-Duplex-Bench's rule on the transcribed words): pause handling 1 where
  the pause outlasts the mock's silence_s, else 0; smooth turn-taking 1; backchannel 0; and
  backchannels (Freq > 0) only from a mock that makes them.

Every latency is printed beside the transport's own delay (loopback echo round trip).
``run(quick)`` gives the figures to benchmarks/run_all.py (quick: the two-sample smoke suite).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any


TOLERANCE_S = 0.020


def _tasks(run: Any) -> dict[str, Any]:
    return {t.name: t for t in (run.fdb.tasks if run.fdb else [])}


def check_mock(name: str, suite: str, wire: str = "raw", out_dir: Path | None = None) -> dict[str, Any]:
    """Probe one mock with ``suite``; return measured and configured figures, and which checks held."""
    from turneval.probe.mock_agents import MOCK_BEHAVIOURS
    from turneval.probe.runner import ProbeSettings
    from turneval.probe.scenarios import load_scenarios
    from turneval.probe.session import probe, score

    behaviour = MOCK_BEHAVIOURS[name]
    samples = load_scenarios(suite)
    with tempfile.TemporaryDirectory() as tmp:
        out = out_dir or Path(tmp) / name
        run = probe(samples, ProbeSettings(agent=f"mock:{name}", transport=wire), out, scenarios=suite, log=lambda _: None)
        score(run, fdb=True, report=False, log=lambda _: None)
        pauses = {}
        for folder in sorted((out / "v1.0" / "synthetic_pause_handling").glob("*/pause.json")):
            stamp = json.loads(folder.read_text())[0]["timestamp"]
            pauses[folder.parent.name] = stamp[1] - stamp[0]
    tasks = _tasks(run)
    ok = [o for o in run.outcomes if o.status == "ok"]
    rows: list[dict[str, Any]] = []

    def row(what: str, configured: Any, measured: Any, holds: bool | None) -> None:
        rows.append({"check": what, "configured": configured, "measured": measured,
                     "holds": None if holds is None else bool(holds)})

    turn = [o.timing["response_latency_s"] for o in ok if o.sample.task == "candor_turn_taking"]
    if turn:
        worst = max(abs(v - behaviour.latency_s) for v in turn if v is not None) if None not in turn else None
        row("response latency, smooth turn-taking (s)", round(behaviour.latency_s, 3),
            [round(float(v), 4) for v in turn if v is not None],
            worst is not None and worst <= TOLERANCE_S)
    stops = [o.timing["stop_latency_s"] for o in ok if o.sample.task in ("synthetic_user_interruption", "user_interruption")]
    if behaviour.yields and stops:
        good = [round(float(v), 4) for v in stops if v is not None]
        row("stop latency when interrupted (s)", behaviour.yield_after_s, good,
            len(good) == len(stops) and max(abs(v - behaviour.yield_after_s) for v in good) <= TOLERANCE_S)
    pause = tasks.get("synthetic_pause_handling")
    if pause is not None:
        expected = [1.0 if pauses[key] > behaviour.silence_s else 0.0 for key in pause.samples]
        want = statistics.mean(expected)
        row("pause handling TOR (pause > silence_s)", want, pause.summary["tor"], abs(pause.summary["tor"] - want) < 1e-9)
    smooth = tasks.get("candor_turn_taking")
    if smooth is not None:
        row("smooth turn-taking TOR", 1.0, smooth.summary["tor"], smooth.summary["tor"] == 1.0)
        row("smooth turn-taking FDB latency (s, first word by Whisper)", round(behaviour.latency_s, 3),
            round(smooth.summary["latency_s"], 3), None)
    back = tasks.get("icc_backchannel")
    if back is not None:
        makes = behaviour.backchannel_after_s is not None
        row("backchannel TOR", 0.0, back.summary["tor"], back.summary["tor"] == 0.0)
        row("backchannels per s > 0", makes, round(back.summary["freq_per_s"], 3), (back.summary["freq_per_s"] > 0) == makes)
    for task in tasks.values():
        if task.kind == "overlap":
            row(f"v1.5 {task.name}: stop / response latency (s, Silero)", None,
                [round(task.summary.get("stop_latency_s") or float("nan"), 3),
                 round(task.summary.get("response_latency_s") or float("nan"), 3)], None)
    return {"mock": name, "wire": wire, "suite": suite, "behaviour": run.mock, "transport_delay": run.delay,
            "failed": len(run.outcomes) - len(ok), "checks": rows}


def format_result(result: dict[str, Any]) -> str:
    d = result["transport_delay"]
    lines = [f"### mock:{result['mock']} ({result['wire']}, suite {result['suite']}): transport delay median "
             f"{d['median_ms']:.1f} ms, p95 {d['p95_ms']:.1f} ms; failed samples {result['failed']}", "",
             "| check | configured | measured | holds |", "|---|---|---|---|"]
    for r in result["checks"]:
        holds = "-" if r["holds"] is None else ("yes" if r["holds"] else "NO")
        lines.append(f"| {r['check']} | {r['configured']} | {r['measured']} | {holds} |")
    return "\n".join(lines)


def run(quick: bool) -> list[dict]:
    """Figures for benchmarks/run_all.py: worst latency error per mock and the transport delay."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness
    from _harness import figure

    out = []
    for name in ("cascaded", "eager", "duplex"):
        result = check_mock(name, "smoke" if quick else "fdb")
        checks = result["checks"]
        latency = next(r for r in checks if r["check"].startswith("response latency"))
        worst = max(abs(v - latency["configured"]) for v in latency["measured"]) if latency["measured"] else float("nan")
        held = sum(bool(r["holds"]) for r in checks if r["holds"] is not None)
        total = sum(r["holds"] is not None for r in checks)
        out.append(figure(f"probe mock:{name}: worst response-latency error", 1000 * worst, "ms",
                          note=f"configured {latency['configured']} s; {held} of {total} checks hold; transport delay "
                          f"median {result['transport_delay']['median_ms']:.1f} ms"))
    out.append(figure("probe transport delay (loopback echo, raw)", result["transport_delay"]["median_ms"], "ms"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="fdb", help="scenario suite or file (default fdb: v1.0 and v1.5)")
    parser.add_argument("--mocks", default="cascaded,eager,duplex")
    parser.add_argument("--wire", choices=("raw", "pipecat"), default="raw")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the results as JSON")
    args = parser.parse_args()
    results = []
    for name in args.mocks.split(","):
        result = check_mock(name, args.suite, args.wire)
        print(format_result(result) + "\n", flush=True)
        results.append(result)
    if args.json:
        from turneval.dataset_scripts.files import to_jsonable

        Path(args.json).write_text(json.dumps(to_jsonable(results), indent=1) + "\n")
    broken = [r["check"] for res in results for r in res["checks"] if r["holds"] is False]
    print(f"{len(broken)} check(s) do not hold" + (": " + "; ".join(broken) if broken else ""))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
