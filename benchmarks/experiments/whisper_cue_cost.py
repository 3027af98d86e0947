"""What makes Whisper's turn-completion cue cheap enough for every report, one lever at a time.

    python benchmarks/experiments/whisper_cue_cost.py                       # every variant (~10 CPU min)
    python benchmarks/experiments/whisper_cue_cost.py --variants fp32_b8    # one of them
    ... --cache runs/whisper_cue_clips.npz   # the clips and decisions, kept for the next run (default)

The clips are those the report's pause decision hands Whisper at every (a)/(d) decision of the
real dev corpora (SpokenWOZ, Harper Valley, the AMI channel pairs; speech by VAD; the pauser's
own channel from the turn start less 0.5 s to 0.2 s before the decision, the last 8 s of it).
Each variant reads the cue on every clip; the script prints its CPU seconds a pause
(``time.process_time``: both threads), the peak RSS of the process so far, how far its values
are from the float32 ``generate`` reader's (the reader before this script: correlation, largest
absolute difference), and the ROC-AUC on each corpus of the cue alone and of the rule over
(log silence, cue) fitted leaving that corpus out (``training/fit_pause_decision``).

Variants (``--variants``; ``reference`` always runs first, or is read from the cache), named
``{precision}_b{batch}[_window{seconds}]``:

* ``reference``: transformers' ``generate`` (greedy, scores of every step kept), float32, 8 clips
  a batch: the reader of 2026-11-27;
* ``fp32_b8``: the greedy loop of ``turneval.whisper_completion`` in float32 (what the report runs);
* ``bf16_b8``: the same with the encoder, and the cross-attention's two products with its states,
  in bfloat16 (the rest of each decoding step float32; ``precision="bfloat16"``);
* ``int8_b8`` / ``int8pt_b8``: every Linear layer in dynamic int8 (weights per output channel /
  per layer; activations quantized per batch, so a clip's cue depends on its batch);
* ``int8enc_b8``: only the encoder's Linear layers in int8 (each clip encoded alone);
* ``fp32_b8_window10`` / ``15`` / ``20``: the encoder cut to a 10, 15 or 20 s window (50
  positions a second; the clip's last 8 s at its start, zeros after, as in 30 s);
* ``..._clip{s}``: only the last ``s`` seconds of each clip heard (the report hears 8);
* ``fp32_b8_pad2`` / ``5`` / ``10`` / ``25`` / ``50``: merged padding (``WhisperCompletion(padding_group=G)``):
  the 30 s window with its padding read as groups of G positions, one a group counted G times;
  since 2026-11-29 past the padding's first 100 positions, read one by one (``PADDING_ONE_BY_ONE``;
  the figures below before that date are for groups from the clip's end on).

Measured 2026-11-27 (shared 2-core machine under load from other jobs, 1 torch thread; CPU s a
pause; against the reference r and largest difference; left out, the rule over log silence + the
cue, AMI / Harper Valley / SpokenWOZ): reference 0.69, 0.823 / 0.929 / 0.908; ``fp32_b8`` 0.63,
r = 1.0000, the same figures; ``bf16_b8`` 0.47 (0.617 float32 in the same run), r = 1.0000
(max 0.16), 0.823 / 0.927 / 0.908; ``int8_b8`` 0.46, r = 0.953 (max 7.4), 0.842 / 0.912 / 0.883;
``int8enc_b8`` 0.45, r = 0.978 (max 3.6), 0.796 / 0.924 / 0.894; ``fp32_b8_window10`` 0.37,
r = 0.866, 0.785 / 0.843 / 0.848; ``fp32_b8_window15`` 0.34, r = 0.934, 0.804 / 0.906 / 0.876;
int8 with a 10 s window 0.15, r = 0.862, 0.857 / 0.881 / 0.844. Of one float32 clip's 0.6 CPU s,
the encoder's 30 s window takes about 0.5, the decoding about 0.1. ONNX Runtime (the encoder
exported at opset 17, float32 / dynamic int8, 2 threads): 0.70 / 0.41 CPU s per clip for the
encoder alone against torch's 0.56 / 0.35 (a scratch run; not a variant here).

Measured 2026-11-29 on a CPU with AMX (bfloat16 matrix products in hardware), the encoder's lengths
padded to shared shapes and the ended rows leaving the decoding together, alternating:
``fp32_b8_pad2`` 0.290 / 0.268, ``bf16_b8_pad2`` 0.154 / 0.136, later 0.159 / 0.172 (r = 0.9955 with the reference,
0.99994 with ``fp32_b8_pad2``; 0.811 / 0.928 / 0.900), ``bf16_b32_pad2`` 0.178 / 0.169 before the
shapes were padded. bfloat16 is what the report reads on such a CPU (``precision="auto"``).
Later that day, with a variant since removed, the vocabulary matrix (the token embeddings and the
output projection, tied) in bfloat16 as well: 0.160 / 0.154 against 0.156 / 0.144 CPU s a pause
for the encoder alone in bfloat16, alternating (no saving, though the product alone takes 5.5-6.8
against 12.9-15.3 ms for 8 rows), r = 0.997 with it, largest difference 2.4 (greedy tokens
change), 4 of the 248 decisions across the threshold: not kept.

Later on 2026-11-29: the cross-attention's products with the encoder's states in bfloat16 as well,
every float32 product of a decoding step on 8 rows (a clip's cue the same in any batch to 3e-5):
``bf16_b8_pad2`` 0.151 / 0.162, left out 0.811 / 0.927 / 0.899; 17 pairs alternating with the code
before, lower in 11, median -0.008. ``_clip4`` / ``_clip6`` (the last 4 or 6 s of each clip heard
instead of 8): 0.121 / 0.169, left out 0.672 / 0.874 / 0.889 and 0.785 / 0.928 / 0.888: AMI falls.

Later on 2026-11-29, the padding next to the speech one by one (a scratch schedule of group sizes,
then ``PADDING_ONE_BY_ONE``): r with the reference, by the criterion fixed for G (r >= 0.99):
100 one by one then groups of 4, 0.9975 (768 positions); then 2 for 100 and 4 after, 0.9978 (800);
50 then 4, 0.9914; 25, then 2 for 50, then 4, 0.9917; 100 then 5, 6 or 8: 0.9894, 0.9892, 0.9842;
200 then 8, 0.9867; groups of 2 for 200 then 4 (none one by one), 0.9946. ``bf16_b8_pad4`` (100 then
4, shipped): 0.148 / 0.154 against 0.206 / 0.192 for 100 then pairs, and 0.123-0.157 against the
pairs-everywhere code's 0.145-0.190 (5 runs alternating, a slow hour; medians 0.146 / 0.172).

Later on 2026-11-29, on an AVX512-BF16 CPU without AMX (EPYC, 1 torch thread): the encoder's
attention in bfloat16 as three products (``baddbmm`` with the mask, softmax, ``bmm``) instead of
``scaled_dot_product_attention``: 0.164 / 0.163 against 0.187 / 0.176, r = 0.99996 with the fused
kernel's cue (largest difference 0.22), 0.99749 with the reference (0.99747); float32 scores over the
bfloat16 products instead: 0.239, the same r. All six heads at once held 14 MB more than the fused
kernel, one head at a time is faster (7.2 against 14.4 ms a layer, 13.1 fused) and the same bit for
bit, and oneDNN keeps 1.2 MB for each length it has run (a report's clips came in 9), so every
clip's attention runs at the longest length (the rest absent: the same bit for bit). Then the
decoding's rows each take the next clip when they end instead of batches that each run as long as
their longest clip: 96 clips in 158 steps against 214, 27-29 against 23-26 ms a step (every step
now projects onto the vocabulary); rows attending only up to the furthest row's position moved a
clip's cue with its neighbours by 2.3e-3, over the whole buffer masked by 2.7e-5. Both, 3 runs
alternating with the code before: 0.138 / 0.142 / 0.147 against 0.176 / 0.163 / 0.174 (medians
0.142 / 0.174); against it r = 0.99996, largest difference 0.22, 1 of the 248 decisions across
P 0.42 (largest change in P 0.075).

Sharing encoder work between overlapping clips is not a variant: Whisper's encoder attends over
its whole window, so two clips that overlap in time share no exact encoder state; the script
prints how many clips overlap another, which bounds what such sharing could save (172 of the 248).
"""
from __future__ import annotations

import argparse
import copy
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "validation"))
DEFAULT_CACHE = HERE.parents[1] / "runs" / "whisper_cue_clips.npz"
VARIANTS = ("reference", "fp32_b8", "bf16_b8", "int8_b8", "int8pt_b8", "int8enc_b8", "fp32_b8_window10", "fp32_b8_window15", "fp32_b8_window20",
            "fp32_b8_pad2", "fp32_b8_pad5", "fp32_b8_pad10", "fp32_b8_pad25", "fp32_b8_pad50")


class _Capture:
    """Stands in for Whisper's cue in the decision table and keeps the clips it is asked about."""

    def __init__(self) -> None:
        self.clips: list[np.ndarray] = []

    def logits(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        self.clips += [np.asarray(c, dtype=np.float32) for c in clips]
        return np.zeros(len(clips))


def collect(cache: Path) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """Every dev decision (``shift``, ``corpus``, ``recording``, ``log_silence_s``, the clip's
    bounds, smart-turn v3.2's logit 200 ms after the IPU end where it loads) and its clip; read
    from ``cache`` when it exists, else computed and written there."""
    if cache.exists():
        data = dict(np.load(cache))
        bounds = np.concatenate([[0], np.cumsum(data.pop("clip_lengths"))])
        samples = data.pop("clip_samples")
        return data, [samples[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    from pause_decision_corpora import corpus_recordings, default_root

    from turneval.checkpoints import default_checkpoint
    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.modeling.judge_loading import load_judge
    from turneval.pause_decision import judge_pause_records
    from turneval.smart_turn import SmartTurnUnavailable, SmartTurnV3
    from turneval.training.fit_pause_decision import decision_table, join_tables, load_recording

    judge = load_judge(default_checkpoint("judge"))
    try:
        smart_turn = SmartTurnV3(threads=1)
    except SmartTurnUnavailable:
        smart_turn = None
    capture, tables = _Capture(), []
    cue, bounds = judge.config.turn_completion_cue, []
    for corpus, recordings in corpus_recordings(default_root()).items():
        dialogues = [replace(load_recording(r), words=None, system_speaker=1) for r in recordings]
        tables.append(decision_table(judge, dialogues, ["log_silence_s", "whisper_complete_logit"], smart_turn, corpus=corpus, whisper=capture))
        bounds += [(r.pauser, cue.clip_start_s(r.turn_start), cue.clip_end_s(r.horizon, r.time))
                   for d in dialogues for r in judge_pause_records(judge, conversation_view(d)).values()]
    table = join_tables(tables)
    table.update(zip(("pauser", "clip_start_s", "clip_end_s"), np.asarray(bounds, dtype=np.float64).T))
    table.pop("whisper_complete_logit")
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, **table, clip_samples=np.concatenate(capture.clips), clip_lengths=np.array([len(c) for c in capture.clips]))
    return table, capture.clips


def generate_reader(batch_size: int = 8) -> Callable[[Sequence[np.ndarray]], np.ndarray]:
    """The reader of 2026-11-27: transformers' ``generate`` with every step's scores, float32."""
    import torch
    from transformers.utils import logging as transformers_logging

    from turneval.transcribe import _StaticSuppress
    from turneval.whisper_completion import MAX_CLIP_S, MAX_TOKENS, SAMPLE_RATE, WhisperCompletion, completion_logit

    reader = WhisperCompletion(precision="float32")
    model, processor = reader.model, reader.processor
    kwargs = {"logits_processor": [_StaticSuppress(model.generation_config.suppress_tokens, model.config.vocab_size)]}
    model.generation_config.suppress_tokens, model.generation_config.max_length = None, MAX_TOKENS
    transformers_logging.set_verbosity_error()

    def logits(clips: Sequence[np.ndarray]) -> np.ndarray:
        out = np.zeros(len(clips))
        for first in range(0, len(clips), batch_size):
            batch = [np.asarray(c, dtype=np.float32)[-int(MAX_CLIP_S * SAMPLE_RATE):] for c in clips[first:first + batch_size]]
            batch = [c if len(c) else np.zeros(SAMPLE_RATE // 10, dtype=np.float32) for c in batch]
            features = processor(batch, sampling_rate=SAMPLE_RATE, return_tensors="pt").input_features
            with torch.no_grad():
                g = model.generate(features, return_dict_in_generate=True, output_scores=True, **kwargs)
            n_prompt = g.sequences.shape[1] - len(g.scores)
            for row in range(len(batch)):
                tokens = g.sequences[row, n_prompt:].tolist()
                words = [k for k, t in enumerate(tokens) if reader._is_word(t)]
                if words and words[-1] + 1 < len(g.scores):
                    log_probs = torch.log_softmax(g.scores[words[-1] + 1][row].float(), -1).numpy()
                    out[first + row] = completion_logit(log_probs, reader.end_ids, reader.continue_ids)
        return out

    return logits


def cut_encoder(reader: Any, window_s: float) -> None:
    """Cut ``reader``'s encoder to ``window_s`` seconds (its first positions; the features cut to match)."""
    from turneval.modeling.modeling_completion_reader import cut_encoder as cut

    positions = int(window_s * 50)  # 2 mel frames of 10 ms per encoder position
    reader.model = copy.deepcopy(reader.model)
    reader.encoder = cut(reader.model.model.encoder, positions)
    extractor = reader.processor.feature_extractor

    class CutExtractor:
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            features = extractor(*args, **kwargs)
            features["input_features"] = features["input_features"][..., : positions * 2]
            return features

    reader.processor = copy.copy(reader.processor)
    reader.processor.feature_extractor = CutExtractor()


def quantized_copy(model: Any, per_channel: bool = True) -> Any:
    """``model`` with its Linear layers in dynamic int8 (``torch.ao.quantization.quantize_dynamic``),
    one weight scale per output channel (``per_channel``) or per layer."""
    import torch
    from torch.ao import quantization

    qconfig = quantization.per_channel_dynamic_qconfig if per_channel else quantization.default_dynamic_qconfig
    return quantization.quantize_dynamic(model, {torch.nn.Linear: qconfig}, dtype=torch.qint8)


def variant_reader(name: str) -> Callable[[Sequence[np.ndarray]], np.ndarray]:
    """``reference``, or ``{fp32|bf16|int8|int8pt|int8enc}_b{batch}[_window{s}|_pad{G}][_clip{s}]`` (see the module docstring)."""
    from turneval.whisper_completion import WhisperCompletion

    if name == "reference":
        return generate_reader()
    name, _, clip_s = name.partition("_clip")
    precision, _, rest = name.partition("_b")
    rest, _, group = rest.partition("_pad")
    batch, _, window = rest.partition("_window")
    reader = WhisperCompletion(batch_size=int(batch), precision="bfloat16" if precision == "bf16" else "float32",
                               padding_group=int(group or 1))
    if clip_s:
        return clip_cut_reader(reader, float(clip_s))
    if precision == "int8enc":
        reader.encoder = quantized_copy(reader.encoder)
    elif precision not in ("fp32", "bf16"):
        reader.model = quantized_copy(reader.model, per_channel=precision == "int8")
        reader.encoder = reader.model.model.encoder
    if window:
        cut_encoder(reader, float(window))
    return reader.logits


def clip_cut_reader(reader: Any, seconds: float) -> Callable[[Sequence[np.ndarray]], np.ndarray]:
    """``reader.logits`` hearing only the last ``seconds`` of each clip instead of
    :data:`~turneval.whisper_completion.MAX_CLIP_S` (its batches' states padded to that clip's
    longest, as the report pads them to 8 s)."""
    from turneval.whisper_completion import SAMPLE_RATE
    from turneval.whisper_merged_encoder import SHAPE_BUCKET, merged_length, round_up

    samples = int(seconds * SAMPLE_RATE)
    reader.merged_length = round_up(merged_length(samples, reader.padding_group, reader.window_positions), SHAPE_BUCKET)
    return lambda clips: reader.logits([np.asarray(c)[-samples:] for c in clips])


def corpus_aucs(table: dict[str, np.ndarray], cue: np.ndarray) -> dict[str, tuple[float, float]]:
    """Per corpus: (the cue alone, the rule over log silence and the cue fitted without that corpus)."""
    from turneval.training.fit_pause_decision import DEFAULT_C, _auc, leave_one_corpus_out

    t = {**table, "cue": cue}
    held = leave_one_corpus_out(t, ["log_silence_s", "cue"], DEFAULT_C)["held_out"]
    y, corpus = table["shift"].astype(int), table["corpus"].astype(str)
    return {c: (round(_auc(y[corpus == c], cue[corpus == c]), 3), round(_auc(y[corpus == c], held[corpus == c]), 3))
            for c in sorted(set(corpus))}


def overlapping_clips(table: dict[str, np.ndarray]) -> int:
    """How many clips overlap another clip of the same pauser in the same recording."""
    from turneval.whisper_completion import MAX_CLIP_S

    key = [f"{r}/{p}" for r, p in zip(table["recording"], table["pauser"])]
    n = 0
    for i in range(len(key)):
        starts, ends = np.maximum(table["clip_start_s"], table["clip_end_s"] - MAX_CLIP_S), table["clip_end_s"]
        n += any(j != i and key[j] == key[i] and starts[j] < ends[i] and starts[i] < ends[j] for j in range(len(key)))
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), help=f"any of {VARIANTS}, or another of their pattern")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the report runs 2)")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    table, clips = collect(args.cache)
    print(f"{len(clips)} clips, {sum(len(c) for c in clips) / 16000 / len(clips):.1f} s on average; torch threads {torch.get_num_threads()}")
    if "clip_start_s" in table:
        print(f"clips that overlap another of the same pauser: {overlapping_clips(table)}")
    silence = {str(c): v[1] for c, v in corpus_aucs(table, table["log_silence_s"]).items()}
    print(f"log silence alone, ROC-AUC: {silence}")
    if "reference" not in table:
        start = time.process_time()
        table["reference"] = variant_reader("reference")(clips)
        table["reference_cpu_s"] = np.full(len(clips), (time.process_time() - start) / len(clips))
        np.savez(args.cache, **table, clip_samples=np.concatenate(clips), clip_lengths=np.array([len(c) for c in clips]))
    reference = table["reference"]
    for name in args.variants:
        if name == "reference":
            values, cost = reference, float(table["reference_cpu_s"][0])
        else:
            reader = variant_reader(name)
            start = time.process_time()
            values = reader(clips)
            cost = (time.process_time() - start) / len(clips)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        unread = int(np.sum(~np.isfinite(values)))
        if unread:  # Whisper heard no word: the rule reads 0 there, as in a report without a fallback
            print(f"    {unread} clips without a word read")
            values = np.where(np.isfinite(values), values, 0.0)
        aucs = corpus_aucs(table, values)
        print(f"{name}: {cost:.3f} CPU s a pause; peak RSS so far {peak_mb:.0f} MB; against the reference: "
              f"r = {np.corrcoef(values, reference)[0, 1]:.4f}, max |diff| {np.max(np.abs(values - reference)):.3f}")
        print("    ROC-AUC, cue alone / rule (log silence + cue) with the corpus left out: "
              + ", ".join(f"{c} {a:.3f} / {r:.3f}" for c, (a, r) in aucs.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
