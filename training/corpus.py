"""Find the training/evaluation dialogues of a recipe: a folder or a manifest.

The corpus layouts (a folder of ``NAME.json`` + ``NAME.wav`` pairs, or the ``manifest.csv``
``turneval synth`` writes) are read by
:func:`turneval.dataset_scripts.readers.read_annotated_corpus`; a dialogue manifest
(``manifest.jsonl``, or a folder holding one, as the re-voiced Switchboard corpus and the
dataset builders use) by :func:`~turneval.dataset_scripts.builders.manifest.read_dialogue_manifest`.
This module names them for the training scripts. Audio is not loaded here: trainers read the
windows they need.
"""
from __future__ import annotations

from pathlib import Path

from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.readers import read_annotated_corpus


def load_corpus(path: str | Path) -> list[Dialogue]:
    """All dialogues of a folder, a manifest CSV or a dialogue manifest (``manifest.jsonl``),
    sorted by id; audio by path only.

    ``path`` may name several corpora separated by commas (a corpus built in parts, e.g. the
    re-voiced Switchboard train split's call ranges): their dialogues are pooled, and a
    dialogue id found in more than one part is kept once, from the first part that has it.
    """
    if isinstance(path, str) and "," in path:
        pooled: dict[str, Dialogue] = {}
        for part in filter(None, (p.strip() for p in path.split(","))):
            for dialogue in _load_one(part):
                pooled.setdefault(dialogue.id, dialogue)
        return sorted(pooled.values(), key=lambda d: d.id)
    return _load_one(path)


def _load_one(path: str | Path) -> list[Dialogue]:
    from turneval.dataset_scripts.builders.manifest import MANIFEST_NAME, read_dialogue_manifest

    path = Path(path)
    jsonl = path if path.suffix.lower() == ".jsonl" else path / MANIFEST_NAME
    if jsonl.is_file():
        return sorted((dialogue for _, dialogue in read_dialogue_manifest(jsonl)), key=lambda d: d.id)
    return read_annotated_corpus(path, load_audio=False)
