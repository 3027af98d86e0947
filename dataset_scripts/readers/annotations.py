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

from ..dialogue import Dialogue, DialogueError
from ._common import PathLike, attach_audio, audio_beside, load_json, located, resolve_audio_reference

MANIFEST_COLUMNS = ("annotations", "audio")
"""The columns a corpus manifest CSV needs (others, such as ``id`` or ``seed``, are ignored)."""


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
