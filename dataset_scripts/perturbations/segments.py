"""Speech segments on the TurnNat perturbation grid (80 ms frames, inclusive ends).

This mirrors the candidate context of the TurnNat perturbation builder
(``build_perturbations.py``, golden/turnnat README §3d): VAD timestamps shorter than
``min_transcript_ms`` are dropped, overlapping transcript text is attached, times are
snapped to frames (``start = floor``, ``end = ceil - 1``), segments closer than the merge
gap are merged, and the segments are painted into per-channel activity arrays.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np


FRAME_MS = 80.0
"""The perturbation builder's frame (the reference CLI default ``--frame-ms 80``)."""

RMS_THRESHOLD = 0.015
"""Frame RMS at or above which the RMS fallback VAD calls a frame speech."""

VAD_CONFIG: dict[str, float] = {
    "threshold": 0.5,
    "min_speech_ms": 120.0,
    "min_silence_ms": 120.0,
    "speech_pad_ms": 40.0,
    "merge_gap_ms": 180.0,
}
"""Silero settings of the reference builder; ``merge_gap_ms`` also drives segment merging."""


@dataclass
class Segment:
    """A speech segment on the frame grid; ``end`` is inclusive (``dur = end - start + 1``).

    ``start_s``/``end_s`` keep the exact times the segment came from; millisecond times
    reported in edit descriptions use them when present.
    """

    start: int
    end: int
    text: str = ""
    source: str = "rms"
    words: list[dict[str, Any]] | None = None
    start_s: float | None = None
    end_s: float | None = None

    @property
    def dur(self) -> int:
        return self.end - self.start + 1

    def start_ms(self, frame_ms: float = FRAME_MS) -> float:
        if self.start_s is not None:
            return round(self.start_s * 1000.0, 1)
        return round(float(self.start) * frame_ms, 1)

    def end_ms(self, frame_ms: float = FRAME_MS) -> float:
        if self.end_s is not None:
            return round(self.end_s * 1000.0, 1)
        return round(float(self.end + 1) * frame_ms, 1)

    def duration_ms(self, frame_ms: float = FRAME_MS) -> float:
        return round(self.end_ms(frame_ms) - self.start_ms(frame_ms), 1)

    def start_sample(self, sr: int, frame_ms: float = FRAME_MS) -> int:
        if self.start_s is not None:
            return max(0, int(round(self.start_s * sr)))
        return self.start * frame_length(sr, frame_ms)

    def end_sample(self, sr: int, frame_ms: float = FRAME_MS) -> int:
        if self.end_s is not None:
            return max(0, int(round(self.end_s * sr)))
        return (self.end + 1) * frame_length(sr, frame_ms)

    def copy(self) -> "Segment":
        return replace(self, words=list(self.words) if self.words else None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "end_inclusive": True,
            "dur_frames": self.dur,
            "text": self.text,
            "source": self.source,
            "start_s": self.start_s,
            "end_s": self.end_s,
        }


def frame_length(sr: int, frame_ms: float = FRAME_MS) -> int:
    """Samples per frame."""
    return int(round(sr * frame_ms / 1000.0))


def sec_to_segment(
    start_s: float,
    end_s: float,
    frame_ms: float = FRAME_MS,
    text: str = "",
    source: str = "silero_vad",
    words: list[dict[str, Any]] | None = None,
) -> Segment | None:
    """Snap a span in seconds to frames: ``floor`` for the start, ``ceil - 1`` for the end.

    Returns None for non-finite or empty spans.
    """
    if not (math.isfinite(start_s) and math.isfinite(end_s)) or end_s <= start_s:
        return None
    start = max(0, int(math.floor(start_s * 1000.0 / frame_ms)))
    end = max(start, int(math.ceil(end_s * 1000.0 / frame_ms)) - 1)
    return Segment(start, end, text=text, source=source, words=words, start_s=start_s, end_s=end_s)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def merge_close_segments(
    segments: Sequence[Segment], frame_ms: float = FRAME_MS, merge_gap_ms: float = VAD_CONFIG["merge_gap_ms"]
) -> list[Segment]:
    """Merge segments whose silent gap is at most ``ceil(merge_gap_ms / frame_ms)`` frames.

    The gap counts the frames strictly between the two (``next.start - prev.end - 1``).
    Texts are joined unless one already contains the other (then the longer one is kept).
    Merging updates the first segment in place, as the reference does.
    """
    ordered = sorted(segments, key=lambda s: (s.start, s.end))
    if not ordered or merge_gap_ms <= 0:
        return ordered
    max_gap = int(math.ceil(merge_gap_ms / frame_ms))
    out: list[Segment] = []
    for seg in ordered:
        if not out or seg.start - out[-1].end - 1 > max_gap:
            out.append(seg)
            continue
        prev = out[-1]
        prev.end = max(prev.end, seg.end)
        if prev.start_s is None or (seg.start_s is not None and seg.start_s < prev.start_s):
            prev.start_s = seg.start_s
        if prev.end_s is None or (seg.end_s is not None and seg.end_s > prev.end_s):
            prev.end_s = seg.end_s
        old, new = (prev.text or "").strip(), (seg.text or "").strip()
        if not old:
            prev.text = new
        elif new and _squash(old) not in _squash(new) and _squash(new) not in _squash(old):
            prev.text = f"{old} {new}".strip()
        elif new and len(new) > len(old):
            prev.text = new
        if prev.words or seg.words:
            seen: set[Any] = set()
            merged = []
            for word in list(prev.words or []) + list(seg.words or []):
                key = (word.get("word"), word.get("start"), word.get("end")) if isinstance(word, dict) else id(word)
                if key not in seen:
                    seen.add(key)
                    merged.append(word)
            prev.words = merged
    return out


def segments_to_vad(segments: Sequence[Segment], n_frames: int) -> np.ndarray:
    """Binary uint8 activity of ``n_frames`` frames (inclusive segment ends)."""
    vad = np.zeros(max(0, n_frames), dtype=np.uint8)
    for seg in segments:
        s = max(0, min(n_frames, seg.start))
        e = max(0, min(n_frames, seg.end + 1))
        if e > s:
            vad[s:e] = 1
    return vad


def segments_from_vad(vad: np.ndarray) -> list[Segment]:
    """Runs of ones as inclusive-end segments."""
    act = np.asarray(vad).astype(bool).astype(np.int8)
    edges = np.diff(np.concatenate([[0], act, [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [Segment(int(s), int(e) - 1) for s, e in zip(starts, ends)]


def rms_vad(x: np.ndarray, sr: int, frame_ms: float = FRAME_MS, threshold: float = RMS_THRESHOLD) -> np.ndarray:
    """Frame-RMS voice activity (the reference's fallback when a channel has no segments)."""
    n = frame_length(sr, frame_ms)
    x = np.asarray(x, dtype=np.float32)
    pad = (-len(x)) % n
    if pad:
        x = np.pad(x, (0, pad))
    frames = x.reshape(-1, n)
    rms = np.sqrt(np.maximum((frames**2).mean(axis=1), 1e-8))  # float32, as the reference
    return (rms >= threshold).astype(np.uint8)


def overlapping_transcript(items: Sequence[Mapping[str, Any]], start_s: float, end_s: float) -> tuple[str, list | None]:
    """Text (and word dicts) of the transcript items that overlap ``[start_s, end_s]``.

    Items are ``{"start", "end", "transcript"}`` with optional ``"words"`` (dicts with
    start/end/word); when an item has words, only the overlapping words contribute text.
    """
    texts: list[str] = []
    words: list[dict[str, Any]] = []
    for item in items:
        try:
            tr_start, tr_end = float(item["start"]), float(item["end"])
        except (KeyError, TypeError, ValueError):
            continue
        if min(end_s, tr_end) <= max(start_s, tr_start):
            continue
        tokens: list[str] = []
        for word in item.get("words") or []:
            if not isinstance(word, dict):
                continue
            try:
                ws, we = float(word.get("start", tr_start)), float(word.get("end", tr_end))
            except (TypeError, ValueError):
                ws, we = start_s, end_s  # unusable times: keep the word, as the reference does
            if min(end_s, we) > max(start_s, ws):
                words.append(word)
                token = str(word.get("word") or word.get("text") or "").strip()
                if token:
                    tokens.append(token)
        text = str(item.get("transcript") or "").strip()
        if tokens:
            texts.append(" ".join(tokens))
        elif text:
            texts.append(text)
    return " ".join(texts), (words or None)


def vad_source_label(config: Mapping[str, float] = VAD_CONFIG) -> str:
    """How the reference names its Silero segment source in edit descriptions."""
    return (
        "silero_vad"
        f"(threshold={config['threshold']},min_speech_ms={config['min_speech_ms']},"
        f"min_silence_ms={config['min_silence_ms']},speech_pad_ms={config['speech_pad_ms']},"
        f"merge_gap_ms={config['merge_gap_ms']})"
    )


def timestamps_to_segments(
    timestamps: Sequence[Sequence[float]],
    transcript: Sequence[Mapping[str, Any]] = (),
    *,
    frame_ms: float = FRAME_MS,
    min_transcript_ms: float = 250.0,
    merge_gap_ms: float = VAD_CONFIG["merge_gap_ms"],
    source: str = "silero_vad",
) -> list[Segment]:
    """VAD timestamps (seconds) -> merged frame segments with their transcript text."""
    out: list[Segment] = []
    for start_s, end_s in timestamps:
        start_s, end_s = float(start_s), float(end_s)
        if (end_s - start_s) * 1000.0 < float(min_transcript_ms):
            continue
        text, words = overlapping_transcript(transcript, start_s, end_s)
        seg = sec_to_segment(start_s, end_s, frame_ms, text, source, words=words)
        if seg is not None:
            out.append(seg)
    return merge_close_segments(out, frame_ms=frame_ms, merge_gap_ms=merge_gap_ms)


@dataclass
class CandidateContext:
    """Both channels' segments and frame activity: what the candidate finders search."""

    segs_a: list[Segment]
    segs_b: list[Segment]
    va: np.ndarray
    vb: np.ndarray
    sources: dict[str, str] = field(default_factory=dict)
    frame_ms: float = FRAME_MS

    @property
    def n_frames(self) -> int:
        return len(self.va)

    def channel(self, ch: str) -> tuple[list[Segment], np.ndarray]:
        return (self.segs_a, self.va) if ch == "a" else (self.segs_b, self.vb)


@dataclass(frozen=True)
class ContextSettings:
    """How :func:`candidate_context` turns VAD timestamps into segments: the frame grid,
    the shortest transcript item kept, the RMS fallback's threshold and the VAD settings
    (the reference's ``SILERO_CONFIG``)."""

    frame_ms: float = FRAME_MS
    min_transcript_ms: float = 250.0
    rms_threshold: float = RMS_THRESHOLD
    vad_config: Mapping[str, float] = field(default_factory=lambda: dict(VAD_CONFIG))


def candidate_context(
    timestamps: Sequence[Sequence[Sequence[float]]],
    transcripts: Sequence[Sequence[Mapping[str, Any]]] = ((), ()),
    *,
    n_samples: int,
    sr: int,
    audio: Sequence[np.ndarray] | None = None,
    settings: ContextSettings = ContextSettings(),
) -> CandidateContext:
    """The reference ``get_candidate_context(turn_source="silero")`` with given timestamps.

    ``timestamps[c]`` are channel c's VAD segments in seconds (A = 0, B = 1) and
    ``transcripts[c]`` its transcript items. A channel without any surviving segment
    falls back to RMS VAD on its audio (silence when no audio is given).
    """
    frame_ms, vad_config = settings.frame_ms, settings.vad_config
    n_frames = int(math.ceil(n_samples / float(frame_length(sr, frame_ms))))
    label = vad_source_label(vad_config)
    segs, vads, sources = [], [], {}
    for c, name in enumerate(("a", "b")):
        found = timestamps_to_segments(
            timestamps[c],
            transcripts[c] if transcripts else (),
            frame_ms=frame_ms,
            min_transcript_ms=settings.min_transcript_ms,
            merge_gap_ms=vad_config["merge_gap_ms"],
        )
        if found:
            vads.append(segments_to_vad(found, n_frames))
            sources[name] = label
        else:
            signal = np.zeros(n_samples, dtype=np.float32) if audio is None else audio[c]
            vads.append(rms_vad(signal, sr, frame_ms, settings.rms_threshold))
            found = segments_from_vad(vads[-1])
            sources[name] = f"{label}->rms"
        segs.append(found)
    return CandidateContext(segs[0], segs[1], vads[0], vads[1], sources, frame_ms)
