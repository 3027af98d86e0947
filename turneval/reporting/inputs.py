"""The report's input: audio (a stereo file or two mono files), speech segments (VAD or an
annotation JSON) and the system channel, as one :class:`~turneval.dataset_scripts.dialogue.Dialogue`."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np

from turneval.bandwidth import input_sample_rates, prepare_band  # input rate and band (issue 12)
from turneval.dataset_scripts.audio import AudioError, audio_duration, load_stereo, load_two_mono
from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.readers._common import resolve_audio_reference
from turneval.dataset_scripts.vad import SileroVAD
from turneval.validation import read_annotation_data

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
    """The checked annotation dict, from any format turneval reads (:mod:`turneval.validation`)."""
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


def load_conversation(
    audio: str | Path | Dialogue | None = None,
    *,
    system_channel: int | None = 1,
    user_audio: str | Path | None = None,
    system_audio: str | Path | None = None,
    annotations: str | Path | None = None,
    vad_settings: Mapping[str, Any] | None = None,
    max_seconds: float | None = None,
    progress: bool = False,
    band_limit: str = "none",
) -> Dialogue:
    """The conversation as a :class:`Dialogue` with audio, speech segments and the system channel.

    Args:
        audio: a stereo file (one speaker per channel), an annotation JSON (its ``audio_path``
            is read, relative to the JSON), or a ready Dialogue.
        system_channel: which channel (0 or 1) is the system; None: the one a Dialogue or an
            annotation JSON names (``system_speaker``), else 1.
        user_audio, system_audio: two mono files instead of a stereo one.
        annotations: a turneval annotation JSON (``Dialogue.save_annotations``) whose segments
            (and words) are used instead of VAD.
        vad_settings: :class:`~turneval.dataset_scripts.vad.VADConfig` fields.
        max_seconds: refuse longer audio.
        progress: show a progress bar for the VAD pass.
        band_limit: "none", or "telephone" to low-pass every channel to the telephone band
            before VAD and the models (:mod:`turneval.bandwidth`).

    Raises:
        ReportError / AudioError: naming the file and the problem.
    """
    if system_channel not in (None, 0, 1):
        raise ReportError(f"system channel must be 0 or 1, got {system_channel!r}")
    if isinstance(audio, Dialogue):
        dialogue = audio
        if dialogue.audio is None and dialogue.audio_path:
            dialogue.audio = load_stereo(dialogue.audio_path, max_seconds=max_seconds, allow_silent=False)
        if dialogue.audio is not None and band_limit != "none":
            dialogue.audio, dialogue.metadata["bandwidth"] = prepare_band(dialogue.audio, [], band_limit)
        if system_channel is not None:
            dialogue.system_speaker = system_channel
        elif dialogue.system_speaker is None:
            dialogue.system_speaker = 1
        dialogue.metadata.setdefault("segments_source", "given")
        return dialogue
    if audio is not None and Path(audio).suffix.lower() == ".json" and annotations is None:
        annotations, audio = audio, None
    data = read_annotations(Path(annotations)) if annotations is not None else None
    input_notes: list[str] = []
    if system_channel is None:
        named = None if data is None else data.get("system_speaker")
        system_channel = named if named in (0, 1) else 1
    if user_audio is not None or system_audio is not None:
        if user_audio is None or system_audio is None:
            raise ReportError("give both --user and --system mono files (or one stereo file)")
        if audio is not None:
            raise ReportError("give either a stereo file or --user/--system mono files, not both")
        from turneval.validation import compare_mono_lengths

        input_notes = compare_mono_lengths(user_audio, system_audio)
        samples = load_two_mono(user_audio, system_audio, system_channel, max_seconds=max_seconds)
        source = {"user_audio": str(user_audio), "system_audio": str(system_audio)}
        name = Path(system_audio).stem
    else:
        if audio is None and data is not None and data.get("audio_path"):
            audio = annotation_audio(annotations, data)
        if audio is None:
            raise ReportError("no audio given: pass a stereo file, or --user A.wav --system B.wav")
        try:
            samples = load_stereo(audio, max_seconds=max_seconds, allow_silent=False)
        except AudioError as err:
            if "expected 2 channel(s), found" in str(err):
                raise AudioError(f"{err}; or give each speaker's mono file with --user A.wav --system B.wav") from None
            raise
        source = {"audio": str(audio)}
        name = Path(audio).stem

    samples, band = prepare_band(samples, input_sample_rates([p for k, p in source.items() if k.endswith("audio")]), band_limit)
    if data is not None:
        from turneval.validation import annotated_dialogue

        dialogue, more_notes = annotated_dialogue(data, annotations, samples, system_channel)
        input_notes += more_notes
        dialogue.metadata = {**dialogue.metadata, "segments_source": "annotations", "annotations": str(annotations)}
    else:
        segments, vad_info = vad_segments(samples, vad_settings, progress)
        dialogue = Dialogue(
            id=name,
            segments=segments,
            audio=samples,
            system_speaker=system_channel,
            metadata={"segments_source": "vad", "vad": vad_info},
        )
    dialogue.audio_path = source.get("audio")
    dialogue.metadata["source"] = source
    dialogue.metadata["bandwidth"] = band
    dialogue.metadata["input_notes"] = input_notes
    if not any(dialogue.segments):
        raise ReportError(f"{source.get('audio') or source['system_audio']}: no speech found in either channel; nothing to evaluate")
    return dialogue
