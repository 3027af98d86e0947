"""A small autocorrelation pitch tracker and the F0 slope at the end of an IPU.

Used to measure what turn prosody changes in re-voiced audio (``benchmarks/validation/revoice_prosody.py``):
does an IPU that ends a turn fall, one that continues stay level, a question rise? Numpy only
(no librosa, no model): per 40 ms frame (10 ms hop), the normalised autocorrelation's highest
peak between 1/400 s and 1/60 s lags gives F0 when it is strong enough (voiced) and the frame is
not near silence. Octave errors are damped by a 3-frame median in semitones. Good enough for
synthetic voices, which are clean and periodic; not meant for noisy real recordings.
"""
from __future__ import annotations

import numpy as np

from ..grids import SAMPLE_RATE


FRAME_S = 0.040
HOP_S = 0.010
F0_RANGE_HZ = (60.0, 400.0)
VOICING_THRESHOLD = 0.5
"""Normalised autocorrelation peak below which a frame counts as unvoiced."""
SILENCE_DB = -35.0
"""Frames quieter than this relative to the loudest frame of the signal are unvoiced."""
MIN_VOICED_FRAMES = 5
"""A slope needs at least this many voiced frames (50 ms of voicing) in its window."""


def track_f0(audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> tuple[np.ndarray, np.ndarray]:
    """Frame times (s, frame centres) and F0 in Hz (NaN where unvoiced) of a mono signal."""
    x = np.asarray(audio, dtype=np.float64)
    frame, hop = int(round(FRAME_S * sample_rate)), int(round(HOP_S * sample_rate))
    if len(x) < frame:
        return np.zeros(0), np.zeros(0)
    n = 1 + (len(x) - frame) // hop
    frames = np.lib.stride_tricks.sliding_window_view(x, frame)[::hop][:n]
    frames = frames - frames.mean(axis=1, keepdims=True)
    energy = np.sqrt(np.mean(frames**2, axis=1)) + 1e-12
    loud = 20 * np.log10(energy / energy.max()) > SILENCE_DB
    size = 1 << int(np.ceil(np.log2(2 * frame)))
    spectrum = np.fft.rfft(frames * np.hanning(frame), size, axis=1)
    ac = np.fft.irfft(np.abs(spectrum) ** 2, size, axis=1)[:, :frame]
    ac = ac / np.maximum(ac[:, :1], 1e-12)
    lo, hi = int(sample_rate / F0_RANGE_HZ[1]), min(frame - 2, int(sample_rate / F0_RANGE_HZ[0]))
    lag = lo + np.argmax(ac[:, lo : hi + 1], axis=1)
    peak = ac[np.arange(n), lag]
    # parabolic interpolation around the peak: sub-sample lag, so slopes are not quantised
    left, right = ac[np.arange(n), lag - 1], ac[np.arange(n), np.minimum(lag + 1, frame - 1)]
    denom = left - 2 * peak + right
    shift = np.where(np.abs(denom) > 1e-12, 0.5 * (left - right) / np.where(denom == 0, 1, denom), 0.0)
    f0 = sample_rate / (lag + np.clip(shift, -0.5, 0.5))
    f0[(peak < VOICING_THRESHOLD) | ~loud] = np.nan
    times = (np.arange(n) * hop + frame / 2) / sample_rate
    return times, _median3_semitones(f0)


def _median3_semitones(f0: np.ndarray) -> np.ndarray:
    """A 3-frame median in the log domain over voiced neighbours (removes single-frame octave jumps)."""
    st = 12 * np.log2(f0 / 100.0)
    out = st.copy()
    for i in range(1, len(st) - 1):
        window = st[i - 1 : i + 2]
        if np.isfinite(st[i]) and np.isfinite(window).sum() == 3:
            out[i] = np.median(window)
    return 100.0 * 2 ** (out / 12)


def end_slope(audio: np.ndarray, start_s: float, end_s: float, window_s: float = 0.3, sample_rate: int = SAMPLE_RATE) -> float:
    """F0 slope (semitones per second) over the last ``window_s`` of ``audio[start_s:end_s]``;
    NaN when fewer than :data:`MIN_VOICED_FRAMES` frames are voiced there. Negative: falling.

    Robust on purpose, because one octave jump in 300 ms would swamp the slope: every frame is
    folded to within half an octave of the span's median F0, and the slope is the Theil-Sen
    estimate (the median of the pairwise slopes), not least squares.
    """
    lo, hi = max(0, int(round(start_s * sample_rate))), int(round(end_s * sample_rate))
    times, f0 = track_f0(audio[lo:hi], sample_rate)
    voiced = np.isfinite(f0)
    keep = (times >= (hi - lo) / sample_rate - window_s) & voiced
    if keep.sum() < MIN_VOICED_FRAMES:
        return float("nan")
    st = 12 * np.log2(f0[voiced])
    reference = float(np.median(st))
    folded = reference + np.mod(12 * np.log2(f0[keep]) - reference + 6, 12) - 6
    t = times[keep]
    i, j = np.triu_indices(len(t), k=1)
    return float(np.median((folded[j] - folded[i]) / (t[j] - t[i])))


__all__ = ["end_slope", "track_f0"]
