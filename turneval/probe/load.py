"""Many callers at once (``--concurrency N`` or a list such as ``1,2,4,8``): response latency against load.

At each level N, N callers call the agent at the same time, each on its own connection, clock and
recording, every caller playing the whole scenario list (``--repeat`` times). Per level: the
calls, how many failed, and the median and 90th percentile of every response time of its
complete calls (each dialogue turn's, else the call's response latency), with the median's 95 %
interval. ``load.md`` holds the table, ``load.png`` the plot (median and p90 against N).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import numpy as np

from turneval.dataset_scripts.files import atomic_path
from turneval.probe.summary import median_interval
from turneval.probe.transports import ProbeError
from turneval.probe.verdicts import response_times


MAX_CONCURRENCY = 32
"""More callers than this on one machine measure the probe, not the agent."""


def parse_levels(text: str) -> list[int]:
    """``4`` or ``1,2,4,8``: the numbers of callers at once, each 1..MAX_CONCURRENCY, in the order given."""
    try:
        levels = [int(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise ProbeError(f"--concurrency {text!r}: give a number of callers or a list such as 1,2,4,8") from None
    if not levels or any(n < 1 or n > MAX_CONCURRENCY for n in levels):
        raise ProbeError(f"--concurrency {text!r}: each level must be 1 to {MAX_CONCURRENCY} callers")
    if len(set(levels)) != len(levels):
        raise ProbeError(f"--concurrency {text!r}: a level appears twice")
    return levels


def level_row(level: int, outcomes: Iterable[Any]) -> dict[str, Any]:
    """One level's figures (seconds)."""
    outcomes = list(outcomes)
    ok = [o for o in outcomes if o.status == "ok"]
    times = [t for o in ok for t in response_times(o)]
    row: dict[str, Any] = {"concurrency": level, "calls": len(outcomes), "failed": len(outcomes) - len(ok),
                           "responses": len(times), "median_s": None, "p90_s": None, "median_ci_s": None,
                           "max_lateness_ms": None}
    if times:
        row.update(median_s=round(float(np.median(times)), 4), p90_s=round(float(np.quantile(times, 0.9)), 4),
                   median_ci_s=median_interval(times))
    lateness = [x for o in outcomes for x in o.recording.send_lateness_s]
    if lateness:
        row["max_lateness_ms"] = round(1000 * max(lateness), 2)  # how late the busiest caller's frames left
    return row


def load_table(rows: list[dict[str, Any]]) -> str:
    """The levels as a markdown table (ms)."""
    def ms(v: Any) -> str:
        return "n/a" if v is None else f"{1000 * v:.0f}"

    lines = ["## Response latency against concurrency", "",
             "| callers at once | calls | failed | responses | median (ms) [95 % CI] | p90 (ms) | latest caller frame (ms) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        ci = r["median_ci_s"]
        ci_text = f" [{ms(ci[0])}, {ms(ci[1])}]" if ci else ""
        lines.append(f"| {r['concurrency']} | {r['calls']} | {r['failed']} | {r['responses']} | {ms(r['median_s'])}{ci_text} "
                     f"| {ms(r['p90_s'])} | {r['max_lateness_ms'] if r['max_lateness_ms'] is not None else 'n/a'} |")
    return "\n".join(lines)


def plot_levels(rows: list[dict[str, Any]], path: Path) -> Path | None:
    """Median and p90 response latency against the number of callers (None when no level has a response)."""
    rows = [r for r in rows if r["median_s"] is not None]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r["concurrency"] for r in rows]
    fig, ax = plt.subplots(figsize=(5, 3.2), dpi=120)
    ax.plot(x, [1000 * r["median_s"] for r in rows], "o-", label="median")
    ax.plot(x, [1000 * r["p90_s"] for r in rows], "s--", label="p90")
    with_ci = [r for r in rows if r["median_ci_s"]]
    if with_ci:
        ax.vlines([r["concurrency"] for r in with_ci], [1000 * r["median_ci_s"][0] for r in with_ci],
                  [1000 * r["median_ci_s"][1] for r in with_ci], color="C0", alpha=0.5, label="median, 95 % interval")
    ax.set_xscale("log", base=2)
    ax.set_xticks(x, [str(v) for v in x])
    ax.set_xlabel("callers at once")
    ax.set_ylabel("response latency (ms)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)
    return path
