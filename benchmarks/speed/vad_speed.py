"""VAD: CPU seconds per minute of one audio channel, turneval's path vs silero's stock paths.

    python benchmarks/speed/vad_speed.py [some_recording.wav] [--minutes 1]

Without a file, noise bursts are used (the cost depends only on the length). Compares
turneval's sequence-ONNX path on the audio as given (``band="full"``) with silero's stock ONNX
and JIT paths and checks that they find the same segments; beside them turneval's default, which
first band-limits the channel to the telephone band (``VADConfig.band``). Under ``benchmarks/run_all.py`` (``run(quick)``) the audio is one channel of
a synthetic conversation (eSpeak speech, so there are segments to agree on), and it also
measures how the cost grows from 1 to 60 minutes of audio.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness
from _harness import (  # noqa: E402
    figure,
    limit_threads,
    noise_audio,
    scaling_figures,
    scaling_minutes,
    synthetic_conversation,
    timed,
)


DEFAULT_PATH = "turneval default (telephone band)"
"""The report's VAD: the sequence-ONNX path on the channel band-limited to the telephone band."""


def compare_backends(channel: np.ndarray) -> dict[str, tuple[float, list[tuple[float, float]]]]:
    """CPU seconds and segments of each VAD path on one 16 kHz channel."""
    import torch
    from silero_vad import get_speech_timestamps, load_silero_vad

    from turneval.dataset_scripts.grids import SAMPLE_RATE
    from turneval.dataset_scripts.vad import SileroVAD

    vad, default = SileroVAD(band="full"), SileroVAD()
    vad.detect_speech(channel[:SAMPLE_RATE])  # load the model outside the timing
    ours = timed(lambda: vad.detect_speech(channel))
    banded = timed(lambda: default.detect_speech(channel))
    results = {"turneval sequence ONNX": (ours.cpu_s, ours.result), DEFAULT_PATH: (banded.cpu_s, banded.result)}
    for name, model in (("silero stock ONNX", load_silero_vad(onnx=True)), ("silero stock JIT", load_silero_vad())):
        stock = timed(lambda: get_speech_timestamps(torch.from_numpy(channel), model))
        results[name] = (stock.cpu_s, [(d["start"] / SAMPLE_RATE, d["end"] / SAMPLE_RATE) for d in stock.result])
    return results


def run(quick: bool) -> list[dict]:
    from turneval.dataset_scripts.grids import SAMPLE_RATE
    from turneval.dataset_scripts.vad import SileroVAD

    limit_threads()
    minutes = 0.5 if quick else 1.0
    channel = np.ascontiguousarray(synthetic_conversation(minutes * 60, seed=4).audio[0])
    results = compare_backends(channel)
    ours_segments = results["turneval sequence ONNX"][1]
    out = []
    for name, (seconds, segments) in results.items():
        same = "same segments as turneval" if segments == ours_segments else "DIFFERENT segments from turneval"
        if name == DEFAULT_PATH:
            same = "the audio band-limited first, so its own segments"
        reference = "VAD silero stock ONNX" if name != "silero stock ONNX" else None
        out.append(figure(f"VAD {name}", seconds / minutes, "CPU s per audio minute", reference=reference,
                          note=f"{minutes:g} min of synthetic speech, {len(segments)} segments; {same}",
                          headline=name == "turneval sequence ONNX"))
    vad = SileroVAD()
    grid = scaling_minutes(quick)
    audio = np.ascontiguousarray(synthetic_conversation(grid[-1] * 60, seed=1).audio[0])
    costs = [timed(lambda: vad.detect_speech(audio[: int(m * 60 * SAMPLE_RATE)])).cpu_s for m in grid]
    return out + scaling_figures("VAD (turneval, one channel)", grid, costs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audio", nargs="?", help="a recording (its first channel is used)")
    parser.add_argument("--minutes", type=float, default=1.0)
    args = parser.parse_args()

    from turneval.dataset_scripts.audio import load_audio
    from turneval.dataset_scripts.grids import SAMPLE_RATE

    limit_threads()
    n = int(args.minutes * 60 * SAMPLE_RATE)
    channel = load_audio(args.audio)[0][0][:n] if args.audio else noise_audio(args.minutes * 60)
    minutes = channel.size / SAMPLE_RATE / 60
    results = compare_backends(channel)
    ours = results["turneval sequence ONNX"][1]
    for name, (seconds, segments) in results.items():
        same = "same segments" if segments == ours else "DIFFERENT segments"
        same = "telephone band" if name == DEFAULT_PATH else same
        print(f"{name:24s} {seconds / minutes:6.3f} CPU s per minute  ({len(segments)} segments, {same})")


if __name__ == "__main__":
    main()
