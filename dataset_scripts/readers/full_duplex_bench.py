"""Full-Duplex-Bench run folders (v1.0 and v1.5), read in the benchmark's own layout.

Full-Duplex-Bench (Lin et al., 2025) ships one folder per task and one folder per sample
inside it. The system under test writes ``output.wav`` next to the user's ``input.wav``; the
benchmark's ASR script (``get_transcript/asr.py``) writes the word timestamps as
``output.json``; its evaluation scripts read those with the task's metadata file::

    RUN_DIR/                              (or RUN_DIR/v1.0/, RUN_DIR/v1.5/, or one task folder)
      candor_pause_handling/<id>/         input.wav  pause.json        output.wav  output.json
      synthetic_pause_handling/<id>/      input.wav  pause.json        output.wav  output.json
      candor_turn_taking/<id>/            input.wav  turn_taking.json  output.wav  output.json
      synthetic_user_interruption/<id>/   input.wav  interrupt.json    output.wav  output.json [rating.json]
      icc_backchannel/<id>/               input.wav                    output.wav  output.json
      user_interruption/<id>/  (v1.5)     input.wav  metadata.json     output.wav  input.json  output.json
                                          clean_input.* clean_output.* [content_tag.json] [latency_intervals.json]
      (user_backchannel, talking_to_other, background_speech: as v1.5 user_interruption)

This module finds the task folders and their samples and reads the files the evaluation
needs; the rules live in :mod:`turneval.metrics.full_duplex_bench_tasks`. A folder in another
layout raises :class:`BenchmarkLayoutError` saying what was expected, what was found and
what to do.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..dialogue import DialogueError
from ._common import load_json, located


__all__ = [
    "BenchmarkLayoutError",
    "FULL_DUPLEX_BENCH_TASK_KINDS",
    "FullDuplexBenchSample",
    "FullDuplexBenchTask",
    "find_full_duplex_bench_tasks",
    "read_asr_json",
    "read_turn_end",
    "read_interrupt_end",
    "read_rating",
    "read_behaviour_tags",
    "read_latency_intervals",
    "read_gt_distributions",
    "GT_DISTRIBUTION_FILE",
]

FULL_DUPLEX_BENCH_TASK_KINDS = ("pause_handling", "backchannel", "smooth_turn_taking", "user_interruption", "overlap")
"""The kinds of task folder: the four v1.0 tasks and the v1.5 overlap scenarios (all scored alike)."""

V15_SCENARIOS = ("user_interruption", "user_backchannel", "talking_to_other", "background_speech")
"""The v1.5 overlap scenarios, in the paper's order."""

GT_DISTRIBUTION_FILE = "icc_gt_distribution.json"
"""The human backchannel timing distributions the benchmark ships (``evaluation/``), by sample id."""

WORDS_FILE = "output.json"
_SAMPLE_MARKERS = ("output.json", "output.wav", "input.wav", "input.json")
"""A folder holding any of these is a sample folder."""
_V15_MARKERS = ("metadata.json", "clean_input.wav", "clean_output.wav", "clean_input.json", "clean_output.json")
_METADATA_KIND = {"interrupt.json": "user_interruption", "turn_taking.json": "smooth_turn_taking", "pause.json": "pause_handling"}
_IGNORED = re.compile(r"^\.|\.md$|errors\.log$")


class BenchmarkLayoutError(DialogueError):
    """A folder that is not in the benchmark's layout (the message says what was expected)."""


@dataclass(frozen=True)
class FullDuplexBenchSample:
    """One sample folder: its id (the folder name) and the files present in it."""

    sample_id: str
    folder: Path

    def path(self, name: str) -> Path:
        return self.folder / name

    def has(self, name: str) -> bool:
        return (self.folder / name).is_file()


@dataclass
class FullDuplexBenchTask:
    """One task folder: ``kind`` is one of :data:`FULL_DUPLEX_BENCH_TASK_KINDS`; ``version`` "v1.0" or "v1.5"."""

    name: str
    kind: str
    folder: Path
    samples: list[FullDuplexBenchSample] = field(default_factory=list)

    @property
    def version(self) -> str:
        return "v1.5" if self.kind == "overlap" else "v1.0"


def _natural_key(name: str) -> tuple:
    """Sort "2" before "10" (the reference iterates in os.listdir order, which means do not change)."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def _sample_folders(folder: Path) -> list[FullDuplexBenchSample]:
    samples = []
    for child in sorted(folder.iterdir(), key=lambda p: _natural_key(p.name)):
        if child.is_dir() and not _IGNORED.search(child.name) and any((child / m).is_file() for m in _SAMPLE_MARKERS):
            samples.append(FullDuplexBenchSample(child.name, child))
    return samples


def _kind_from_files(samples: Sequence[FullDuplexBenchSample]) -> str | None:
    for sample in samples:
        if any(sample.has(marker) for marker in _V15_MARKERS):
            return "overlap"
        for name, kind in _METADATA_KIND.items():
            if sample.has(name):
                return kind
    return None


def _kind_from_name(name: str) -> str | None:
    lowered = name.lower()
    if "pause" in lowered:
        return "pause_handling"
    if "turn_taking" in lowered or "turntaking" in lowered:
        return "smooth_turn_taking"
    if lowered in ("talking_to_other", "background_speech", "user_backchannel"):
        return "overlap"
    if "backchannel" in lowered or lowered.startswith("icc"):
        return "backchannel"
    if "interrupt" in lowered:
        return "user_interruption"
    return None


def _describe(folder: Path, limit: int = 12) -> str:
    """What a folder holds, for error messages."""
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as err:
        return f"(cannot list it: {err.strerror or err})"
    if not entries:
        return "an empty folder"
    names = [e.name + ("/" if e.is_dir() else "") for e in entries[:limit]]
    more = f" and {len(entries) - limit} more" if len(entries) > limit else ""
    return ", ".join(names) + more


_EXPECTED = (
    "a Full-Duplex-Bench run folder: task folders (e.g. candor_turn_taking/, synthetic_user_interruption/, "
    "icc_backchannel/, v1.5 user_interruption/) each holding one folder per sample with the system's output.wav "
    "and the benchmark's ASR words output.json, beside the task's metadata (pause.json, turn_taking.json, "
    "interrupt.json, or v1.5 metadata.json); or a single such task folder"
)


def find_full_duplex_bench_tasks(root: str | Path, task: str | None = None) -> list[FullDuplexBenchTask]:
    """The task folders under ``root`` (itself a task folder, or up to two levels above them).

    Args:
        root: the run folder.
        task: force the kind of every task folder found (one of :data:`FULL_DUPLEX_BENCH_TASK_KINDS`);
            by default it is told from the metadata files, then from the folder name.

    Raises:
        BenchmarkLayoutError: no sample folders, or a task folder whose kind cannot be told.
    """
    root = Path(root)
    if task is not None and task not in FULL_DUPLEX_BENCH_TASK_KINDS:
        raise ValueError(f"task must be one of {FULL_DUPLEX_BENCH_TASK_KINDS}, got {task!r}")
    if not root.exists():
        raise BenchmarkLayoutError(f"{root}: no such folder; expected {_EXPECTED}")
    if not root.is_dir():
        raise BenchmarkLayoutError(f"{root}: is a file; expected {_EXPECTED}. Give the folder that holds the task folders")
    # a folder holding sample folders is a task folder; others are searched, two levels deep at most
    found: list[FullDuplexBenchTask] = []
    level = [root]
    for depth in range(3):
        below = []
        for folder in level:
            samples = _sample_folders(folder)
            if samples:
                found.append(FullDuplexBenchTask(folder.name, "", folder, samples))
            elif depth < 2:
                below += [c for c in sorted(folder.iterdir(), key=lambda p: _natural_key(p.name))
                          if c.is_dir() and not _IGNORED.search(c.name)]
        level = below
    if not found:
        raise BenchmarkLayoutError(
            f"{root}: no Full-Duplex-Bench sample folders found (none holds output.json, output.wav or input.wav). "
            f"Expected {_EXPECTED}. Found: {_describe(root)}. "
            "Run the system on the benchmark's input.wav files so each sample folder gets an output.wav, then the "
            "benchmark's get_transcript/asr.py to write output.json."
        )
    for item in found:
        kind = task or _kind_from_files(item.samples) or _kind_from_name(item.name)
        if kind is None:
            raise BenchmarkLayoutError(
                f"{item.folder}: cannot tell which Full-Duplex-Bench task this folder holds: its samples have no "
                "pause.json, turn_taking.json, interrupt.json or v1.5 metadata.json, and the folder name names no task. "
                f"Found in {item.samples[0].folder}: {_describe(item.samples[0].folder)}. "
                f"Give --task ({', '.join(FULL_DUPLEX_BENCH_TASK_KINDS)})."
            )
        item.kind = kind
    return found


# --------------------------------------------------------------------------- file readers


def read_asr_json(path: str | Path) -> dict[str, Any]:
    """A benchmark ASR JSON ``{"text", "chunks": [{"text", "timestamp": [s, e]}]}`` (its words are
    read by ``turneval.metrics.full_duplex_bench_tasks.chunks_from_asr``)."""
    data = load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("chunks"), list):
        raise located(path, None, "expected the benchmark's ASR JSON object {'text', 'chunks': [{'text', 'timestamp': [start, end]}]}")
    return data


def _first_timestamp(path: Path, index: int, what: str) -> float:
    data = load_json(path)
    try:
        value = data[0]["timestamp"][index]
    except (KeyError, IndexError, TypeError):
        raise located(path, None, f"expected a list whose first item has 'timestamp': [start, end] ({what})") from None
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        raise located(path, None, f"timestamp[{index}] ({what}) must be a number of seconds, got {value!r}")
    return float(value)


def read_turn_end(path: str | Path) -> float:
    """The user's turn end of a smooth turn-taking sample: ``turn_taking.json[0].timestamp[0]``."""
    return _first_timestamp(Path(path), 0, "the user's turn end")


def read_interrupt_end(path: str | Path) -> float:
    """The end of the user's interruption: ``interrupt.json[0].timestamp[1]``."""
    return _first_timestamp(Path(path), 1, "the interruption's end")


def read_rating(path: str | Path) -> float:
    """The judge's 0-5 rating the benchmark stores as ``rating.json`` (``{"analysis", "rating"}``)."""
    data = load_json(path)
    rating = data.get("rating") if isinstance(data, dict) else None
    if rating is None or isinstance(rating, bool) or not isinstance(rating, (int, float)):
        raise located(path, None, f"expected {{'rating': <0-5>}}, got {data!r:.80}")
    return float(rating)


def read_behaviour_tags(path: str | Path) -> list[str]:
    """The behaviour tags of a v1.5 sample (``content_tag.json``, ``{"behaviour": [...]}``)."""
    data = load_json(path)
    tags = data.get("behaviour", data.get("behavior")) if isinstance(data, dict) else None
    if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
        raise located(path, None, "expected {'behaviour': [tag, ...]} (the benchmark's GPT judge output)")
    return list(tags)


def read_latency_intervals(path: str | Path) -> tuple[list[list[float]], list[list[float]]]:
    """``(stop intervals, response intervals)`` of ``latency_intervals.json`` (v1.5 get_timing output)."""
    data = load_json(path)
    if not isinstance(data, dict) or "latency_stop_list" not in data or "latency_resp_list" not in data:
        raise located(path, None, "expected {'latency_stop_list': [[s, e], ...], 'latency_resp_list': [[s, e], ...]}")
    lists = []
    for key in ("latency_stop_list", "latency_resp_list"):
        intervals = data[key]
        if not isinstance(intervals, list) or not all(isinstance(iv, list) and len(iv) == 2 for iv in intervals):
            raise located(path, None, f"{key} must be a list of [start, end] pairs")
        lists.append([[float(s), float(e)] for s, e in intervals])
    return lists[0], lists[1]


def read_gt_distributions(path: str | Path) -> dict[str, list[float]]:
    """Sample id -> human backchannel timing distribution (``icc_gt_distribution.json``)."""
    data = load_json(path)
    if not isinstance(data, dict) or not all(isinstance(v, list) and v for v in data.values()):
        raise located(path, None, "expected {sample_id: [probability, ...], ...} (the benchmark's icc_gt_distribution.json)")
    return {str(k): [float(x) for x in v] for k, v in data.items()}
