"""TurnNat turn-taking boundary units (TurnNat §III-D, golden/turnnat ``units_*``).

The naturalness score reads a future-activity model's frame NLL only around the moments
where turn-taking happens: two seconds before each utterance onset and each utterance
offset. This module finds those *boundary units* from observed voice activity and turns
frame NLL into one score per unit:

1. :func:`observed_vad` — per-channel speech segments to 50 Hz activity, with the sample
   arithmetic of the reference (``vad[start//320 : end//320] = 1``).
2. :func:`clean_vad` — DualTurn cleanup: drop speech runs under 150 ms, then fill silences
   under 150 ms that speech closes.
3. :func:`speech_segments` and :func:`merge_utterance_segments` — same-speaker islands join
   into utterances across gaps of at most 1 s in which the other speaker is active for at
   most 20 % of the gap.
4. :func:`extract_utterance_units` — ``utterance_start`` ``[onset - 2 s, onset]`` and
   ``utterance_end`` ``[offset - 2 s, offset]`` for utterances of at least 0.5 s.
5. :func:`unit_rows_from_units` — the mean (float32) of the finite frame NLL inside each
   unit, after the first 3 s (the model's context warm-up), for units with at least 5 such
   frames; with fallbacks when no unit survives.

Everything reproduces the reference script ``score_vap_nll_naturalness.py`` of
TedZhangHao/turn-taking-naturalness, float quirks included: unit starts are computed as
``boundary - 2.0`` in float (5.6 s gives 3.5999999999999996 s and frame 179), and the merge
gap is compared in float seconds (a 1 s gap can be 1.0000000000000002 and not merge).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from turneval.dataset_scripts.grids import FRAME_HZ, SAMPLE_RATE, SAMPLES_PER_FRAME, true_runs


UNIT_PRE_S = 2.0
"""A boundary unit covers [boundary - UNIT_PRE_S, boundary + UNIT_POST_S]."""
UNIT_POST_S = 0.0
MIN_UTTERANCE_S = 0.5
MERGE_GAP_S = 1.0
MERGE_OTHER_MAX_RATIO = 0.2
CONTEXT_S = 3.0
"""Frames before this time are never scored (the model has too little context there)."""
MIN_UNIT_FRAMES = 5
CLEAN_MIN_SPEECH_MS = 150
CLEAN_MIN_SILENCE_MS = 150
FALLBACK_WINDOW_S = 2.0
UNIT_MODES = ("boundaries", "spans", "both")


@dataclass(frozen=True)
class SpeechSegment:
    """A run of one speaker's activity on the frame grid (``end_frame`` exclusive)."""

    speaker: int
    start_frame: int
    end_frame: int
    start: float
    end: float
    duration: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Utterance(SpeechSegment):
    """Same-speaker segments merged across short gaps.

    Attributes:
        merged_from: number of voice-activity islands it joins.
        internal_gap_s: total length of the gaps it bridges.
        max_internal_other_ratio: the largest share of a bridged gap in which the other
            speaker was active (None when nothing was merged).
    """

    merged_from: int = 1
    internal_gap_s: float = 0.0
    max_internal_other_ratio: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if self.max_internal_other_ratio is None:
            del out["max_internal_other_ratio"]
        return out


@dataclass(frozen=True)
class BoundaryUnit:
    """A scoring window around one turn-taking boundary.

    Attributes:
        unit_type: ``utterance_start`` (onset), ``utterance_end`` (offset) or ``utterance_span``.
        start_time, end_time: the window in seconds.
        speaker: whose utterance the boundary belongs to (0 = A, 1 = B).
        partner: the other speaker.
        detail: the utterance and parameters the unit came from.
    """

    unit_type: str
    start_time: float
    end_time: float
    speaker: int | None
    partner: int | None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit_type": self.unit_type,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "speaker": self.speaker,
            "partner": self.partner,
            "detail": dict(self.detail),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "BoundaryUnit":
        return cls(
            unit_type=str(data["unit_type"]),
            start_time=float(data["start_time"]),
            end_time=float(data["end_time"]),
            speaker=data.get("speaker"),
            partner=data.get("partner"),
            detail=dict(data.get("detail") or {}),
        )


@dataclass(frozen=True)
class UnitRow:
    """One scored unit: the mean NLL of its finite frames.

    ``unit_type`` is also ``fallback_vad_boundaries`` or ``fallback_all_valid`` when no
    boundary unit had enough frames (see :func:`unit_rows_from_units`).
    """

    segment_id: str
    unit_id: int
    unit_type: str
    start_time: float
    end_time: float
    num_frames: int
    unit_nll: float
    speaker: int | None
    partner: int | None
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def boundary(self) -> str:
        """``onset``, ``offset``, ``span`` or ``fallback``."""
        return {"utterance_start": "onset", "utterance_end": "offset", "utterance_span": "span"}.get(self.unit_type, "fallback")

    @property
    def boundary_time(self) -> float:
        """The time of the boundary itself (onset or offset); the window end otherwise."""
        if self.unit_type == "utterance_start" and "utterance_start_s" in self.detail:
            return float(self.detail["utterance_start_s"])
        if self.unit_type == "utterance_end" and "utterance_end_s" in self.detail:
            return float(self.detail["utterance_end_s"])
        return self.end_time

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["detail"] = dict(self.detail)
        return out


# ---------------------------------------------------------------------------------------
# Voice activity
# ---------------------------------------------------------------------------------------
def observed_vad_from_samples(
    segments: Sequence[Iterable[tuple[int, int]]], n_samples: int, samples_per_frame: int = SAMPLES_PER_FRAME
) -> np.ndarray:
    """Per-channel speech segments in samples to frame activity ``[n_samples // hop, 2]`` (int8).

    A segment (start, end) sets frames ``start // hop`` up to ``min(end // hop, n_frames)``
    (exclusive), as the reference turns Silero timestamps into 50 Hz VAD.
    """
    if len(segments) != 2:
        raise ValueError(f"need segments for exactly 2 channels, got {len(segments)}")
    n_frames = int(n_samples) // samples_per_frame
    vad = np.zeros((n_frames, 2), dtype=np.int8)
    for channel, channel_segments in enumerate(segments):
        for i, (start, end) in enumerate(channel_segments):
            start, end = int(start), int(end)
            if start < 0 or end < start:
                raise ValueError(f"channel {channel} segment {i}: need 0 <= start <= end samples, got ({start}, {end})")
            vad[start // samples_per_frame : min(end // samples_per_frame, n_frames), channel] = 1
    return vad


def observed_vad(
    segments: Sequence[Iterable[tuple[float, float]]], duration_s: float, sample_rate: int = SAMPLE_RATE
) -> np.ndarray:
    """As :func:`observed_vad_from_samples` for segments in seconds (rounded to samples)."""
    in_samples = [[(int(round(s * sample_rate)), int(round(e * sample_rate))) for s, e in channel] for channel in segments]
    return observed_vad_from_samples(in_samples, int(round(duration_s * sample_rate)), sample_rate // FRAME_HZ)


def _closed_runs(x: np.ndarray, value: int) -> list[tuple[int, int]]:
    """Runs of ``value`` that end before the end of ``x`` (a run still open at the end is skipped)."""
    return [(s, e) for s, e in true_runs(x == value) if e < x.size]


def clean_vad_channel(vad, frame_hz: float = FRAME_HZ, min_speech_ms: float = CLEAN_MIN_SPEECH_MS, min_silence_ms: float = CLEAN_MIN_SILENCE_MS) -> np.ndarray:
    """DualTurn cleanup of one channel: remove short speech runs, then fill short silences.

    Runs are measured in frames, ``int(ms / frame_ms)`` (7 for 150 ms at 50 Hz). Only runs
    that something closes are changed: a run still open at the end of the array is left as
    it is, while a leading silence closed by speech is filled when short.
    """
    out = np.asarray(vad).astype(np.int8).copy()
    if out.ndim != 1:
        raise ValueError(f"clean_vad_channel needs a 1-D array, got shape {out.shape}")
    frame_ms = 1000.0 / frame_hz
    min_speech = int(min_speech_ms / frame_ms)
    min_silence = int(min_silence_ms / frame_ms)
    for start, end in _closed_runs(out, 1):
        if end - start < min_speech:
            out[start:end] = 0
    for start, end in _closed_runs(out, 0):
        if end - start < min_silence:
            out[start:end] = 1
    return out


def clean_vad(vad, frame_hz: float = FRAME_HZ, min_speech_ms: float = CLEAN_MIN_SPEECH_MS, min_silence_ms: float = CLEAN_MIN_SILENCE_MS) -> np.ndarray:
    """:func:`clean_vad_channel` on each channel of ``[T, 2]`` activity."""
    vad = np.asarray(vad)
    if vad.ndim != 2:
        raise ValueError(f"voice activity must have shape [n_frames, n_channels], got {vad.shape}")
    return np.stack(
        [clean_vad_channel(vad[:, c], frame_hz, min_speech_ms, min_silence_ms) for c in range(vad.shape[1])], axis=1
    ).astype(np.int8)


# ---------------------------------------------------------------------------------------
# Segments and utterances
# ---------------------------------------------------------------------------------------
def speech_segments(vad, frame_hz: float = FRAME_HZ) -> list[SpeechSegment]:
    """Runs of activity of every speaker, sorted by (start, end, speaker)."""
    vad = np.asarray(vad)
    segments = []
    for speaker in range(vad.shape[1]):
        for s, e in true_runs(vad[:, speaker] > 0):
            segments.append(SpeechSegment(speaker, s, e, float(s / frame_hz), float(e / frame_hz), float((e - s) / frame_hz)))
    return sorted(segments, key=lambda x: (x.start, x.end, x.speaker))


def active_ratio(vad, speaker: int, start_s: float, end_s: float, frame_hz: float = FRAME_HZ) -> float:
    """Share of frames ``[floor(start*hz), ceil(end*hz))`` in which ``speaker`` is active (0 if empty)."""
    vad = np.asarray(vad)
    lo = max(0, int(math.floor(start_s * frame_hz)))
    hi = min(vad.shape[0], int(math.ceil(end_s * frame_hz)))
    if hi <= lo:
        return 0.0
    return float((vad[lo:hi, speaker] > 0).mean())


def merge_utterance_segments(
    segments: Sequence[SpeechSegment],
    vad,
    frame_hz: float = FRAME_HZ,
    max_gap_s: float = MERGE_GAP_S,
    other_max_ratio: float = MERGE_OTHER_MAX_RATIO,
) -> list[Utterance]:
    """Join consecutive islands of one speaker into utterances.

    Two islands merge when the gap between them is at most ``max_gap_s`` (compared in float
    seconds) and the other speaker is active in at most ``other_max_ratio`` of the gap's
    frames (both inclusive). Sorted by (start, end, speaker).
    """
    merged: list[Utterance] = []
    for speaker in sorted({s.speaker for s in segments}):
        current: Utterance | None = None
        for seg in sorted((s for s in segments if s.speaker == speaker), key=lambda x: (x.start, x.end)):
            if current is None:
                current = Utterance(**seg.to_dict())
                continue
            gap_s = float(seg.start - current.end)
            ratio = active_ratio(vad, 1 - speaker, current.end, seg.start, frame_hz)
            if gap_s <= max_gap_s and ratio <= other_max_ratio:
                previous_max = current.max_internal_other_ratio or 0.0
                current = Utterance(
                    speaker=speaker,
                    start_frame=current.start_frame,
                    end_frame=seg.end_frame,
                    start=current.start,
                    end=float(seg.end),
                    duration=float(seg.end - current.start),
                    merged_from=current.merged_from + 1,
                    internal_gap_s=current.internal_gap_s + max(0.0, gap_s),
                    max_internal_other_ratio=max(previous_max, ratio),
                )
            else:
                merged.append(current)
                current = Utterance(**seg.to_dict())
        if current is not None:
            merged.append(current)
    return sorted(merged, key=lambda x: (x.start, x.end, x.speaker))


# ---------------------------------------------------------------------------------------
# Units
# ---------------------------------------------------------------------------------------
class _UnitCollector:
    """Clamps, drops empty and de-duplicates units as the reference's ``add_unit`` does."""

    def __init__(self, duration_s: float) -> None:
        self.duration_s = float(duration_s)
        self.units: list[BoundaryUnit] = []
        self._seen: set[tuple] = set()

    def add(self, unit_type: str, start_s: float, end_s: float, speaker: int, detail: dict[str, Any]) -> None:
        start_s, end_s = max(0.0, float(start_s)), min(self.duration_s, float(end_s))
        if end_s <= start_s:
            return
        key = (unit_type, round(start_s, 2), round(end_s, 2), speaker)
        if key in self._seen:
            return
        self._seen.add(key)
        self.units.append(BoundaryUnit(unit_type, start_s, end_s, speaker, 1 - speaker, detail))


def units_from_utterances(
    utterances: Sequence[Utterance],
    duration_s: float,
    unit_pre_s: float = UNIT_PRE_S,
    unit_post_s: float = UNIT_POST_S,
    min_utterance_s: float = MIN_UTTERANCE_S,
    unit_mode: str = "boundaries",
    merge_gap_s: float = MERGE_GAP_S,
    merge_other_max_ratio: float = MERGE_OTHER_MAX_RATIO,
) -> list[BoundaryUnit]:
    """Boundary units of the utterances of at least ``min_utterance_s``.

    ``unit_mode`` ``boundaries`` gives an onset and an offset unit per utterance, ``spans``
    one unit over the whole utterance, ``both`` all three. Units are clamped to
    ``[0, duration_s]``, empty ones dropped, duplicates (same type, speaker and times to
    10 ms) removed, and the result sorted by (start, end, type, speaker).
    ``merge_gap_s`` / ``merge_other_max_ratio`` are only recorded in ``detail``.
    """
    if unit_mode not in UNIT_MODES:
        raise ValueError(f"unit_mode must be one of {UNIT_MODES}, got {unit_mode!r}")
    collector = _UnitCollector(duration_s)
    for utt in utterances:
        if utt.duration < min_utterance_s:
            continue
        detail = {
            "utterance_start_s": utt.start,
            "utterance_end_s": utt.end,
            "utterance_duration_s": utt.duration,
            "merged_from_vad_islands": int(utt.merged_from),
            "internal_gap_s": float(utt.internal_gap_s),
            "utterance_merge_gap_s": merge_gap_s,
            "utterance_merge_other_max_ratio": merge_other_max_ratio,
        }
        if unit_mode in ("boundaries", "both"):
            # boundary - pre in float, as the reference: 5.6 - 2.0 = 3.5999999999999996.
            collector.add("utterance_start", utt.start - unit_pre_s, utt.start + unit_post_s, utt.speaker, {**detail, "boundary": "start"})
            collector.add("utterance_end", utt.end - unit_pre_s, utt.end + unit_post_s, utt.speaker, {**detail, "boundary": "end"})
        if unit_mode in ("spans", "both"):
            collector.add("utterance_span", utt.start - unit_pre_s, utt.end + unit_post_s, utt.speaker, {**detail, "boundary": "span"})
    return sorted(collector.units, key=lambda u: (u.start_time, u.end_time, u.unit_type, u.speaker))


@dataclass(frozen=True)
class UnitSettings:
    """How voice activity is cut into boundary units (the defaults are TurnNat's): the
    context before and after a boundary (s), the shortest utterance kept (s), the unit mode
    (see :func:`units_from_utterances`), and the merge of a speaker's IPUs across gaps of at
    most ``merge_gap_s`` in which the other speaks at most ``merge_other_max_ratio`` of it."""

    unit_pre_s: float = UNIT_PRE_S
    unit_post_s: float = UNIT_POST_S
    min_utterance_s: float = MIN_UTTERANCE_S
    unit_mode: str = "boundaries"
    merge_gap_s: float = MERGE_GAP_S
    merge_other_max_ratio: float = MERGE_OTHER_MAX_RATIO


def extract_utterance_units(
    vad, duration_s: float, frame_hz: float = FRAME_HZ, settings: UnitSettings = UnitSettings()
) -> list[BoundaryUnit]:
    """Boundary units straight from (cleaned) voice activity ``[T, 2]``."""
    s = settings
    utterances = merge_utterance_segments(speech_segments(vad, frame_hz), vad, frame_hz, s.merge_gap_s, s.merge_other_max_ratio)
    return units_from_utterances(
        utterances, duration_s, s.unit_pre_s, s.unit_post_s, s.min_utterance_s, s.unit_mode, s.merge_gap_s, s.merge_other_max_ratio
    )


# ---------------------------------------------------------------------------------------
# Unit scores
# ---------------------------------------------------------------------------------------
def context_frames(frame_hz: float = FRAME_HZ, context_s: float = CONTEXT_S) -> int:
    """First scored frame, ``ceil(context_s * frame_hz)`` (150)."""
    return int(math.ceil(context_s * frame_hz))


def frame_slice_for_unit(unit: BoundaryUnit, nll_len: int, frame_hz: float = FRAME_HZ, context_s: float = CONTEXT_S) -> tuple[int, int]:
    """Frames ``[lo, hi)`` of a unit: ``[max(ceil(3 s), floor(start)), min(nll_len, ceil(end)))``.

    May be empty (``hi <= lo``) when the unit lies in the first ``context_s`` or past the NLL.
    """
    lo = max(context_frames(frame_hz, context_s), int(math.floor(float(unit.start_time) * frame_hz)))
    hi = min(int(nll_len), int(math.ceil(float(unit.end_time) * frame_hz)))
    return lo, hi


def boundary_frame_mask(units: Sequence[BoundaryUnit], n_frames: int, frame_hz: float = FRAME_HZ, context_s: float = 0.0) -> np.ndarray:
    """Frames that lie in any unit, ``[n_frames]`` bool (e.g. to weight the training loss).

    TurnNat up-weights the cross-entropy on turn-taking boundary-unit frames (Eq. 5-6);
    this gives those frames with the same slicing as the scoring (``context_s`` = 0 keeps
    the first seconds).
    """
    mask = np.zeros(int(n_frames), dtype=bool)
    for unit in units:
        lo, hi = frame_slice_for_unit(unit, n_frames, frame_hz, context_s)
        if hi > lo:
            mask[lo:hi] = True
    return mask


def _finite_mean(values: np.ndarray) -> tuple[int, float]:
    values = values[np.isfinite(values)]
    # float32 mean, as the reference: numpy's pairwise float32 sum.
    return int(values.size), (float(values.mean()) if values.size else float("nan"))


def fallback_boundary_mask(vad, nll_len: int, frame_hz: float = FRAME_HZ, context_s: float = CONTEXT_S, window_s: float = FALLBACK_WINDOW_S) -> np.ndarray:
    """Frames within ``window_s`` of any voice-activity change (``[idx - w, idx + w]``), after the context."""
    vad = np.asarray(vad)
    n = min(int(nll_len), vad.shape[0])
    mask = np.zeros(int(nll_len), dtype=bool)
    if n <= 1:
        return mask
    window = int(round(window_s * frame_hz))
    changes = np.flatnonzero(np.any(vad[1:n] != vad[: n - 1], axis=1)) + 1
    for idx in changes:
        mask[max(0, int(idx) - window) : min(int(nll_len), int(idx) + window + 1)] = True
    mask[: min(context_frames(frame_hz, context_s), int(nll_len))] = False
    return mask


def unit_rows_from_units(
    nll,
    units: Sequence[BoundaryUnit],
    vad,
    segment_id: str = "",
    frame_hz: float = FRAME_HZ,
    context_s: float = CONTEXT_S,
    min_unit_frames: int = MIN_UNIT_FRAMES,
) -> list[UnitRow]:
    """Score every unit with at least ``min_unit_frames`` finite NLL frames.

    Args:
        nll: per-frame NLL ``[N]`` (float32; NaN marks frames without a score). Frame i is
            time i / frame_hz.
        units: boundary units (:func:`extract_utterance_units`).
        vad: the voice activity the units came from, used by the fallback.
        segment_id: a name copied into every row.
        frame_hz, context_s, min_unit_frames: grid, warm-up to skip, minimum frames.

    Returns:
        One row per surviving unit, numbered in order. When none survives, a single
        ``fallback_vad_boundaries`` row (all frames within 2 s of a voice-activity change)
        or else a single ``fallback_all_valid`` row (every frame after the warm-up); an
        empty list when no finite frame remains at all.
    """
    nll = np.asarray(nll, dtype=np.float32)
    rows: list[UnitRow] = []
    for unit in units:
        lo, hi = frame_slice_for_unit(unit, len(nll), frame_hz, context_s)
        if hi <= lo:
            continue
        count, mean = _finite_mean(nll[lo:hi])
        if count < min_unit_frames:
            continue
        rows.append(
            UnitRow(segment_id, len(rows), unit.unit_type, float(unit.start_time), float(unit.end_time), count, mean, unit.speaker, unit.partner, dict(unit.detail))
        )
    if rows:
        return rows

    boundary_mask = fallback_boundary_mask(vad, len(nll), frame_hz, context_s)
    if int(boundary_mask.sum()) >= min_unit_frames:
        idx = np.flatnonzero(boundary_mask)
        count, mean = _finite_mean(nll[boundary_mask])
        if count >= min_unit_frames:
            return [
                UnitRow(segment_id, 0, "fallback_vad_boundaries", float(idx[0] / frame_hz), float((idx[-1] + 1) / frame_hz), count, mean, None, None, {"reason": "no_valid_utterance_units"})
            ]

    valid = np.ones(len(nll), dtype=bool)
    valid[: min(context_frames(frame_hz, context_s), len(nll))] = False
    count, mean = _finite_mean(nll[valid])
    if count == 0:
        return []
    idx = np.flatnonzero(valid)
    return [UnitRow(segment_id, 0, "fallback_all_valid", float(idx[0] / frame_hz), float((idx[-1] + 1) / frame_hz), count, mean, None, None, {"reason": "no_vad_boundaries"})]


__all__ = [
    "BoundaryUnit",
    "SpeechSegment",
    "boundary_frame_mask",
    "UnitRow",
    "UnitSettings",
    "Utterance",
    "active_ratio",
    "clean_vad",
    "clean_vad_channel",
    "context_frames",
    "extract_utterance_units",
    "fallback_boundary_mask",
    "frame_slice_for_unit",
    "merge_utterance_segments",
    "observed_vad",
    "observed_vad_from_samples",
    "speech_segments",
    "unit_rows_from_units",
    "units_from_utterances",
]
