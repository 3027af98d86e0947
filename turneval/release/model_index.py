"""The ``model-index`` metadata of each released model card, built from its ``provenance.json``.

The figures are the checkpoint's own record (``measured`` of ``provenance.json``, the file the
report reads too), never typed here: this table only says which of them a card's metadata
shows (real speech first) and how the Hub should label them. A figure is found by the start
of its name in ``measured``; a figure that is missing fails the release naming the file.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .plan import ReleaseError


@dataclass(frozen=True)
class Figure:
    """One result row: the start of its name in ``measured``, and how the Hub card labels it."""

    measured: str
    task: str
    dataset: str
    dataset_type: str
    metric: str
    metric_type: str = "roc_auc"
    split: str = "test"


PAUSE = "Does the other party take the turn at a pause (metrics (a)/(d))"
RANKING = "Rank a natural conversation above its perturbed copy (TurnNat)"

FIGURES: dict[str, tuple[Figure, ...]] = {
    "turn_taking_judge_swb_revoiced": (
        Figure("pause decision ROC-AUC (a)/(d), Harper Valley calls, corpus left out", PAUSE,
               "Harper Valley Bank, 6 real phone calls, 92 pause decisions (the rule fitted on the other two corpora)",
               "harper_valley", "ROC-AUC", split="dev"),
        Figure("pause decision ROC-AUC (a)/(d), SpokenWOZ calls, corpus left out", PAUSE,
               "SpokenWOZ, 3 real phone calls, 98 pause decisions (the rule fitted on the other two corpora)",
               "spokenwoz", "ROC-AUC", split="dev"),
        Figure("pause decision ROC-AUC (a)/(d), AMI ES2004a channel pairs, corpus left out", PAUSE,
               "AMI ES2004a channel pairs, 58 pause decisions, 5 shifts (the rule fitted on the other two corpora)", "ami", "ROC-AUC",
               split="dev"),
        Figure("ROC-AUC macro, re-voiced Switchboard test", "Next-chunk turn-taking label (NA, BC, I, T, C), 40 ms chunks",
               "re-voiced Switchboard test (held-out calls and voices; real timing, synthetic sound)", "revoiced-switchboard",
               "ROC-AUC macro, one-vs-rest"),
    ),
    "future_activity_predictor_lookahead": (
        Figure("real-call perturbations on audio (SpokenWOZ + AMI", RANKING,
               "real calls' audio with TurnNat's edits cut in (SpokenWOZ, AMI), 111 pairs", "real-call-perturbations",
               "original ranked first", metric_type="accuracy"),
        Figure("perturbation pairwise accuracy, Switchboard test", RANKING,
               "Switchboard test, real timing (no sound), 385 pairs", "switchboard", "pairwise accuracy", metric_type="accuracy"),
    ),
    "future_activity_predictor_words": (
        Figure("real-call perturbations on audio (SpokenWOZ + AMI, 111 pairs; Silero VAD on the telephone band), SpokenWOZ transcripts",
               RANKING, "real calls' audio with TurnNat's edits cut in, reading the SpokenWOZ transcripts, 111 pairs",
               "real-call-perturbations", "original ranked first", metric_type="accuracy"),
        Figure("real-call perturbations on audio with Whisper tiny.en's words", RANKING,
               "real calls' audio with TurnNat's edits cut in, reading Whisper tiny.en's words, 123 pairs",
               "real-call-perturbations", "original ranked first", metric_type="accuracy"),
        Figure("perturbation pairwise accuracy, Switchboard test (385 pairs from 100 calls), reading the words", RANKING,
               "Switchboard test, real timing and words (no sound), 385 pairs", "switchboard", "pairwise accuracy",
               metric_type="accuracy"),
    ),
}
"""Released model -> the figures its card's ``model-index`` shows, real speech first."""


def measured_value(measured: dict[str, Any], prefix: str, source: Path) -> float:
    """The one figure of ``measured`` whose name starts with ``prefix``; raises naming ``source``."""
    hits = [name for name in measured if name.startswith(prefix)]
    if len(hits) != 1:
        what = "no figure" if not hits else f"{len(hits)} figures ({'; '.join(hits)})"
        raise ReleaseError(f"{source}: {what} named '{prefix}...' in 'measured'; update turneval/release/model_index.py to the figure's name")
    value = measured[hits[0]]
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ReleaseError(f"{source}: measured[{hits[0]!r}] is {value!r}, not a number")
    return float(value)


def model_index(name: str, provenance: Path) -> list[dict[str, Any]]:
    """The ``model-index`` of a released model: one result per figure of :data:`FIGURES`."""
    import json

    measured = json.loads(provenance.read_text(encoding="utf-8")).get("measured", {})
    results = []
    for fig in FIGURES[name]:
        value = measured_value(measured, fig.measured, provenance)
        results.append({
            "task": {"type": "audio-classification", "name": fig.task},
            "dataset": {"type": fig.dataset_type, "name": fig.dataset, "split": fig.split},
            "metrics": [{"type": fig.metric_type, "name": fig.metric, "value": value}],
        })
    return [{"name": name, "results": results}]
