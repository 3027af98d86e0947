"""TurnTakingJudge speed: `window` vs `causal` context modes, streaming, and scaling.

Random weights (speed does not depend on them), Whisper tiny.en shape. Two contexts:

* the demo checkpoint's configuration (``training/configs/judge_synthetic.yaml``: 10 s context,
  5 s hop), in both modes: the causal/window speed ratio at equal context;
* the paper's 30 s window mode (Talking Turns A.3).

Window mode runs one encoder pass per 40 ms prediction, so its cost per prediction is constant
and the real-time factor on a 5-minute conversation is measured on a sample of predictions
(said in the note); causal mode is timed on the whole conversation (quick: 1 minute).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness and data readers

from _harness import figure, limit_threads, scaling_figures, scaling_minutes, synthetic_conversation, timed  # noqa: E402


DEMO_CONTEXT_S, DEMO_HOP_S = 10.0, 5.0  # training/configs/judge_synthetic.yaml
PAPER_CONTEXT_S = 30.0
BLOCK_S = 0.2  # streaming block: what a live front end hands over every 200 ms


def _judge(mode: str, context_s: float, hop_s: float | None = None):
    import torch

    from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
    from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge

    torch.manual_seed(0)
    config = TurnTakingJudgeConfig(context_mode=mode, context_s=context_s, stream_hop_s=hop_s)
    return TurnTakingJudge(config).eval()


def _window_cost(judge, audio: np.ndarray, n_predictions: int) -> float:
    """CPU seconds per window-mode prediction, from ``n_predictions`` consecutive predictions
    mid-conversation. Every prediction is one encoder pass over a full ``context_s`` window
    (zero-padded before the piece start), so the cost does not depend on where they are."""
    spc = judge.config.samples_per_chunk
    start = (audio.size // 2 // spc) * spc
    piece = audio[start : start + n_predictions * spc]
    loud = int(np.argmax(np.abs(audio))) // spc * spc
    judge.score(audio[loud : loud + spc])  # the first call allocates; keep it out of the timing
    timing = timed(lambda: judge.score(piece))
    return timing.cpu_s / len(timing.result.probabilities)


def run(quick: bool) -> list[dict]:
    import torch

    from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudgeStream

    limit_threads()
    conversation_s = 60.0 if quick else 300.0
    sample = 6 if quick else 48
    dialogue = synthetic_conversation(conversation_s, seed=11)
    audio = dialogue.mono()
    chunk_s = 0.04
    label = f"{conversation_s / 60:g}-min conversation"
    out = []
    with torch.inference_mode():
        window = _judge("window", DEMO_CONTEXT_S)
        window_cost = _window_cost(window, audio, sample)
        causal = _judge("causal", DEMO_CONTEXT_S, DEMO_HOP_S)
        causal.score(audio[audio.size // 2 : audio.size // 2 + 16000])  # allocate outside the timing
        causal_run = timed(lambda: causal.score(audio))
        causal_predictions = len(causal_run.result.probabilities)
        causal_cost = causal_run.cpu_s / causal_predictions

        out += [
            figure("judge window (10 s): chunk predictions per CPU second", 1 / window_cost, "1/s",
                   note=f"demo-checkpoint shape; {sample} predictions timed"),
            figure("judge causal (10 s, 5 s hop): chunk predictions per CPU second", 1 / causal_cost, "1/s",
                   reference="judge window (10 s): chunk predictions per CPU second", headline=True,
                   note=f"all {causal_predictions} predictions of a {label}; ratio = causal/window speed"),
            figure(f"judge window (10 s): RTF, {label}", window_cost / chunk_s, "x real time", headline=True,
                   note=f"extrapolated: {sample} predictions timed x {int(conversation_s / chunk_s)} (constant cost per prediction)"),
            figure(f"judge causal (10 s, 5 s hop): RTF, {label}", causal_run.cpu_s / conversation_s, "x real time",
                   reference=f"judge window (10 s): RTF, {label}", headline=True, note="measured on the whole conversation"),
        ]
        del window
        paper = _judge("window", PAPER_CONTEXT_S)
        paper_n = 2 if quick else 24
        paper_cost = _window_cost(paper, audio, paper_n)
        del paper
        out += [
            figure("judge window (30 s, paper): chunk predictions per CPU second", 1 / paper_cost, "1/s",
                   reference="judge window (10 s): chunk predictions per CPU second"),
            figure(f"judge window (30 s, paper): RTF, {label}", paper_cost / chunk_s, "x real time",
                   note=f"extrapolated from {paper_n} predictions"),
        ]

        stream_s = 6.0 if quick else 60.0
        block = int(BLOCK_S * 16000)
        stream = TurnTakingJudgeStream(causal)
        piece = audio[: int(stream_s * 16000)]
        blocks = [piece[i : i + block] for i in range(0, piece.size, block)]
        streamed = timed(lambda: [stream.push(b) for b in blocks])
        out += [
            figure("judge causal stream: CPU ms per 200 ms block", streamed.cpu_s / len(blocks) * 1000, "CPU ms",
                   note=f"{stream_s:g} s pushed in 200 ms blocks; incremental (the default): a block runs only its new frames against cached keys and values"),
            figure("judge causal stream: RTF", streamed.cpu_s / stream_s, "x real time",
                   reference=f"judge causal (10 s, 5 s hop): RTF, {label}"),
        ]

        grid = scaling_minutes(quick)
        long_audio = synthetic_conversation(grid[-1] * 60, seed=12).mono()
        costs = [timed(lambda: causal.score(long_audio[: int(m * 60 * 16000)])).cpu_s for m in grid]
    return out + scaling_figures("judge causal scoring", grid, costs)
