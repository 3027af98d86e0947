"""A transformers pipeline task for the TurnTakingJudge: ``"turn-taking-judgement"``.

    >>> import turneval.pipelines                                   # doctest: +SKIP
    >>> from transformers import pipeline
    >>> judge = pipeline("turn-taking-judgement", model="checkpoints/turn_taking_judge_swb_revoiced")
    >>> rows = judge("call.wav")              # or a float array (16 kHz), or {"array", "sampling_rate"}
    >>> rows[0]
    {'chunk': 1, 'time': 0.04, 'label': 'C', 'scores': {'NA': ..., 'BC': ..., 'I': ..., 'T': ..., 'C': ...}}

Each row is the judge's distribution over the label of one 40 ms chunk, predicted from the
audio that precedes it (``time`` is the chunk's start in seconds), and its most likely label.
Importing this module registers the task; nothing else in turneval needs it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from transformers import AutoModel, Pipeline
from transformers.pipelines import PIPELINE_REGISTRY

import turneval.modeling  # noqa: F401  (registers the judge with AutoModel)
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.audio import load_audio, mono_mix, resample

TASK = "turn-taking-judgement"


class TurnTakingJudgementPipeline(Pipeline):
    """Per-chunk turn-taking label probabilities of a whole conversation (mono mix)."""

    def _sanitize_parameters(self, **kwargs: Any) -> tuple[dict, dict, dict]:
        forward = {"batch_size": kwargs["judge_batch_size"]} if "judge_batch_size" in kwargs else {}
        return {}, forward, {}

    def preprocess(self, inputs: Any) -> dict[str, Any]:
        """A file path, a float array (16 kHz, mono or [channels, n]) or {"array", "sampling_rate"}."""
        if isinstance(inputs, (str, Path)):
            audio, _ = load_audio(inputs)
        elif isinstance(inputs, dict):
            if "array" not in inputs or "sampling_rate" not in inputs:
                raise ValueError("an audio dict needs 'array' and 'sampling_rate'")
            audio = np.asarray(inputs["array"], dtype=np.float32)
            if int(inputs["sampling_rate"]) != SAMPLE_RATE:
                audio = resample(audio if audio.ndim == 2 else audio[None], int(inputs["sampling_rate"]), SAMPLE_RATE)
        else:
            audio = np.asarray(inputs, dtype=np.float32)
        return {"audio": mono_mix(audio)}

    def _forward(self, model_inputs: dict[str, Any], batch_size: int = 8) -> dict[str, Any]:
        return {"scores": self.model.score(model_inputs["audio"], sample_rate=SAMPLE_RATE, batch_size=batch_size)}

    def postprocess(self, model_outputs: dict[str, Any]) -> list[dict[str, Any]]:
        scores = model_outputs["scores"]
        names = list(scores.label_names)
        return [
            {
                "chunk": k + 1,
                "time": float(time),
                "label": names[int(np.argmax(row))],
                "scores": {name: float(p) for name, p in zip(names, row)},
            }
            for k, (time, row) in enumerate(zip(scores.chunk_times, scores.probabilities))
        ]


PIPELINE_REGISTRY.register_pipeline(TASK, pipeline_class=TurnTakingJudgementPipeline, pt_model=AutoModel, type="audio")

__all__ = ["TASK", "TurnTakingJudgementPipeline"]
