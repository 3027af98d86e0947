"""Dialogue manifests: the input of the dataset builders.

A manifest is a JSON Lines file with one dialogue per line, in the form
``Dialogue.to_dict()`` writes (``id``, ``duration``, ``segments``, ``words``,
``audio_path``, ``system_speaker``, ``metadata``) plus an optional ``split`` (default
``"train"``). Audio is referenced by path (relative paths are relative to the manifest),
never stored inline, so a builder config stays small and hashable.

Any reader's Dialogues become a manifest with :func:`write_dialogue_manifest`. The
``manifest.csv`` of an annotated corpus (as ``turneval synth`` writes it) is read too, with
every dialogue in split ``"train"``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator

import datasets

from ..audio import load_stereo, write_audio
from ..dialogue import Dialogue, DialogueError
from ..files import atomic_write_text, parse_json
from ..grids import SAMPLE_RATE
from ..readers.annotations import read_annotated_corpus


MANIFEST_NAME = "manifest.jsonl"
"""The file a builder looks for when it is given a ``data_dir``."""

CSV_SPLIT = "train"
"""The split of every dialogue of an annotated-corpus manifest CSV (it has no split column)."""


def write_dialogue_manifest(
    dialogues: Iterable[Dialogue],
    path: str | Path,
    *,
    split: str | dict[str, str] = "train",
    audio_dir: str | Path | None = None,
) -> Path:
    """Write dialogues as a manifest; in-memory audio without a usable path is saved as WAV.

    Audio paths are stored absolute. A dialogue whose ``audio_path`` does not resolve from
    the current folder (e.g. relative to its annotation file) but whose audio is loaded gets
    its audio written under ``audio_dir``.

    Args:
        dialogues: the conversations (from any reader or the synthetic generator).
        path: the manifest file (or a folder, which gets ``manifest.jsonl``).
        split: one split name for all, or a mapping dialogue id -> split.
        audio_dir: where in-memory audio is written (default: ``<manifest dir>/audio``).

    Returns:
        The manifest path.
    """
    path = Path(path)
    if path.suffix != ".jsonl":
        path = path / MANIFEST_NAME
    audio_dir = Path(audio_dir) if audio_dir is not None else path.parent / "audio"
    lines = []
    for dialogue in dialogues:
        row = dialogue.to_dict()
        if row.get("audio_path") and Path(row["audio_path"]).is_file():
            row["audio_path"] = str(Path(row["audio_path"]).resolve())
        elif row.get("audio_path") and dialogue.audio is None:
            raise DialogueError(
                f"dialogue {dialogue.id!r}: audio_path {row['audio_path']!r} is not a file here and no audio is "
                "loaded; give an absolute path or load the audio"
            )
        else:  # no usable path (none, or relative to some other folder): write the loaded audio
            row["audio_path"] = None
        if not row.get("audio_path") and dialogue.audio is not None:
            audio_dir.mkdir(parents=True, exist_ok=True)
            target = audio_dir / f"{dialogue.id}.wav"
            write_audio(target, dialogue.audio, SAMPLE_RATE, subtype="FLOAT")
            row["audio_path"] = str(target.resolve())
        row["split"] = split if isinstance(split, str) else split.get(dialogue.id, "train")
        lines.append(json.dumps(row))
    atomic_write_text(path, "\n".join(lines) + ("\n" if lines else ""))
    return path


def resolve_manifest(manifest: str | Path | None = None, data_dir: str | Path | None = None) -> Path:
    """The manifest file named by a builder config (``manifest`` or ``data_dir``)."""
    if manifest is None and data_dir is None:
        raise ValueError("give the builder a dialogue manifest: manifest='.../manifest.jsonl' or data_dir='...'")
    path = Path(manifest) if manifest is not None else Path(data_dir) / MANIFEST_NAME
    if path.is_dir():
        path = path / MANIFEST_NAME
    if not path.is_file():
        raise FileNotFoundError(f"dialogue manifest {path} not found (write one with write_dialogue_manifest)")
    return path


def read_dialogue_manifest(path: str | Path, split: str | None = None) -> Iterator[tuple[str, Dialogue]]:
    """Yield (split, Dialogue) for each line, audio not loaded; errors name file:line.

    A ``.csv`` is read as an annotated-corpus manifest (``turneval synth``'s ``manifest.csv``,
    columns ``annotations`` and ``audio``; see
    :func:`~turneval.dataset_scripts.readers.read_annotated_corpus`): all its dialogues are in
    split ``"train"``.
    """
    path = Path(path)
    if path.suffix.lower() == ".csv":
        if split in (None, CSV_SPLIT):
            for dialogue in read_annotated_corpus(path, load_audio=False):
                yield CSV_SPLIT, dialogue
        return
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            row = parse_json(line, path, first_line=lineno, error=DialogueError)
            if not isinstance(row, dict) or "id" not in row or "segments" not in row:
                raise DialogueError(f"{where}: each line needs at least 'id' and 'segments'")
            row_split = str(row.pop("split", "train"))
            if split is not None and row_split != split:
                continue
            audio_path = row.get("audio_path")
            if audio_path and not Path(audio_path).is_absolute():
                row["audio_path"] = str((path.parent / audio_path).resolve())
            try:
                dialogue = Dialogue.from_dict(row)
            except (DialogueError, TypeError, ValueError) as err:
                raise DialogueError(f"{where}: {err}") from None
            yield row_split, dialogue


def manifest_splits(path: str | Path) -> list[str]:
    """Split names present in a manifest, in first-seen order."""
    seen: dict[str, None] = {}
    for split, _ in read_dialogue_manifest(path):
        seen.setdefault(split, None)
    return list(seen)


def manifest_split_generators(
    manifest: str | Path | None = None, data_dir: str | Path | None = None
) -> list[datasets.SplitGenerator]:
    """One SplitGenerator per split of a builder config's manifest (``gen_kwargs``: manifest, split)."""
    path = resolve_manifest(manifest, data_dir)
    return [datasets.SplitGenerator(name=s, gen_kwargs={"manifest": str(path), "split": s}) for s in manifest_splits(path)]


def with_audio(dialogue: Dialogue) -> Dialogue:
    """The dialogue with its audio loaded from ``audio_path`` (unchanged if already loaded).

    The file must have two channels, one speaker each (:func:`~turneval.dataset_scripts.audio.load_stereo`).
    """
    if dialogue.audio is not None:
        return dialogue
    if not dialogue.audio_path:
        raise DialogueError(f"dialogue {dialogue.id!r} has neither audio nor audio_path")
    data = dialogue.to_dict()
    return Dialogue.from_dict(data, audio=load_stereo(dialogue.audio_path))
