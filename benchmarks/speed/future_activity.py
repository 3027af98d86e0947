"""FutureActivityPredictor: real-time factor, peak memory and scaling of ``predict_long``.

Random weights in the demo configuration (``training/configs/future_activity_demo.json``;
speed and memory do not depend on the weights). One series of stereo conversations from 1 to
60 minutes (quick: 0.5 to 1.5) gives the real-time factor at 10 minutes, the peak resident
memory at 60 minutes and how both grow. ``predict_long`` works in overlapping 30 s windows, so
the model's activations do not grow with the length; the returned ``[frames, 256]`` float32
array does (50 frames/s: about 3 MiB per audio minute), and the "working memory" figures
include it. Growth well beyond that means more is kept per window than the output needs (in
this version each kept slice holds its whole window's output alive until the final concatenation).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness and data readers

from _harness import figure, limit_threads, memory_of, noise_audio, scaling_figures, timed  # noqa: E402


DEMO_CONFIG = Path(__file__).resolve().parents[2] / "training" / "configs" / "future_activity_demo.json"


def _minutes(quick: bool) -> tuple[list[float], float]:
    """The lengths measured and the one whose real-time factor is reported."""
    return ([0.5, 1.0, 1.5], 1.5) if quick else ([1.0, 2.0, 5.0, 10.0, 60.0], 10.0)


def run(quick: bool) -> list[dict]:
    import torch

    from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
    from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel

    limit_threads()
    torch.manual_seed(0)
    settings = json.loads(DEMO_CONFIG.read_text(encoding="utf-8")) if DEMO_CONFIG.is_file() else {}
    model = FutureActivityPredictorModel(FutureActivityPredictorConfig(**settings)).eval()
    grid, rtf_at = _minutes(quick)
    # The content does not change the cost; the longest input is made once and sliced.
    audio = torch.from_numpy(noise_audio(grid[-1] * 60, channels=2, seed=3))
    costs, added, peaks = [], [], []
    with torch.inference_mode():
        model.predict_long(audio[:, :16000])  # allocate outside the timing
        for minutes in grid:
            piece = audio[:, : int(minutes * 60 * 16000)]
            use, timing = memory_of(lambda: timed(lambda: model.predict_long(piece)))
            costs.append(timing.cpu_s)
            added.append(use.added_mib)
            peaks.append(use.peak_mib)
            del timing
    config_name = "demo config" if settings else "default config"
    rtf = costs[grid.index(rtf_at)] / (rtf_at * 60)
    longest = f"{grid[-1]:g} min"
    exact = "" if use.exact else " (peak counted from process start: /proc/self/clear_refs unavailable)"
    return [
        figure(f"predictor RTF, {rtf_at:g}-min stereo conversation", rtf, "x real time", headline=True,
               note=f"{config_name}, predict_long ({model.config.stream_window_s:g} s windows, {model.config.stream_context_s:g} s context)"),
        figure(f"predictor peak RSS, {longest} conversation", peaks[-1], "MiB", headline=True,
               note=f"whole process: model + the {longest} stereo input ({audio.numel() * 4 / 2**20:.0f} MiB) + working memory{exact}"),
        figure(f"predictor working memory, {longest}", added[-1], "MiB",
               reference="predictor working memory, 1 min",
               note="peak RSS during predict_long above the RSS before it; ratio near 1 = flat in length"),
        figure("predictor working memory, 1 min", added[grid.index(1.0)], "MiB"),
    ] + scaling_figures("predictor predict_long", grid, costs) + scaling_figures(
        "predictor working memory", grid, [max(a, 1e-3) for a in added], unit_cost="MiB")
