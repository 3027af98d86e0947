"""Input sample rate and bandwidth: record them, warn on telephone audio, band-limit on request.

turneval works at 16 kHz (docs/formats.md, "Audio"), so every input is resampled on load. Resampling cannot
restore what a narrow-band recording never had: an 8 kHz telephone call carries nothing above
4 kHz, while the audio models' features (the judge's Whisper log-mel and an audio
FutureActivityPredictor's mel frames) cover 0-8 kHz and were trained on wideband speech. Their
figures therefore shift on telephone audio (measured on ``examples/human_like``: naturalness m of
the audio demo predictor -4.49 at 8 kHz vs -3.51 at 16 kHz, same segments). Inputs at 16 kHz and
above agree after resampling (their content above 8 kHz is cut by the resampler anyway).

Two things follow:

* every report records the input rate and, per channel, the share of power above 4 kHz, and says
  when the input is narrow-band (:func:`describe_band`, :func:`narrow_band_note`);
* ``band_limit="telephone"`` low-passes every channel to the telephone band (16 kHz -> 8 kHz ->
  16 kHz with the same soxr filter that loads an 8 kHz file) before voice activity, the judge and
  the predictor, so that a wideband and a telephone recording of one dialogue give the same
  figures. It changes the figures of wideband input, so it is an option, not the default.
  The VAD then band-limits once more (``VADConfig.band``), as it does after loading an 8 kHz
  file: both reach the VAD through the same two filters (once instead of twice moves a boundary
  by 32-64 ms on the bundled examples, so the second pass is kept).

Voice-activity-only predictors and annotation segments do not look at the audio, and the VAD
listens to the telephone band (``VADConfig.band``): their figures do not depend on the rate.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from turneval.dataset_scripts.audio import TELEPHONE_RATE, telephone_band  # noqa: F401 (re-exported: a recording at or below this rate has no content above 4 kHz)
from turneval.dataset_scripts.grids import SAMPLE_RATE


BAND_LIMITS = ("none", "telephone")
"""Values of ``band_limit`` (the CLI's ``--band-limit``)."""


HIGH_BAND_HZ = 4000.0
"""Lower edge of the band whose power share tells wideband from telephone audio."""

NARROW_BAND_SHARE = 1e-4
"""A channel whose power above 4 kHz is below this share of its total power (-40 dB) is narrow-band.
Measured: wideband speech 1e-3 to 3e-2 (the bundled examples, AMI headset audio); 8 kHz audio
resampled to 16 kHz below 1e-8."""


class NarrowBandWarning(UserWarning):
    """The input carries (almost) nothing above 4 kHz; audio-model figures are not comparable to wideband ones."""


def input_sample_rates(paths: Sequence[str | Path]) -> list[int]:
    """The sample rate of each audio file, from its header."""
    import soundfile as sf

    return [int(sf.info(str(p)).samplerate) for p in paths]


WELCH_SEGMENT = 512
"""Samples per Welch segment (Hann window, half overlap): 31.25 Hz bins at 16 kHz."""


def welch_power(channel: np.ndarray, sample_rate: int = SAMPLE_RATE, block: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Welch power spectrum (frequencies, power up to a constant factor) of a channel.

    ``scipy.signal.welch(x, fs, nperseg=WELCH_SEGMENT)``'s shape (Hann window, half overlap, each
    segment's mean removed, the bins between DC and Nyquist doubled) in numpy: importing
    scipy.signal took 0.5 s of every report for this one spectrum. Segments go ``block`` at a
    time, so an hour of audio needs a few MB, not a GB. Ratios of its power equal scipy's to
    rounding (a test checks).
    """
    x = np.asarray(channel, dtype=np.float64)
    n, step = WELCH_SEGMENT, WELCH_SEGMENT // 2
    count = 1 + (x.size - n) // step
    offsets = np.arange(n)
    window = 0.5 - 0.5 * np.cos(2 * np.pi * offsets / n)  # periodic Hann, as scipy's "hann"
    power = np.zeros(n // 2 + 1)
    for first in range(0, count, block):
        starts = step * np.arange(first, min(count, first + block))
        segments = x[starts[:, None] + offsets[None, :]]
        segments -= segments.mean(axis=1, keepdims=True)
        power += (np.abs(np.fft.rfft(segments * window, axis=1)) ** 2).sum(axis=0)
    power[1:-1] *= 2  # one-sided: every bin but DC and Nyquist (the segment is even) stands for two
    return np.fft.rfftfreq(n, 1.0 / sample_rate), power / count


def high_band_share(channel: np.ndarray, sample_rate: int = SAMPLE_RATE) -> float | None:
    """Share of the channel's power above 4 kHz (Welch spectrum); None for a silent channel."""
    channel = np.asarray(channel, dtype=np.float64)
    if channel.size < WELCH_SEGMENT or not np.any(channel):
        return None
    freqs, power = welch_power(channel, sample_rate)
    total = float(power.sum())
    return float(power[freqs >= HIGH_BAND_HZ].sum() / total) if total > 0 else None


def check_band_limit(band_limit: str) -> str:
    if band_limit not in BAND_LIMITS:
        raise ValueError(f"band limit must be one of {', '.join(BAND_LIMITS)}, got {band_limit!r}")
    return band_limit


def describe_band(audio: np.ndarray, input_rates: Sequence[int | None], band_limit: str = "none") -> dict[str, Any]:
    """The ``conversation.bandwidth`` section of a report.

    ``audio`` is the 16 kHz audio as loaded (before any band limit); ``input_rates`` the rate of
    each input file (one for a stereo file, two for --user/--system).
    """
    shares = [high_band_share(channel) for channel in audio]
    rates = [int(r) for r in input_rates if r]
    narrow_rate = bool(rates) and min(rates) <= TELEPHONE_RATE
    narrow_channels = [k for k, s in enumerate(shares) if s is not None and s < NARROW_BAND_SHARE]
    return {
        "input_sample_rate_hz": min(rates) if rates else None,
        "input_sample_rates_hz": rates,
        "high_band_share": shares,
        "high_band_hz": HIGH_BAND_HZ,
        "narrow_band_share_threshold": NARROW_BAND_SHARE,
        "narrow_band": bool(narrow_rate or narrow_channels),
        "narrow_band_channels": narrow_channels,
        "band_limit": band_limit,
    }


def narrow_band_note(band: dict[str, Any]) -> str | None:
    """The report's note (and the CLI's warning) for narrow-band input; None for wideband input."""
    if not band.get("narrow_band"):
        return None
    rate = band.get("input_sample_rate_hz")
    if rate is not None and rate <= TELEPHONE_RATE:
        why = f"the input is sampled at {rate} Hz, so it has nothing above {rate // 2} Hz"
    else:
        channels = ", ".join(str(k) for k in band["narrow_band_channels"])
        why = f"channel(s) {channels} carry almost no energy above {HIGH_BAND_HZ / 1000:g} kHz"
    if band.get("band_limit") == "telephone":
        return f"Narrow-band (telephone) input: {why}; every input was band-limited to the telephone band (--band-limit telephone), so the figures compare with other band-limited reports."
    return (
        f"Narrow-band (telephone) input: {why}. The judge and an audio-input naturalness predictor were trained on "
        "wideband speech, so their figures are not comparable with wideband recordings; to compare telephone and "
        "wideband recordings, report every one with --band-limit telephone. Segment-based figures (statistics, "
        "timing) and voice-activity-only predictors are unaffected."
    )


def narrow_band_warning(band: dict[str, Any] | None) -> list[str]:
    """The report's notes about the band; warns (:class:`NarrowBandWarning`) on narrow-band input."""
    note = narrow_band_note(band or {})
    if note is None:
        return []
    import warnings

    warnings.warn(note, NarrowBandWarning, stacklevel=3)
    return [note]


def prepare_band(samples: np.ndarray, input_rates: Sequence[int | None], band_limit: str = "none") -> tuple[np.ndarray, dict[str, Any]]:
    """Describe the input's band, then apply ``band_limit``: ``(audio to analyse, bandwidth section)``."""
    check_band_limit(band_limit)
    band = describe_band(samples, input_rates, band_limit)
    if band_limit == "telephone":
        samples = telephone_band(samples)
    return samples, band


__all__ = [
    "BAND_LIMITS",
    "NARROW_BAND_SHARE",
    "NarrowBandWarning",
    "describe_band",
    "high_band_share",
    "input_sample_rates",
    "narrow_band_note",
    "narrow_band_warning",
    "prepare_band",
    "telephone_band",
]
