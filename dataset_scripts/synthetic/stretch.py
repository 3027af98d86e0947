"""Time-stretching without a pitch change (WSOLA), and a pitch/formant shift by resampling.

Re-voicing fits synthetic speech to real inter-pausal-unit (IPU) times, so every unit has to
be stretched or compressed to an exact number of samples. Resampling alone would change the
pitch with the duration (a 1.5x stretch lowers the voice by 7 semitones); WSOLA (waveform
similarity overlap-add, Verhelst & Roelands 1993) keeps the pitch: it cuts the input into
overlapping 20 ms frames read at the stretched rate, and shifts each frame by up to
+-5 ms to where it best continues the previous one, so pitch periods line up.
"""
from __future__ import annotations

import numpy as np
import soxr

from ..grids import SAMPLE_RATE

FRAME_S = 0.020
TOLERANCE_S = 0.005
FADE_S = 0.005


def wsola(audio: np.ndarray, n_out: int, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """``audio`` stretched (or compressed) to exactly ``n_out`` samples, pitch unchanged.

    Args:
        audio: mono float signal.
        n_out: the output length in samples.
        sample_rate: used only to size the 20 ms frames and the +-5 ms search.
    """
    x = np.asarray(audio, dtype=np.float32)
    if n_out <= 0:
        return np.zeros(0, dtype=np.float32)
    frame = int(round(FRAME_S * sample_rate))
    hop = frame // 2
    tol = int(round(TOLERANCE_S * sample_rate))
    if len(x) < 2 * frame or n_out < 2 * frame:
        # Too short for overlap-add to find pitch periods: plain resampling (changes pitch a little).
        return _resample_to(x, n_out)
    window = np.hanning(frame + 1)[:frame].astype(np.float32)  # periodic Hann: sums to 1 at 50 % overlap
    n_frames = int(np.ceil(n_out / hop)) + 1
    hop_in = (len(x) - frame) / max(1, (n_out - frame)) * hop  # input advance per output hop
    pad = frame + 2 * tol
    xp = np.concatenate([np.zeros(pad, np.float32), x, np.zeros(pad + frame + int(hop_in * 2) + 2 * tol, np.float32)])
    out = np.zeros(n_frames * hop + frame, dtype=np.float32)
    norm = np.zeros_like(out)
    pos = pad  # input position (in xp) of the frame just written
    for k in range(n_frames):
        if k == 0:
            best = pad
        else:
            natural = xp[pos + hop : pos + hop + frame]  # what would follow the last frame in the input
            nominal = pad + int(round(k * hop_in))
            lo = max(0, nominal - tol)
            region = xp[lo : nominal + tol + frame]
            if len(region) < frame:
                break
            corr = np.correlate(region, natural, mode="valid")
            best = lo + int(np.argmax(corr)) if corr.size and np.any(natural) else nominal
        out[k * hop : k * hop + frame] += window * xp[best : best + frame]
        norm[k * hop : k * hop + frame] += window
        pos = best
    norm[norm < 1e-3] = 1.0
    return (out / norm)[:n_out].astype(np.float32)


def _resample_to(x: np.ndarray, n_out: int) -> np.ndarray:
    """Linear-phase resampling of ``x`` to exactly ``n_out`` samples."""
    if len(x) == 0:
        return np.zeros(n_out, dtype=np.float32)
    if len(x) == 1:
        return np.full(n_out, x[0], dtype=np.float32)
    y = np.interp(np.linspace(0, len(x) - 1, n_out), np.arange(len(x)), x)
    return y.astype(np.float32)


def shift_pitch_formants(audio: np.ndarray, factor: float, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """Raise (factor > 1) or lower pitch and formants together by resampling (duration / factor).

    This is the "played faster or slower" change: it makes a synthetic voice sound like a
    smaller or larger speaker, giving each engine voice several variants. The duration change
    is undone later by :func:`fit_to_length`.
    """
    if abs(factor - 1.0) < 1e-6:
        return np.asarray(audio, dtype=np.float32)
    return np.asarray(soxr.resample(np.asarray(audio, dtype=np.float32), sample_rate * factor, sample_rate), dtype=np.float32)


def fade(audio: np.ndarray, sample_rate: int = SAMPLE_RATE, fade_s: float = FADE_S) -> np.ndarray:
    """5 ms raised-cosine fade in and out, so units placed in silence do not click."""
    n = min(int(round(fade_s * sample_rate)), len(audio) // 2)
    if n <= 0:
        return audio
    ramp = (0.5 - 0.5 * np.cos(np.linspace(0, np.pi, n))).astype(np.float32)
    audio = audio.copy()
    audio[:n] *= ramp
    audio[-n:] *= ramp[::-1]
    return audio


def fit_to_length(audio: np.ndarray, n_out: int, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """``audio`` time-stretched by WSOLA to exactly ``n_out`` samples, with short fades."""
    return fade(wsola(audio, n_out, sample_rate), sample_rate)


def trim_silence(audio: np.ndarray, sample_rate: int = SAMPLE_RATE, threshold_db: float = -40.0, frame_s: float = 0.005) -> np.ndarray:
    """``audio`` without leading and trailing frames quieter than ``threshold_db`` re its loudest frame."""
    x = np.asarray(audio, dtype=np.float32)
    hop = max(1, int(round(frame_s * sample_rate)))
    n = len(x) // hop
    if n == 0:
        return x
    rms = np.sqrt(np.mean(x[: n * hop].reshape(n, hop) ** 2, axis=1) + 1e-12)
    loud = np.flatnonzero(20 * np.log10(rms / (rms.max() + 1e-12)) > threshold_db)
    if loud.size == 0:
        return x[:0]
    return x[loud[0] * hop : min(len(x), (loud[-1] + 1) * hop)]
