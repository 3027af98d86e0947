"""FutureActivityPredictor: a causal future voice-activity model (VAP / TurnNat).

Self-contained: imports only torch, transformers and its own configuration, so the pair of
files can be pushed to a Hub repo and loaded with ``trust_remote_code=True``.

Architecture, per 20 ms frame t (everything strictly causal: frame t sees audio up to the end
of frame t and nothing later):

    channel waveform --causal log-mel--> causal convs --> per-channel causal self-attention
        (shared weights for both channels)
    two channel streams --cross-speaker causal layers--> [h_A; h_B]
    --> future-activity head (256 VAP classes)   and   voice-activity head (one logit per channel)

The voice-activity-only variant (``input_type="vad"``) replaces the audio front end by a
projection of each channel's past voice activity (``vad_features="activity"``) or of causal
timing features of both speakers' activity (``vad_features="timing"``: cheap long context, so
the attention layers may be left out); the rest is identical. ``vad_features="timing+words"``
adds, per channel, a turn-completion cue from the speaker's own words (:class:`WordTurnCue`):
what a listener knows, as each word begins, about whether the speaker is about to stop.
``vad_features="timing+ends"`` adds, per channel, how close the speaker's current stretch of
speech is to its end, read from the activity up to ``end_lookahead_s`` ahead
(:func:`speech_end_lookahead`): the one input that is not causal, and it reads no further.
``vad_features="timing+words+ends"`` reads both (the word cue's two inputs, then the ends').
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from transformers import PreTrainedModel
from transformers.audio_utils import mel_filter_bank
from transformers.utils import ModelOutput


try:  # a relative import inside the package, a flat one inside a Hub repo
    from .configuration_future_activity_predictor import FutureActivityPredictorConfig
except ImportError:  # pragma: no cover - exercised by trust_remote_code loading
    from configuration_future_activity_predictor import FutureActivityPredictorConfig

IGNORE_INDEX = -100


@dataclass
class FutureActivityPredictorOutput(ModelOutput):
    """
    Args:
        loss: weighted frame cross-entropy plus the weighted voice-activity BCE, when labels are given.
        logits: `[batch, frames, 256]` future-activity logits.
        probs: `[batch, frames, 256]` their softmax.
        va_logits: `[batch, frames, 2]` voice-activity logits (speaker A, speaker B) of the current frame.
        frame_times: `[frames]` end time (s) of each frame, i.e. how much audio the prediction has seen.
    """

    loss: torch.FloatTensor | None = None
    logits: torch.FloatTensor | None = None
    probs: torch.FloatTensor | None = None
    va_logits: torch.FloatTensor | None = None
    frame_times: torch.FloatTensor | None = None


class CausalLogMel(nn.Module):
    """Log-mel features whose frame t is computed from the n_fft samples ending at the end of frame t."""

    def __init__(self, config: FutureActivityPredictorConfig):
        super().__init__()
        self.n_fft = config.n_fft
        self.hop = config.hop_length
        if self.n_fft < self.hop:
            raise ValueError(f"n_fft ({self.n_fft}) must be at least one hop ({self.hop})")
        mel = mel_filter_bank(
            num_frequency_bins=self.n_fft // 2 + 1,
            num_mel_filters=config.num_mel_bins,
            min_frequency=0.0,
            max_frequency=config.sample_rate / 2,
            sampling_rate=config.sample_rate,
            norm="slaney",
            mel_scale="slaney",
        )
        self.register_buffer("mel_filters", torch.tensor(mel, dtype=torch.float32))

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        """`[N, samples]` -> `[N, samples // hop, num_mel_bins]`."""
        padded = F.pad(waveform, (self.n_fft - self.hop, 0))
        frames = padded.unfold(-1, self.n_fft, self.hop)  # [N, T, n_fft]
        window = torch.hann_window(self.n_fft, device=waveform.device, dtype=waveform.dtype)
        power = torch.fft.rfft(frames * window).abs().pow(2)
        mel = power @ self.mel_filters.to(power.dtype)
        return torch.log10(mel.clamp(min=1e-10)).add(4.0).div(4.0)


TIMING_CAP_S = 20.0
"""Times (since an onset, IPU and pause lengths) are capped here: 20 s, the attention span."""
SHARE_WINDOWS_S = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
"""Windows of the activity-share features."""


def _last_index(events: torch.Tensor, fill: int) -> torch.Tensor:
    """For `[N, T]` booleans: the index of the latest event at or before each frame (``fill`` if none)."""
    idx = torch.arange(events.shape[-1], device=events.device).expand_as(events)
    return torch.where(events, idx, torch.full_like(idx, fill)).cummax(dim=-1).values


def channel_timing_features(x: torch.Tensor, frame_hz: int) -> torch.Tensor:
    """Causal timing features of one speaker's activity: `[N, T]` 0/1 -> `[N, T, 5 + len(SHARE_WINDOWS_S)]`.

    Frame t uses frames <= t only: activity now; log(1 + s) of the time since the last onset
    and since the last offset, of the last complete IPU and of the last complete pause (times
    capped at ``TIMING_CAP_S``; unknown before the window's first change, as if at the cap);
    and the share of active frames in each window of ``SHARE_WINDOWS_S`` ending at t.
    """
    n, t = x.shape
    cap = int(TIMING_CAP_S * frame_hz)
    x = (x > 0.5).to(torch.float32)
    prev = torch.cat([x[:, :1], x[:, :-1]], dim=1)  # no change is assumed at the window start
    onset, offset = (x > prev), (x < prev)  # offset: the first silent frame
    idx = torch.arange(t, device=x.device).expand(n, t)
    last_on, last_off = _last_index(onset, -cap), _last_index(offset, -cap)
    # The IPU that ended at the last offset began at the last onset before it (and vice versa).
    on_before_off = torch.gather(last_on, 1, (last_off - 1).clamp(min=0))
    off_before_on = torch.gather(last_off, 1, (last_on - 1).clamp(min=0))
    ipu = torch.where((last_off > 0) & (on_before_off >= 0), last_off - on_before_off, torch.full_like(idx, cap))
    pause = torch.where((last_on > 0) & (off_before_on >= 0), last_on - off_before_on, torch.full_like(idx, cap))
    times = torch.stack([idx - last_on, idx - last_off, ipu, pause], dim=-1).clamp(0, cap).to(torch.float32)
    csum = torch.cat([torch.zeros(n, 1, device=x.device), x.cumsum(dim=1)], dim=1)  # csum[k] = frames 0..k-1
    shares = []
    for window_s in SHARE_WINDOWS_S:
        w = max(1, int(round(window_s * frame_hz)))
        lo = (torch.arange(t, device=x.device) + 1 - w).clamp(min=0)
        shares.append((csum[:, 1:] - csum[:, lo]) / w)
    return torch.cat([x.unsqueeze(-1), torch.log1p(times / frame_hz), torch.stack(shares, dim=-1)], dim=-1)


def timing_features(voice_activity: torch.Tensor, frame_hz: int) -> torch.Tensor:
    """`[batch, 2, T]` activity -> `[batch * 2, T, 2 * F]`: each channel's own features, then its partner's."""
    b, _, t = voice_activity.shape
    per_channel = channel_timing_features(voice_activity.reshape(b * 2, t), frame_hz).view(b, 2, t, -1)
    both = torch.cat([per_channel, per_channel.flip(1)], dim=-1)  # channel c: [own, other]
    return both.reshape(b * 2, t, -1)


TIMING_FEATURES = 2 * (5 + len(SHARE_WINDOWS_S))
"""Width of :func:`timing_features`."""


def speech_end_lookahead(x: torch.Tensor, lookahead_frames: int) -> torch.Tensor:
    """How close each speaker's current stretch of speech is to its end: `[N, T]` 0/1 -> `[N, T]`.

    Not causal, on purpose: ``1 - r / L`` where r (>= 1) is the number of frames until the
    stretch that frame t is in ends and L is ``lookahead_frames``; 0 when the speaker is silent,
    when the end is L or more frames away, and when the stretch runs past the input's end.
    A voice-activity model cannot hear a turn coming to its end; this gives it, for the last
    L frames of every stretch, what a listener hears from the sound (``vad_features="timing+ends"``).
    """
    n, t = x.shape
    active = x > 0.5
    idx = torch.arange(t, device=x.device).expand(n, t)
    # index of the first silent frame at or after t (t if none: the run is cut by the input's end)
    silent_at = torch.where(~active, idx, torch.full_like(idx, t))
    next_silent = silent_at.flip(-1).cummin(dim=-1).values.flip(-1)
    left = (next_silent - idx).to(torch.float32)  # frames until the end; >= 1 on active frames
    known = active & (next_silent < t)
    return torch.where(known, (1.0 - left / lookahead_frames).clamp(min=0.0), torch.zeros_like(left))


def own_and_partner(values: torch.Tensor) -> torch.Tensor:
    """`[batch, 2, T]` per-channel inputs -> `[batch * 2, T, 2]`: each channel's own value, then its
    partner's (the layout of :func:`timing_features`)."""
    b, _, t = values.shape
    return torch.stack([values, values.flip(1)], dim=-1).reshape(b * 2, t, 2)


VAD_FEATURE_WIDTHS = {
    "activity": 1, "timing": TIMING_FEATURES, "timing+words": TIMING_FEATURES + 2, "timing+ends": TIMING_FEATURES + 2,
    "timing+words+ends": TIMING_FEATURES + 4,
}
"""Inputs per frame and channel of each ``vad_features`` reading; each ``+`` reading adds the
channel's own cue and its partner's (:func:`own_and_partner`) after the timing features, the word
cue before the end look-ahead."""


WORD_CUE_CLIP = 6.0
"""Cue log-odds are clipped to +-this: a cue is evidence, not certainty."""
WORD_CUE_CONTEXT = 3
"""The cue reads a word with the one or two words before it."""
_NOT_LETTERS = re.compile(r"[^a-z']+")


def normalize_word(text: str) -> str | None:
    """A word as the cue reads it: lower case letters and apostrophes; ``<partial>`` for a cut-off
    word (``th[e]-``); None for non-speech marks (``[laughter]``, ``<noise>``) and punctuation."""
    text = text.strip().lower()
    if not text or text[0] in "[<{(" and text[-1] in "]>})":
        return None
    if text.endswith("-") or text.startswith("-"):
        return "<partial>"
    text = _NOT_LETTERS.sub("", text).strip("'")
    return text or None


def word_cue_keys(words: Sequence[str]) -> list[tuple[str, ...]]:
    """Per word, its feature names: the word, the last two and the last three words up to it."""
    keys = []
    for i in range(len(words)):
        keys.append(tuple(f"last{n}=" + " ".join(words[max(0, i + 1 - n) : i + 1]) for n in range(1, WORD_CUE_CONTEXT + 1)))
    return keys


def hash_bucket(key: str, buckets: int) -> int:
    """A stable bucket for a feature name (crc32: the same on every machine and Python run)."""
    return zlib.crc32(key.encode("utf-8")) % buckets


def word_buckets(texts: Sequence[str], buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices of the words the cue reads, ``[K, 3]`` int64 buckets of each one's features);
    non-speech marks are skipped, and the features of a word read the kept words before it."""
    kept = [(i, w) for i, w in enumerate(normalize_word(t) for t in texts) if w is not None]
    ids = [[hash_bucket(key, buckets) for key in keys] for keys in word_cue_keys([w for _, w in kept])]
    return np.asarray([i for i, _ in kept], dtype=np.int64), np.asarray(ids, dtype=np.int64).reshape(-1, WORD_CUE_CONTEXT)


def word_cue_track(num_frames: int, word_starts: Sequence[np.ndarray], word_logits: Sequence[np.ndarray], frame_hz: int) -> np.ndarray:
    """``[T, 2]`` float32 cue track that reads each word as it begins: from the start of word k of
    channel c until c's next word starts, ``word_logits[c][k]`` (clipped); 0 before c's first word.
    ``word_starts[c]``: seconds on the track's clock, in order."""
    track = np.zeros((num_frames, 2), dtype=np.float32)
    frames = np.arange(num_frames)
    for c in range(2):
        starts = np.ceil(np.asarray(word_starts[c], dtype=np.float64) * frame_hz - 1e-9).astype(np.int64)
        values = np.clip(np.asarray(word_logits[c], dtype=np.float64), -WORD_CUE_CLIP, WORD_CUE_CLIP)
        current = np.searchsorted(starts, frames, side="right") - 1  # the last word begun by each frame
        track[:, c] = np.where(current >= 0, values[current.clip(min=0)] if values.size else 0.0, 0.0)
    return track


class WordTurnCue(nn.Module):
    """The turn-completion cue of ``vad_features="timing+words"``: per word, the log-odds that the
    speaker stops after it and the other party speaks next, from the word and the one or two words
    before it (hashed; a logistic regression fitted on Switchboard's real words by
    ``turneval.training.switchboard_words``). ``weights``: the buckets, then the bias.

    The cue of a word is read from the word's start: a one-word look-ahead (about a quarter of a
    second), as a listener recognises a word from its first sounds. It says *that* the speaker
    is about to stop, which the timing alone cannot; a cue that arrives only after the speaker
    has stopped makes a late answer cheaper instead (model card, oracle experiments)."""

    def __init__(self, config: FutureActivityPredictorConfig):
        super().__init__()
        self.buckets = config.word_cue_buckets
        self.frame_hz = config.frame_hz
        self.register_buffer("weights", torch.zeros(self.buckets + 1))

    def bucket_logits(self, ids: np.ndarray) -> np.ndarray:
        """The log-odds of words given their ``[K, 3]`` feature buckets (:func:`word_buckets`)."""
        weights = self.weights.detach().cpu().numpy().astype(np.float64)
        return weights[-1] + weights[np.asarray(ids, dtype=np.int64).reshape(-1, WORD_CUE_CONTEXT)].sum(axis=1)

    def word_logits(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(indices of the words the cue reads, their log-odds); non-speech marks are skipped."""
        kept, ids = word_buckets(texts, self.buckets)
        return kept, self.bucket_logits(ids)

    def track(self, num_frames: int, words: Sequence[Sequence[tuple[float, float, str]]] | None) -> np.ndarray:
        """``[num_frames, 2]`` cue for per-speaker ``(start, end, text)`` words on the activity's
        clock; all 0 when ``words`` is None (no transcript: the model falls back to timing)."""
        if words is None:
            return np.zeros((num_frames, 2), dtype=np.float32)
        starts, logits = [], []
        for spoken in words:
            spoken = sorted(spoken, key=lambda w: (w[0], w[1]))
            kept, logit = self.word_logits([w[2] for w in spoken])
            starts.append(np.asarray([spoken[i][0] for i in kept], dtype=np.float64))
            logits.append(logit)
        return word_cue_track(num_frames, starts, logits, self.frame_hz)


class CausalConvBlock(nn.Module):
    """Temporal convolution over frames, left-padded so frame t only sees frames <= t."""

    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.pad = kernel_size - 1
        self.conv = nn.Conv1d(channels, channels, kernel_size)
        self.norm = nn.LayerNorm(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [N, T, C]
        y = self.conv(F.pad(x.transpose(1, 2), (self.pad, 0))).transpose(1, 2)
        return x + F.gelu(self.norm(y))


class ChannelEncoder(nn.Module):
    """Per-channel encoder (shared by both speakers): waveform or voice activity -> frame features."""

    def __init__(self, config: FutureActivityPredictorConfig):
        super().__init__()
        self.input_type = config.input_type
        if self.input_type == "audio":
            self.front_end = CausalLogMel(config)
            self.proj = nn.Linear(config.num_mel_bins, config.hidden_size)
        else:
            self.front_end = None
            self.proj = nn.Linear(VAD_FEATURE_WIDTHS[config.vad_features], config.hidden_size)
        self.convs = nn.ModuleList(CausalConvBlock(config.hidden_size, config.conv_kernel_size) for _ in range(config.conv_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """audio `[N, samples]`, voice activity `[N, frames]` or timing features `[N, frames, F]` -> `[N, frames, hidden]`."""
        if self.front_end is not None:
            feats = self.front_end(x)
        else:
            feats = x.float() if x.dim() == 3 else x.unsqueeze(-1).float()
        h = self.proj(feats)
        for conv in self.convs:
            h = conv(h)
        return h


def alibi_slopes(num_heads: int) -> torch.Tensor:
    """ALiBi head slopes (Press et al., 2022): relative positions, so any window start gives the same result."""
    start = 2 ** (-8 / num_heads)
    return torch.tensor([start ** (i + 1) for i in range(num_heads)], dtype=torch.float32)


def causal_alibi_bias(num_frames: int, slopes: torch.Tensor, max_span: int, device) -> torch.Tensor:
    """`[1, heads, T, T]` additive bias: -slope * distance to the past, -inf on the future and beyond
    the span. Four dimensions, because only a 4-D (or 2-D) mask lets PyTorch's fused CPU attention
    kernel run; a 3-D one falls back to the unfused path, about 5x slower at T = 1500."""
    pos = torch.arange(num_frames, device=device, dtype=torch.float32)
    dist = pos[:, None] - pos[None, :]  # i - j
    # An infinite distance is a -inf bias; one [T, T] mask instead of one per head halves the cost.
    dist = dist.masked_fill((dist < 0) | (dist >= max_span), float("inf"))
    return (-slopes.to(device)[:, None, None] * dist)[None]


class Attention(nn.Module):
    def __init__(self, config: FutureActivityPredictorConfig):
        super().__init__()
        self.heads = config.num_attention_heads
        self.q = nn.Linear(config.hidden_size, config.hidden_size)
        self.kv = nn.Linear(config.hidden_size, 2 * config.hidden_size)
        self.out = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = config.dropout

    def forward(self, x: torch.Tensor, context: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        n, t, c = x.shape
        q = self.q(x).view(n, t, self.heads, -1).transpose(1, 2)
        k, v = self.kv(context).view(n, t, 2, self.heads, -1).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype), dropout_p=self.dropout if self.training else 0.0)
        return self.out(y.transpose(1, 2).reshape(n, t, c))


class FeedForward(nn.Sequential):
    def __init__(self, config: FutureActivityPredictorConfig):
        super().__init__(
            nn.Linear(config.hidden_size, config.intermediate_size),
            nn.GELU(),
            nn.Dropout(config.dropout),
            nn.Linear(config.intermediate_size, config.hidden_size),
        )


class ChannelLayer(nn.Module):
    """Pre-norm causal self-attention layer applied to one speaker's stream."""

    def __init__(self, config: FutureActivityPredictorConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(config.hidden_size)
        self.attn = Attention(config)
        self.norm2 = nn.LayerNorm(config.hidden_size)
        self.ffn = FeedForward(config)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.drop(self.attn(h, h, bias))
        return x + self.drop(self.ffn(self.norm2(x)))


class CrossSpeakerLayer(nn.Module):
    """Self-attention on a speaker's own stream, then causal attention to the other speaker's.

    The same weights serve both directions (A attends to B, B attends to A), as in VAP.
    """

    def __init__(self, config: FutureActivityPredictorConfig):
        super().__init__()
        self.own = ChannelLayer(config)
        self.norm_q = nn.LayerNorm(config.hidden_size)
        self.norm_kv = nn.LayerNorm(config.hidden_size)
        self.cross = Attention(config)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a, b = self.own(a, bias), self.own(b, bias)
        a2 = a + self.drop(self.cross(self.norm_q(a), self.norm_kv(b), bias))
        b2 = b + self.drop(self.cross(self.norm_q(b), self.norm_kv(a), bias))
        return a2, b2


class FutureActivityPredictorPreTrainedModel(PreTrainedModel):
    config_class = FutureActivityPredictorConfig
    config: FutureActivityPredictorConfig
    base_model_prefix = "future_activity_predictor"
    main_input_name = "input_values"
    _no_split_modules = ["CrossSpeakerLayer", "ChannelLayer"]

    @torch.no_grad()
    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Conv1d)):
            nn.init.normal_(module.weight, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)


class FutureActivityPredictorModel(FutureActivityPredictorPreTrainedModel):
    r"""
    Predicts the VAP future-activity distribution at every 20 ms frame of a two-speaker conversation.

    Example:

    ```python
    >>> import torch
    >>> from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
    >>> from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel
    >>> model = FutureActivityPredictorModel(FutureActivityPredictorConfig(hidden_size=32, num_attention_heads=2)).eval()
    >>> out = model(torch.zeros(1, 2, 16000))  # one second of stereo silence
    >>> tuple(out.probs.shape)
    (1, 50, 256)
    ```
    """

    def __init__(self, config: FutureActivityPredictorConfig):
        super().__init__(config)
        self.encoder = ChannelEncoder(config)
        self.channel_layers = nn.ModuleList(ChannelLayer(config) for _ in range(config.num_channel_layers))
        self.cross_layers = nn.ModuleList(CrossSpeakerLayer(config) for _ in range(config.num_cross_layers))
        self.norm = nn.LayerNorm(2 * config.hidden_size)
        self.future_head = nn.Sequential(
            nn.Linear(2 * config.hidden_size, config.hidden_size), nn.GELU(), nn.Linear(config.hidden_size, config.num_classes)
        )
        self.va_head = nn.Linear(config.hidden_size, 1)
        self.word_cue = WordTurnCue(config) if config.input_type == "vad" and "+words" in config.vad_features else None
        # The longest attention bias built so far, with its device: the bias depends only on i - j,
        # so any shorter window's is its top-left corner (a view: the fused attention takes it as
        # it is, results bit-identical). Building the [heads, T, T] bias anew cost more than the
        # attention itself (a 60 s window: 0.15 s against 0.03 s). A plain attribute, not a
        # buffer: a non-persistent buffer is not restored by from_pretrained.
        self._bias_cache: tuple[str, torch.Tensor] | None = None
        self.post_init()

    @property
    def lookahead_frames(self) -> int:
        """Frames of each speaker's future activity the model reads (``timing+ends``, ``timing+words+ends``; else 0)."""
        if self.config.input_type == "vad" and self.config.vad_features.endswith("+ends"):
            return max(1, int(round(self.config.end_lookahead_s * self.config.frame_hz)))
        return 0

    @property
    def reads_words(self) -> bool:
        """True when the model reads a turn-completion cue from words beside the activity."""
        return self.word_cue is not None

    def vad_inputs(self, voice_activity: np.ndarray, words: Sequence[Sequence[tuple[float, float, str]]] | None = None) -> np.ndarray:
        """What the voice-activity model reads for ``[T, 2]`` activity: the activity itself, and for a
        model that reads words their cue track (``[T, 4]``; all-zero cues when ``words`` is None)."""
        va = np.asarray(voice_activity, dtype=np.float32)
        if self.word_cue is None:
            return va
        return np.concatenate([va, self.word_cue.track(va.shape[0], words)], axis=1)

    def attention_bias(self, frames: int, device: torch.device) -> torch.Tensor:
        """The causal ALiBi bias `[1, heads, frames, frames]` of every attention layer (a view of the longest one built)."""
        if self._bias_cache is None or self._bias_cache[0] != str(device) or self._bias_cache[1].shape[-1] < frames:
            slopes = alibi_slopes(self.config.num_attention_heads)
            self._bias_cache = (str(device), causal_alibi_bias(frames, slopes, self.config.max_context_frames, device))
        return self._bias_cache[1][:, :, :frames, :frames]

    def _split_channels(self, input_values: torch.Tensor | None, voice_activity: torch.Tensor | None) -> torch.Tensor:
        """Validate the input and return it as `[batch, 2, ...]`."""
        if self.config.input_type == "audio":
            if input_values is None:
                raise ValueError("this model reads audio: pass input_values of shape [batch, 2, samples]")
            x = input_values
            if x.dim() == 2:
                x = x.unsqueeze(0)
        else:
            if voice_activity is None:
                raise ValueError("this is the voice-activity-only model: pass voice_activity of shape [batch, frames, 2]")
            x = voice_activity.transpose(1, 2) if voice_activity.dim() == 3 else voice_activity.T.unsqueeze(0)
        if x.dim() != 3 or x.shape[1] != 2:
            raise ValueError(f"expected two channels (one per speaker), got input of shape {tuple(x.shape)}")
        return x

    def forward(
        self,
        input_values: torch.Tensor | None = None,
        voice_activity: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        va_labels: torch.Tensor | None = None,
        frame_weights: torch.Tensor | None = None,
        **kwargs,
    ) -> FutureActivityPredictorOutput:
        r"""
        Args:
            input_values: `[batch, 2, samples]` stereo waveform at `config.sample_rate` (audio model).
            voice_activity: `[batch, frames, 2]` past voice activity (0/1) of both speakers (vad model).
            labels: `[batch, frames]` VAP class of the 2 s after each frame, `-100` where unknown.
            va_labels: `[batch, frames, 2]` voice activity of each frame (targets of the auxiliary head).
            frame_weights: `[batch, frames]` per-frame cross-entropy weights (alpha on boundary-unit frames).
        """
        cues = None
        if self.word_cue is not None:
            if voice_activity is None or voice_activity.shape[-1] != 4:
                got = None if voice_activity is None else tuple(voice_activity.shape)
                raise ValueError(f"this model reads activity and word cues: pass voice_activity of shape [batch, frames, 4] (model.vad_inputs), got {got}")
            voice_activity, cues = voice_activity[..., :2], voice_activity[..., 2:]
        x = self._split_channels(input_values, voice_activity)
        batch = x.shape[0]
        if self.config.input_type == "vad" and self.config.vad_features.startswith("timing"):
            feats = [timing_features(x, self.config.frame_hz)]  # each channel sees its own and its partner's timing
            if cues is not None:
                feats.append(own_and_partner(cues.reshape(batch, -1, 2).transpose(1, 2).to(torch.float32)))
            if self.lookahead_frames:
                ends = speech_end_lookahead(x.reshape(batch * 2, -1), self.lookahead_frames)
                feats.append(own_and_partner(ends.view(batch, 2, -1)))
            h = self.encoder(torch.cat(feats, dim=-1))
        else:
            h = self.encoder(x.reshape(batch * 2, x.shape[-1]))  # shared weights for both channels
        frames = h.shape[1]
        bias = self.attention_bias(frames, h.device)
        for layer in self.channel_layers:
            h = layer(h, bias)
        h = h.view(batch, 2, frames, -1)
        a, b = h[:, 0], h[:, 1]
        for layer in self.cross_layers:
            a, b = layer(a, b, bias)
        logits = self.future_head(self.norm(torch.cat([a, b], dim=-1)))
        va_logits = torch.cat([self.va_head(a), self.va_head(b)], dim=-1)

        loss = None
        if labels is not None:
            loss = self.loss(logits, labels, frame_weights)
            if va_labels is not None and self.config.va_loss_weight > 0:
                va_labels = va_labels[:, :frames].to(va_logits.dtype)
                loss = loss + self.config.va_loss_weight * F.binary_cross_entropy_with_logits(va_logits[:, : va_labels.shape[1]], va_labels)
        frame_times = (torch.arange(frames, device=logits.device, dtype=torch.float32) + 1) / self.config.frame_hz
        return FutureActivityPredictorOutput(
            loss=loss, logits=logits, probs=logits.softmax(-1), va_logits=va_logits, frame_times=frame_times
        )

    @staticmethod
    def loss(logits: torch.Tensor, labels: torch.Tensor, frame_weights: torch.Tensor | None = None) -> torch.Tensor:
        """Weighted frame cross-entropy: sum_t w_t CE_t / sum_t w_t over frames with a label (TurnNat Eq. 5-6)."""
        frames = min(logits.shape[1], labels.shape[1])
        logits, labels = logits[:, :frames], labels[:, :frames]
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX, reduction="none")
        valid = (labels.reshape(-1) != IGNORE_INDEX).to(ce.dtype)
        weights = valid if frame_weights is None else valid * frame_weights[:, :frames].reshape(-1).to(ce.dtype)
        return (ce * weights).sum() / weights.sum().clamp(min=1e-8)

    @torch.no_grad()
    def predict_long(self, inputs: torch.Tensor, window_s: float | None = None, context_s: float | None = None) -> torch.Tensor:
        """Future-activity probabilities `[frames, 256]` for one long conversation, in overlapping windows.

        ``inputs`` is `[2, samples]` audio (or `[frames, 2]` voice activity for the vad model).
        Windows of ``window_s`` advance by ``window_s - context_s``; every frame is taken from the
        window in which it has at least ``context_s`` of history (or all history there is), so
        memory stays flat however long the audio is. Both default to the configuration's
        ``stream_window_s`` and ``stream_context_s``.
        """
        window_s = self.config.stream_window_s if window_s is None else window_s
        context_s = self.config.stream_context_s if context_s is None else context_s
        if not 0 < context_s < window_s:
            raise ValueError(f"need 0 < context_s < window_s, got {context_s}, {window_s}")
        hz, hop = self.config.frame_hz, self.config.hop_length
        is_audio = self.config.input_type == "audio"
        total = inputs.shape[-1] // hop if is_audio else inputs.shape[0]
        win, ctx = int(round(window_s * hz)), int(round(context_s * hz))
        # Filled in place: keeping slices of each window's output (views) would hold every window alive.
        out = torch.empty(total, self.config.num_classes, device=inputs.device)
        start_out = 0
        while start_out < total:
            win_start = max(0, start_out - ctx)
            win_end = min(total, win_start + win)
            if is_audio:
                probs = self(input_values=inputs[:, win_start * hop : win_end * hop].unsqueeze(0)).probs[0]
            else:
                # a look-ahead model reads past the window's end; those frames' outputs are not kept
                read_end = min(total, win_end + self.lookahead_frames)
                probs = self(voice_activity=inputs[win_start:read_end].unsqueeze(0)).probs[0, : win_end - win_start]
            out[start_out:win_end] = probs[start_out - win_start :]
            start_out = win_end
        return out


__all__ = ["FutureActivityPredictorModel", "FutureActivityPredictorOutput", "FutureActivityPredictorPreTrainedModel"]
