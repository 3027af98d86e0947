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
- ``probe.<task>.pass_rate``: the share of turneval's own calls of that task (barge_in,
  backchannel, pause_hold, dialogue) that passed (:mod:`turneval.probe.verdicts`);
- ``fdb.<task folder>.<figure>``: every number of ``turneval full-duplex-bench``'s task summaries
  (``fdb.candor_turn_taking.tor``, ``fdb.user_interruption.stop_latency_s``, ...).
"""
from __future__ import annotations

import statistics
from typing import Any, Iterable, Mapping

import numpy as np

from turneval.metrics.intervals import wilson_interval as shared_wilson
from turneval.probe.scenarios import CALL_TASKS, V10_TASKS, V15_TASKS


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
    for task in CALL_TASKS:
        names += [f"probe.{task}.response_latency_s", f"probe.{task}.stop_latency_s", f"probe.{task}.pass_rate"]
    return names


def _median(values: Iterable[Any]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return round(statistics.median(kept), 4) if kept else None


def median_interval(values: Iterable[Any], level: float = 0.95, n_boot: int = 2000) -> list[float] | None:
    """A percentile-bootstrap interval of the median (fixed seed, so a run's tables do not move); None under 2 values."""
    kept = np.asarray([float(v) for v in values if v is not None])
    if kept.size < 2:
        return None
    rng = np.random.default_rng(0)
    medians = np.median(rng.choice(kept, size=(n_boot, kept.size), replace=True), axis=1)
    low, high = np.quantile(medians, [(1 - level) / 2, 1 - (1 - level) / 2])
    return [round(float(low), 4), round(float(high), 4)]


def wilson_interval(k: int, n: int, z: float = 1.96) -> list[float] | None:
    """The Wilson 95 % interval of a rate k / n, rounded for the tables (None for n = 0)."""
    if n == 0:
        return None
    low, high = shared_wilson(k, n, z=z)
    return [round(low, 4), round(high, 4)]


def task_timing(outcomes: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Per task: calls, failures, calls kept out, the medians of the probe's response and stop latencies with their
    95 % intervals (with two calls or more: ``--repeat``), and for turneval's own calls how many passed."""
    out: dict[str, dict[str, Any]] = {}
    for o in outcomes:
        row = out.setdefault(o.sample.task, {"n": 0, "failed": 0, "excluded": 0, "response": [], "stop": [], "verdicts": []})
        row["n"] += 1
        if o.status in EXCLUDED:
            row["excluded"] += 1
            continue
        if o.status != "ok":
            row["failed"] += 1
            continue
        row["response"].append(o.timing.get("response_latency_s"))
        row["stop"].append(o.timing.get("stop_latency_s"))
        if (getattr(o, "verdict", None) or {}).get("passed") is not None:
            row["verdicts"].append(bool(o.verdict["passed"]))
    table = {}
    for task, r in out.items():
        table[task] = {"n": r["n"], "failed": r["failed"], "excluded": r["excluded"],
                       "response_latency_s": _median(r["response"]), "n_response": sum(v is not None for v in r["response"]),
                       "stop_latency_s": _median(r["stop"]), "n_stop": sum(v is not None for v in r["stop"])}
        intervals = {"response_latency_ci_s": median_interval(r["response"]), "stop_latency_ci_s": median_interval(r["stop"])}
        table[task].update({k: v for k, v in intervals.items() if v is not None})
        if r["verdicts"]:
            k, n = sum(r["verdicts"]), len(r["verdicts"])
            table[task].update(passed=k, judged=n, pass_rate=round(k / n, 4), pass_rate_ci=wilson_interval(k, n))
    return table


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
        if task in CALL_TASKS:
            figures[f"probe.{task}.pass_rate"] = row.get("pass_rate")
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
                     f"| {_ms(row['response_latency_s'])}{_ci_ms(row.get('response_latency_ci_s'))} (n={row['n_response']}) "
                     f"| {d} | {_ms(row['stop_latency_s'])}{_ci_ms(row.get('stop_latency_ci_s'))} (n={row['n_stop']}) | {d} |")
    return "\n".join(lines)


def _ci_ms(interval: list[float] | None) -> str:
    return "" if not interval else f" [{1000 * interval[0]:.0f}, {1000 * interval[1]:.0f}]"


def _call_figures(verdict: Mapping[str, Any]) -> str:
    """A call's figures in a few words (the table cell of probe.md)."""
    if "turns" in verdict:
        cells = []
        for t in verdict["turns"]:
            gap = "" if t.get("gap_error_ms") is None else f", gap {1000 * t['gap_s']:.0f} ms (plan {1000 * t['planned_gap_s']:.0f})"
            cut = ", cut off" if t.get("cut_off_at_s") is not None else ""
            cells.append(f"turn {t['turn']}: response {_ms(t.get('response_s'))} ms{gap}{cut}")
        return "; ".join(cells)
    keys = [k for k in verdict if k not in ("passed", "why", "turns")]
    return ", ".join(f"{k} {_cell(verdict[k])}" for k in keys)


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:g}" if isinstance(value, float) else str(value)


CALL_FIGURES = {"barge_in": ("leave_error_ms", "time_to_yield_s"), "backchannel": ("inside_agent_speech", "agent_stopped_after"),
                "pause_hold": ("agent_started_in_pause_after_s",), "dialogue": ("response_s", "gap_error_ms")}
"""The figures of each call task summed up over its calls (dialogue: over every turn)."""


def call_task_summary(outcomes: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Per call task: calls passed with the Wilson 95 % interval, and each figure's median with its interval."""
    out: dict[str, dict[str, Any]] = {}
    for o in outcomes:
        verdict = getattr(o, "verdict", None) or {}
        if o.sample.task not in CALL_FIGURES or "passed" not in verdict:
            continue
        row = out.setdefault(o.sample.task, {"results": [], "values": {k: [] for k in CALL_FIGURES[o.sample.task]}})
        row["results"].append(verdict["passed"])
        for source in verdict.get("turns") or [verdict]:
            for key in CALL_FIGURES[o.sample.task]:
                if source.get(key) is not None:
                    row["values"][key].append(float(source[key]))
    summary = {}
    for task, row in out.items():
        judged = [r for r in row["results"] if r is not None]
        figures = {k: {"median": _median(v), "ci": median_interval(v), "n": len(v)} for k, v in row["values"].items() if v}
        summary[task] = {"passed": sum(judged), "judged": len(judged), "pass_ci": wilson_interval(sum(judged), len(judged)),
                         "figures": figures}
    return summary


def _figure_cell(name: str, figure: Mapping[str, Any]) -> str:
    ci = figure["ci"]
    return f"{name} {figure['median']:g}" + (f" [{ci[0]:g}, {ci[1]:g}]" if ci else "") + f" (n={figure['n']})"


def verdict_table(outcomes: Iterable[Any]) -> str:
    """Pass or fail per call of turneval's own tasks, with its figures (and per task, medians with 95 % intervals);
    empty when the run has none."""
    outcomes = list(outcomes)
    rows = [o for o in outcomes if getattr(o, "verdict", None) and "passed" in o.verdict]
    if not rows:
        return ""
    lines = ["## Calls: pass or fail", "", "| task | passed [95 % CI] | medians [95 % CI] |", "|---|---|---|"]
    for task, row in call_task_summary(rows).items():
        ci = row["pass_ci"]
        rate = f"{row['passed']} of {row['judged']}" + (f" [{100 * ci[0]:.0f}-{100 * ci[1]:.0f} %]" if ci else "")
        lines.append(f"| {task} | {rate} | {'; '.join(_figure_cell(k, f) for k, f in row['figures'].items())} |")
    lines += ["", "| call | result | why | figures |", "|---|---|---|---|"]
    for o in rows:
        result = {True: "pass", False: "FAIL", None: "n/a"}[o.verdict["passed"]]
        lines.append(f"| {o.path} | {result} | {o.verdict.get('why', '')} | {_call_figures(o.verdict)} |")
    return "\n".join(lines)
