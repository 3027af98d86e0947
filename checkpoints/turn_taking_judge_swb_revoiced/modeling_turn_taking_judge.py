"""TurnTakingJudge: the supervised turn-taking judge of Talking Turns (§4.1, A.3).

Mono 16 kHz audio -> Whisper log-mel -> Whisper encoder -> learned softmax-weighted sum of
all hidden states -> linear head -> 5 logits (NA, BC, I, T, C). After every 40 ms chunk t the
judge predicts the label of chunk t+1 from the audio up to the end of chunk t.

Two context modes (``config.context_mode``):

* ``window`` (the paper): each prediction is the last encoder frame of its own window that ends
  at the end of chunk t (left-padded with silence at the start of a conversation); windows are
  batched. The front end is exactly Whisper's (centred STFT, global dynamic-range clamp).
* ``causal``: one pass scores every chunk of a window. The STFT frames end where they are
  stamped (no centring, no right padding), the two convolutions are padded on the left only,
  the dynamic-range clamp uses the running maximum, and self-attention is causal, so encoder
  frame j depends on audio before 20 ms * (j + 1) only. Long audio is scored in overlapping
  windows (bounded context), and :class:`TurnTakingJudgeStream` does the same on audio as it
  arrives.

Self-contained: imports only torch, transformers and its own configuration, so the pair can be
pushed to a Hub repo and loaded with ``trust_remote_code=True``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from transformers import PreTrainedModel, WhisperConfig
from transformers import initialization as init
from transformers.audio_utils import mel_filter_bank
from transformers.modeling_outputs import ModelOutput
from transformers.models.whisper.modeling_whisper import WhisperEncoderLayer, sinusoids

from .configuration_turn_taking_judge import (
    PAUSE_DECISION_FEATURES,
    CallTempoConfig,
    InterruptionRule,
    PauseRule,
    TurnCompletionCueConfig,
    TurnTakingJudgeConfig,
)


N_FFT = 400
HOP_LENGTH = 160
MIN_SILENCE_S = 0.04  # the log silence length of the pause decision is floored at one chunk
ENCODER_FRAME_SAMPLES = 2 * HOP_LENGTH  # conv2 has stride 2: one encoder frame per 20 ms


@dataclass
class TurnTakingJudgeOutput(ModelOutput):
    """Output of [`TurnTakingJudge`].

    Args:
        loss: cross-entropy, when ``labels`` were given.
        logits: ``[batch, n_predictions, num_labels]``. Window mode: one prediction per window
            (its last frame). Causal mode: one per chunk of the input; prediction t is made at
            the end of chunk t and is about chunk t + 1.
        probabilities: softmax of ``logits`` + ``config.logit_adjustment`` (the natural-prior
            correction of a class-balanced training, when the checkpoint has one).
        chunk_times: ``[n_predictions]`` seconds from the input start to the end of the
            observed audio, which is also the start of the chunk being predicted.
        hidden_states: the weighted-sum features at the prediction frames, when asked for.
    """

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    probabilities: torch.Tensor | None = None
    chunk_times: torch.Tensor | None = None
    hidden_states: torch.Tensor | None = None


@dataclass
class TurnTakingJudgeScores:
    """Judge probabilities for every chunk of a conversation.

    Attributes:
        probabilities: ``[n_chunks, num_labels]``; row t is the distribution over the label of
            chunk t + 1, predicted from the audio up to the end of chunk t (the layout the
            agreement instances of ``turneval.dataset_scripts.agreement_instances`` read).
        chunk_times: ``[n_chunks]`` seconds at which each prediction is made: the end of chunk
            t, which is the start of the predicted chunk t + 1.
        label_names: the column names (NA, BC, I, T, C).
        context_mode: ``"window"`` or ``"causal"``.
    """

    probabilities: np.ndarray
    chunk_times: np.ndarray
    label_names: list[str]
    context_mode: str

    def column(self, label: str) -> np.ndarray:
        """Probabilities of one class, by name."""
        return self.probabilities[:, self.label_names.index(label)]


class TurnTakingJudgePreTrainedModel(PreTrainedModel):
    config_class = TurnTakingJudgeConfig
    config: TurnTakingJudgeConfig
    base_model_prefix = "judge"
    main_input_name = "input_values"
    supports_gradient_checkpointing = True
    _no_split_modules = ["WhisperEncoderLayer"]
    _supports_sdpa = True

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        super()._init_weights(module)
        if isinstance(module, JudgeWhisperEncoder):
            init.copy_(module.embed_positions.weight, sinusoids(*module.embed_positions.weight.shape))
        elif isinstance(module, TurnTakingJudge):
            init.zeros_(module.layer_weights)


class JudgeWhisperEncoder(nn.Module):
    """The parts of `transformers.WhisperEncoder`, with its parameter names, run one by one.

    `WhisperEncoder.forward` insists on 3000 mel frames; the judge runs windows of any length
    and, in causal mode, needs left-only convolution padding and a causal attention mask.
    A Whisper encoder state dict loads into this module unchanged.
    """

    def __init__(self, config: WhisperConfig) -> None:
        super().__init__()
        d_model = config.d_model
        self.conv1 = nn.Conv1d(config.num_mel_bins, d_model, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(d_model, d_model, kernel_size=3, stride=2, padding=1)
        self.embed_positions = nn.Embedding(config.max_source_positions, d_model)
        self.embed_positions.requires_grad_(False)
        self.layers = nn.ModuleList([WhisperEncoderLayer(config) for _ in range(config.encoder_layers)])
        self.layer_norm = nn.LayerNorm(d_model)
        self.gradient_checkpointing = False

    def forward(self, features: torch.Tensor, causal: bool) -> list[torch.Tensor]:
        """Mel features ``[B, n_mels, M]`` -> hidden states: the embeddings, then every layer.

        The last entry is layer-normed (Whisper's ``last_hidden_state``).
        """
        hidden, mask = self.embed(features, causal)
        states = [hidden]
        for layer in self.layers:
            hidden = layer(hidden, mask)
            states.append(hidden)
        states[-1] = self.layer_norm(hidden)
        return states

    def embed(self, features: torch.Tensor, causal: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Mel features -> the first layer's input ``[B, T, d]`` and its attention mask (causal
        mode) or None."""
        if causal:
            # Left padding only: conv1 output k sees mel frames k-2..k; conv2 output j sees
            # conv1 outputs 2j-1..2j+1, i.e. audio before 320 * (j + 1) samples.
            x = F.gelu(F.conv1d(F.pad(features, (2, 0)), self.conv1.weight, self.conv1.bias))
            x = F.gelu(F.conv1d(F.pad(x, (1, 0)), self.conv2.weight, self.conv2.bias, stride=2))
        else:
            x = F.gelu(self.conv1(features))
            x = F.gelu(self.conv2(x))
        x = x.transpose(1, 2)
        n_frames = x.shape[1]
        if n_frames > self.embed_positions.num_embeddings:
            raise ValueError(
                f"input of {n_frames} encoder frames exceeds the encoder's "
                f"{self.embed_positions.num_embeddings} positions; shorten the window"
            )
        hidden = x + self.embed_positions.weight[:n_frames].unsqueeze(0)
        mask = None
        if causal:
            future = torch.ones(n_frames, n_frames, dtype=torch.bool, device=hidden.device).triu(1)
            mask = torch.zeros(n_frames, n_frames, dtype=hidden.dtype, device=hidden.device)
            mask = mask.masked_fill(future, torch.finfo(hidden.dtype).min)[None, None]
        return hidden, mask


class TurnEndHead(nn.Module):
    """Does the turn end at this pause? The judge's head for metrics (a) and (d).

    The chunk head predicts the next 40 ms, and a pause's next 40 ms are silence whoever speaks
    next, so its ``p_T - p_C`` hardly ranks shifts above holds (ROC-AUC 0.505 on the held-out
    re-voiced test split). A linear read of the *bidirectional* encoder over the pausing
    speaker's own channel does (0.737), and more with the conversation's timing at the IPU end
    beside it: this head is that read. It shares the encoder's lower ``shared_layers`` layers
    (frozen, pretrained: the same weights as the judge's) and keeps its own copies of the
    pretrained upper layers and final layer norm, because the judge's upper layers were
    fine-tuned for causal attention. Its classifier reads ``3 d_model`` pooled states, then the
    ``timing_features`` (as many numbers as the config names) that the caller computes.
    """

    def __init__(self, whisper_config: WhisperConfig, head: dict[str, Any]) -> None:
        super().__init__()
        self.shared_layers = int(head["shared_layers"])
        self.pool_frames = tuple(int(f) for f in head["pool_frames"])
        d_model = whisper_config.d_model
        self.layers = nn.ModuleList(
            [WhisperEncoderLayer(whisper_config) for _ in range(whisper_config.encoder_layers - self.shared_layers)]
        )
        self.layer_norm = nn.LayerNorm(d_model)
        self.n_timing = len(head.get("timing_features") or [])
        self.classifier = nn.Linear(3 * d_model + self.n_timing, 1)

    def pooled(self, encoder: JudgeWhisperEncoder, features: torch.Tensor) -> torch.Tensor:
        """``[B, 3 d]``: :func:`pooled_pause_views` through the shared layers and this head's own."""
        return pooled_pause_views(encoder, self.layers, self.layer_norm, features, self.shared_layers, self.pool_frames)

    def forward(self, encoder: JudgeWhisperEncoder, features: torch.Tensor, timing: torch.Tensor | None = None) -> torch.Tensor:
        """Logits ``[B]`` of "the other party speaks next"; ``timing`` ``[B, n_timing]`` when the
        head reads timing features."""
        return self.classify(self.pooled(encoder, features), timing)

    def classify(self, pooled: torch.Tensor, timing: torch.Tensor | None = None) -> torch.Tensor:
        """Logits ``[B]`` from the pooled views ``[B, 3 d]`` (and the timing features)."""
        if self.n_timing:
            if timing is None or tuple(timing.shape) != (pooled.shape[0], self.n_timing):
                got = None if timing is None else tuple(timing.shape)
                raise ValueError(f"this turn-end head reads {self.n_timing} timing features per window; got timing of shape {got}")
            pooled = torch.cat([pooled, timing.to(pooled.dtype)], dim=-1)
        return self.classifier(pooled)[:, 0]


def pooled_pause_views(
    encoder: JudgeWhisperEncoder,
    upper_layers: nn.ModuleList,
    layer_norm: nn.LayerNorm,
    features: torch.Tensor,
    shared_layers: int,
    pool_frames: tuple[int, int] | list[int],
) -> torch.Tensor:
    """``[B, 3 d]`` pooled bidirectional states of pause windows: ``encoder``'s first
    ``shared_layers`` layers, then ``upper_layers`` and ``layer_norm``; the last layer over the
    last ``pool_frames[0]`` and ``pool_frames[1]`` frames, the shared layers' output over the last
    ``pool_frames[0]``. The turn-end head and the linear fit that makes it (training/fit_turn_end_head.py) both read these views."""
    hidden, lower = pause_states(encoder, upper_layers, features, shared_layers, int(pool_frames[0]))
    return views_from_states(upper_layers[-1], layer_norm, hidden, lower, pool_frames)


def pause_states(
    encoder: JudgeWhisperEncoder, upper_layers: nn.ModuleList, features: torch.Tensor, shared_layers: int, wide: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The first part of :func:`pooled_pause_views`: the states ``[B, frames, d]`` that enter the
    last of ``upper_layers``, and the shared layers' output pooled over the last ``wide`` frames
    ``[B, d]``. (Split off so a trainer can cache what stays frozen.)"""
    hidden, _ = encoder.embed(features, causal=False)
    for layer in encoder.layers[:shared_layers]:
        hidden = layer(hidden, None)
    lower = hidden[:, -wide:].mean(1)
    for layer in upper_layers[:-1]:
        hidden = layer(hidden, None)
    return hidden, lower


def views_from_states(
    last_layer: WhisperEncoderLayer, layer_norm: nn.LayerNorm, hidden: torch.Tensor, lower: torch.Tensor, pool_frames: tuple[int, int] | list[int]
) -> torch.Tensor:
    """The rest of :func:`pooled_pause_views`, from :func:`pause_states`: ``[B, 3 d]``."""
    wide, narrow = (int(f) for f in pool_frames)
    # Only the last `wide` frames of the last layer are pooled: its queries need computing
    # there only (keys and values over the whole window), which saves a fifth of the pass.
    last = layer_norm(tail_layer(last_layer, hidden, wide))
    return torch.cat([last.mean(1), last[:, -narrow:].mean(1), lower], dim=-1)


def tail_layer(layer: WhisperEncoderLayer, hidden: torch.Tensor, n_frames: int) -> torch.Tensor:
    """``layer(hidden, None)[:, -n_frames:]`` without computing the other frames' outputs: the
    bidirectional attention of the last ``n_frames`` queries over every frame, then the
    feed-forward block on those frames only."""
    residual = hidden[:, -n_frames:]
    normed = layer.self_attn_layer_norm(hidden)
    attended, _ = layer.self_attn(hidden_states=normed[:, -n_frames:], key_value_states=normed)
    hidden = residual + attended
    feed = layer.fc2(layer.activation_fn(layer.fc1(layer.final_layer_norm(hidden))))
    return hidden + feed


def pause_window(channel: np.ndarray, horizon_s: float, window_s: float, sample_rate: int = 16000, chunk_samples: int = 640) -> np.ndarray:
    """The ``window_s`` seconds of one speaker's channel before ``horizon_s`` (silence before the
    start), the end rounded down to the 40 ms grid so that no later sample is read."""
    end = int(round(horizon_s * sample_rate))
    end -= end % chunk_samples
    start = end - int(round(window_s * sample_rate))
    piece = np.asarray(channel[max(0, start) : max(0, end)], dtype=np.float32)
    if start < 0:
        piece = np.concatenate([np.zeros(min(-start, end - start), np.float32), piece])
    return piece


# ---------------------------------------------------------------------------------------
# The turn-completion cue: smart-turn v3.2, which heard real human turn ends
# ---------------------------------------------------------------------------------------
class Int8Linear(nn.Module):
    """A linear layer whose weight is kept as smart-turn v3.2 ships it: int8, one scale per
    output row (symmetric, weight-only); it is dequantized for each call."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.register_buffer("weight_int8", torch.zeros(out_features, in_features, dtype=torch.int8))
        self.register_buffer("weight_scale", torch.ones(out_features))
        self.bias = nn.Parameter(torch.zeros(out_features)) if bias else None

    def weight(self, dtype: torch.dtype) -> torch.Tensor:
        return self.weight_int8.to(dtype) * self.weight_scale.to(dtype)[:, None]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight(x.dtype), self.bias)


class Int8Conv1d(nn.Module):
    """``nn.Conv1d`` (kernel 3, padding 1) with an int8 weight and one scale per output channel."""

    def __init__(self, in_channels: int, out_channels: int, stride: int) -> None:
        super().__init__()
        self.stride = stride
        self.register_buffer("weight_int8", torch.zeros(out_channels, in_channels, 3, dtype=torch.int8))
        self.register_buffer("weight_scale", torch.ones(out_channels))
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight_int8.to(x.dtype) * self.weight_scale.to(x.dtype)[:, None, None]
        return F.conv1d(x, weight, self.bias, stride=self.stride, padding=1)


class CueEncoderLayer(nn.Module):
    """A pre-norm Whisper encoder layer (bidirectional) with int8 projections."""

    def __init__(self, d_model: int, heads: int, ffn_dim: int) -> None:
        super().__init__()
        self.heads = heads
        self.self_attn_layer_norm = nn.LayerNorm(d_model)
        self.q_proj, self.k_proj = Int8Linear(d_model, d_model), Int8Linear(d_model, d_model, bias=False)
        self.v_proj, self.out_proj = Int8Linear(d_model, d_model), Int8Linear(d_model, d_model)
        self.final_layer_norm = nn.LayerNorm(d_model)
        self.fc1, self.fc2 = Int8Linear(d_model, ffn_dim), Int8Linear(ffn_dim, d_model)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        b, n, d = hidden.shape
        x = self.self_attn_layer_norm(hidden)
        q, k, v = (proj(x).view(b, n, self.heads, d // self.heads).transpose(1, 2) for proj in (self.q_proj, self.k_proj, self.v_proj))
        attended = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
        hidden = hidden + self.out_proj(attended)
        return hidden + self.fc2(F.gelu(self.fc1(self.final_layer_norm(hidden))))


class TurnCompletionCue(nn.Module):
    """smart-turn v3.2 in PyTorch: log-mel of 8 s -> Whisper-tiny encoder (400 positions) ->
    attention pooling -> MLP -> the logit of "the turn is complete". Its weights come from
    pipecat-ai's ONNX file (``training/convert_smart_turn.py``); it was trained by its authors on
    real human speech, which the re-voiced training audio of the judge lacks at turn ends."""

    def __init__(self, cue: TurnCompletionCueConfig) -> None:
        super().__init__()
        d, n_frames = cue.d_model, int(round(cue.window_s * 50))
        self.conv1 = Int8Conv1d(cue.num_mel_bins, d, stride=1)
        self.conv2 = Int8Conv1d(d, d, stride=2)
        self.embed_positions = nn.Parameter(torch.zeros(n_frames, d), requires_grad=False)
        self.layers = nn.ModuleList([CueEncoderLayer(d, cue.attention_heads, cue.ffn_dim) for _ in range(cue.encoder_layers)])
        self.layer_norm = nn.LayerNorm(d)
        pool = cue.pool_dim
        self.pool_attention = nn.ModuleList([Int8Linear(d, pool), Int8Linear(pool, 1)])
        widths = [d, *cue.classifier_dims]
        self.classifier_norm = nn.LayerNorm(widths[1])
        self.classifier = nn.ModuleList([Int8Linear(a, b) for a, b in zip(widths, widths[1:] + [1])])

    def encode(self, features: torch.Tensor) -> torch.Tensor:
        """The encoder's last states ``[B, positions, d]`` from log-mel features ``[B, n_mels, 2 * positions]``."""
        hidden = F.gelu(self.conv2(F.gelu(self.conv1(features)))).transpose(1, 2)
        hidden = hidden + self.embed_positions.to(hidden.dtype)
        for layer in self.layers:
            hidden = layer(hidden)
        return self.layer_norm(hidden)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """Logits ``[B]`` from log-mel features ``[B, n_mels, 2 * positions]``."""
        hidden = self.encode(features)
        weights = torch.softmax(self.pool_attention[1](torch.tanh(self.pool_attention[0](hidden))), dim=1)
        x = (hidden * weights).sum(1)
        x = F.gelu(self.classifier_norm(self.classifier[0](x)))
        for i, layer in enumerate(self.classifier[1:]):
            x = layer(x) if i == len(self.classifier) - 2 else F.gelu(layer(x))
        return x[:, 0]


def log_silence(silence_elapsed_s: np.ndarray | float) -> np.ndarray:
    """The pause decision's ``log_silence_s`` feature: the log of the seconds nobody has spoken at
    the decision, floored at one chunk."""
    return np.log(np.maximum(np.asarray(silence_elapsed_s, dtype=np.float64), MIN_SILENCE_S))


def log_silence_vs_call(silence_elapsed_s: np.ndarray, silence_start_s: np.ndarray, call_silences: np.ndarray,
                        tempo: CallTempoConfig) -> np.ndarray:
    """The pause decision's ``log_silence_vs_call`` feature: each pause's :func:`log_silence`
    minus the call's mean log silence before that pause's silence began
    (:meth:`CallTempoConfig.mean_log_silence` over the rows of ``call_silences``, ``[n, 2]``
    start and end in seconds, at least ``tempo.min_silence_s`` long, that ended by then).

    >>> silences = np.array([[1.0, 3.0], [4.0, 6.0], [7.0, 7.1]])  # two 2 s silences; 0.1 s is too short to count
    >>> log_silence_vs_call(np.array([2.0, 2.0]), np.array([0.5, 8.0]), silences, CallTempoConfig()).round(3).tolist()
    [0.693, 0.139]
    """
    silences = np.asarray(call_silences, dtype=np.float64).reshape(-1, 2)
    counted = silences[silences[:, 1] - silences[:, 0] >= tempo.min_silence_s - 1e-9]
    lengths, ends = counted[:, 1] - counted[:, 0], counted[:, 1]
    means = np.array([tempo.mean_log_silence(lengths[ends <= start + 1e-6]) for start in np.asarray(silence_start_s, dtype=np.float64)])
    return log_silence(silence_elapsed_s) - means.reshape(np.shape(silence_elapsed_s))


def cue_segment(audio: np.ndarray, window_s: float, sample_rate: int = 16000) -> np.ndarray:
    """What pipecat hands smart-turn: the audio as int16 samples (pipecat buffers int16), the
    last ``window_s`` seconds, zero-padded at the start."""
    pcm = np.clip(np.round(np.asarray(audio, dtype=np.float64) * 32768.0), -32768, 32767)
    piece = (pcm / 32768.0).astype(np.float32)
    n = int(round(window_s * sample_rate))
    return piece[-n:] if piece.size >= n else np.pad(piece, (n - piece.size, 0))


class TurnTakingJudge(TurnTakingJudgePreTrainedModel):
    """Whisper encoder + weighted layer sum + linear head over NA, BC, I, T, C."""

    def __init__(self, config: TurnTakingJudgeConfig) -> None:
        super().__init__(config)
        self.whisper_config = WhisperConfig(**config.encoder_config)
        self.whisper_config._attn_implementation = "sdpa"
        self.encoder = JudgeWhisperEncoder(self.whisper_config)
        n_states = self.whisper_config.encoder_layers + 1
        self.layer_weights = nn.Parameter(torch.zeros(n_states))
        self.dropout = nn.Dropout(config.classifier_dropout)
        self.classifier = nn.Linear(self.whisper_config.d_model, len(config.label_names))
        head = config.turn_end_head
        self.turn_end_head = TurnEndHead(self.whisper_config, head) if head else None
        cue = config.turn_completion_cue
        self.turn_completion_cue = TurnCompletionCue(cue) if cue is not None else None
        # Fixed analysis constants are plain attributes, not buffers: they are not weights,
        # and from_pretrained's meta-device initialisation would leave buffers empty.
        self._front_end_cache: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}
        self.post_init()

    # ------------------------------------------------------------------ backbone control
    def freeze_backbone(self, frozen: bool = True) -> None:
        """Freeze (the paper) or unfreeze the Whisper encoder; head and layer weights stay trainable."""
        for name, param in self.encoder.named_parameters():
            param.requires_grad_(not frozen and not name.startswith("embed_positions"))

    # ------------------------------------------------------------------ front end
    def _front_end_constants(self, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """Whisper's Slaney mel filters ``[n_mels, 201]`` and periodic Hann window, per device."""
        if device not in self._front_end_cache:
            mel = mel_filter_bank(
                num_frequency_bins=1 + N_FFT // 2,
                num_mel_filters=self.whisper_config.num_mel_bins,
                min_frequency=0.0,
                max_frequency=8000.0,
                sampling_rate=self.config.sample_rate,
                norm="slaney",
                mel_scale="slaney",
            )
            filters = torch.from_numpy(np.asarray(mel, dtype=np.float32)).T.contiguous().to(device)
            self._front_end_cache[device] = (filters, torch.hann_window(N_FFT, device=device))
        return self._front_end_cache[device]

    def log_mel(self, audio: torch.Tensor, causal: bool | None = None) -> torch.Tensor:
        """Whisper log-mel features ``[B, n_mels, n_samples // 160]`` of audio ``[B, n_samples]``.

        Non-causal: exactly `WhisperFeatureExtractor` (centred STFT with reflect padding, last
        frame dropped, clamp at the window max - 8). Causal: frame k covers the 400 samples that
        end at sample 160 (k + 1) (silence before the start), and the clamp uses the running
        maximum, so no frame depends on later audio.
        """
        causal = self.config.context_mode == "causal" if causal is None else causal
        audio = audio.float()
        mel_filters, window = self._front_end_constants(audio.device)
        if causal:
            padded = F.pad(audio, (N_FFT - HOP_LENGTH, 0))
            stft = torch.stft(padded, N_FFT, HOP_LENGTH, window=window, center=False, return_complex=True)
        else:
            stft = torch.stft(audio, N_FFT, HOP_LENGTH, window=window, center=True, pad_mode="reflect", return_complex=True)
            stft = stft[..., :-1]
        power = stft.abs() ** 2
        mel = torch.matmul(mel_filters, power)
        log_spec = torch.clamp(mel, min=1e-10).log10()
        dynamic_range = self.config.log_mel_dynamic_range
        if causal:
            running_max = torch.cummax(log_spec.amax(dim=1), dim=-1).values
            log_spec = torch.maximum(log_spec, running_max.unsqueeze(1) - dynamic_range)
        else:
            peak = log_spec.amax(dim=(1, 2), keepdim=True)
            log_spec = torch.maximum(log_spec, peak - dynamic_range)
        return (log_spec + 4.0) / 4.0

    # ------------------------------------------------------------------ forward
    def forward(
        self,
        input_values: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        **kwargs: Any,
    ) -> TurnTakingJudgeOutput:
        r"""
        Args:
            input_values: ``[batch, n_samples]`` mono 16 kHz audio; ``n_samples`` a whole number of
                chunks. Window mode: each row is one window ending at the end of chunk t.
            attention_mask: ``[batch, n_samples]``, 0 where a window is padding (before the
                conversation start); padded samples are set to silence.
            labels: window mode: ``[batch]`` label of chunk t + 1. Causal mode: ``[batch]`` (the
                last chunk of each window) or ``[batch, n_chunks]`` (every chunk; -100 is ignored).
        """
        input_values = self._check_input_values(input_values)
        if attention_mask is not None:
            input_values = input_values * attention_mask.to(input_values.dtype)
        causal = self.config.context_mode == "causal"
        features = self.log_mel(input_values, causal=causal).to(self.classifier.weight.dtype)
        states = self.encoder(features, causal=causal)
        if self.config.use_weighted_layer_sum:
            weights = torch.softmax(self.layer_weights, dim=0)
            pooled = torch.einsum("l,lbtd->btd", weights.to(states[0].dtype), torch.stack(states))
        else:
            pooled = states[-1]
        spc = self.config.samples_per_chunk
        n_chunks = input_values.shape[1] // spc
        frames_per_chunk = spc // ENCODER_FRAME_SAMPLES
        if causal:
            pooled = pooled[:, frames_per_chunk - 1 :: frames_per_chunk]
            ends = torch.arange(1, n_chunks + 1, device=pooled.device, dtype=torch.float32)
        else:
            pooled = pooled[:, -1:]
            ends = torch.tensor([float(n_chunks)], device=pooled.device)
        logits = self.classifier(self.dropout(pooled))
        loss = None
        if labels is not None:
            loss = self._loss(logits, labels.to(logits.device))
        return TurnTakingJudgeOutput(
            loss=loss,
            logits=logits,
            probabilities=self.probabilities_from_logits(logits),
            chunk_times=ends * self.config.chunk_s,
            hidden_states=pooled if output_hidden_states else None,
        )

    def probabilities_from_logits(self, logits: torch.Tensor) -> torch.Tensor:
        """Softmax of the logits plus ``config.logit_adjustment`` (the class-prior correction
        of a class-balanced training; nothing is added when it is None)."""
        logits = logits.float()
        adjustment = getattr(self.config, "logit_adjustment", None)
        if adjustment is not None:
            logits = logits + torch.tensor(adjustment, dtype=logits.dtype, device=logits.device)
        return torch.softmax(logits, dim=-1)

    def _check_input_values(self, input_values: torch.Tensor) -> torch.Tensor:
        if input_values.dim() == 1:
            input_values = input_values.unsqueeze(0)
        if input_values.dim() != 2:
            raise ValueError(f"input_values must be [batch, n_samples] mono audio, got shape {tuple(input_values.shape)}")
        spc = self.config.samples_per_chunk
        n = input_values.shape[1]
        if n < spc or n % spc:
            raise ValueError(
                f"input_values must hold a whole number of {self.config.chunk_s * 1000:g} ms chunks "
                f"({spc} samples each) and at least one; got {n} samples"
            )
        return input_values

    def _loss(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if labels.dim() == 1:
            logits = logits[:, -1]
        elif labels.shape != logits.shape[:2]:
            raise ValueError(f"labels of shape {tuple(labels.shape)} do not match predictions {tuple(logits.shape[:2])}")
        return F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]).float(),
            labels.reshape(-1).long(),
            ignore_index=-100,
            label_smoothing=self.config.label_smoothing,
        )

    # ------------------------------------------------------------------ turn-end head
    @torch.no_grad()
    def turn_end_probabilities(
        self, windows: np.ndarray | torch.Tensor, timing: np.ndarray | torch.Tensor | None = None, batch_size: int = 16
    ) -> np.ndarray:
        """P(the other party speaks next) for pause windows ``[B, n]``: each the pausing
        speaker's own channel, ``turn_end_head["window_s"]`` seconds (16 kHz) ending at the
        decision time (:func:`pause_window` cuts them); ``timing`` ``[B, n_timing]``, the
        features ``turn_end_head["timing_features"]`` names, when it names any."""
        if self.turn_end_head is None:
            raise ValueError("this judge has no turn-end head (config.turn_end_head is None); metrics (a)/(d) read p_T - p_C")
        windows = torch.as_tensor(np.asarray(windows, dtype=np.float32))
        if windows.dim() != 2:
            raise ValueError(f"pause windows must be [batch, n_samples], got shape {tuple(windows.shape)}")
        if timing is not None:
            timing = torch.as_tensor(np.asarray(timing, dtype=np.float32)).reshape(windows.shape[0], -1)
        device, dtype = self.classifier.weight.device, self.classifier.weight.dtype
        out = []
        for start in range(0, windows.shape[0], batch_size):
            batch = windows[start : start + batch_size].to(device)
            features = self.log_mel(batch, causal=False).to(dtype)
            extra = None if timing is None else timing[start : start + batch_size].to(device)
            out.append(torch.sigmoid(self.turn_end_head(self.encoder, features, extra).float()).cpu())
        return torch.cat(out).numpy() if out else np.zeros(0, dtype=np.float32)

    # ------------------------------------------------------------------ turn-completion cue
    @torch.no_grad()
    def turn_complete_logits(self, clips: list[np.ndarray], batch_size: int = 16) -> np.ndarray:
        """The cue's logit of "the turn is complete" for each clip: the pausing speaker's own
        channel (16 kHz) from the turn start (minus ``pre_speech_s``) to the decision horizon,
        any length (the last ``window_s`` seconds are heard)."""
        if self.turn_completion_cue is None:
            raise ValueError("this judge has no turn-completion cue (config.turn_completion_cue is None)")
        cue = self.config.turn_completion_cue
        window_s = cue.window_s
        device, dtype = self.classifier.weight.device, self.classifier.weight.dtype
        low_precision = cue.compute_dtype == "bfloat16"
        out = []
        for start in range(0, len(clips), batch_size):
            batch = torch.from_numpy(np.stack([cue_segment(c, window_s, self.config.sample_rate) for c in clips[start : start + batch_size]]))
            # smart-turn's feature extractor normalises each clip to zero mean, unit variance
            batch = (batch - batch.mean(1, keepdim=True)) / torch.sqrt(batch.var(1, unbiased=False, keepdim=True) + 1e-7)
            features = self.log_mel(batch.to(device), causal=False).to(dtype)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=low_precision):
                out.append(self.turn_completion_cue(features).float().cpu())
        return torch.cat(out).numpy() if out else np.zeros(0, dtype=np.float32)

    # ------------------------------------------------------------------ decisions
    def pause_rule(self, transcribing: bool = False) -> tuple[str, PauseRule] | None:
        """Which rule decides (a)/(d), with its config key: ``pause_decision_whisper`` when the
        caller has Whisper's punctuation (``transcribing``) and the judge has that rule, else
        ``pause_decision``; None when the judge has neither (the turn-end head decides alone)."""
        if transcribing and self.config.pause_decision_whisper is not None:
            return "pause_decision_whisper", self.config.pause_decision_whisper
        if self.config.pause_decision is not None:
            return "pause_decision", self.config.pause_decision
        return None

    def pause_decision_probabilities(self, features: Mapping[str, np.ndarray], rule: PauseRule | None = None) -> np.ndarray:
        """The pause decision probability, P(the other party takes the turn), at (a)/(d)
        decisions: the logistic regression ``rule`` (default ``config.pause_decision``;
        :meth:`pause_rule` picks) over the named ``features`` exactly as given
        (:data:`PAUSE_DECISION_FEATURES`; each an array with one value per decision: the caller
        computes them, e.g. ``log_silence_s`` with :func:`log_silence`)."""
        rule = self.config.pause_decision if rule is None else rule
        if rule is None:
            raise ValueError("this judge has no pause decision rule (config.pause_decision is None); pass a PauseRule")
        missing = [name for name in rule.features if name not in features]
        if missing:
            raise ValueError(f"the pause decision reads {list(rule.features)}; missing {missing}")
        z = float(rule.bias) + sum(float(w) * np.asarray(features[name], dtype=np.float64) for name, w in zip(rule.features, rule.weight))
        return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float64)))

    def interruption_probabilities(self, features: np.ndarray, rule: InterruptionRule | None = None) -> np.ndarray:
        """P(the interruption takes the floor) at (e) decisions: the logistic regression ``rule``
        (default ``config.interruption_head``) over ``features`` ``[decisions, len(rule.features)]``,
        its columns in the order of ``rule.features``
        (``turneval.dataset_scripts.interruption_outcomes.interruption_features`` reads them)."""
        rule = self.config.interruption_head if rule is None else rule
        if rule is None:
            raise ValueError("this judge has no interruption rule (config.interruption_head is None); (e) reads p_T - p_C")
        x = np.asarray(features, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(rule.features):
            raise ValueError(f"the interruption rule reads {len(rule.features)} features {list(rule.features)} per decision; "
                             f"got features of shape {x.shape}")
        weight = np.asarray(rule.weight, dtype=np.float64)
        # one decision at a time, each z = x . w + b: the report's figures do not depend on how many decisions there are
        z = np.array([row @ weight + rule.bias for row in x], dtype=np.float64)
        return 1.0 / (1.0 + np.exp(-z))

    # ------------------------------------------------------------------ inference
    @torch.no_grad()
    def score(self, audio: np.ndarray | torch.Tensor, sample_rate: int = 16000, batch_size: int = 8) -> TurnTakingJudgeScores:
        """Judge probabilities after every chunk of a conversation (mono, or channels averaged).

        Row t of the result is about chunk t + 1, predicted from the audio up to the end of
        chunk t; a trailing part of a chunk is ignored. Window mode runs one window per chunk
        (batched); causal mode one pass per window of ``context_s``, windows every
        ``stream_hop_s`` (see the configuration).
        """
        audio = prepare_audio(audio, sample_rate, self.config)
        spc = self.config.samples_per_chunk
        n_chunks = audio.shape[0] // spc
        audio = audio[: n_chunks * spc]
        if self.config.context_mode == "causal":
            probs = self._score_causal(audio, batch_size)
        else:
            probs = self._score_windows(audio, np.arange(n_chunks), batch_size)
        return TurnTakingJudgeScores(
            probabilities=probs,
            chunk_times=np.arange(1, n_chunks + 1) * self.config.chunk_s,
            label_names=list(self.config.label_names),
            context_mode=self.config.context_mode,
        )

    def _score_windows(self, audio: torch.Tensor, chunk_ends: np.ndarray, batch_size: int) -> np.ndarray:
        """Window mode: one left-padded window per observed chunk t (ending at its end)."""
        spc, width = self.config.samples_per_chunk, self.config.context_chunks * self.config.samples_per_chunk
        padded = F.pad(audio, (width, 0))
        out = np.zeros((len(chunk_ends), len(self.config.label_names)), dtype=np.float32)
        for start in range(0, len(chunk_ends), batch_size):
            batch_ends = chunk_ends[start : start + batch_size]
            windows = torch.stack([padded[(t + 1) * spc : (t + 1) * spc + width] for t in batch_ends])
            result = self(input_values=windows.to(self.device))
            out[start : start + len(batch_ends)] = result.probabilities[:, -1].detach().cpu().numpy()
        return out

    def _score_causal(self, audio: torch.Tensor, batch_size: int) -> np.ndarray:
        """Causal mode: predictions at every chunk end, from overlapping windows."""
        spc = self.config.samples_per_chunk
        n_chunks = audio.shape[0] // spc
        out = np.zeros((n_chunks, len(self.config.label_names)), dtype=np.float32)
        plan = causal_window_plan(n_chunks, self.config.context_chunks, self.config.hop_chunks)
        full = [p for p in plan if p[1] - p[0] == self.config.context_chunks]
        rest = [p for p in plan if p[1] - p[0] != self.config.context_chunks]
        for group in [full[i : i + batch_size] for i in range(0, len(full), batch_size)] + [[p] for p in rest]:
            windows = torch.stack([audio[s * spc : e * spc] for s, e, _ in group]).to(self.device)
            probs = self(input_values=windows).probabilities.detach().cpu().numpy()
            for row, (s, e, keep_from) in zip(probs, group):
                out[keep_from:e] = row[keep_from - s :]
        return out


def causal_window_plan(n_chunks: int, context_chunks: int, hop_chunks: int) -> list[tuple[int, int, int]]:
    """Windows ``(start, end, keep_from)`` in chunks covering ``n_chunks`` chunk ends once each.

    Window k starts at k * hop; the first window keeps all its predictions, later ones only
    those from ``start + context - hop`` on, so every prediction sees at least
    ``context - hop`` chunks (or everything since the start) and at most ``context``.
    """
    plan = [(0, min(context_chunks, n_chunks), 0)]
    start = hop_chunks
    while plan[-1][1] < n_chunks:
        end = min(start + context_chunks, n_chunks)
        plan.append((start, end, start + context_chunks - hop_chunks))
        start += hop_chunks
    return plan


def causal_window_for(chunk_end: int, context_chunks: int, hop_chunks: int) -> int:
    """Start (in chunks) of the causal window whose prediction at ``chunk_end`` is reported."""
    if chunk_end < context_chunks:
        return 0
    return ((chunk_end - context_chunks) // hop_chunks + 1) * hop_chunks


def prepare_audio(audio: np.ndarray | torch.Tensor, sample_rate: int, config: TurnTakingJudgeConfig) -> torch.Tensor:
    """Check conversation audio for the judge and return it as a mono float32 tensor.

    Raises ValueError with what to fix: wrong sample rate, wrong shape, NaN/inf, shorter than
    one chunk, or silence only.
    """
    if sample_rate != config.sample_rate:
        raise ValueError(
            f"the judge reads {config.sample_rate} Hz audio, got {sample_rate} Hz; resample first "
            "(turneval's audio loader does this on load)"
        )
    tensor = torch.as_tensor(np.asarray(audio) if not isinstance(audio, torch.Tensor) else audio).float()
    if tensor.dim() == 2:
        if min(tensor.shape) > 8:
            raise ValueError(f"audio must be mono [n_samples] or [channels, n_samples], got shape {tuple(tensor.shape)}")
        if tensor.shape[0] > tensor.shape[1]:
            tensor = tensor.T
        tensor = tensor.mean(dim=0)  # the judge reads the mono mix: the mean of the channels, as in training
    if tensor.dim() != 1:
        raise ValueError(f"audio must be mono [n_samples] or [channels, n_samples], got shape {tuple(tensor.shape)}")
    if not torch.isfinite(tensor).all():
        raise ValueError("audio contains NaN or infinite samples")
    spc = config.samples_per_chunk
    if tensor.shape[0] < spc:
        raise ValueError(
            f"audio of {tensor.shape[0]} samples is too short: the judge needs at least one "
            f"{config.chunk_s * 1000:g} ms chunk ({spc} samples) to predict anything"
        )
    if float(tensor.abs().max()) < 1e-6:
        raise ValueError("audio is silent (all samples are zero); the judge needs recorded speech")
    return tensor


class _IncrementalWindow:
    """One causal window computed chunk by chunk with cached keys and values.

    Holds what the causal forward pass over ``[start, now)`` needs to extend itself: the
    running log-mel maximum, the last two mel frames (conv1 looks back two), the last conv1
    output (conv2 looks back one) and every layer's keys and values. The arithmetic is that of
    ``TurnTakingJudge.forward`` in causal mode, frame for frame.
    """

    def __init__(self, model: "TurnTakingJudge", start_sample: int) -> None:
        self.model = model
        self.start = start_sample
        self.n_chunks = 0  # chunks of this window already encoded
        self.running_max: torch.Tensor | None = None
        enc = model.encoder
        d_model = enc.conv1.weight.shape[0]
        n_mels = enc.conv1.weight.shape[1]
        device, dtype = enc.conv1.weight.device, enc.conv1.weight.dtype
        self.mel_tail = torch.zeros(1, n_mels, 2, device=device, dtype=dtype)
        self.conv1_tail = torch.zeros(1, d_model, 1, device=device, dtype=dtype)
        self.keys: list[torch.Tensor | None] = [None] * len(enc.layers)
        self.values: list[torch.Tensor | None] = [None] * len(enc.layers)

    def extend(self, audio: torch.Tensor, audio_start: int, n_chunks: int) -> torch.Tensor:
        """Encode chunks ``self.n_chunks .. n_chunks - 1`` of this window; return their
        probabilities ``[n_new, num_labels]``. ``audio`` starts at sample ``audio_start`` and
        must reach the end of chunk ``n_chunks - 1`` of the window."""
        model, config = self.model, self.model.config
        spc = config.samples_per_chunk
        first_mel = self.n_chunks * spc // HOP_LENGTH
        last_mel = n_chunks * spc // HOP_LENGTH
        lo = self.start + first_mel * HOP_LENGTH - (N_FFT - HOP_LENGTH)
        hi = self.start + last_mel * HOP_LENGTH
        piece = audio[max(lo, self.start) - audio_start : hi - audio_start]
        piece = F.pad(piece, (max(0, self.start - lo), 0)).unsqueeze(0).float()
        mel_filters, window = model._front_end_constants(piece.device)
        stft = torch.stft(piece, N_FFT, HOP_LENGTH, window=window, center=False, return_complex=True)
        log_spec = torch.clamp(torch.matmul(mel_filters, stft.abs() ** 2), min=1e-10).log10()
        frame_max = torch.cummax(log_spec.amax(dim=1), dim=-1).values
        if self.running_max is not None:
            frame_max = torch.maximum(frame_max, self.running_max)
        self.running_max = frame_max[:, -1:]
        log_spec = torch.maximum(log_spec, frame_max.unsqueeze(1) - config.log_mel_dynamic_range)
        enc = model.encoder
        mel = ((log_spec + 4.0) / 4.0).to(enc.conv1.weight.dtype)
        mel_in = torch.cat([self.mel_tail, mel], dim=-1)
        self.mel_tail = mel_in[..., -2:]
        x1 = F.gelu(F.conv1d(mel_in, enc.conv1.weight, enc.conv1.bias))
        x1_in = torch.cat([self.conv1_tail, x1], dim=-1)
        self.conv1_tail = x1_in[..., -1:]
        x2 = F.gelu(F.conv1d(x1_in, enc.conv2.weight, enc.conv2.bias, stride=2)).transpose(1, 2)
        first_frame = first_mel // 2
        n_new = x2.shape[1]
        hidden = x2 + enc.embed_positions.weight[first_frame : first_frame + n_new].unsqueeze(0)
        states = [hidden]
        total = first_frame + n_new
        mask = torch.zeros(n_new, total, dtype=hidden.dtype, device=hidden.device)
        future = torch.arange(total, device=hidden.device)[None, :] > (first_frame + torch.arange(n_new, device=hidden.device))[:, None]
        mask = mask.masked_fill(future, torch.finfo(hidden.dtype).min)[None, None]
        for i, layer in enumerate(enc.layers):
            hidden = self._layer(i, layer, hidden, mask)
            states.append(hidden)
        states[-1] = enc.layer_norm(hidden)
        # an encoder in a lower precision than the head hands its states up in the head's
        head_dtype = model.classifier.weight.dtype
        if config.use_weighted_layer_sum:
            weights = torch.softmax(model.layer_weights, dim=0).to(head_dtype)
            pooled = torch.einsum("l,lbtd->btd", weights, torch.stack(states).to(head_dtype))
        else:
            pooled = states[-1].to(head_dtype)
        frames_per_chunk = spc // ENCODER_FRAME_SAMPLES
        pooled = pooled[:, frames_per_chunk - 1 :: frames_per_chunk]
        self.n_chunks = n_chunks
        return model.probabilities_from_logits(model.classifier(pooled))[0]

    def _layer(self, i: int, layer: nn.Module, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """`WhisperEncoderLayer.forward` on new frames, attending to the cached ones as well."""
        attn = layer.self_attn
        batch, n_new, _ = hidden.shape
        shape = (batch, n_new, attn.num_heads, attn.head_dim)
        residual = hidden
        x = layer.self_attn_layer_norm(hidden)
        query = (attn.q_proj(x) * attn.scaling).view(shape).transpose(1, 2)
        key = attn.k_proj(x).view(shape).transpose(1, 2)
        value = attn.v_proj(x).view(shape).transpose(1, 2)
        if self.keys[i] is not None:
            key = torch.cat([self.keys[i], key], dim=2)
            value = torch.cat([self.values[i], value], dim=2)
        self.keys[i], self.values[i] = key, value
        out = F.scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=1.0)
        out = attn.out_proj(out.transpose(1, 2).reshape(batch, n_new, -1))
        hidden = residual + out
        residual = hidden
        x = layer.activation_fn(layer.fc1(layer.final_layer_norm(hidden)))
        return residual + layer.fc2(x)


class TurnTakingJudgeStream:
    """Live next-chunk probabilities from a causal judge, fed audio blocks of any size.

    Every completed 40 ms chunk t yields the distribution over the label of chunk t + 1. The
    windows are those of offline causal scoring, so the outputs equal ``judge.score(audio)``
    on the same audio (row t). The context is bounded by ``context_s``. With
    ``incremental=True`` (default) each window keeps its keys and values, so a block costs only
    its new frames (attending to at most ``context_s`` of cache); ``incremental=False``
    recomputes one causal pass over the current window per block (the reference path).

    Example::

        stream = TurnTakingJudgeStream(judge)
        for block in microphone_blocks():          # float32 mono 16 kHz, any length
            for chunk, probs in zip(*stream.push(block)):
                ...  # probs[judge.config.label2id["T"]]: turn change in chunk `chunk + 1`
    """

    def __init__(self, model: TurnTakingJudge, incremental: bool = True) -> None:
        if model.config.context_mode != "causal":
            raise ValueError("streaming needs a judge with context_mode='causal'")
        self.model = model
        self.config = model.config
        self.incremental = incremental
        self.reset()

    def reset(self) -> None:
        """Forget all audio: the next sample pushed is the conversation start."""
        self._buffer = torch.zeros(0)
        self._buffer_start = 0  # sample index of _buffer[0]
        self._next_chunk_end = 0  # first chunk t whose prediction is not yet emitted
        self._windows: dict[int, _IncrementalWindow] = {}  # window start chunk -> cached state

    @torch.no_grad()
    def push(self, block: np.ndarray | torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        """Add audio; return ``(chunk_indices, probabilities [k, num_labels])`` for each newly
        completed chunk t: the distribution over the label of chunk t + 1."""
        block = torch.as_tensor(np.asarray(block, dtype=np.float32) if not isinstance(block, torch.Tensor) else block).float()
        if block.dim() != 1:
            raise ValueError(f"push mono blocks [n_samples], got shape {tuple(block.shape)}")
        if not torch.isfinite(block).all():
            raise ValueError("audio block contains NaN or infinite samples")
        self._buffer = torch.cat([self._buffer, block.to(self._buffer.device)])
        spc = self.config.samples_per_chunk
        context, hop = self.config.context_chunks, self.config.hop_chunks
        done = (self._buffer_start + self._buffer.shape[0]) // spc  # completed chunks
        indices, rows = [], []
        while self._next_chunk_end < done:
            window = causal_window_for(self._next_chunk_end, context, hop)
            last = min(done, window + context) - 1  # last chunk end this window reports now
            if self.incremental:
                probs = self._extend(window, last + 1 - window).cpu().numpy()
                ends = np.arange(self._next_chunk_end, last + 1)
                rows.append(probs[len(probs) - len(ends) :])
            else:
                offset = window * spc - self._buffer_start
                audio = self._buffer[offset : offset + (last + 1 - window) * spc].unsqueeze(0)
                probs = self.model(input_values=audio.to(self.model.device)).probabilities[0].cpu().numpy()
                ends = np.arange(self._next_chunk_end, last + 1)
                rows.append(probs[ends - window])
            indices.append(ends)
            self._next_chunk_end = last + 1
        if self.incremental:  # a window's cache is dropped once a later window reports
            responsible = causal_window_for(self._next_chunk_end, context, hop)
            self._windows = {s: w for s, w in self._windows.items() if s >= responsible}
        # Keep only what the windows still to report need.
        keep_from = min([causal_window_for(self._next_chunk_end, context, hop), *self._windows]) * spc
        if keep_from > self._buffer_start:
            self._buffer = self._buffer[keep_from - self._buffer_start :]
            self._buffer_start = keep_from
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, len(self.config.label_names)), dtype=np.float32)
        return np.concatenate(indices), np.concatenate(rows).astype(np.float32)

    def _extend(self, window: int, n_chunks: int) -> torch.Tensor:
        """Bring the cached window starting at chunk ``window`` to ``n_chunks`` chunks; return
        the probabilities of the chunks it newly encoded."""
        spc = self.config.samples_per_chunk
        state = self._windows.get(window)
        if state is None:
            state = self._windows[window] = _IncrementalWindow(self.model, window * spc)
        if n_chunks <= state.n_chunks:
            return torch.zeros(0, len(self.config.label_names))
        audio = self._buffer.to(self.model.device)
        return state.extend(audio, self._buffer_start, n_chunks)


__all__ = [
    "PAUSE_DECISION_FEATURES",
    "TurnCompletionCue",
    "TurnEndHead",
    "TurnTakingJudge",
    "TurnTakingJudgeOutput",
    "TurnTakingJudgePreTrainedModel",
    "TurnTakingJudgeScores",
    "TurnTakingJudgeStream",
    "causal_window_plan",
    "pause_window",
    "pause_states",
    "pooled_pause_views",
    "prepare_audio",
    "tail_layer",
    "views_from_states",
]
