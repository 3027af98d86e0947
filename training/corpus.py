"""Find the training/evaluation dialogues of a recipe: a folder or a manifest.

A folder holds pairs ``NAME.json`` (turneval's annotation format, ``Dialogue.to_dict``) and
``NAME.wav`` / ``NAME.flac`` (stereo, 16 kHz, one speaker per channel), as written by
``turneval synth``. A manifest is a CSV with the columns ``annotations`` and ``audio`` (paths
relative to the manifest), as ``turneval synth`` writes it. Audio is not loaded here: trainers read the windows they need.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import soundfile as sf

from turneval.dataset_scripts.dialogue import Dialogue, DialogueError

AUDIO_SUFFIXES = (".wav", ".flac")


def _audio_beside(annotation: Path) -> Path:
    for suffix in AUDIO_SUFFIXES:
        candidate = annotation.with_suffix(suffix)
        if candidate.exists():
            return candidate
    raise DialogueError(f"{annotation}: no audio beside it (looked for {', '.join(AUDIO_SUFFIXES)})")


def load_annotated(annotation: Path, audio: Path | None = None) -> Dialogue:
    """One dialogue: annotations from JSON, audio path and duration from the audio file."""
    try:
        data = json.loads(annotation.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise DialogueError(f"{annotation}: cannot read annotations: {err}") from err
    audio = audio or _audio_beside(annotation)
    info = sf.info(str(audio))
    if info.channels != 2:
        raise DialogueError(f"{audio}: expected stereo audio (one speaker per channel), got {info.channels} channel(s)")
    data = dict(data, audio_path=str(audio), duration=info.frames / info.samplerate)
    return Dialogue.from_dict(data)


def load_corpus(path: str | Path) -> list[Dialogue]:
    """All dialogues of a folder or a manifest CSV, sorted by id."""
    path = Path(path)
    if path.is_dir():
        annotations = sorted(p for p in path.glob("*.json") if p.name != "manifest.json")
        dialogues = [load_annotated(p) for p in annotations if any(p.with_suffix(s).exists() for s in AUDIO_SUFFIXES)]
    elif path.suffix == ".csv":
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
        missing = {"annotations", "audio"} - set(rows[0] if rows else {})
        if missing:
            raise DialogueError(f"{path}:1: manifest needs the columns annotations and audio (missing {sorted(missing)})")
        dialogues = [load_annotated(path.parent / r["annotations"], path.parent / r["audio"]) for r in rows]
    else:
        raise DialogueError(f"{path}: expected a folder of NAME.json + NAME.wav pairs or a manifest .csv")
    if not dialogues:
        raise DialogueError(f"{path}: no annotated dialogues found")
    return sorted(dialogues, key=lambda d: d.id)
