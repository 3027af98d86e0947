"""Markdown tables of a Full-Duplex-Bench run: the paper's v1.0 row and v1.5 table, then per-task detail."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from turneval.dataset_scripts.files import to_jsonable
from turneval.dataset_scripts.readers.full_duplex_bench import V15_SCENARIOS

from ._common import fmt
from .full_duplex_bench_sources import TASK_TITLES


if TYPE_CHECKING:
    from .full_duplex_bench import FullDuplexBenchRunResult
    from .full_duplex_bench_scorers import FullDuplexBenchTaskResult


_V1_COLUMNS = {
    "pause_handling": (("TOR ↓", "tor"),),
    "backchannel": (("TOR ↓", "tor"), ("Freq ↑", "freq_per_s"), ("JSD ↓", "jsd")),
    "smooth_turn_taking": (("TOR ↑", "tor"), ("Latency ↓", "latency_s")),
    "user_interruption": (("TOR ↑", "tor"), ("GPT-4o ↑", "rating"), ("Latency ↓", "latency_s")),
}


def _v1_table(result: FullDuplexBenchRunResult) -> list[str]:
    """One row in the shape of the paper's Table (tasks in its order, a column group per folder)."""
    header, cells = ["Model"], [result.model_name]
    for kind in ("pause_handling", "backchannel", "smooth_turn_taking", "user_interruption"):
        for task in (t for t in result.tasks if t.kind == kind):
            for label, key in _V1_COLUMNS[kind]:
                header.append(f"{TASK_TITLES[kind]} ({task.name}) {label}")
                cells.append(fmt(task.summary.get(key)))
    if len(header) == 1:
        return []
    return [
        "## Full-Duplex-Bench v1.0",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        "| " + " | ".join(cells) + " |",
        "",
        "TOR: take-over rate; Freq: backchannels per second; JSD: Jensen-Shannon distance of backchannel timing to "
        "human listeners; Latency in seconds; GPT-4o: judge rating 0-5 (from the benchmark's rating.json files).",
        "",
    ]


def _v15_table(result: FullDuplexBenchRunResult) -> list[str]:
    tasks = sorted((t for t in result.tasks if t.kind == "overlap"),
                   key=lambda t: (V15_SCENARIOS.index(t.name) if t.name in V15_SCENARIOS else len(V15_SCENARIOS), t.name))
    if not tasks:
        return []
    tags = sorted({tag for t in tasks for ratios in t.summary["behaviour_ratios"].values() for tag in ratios})
    header = ["Scenario", "n", "overlap rate", *tags, "stop latency (s) ↓", "response latency (s) ↓"]
    lines = ["## Full-Duplex-Bench v1.5", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for t in tasks:
        ratios = {tag: r for axis in t.summary["behaviour_ratios"].values() for tag, r in axis.items()}
        row = [t.name, str(t.n_samples), fmt(t.summary["overlap_rate"]), *[fmt(ratios.get(tag), 2) for tag in tags],
               fmt(t.summary["stop_latency_s"]), fmt(t.summary["response_latency_s"])]
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "overlap rate: share of samples whose input.json and output.json words overlap in time (check_overlap); "
        "behaviour columns: ratio of each judge tag (content_tag.json); latencies: mean length of the stop-latency "
        "intervals and response gaps of get_timing, pooled over samples.",
        "",
    ]
    return lines


def _sample_table(task: FullDuplexBenchTaskResult) -> list[str]:
    columns = {
        "pause_handling": ("tor", "n_words", "first_word_start_s"),
        "smooth_turn_taking": ("tor", "latency_s", "n_words", "first_word_start_s", "turn_end_s"),
        "user_interruption": ("tor", "latency_s", "rating", "n_words", "first_word_start_s", "interrupt_end_s"),
        "backchannel": ("tor", "freq_per_s", "jsd", "backchannel_predictions", "duration_s"),
        "overlap": ("overlap", "behaviour", "latency_stop_list", "latency_resp_list", "timing_source"),
    }[task.kind]
    lines = ["| sample | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 1)]
    for key, row in task.samples.items():
        cells = [json.dumps(to_jsonable(row[c])) if isinstance(row.get(c), list) else fmt(row.get(c)) for c in columns]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return lines


def run_markdown(result: FullDuplexBenchRunResult, per_sample: bool) -> str:
    """The whole run as markdown: the paper's tables, then each task's figures, notes and samples."""
    lines = [f"# Full-Duplex-Bench: {result.model_name}", "", f"Run folder: `{result.run_dir}`", ""]
    lines += _v1_table(result) + _v15_table(result)
    for task in result.tasks:
        lines += [f"## {TASK_TITLES[task.kind]}: {task.name} ({task.version}, {task.n_samples} samples)", ""]
        # without the human distributions the JSD figures are not measured: the note says so, once
        unmeasured = {"jsd", "jsd_std", "n_jsd"} if task.kind == "backchannel" and not task.summary.get("gt_distribution_file") else set()
        lines += [f"- {key}: {fmt(value) if not isinstance(value, dict) else json.dumps(to_jsonable(value))}"
                  for key, value in task.summary.items() if key not in unmeasured]
        lines += [f"- note: {note}" for note in task.notes]
        if task.skipped:
            lines.append(f"- skipped: {len(task.skipped)} sample(s): " + "; ".join(f"{s['sample']} ({s['reason']})" for s in task.skipped[:10]))
        lines.append("")
        if per_sample and task.samples:
            lines += _sample_table(task) + [""]
    return "\n".join(lines)
