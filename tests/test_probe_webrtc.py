"""The probe's WebRTC caller track: the caller's frames reach aiortc's Opus encoder whole, at 48 kHz.

Handed 16 kHz frames, aiortc's encoder resampler keeps a few samples back, its 20 ms frame is never
full and each packet waits for the next frame (20 ms of the probe's own delay, on the way in only).
"""
from __future__ import annotations

import asyncio

import numpy as np
import pytest


pytest.importorskip("aiortc", reason="aiortc is not installed (make install)")


def _frames(sample_rate: int, samples: np.ndarray, frame: int) -> list:
    from turneval.probe.webrtc import _caller_track_class

    async def go() -> list:
        track = _caller_track_class()(sample_rate)
        for k in range(0, samples.size, frame):
            track.queue.put_nowait(samples[k : k + frame])
        return [await track.recv() for _ in range(samples.size // frame)]

    return asyncio.run(go())


def test_caller_frames_reach_the_encoder_at_48khz_with_a_fixed_1ms_delay():
    clicks = np.zeros(320 * 6, dtype=np.int16)
    clicks[[100, 700, 1500]] = 20000
    frames = _frames(16000, clicks, 320)
    assert [f.sample_rate for f in frames] == [48000] * 6
    assert [f.samples for f in frames] == [960] * 6
    assert [f.pts for f in frames] == [960 * k for k in range(6)]
    out = np.concatenate([f.to_ndarray().reshape(-1) for f in frames])
    peaks = sorted(np.argsort(-np.abs(out.astype(np.int32)))[:3])
    assert peaks == [3 * 100 + 48, 3 * 700 + 48, 3 * 1500 + 48]  # the resampler's hold: 48 samples, once


def test_every_caller_frame_leaves_as_its_own_packet():
    from aiortc.codecs.opus import OpusEncoder

    encoder = OpusEncoder()
    rng = np.random.default_rng(0)
    noise = (3000 * rng.standard_normal(320 * 5)).astype(np.int16)
    assert [len(encoder.encode(f)[0]) for f in _frames(16000, noise, 320)] == [1] * 5


def test_caller_frames_at_48khz_pass_as_they_are():
    noise = np.arange(960 * 2, dtype=np.int16)
    frames = _frames(48000, noise, 960)
    assert np.array_equal(np.concatenate([f.to_ndarray().reshape(-1) for f in frames]), noise)
