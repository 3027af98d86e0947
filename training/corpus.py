"""Find the training/evaluation dialogues of a recipe: a folder or a manifest.

The corpus layouts (a folder of ``NAME.json`` + ``NAME.wav`` pairs, or the ``manifest.csv``
``turneval synth`` writes) are read by
:func:`turneval.dataset_scripts.readers.read_annotated_corpus`; this module names it for
the training scripts. Audio is not loaded here: trainers read the windows they need.
"""
from __future__ import annotations

from pathlib import Path

from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.readers import read_annotated_corpus


def load_corpus(path: str | Path) -> list[Dialogue]:
    """All dialogues of a folder or a manifest CSV, sorted by id; audio by path only."""
    return read_annotated_corpus(path, load_audio=False)
