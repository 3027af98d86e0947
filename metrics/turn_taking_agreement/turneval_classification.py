# A copy of turneval.metrics.classification for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""Scores of a probabilistic classifier against labels: the tables the judge's papers report.

Talking Turns reports the judge's per-class one-vs-rest ROC-AUC and F1 (Tables 1 and 5, with
the F1 operating points tuned on validation data, §4.9); the VAP zero-shot events and the
turn-taking questions for audio foundation models use balanced accuracy. These are the single
owners of those rules in turneval: training, benchmarks, builders and reports call them.

    >>> import numpy as np
    >>> labels = np.array([0, 0, 1, 1, 2])
    >>> probs = np.array([[.8, .1, .1], [.6, .3, .1], [.3, .6, .1], [.4, .5, .1], [.1, .1, .8]])
    >>> roc_auc_table(labels, probs, ["A", "B", "C"])["overall"]
    1.0
    >>> f1_thresholds(labels, probs, 3).tolist()
    [0.6, 0.5, 0.8]
    >>> balanced_accuracy([True, True, False, False], [True, False, False, False])
    0.75
    >>> balanced_accuracy_threshold([1, 1, 0, 0], [0.9, 0.4, 0.3, 0.1])
    0.4
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np


__all__ = ["balanced_accuracy", "balanced_accuracy_threshold", "f1_table", "f1_thresholds", "roc_auc_table"]


def _macro(table: dict[str, float]) -> float:
    present = [v for v in table.values() if not math.isnan(v)]
    return float(np.mean(present)) if present else math.nan


def roc_auc_table(labels: np.ndarray, probs: np.ndarray, label_names: Sequence[str]) -> dict[str, float]:
    """One-vs-rest ROC-AUC per class (NaN when a class is absent or alone) and their macro mean ``overall``.

    Args:
        labels: ``[n]`` class indices.
        probs: ``[n, n_classes]`` scores (probabilities or logits: only their order matters).
        label_names: one name per class, the keys of the table.
    """
    from sklearn.metrics import roc_auc_score

    labels = np.asarray(labels)
    probs = np.asarray(probs, dtype=np.float64)
    table: dict[str, float] = {}
    for k, name in enumerate(label_names):
        positive = labels == k
        table[name] = float(roc_auc_score(positive, probs[:, k])) if 0 < positive.sum() < len(labels) else math.nan
    table["overall"] = _macro(table)
    return table


def f1_thresholds(labels: np.ndarray, probs: np.ndarray, n_classes: int) -> np.ndarray:
    """Per-class operating points maximising one-vs-rest F1 (a chunk is positive when p >= threshold).

    Candidates are the distinct probabilities of the class, so the optimum is exact; a class
    absent from ``labels`` gets threshold 1.0.
    """
    labels = np.asarray(labels)
    probs = np.asarray(probs, dtype=np.float64)
    thresholds = np.ones(n_classes)
    for k in range(n_classes):
        positive = labels == k
        n_pos = int(positive.sum())
        if n_pos == 0:
            continue
        order = np.argsort(-probs[:, k], kind="stable")
        scores, hits = probs[order, k], positive[order].astype(np.int64)
        tp, fp = np.cumsum(hits), np.cumsum(1 - hits)
        # only the last index of each run of equal scores is a valid cut (>= keeps ties together)
        last = np.r_[scores[1:] != scores[:-1], True]
        f1 = 2 * tp[last] / (tp[last] + fp[last] + n_pos)
        thresholds[k] = scores[last][int(np.argmax(f1))]
    return thresholds


def f1_table(labels: np.ndarray, probs: np.ndarray, thresholds: np.ndarray, label_names: Sequence[str]) -> dict[str, float]:
    """One-vs-rest F1 per class at the given operating points, and the macro mean ``overall``."""
    from sklearn.metrics import f1_score

    labels = np.asarray(labels)
    probs = np.asarray(probs, dtype=np.float64)
    table = {}
    for k, name in enumerate(label_names):
        positive = labels == k
        table[name] = float(f1_score(positive, probs[:, k] >= thresholds[k], zero_division=0.0)) if positive.any() else math.nan
    table["overall"] = _macro(table)
    return table


def balanced_accuracy(answers: Sequence[bool], predictions: Sequence[bool]) -> float:
    """Mean of the true-positive and true-negative rates; NaN when ``answers`` hold one class only
    (scikit-learn would then report the one rate it has, which reads like a real score)."""
    from sklearn.metrics import balanced_accuracy_score

    answers, predictions = np.asarray(answers, dtype=bool), np.asarray(predictions, dtype=bool)
    if not answers.any() or answers.all():
        return math.nan
    return float(balanced_accuracy_score(answers, predictions))


def balanced_accuracy_threshold(labels: Sequence[int], scores: Sequence[float]) -> float:
    """The operating point (positive when ``score >= threshold``) with the highest balanced accuracy.

    VAP tunes its zero-shot thresholds this way on validation data before scoring the test
    split. Youden's J over the ROC curve: balanced accuracy is ``(TPR + 1 - FPR) / 2``. NaN when
    ``labels`` hold one class only.
    """
    from sklearn.metrics import roc_curve

    labels, scores = np.asarray(labels, dtype=int), np.asarray(scores, dtype=np.float64)
    if labels.size == 0 or labels.min() == labels.max():
        return math.nan
    fpr, tpr, thresholds = roc_curve(labels, scores)
    best = int(np.argmax(tpr - fpr))
    # roc_curve's first threshold is +inf (nothing positive): then just above the highest score
    return float(thresholds[best]) if np.isfinite(thresholds[best]) else float(np.nextafter(scores.max(), np.inf))
