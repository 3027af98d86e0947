"""Helpers every reader shares: located errors, numbers, JSON with line numbers, audio.

Errors follow one pattern, ``file:line: problem`` (docs/formats.md), raised as DialogueError so the
CLI prints them without a traceback.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..audio import audio_duration, load_stereo
from ..dialogue import SPEAKERS, Dialogue, DialogueError, Segment, Word, normalize_segments
from ..files import read_json
from ..grids import SAMPLE_RATE
from ..vocabulary import NON_SPEECH_TOKENS


PathLike = str | Path



def located(path: PathLike, line: int | None, problem: str) -> DialogueError:
    """The error to raise for a problem at ``path:line`` (line None: the file as a whole)."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    return DialogueError(f"{where}: {problem}")


def read_lines(path: PathLike) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` for every line of a UTF-8 text file, newline stripped."""
    path = Path(path)
    if not path.is_file():
        raise DialogueError(f"{path}: file not found")
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise located(path, number, f"not valid UTF-8 text ({err.reason} at byte {err.start})") from err
            yield number, text.rstrip("\r\n")


def parse_time(token: Any, path: PathLike, line: int | None, what: str = "time") -> float:
    """A time in seconds: a finite number >= 0 (JSON number or text token)."""
    if isinstance(token, bool) or token is None:
        raise located(path, line, f"{what} must be a number of seconds, got {token!r}")
    try:
        value = float(token)
    except (TypeError, ValueError):
        raise located(path, line, f"{what} must be a number of seconds, got {token!r}") from None
    if not math.isfinite(value):
        raise located(path, line, f"{what} is not finite: {token!r}")
    if value < 0:
        raise located(path, line, f"{what} is negative: {token!r}")
    return value


def parse_span(start: Any, end: Any, path: PathLike, line: int | None) -> tuple[float, float]:
    """A ``(start, end)`` pair of times with ``end >= start``."""
    s = parse_time(start, path, line, "start time")
    e = parse_time(end, path, line, "end time")
    if e < s:
        raise located(path, line, f"end time {end} is before start time {start}")
    return s, e


def parse_speaker(token: Any, path: PathLike, line: int | None) -> int:
    """Speaker A/B (any case) or 0/1 as a channel index."""
    text = str(token).strip().upper()
    if text in ("A", "0"):
        return 0
    if text in ("B", "1"):
        return 1
    raise located(path, line, f"speaker must be A, B, 0 or 1, got {token!r}")


def is_speech_token(token: str, non_speech: Iterable[str] = NON_SPEECH_TOKENS) -> bool:
    """False for non-speech markers such as ``[silence]`` (case-insensitive)."""
    return token.strip().lower() not in non_speech and token.strip() != ""


def segments_from_words(words: Sequence[Word]) -> list[Segment]:
    """The union of the words' time spans (touching or overlapping words merge)."""
    return normalize_segments([(w.start, w.end) for w in words])


# -- JSON with line numbers ----------------------------------------------------------------
def load_json(path: PathLike) -> Any:
    """The readers' JSON: DialogueError naming ``file:line``, and objects and arrays know their
    line (see :func:`line_of`)."""
    return read_json(path, error=DialogueError, lined=True)


def line_of(node: Any, default: int | None = None) -> int | None:
    """The line a JSON object/array from :func:`load_json` starts on."""
    return getattr(node, "line", default)


def require(node: Any, key: str, path: PathLike, what: str) -> Any:
    """``node[key]`` of a JSON object, or a located error saying the key is missing."""
    if not isinstance(node, dict):
        raise located(path, line_of(node), f"{what} must be a JSON object, got {type(node).__name__}")
    if key not in node:
        raise located(path, line_of(node), f"{what} has no {key!r} field")
    return node[key]


def require_list(value: Any, path: PathLike, line: int | None, what: str) -> list:
    if not isinstance(value, list):
        raise located(path, line_of(value, line), f"{what} must be a JSON array, got {type(value).__name__}")
    return value


# -- audio beside annotations ----------------------------------------------------------------
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".opus", ".mp3")
"""Suffixes of the audio files readers accept (whatever libsndfile reads of these; MP3 since libsndfile 1.1)."""


def audio_beside(annotation_path: PathLike) -> Path | None:
    """``NAME.wav`` / ``.flac`` / ``.ogg`` / ``.opus`` / ``.mp3`` next to the annotation file ``NAME.*``, or None."""
    annotation_path = Path(annotation_path)
    for suffix in AUDIO_SUFFIXES:
        candidate = annotation_path.with_suffix(suffix)
        if candidate.is_file():
            return candidate
    return None


def attach_audio(
    annotation_path: PathLike,
    audio: PathLike | np.ndarray | None,
    load_audio: bool,
) -> tuple[np.ndarray | None, str | None, float | None]:
    """Resolve the ``audio`` argument of a reader.

    ``audio`` is a stereo file path (loaded at 16 kHz unless ``load_audio`` is False, in
    which case only its path and duration are kept), an array ``[2, n]`` at 16 kHz, or None.
    Returns ``(array or None, path or None, duration or None)``.
    """
    if audio is None:
        return None, None, None
    if isinstance(audio, np.ndarray):
        return audio, None, audio.shape[-1] / SAMPLE_RATE
    path = resolve_audio_reference(annotation_path, audio)
    if load_audio:
        array = load_stereo(path)
        return array, str(path), array.shape[1] / SAMPLE_RATE
    return None, str(path), audio_duration(path, channels=2)


def resolve_audio_reference(annotation_path: PathLike, audio: PathLike) -> Path:
    """Where an audio path named by an annotation file points.

    An absolute path, or one that exists from the current folder, is taken as it is; any
    other relative path is relative to the annotation file's folder.
    """
    path = Path(audio)
    if not path.is_absolute() and not path.exists():
        path = Path(annotation_path).parent / path
    return path


def check_fits_audio(
    segments: Sequence[Sequence[Segment]],
    duration: float | None,
    annotation_path: PathLike,
    audio_path: str | None,
    tolerance_s: float,
) -> None:
    """Refuse annotations that run past the end of their audio (a mismatched pair of files)."""
    if duration is None:
        return
    last = max((spk[-1][1] for spk in segments if spk), default=0.0)
    if last > duration + tolerance_s:
        raise located(
            annotation_path,
            None,
            f"speech runs to {last:.2f} s but the audio {audio_path or '(array)'} is only {duration:.2f} s long "
            "(wrong audio file?)",
        )


@dataclass(frozen=True)
class RecordingInput:
    """The recording a reader pairs with its annotations.

    ``audio`` is a stereo file path, an array ``[2, n]`` at 16 kHz, or None (see
    :func:`attach_audio`); ``load`` False keeps only a path's location and duration;
    annotations may run ``tolerance_s`` past the audio's end; ``duration`` is the dialogue's
    length when no audio gives one (e.g. the annotations' last end).
    """

    audio: PathLike | np.ndarray | None = None
    load: bool = True
    tolerance_s: float = 1.0
    duration: float | None = None


def build_dialogue(
    *,
    dialogue_id: str,
    segments: list[list[Segment]],
    words: list[list[Word]] | None,
    source: PathLike,
    format_name: str,
    recording: RecordingInput = RecordingInput(),
    system_speaker: int | None = None,
    metadata: dict[str, Any] | None = None,
) -> Dialogue:
    """Assemble a Dialogue with its audio (if any) and provenance metadata."""
    array, audio_path, audio_duration = attach_audio(source, recording.audio, recording.load)
    segments = [normalize_segments(s, f"{source}: speaker {SPEAKERS[i]}: ") for i, s in enumerate(segments)]
    check_fits_audio(segments, audio_duration, source, audio_path, recording.tolerance_s)
    meta = {"format": format_name, "source": str(source)}
    meta.update(metadata or {})
    return Dialogue(
        id=dialogue_id,
        segments=segments,
        words=words,
        audio=array,
        audio_path=audio_path,
        system_speaker=system_speaker,
        duration=audio_duration if audio_duration is not None else recording.duration,
        metadata=meta,
    )
