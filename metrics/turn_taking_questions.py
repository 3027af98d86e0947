"""Scores of an audio foundation model on the turn_taking_questions benchmark (Talking Turns §5, A.5).

    >>> import numpy as np
    >>> items = [{"task": "predict_T", "prompt": "Will the other speaker talk next?", "answer": answer,
    ...           "audio": np.full(1600, 0.1 if answer else 0.0, dtype=np.float32)} for answer in (True, False)]
    >>> score_questions(items, lambda audio, prompt: bool(audio.any()))
    {'predict_T': 1.0}
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

import numpy as np

from turneval.dataset_scripts.builders.turn_taking_questions import question_audio

from .classification import balanced_accuracy


__all__ = ["score_questions"]


def score_questions(items: Iterable[Mapping[str, Any]], model: Callable[[np.ndarray, str], bool]) -> dict[str, float]:
    """Balanced accuracy per task (chance = 0.5) of ``model(mono_audio_16k, prompt) -> yes?`` over question items.

    Items are rows of the turn_taking_questions dataset (or dicts with ``task``, ``prompt``,
    ``answer`` and ``audio`` as an array, ``{"bytes": ...}`` or ``audio_path`` plus clip bounds).
    """
    answers: dict[str, list[bool]] = {}
    predictions: dict[str, list[bool]] = {}
    for item in items:
        task = item["task"]
        answers.setdefault(task, []).append(bool(item["answer"]))
        predictions.setdefault(task, []).append(bool(model(question_audio(item), item["prompt"])))
    return {task: balanced_accuracy(answers[task], predictions[task]) for task in answers}
