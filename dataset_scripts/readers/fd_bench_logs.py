"""FD-Bench run logs and scripted ground truth, read in the benchmark's own layout.

FD-Bench (Peng et al., 2025) plays scripted multi-round conversations to a system and logs,
per conversation, one line of its run log (``data/<MODEL>-output/<dataset>.txt``)::

    conversation_7.wav || <response tokens> || <response text> || [{'start': 0, 'end': 32000}, ...] || [{'start': 40000, 'end': 96000}, ...]

fields separated by ``||``: the conversation's audio name, the system's response tokens and
text (Moshi), the **scripted** user round times and the system's speech segments (Silero VAD),
both as 16 kHz sample indices in Python literal syntax. The scripted rounds come from the
ground truth (``openai/data_gen/output_all.jsonl``): line i is conversation ``i+1``, a dict
``{'round-1': {'user': ..., 'AI': ..., 'interruption': 'Topic Shift'}, ...}`` whose
``interruption`` announces the type of the *next* round. The benchmark's
``benchmarking.py`` reads the lines with ``ast.literal_eval``; so does this module, without
evaluating anything but literals.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._common import located, read_lines
from .full_duplex_bench import BenchmarkLayoutError


__all__ = [
    "GROUND_TRUTH_FILE",
    "FDBenchLogConversation",
    "FDBenchLog",
    "looks_like_fd_bench_log",
    "read_fd_bench_log",
    "read_ground_truth",
    "find_fd_bench_logs",
    "find_ground_truth",
    "conversation_index",
]

GROUND_TRUTH_FILE = "output_all.jsonl"
"""The benchmark's scripted conversations (``openai/data_gen/output_all.jsonl``)."""

_FIELDS = ("conversation id", "response tokens", "response text", "user timestamps", "AI timestamps")
_NAME_RE = re.compile(r"^conversation_(\d+)\.wav$")

_EXPECTED_LOG = (
    "an FD-Bench run log: a text file with one line per conversation, "
    "'conversation_N.wav || tokens || text || [{'start': s, 'end': e}, ...] || [{'start': s, 'end': e}, ...]' "
    "(user round times and system speech segments in 16 kHz samples), as FD-Bench's inference scripts write "
    "data/<MODEL>-output/<dataset>.txt"
)


@dataclass(frozen=True)
class FDBenchLogConversation:
    """One line of a run log: the scripted user rounds and the system's segments (samples)."""

    conversation_id: str
    user_segments: list[tuple[int, int]]
    system_segments: list[tuple[int, int]]
    line: int


@dataclass
class FDBenchLog:
    path: Path
    conversations: list[FDBenchLogConversation] = field(default_factory=list)


def conversation_index(conversation_id: str) -> int | None:
    """N of ``conversation_N.wav`` (its ground truth is line N of ``output_all.jsonl``), else None."""
    match = _NAME_RE.match(conversation_id)
    return int(match.group(1)) if match else None


def looks_like_fd_bench_log(path: str | Path) -> bool:
    """True when the first non-empty line has the log's five ``||`` fields and a ``.wav`` name."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    parts = line.split("||")
                    return len(parts) >= 5 and parts[0].strip().endswith(".wav")
    except OSError:
        return False
    return False


def _segments(text: str, path: Path, line: int, what: str) -> list[tuple[int, int]]:
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError) as err:
        raise located(path, line, f"{what} is not a Python list literal ({err.__class__.__name__}): {text.strip()[:80]!r}") from None
    if not isinstance(value, list):
        raise located(path, line, f"{what} must be a list of {{'start': s, 'end': e}}, got {type(value).__name__}")
    segments = []
    for k, item in enumerate(value):
        if not isinstance(item, dict) or "start" not in item or "end" not in item:
            raise located(path, line, f"{what}[{k}] must be {{'start': s, 'end': e}} (16 kHz samples), got {item!r:.60}")
        start, end = item["start"], item["end"]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            raise located(path, line, f"{what}[{k}] must hold integer 16 kHz sample indices, got {item!r:.60}")
        if end < start:
            raise located(path, line, f"{what}[{k}] ends before it starts: {item!r:.60}")
        segments.append((start, end))
    return segments


def read_fd_bench_log(path: str | Path) -> FDBenchLog:
    """Every conversation of a run log (see the module docstring for the line format)."""
    path = Path(path)
    log = FDBenchLog(path)
    seen: dict[str, int] = {}
    for number, text in read_lines(path):
        if not text.strip():
            continue
        parts = text.split("||")
        if len(parts) < 5:
            raise located(
                path, number,
                f"expected 5 fields separated by '||' ({', '.join(_FIELDS)}), found {len(parts)}; expected {_EXPECTED_LOG}",
            )
        name = parts[0].strip()
        if name in seen:
            raise located(path, number, f"{name} appears twice (first on line {seen[name]})")
        seen[name] = number
        log.conversations.append(
            FDBenchLogConversation(
                name,
                _segments(parts[3], path, number, "user timestamps (field 4)"),
                _segments(parts[4], path, number, "AI timestamps (field 5)"),
                number,
            )
        )
    if not log.conversations:
        raise BenchmarkLayoutError(f"{path}: empty; expected {_EXPECTED_LOG}")
    return log


def read_ground_truth(path: str | Path) -> list[dict[str, Any]]:
    """The scripted conversations, one per line (Python dict literals, as FD-Bench ships them, or JSON)."""
    path = Path(path)
    conversations = []
    for number, text in read_lines(path):
        if not text.strip():
            continue
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                raise located(path, number, "not a dict literal {'round-1': {'user': ..., 'interruption': ...}, ...}") from None
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise located(path, number, "expected {'round-1': {'user': ..., 'interruption': ...}, ...}")
        conversations.append(value)
    return conversations


def find_fd_bench_logs(root: str | Path) -> list[Path]:
    """The run logs at ``root``: the file itself, or the ``*.txt`` files in the folder that look like logs.

    Raises:
        BenchmarkLayoutError: nothing there looks like a run log (the message lists what is there).
    """
    root = Path(root)
    if not root.exists():
        raise BenchmarkLayoutError(f"{root}: no such file or folder; expected {_EXPECTED_LOG}")
    if root.is_file():
        if not looks_like_fd_bench_log(root):
            raise BenchmarkLayoutError(f"{root}: its first line is not a run-log line; expected {_EXPECTED_LOG}")
        return [root]
    logs = sorted(p for p in root.glob("*.txt") if looks_like_fd_bench_log(p))
    if not logs:
        found = sorted(p.name + ("/" if p.is_dir() else "") for p in root.iterdir())
        shown = ", ".join(found[:12]) + (f" and {len(found) - 12} more" if len(found) > 12 else "") if found else "an empty folder"
        raise BenchmarkLayoutError(
            f"{root}: no FD-Bench run log found. Expected {_EXPECTED_LOG}. Found: {shown}. "
            "Give the folder that holds <dataset>.txt (FD-Bench's data/<MODEL>-output/), or the log file itself"
        )
    return logs


def find_ground_truth(start: str | Path) -> Path | None:
    """``output_all.jsonl`` in ``start`` or up to three folders above it (also under ``openai/data_gen/``)."""
    folder = Path(start)
    folder = folder if folder.is_dir() else folder.parent
    chain = [folder, *folder.parents]
    if len(chain) < 4:  # a short relative path: go on above the working folder
        chain = [folder, *folder.resolve().parents]
    for candidate_dir in chain[:4]:
        for candidate in (candidate_dir / GROUND_TRUTH_FILE, candidate_dir / "openai" / "data_gen" / GROUND_TRUTH_FILE):
            if candidate.is_file():
                return candidate
    return None
