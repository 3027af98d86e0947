"""Interruption outcomes: when the user talks over the system, who is left holding the floor?

Metric (e) of Talking Turns asks this at every user interruption of the system: an ``I`` run
(both speak, neither backchannels) entered while the system held the floor, resolved by ``T``
(the system falls silent: the user takes the floor) or ``C`` (the user falls silent: the
system keeps it). The judge's chunk head reads the mono mix and must tell, in the last
overlapped chunk, which of two voices is about to stop; on re-voiced Switchboard it barely can.
With each speaker's own channel the question is much easier: a voice that is about to stop is
fading. This module says where the (e) decisions are (:func:`interruption_readings`, the same
instances as :mod:`~turneval.dataset_scripts.agreement_instances` builds) and what a model may
hear there (:func:`interruption_features`): the overlap's length so far and, per channel, how
the level of its last 80 ms and the 120 ms before compare with the level 0.2-0.5 s and
0.5-1.5 s back. Only level *changes* within a channel are used, so a channel's gain (which
varies between recordings) does not matter as long as the channel is above the level floor
(-80 dBFS; digital silence reads as the floor); every sample read lies before the decision time.

Example (A speaks 0-3 s; B cuts in at 2 s and goes on alone after A stops):

>>> from turneval.dataset_scripts.dialogue import Dialogue
>>> from turneval.dataset_scripts.labels import chunk_labels
>>> d = Dialogue("x", [[(0.0, 3.0)], [(2.0, 5.0)]], duration=6.0)
>>> [(r.chunk, r.holder, round(r.overlap_s, 2)) for r in interruption_readings(chunk_labels(d)).values()]
[(74, 0, 1.04)]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .grids import CHUNK_S, SAMPLE_RATE


# (newest, oldest) seconds before the decision time of the four level windows
LEVEL_WINDOWS_S = ((0.0, 0.08), (0.08, 0.2), (0.2, 0.5), (0.5, 1.5))
LEVEL_FLOOR_DB = -80.0
"""Levels below this (dBFS) read as it, so silence before an onset does not give unbounded changes."""

INTERRUPTION_FEATURES = (
    "overlap_s",
    "log_overlap_s",
    "holder_last_vs_back",          # holder's channel: level of the last 80 ms minus 0.2-0.5 s back (dB)
    "holder_before_last_vs_back",   # 80-200 ms back minus 0.2-0.5 s back
    "holder_last_vs_far",           # last 80 ms minus 0.5-1.5 s back
    "interrupter_last_vs_back",
    "interrupter_before_last_vs_back",
    "interrupter_last_vs_far",
)
"""What :func:`interruption_features` returns, in order."""


@dataclass(frozen=True)
class InterruptionReading:
    """One (e) decision.

    Attributes:
        chunk: the resolving chunk (its label is T or C; the instance's chunk).
        holder: the speaker who held the floor when the other cut in (the "system" of (e)).
        time: the decision time (s): the start of ``chunk``; a model hears the audio before it.
        overlap_s: how long both have been speaking, up to ``time``.
    """

    chunk: int
    holder: int
    time: float
    overlap_s: float


def interruption_readings(labels: Any) -> dict[int, InterruptionReading]:
    """Every (e) decision of a two-speaker conversation, either speaker as the floor holder,
    keyed by the resolving chunk (each chunk resolves at most one interruption)."""
    from .agreement_instances import instances_from_chunk_labels

    readings = {}
    for holder in (0, 1):
        for inst in instances_from_chunk_labels(labels, None, holder, metrics=("e",)):
            start = inst.chunk
            while start > 0 and labels.labels[start - 1] == "I":
                start -= 1
            readings[inst.chunk] = InterruptionReading(inst.chunk, holder, float(labels.chunk_starts[inst.chunk]), (inst.chunk - start) * CHUNK_S)
    return dict(sorted(readings.items()))


def _level_db(x: np.ndarray) -> float:
    power = float(np.mean(np.square(x, dtype=np.float64))) if len(x) else 0.0
    return max(10.0 * np.log10(power) if power > 0 else LEVEL_FLOOR_DB, LEVEL_FLOOR_DB)


def _level_changes(channel: np.ndarray, end: int) -> list[float]:
    levels = [_level_db(channel[max(0, end - int(round(old * SAMPLE_RATE))) : max(0, end - int(round(new * SAMPLE_RATE)))])
              for new, old in LEVEL_WINDOWS_S]
    last, before_last, back, far = levels
    return [last - back, before_last - back, last - far]


def interruption_features(stereo: np.ndarray, reading: InterruptionReading) -> np.ndarray:
    """:data:`INTERRUPTION_FEATURES` at one decision, from ``stereo`` (``[2, n]``, 16 kHz, one
    speaker per channel) before ``reading.time`` only."""
    if stereo.ndim != 2 or stereo.shape[0] != 2:
        raise ValueError(f"interruption features need two channels, one per speaker; got shape {stereo.shape}")
    end = int(np.floor(reading.time * SAMPLE_RATE + 1e-6))
    holder, interrupter = stereo[reading.holder], stereo[1 - reading.holder]
    overlap = max(reading.overlap_s, CHUNK_S)
    return np.asarray([overlap, np.log(overlap)] + _level_changes(holder, end) + _level_changes(interrupter, end), dtype=np.float64)


__all__ = ["INTERRUPTION_FEATURES", "InterruptionReading", "LEVEL_FLOOR_DB", "LEVEL_WINDOWS_S", "interruption_features", "interruption_readings"]
