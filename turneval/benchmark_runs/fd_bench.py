"""Evaluate FD-Bench run logs with the benchmark's own rules and its scripted round times.

FD-Bench (Peng et al., 2025) logs, per conversation, the scripted user round times and the
system's speech segments (see :mod:`turneval.dataset_scripts.readers.fd_bench_logs`). This
module pairs each conversation with its scripted rounds (first inquiry, then the interruption
type each round announces for the next) and scores it with
:func:`turneval.metrics.fd_bench_rounds.analyze_conversation` and
:func:`~turneval.metrics.fd_bench_rounds.aggregate_marks` (``analyze_VAD_interruption_new2`` and
``analyze_VAD_marks`` of ``benchmarking.py``): SRR, SIR, SRIR, EIR, NIR, FSED, ERT, EIT, IRD.
The user rounds are the scripted times from the log, not times derived from the audio.

WER and C-PPL are not computed (they need Whisper-X and Llama 3).

Example:

    >>> from turneval.benchmark_runs.fd_bench import evaluate_fd_bench_run
    >>> result = evaluate_fd_bench_run("data/Moshi-output/")        # doctest: +SKIP
    >>> result.logs[0].scores["SRR(%)"]                            # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turneval.dataset_scripts.files import to_jsonable
from turneval.dataset_scripts.readers.fd_bench_logs import (
    GROUND_TRUTH_FILE,
    BenchmarkLayoutError,
    FDBenchLog,
    conversation_index,
    find_fd_bench_logs,
    find_ground_truth,
    read_fd_bench_log,
    read_ground_truth,
)
from turneval.metrics.fd_bench_rounds import (
    FD_BENCH_CATEGORIES,
    aggregate_marks,
    analyze_conversation,
    round_types_from_rounds,
)

from ._common import RunResult, fmt, load_schema, progress


__all__ = ["FD_BENCH_SCHEMA_VERSION", "FDBenchLogResult", "FDBenchRunResult", "evaluate_fd_bench_run", "fd_bench_schema"]

FD_BENCH_SCHEMA_VERSION = 1
SCHEMA_FILE = "fdbench.schema.json"
PREAMBLE_CHOICES = ("auto", "drop", "keep")

_SUMMARY_COLUMNS = (
    ("SRR(%) ↑", "SRR(%)"),
    ("SIR(%) ↑", "SIR(%)"),
    ("SRIR(%) ↑", "SRIR(%)"),
    ("EIR(%) ↓", "EIR(%)"),
    ("NIR(%) ↓", "NIR(%)"),
    ("FSED(ms) ↓", "FSED(ms)"),
    ("ERT(ms)", "ERT(ms)"),
    ("EIT(ms)", "EIT(ms)"),
    ("IRD(ms) ↓", "IRD(ms)"),
)


def fd_bench_schema() -> dict[str, Any]:
    """The JSON schema every ``fdbench.json`` validates against (``turneval/data/fdbench.schema.json``)."""
    return load_schema(SCHEMA_FILE)


@dataclass
class FDBenchLogResult:
    """The figures of one run log (one dataset): FD-Bench's scores, raw values and per-conversation marks."""

    name: str
    path: str
    n_conversations: int
    scores: dict[str, Any]
    metrics: dict[str, Any]
    conversations: dict[str, dict[str, Any]]
    skipped: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "n_conversations": self.n_conversations,
            "scores": self.scores,
            "metrics": self.metrics,
            "conversations": self.conversations,
            "skipped": self.skipped,
            "notes": self.notes,
        }


@dataclass
class FDBenchRunResult(RunResult):
    FILE_STEM = "fdbench"

    log_dir: str
    model_name: str
    ground_truth: str
    logs: list[FDBenchLogResult]
    settings: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        from turneval import __version__

        return to_jsonable(
            {
                "schema_version": FD_BENCH_SCHEMA_VERSION,
                "benchmark": "FD-Bench",
                "turneval_version": __version__,
                "log_dir": self.log_dir,
                "model_name": self.model_name,
                "ground_truth": self.ground_truth,
                "settings": self.settings,
                "logs": [log.to_dict() for log in self.logs],
            }
        )


    def to_markdown(self, per_conversation: bool = True) -> str:
        return _markdown(self, per_conversation)


def _model_name(log_dir: Path, explicit: str | None) -> str:
    """``--model-name``, else FD-Bench's folder convention ``data/<MODEL>-output/``, else the folder name."""
    if explicit:
        return explicit
    folder = log_dir if log_dir.is_dir() else log_dir.parent
    name = folder.resolve().name
    return name[: -len("-output")] if name.endswith("-output") else name


def _pair_rounds(
    log: FDBenchLog, truth: list[dict[str, Any]], truth_path: Path, skip_missing: bool
) -> tuple[list[tuple[Any, list[str | None]]], list[dict[str, str]]]:
    """Each logged conversation with its scripted round types; problems are errors or skips."""
    paired, skipped = [], []
    for conv in log.conversations:
        index = conversation_index(conv.conversation_id)
        problem = None
        if index is None:
            problem = (f"{log.path}:{conv.line}: {conv.conversation_id!r} is not named conversation_N.wav, so its "
                       f"scripted rounds (line N of {truth_path.name}) cannot be found")
        elif not 1 <= index <= len(truth):
            problem = (f"{log.path}:{conv.line}: {conv.conversation_id} needs line {index} of {truth_path}, which has "
                       f"{len(truth)} lines; is this the ground truth this run was made from?")
        else:
            rounds = truth[index - 1]
            if len(rounds) != len(conv.user_segments):
                problem = (f"{log.path}:{conv.line}: {conv.conversation_id} has {len(conv.user_segments)} user rounds "
                           f"logged but {len(rounds)} scripted in {truth_path}:{index} (FD-Bench stops on this "
                           "mismatch: the log and the ground truth must come from the same script)")
        if problem is not None:
            if not skip_missing:
                raise BenchmarkLayoutError(problem + "; give --skip-missing to score the other conversations")
            skipped.append({"conversation": conv.conversation_id, "reason": problem})
            continue
        try:
            types = round_types_from_rounds(truth[index - 1])
        except ValueError as err:
            raise BenchmarkLayoutError(f"{truth_path}:{index}: {err}") from None
        paired.append((conv, types))
    return paired, skipped


def _evaluate_log(
    log: FDBenchLog, truth: list[dict[str, Any]], truth_path: Path, drop_preamble: bool, skip_missing: bool, show: bool
) -> FDBenchLogResult:
    paired, skipped = _pair_rounds(log, truth, truth_path, skip_missing)
    marks, detail = [], {}
    for conv, types in progress(paired, len(paired), log.path.stem, show):
        mark = analyze_conversation(
            conv.user_segments, conv.system_segments, types, conv.conversation_id, drop_first_system_segment=drop_preamble
        )
        marks.append(mark)
        detail[conv.conversation_id] = {
            "round_types": types,
            "user_segments": [list(s) for s in conv.user_segments],
            "system_segments": [list(s) for s in conv.system_segments],
            "marks": mark.to_reference_dict(),
            "consistent": mark.consistent,
        }
    result = aggregate_marks(marks)
    metrics = {
        **result.to_dict(),
        "response_delay_to_interruption_ms": result.response_delay_to_interruption_ms,
        "lead_time_to_interruption_ms": result.lead_time_to_interruption_ms,
    }
    notes = []
    inconsistent = [m.conversation_id for m in marks if not m.consistent]
    if inconsistent:
        notes.append(
            f"{len(inconsistent)} conversation(s) fail FD-Bench's internal consistency checks (the reference only prints "
            f"them and keeps their counts): {', '.join(inconsistent[:5])}"
        )
    notes.append("WER and C-PPL are not computed (FD-Bench gets them from Whisper-X and Llama 3)")
    return FDBenchLogResult(log.path.stem, str(log.path), len(marks), result.to_scores(), metrics, detail, skipped, notes)


def evaluate_fd_bench_run(
    log_dir: str | Path,
    *,
    ground_truth: str | Path | None = None,
    model_name: str | None = None,
    preamble: str = "auto",
    skip_missing: bool = False,
    show_progress: bool = False,
) -> FDBenchRunResult:
    """Score every run log of an FD-Bench output folder (or one log file).

    Args:
        log_dir: ``data/<MODEL>-output/`` (its ``*.txt`` run logs) or one log file.
        ground_truth: the scripted conversations (default: ``output_all.jsonl`` found in the
            folder, up to three folders above it, or under ``openai/data_gen/`` there).
        model_name: the row label (default: ``<MODEL>`` of ``<MODEL>-output``).
        preamble: ``"drop"`` ignores each conversation's first system segment (FD-Bench does
            this for Moshi's greeting), ``"keep"`` does not, ``"auto"`` drops it when the model
            name is "Moshi", as ``main_moshi`` does.
        skip_missing: skip conversations without matching scripted rounds instead of failing.
        show_progress: tqdm bars on stderr.

    Raises:
        BenchmarkLayoutError: no run log, no ground truth, or a log that does not match it.
    """
    if preamble not in PREAMBLE_CHOICES:
        raise ValueError(f"preamble must be one of {PREAMBLE_CHOICES}, got {preamble!r}")
    log_dir = Path(log_dir)
    paths = find_fd_bench_logs(log_dir)
    truth_path = Path(ground_truth) if ground_truth is not None else find_ground_truth(log_dir)
    if truth_path is None:
        raise BenchmarkLayoutError(
            f"{log_dir}: the scripted rounds were not found: FD-Bench keeps them in openai/data_gen/{GROUND_TRUTH_FILE} "
            "(line N = conversation_N.wav). Give --ground-truth PATH"
        )
    if not truth_path.is_file():
        raise BenchmarkLayoutError(f"{truth_path}: no such ground-truth file (FD-Bench's openai/data_gen/{GROUND_TRUTH_FILE})")
    truth = read_ground_truth(truth_path)
    name = _model_name(log_dir, model_name)
    drop = preamble == "drop" or (preamble == "auto" and name == "Moshi")
    logs = [_evaluate_log(read_fd_bench_log(p), truth, truth_path, drop, skip_missing, show_progress) for p in paths]
    settings = {"preamble": preamble, "drop_first_system_segment": drop, "skip_missing": skip_missing, "sample_rate": 16000}
    return FDBenchRunResult(str(log_dir), name, str(truth_path), logs, settings)


# --------------------------------------------------------------------------- markdown


def _markdown(result: FDBenchRunResult, per_conversation: bool) -> str:
    lines = [
        f"# FD-Bench: {result.model_name}",
        "",
        f"Logs: `{result.log_dir}`; scripted rounds: `{result.ground_truth}`"
        + ("; first system segment dropped (preamble)" if result.settings["drop_first_system_segment"] else ""),
        "",
        "| Model | Dataset | n | " + " | ".join(label for label, _ in _SUMMARY_COLUMNS) + " |",
        "|" + "---|" * (len(_SUMMARY_COLUMNS) + 3),
    ]
    for log in result.logs:
        cells = [str(log.scores[key]) for _, key in _SUMMARY_COLUMNS]
        lines.append(f"| {result.model_name} | {log.name} | {log.n_conversations} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Rates in %, times in ms (medians of the positive values, 0 when there are none), as FD-Bench's metrics.scores. "
        "SRR: replies / rounds; SIR: yielded / user interruptions; SRIR: replies after a yielded interruption / yielded; "
        "EIR: early interrupts / rounds; NIR: noise interrupts / gaps (can exceed 100); FSED: reply delay; ERT: lead of "
        "replies in the user's last 0.5 s; EIT: lead of early interrupts; IRD: time to yield.",
        "",
    ]
    for log in result.logs:
        lines += [f"## {log.name} ({log.n_conversations} conversations)", "",
                  "| category | all | int-suc | res-suc |", "|---|---|---|---|"]
        for category in FD_BENCH_CATEGORIES:
            lines.append(f"| {category} | {log.scores[f'{category}-all']} | {log.scores[f'{category}-int-suc']} | "
                         f"{log.scores[f'{category}-res-suc']} |")
        lines.append("")
        lines += [f"- note: {note}" for note in log.notes]
        if log.skipped:
            lines.append(f"- skipped: {len(log.skipped)} conversation(s): " + "; ".join(s["conversation"] for s in log.skipped[:10]))
        lines.append("")
        if per_conversation and log.conversations:
            header = ("rounds", "Success Response", "Success Response to Interruptions", "Number Interrupt",
                      "Success Interrupt", "Wrong Interrupt", "Noise Interrupt")
            lines += ["| conversation | " + " | ".join(header) + " | consistent |", "|" + "---|" * (len(header) + 2)]
            for conv_id, conv in log.conversations.items():
                marks = conv["marks"]
                cells = [str(marks["Number Round"])] + [str(marks[h]) for h in header[1:]]
                lines.append(f"| {conv_id} | " + " | ".join(cells) + f" | {fmt(conv['consistent'])} |")
            lines.append("")
    return "\n".join(lines)
