"""turn_taking_questions: instance rules, balance, clip limits, the builder and the scoring harness."""
from __future__ import annotations

import math

import numpy as np
import pytest

from turneval.dataset_scripts.builders import (
    PROMPTS,
    QUESTION_TASKS,
    TurnTakingQuestions,
    question_instances,
    write_dialogue_manifest,
)
from turneval.dataset_scripts.builders.turn_taking_questions import prediction_events, understanding_windows
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.metrics.classification import balanced_accuracy
from turneval.metrics.turn_taking_questions import score_questions


CODE = {".": "NA", "b": "BC", "i": "I", "T": "T", "c": "C"}


def labels(text: str) -> list[str]:
    return [CODE[ch] for ch in text]


def test_prediction_events_follow_the_metric_rules():
    ev = prediction_events(labels("..Tccc..ccc...Tcc.iiTcc.iicc"))
    # speech then silence: resumed by the same speaker (C) at 8, by the other (T) at 14;
    # silences ended by an overlap (18, 24) are neither
    assert ev["predict_T"] == [(5, False), (10, True)]
    # overlap runs: 18-19 resolves to T (floor taken), 24-25 to C (floor kept)
    assert ev["predict_floor_taking"] == [(18, True), (24, False)]
    assert all(not ans for _, ans in ev["predict_BC"])
    with_bc = prediction_events(labels("Tcccbbccc"))
    assert (3, True) in with_bc["predict_BC"] and (2, False) in with_bc["predict_BC"]
    with_i = prediction_events(labels("Tccciiiccc"))
    assert (3, True) in with_i["predict_I"] and (1, False) in with_i["predict_I"]


def test_understanding_windows_tile_and_flag_events():
    win = understanding_windows(labels("TccccbbcccccciicTc"), clip_chunks=6, hop_chunks=6)
    assert win["understand_BC"] == [(0, 6, True), (6, 6, True), (12, 6, False)]
    assert [a for *_, a in win["understand_I"]] == [False, False, True]
    assert [a for *_, a in win["understand_T"]] == [True, False, True]
    assert understanding_windows(labels("Tcc"), 6, 6)["understand_T"] == [(0, 3, True)]


def test_instances_are_balanced_deterministic_and_length_limited():
    conv = labels(("..Tcccccbbcccccc..ccccc...." + "c" * 40 + "Tcccciicccc..Tcc.iiTcc") * 40)
    kwargs = dict(seed=1, max_per_class=5, understanding_clip_s=0.8, understanding_hop_s=0.4, prediction_clip_s=3.0)
    items = question_instances([("x", conv)], **kwargs)
    assert items == question_instances([("x", conv)], **kwargs)
    for task in QUESTION_TASKS:
        got = [it for it in items if it.task == task]
        assert sum(it.answer for it in got) == sum(not it.answer for it in got) > 0, task
        limit = 0.8 if task.startswith("understand") else 3.0
        assert all(0 < it.clip_end_s - it.clip_start_s <= limit + 1e-9 for it in got)
    with pytest.raises(ValueError, match="unknown question tasks"):
        question_instances([("x", conv)], tasks=("nope",))


def test_balanced_accuracy_and_score_questions():
    assert balanced_accuracy([True, True, False, False], [True, False, False, False]) == 0.75
    assert math.isnan(balanced_accuracy([True, True], [True, True]))
    rng = np.random.default_rng(0)
    items = [
        {"task": "predict_T", "prompt": PROMPTS["predict_T"], "answer": ans,
         "audio": (rng.standard_normal(1600) * (0.5 if ans else 0.01)).astype(np.float32)}
        for ans in [True, False] * 10
    ]
    loud = lambda audio, prompt: float(np.sqrt(np.mean(audio**2))) > 0.1  # noqa: E731
    assert score_questions(items, loud) == {"predict_T": 1.0}
    assert score_questions(items, lambda audio, prompt: True) == {"predict_T": 0.5}


def test_builder_writes_clips_with_prompts(tmp_path):
    from tests.test_perturbations import scripted_dialogue

    manifest = write_dialogue_manifest([scripted_dialogue("talk")], tmp_path / "src")
    builder = TurnTakingQuestions(cache_dir=str(tmp_path / "cache"), manifest=str(manifest), understanding_clip_s=10.0)
    builder.download_and_prepare()
    ds = builder.as_dataset()["train"]
    assert ds.num_rows > 0 and set(ds["task"]) <= set(QUESTION_TASKS)
    row = ds[0]
    assert row["prompt"] == PROMPTS[row["task"]]
    seen = []
    score = score_questions(ds, lambda audio, prompt: seen.append(len(audio)) or True)
    assert all(v == 0.5 for v in score.values())
    assert max(seen) <= 30 * SAMPLE_RATE
    assert seen[0] == int(round((row["clip_end_s"] - row["clip_start_s"]) * SAMPLE_RATE))
