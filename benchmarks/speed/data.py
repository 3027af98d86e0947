"""Data stages: synthesis, 40 ms label building and the balanced chunk sampler, 1 to 60 minutes.

* synthesis: ``generate_dialogue`` (two eSpeak voices, timing model, mixing) per audio minute;
* labels: ``chunk_labels`` (events, backchannels, floor) on a synthetic conversation's words;
* sampler: ``BalancedChunkSampler`` drawing an epoch over conversations of that length, and
  reading 30 s training windows from a WAV file (partial reads; examples per second).

Each stage is timed at every length of the scaling grid (1-60 min; quick: 0.5-2 min) and its
log-log exponent reported. Longer label and sampler inputs repeat one synthetic conversation.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness and data readers

from _harness import best_of, figure, scaling_figures, scaling_minutes, synthetic_conversation, timed  # noqa: E402


def _synthesis(grid: list[float]) -> list[dict]:
    from turneval.dataset_scripts.synthetic import generate_dialogue

    generate_dialogue(0, duration_s=5.0)  # load eSpeak outside the timing
    costs = [timed(lambda: generate_dialogue(20 + i, duration_s=m * 60)).cpu_s for i, m in enumerate(grid)]
    return [
        figure("synthesis: CPU s per audio minute", costs[-1] / grid[-1], "CPU s/min",
               note=f"generate_dialogue, human style, {grid[-1]:g}-min conversation"),
        figure("synthesis: seconds of dialogue per CPU second", grid[-1] * 60 / costs[-1], "s/s",
               note="the same run, as a speed"),
    ] + scaling_figures("synthesis", grid, costs)


def _labels(grid: list[float]) -> tuple[list[dict], dict]:
    from turneval.dataset_scripts.labels import chunk_labels

    longest = synthetic_conversation(grid[-1] * 60, seed=5)
    costs, labels = [], {}
    for m in grid:
        dialogue = longest.crop(0.0, m * 60, new_id=f"labels_{m:g}") if m < grid[-1] else longest
        timing = best_of(lambda: chunk_labels(dialogue), 3)
        costs.append(timing.cpu_s)
        labels[m] = timing.result
    out = [figure("labels: CPU s per audio minute", costs[-1] / grid[-1], "CPU s/min",
                  note=f"chunk_labels on words, {grid[-1]:g}-min conversation")]
    return out + scaling_figures("labels", grid, costs), {"dialogue": longest, "labels": labels}


def _sampler(grid: list[float], made: dict, quick: bool) -> list[dict]:
    import soundfile as sf

    from turneval.dataset_scripts.sampler import BalancedChunkSampler, ConversationRef

    dialogue = made["dialogue"]
    out = []
    with tempfile.TemporaryDirectory(prefix="turneval-bench-sampler-") as tmp:
        wav = Path(tmp) / "conversation.wav"
        sf.write(wav, dialogue.audio.T, 16000, subtype="PCM_16")
        costs = []
        for m in grid:
            ids = made["labels"][m].label_ids()
            # Ten conversations of this length: what one epoch over a small corpus draws from.
            refs = [ConversationRef(f"c{i}", str(wav), ids) for i in range(10)]
            sampler = BalancedChunkSampler(refs, context_s=30.0, seed=0)
            epochs = iter(range(3))  # a new epoch each time: the sampler caches the last draw
            costs.append(best_of(lambda: sampler.epoch_indices(next(epochs)), 3).cpu_s)
        out += [figure(f"sampler: epoch draw over 10 x {grid[-1]:g}-min conversations", costs[-1] * 1000, "CPU ms")]
        out += scaling_figures("sampler epoch draw", grid, costs)
        n_examples = 50 if quick else 400
        indices = sampler.epoch_indices(0)[:n_examples]
        read = timed(lambda: [sampler.example(c, t) for c, t in indices])
        assert all(ex["input_values"].shape == (480000,) for ex in read.result)
        out.append(figure("sampler: 30 s training windows read per CPU second", len(indices) / read.cpu_s, "1/s",
                          note=f"{len(indices)} examples, partial WAV reads + mono mix"))
    return out


def run(quick: bool) -> list[dict]:
    grid = scaling_minutes(quick)
    out = _synthesis(grid)
    label_figures, made = _labels(grid)
    return out + label_figures + _sampler(grid, made, quick)
