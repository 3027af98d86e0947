"""Evaluate a Full-Duplex-Bench run folder with the benchmark's own rules.

Full-Duplex-Bench (Lin et al., 2025; v1.5: Lin et al., 2025b) scores a full-duplex system on
scripted user audio. Per task folder (see :mod:`turneval.dataset_scripts.readers.full_duplex_bench`
for the layout):

* **pause handling**: take-over rate (TOR, lower is better) from the words of ``output.json``;
* **backchannel**: TOR, backchannels per second and the JS distance of their timing to the
  human distribution, from Silero VAD segments of ``output.wav`` and the words;
* **smooth turn-taking**: TOR (higher is better) and latency from the user's turn end;
* **user interruption**: TOR, latency from the interruption's end, and the judge rating where
  the benchmark's ``rating.json`` files exist (turneval calls no GPT judge);
* **v1.5 overlap scenarios**: the per-sample overlap check of the user's and the model's words,
  behaviour tag counts and ratios where the judge's ``content_tag.json`` files exist, and stop /
  response latency from ``latency_intervals.json`` or from Silero VAD of ``input.wav`` and
  ``output.wav`` as ``get_timing.py`` computes them.

The work is split by concern: :mod:`~turneval.benchmark_runs.full_duplex_bench_sources` (words, speech
and which samples are usable), :mod:`~turneval.benchmark_runs.full_duplex_bench_scorers` (one scorer per task
kind), :mod:`~turneval.benchmark_runs.full_duplex_bench_tables` (markdown); this module is the entry point.

Example:

    >>> from turneval.benchmark_runs.full_duplex_bench import evaluate_full_duplex_bench_run
    >>> result = evaluate_full_duplex_bench_run("fdb_run/")                      # doctest: +SKIP
    >>> print(result.to_markdown())                                # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turneval.dataset_scripts.files import to_jsonable
from turneval.dataset_scripts.readers.full_duplex_bench import (
    FULL_DUPLEX_BENCH_TASK_KINDS,
    find_full_duplex_bench_tasks,
)

from ._common import RunResult, load_schema
from .full_duplex_bench_scorers import (
    FullDuplexBenchTaskResult,
    score_backchannel,
    score_overlap,
    score_pause_handling,
    score_take_turn,
)
from .full_duplex_bench_sources import VadFunction, WordsFunction, WordSource, silero_segments, whisper_words
from .full_duplex_bench_tables import run_markdown


__all__ = ["FULL_DUPLEX_BENCH_SCHEMA_VERSION", "FullDuplexBenchTaskResult", "FullDuplexBenchRunResult", "evaluate_full_duplex_bench_run", "full_duplex_bench_schema", "silero_segments", "whisper_words"]

FULL_DUPLEX_BENCH_SCHEMA_VERSION = 1
SCHEMA_FILE = "fdb.schema.json"


def full_duplex_bench_schema() -> dict[str, Any]:
    """The JSON schema every ``fdb.json`` validates against (``turneval/data/fdb.schema.json``)."""
    return load_schema(SCHEMA_FILE)


@dataclass
class FullDuplexBenchRunResult(RunResult):
    """Every task of one run folder."""

    FILE_STEM = "fdb"

    run_dir: str
    model_name: str
    tasks: list[FullDuplexBenchTaskResult]
    settings: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        from turneval import __version__

        return to_jsonable(
            {
                "schema_version": FULL_DUPLEX_BENCH_SCHEMA_VERSION,
                "benchmark": "Full-Duplex-Bench",
                "turneval_version": __version__,
                "run_dir": self.run_dir,
                "model_name": self.model_name,
                "settings": self.settings,
                "tasks": [task.to_dict() for task in self.tasks],
            }
        )

    def to_markdown(self, per_sample: bool = True) -> str:
        return run_markdown(self, per_sample)


def evaluate_full_duplex_bench_run(
    run_dir: str | Path,
    *,
    task: str | None = None,
    gt_distribution: str | Path | None = None,
    vad: VadFunction | None = None,
    skip_missing: bool = False,
    model_name: str | None = None,
    show_progress: bool = False,
    transcribe: WordsFunction | None = None,
) -> FullDuplexBenchRunResult:
    """Score every task folder of a Full-Duplex-Bench run.

    Args:
        run_dir: the run folder (task folders below it, or one task folder).
        task: force the task kind of the folders (one of ``FULL_DUPLEX_BENCH_TASK_KINDS``).
        gt_distribution: the benchmark's ``icc_gt_distribution.json`` (default: looked up in
            the task folder and the two folders above it).
        vad: speech segments of an audio file (default: Silero VAD, as the benchmark).
        skip_missing: score the complete samples and list the others, instead of failing.
        model_name: the row label of the tables (default: the run folder's name).
        show_progress: tqdm bars on stderr.
        transcribe: words of an audio file where the benchmark's ASR JSON is missing
            (:func:`whisper_words` for ``--transcribe``); None requires the JSON files.

    Raises:
        BenchmarkLayoutError: the folder is not in the benchmark's layout, or files are missing.
    """
    run_dir = Path(run_dir)
    vad_function = vad or silero_segments
    source = WordSource(transcribe)
    results = []
    found = find_full_duplex_bench_tasks(run_dir, task)
    # the paper's task order, then the folder name
    found.sort(key=lambda t: (FULL_DUPLEX_BENCH_TASK_KINDS.index(t.kind), t.name))
    for item in found:
        if item.kind == "pause_handling":
            results.append(score_pause_handling(item, skip_missing, show_progress, source))
        elif item.kind in ("smooth_turn_taking", "user_interruption"):
            results.append(score_take_turn(item, skip_missing, show_progress, source))
        elif item.kind == "backchannel":
            results.append(score_backchannel(item, skip_missing, show_progress, vad_function, gt_distribution, source))
        else:
            results.append(score_overlap(item, skip_missing, show_progress, vad_function, source))
    settings = {
        "task": task,
        "skip_missing": skip_missing,
        "vad": "silero-vad (default settings)" if vad is None else getattr(vad, "__name__", "custom"),
        "gt_distribution": str(gt_distribution) if gt_distribution else None,
        "transcribe": None if transcribe is None else getattr(transcribe, "description", "custom"),
    }
    return FullDuplexBenchRunResult(str(run_dir), model_name or run_dir.resolve().name, results, settings)
