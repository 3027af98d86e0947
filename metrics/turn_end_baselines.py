"""Logistic-regression baselines for turn-end decisions (shift vs hold after a pause).

The anchors that a turn-end model (the judge, the future-activity predictor, smart-turn) has
to beat on the same decisions (:mod:`turneval.dataset_scripts.turn_end_decisions`). Each
baseline is a scikit-learn logistic regression on one feature set:

==============  =====================================================================
feature set     features
==============  =====================================================================
timing          IPU length, turn length, time since the partner's last IPU ended and
                that IPU's length (+ "partner has not spoken yet")
timing+words    timing, plus the IPU's last two words
text            the IPU's last two words and first word, plus its length
==============  =====================================================================

Durations enter as ``log(1 + seconds)`` (they are heavy-tailed: a turn can last minutes),
standardised; words as one-hot indicators per position (``last1`` is the final word,
``last2`` the one before it, ``first`` the first), words seen fewer than ``min_word_count``
times in training are dropped. Positive class: shift.

Example:

>>> from turneval.dataset_scripts.turn_end_decisions import TurnEndDecision
>>> def d(ipu, shift, word):
...     return TurnEndDecision("x", 0, 10.0, ipu, ipu, 1.0, 0.5, ("well", word), "so", shift, 0.5)
>>> train = [d(0.5, False, "and"), d(0.6, False, "and"), d(2.5, True, "know"), d(3.0, True, "know")] * 5
>>> test = [d(0.4, False, "and"), d(2.8, True, "know")]
>>> results = fit_baselines(train, test, feature_sets=("timing", "text"), min_word_count=1)
>>> results["timing"]["roc_auc"], results["text"]["roc_auc"], results["text"]["shift_rate_test"]
(1.0, 1.0, 0.5)
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..dataset_scripts.turn_end_decisions import TurnEndDecision


FEATURE_SETS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "timing": (("ipu_duration", "turn_duration", "partner_since", "partner_ipu_duration"), ()),
    "timing+words": (("ipu_duration", "turn_duration", "partner_since", "partner_ipu_duration"), ("last1", "last2")),
    "text": (("ipu_duration",), ("last1", "last2", "first")),
}
"""Feature set -> (duration features, word positions)."""

ANCHORS: dict[str, tuple[float, str]] = {
    "timing": (0.667, "issue 14: timing-only logistic regression, 600 train / 200 test calls"),
    "timing+words": (0.789, "issue 14: the same features with the last words"),
    "text": (0.79, "issue 13: text only (last two words, first word, IPU length), 27 % shifts"),
}
"""The ROC-AUC each baseline reached when the issues were written (same call counts)."""


def _durations(decision: TurnEndDecision, names: Sequence[str]) -> list[float]:
    row = []
    for name in names:
        value = getattr(decision, name)
        row.append(math.log1p(value) if value is not None else 0.0)
    if "partner_since" in names:
        row.append(1.0 if decision.partner_since is None else 0.0)  # the partner has not spoken yet
    return row


def _words(decision: TurnEndDecision, positions: Sequence[str]) -> dict[str, float]:
    found = {
        "last1": decision.last_words[-1] if decision.last_words else "",
        "last2": decision.last_words[-2] if len(decision.last_words) > 1 else "",
        "first": decision.first_word,
    }
    return {f"{p}={found[p]}": 1.0 for p in positions}


def _matrix(decisions: Sequence[TurnEndDecision], names: Sequence[str]) -> np.ndarray:
    return np.asarray([_durations(d, names) for d in decisions], dtype=np.float64).reshape(len(decisions), -1)


def fit_baseline(
    train: Sequence[TurnEndDecision],
    test: Sequence[TurnEndDecision],
    feature_set: str,
    *,
    min_word_count: int = 2,
    c: float = 1.0,
    seed: int = 0,
) -> dict[str, Any]:
    """Train one baseline on ``train`` and score ``test``.

    Returns ``{"feature_set", "roc_auc", "n_train", "n_test", "shift_rate_train",
    "shift_rate_test", "n_features", "scores"}``; ``scores`` are P(shift) per test decision,
    in order, so a caller can compare them with its own model on the same decisions.
    """
    from scipy import sparse
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.preprocessing import StandardScaler

    if feature_set not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {feature_set!r}; choose from {tuple(FEATURE_SETS)}")
    y_train = np.asarray([d.shift for d in train], dtype=int)
    y_test = np.asarray([d.shift for d in test], dtype=int)
    if len(set(y_train)) < 2:
        raise ValueError(f"the training decisions need both shifts and holds (got {len(train)} decisions, {int(y_train.sum())} shifts)")
    names, positions = FEATURE_SETS[feature_set]
    scaler = StandardScaler()
    parts_train = [sparse.csr_matrix(scaler.fit_transform(_matrix(train, names)))]
    parts_test = [sparse.csr_matrix(scaler.transform(_matrix(test, names)))]
    if positions:
        counts: dict[str, int] = {}
        for d in train:
            for key in _words(d, positions):
                counts[key] = counts.get(key, 0) + 1
        keep = {k for k, n in counts.items() if n >= min_word_count}  # rare words: noise, not signal
        vectorizer = DictVectorizer()
        vectorizer.fit([dict.fromkeys(keep, 1.0)] or [{}])
        parts_train.append(vectorizer.transform([_words(d, positions) for d in train]))
        parts_test.append(vectorizer.transform([_words(d, positions) for d in test]))
    x_train, x_test = sparse.hstack(parts_train).tocsr(), sparse.hstack(parts_test).tocsr()
    model = LogisticRegression(C=c, max_iter=2000, random_state=seed)
    model.fit(x_train, y_train)
    scores = model.predict_proba(x_test)[:, 1] if len(test) else np.zeros(0)
    auc = float(roc_auc_score(y_test, scores)) if len(set(y_test)) == 2 else float("nan")
    return {
        "feature_set": feature_set,
        "roc_auc": auc,
        "n_train": len(train),
        "n_test": len(test),
        "shift_rate_train": float(y_train.mean()),
        "shift_rate_test": float(y_test.mean()) if len(test) else float("nan"),
        "n_features": int(x_train.shape[1]),
        "scores": scores.tolist(),
    }


def fit_baselines(
    train: Sequence[TurnEndDecision],
    test: Sequence[TurnEndDecision],
    feature_sets: Sequence[str] = tuple(FEATURE_SETS),
    **kwargs: Any,
) -> dict[str, dict[str, Any]]:
    """:func:`fit_baseline` for each feature set (default: all three), by name."""
    return {name: fit_baseline(train, test, name, **kwargs) for name in feature_sets}


__all__ = ["ANCHORS", "FEATURE_SETS", "fit_baseline", "fit_baselines"]
