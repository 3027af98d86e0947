"""CPU seconds per minute of one audio channel for the VAD backends.

    python benchmarks/vad_speed.py [some_recording.wav] [--minutes 1]

Without a file, a minute of noise bursts is used (the cost depends only on the length).
Compares turneval's sequence-ONNX path with silero's stock ONNX and JIT paths and checks
that they find the same segments.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def _cpu(fn):
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audio", nargs="?", help="a recording (its first channel is used)")
    parser.add_argument("--minutes", type=float, default=1.0)
    args = parser.parse_args()

    import torch
    from silero_vad import get_speech_timestamps, load_silero_vad

    from turneval.dataset_scripts.audio import load_audio
    from turneval.dataset_scripts.grids import SAMPLE_RATE
    from turneval.dataset_scripts.vad import SileroVAD

    torch.set_num_threads(1)
    n = int(args.minutes * 60 * SAMPLE_RATE)
    if args.audio:
        channel = load_audio(args.audio)[0][0][:n]
    else:
        rng = np.random.default_rng(0)
        envelope = (np.sin(np.arange(n) / SAMPLE_RATE * 2 * np.pi * 0.2) > 0).astype(np.float32)
        channel = (0.1 * rng.standard_normal(n) * envelope + 1e-3 * rng.standard_normal(n)).astype(np.float32)
    minutes = channel.size / SAMPLE_RATE / 60

    vad = SileroVAD()
    vad.detect_speech(channel[:SAMPLE_RATE])  # load the model outside the timing
    ours_s, ours = _cpu(lambda: vad.detect_speech(channel))
    results = {"turneval sequence ONNX": (ours_s, ours)}
    for name, model in (("silero stock ONNX", load_silero_vad(onnx=True)), ("silero stock JIT", load_silero_vad())):
        seconds, found = _cpu(lambda: get_speech_timestamps(torch.from_numpy(channel), model))
        results[name] = (seconds, [(d["start"] / SAMPLE_RATE, d["end"] / SAMPLE_RATE) for d in found])
    for name, (seconds, segments) in results.items():
        same = "same segments" if segments == ours else "DIFFERENT segments"
        print(f"{name:24s} {seconds / minutes:6.3f} CPU s per minute  ({len(segments)} segments, {same})")


if __name__ == "__main__":
    main()
