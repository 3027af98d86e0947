"""The result of a report: every figure of one conversation as typed sections, its JSON form and schema.

Each section of report.json is a dataclass of its own (:class:`ConversationFacts`,
:class:`Headline`, ...), built by :mod:`turneval.reporting.build`. The renderers (the terminal
text, :mod:`~turneval.reporting.summary`; the verdict, :mod:`~turneval.reporting.verdict`; the
page, :mod:`~turneval.reporting.html_report`; the files, :mod:`~turneval.reporting.report_files`)
take a :class:`Report`; this module imports none of them.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from importlib import resources
from typing import Any, Iterator

from turneval import __version__
from turneval.dataset_scripts.dialogue import DialogueError
from turneval.dataset_scripts.files import to_jsonable

from .references import reference_values


REPORT_SCHEMA_VERSION = 1


class ReportError(DialogueError):
    """The report cannot be made from this input; the message says what to fix."""


class _Absent:
    """A field that report.json leaves out (not null): e.g. ``audio`` when two mono files were read."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


class Section(Mapping):
    """A section of report.json: a dataclass whose fields are the section's keys, in order.

    As transformers' ``ModelOutput``, a section also reads like the dict report.json holds
    (``section["key"]``, ``section.get("key")``, ``"key" in section``: a read-only
    :class:`~collections.abc.Mapping`), so code written against report.json reads a Report the
    same way. A field set to :data:`ABSENT` is not written.
    """

    def to_dict(self) -> dict[str, Any]:
        values = ((key, getattr(self, name)) for key, name in self._names().items())
        return {key: value for key, value in values if value is not ABSENT}

    @classmethod
    @cache
    def _names(cls) -> dict[str, str]:
        """{report.json key: field name}: a key that is a Python word (``lambda``) is the field's
        ``metadata["key"]``."""
        return {f.metadata.get("key", f.name): f.name for f in fields(cls)}  # type: ignore[arg-type]

    def __getitem__(self, key: str) -> Any:
        value = getattr(self, self._names().get(key, ""), ABSENT)
        if value is ABSENT:
            raise KeyError(f"{type(self).__name__} has no {key!r}; its keys: {', '.join(self)}")
        return value

    def __iter__(self) -> Iterator[str]:
        return (key for key, name in self._names().items() if getattr(self, name) is not ABSENT)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """The section of a dict that a metric function returned; a key the section does not know
        is an error (a new figure needs a field here and in the report schema)."""
        names = cls._names()
        unknown = [k for k in data if k not in names]
        if unknown:
            raise TypeError(f"{cls.__name__}: no field for {', '.join(unknown)}; add it to turneval/reporting/result.py "
                            "and turneval/data/report.schema.json")
        return cls(**{name: data.get(key, ABSENT) for key, name in names.items()})


@dataclass
class ConversationFacts(Section):
    """Which conversation this is: id, the file(s) read, duration, system and user channel, where
    the speech segments came from (``vad``, ``annotations``, ``given``), whether words exist, the
    input sample rate and band (:mod:`turneval.bandwidth`)."""

    id: str
    audio: str = ABSENT
    user_audio: str = ABSENT
    system_audio: str = ABSENT
    duration_s: float | None = None
    system_channel: int | None = None
    user_channel: int | None = None
    segments_source: str | None = None
    has_words: bool = False
    input_sample_rate_hz: int | None = None
    bandwidth: dict[str, Any] | None = None


@dataclass
class Headline(Section):
    """The headline figures (``figures``: by the names ``--require`` gates,
    :mod:`turneval.headline_figures`), the system's response gaps, and the verdict rows (each
    figure beside its human range, :func:`turneval.reporting.verdict.verdict_rows`)."""

    figures: dict[str, float | None]
    response_gaps_s: list[float]
    verdict: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class SummaryRow(Section):
    """One row of the compact table (terminal, HTML page, report.json ``summary``)."""

    section: str
    key: str
    label: str
    value: float | None
    unit: str
    reference: float | None = None
    reference_source: str | None = None


@dataclass
class Events(Section):
    """The turn-taking events, each with its times (:class:`~turneval.dataset_scripts.events.TurnTakingEvents`)."""

    dialogue_id: str
    duration: float
    has_words: bool
    ipus: list[dict[str, Any]]
    silences: list[dict[str, Any]]
    pauses: list[dict[str, Any]]
    gaps: list[dict[str, Any]]
    overlaps: list[dict[str, Any]]
    backchannels: list[dict[str, Any]]
    turns: list[dict[str, Any]]
    interruptions: list[dict[str, Any]]
    speakers: list[str]


@dataclass
class FullDuplexTiming(Section):
    """FD-Bench and Full-Duplex-Bench figures on scenarios derived from the events
    (:mod:`turneval.metrics.full_duplex_from_events`; ``derived_from`` says how)."""

    derived_from: str
    fdbench: dict[str, Any] | None
    system_reply_unit: str
    full_duplex_bench: dict[str, Any]


@dataclass
class BackchannelTiming(Section):
    """The system's backchannel rate, band share and spacing (SWOZ,
    :func:`turneval.metrics.swoz_backchannels.system_backchannel_timing`)."""

    n_backchannels: int
    segments: Any
    rate_per_minute: list[float]
    mean_rate_per_minute: float | None
    in_band_share: float | None
    band: list[float]
    spacing: dict[str, Any]
    listener: str
    user_n_backchannels: int


@dataclass
class Statistics(Section):
    """Talking Turns §3.2 statistics (:func:`turneval.metrics.turn_statistics.dialogue_statistics`):
    counts, rates per minute, % of duration and mean lengths of the events, then the same per
    speaker (suffix ``_A``, ``_B``) and, by role, the system's and the user's rates (``_system``,
    ``_user``). Rates are None where their denominator is zero (or, for words, without words)."""

    n_dialogues: int
    duration_s: float
    duration_min: float
    ipu_count: int
    ipu_per_min: float | None
    ipu_percent: float | None
    ipu_mean_s: float | None
    pause_count: int
    pause_per_min: float | None
    pause_percent: float | None
    pause_mean_s: float | None
    gap_count: int
    gap_per_min: float | None
    gap_percent: float | None
    gap_mean_s: float | None
    overlap_count: int
    overlap_per_min: float | None
    overlap_percent: float | None
    overlap_mean_s: float | None
    silence_count: int
    silence_per_min: float | None
    silence_percent: float | None
    silence_mean_s: float | None
    backchannel_count: int
    backchannels_per_min: float | None
    turn_count: int
    turns_per_min: float | None
    interruption_count: int
    interruptions_per_min: float | None
    floor_taking_count: int
    floor_taking_share: float | None
    word_count: int
    speaking_rate_wpm: float | None
    backchannel_word_rate: float | None
    ipu_count_A: int
    ipu_per_min_A: float | None
    ipu_percent_A: float | None
    pause_count_A: int
    pause_per_min_A: float | None
    pause_percent_A: float | None
    backchannel_count_A: int
    backchannels_per_min_A: float | None
    interruption_count_A: int
    interruptions_per_min_A: float | None
    speaking_rate_wpm_A: float | None
    backchannel_word_rate_A: float | None
    ipu_count_B: int
    ipu_per_min_B: float | None
    ipu_percent_B: float | None
    pause_count_B: int
    pause_per_min_B: float | None
    pause_percent_B: float | None
    backchannel_count_B: int
    backchannels_per_min_B: float | None
    interruption_count_B: int
    interruptions_per_min_B: float | None
    speaking_rate_wpm_B: float | None
    backchannel_word_rate_B: float | None
    speaking_rate_wpm_system: float | None
    speaking_rate_wpm_user: float | None
    backchannel_word_rate_system: float | None
    backchannel_word_rate_user: float | None
    backchannels_per_min_system: float | None
    backchannels_per_min_user: float | None
    interruptions_per_min_system: float | None
    interruptions_per_min_user: float | None


@dataclass
class Agreement(Section):
    """How often the judge agrees with the conversation's own turn-taking decisions, metrics (a)-(e)
    (:func:`turneval.metrics.agreement.conversation_agreement`): the thresholds, per metric and
    decision the agreement, occurrence rates, the confusion matrix, threshold sensitivity, every
    instance and, when the judge's checkpoint records one, its validation (``validation``)."""

    thresholds: dict[str, Any]
    pause_decisions_judged_by: str
    interruptions_judged_by: str
    metrics: dict[str, Any]
    occurrence_rates: dict[str, Any]
    confusion_matrix: Any
    threshold_sensitivity: dict[str, Any]
    n_instances: int
    instances: list[dict[str, Any]]
    validation: dict[str, Any] = ABSENT


@dataclass
class Naturalness(Section):
    """TurnNat's naturalness m of the conversation (:mod:`turneval.metrics.naturalness_score`):
    MeanNLL, TailNLL, m, the worst boundary units and all units; beside m, not part of it, how
    expected each party's onsets and offsets were; the predictor's checkpoint."""

    mean_nll: float | None
    tail_nll: float | None
    dialog_nll: float | None
    naturalness_score: float | None
    defined: bool
    undefined_reason: str | None
    num_units: int
    tail_k: int
    gamma: float
    lambda_: float = field(metadata={"key": "lambda"})
    worst_units: list[dict[str, Any]] = field(default_factory=list)
    units: list[dict[str, Any]] = field(default_factory=list)
    read_words: bool = False
    system_onset_nll: float | None = None
    system_offset_nll: float | None = None
    user_onset_nll: float | None = None
    user_offset_nll: float | None = None
    checkpoint: str | None = None


@dataclass
class Transcript(Section):
    """The recognised words per channel (:mod:`turneval.transcribe`), the recogniser and its
    settings, and the WER against a reference per role (``wer``; None without a reference)."""

    model: str
    texts: list[str]
    n_words: list[int]
    n_windows: list[int]
    seconds_decoded: list[float]
    dropped_words: list[Any]
    settings: dict[str, Any]
    channels: list[str]
    words: list[list[list[Any]]]
    reference_source: str | None
    wer: dict[str, Any] | None


@dataclass
class TurnEndJudgeSection(Section):
    """Agreement of another turn-end model (smart-turn v3.2, :mod:`turneval.smart_turn`) with the
    (a)/(d) pause decisions, beside the TurnTakingJudge's on the same instances."""

    name: str
    model_file: str
    rule: str
    n_instances: int
    metrics: dict[str, Any]
    judge_same_instances: dict[str, Any] | None
    instances: list[dict[str, Any]]


@dataclass
class JudgeSection(Section):
    """The judge's class probabilities per 40 ms chunk (row t: the label of chunk t + 1 from the
    audio up to the end of chunk t), its checkpoint and the rules it decides by; ``precision``:
    the precision its encoder computed these probabilities in, ``cue_precision``: the precision
    Whisper's turn-completion cue was read in (each ``float32`` or ``bfloat16``; the cue's None
    without the cue)."""

    checkpoint: str | None
    context_mode: str
    turn_end_head: Any
    pause_rule: str | None
    precision: str
    cue_precision: str | None
    interruption_head: dict[str, Any] | None
    label_names: list[str]
    chunk_s: float
    layout: str
    probabilities: Any
    labels: list[str]


@dataclass
class Settings(Section):
    """How the report was made: device, band limit, VAD, the models, the agreement thresholds."""

    device: str
    band_limit: str
    vad: dict[str, Any] | None
    judge: str | None
    predictor: str | None
    asr: dict[str, Any] | None
    turn_end_judge: str | None
    agreement_thresholds: dict[str, Any] | None
    agreement_thresholds_source: str | None


@dataclass
class Models(Section):
    """Each model's checkpoint, training data and measured quality (:mod:`turneval.model_provenance`);
    None for a skipped model."""

    judge: dict[str, Any] | None = None
    predictor: dict[str, Any] | None = None


@dataclass
class Report:
    """Every figure of one conversation, and every instance with its time.

    Attributes:
        conversation: id, audio file(s), duration, system and user channel, where the speech
            segments came from.
        segments: per speaker (A, B) the speech segments in seconds.
        events: the turn-taking events (IPUs, pauses, gaps, overlaps, backchannels, turns,
            interruptions), each with its times.
        statistics: Talking Turns §3.2 statistics (per minute, % of duration, per speaker).
        full_duplex_timing: FD-Bench and Full-Duplex-Bench figures on scenarios derived from
            the events (``derived_from`` says how).
        backchannel_timing: the system's backchannel rate, band share and spacing (SWOZ).
        judge: the judge's class probabilities per chunk and the checkpoint; None when skipped.
        agreement: metrics (a)-(e), occurrence rates, confusion matrix, threshold sensitivity
            and every instance; None when the judge was skipped.
        naturalness: MeanNLL, TailNLL, m, the worst boundary units and all units; None when
            the predictor was skipped.
        notes: what was skipped or approximated, in words.
        settings: thresholds, VAD settings, checkpoints, device.
        models: each model's checkpoint, training data and measured quality.
        transcript: the recognised words per channel, the recogniser and the WER against a
            reference (``--transcribe``, :mod:`turneval.transcribe`); None without it.
        turn_end_judge: agreement of another turn-end model (smart-turn v3.2) with the (a)/(d)
            pause decisions, beside the TurnTakingJudge's on the same instances
            (``--turn-end-judge``, :mod:`turneval.smart_turn`); None without it.
        headline: the headline figures, the system's response gaps and the verdict rows; None
            for a Report built by hand without them.
        summary: the compact table of the terminal and the HTML page
            (:func:`turneval.reporting.summary.summary_rows`, made when the report is built).
    """

    conversation: ConversationFacts
    segments: list[list[list[float]]]
    events: Events
    statistics: Statistics
    full_duplex_timing: FullDuplexTiming
    backchannel_timing: BackchannelTiming
    judge: JudgeSection | None = None
    agreement: Agreement | None = None
    naturalness: Naturalness | None = None
    notes: list[str] = field(default_factory=list)
    settings: Settings | None = None
    models: Models = field(default_factory=Models)
    transcript: Transcript | None = None
    turn_end_judge: TurnEndJudgeSection | None = None
    headline: Headline | None = None
    summary: list[SummaryRow] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN and inf become None)."""
        body = {
            "schema_version": REPORT_SCHEMA_VERSION,
            "turneval_version": __version__,
            "conversation": self.conversation,
            "headline": self.headline,
            "summary": list(self.summary),
            "reference_values": reference_values(),
            "segments": self.segments,
            "events": self.events,
            "statistics": self.statistics,
            "full_duplex_timing": self.full_duplex_timing,
            "backchannel_timing": self.backchannel_timing,
            "judge": self.judge,
            "agreement": self.agreement,
            "naturalness": self.naturalness,
            "notes": list(self.notes),
            "settings": self.settings,
            "models": self.models,
            "transcript": self.transcript,
            "turn_end_judge": self.turn_end_judge,
        }
        return to_jsonable(body)

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def summary_rows(self) -> list[SummaryRow]:
        """The compact table of the terminal and the HTML page (see :func:`~turneval.reporting.summary.summary_rows`)."""
        return list(self.summary)


def report_schema() -> dict[str, Any]:
    """The JSON schema that every report.json validates against (``turneval/data/report.schema.json``)."""
    return json.loads(resources.files("turneval").joinpath("data/report.schema.json").read_text(encoding="utf-8"))
