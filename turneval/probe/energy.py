"""Where a stream has sound: 5 ms energy windows, shared by the recorder's timing and the mock agents.

The probe's own timing figures (when the agent starts and stops talking) need sample-level
precision, which Silero's 32 ms frames do not give; the scripted caller and the mock agents
are clean synthetic speech, so a level threshold finds their edges to 5 ms. The threshold
matches the synthesizer's trimming (-40 dB below its 0.8 peak), so a caller's scripted speech
end and the mock's own reading of it agree. ``turneval full-duplex-bench`` and ``turneval report`` still
use Silero on the written files, as their rules ask.
"""
from __future__ import annotations

import numpy as np


WINDOW_S = 0.005
THRESHOLD_DBFS = -42.0
"""A 5 ms window louder than this (RMS, dB re full scale) holds sound."""
BRIDGE_S = 0.2
"""Silences shorter than this join two stretches of sound (the IPU rule of docs/events_and_labels.md)."""


def loud_windows(audio: np.ndarray, sample_rate: int, threshold_dbfs: float = THRESHOLD_DBFS) -> np.ndarray:
    """Per 5 ms window (the last one may be partial): its RMS is above the threshold."""
    audio = np.asarray(audio, dtype=np.float32)
    hop = max(1, int(round(sample_rate * WINDOW_S)))
    n = -(-audio.size // hop)
    if n == 0:
        return np.zeros(0, dtype=bool)
    padded = np.zeros(n * hop, dtype=np.float32)
    padded[: audio.size] = audio
    rms = np.sqrt(np.mean(padded.reshape(n, hop) ** 2, axis=1))
    return rms > 10 ** (threshold_dbfs / 20)


def sound_spans(audio: np.ndarray, sample_rate: int, *, threshold_dbfs: float = THRESHOLD_DBFS,
                bridge_s: float = BRIDGE_S, min_s: float = 0.03) -> list[tuple[float, float]]:
    """Stretches of sound in seconds: loud windows joined across gaps under ``bridge_s``, those under ``min_s`` dropped."""
    loud = loud_windows(audio, sample_rate, threshold_dbfs)
    if not loud.any():
        return []
    hop = max(1, int(round(sample_rate * WINDOW_S)))
    edges = np.flatnonzero(np.diff(np.concatenate([[0], loud.astype(np.int8), [0]])))
    spans: list[list[float]] = []
    for start, end in zip(edges[::2], edges[1::2]):
        s, e = start * hop / sample_rate, min(end * hop, np.asarray(audio).size) / sample_rate
        if spans and s - spans[-1][1] < bridge_s:
            spans[-1][1] = e
        else:
            spans.append([s, e])
    return [(round(s, 4), round(e, 4)) for s, e in spans if e - s >= min_s]
