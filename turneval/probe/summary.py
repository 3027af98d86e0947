"""The probe's figures: its own timing per task, beside the transport's delay, as a table and as gate figures.

The gate figures are one flat dict, the same shape :mod:`turneval.gates` checks for ``turneval
report``: the report's headline figures (when the report ran) plus

- ``transport_delay_ms``: median round trip through the loopback echo agent;
- ``failed_samples``: samples the agent broke (disconnect, silence past the timeout, never silent
  before the call);
- ``excluded_samples``: samples kept out of the scores because the agent's sound began before
  the caller's (the rest of an earlier call, a greeting);
- ``probe.response_latency_s``: median caller-turn-end to agent-speech over the smooth
  turn-taking samples, from arrival times (``probe.<task>.response_latency_s`` per task);
- ``probe.<task>.stop_latency_s``: median time the agent went on talking after the marked
  event (interruption, backchannel, ...) began;
- ``fdb.<task folder>.<figure>``: every number of ``turneval fdb``'s task summaries
  (``fdb.candor_turn_taking.tor``, ``fdb.user_interruption.stop_latency_s``, ...).
"""
from __future__ import annotations

import statistics
from typing import Any, Iterable, Mapping

from turneval.probe.scenarios import V10_TASKS, V15_TASKS


PROBE_FIGURES = ("transport_delay_ms", "failed_samples", "excluded_samples", "probe.response_latency_s")
EXCLUDED = ("agent_first",)
"""Statuses kept out of the scores without being the agent's failure (see turneval.probe.runner)."""
FDB_KEYS = ("tor", "latency_s", "rating", "freq_per_s", "jsd", "overlap_rate", "stop_latency_s", "response_latency_s")
TURN_TAKING_TASK = "candor_turn_taking"


def known_figures() -> list[str]:
    """Every name ``turneval probe --require`` accepts."""
    from turneval.gates import HEADLINE_FIGURES

    names = list(HEADLINE_FIGURES) + list(PROBE_FIGURES)
    for task in V10_TASKS + V15_TASKS:
        names += [f"probe.{task}.response_latency_s", f"probe.{task}.stop_latency_s"]
        names += [f"fdb.{task}.{key}" for key in FDB_KEYS]
    return names


def _median(values: Iterable[Any]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return round(statistics.median(kept), 4) if kept else None


def task_timing(outcomes: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Per task: samples, failures, samples kept out, and the medians of the probe's response and stop latencies."""
    out: dict[str, dict[str, Any]] = {}
    for o in outcomes:
        row = out.setdefault(o.sample.task, {"n": 0, "failed": 0, "excluded": 0, "response": [], "stop": []})
        row["n"] += 1
        if o.status in EXCLUDED:
            row["excluded"] += 1
            continue
        if o.status != "ok":
            row["failed"] += 1
            continue
        row["response"].append(o.timing.get("response_latency_s"))
        row["stop"].append(o.timing.get("stop_latency_s"))
    return {task: {"n": r["n"], "failed": r["failed"], "excluded": r["excluded"], "response_latency_s": _median(r["response"]),
                   "n_response": sum(v is not None for v in r["response"]),
                   "stop_latency_s": _median(r["stop"]), "n_stop": sum(v is not None for v in r["stop"])}
            for task, r in out.items()}


def gate_figures(timing_by_task: Mapping[str, Mapping[str, Any]], delay: Mapping[str, Any], fdb: Any = None,
                 headline: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The flat figures dict the gates read (see the module docstring)."""
    figures: dict[str, Any] = dict(headline or {})
    figures["transport_delay_ms"] = delay.get("median_ms")
    figures["failed_samples"] = sum(r["failed"] for r in timing_by_task.values())
    figures["excluded_samples"] = sum(r.get("excluded", 0) for r in timing_by_task.values())
    for task, row in timing_by_task.items():
        figures[f"probe.{task}.response_latency_s"] = row["response_latency_s"]
        figures[f"probe.{task}.stop_latency_s"] = row["stop_latency_s"]
    figures["probe.response_latency_s"] = (timing_by_task.get(TURN_TAKING_TASK) or {}).get("response_latency_s")
    for task in getattr(fdb, "tasks", []) or []:
        for key, value in task.summary.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                figures[f"fdb.{task.name}.{key}"] = value
    return figures


def _ms(value: Any) -> str:
    return "n/a" if value is None else f"{1000 * value:.0f}"


def timing_table(timing_by_task: Mapping[str, Mapping[str, Any]], delay: Mapping[str, Any]) -> str:
    """The probe's own timing per task, with the transport's delay beside every latency."""
    d = f"{delay.get('median_ms', float('nan')):.1f}"
    lines = [
        "## Probe timing (arrival times; caller times exact by construction)",
        "",
        f"Transport delay (loopback echo round trip, same wire format): median {d} ms, p95 "
        f"{delay.get('p95_ms', float('nan')):.1f} ms. It is part of every latency below; the agent's own latency is "
        "the figure less this.",
        "",
        "| task | samples | failed | excluded | response latency (ms) | transport delay (ms) | stop latency (ms) "
        "| transport delay (ms) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for task, row in timing_by_task.items():
        lines.append(f"| {task} | {row['n']} | {row['failed']} | {row.get('excluded', 0)} "
                     f"| {_ms(row['response_latency_s'])} (n={row['n_response']}) | {d} | {_ms(row['stop_latency_s'])} (n={row['n_stop']}) | {d} |")
    return "\n".join(lines)
