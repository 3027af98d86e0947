# A copy of turneval.dataset_scripts.dialogue for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""The Dialogue: two speakers, their speech, optional words and audio.

Every reader in turneval produces a Dialogue and every later stage (events, labels,
datasets, models, metrics, reports) consumes one. Speaker 0 is "A" (channel 0) and speaker
1 is "B" (channel 1); for human-AI recordings ``system_speaker`` says which one is the
system.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .turneval_files import atomic_write_text
from .turneval_grids import CHUNK_HZ, FRAME_HZ, SAMPLE_RATE, segments_to_activity


SPEAKERS = ("A", "B")

Segment = tuple[float, float]


class DialogueError(ValueError):
    """A dialogue (or the file it came from) is malformed; the message says what to fix."""


@dataclass(frozen=True)
class Word:
    """One word with its time span in seconds."""

    start: float
    end: float
    text: str


def normalize_segments(segments: Sequence[Sequence[float]], where: str = "") -> list[Segment]:
    """Sort segments, drop empty ones and merge those that overlap or touch.

    Raises DialogueError on non-finite or negative times, or an end before its start.
    """
    cleaned: list[Segment] = []
    for i, seg in enumerate(segments):
        if len(seg) != 2:
            raise DialogueError(f"{where}segment {i} must be (start, end), got {seg!r}")
        start, end = float(seg[0]), float(seg[1])
        if not (math.isfinite(start) and math.isfinite(end)):
            raise DialogueError(f"{where}segment {i} has a non-finite time: {seg!r}")
        if start < 0:
            raise DialogueError(f"{where}segment {i} starts before 0 s: {seg!r}")
        if end < start:
            raise DialogueError(f"{where}segment {i} ends before it starts: {seg!r}")
        if end > start:
            cleaned.append((start, end))
    cleaned.sort()
    merged: list[Segment] = []
    for start, end in cleaned:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


@dataclass
class Dialogue:
    """A two-party conversation.

    Attributes:
        id: a name for the conversation (file stem, corpus session id, ...).
        segments: per speaker (A, B), the speech segments in seconds, sorted and disjoint.
        words: per speaker, the words with times, or None when no transcript exists.
        audio: float32 array [2, n_samples] at 16 kHz (one speaker per channel), or None.
        audio_path: where the audio came from, when it was read from a file.
        system_speaker: 0 or 1 for human-AI recordings (which channel is the system).
        duration: seconds; defaults to the audio length, else the last speech end.
    """

    id: str
    segments: list[list[Segment]]
    words: list[list[Word]] | None = None
    audio: np.ndarray | None = None
    audio_path: str | None = None
    system_speaker: int | None = None
    duration: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.segments) != 2:
            raise DialogueError(f"dialogue {self.id!r}: need segments for exactly 2 speakers, got {len(self.segments)}")
        self.segments = [normalize_segments(s, f"dialogue {self.id!r}, speaker {SPEAKERS[i]}: ") for i, s in enumerate(self.segments)]
        if self.words is not None:
            if len(self.words) != 2:
                raise DialogueError(f"dialogue {self.id!r}: need words for exactly 2 speakers")
            # Words have no natural order beyond time; a stable key sort keeps the file order of ties.
            self.words = [
                sorted((w if isinstance(w, Word) else Word(*w) for w in ws), key=lambda w: (w.start, w.end))
                for ws in self.words
            ]
        if self.audio is not None:
            audio = np.asarray(self.audio, dtype=np.float32)
            if audio.ndim != 2 or audio.shape[0] != 2:
                raise DialogueError(f"dialogue {self.id!r}: audio must be [2, n_samples], got shape {audio.shape}")
            self.audio = audio
        if self.system_speaker not in (None, 0, 1):
            raise DialogueError(f"dialogue {self.id!r}: system_speaker must be 0, 1 or None, got {self.system_speaker!r}")
        if self.duration is None:
            if self.audio is not None:
                self.duration = self.audio.shape[1] / SAMPLE_RATE
            else:
                ends = [s[-1][1] for s in self.segments if s]
                ends += [ws[-1].end for ws in (self.words or []) if ws]
                self.duration = max(ends, default=0.0)

    @property
    def user_speaker(self) -> int | None:
        """The human side of a human-AI recording (the speaker that is not the system)."""
        return None if self.system_speaker is None else 1 - self.system_speaker

    @property
    def has_words(self) -> bool:
        return self.words is not None and any(self.words)

    def mono(self) -> np.ndarray:
        """The mono mix (mean of the two channels) that the judge reads."""
        if self.audio is None:
            raise DialogueError(f"dialogue {self.id!r} has no audio")
        return self.audio.mean(axis=0)

    def activity(self, hz: float, count: int | None = None) -> np.ndarray:
        """Voice activity [2, count] on a grid at ``hz`` (any overlap activates a cell)."""
        if count is None:
            count = int(math.floor(self.duration * hz + 1e-9))
        return np.stack([segments_to_activity(s, count, hz) for s in self.segments])

    def chunk_activity(self) -> np.ndarray:
        """Voice activity on the 40 ms judge grid, [2, n_chunks]."""
        return self.activity(CHUNK_HZ)

    def frame_activity(self) -> np.ndarray:
        """Voice activity on the 20 ms VAP grid, [2, n_frames]."""
        return self.activity(FRAME_HZ)

    def crop(self, start: float, end: float, new_id: str | None = None) -> "Dialogue":
        """The part in [start, end), with times shifted to start at 0."""
        if not (0 <= start < end):
            raise DialogueError(f"crop needs 0 <= start < end, got {start}, {end}")
        segs = [[(max(s, start) - start, min(e, end) - start) for s, e in spk if e > start and s < end] for spk in self.segments]
        words = None
        if self.words is not None:
            words = [[Word(w.start - start, w.end - start, w.text) for w in ws if w.start >= start and w.end <= end] for ws in self.words]
        audio = None
        if self.audio is not None:
            audio = self.audio[:, int(round(start * SAMPLE_RATE)) : int(round(end * SAMPLE_RATE))]
        return Dialogue(
            id=new_id or f"{self.id}_{start:.2f}-{end:.2f}",
            segments=segs,
            words=words,
            audio=audio,
            system_speaker=self.system_speaker,
            duration=(audio.shape[1] / SAMPLE_RATE) if audio is not None else end - start,
            metadata=dict(self.metadata, crop=[start, end]),
        )

    # -- (de)serialisation of the annotations (audio is stored by path, never inline) --
    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "duration": self.duration,
            "system_speaker": self.system_speaker,
            "audio_path": self.audio_path,
            "segments": [[list(s) for s in spk] for spk in self.segments],
            "words": None if self.words is None else [[[w.start, w.end, w.text] for w in ws] for ws in self.words],
            "metadata": self.metadata,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], audio: np.ndarray | None = None) -> "Dialogue":
        return cls(
            id=data["id"],
            segments=data["segments"],
            words=None if data.get("words") is None else [[Word(*w) for w in ws] for ws in data["words"]],
            audio=audio,
            audio_path=data.get("audio_path"),
            system_speaker=data.get("system_speaker"),
            duration=data.get("duration"),
            metadata=data.get("metadata") or {},
        )

    def save_annotations(self, path: str | Path) -> None:
        """Write the annotations as JSON (atomically: temp file, then rename)."""
        atomic_write_text(path, json.dumps(self.to_dict(), indent=1))
