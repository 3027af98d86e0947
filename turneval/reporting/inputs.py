"""The report's input: audio (a stereo file or two mono files), speech segments (VAD or an
annotation JSON) and the system channel, as one :class:`~turneval.dataset_scripts.dialogue.Dialogue`."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np

from turneval.bandwidth import input_sample_rates, prepare_band  # input rate and band (issue 12)
from turneval.dataset_scripts.audio import AudioError, audio_duration, load_stereo, load_two_mono
from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.readers._common import resolve_audio_reference
from turneval.dataset_scripts.vad import SileroVAD
from turneval.input_checks import read_annotation_data

from .progress import progress_bar
from .result import ReportError


VAD_BLOCK_S = 30.0
"""Block length of the streamed VAD pass (also the progress bar's step)."""


def vad_segments(audio: np.ndarray, vad_settings: Mapping[str, Any] | None, progress: bool) -> tuple[list[list], dict]:
    """Speech segments of both channels, streamed block by block (exactly the whole-file result)."""
    vad = SileroVAD(**dict(vad_settings or {}))
    block = int(VAD_BLOCK_S * SAMPLE_RATE)
    starts = range(0, audio.shape[1], block)

    def blocks() -> Iterator[np.ndarray]:
        for start in progress_bar(starts, len(starts), "voice activity", progress and len(starts) > 1):
            yield audio[:, start : start + block]

    return vad.detect_speech_blocks(blocks(), n_channels=audio.shape[0]), vad.describe()


def read_annotations(path: Path) -> dict[str, Any]:
    """The checked annotation dict, from any format turneval reads (:mod:`turneval.input_checks`)."""
    return read_annotation_data(path)


def annotation_audio(annotations: str | Path, data: Mapping[str, Any]) -> Path:
    """The audio file an annotation JSON names (``audio_path``, relative to the JSON); it must exist."""
    audio = resolve_audio_reference(annotations, data["audio_path"])
    if not audio.is_file():
        raise ReportError(
            f"{annotations}: the audio file it names ({audio}) does not exist; fix its audio_path, "
            f"or name the audio: turneval report AUDIO --annotations {annotations}"
        )
    return audio


def check_inputs(
    audio: str | Path | Dialogue | None = None,
    *,
    user_audio: str | Path | None = None,
    system_audio: str | Path | None = None,
    annotations: str | Path | None = None,
    max_seconds: float | None = None,
) -> None:
    """The cheap checks of :func:`load_conversation`, made before any model loads: every file
    exists and is readable audio no longer than ``max_seconds``, an annotation JSON parses and
    the audio it names exists. Decoding, channel checks and VAD come later."""
    if isinstance(audio, Dialogue):
        return
    if audio is not None and Path(audio).suffix.lower() == ".json" and annotations is None:
        annotations, audio = audio, None
    data = read_annotations(Path(annotations)) if annotations is not None else None
    paths = [p for p in (user_audio, system_audio) if p is not None]
    if not paths and audio is None and data is not None and data.get("audio_path"):
        audio = annotation_audio(annotations, data)
    if not paths and audio is not None:
        paths = [audio]
    for path in paths:
        audio_duration(path, max_seconds=max_seconds)


@dataclass(frozen=True)
class ConversationInput:
    """Which conversation a report reads: a stereo file, an annotation JSON or a Dialogue, or two
    mono files; and which channel is the system (see :func:`turneval.reporting.report`)."""

    audio: str | Path | Dialogue | None = None
    system_channel: int | None = 1
    user_audio: str | Path | None = None
    system_audio: str | Path | None = None
    annotations: str | Path | None = None


@dataclass(frozen=True)
class InputSettings:
    """How the audio is read: VAD settings (:class:`~turneval.dataset_scripts.vad.VADConfig`
    fields), the longest audio taken, a progress bar for the VAD pass, and the band limit ("none",
    or "telephone" to low-pass every channel before VAD and the models, :mod:`turneval.bandwidth`)."""

    vad_settings: Mapping[str, Any] | None = None
    max_seconds: float | None = None
    progress: bool = False
    band_limit: str = "none"


@dataclass
class InputFacts:
    """What reading a conversation found out beside the Dialogue; report.json's ``conversation``
    and ``settings`` sections and the input notes come from here."""

    source: dict[str, str] = field(default_factory=dict)
    """The input files: ``audio``, or ``user_audio`` and ``system_audio`` (a given Dialogue's
    ``metadata["source"]``, if any)."""
    segments_source: str | None = None
    """"vad", "annotations" or "given" (a Dialogue's own segments)."""
    annotations: str | None = None
    vad: dict[str, Any] | None = None
    """The VAD's settings when it found the segments."""
    bandwidth: dict[str, Any] | None = None
    """The input sample rate and band (:func:`turneval.bandwidth.prepare_band`)."""
    notes: list[str] = field(default_factory=list)
    """What the input gives to note (two mono files of different lengths, annotation fixes)."""


def load_conversation(
    audio: str | Path | Dialogue | None = None,
    *,
    system_channel: int | None = 1,
    user_audio: str | Path | None = None,
    system_audio: str | Path | None = None,
    annotations: str | Path | None = None,
    settings: InputSettings | None = None,
) -> Dialogue:
    """The conversation as a :class:`Dialogue` with audio, speech segments and the system channel
    (:func:`read_conversation` without the facts; the arguments are :class:`ConversationInput`'s)."""
    source = ConversationInput(audio, system_channel, user_audio, system_audio, annotations)
    return read_conversation(source, settings or InputSettings())[0]


def read_conversation(source: ConversationInput, settings: InputSettings) -> tuple[Dialogue, InputFacts]:
    """The conversation as a :class:`Dialogue` with audio, speech segments and the system channel,
    and the :class:`InputFacts` of reading it.

    ``source.audio`` is a stereo file (one speaker per channel), an annotation JSON (its
    ``audio_path`` is read, relative to the JSON), or a ready Dialogue, which is copied, not
    changed; ``source.system_channel`` None takes the channel a Dialogue or an annotation JSON
    names (``system_speaker``), else 1. ``source.annotations``: a turneval annotation JSON whose
    segments (and words) are used instead of VAD.

    Raises:
        ReportError / AudioError: naming the file and the problem.
    """
    if source.system_channel not in (None, 0, 1):
        raise ReportError(f"system channel must be 0 or 1, got {source.system_channel!r}")
    if isinstance(source.audio, Dialogue):
        return _given_dialogue(source.audio, source.system_channel, settings)
    audio, annotations = source.audio, source.annotations
    if audio is not None and Path(audio).suffix.lower() == ".json" and annotations is None:
        annotations, audio = audio, None
    data = read_annotations(Path(annotations)) if annotations is not None else None
    system_channel = source.system_channel
    if system_channel is None:
        named = None if data is None else data.get("system_speaker")
        system_channel = named if named in (0, 1) else 1
    samples, facts, name = _read_audio(replace(source, audio=audio, annotations=annotations, system_channel=system_channel),
                                       data, settings.max_seconds)
    samples, facts.bandwidth = prepare_band(samples, input_sample_rates(list(facts.source.values())), settings.band_limit)
    if data is not None:
        from turneval.input_checks import annotated_dialogue

        dialogue, more_notes = annotated_dialogue(data, annotations, samples, system_channel)
        facts.notes += more_notes
        facts.segments_source, facts.annotations = "annotations", str(annotations)
    else:
        segments, facts.vad = vad_segments(samples, settings.vad_settings, settings.progress)
        dialogue = Dialogue(id=name, segments=segments, audio=samples, system_speaker=system_channel)
        facts.segments_source = "vad"
    dialogue.audio_path = facts.source.get("audio")
    if not any(dialogue.segments):
        raise ReportError(f"{facts.source.get('audio') or facts.source['system_audio']}: no speech found in either channel; nothing to evaluate")
    return dialogue, facts


def _given_dialogue(given: Dialogue, system_channel: int | None, settings: InputSettings) -> tuple[Dialogue, InputFacts]:
    """A copy of a ready Dialogue, its audio read (and band-limited) and its system channel set."""
    dialogue = replace(given, metadata=dict(given.metadata))
    facts = InputFacts(source=dict(given.metadata.get("source", {})), segments_source=given.metadata.get("segments_source", "given"),
                       vad=given.metadata.get("vad"), bandwidth=given.metadata.get("bandwidth"))
    if dialogue.audio is None and dialogue.audio_path:
        dialogue.audio = load_stereo(dialogue.audio_path, max_seconds=settings.max_seconds, allow_silent=False)
    if dialogue.audio is not None and settings.band_limit != "none":
        dialogue.audio, facts.bandwidth = prepare_band(dialogue.audio, [], settings.band_limit)
    if system_channel is not None:
        dialogue.system_speaker = system_channel
    elif dialogue.system_speaker is None:
        dialogue.system_speaker = 1
    return dialogue, facts


def _read_audio(source: ConversationInput, data: Mapping[str, Any] | None, max_seconds: float | None) -> tuple[np.ndarray, InputFacts, str]:
    """The samples of a stereo file or two mono files, the facts with the files named, and the
    conversation's name (the file stem)."""
    audio, user_audio, system_audio = source.audio, source.user_audio, source.system_audio
    if user_audio is not None or system_audio is not None:
        if user_audio is None or system_audio is None:
            raise ReportError("give both --user and --system mono files (or one stereo file)")
        if audio is not None:
            raise ReportError("give either a stereo file or --user/--system mono files, not both")
        from turneval.input_checks import compare_mono_lengths

        facts = InputFacts(source={"user_audio": str(user_audio), "system_audio": str(system_audio)},
                           notes=compare_mono_lengths(user_audio, system_audio))
        samples = load_two_mono(user_audio, system_audio, source.system_channel, max_seconds=max_seconds)
        return samples, facts, Path(system_audio).stem
    if audio is None and data is not None and data.get("audio_path"):
        audio = annotation_audio(source.annotations, data)
    if audio is None:
        raise ReportError("no audio given: pass a stereo file, or --user A.wav --system B.wav")
    try:
        samples = load_stereo(audio, max_seconds=max_seconds, allow_silent=False)
    except AudioError as err:
        if "expected 2 channel(s), found" in str(err):
            raise AudioError(f"{err}; or give each speaker's mono file with --user A.wav --system B.wav") from None
        raise
    return samples, InputFacts(source={"audio": str(audio)}), Path(audio).stem
