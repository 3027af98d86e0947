"""Channel augmentation for re-voiced conversations: telephone band, codec, noise, level.

Switchboard was recorded over telephone lines (8 kHz, mu-law); the judge should hear speech
through such channels as well as clean. Each conversation draws one :class:`Augmentation`
from its seed; it changes only the sound, never the timing, so the labels stay those of the
real word times.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np
import soxr
from scipy.signal import butter, sosfilt

from ..grids import SAMPLE_RATE

MU = 255.0


@dataclass(frozen=True)
class Augmentation:
    """What one conversation's channels go through (in this order).

    Attributes:
        telephone: band-limit to 300-3400 Hz and round-trip through 8 kHz.
        mulaw: 8-bit mu-law encode/decode (G.711-like quantisation), only with telephone.
        snr_db: per channel, the ratio of speech power to added noise (None: no noise).
        noise_color: "white", "pink" or "brown".
        gains_db: per channel, a level change.
    """

    telephone: bool = False
    mulaw: bool = False
    snr_db: tuple[float, float] | None = None
    noise_color: str = "white"
    gains_db: tuple[float, float] = (0.0, 0.0)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def draw_augmentation(rng: np.random.Generator, p_telephone: float = 0.5, p_noise: float = 0.7) -> Augmentation:
    """A random augmentation: half the conversations telephone-band (half of those mu-law),
    70 % with noise at 8-35 dB SNR, each channel's level within -8..+4 dB."""
    telephone = bool(rng.random() < p_telephone)
    mulaw = telephone and bool(rng.random() < 0.5)
    snr = None
    color = "white"
    if rng.random() < p_noise:
        snr = (float(rng.uniform(8, 35)), float(rng.uniform(8, 35)))
        color = str(rng.choice(["white", "pink", "brown"]))
    gains = (float(rng.uniform(-8, 4)), float(rng.uniform(-8, 4)))
    return Augmentation(telephone=telephone, mulaw=mulaw, snr_db=snr, noise_color=color, gains_db=gains)


def telephone_band(x: np.ndarray, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """300-3400 Hz band-pass (4th-order Butterworth) and an 8 kHz round trip."""
    sos = butter(4, [300, 3400], btype="bandpass", fs=sample_rate, output="sos")
    y = sosfilt(sos, x).astype(np.float32)
    narrow = soxr.resample(y, sample_rate, 8000)
    return np.asarray(soxr.resample(narrow, 8000, sample_rate), dtype=np.float32)[: len(x)]


def mulaw_roundtrip(x: np.ndarray) -> np.ndarray:
    """8-bit mu-law quantisation (encode and decode), as a G.711 telephone channel does."""
    y = np.clip(x, -1.0, 1.0)
    mag = np.log1p(MU * np.abs(y)) / np.log1p(MU)
    q = np.round(mag * 127.0) / 127.0  # 7 bits of magnitude + sign = 8 bits
    return (np.sign(y) * np.expm1(q * np.log1p(MU)) / MU).astype(np.float32)


def colored_noise(n: int, color: str, rng: np.random.Generator) -> np.ndarray:
    """Unit-power white, pink (1/f) or brown (1/f^2) noise, shaped in the frequency domain."""
    white = rng.standard_normal(n)
    if color == "white" or n < 4:
        noise = white
    else:
        spectrum = np.fft.rfft(white)
        f = np.arange(len(spectrum), dtype=np.float64)
        f[0] = 1.0
        spectrum /= np.sqrt(f) if color == "pink" else f
        noise = np.fft.irfft(spectrum, n)
    return (noise / (np.std(noise) + 1e-12)).astype(np.float32)


def speech_power(x: np.ndarray, segments: Sequence[tuple[float, float]], sample_rate: int = SAMPLE_RATE) -> float:
    """Mean power of ``x`` inside the segments (the whole signal when there are none)."""
    parts = [x[int(s * sample_rate) : int(e * sample_rate)] for s, e in segments]
    parts = [p for p in parts if p.size]
    sel = np.concatenate(parts) if parts else x
    return float(np.mean(sel.astype(np.float64) ** 2)) if sel.size else 0.0


def apply_augmentation(
    audio: np.ndarray, segments: Sequence[Sequence[tuple[float, float]]], aug: Augmentation, rng: np.random.Generator
) -> np.ndarray:
    """Apply ``aug`` to a [2, n] conversation (segments: per channel, for the noise SNR)."""
    out = np.array(audio, dtype=np.float32, copy=True)
    for ch in range(out.shape[0]):
        x = out[ch]
        if aug.telephone:
            x = telephone_band(x)
        if aug.snr_db is not None:
            power = speech_power(x, segments[ch])
            if power > 0:
                x = x + colored_noise(len(x), aug.noise_color, rng) * np.sqrt(power / 10 ** (aug.snr_db[ch] / 10))
        x = x * 10 ** (aug.gains_db[ch] / 20)
        if aug.mulaw:
            x = mulaw_roundtrip(x)
        out[ch] = x
    peak = float(np.max(np.abs(out))) if out.size else 0.0
    if peak > 0.99:  # never clip: scale the whole conversation down
        out *= 0.99 / peak
    return out
