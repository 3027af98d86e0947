# A copy of turneval.dataset_scripts.grids for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""Time grids shared by every part of turneval (docs/events_and_labels.md).

One place for the rates, so that no file carries its own copy of 0.04 or 50.
"""
from __future__ import annotations

import math

import numpy as np


SAMPLE_RATE = 16_000
"""Internal audio rate (Hz)."""

CHUNK_S = 0.04
"""Judge chunk length: chunk i covers [0.04 i, 0.04 (i + 1))."""
CHUNK_HZ = 25

FRAME_S = 0.02
"""Future-activity frame length (VAP's 50 Hz)."""
FRAME_HZ = 50

SAMPLES_PER_CHUNK = int(SAMPLE_RATE * CHUNK_S)  # 640
SAMPLES_PER_FRAME = int(SAMPLE_RATE * FRAME_S)  # 320


def n_chunks(duration_s: float) -> int:
    """Number of whole 40 ms chunks in ``duration_s`` seconds."""
    return int(math.floor(duration_s * CHUNK_HZ + 1e-9))


def n_frames(duration_s: float) -> int:
    """Number of whole 20 ms frames in ``duration_s`` seconds."""
    return int(math.floor(duration_s * FRAME_HZ + 1e-9))


def chunk_times(count: int) -> np.ndarray:
    """Start times (s) of the first ``count`` chunks."""
    return np.arange(count, dtype=np.float64) * CHUNK_S


def segments_to_activity(segments, count: int, hz: float) -> np.ndarray:
    """Binary activity on a grid of ``count`` cells at ``hz``.

    A cell is active when a segment covers any part of it: cell i covers [i/hz, (i+1)/hz),
    so segment (s, e) activates cells floor(s*hz) .. ceil(e*hz)-1.
    """
    act = np.zeros(count, dtype=np.int8)
    for start, end in segments:
        if end <= start:
            continue
        first = max(0, int(math.floor(start * hz + 1e-9)))
        last = min(count, int(math.ceil(end * hz - 1e-9)))
        if last > first:
            act[first:last] = 1
    return act


def true_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``(start, end)`` indices (end exclusive) of the runs of True in a 1-D mask.

    >>> true_runs(np.array([0, 1, 1, 0, 1], dtype=bool))
    [(1, 3), (4, 5)]
    """
    padded = np.concatenate([[False], np.asarray(mask, dtype=bool), [False]])
    starts = np.flatnonzero(~padded[:-1] & padded[1:])
    ends = np.flatnonzero(padded[:-1] & ~padded[1:])
    return [(int(s), int(e)) for s, e in zip(starts, ends)]


def activity_to_segments(activity: np.ndarray, hz: float) -> list[tuple[float, float]]:
    """Runs of ones in a binary grid, as (start_s, end_s) pairs."""
    return [(s / hz, e / hz) for s, e in true_runs(np.asarray(activity).astype(bool))]
