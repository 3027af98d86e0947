"""Configuration of the FutureActivityPredictor (TurnNat's future voice-activity model).

Self-contained: imports only transformers, so it can be pushed to a Hub repo with the
modeling file beside it and loaded with ``trust_remote_code=True``.
"""
from __future__ import annotations

from transformers import PretrainedConfig


class FutureActivityPredictorConfig(PretrainedConfig):
    r"""
    Configuration of [`FutureActivityPredictorModel`].

    The model reads a two-channel conversation (one speaker per channel, 16 kHz) and predicts,
    at every 20 ms frame, a distribution over the 256 VAP classes: which of the two speakers will
    be active in each of four future bins (0-200, 200-600, 600-1200, 1200-2000 ms). A causal
    encoder with shared weights runs on each channel, a causal transformer mixes the two
    streams, and two heads give the 256-way future activity and the per-channel voice activity.

    Args:
        input_type (`str`, *optional*, defaults to `"audio"`):
            `"audio"`: stereo waveform input. `"vad"`: the two past voice-activity streams only
            (the cheap baseline of TurnNat).
        vad_features (`str`, *optional*, defaults to `"activity"`): what the voice-activity model reads
            per frame and channel. `"activity"`: the 0/1 activity itself. `"timing"`: causal timing
            features of the speaker's own and the partner's activity (time since the last onset and
            offset, the last IPU and pause lengths, activity shares over the last 0.2-20 s; see
            `timing_features`), which give a model without attention layers the long context.
            `"timing+words"`: the timing features and, per channel, a turn-completion cue from the
            speaker's words, each read from its start (`WordTurnCue`, fitted on Switchboard's words):
            input `[batch, frames, 4]` from `model.vad_inputs(activity, words)`; without words the cue is 0.
            `"timing+ends"`: the timing features and, per channel, how close the speaker's current
            stretch of speech is to its end, read from the activity up to `end_lookahead_s` ahead
            (`speech_end_lookahead`): what a listener hears coming from the sound, without the voice.
            `"timing+words+ends"`: both cues (input `[batch, frames, 4]` as for `"timing+words"`).
        sample_rate (`int`, *optional*, defaults to 16000): input sample rate.
        frame_hz (`int`, *optional*, defaults to 50): output frame rate (VAP's 20 ms frames).
        n_fft (`int`, *optional*, defaults to 400): analysis window of the causal log-mel front end.
        num_mel_bins (`int`, *optional*, defaults to 64): mel bands of the front end.
        conv_layers (`int`, *optional*, defaults to 3): causal temporal convolutions after the mel.
        conv_kernel_size (`int`, *optional*, defaults to 5): their kernel size (in frames).
        hidden_size (`int`, *optional*, defaults to 128): width of encoder and transformer.
        num_channel_layers (`int`, *optional*, defaults to 2): per-channel causal self-attention layers.
        num_cross_layers (`int`, *optional*, defaults to 2): cross-speaker causal layers.
        num_attention_heads (`int`, *optional*, defaults to 4): attention heads.
        intermediate_size (`int`, *optional*, defaults to 256): feed-forward width.
        dropout (`float`, *optional*, defaults to 0.1): dropout in the transformer.
        max_context_frames (`int`, *optional*, defaults to 1000): attention span (20 s at 50 Hz);
            older frames are masked out, so long audio can be streamed in overlapping windows with
            results that do not depend on where a window starts.
        stream_window_s (`float`, *optional*, defaults to 30.0): window length when a long conversation
            is scored in overlapping windows (`predict_long`).
        stream_context_s (`float`, *optional*, defaults to 10.0): history every streamed frame is
            guaranteed; windows advance by `stream_window_s - stream_context_s`. Match it to the
            training crops (10 s for the demo checkpoint): more costs time and adds context the
            model never saw.
        bin_frames (`list[int]`, *optional*, defaults to `[10, 20, 30, 40]`): future bins in frames.
        num_classes (`int`, *optional*, defaults to 256): 2 ** (2 * len(bin_frames)).
        boundary_weight (`float`, *optional*, defaults to 2.0): alpha, the cross-entropy weight of
            frames inside turn-taking boundary units (TurnNat Eq. 5-6).
        va_loss_weight (`float`, *optional*, defaults to 0.5): weight of the voice-activity BCE.
        word_cue_buckets (`int`, *optional*, defaults to 65536): hashed word features of the word cue.
        end_lookahead_s (`float`, *optional*, defaults to 0.5): how far ahead a `"timing+ends"` (or `"timing+words+ends"`) model reads
            each speaker's activity for the end of their current stretch of speech.
    """

    model_type = "future_activity_predictor"

    def __init__(
        self,
        input_type: str = "audio",
        vad_features: str = "activity",
        sample_rate: int = 16000,
        frame_hz: int = 50,
        n_fft: int = 400,
        num_mel_bins: int = 64,
        conv_layers: int = 3,
        conv_kernel_size: int = 5,
        hidden_size: int = 128,
        num_channel_layers: int = 2,
        num_cross_layers: int = 2,
        num_attention_heads: int = 4,
        intermediate_size: int = 256,
        dropout: float = 0.1,
        max_context_frames: int = 1000,
        stream_window_s: float = 30.0,
        stream_context_s: float = 10.0,
        bin_frames: list[int] | None = None,
        num_classes: int = 256,
        boundary_weight: float = 2.0,
        va_loss_weight: float = 0.5,
        word_cue_buckets: int = 65536,
        end_lookahead_s: float = 0.5,
        **kwargs,
    ):
        if input_type not in ("audio", "vad"):
            raise ValueError(f"input_type must be 'audio' or 'vad', got {input_type!r}")
        if vad_features not in ("activity", "timing", "timing+words", "timing+ends", "timing+words+ends"):
            raise ValueError(f"vad_features must be 'activity', 'timing', 'timing+words', 'timing+ends' or 'timing+words+ends', got {vad_features!r}")
        if end_lookahead_s <= 0:
            raise ValueError(f"end_lookahead_s must be > 0, got {end_lookahead_s}")
        bin_frames = list(bin_frames) if bin_frames is not None else [10, 20, 30, 40]
        if not 0 < stream_context_s < stream_window_s:
            raise ValueError(f"need 0 < stream_context_s < stream_window_s, got {stream_context_s}, {stream_window_s}")
        if num_classes != 2 ** (2 * len(bin_frames)):
            raise ValueError(f"num_classes must be 2**(2*{len(bin_frames)}) for {len(bin_frames)} bins, got {num_classes}")
        if sample_rate % frame_hz:
            raise ValueError(f"sample_rate ({sample_rate}) must be a multiple of frame_hz ({frame_hz})")
        if hidden_size % num_attention_heads:
            raise ValueError(f"hidden_size ({hidden_size}) must be divisible by num_attention_heads ({num_attention_heads})")
        self.input_type = input_type
        self.vad_features = vad_features
        self.sample_rate = sample_rate
        self.frame_hz = frame_hz
        self.n_fft = n_fft
        self.num_mel_bins = num_mel_bins
        self.conv_layers = conv_layers
        self.conv_kernel_size = conv_kernel_size
        self.hidden_size = hidden_size
        self.num_channel_layers = num_channel_layers
        self.num_cross_layers = num_cross_layers
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.dropout = dropout
        self.max_context_frames = max_context_frames
        self.stream_window_s = stream_window_s
        self.stream_context_s = stream_context_s
        self.bin_frames = bin_frames
        self.num_classes = num_classes
        self.boundary_weight = boundary_weight
        self.va_loss_weight = va_loss_weight
        self.word_cue_buckets = word_cue_buckets
        self.end_lookahead_s = end_lookahead_s
        super().__init__(**kwargs)

    @property
    def hop_length(self) -> int:
        """Samples per output frame (320 at 16 kHz / 50 Hz)."""
        return self.sample_rate // self.frame_hz

    @property
    def horizon_frames(self) -> int:
        """Frames of future the target looks at (100 = 2 s for the default bins)."""
        return sum(self.bin_frames)


__all__ = ["FutureActivityPredictorConfig"]
