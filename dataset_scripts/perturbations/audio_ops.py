"""Sample-level splicing for perturbation edits: inserts, deletions and fills with fades.

Every splice is faded (equal-power, ~10 ms) so that an edit is heard as a change of
timing, not as a click. Fills are "room tone": the quietest stretch of the channel's own
non-speech audio, so the inserted silence sounds like the recording's silence.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np


FADE_MS = 10.0
TARGET_RMS_DBFS = -20.0
"""Clip loudness of the TurnNat builder: RMS over both channels, in dBFS."""
PEAK_DBFS = -1.0
"""Peak ceiling of the loudness normalisation (dBFS)."""


def fade_len(sr: int, fade_ms: float = FADE_MS) -> int:
    return max(0, int(round(sr * fade_ms / 1000.0)))


def equal_power(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(fade-out, fade-in) curves of length n whose squares sum to one."""
    t = np.linspace(0.0, math.pi / 2.0, max(n, 0), dtype=np.float32)
    return np.cos(t), np.sin(t)


def fit(fill: np.ndarray | None, n: int) -> np.ndarray:
    """``fill`` cut or zero-padded to n samples."""
    out = np.zeros(max(n, 0), dtype=np.float32)
    if fill is not None and n > 0:
        x = np.asarray(fill, dtype=np.float32).reshape(-1)[:n]
        out[: len(x)] = x
    return out


def insert_with_crossfade(sig: np.ndarray, at: int, length: int, fill: np.ndarray | None, sr: int, fade_ms: float = FADE_MS) -> np.ndarray:
    """Insert ``length`` samples of ``fill`` at ``at``; the output is ``length`` longer.

    The original crossfades into the fill before ``at`` and back out of it after, so the
    fill must be a little longer than ``length`` to cover the fades (it is zero-padded).
    """
    sig = np.asarray(sig, dtype=np.float32)
    if length <= 0:
        return sig.copy()
    at = max(0, min(len(sig), int(at)))
    fade = fade_len(sr, fade_ms)
    left, right = min(fade, at), min(fade, len(sig) - at)
    fill = fit(fill, length + left + right)
    out_l, in_l = equal_power(left)
    out_r, in_r = equal_power(right)
    parts = [
        sig[: at - left],
        sig[at - left : at] * out_l + fill[:left] * in_l,
        fill[left : left + length],
        fill[left + length :] * out_r + sig[at : at + right] * in_r,
        sig[at + right :],
    ]
    return np.concatenate(parts).astype(np.float32)


def delete_with_fade(sig: np.ndarray, start: int, length: int, sr: int, fade_ms: float = FADE_MS) -> np.ndarray:
    """Remove ``[start, start + length)``, fading out before and in after the cut."""
    sig = np.asarray(sig, dtype=np.float32)
    start = max(0, min(len(sig), int(start)))
    end = max(start, min(len(sig), start + int(length)))
    pre, post = sig[:start].copy(), sig[end:].copy()
    fade = fade_len(sr, fade_ms)
    n_pre, n_post = min(fade, len(pre)), min(fade, len(post))
    if n_pre:
        pre[-n_pre:] *= equal_power(n_pre)[0]
    if n_post:
        post[:n_post] *= equal_power(n_post)[1]
    return np.concatenate([pre, post]).astype(np.float32)


def replace_with_fill(sig: np.ndarray, start: int, end: int, fill: np.ndarray | None, sr: int, fade_ms: float = 12.0) -> None:
    """Overwrite ``[start, end)`` in place with ``fill``, faded in and out."""
    start = max(0, min(len(sig), int(start)))
    end = max(start, min(len(sig), int(end)))
    n = end - start
    if n <= 0:
        return
    fill = fit(fill, n)
    fade = min(n // 2, fade_len(sr, fade_ms))
    if fade > 1:
        fill[:fade] *= equal_power(fade)[1]
        fill[n - fade :] *= equal_power(fade)[0]
    sig[start:end] = fill


def paste_add(sig: np.ndarray, clip: np.ndarray, at: int, gain: float = 1.0) -> None:
    """Mix ``clip`` into ``sig`` at ``at`` (in place, clipped to [-1, 1])."""
    at = max(0, int(at))
    n = max(0, min(len(sig), at + len(clip)) - at)
    if n:
        sig[at : at + n] += gain * clip[:n]
        np.clip(sig, -1.0, 1.0, out=sig)


def edge_faded(clip: np.ndarray, sr: int, fade_ms: float = 12.0) -> np.ndarray:
    """A copy of ``clip`` with short fades at both ends."""
    clip = np.asarray(clip, dtype=np.float32).copy()
    fade = min(len(clip) // 2, fade_len(sr, fade_ms))
    if fade > 1:
        clip[:fade] *= equal_power(fade)[1]
        clip[-fade:] *= equal_power(fade)[0]
    return clip


def room_tone(
    sig: np.ndarray,
    speech: Sequence[tuple[float, float]],
    length: int,
    sr: int,
    rng: np.random.Generator,
    *,
    guard_s: float = 0.08,
    window_s: float = 0.25,
) -> np.ndarray:
    """``length`` samples of the channel's own background, taken away from its speech.

    Non-speech stretches (``speech`` padded by ``guard_s``) are cut into windows; the
    quietest quarter of them is sampled and concatenated with crossfades. A channel with
    no non-speech audio gets very low noise at its quietest level.
    """
    if length <= 0:
        return np.zeros(0, dtype=np.float32)
    n = len(sig)
    quiet = np.ones(n, dtype=bool)
    for s, e in speech:
        quiet[max(0, int((s - guard_s) * sr)) : min(n, int(math.ceil((e + guard_s) * sr)))] = False
    win = max(1, int(window_s * sr))
    starts = [i for i in range(0, n - win + 1, win) if quiet[i : i + win].all()]
    if not starts:
        level = float(np.sqrt(np.mean(sig.astype(np.float64) ** 2))) * 0.01 if n else 0.0
        return (rng.standard_normal(length) * min(level, 1e-3)).astype(np.float32)
    rms = np.array([np.sqrt(np.mean(sig[i : i + win].astype(np.float64) ** 2)) for i in starts])
    pool = [starts[i] for i in np.argsort(rms)[: max(1, len(starts) // 4)]]
    pieces, total = [], 0
    fade = min(win // 4, fade_len(sr))
    while total < length + 2 * fade:
        i = pool[int(rng.integers(len(pool)))]
        piece = sig[i : i + win].astype(np.float32)
        if pieces and fade > 1:
            out_c, in_c = equal_power(fade)
            pieces[-1] = pieces[-1].copy()
            pieces[-1][-fade:] = pieces[-1][-fade:] * out_c + piece[:fade] * in_c
            piece = piece[fade:]
        pieces.append(piece)
        total += len(piece)
    tone = np.concatenate(pieces)[:length]
    return (tone - tone.mean()).astype(np.float32)


def normalize_loudness(
    stereo: np.ndarray, target_rms_dbfs: float = TARGET_RMS_DBFS, peak_dbfs: float = PEAK_DBFS
) -> tuple[np.ndarray, dict]:
    """Scale to a target RMS (over both channels) with a peak ceiling, as the TurnNat builder.

    Returns the scaled audio and a description (gain, input levels).
    """
    x = np.asarray(stereo, dtype=np.float32)
    if x.size == 0:
        return x.copy(), {"enabled": False, "reason": "empty_audio"}
    rms = float(np.sqrt(max(np.mean(x.astype(np.float64) ** 2), 1e-12)))
    peak = float(np.max(np.abs(x)))
    ceiling = 10.0 ** (peak_dbfs / 20.0)
    gain = 10.0 ** (target_rms_dbfs / 20.0) / max(rms, 1e-8)
    if peak > 0 and peak * gain > ceiling:
        gain = ceiling / peak
    y = np.clip(x * gain, -ceiling, ceiling).astype(np.float32)
    return y, {
        "enabled": True,
        "target_rms_dbfs": target_rms_dbfs,
        "peak_dbfs": peak_dbfs,
        "gain_db": round(20.0 * math.log10(max(gain, 1e-12)), 3),
        "input_rms_dbfs": round(20.0 * math.log10(rms), 3),
    }
