"""turneval's own annotation JSON (``Dialogue.save_annotations``) and corpora of such files.

One annotation file holds ``Dialogue.to_dict()``; its ``audio_path`` may be relative to the
file (``turneval synth`` writes the bare audio file name). A corpus is either

- a folder of pairs ``NAME.json`` + ``NAME.wav`` / ``.flac`` / ``.ogg`` (stereo, one speaker
  per channel), as ``turneval synth`` writes it; JSON files without audio beside them are
  passed over; or
- a manifest ``.csv`` with the columns ``annotations`` and ``audio`` (paths relative to the
  manifest), as ``turneval synth`` writes it (``manifest.csv``).
"""
from __future__ import annotations

import csv
from pathlib import Path

from typing import Any

from ..dialogue import SPEAKERS, Dialogue, DialogueError
from ._common import PathLike, attach_audio, audio_beside, line_of, load_json, located, parse_span, resolve_audio_reference

MANIFEST_COLUMNS = ("annotations", "audio")
"""The columns a corpus manifest CSV needs (others, such as ``id`` or ``seed``, are ignored)."""


def _check_segments(value: Any, path: Path) -> list[list[list[float]]]:
    """``segments``: two lists (speakers A and B) of ``[start, end]`` pairs of numbers."""
    if not isinstance(value, list) or len(value) != 2 or not all(isinstance(s, list) for s in value):
        got = type(value).__name__ if not isinstance(value, list) else f"a list of {len(value)}"
        raise DialogueError(
            f"{path}:{line_of(value, 1)}: 'segments' must be two lists of [start, end] pairs in seconds "
            f"(speaker A, then speaker B), got {got}"
        )
    out = []
    for speaker, segs in enumerate(value):
        checked = []
        for seg in segs:
            line = line_of(seg, line_of(segs))
            if not isinstance(seg, list) or len(seg) != 2:
                raise DialogueError(f"{path}:{line}: speaker {SPEAKERS[speaker]}: a segment must be [start, end] in seconds, got {seg!r}")
            checked.append(list(parse_span(seg[0], seg[1], path, line)))
        out.append(checked)
    return out


def _check_words(value: Any, path: Path) -> list | None:
    """``words``: None, or two lists of ``[start, end, text]``."""
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2 or not all(isinstance(w, list) for w in value):
        raise DialogueError(f"{path}:{line_of(value, 1)}: 'words' must be null or two lists of [start, end, text] (speaker A, then B)")
    out = []
    for speaker, words in enumerate(value):
        checked = []
        for word in words:
            line = line_of(word, line_of(words))
            if not isinstance(word, list) or len(word) != 3 or not isinstance(word[2], str):
                raise DialogueError(f"{path}:{line}: speaker {SPEAKERS[speaker]}: a word must be [start, end, text], got {word!r}")
            checked.append([*parse_span(word[0], word[1], path, line), word[2]])
        out.append(checked)
    return out


def check_system_speaker(value: Any, path: Path) -> int | None:
    if value is None or (value in (0, 1) and not isinstance(value, bool)):
        return value
    raise DialogueError(f"{path}: system_speaker must be 0 or 1 (the system's channel) or null, got {value!r} (0 is the first channel, 1 the second); fix the file")


def checked_annotation_fields(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """The fields of an annotation JSON, each checked (errors name ``file:line`` and the field):
    ``id, segments, words, system_speaker, audio_path, metadata``, and ``duration`` when given."""
    audio_path = raw.get("audio_path")
    if audio_path is not None and not isinstance(audio_path, str):
        raise DialogueError(f"{path}: audio_path must be a file name, got {audio_path!r}")
    metadata = raw.get("metadata")
    out = {
        "id": str(raw.get("id") or path.stem),
        "segments": _check_segments(raw["segments"], path),
        "words": _check_words(raw.get("words"), path),
        "system_speaker": check_system_speaker(raw.get("system_speaker"), path),
        "audio_path": audio_path,
        "metadata": metadata if isinstance(metadata, dict) else {},
    }
    if raw.get("duration") is not None:
        out["duration"] = parse_span(0, raw["duration"], path, line_of(raw))[1]
    return out


def read_annotations(
    path: PathLike,
    *,
    audio: PathLike | None = None,
    load_audio: bool = True,
    require_audio: bool = False,
    resolve_audio_path: bool = True,
) -> Dialogue:
    """A Dialogue saved with :meth:`Dialogue.save_annotations`.

    Args:
        path: the annotation JSON.
        audio: the conversation's stereo audio file; default: the file's own ``audio_path``
            (a relative one is relative to the annotation file unless it exists from the
            current folder).
        load_audio: load the samples (16 kHz); otherwise only the path is kept and the
            duration is read from the audio header.
        require_audio: fail when no audio is named or the named file is missing; otherwise
            such a dialogue comes back without audio.
        resolve_audio_path: give the Dialogue the resolved audio path (usable from the current
            folder); False keeps the path as the annotation file writes it.

    When audio is found, the dialogue's duration is the audio's. A file that is not stereo
    is refused (one speaker per channel).
    """
    path = Path(path)
    data = load_json(path)
    for key in ("id", "segments"):
        if not isinstance(data, dict) or key not in data:
            raise located(path, getattr(data, "line", None), f"not a turneval annotation file (no {key!r})")
    data = checked_annotation_fields(data, path)
    named = audio if audio is not None else data.get("audio_path")
    if not named and require_audio:
        raise located(path, None, "names no audio file (audio_path is empty); pass the audio file")
    audio_file = None
    if named:
        audio_file = Path(named) if audio is not None else resolve_audio_reference(path, named)
        if not audio_file.is_file():
            if require_audio:
                raise located(path, None, f"its audio file {audio_file} is not there")
            audio_file = None
    array = None
    if audio_file is not None:
        array, audio_path, duration = attach_audio(path, audio_file, load_audio)
        data = dict(data, duration=duration, audio_path=audio_path if resolve_audio_path else str(named))
    try:
        return Dialogue.from_dict(data, audio=array)
    except (TypeError, ValueError) as err:
        raise located(path, None, str(err)) from err


def annotation_pairs(path: PathLike) -> list[tuple[Path, Path]]:
    """The ``(annotation, audio)`` file pairs of a corpus folder or manifest CSV.

    Raises:
        DialogueError: the path is neither a folder nor a ``.csv``, or the manifest lacks the
            ``annotations`` / ``audio`` columns or has an empty cell (named by line).
    """
    path = Path(path)
    if path.is_dir():
        pairs = []
        for annotation in sorted(path.glob("*.json")):
            audio = audio_beside(annotation)
            if audio is not None and annotation.name != "manifest.json":
                pairs.append((annotation, audio))
        return pairs
    if path.suffix.lower() != ".csv":
        raise DialogueError(f"{path}: expected a folder of NAME.json + NAME.wav pairs or a manifest .csv")
    if not path.is_file():
        raise DialogueError(f"{path}: file not found")
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in MANIFEST_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise located(path, 1, f"manifest needs the columns annotations and audio (missing {missing})")
        pairs = []
        for line, row in enumerate(reader, start=2):
            if not row["annotations"] or not row["audio"]:
                raise located(path, line, "empty annotations or audio cell")
            pairs.append((path.parent / row["annotations"], path.parent / row["audio"]))
    return pairs


def read_annotated_corpus(path: PathLike, *, load_audio: bool = False) -> list[Dialogue]:
    """All dialogues of a corpus folder or manifest CSV (module docstring), sorted by id.

    Each dialogue's ``audio_path`` is its audio file and its duration the audio's; samples
    are loaded only with ``load_audio=True`` (trainers read just the windows they need).
    """
    dialogues = [
        read_annotations(annotation, audio=audio, load_audio=load_audio, require_audio=True)
        for annotation, audio in annotation_pairs(path)
    ]
    if not dialogues:
        raise DialogueError(f"{path}: no annotated dialogues found")
    return sorted(dialogues, key=lambda d: d.id)
