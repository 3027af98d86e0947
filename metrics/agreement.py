"""Turn-taking agreement between a judge and the decisions taken (Talking Turns §4.3-4.9, A.8).

The judge (``TurnTakingJudge``) gives, for every 40 ms chunk, a distribution over
``(NA, BC, I, T, C)``. At each evaluation instance (built by
``turneval.dataset_scripts.agreement_instances``) one party took a turn-taking decision; the
judge *labels* the instance with a thresholded score (Talking Turns Eq. 2-5):

=======  ===================  ===========  =================
metric   score                judge says   default threshold
=======  ===================  ===========  =================
(a)      p_T - p_C            T if > th_a  th_a = 0
(b)      p_BC                 BC if > th_b th_b = 0.1
(c)      p_I - p_C            I if > th_c  th_c = -0.45
(d)      p_T - p_C            T if > th_a  th_a (shared with a)
(e)      p_T - p_C            T if > th_e  th_e = -0.1
=======  ===================  ===========  =================

and otherwise ``C``. *Agreement* is the share of instances where the judge's label equals the
decision actually taken, reported separately per decision (e.g. for (a): when the system spoke
up, and when it let the user continue), pooled over instances and as the mean over sessions
with a 95 % interval ``mean +- 1.96 sd / sqrt(n_sessions)``.

Also here: the occurrence rates of Table 2 (share of instances that took the positive
decision), the threshold sensitivity sweep of §A.8 (margin of error ``1.96 sd / sqrt(n)`` of
the agreement over the threshold grid), and the single-label confusion matrix of §4.9 with
argmax or per-class operating points.

Example:

    >>> from turneval.metrics.agreement import agreement
    >>> instances = [
    ...     {"metric": "a", "decision": "T", "probs": [0.1, 0.0, 0.0, 0.6, 0.3], "session": "s1"},
    ...     {"metric": "a", "decision": "C", "probs": [0.1, 0.0, 0.0, 0.6, 0.3], "session": "s1"},
    ...     {"metric": "a", "decision": "C", "probs": [0.1, 0.0, 0.0, 0.2, 0.7], "session": "s2"},
    ... ]
    >>> result = agreement(instances)
    >>> result["a"]["decisions"]["T"]["agreement"], result["a"]["decisions"]["C"]["agreement"]
    (1.0, 0.5)
    >>> result["a"]["decisions"]["C"]["session_mean"]
    0.5
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from ..dataset_scripts.agreement_instances import (
    LABELS,
    METRIC_DECISIONS,
    METRIC_DESCRIPTIONS,
    METRIC_IDS,
    build_agreement_instances,
    system_decision_chunks,
    with_interruption_probabilities,
    with_judge_probabilities,
    with_pause_decision_probabilities,
)
from .classification import f1_thresholds
from .intervals import Z95, mean_interval


if TYPE_CHECKING:  # pragma: no cover - typing only
    from ..dataset_scripts.dialogue import Dialogue
    from ..dataset_scripts.labels import ChunkLabels

__all__ = [
    "DEFAULT_THRESHOLDS",
    "InstanceTable",
    "judge_scores",
    "judge_labels",
    "agreement",
    "occurrence_rates",
    "threshold_grid",
    "threshold_sweep",
    "single_labels",
    "confusion_matrix",
    "tune_operating_points",
    "tune_thresholds",
    "agreement_ceiling",
    "pause_decision_threshold",
    "conversation_agreement",
]

DEFAULT_THRESHOLDS: dict[str, float] = {"a": 0.0, "b": 0.1, "c": -0.45, "d": 0.0, "e": -0.1}
"""Talking Turns §A.4: th_a = 0, th_b = 0.1, th_c = -0.45, th_e = -0.1; (d) uses Eq. 2 like (a)."""

_INDEX = {label: i for i, label in enumerate(LABELS)}

# Which probabilities each metric's score compares: (positive class, class subtracted or None).
_SCORE_TERMS: dict[str, tuple[str, str | None]] = {
    "a": ("T", "C"),
    "b": ("BC", None),
    "c": ("I", "C"),
    "d": ("T", "C"),
    "e": ("T", "C"),
}


def resolve_thresholds(thresholds: Mapping[str, float] | None = None) -> dict[str, float]:
    """The defaults, overridden by ``thresholds``. Keys are metric ids; ``"a"`` also sets
    ``"d"`` unless ``"d"`` is given (the paper uses one th_a for both)."""
    out = dict(DEFAULT_THRESHOLDS)
    for key, value in (thresholds or {}).items():
        if key not in METRIC_IDS:
            raise ValueError(f"unknown metric {key!r} in thresholds; use keys from {METRIC_IDS}")
        out[key] = float(value)
    if thresholds and "a" in thresholds and "d" not in thresholds:
        out["d"] = float(thresholds["a"])
    return out


def _check_metric(metric: str) -> None:
    if metric not in METRIC_IDS:
        raise ValueError(f"unknown agreement metric {metric!r}; choose from {METRIC_IDS}")


def judge_scores(metric: str, probs: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """The score each instance's judge label thresholds: p_T - p_C, p_BC or p_I - p_C."""
    _check_metric(metric)
    probs = np.asarray(probs, dtype=np.float64).reshape(-1, len(LABELS))
    positive, minus = _SCORE_TERMS[metric]
    score = probs[:, _INDEX[positive]].copy()
    if minus is not None:
        score -= probs[:, _INDEX[minus]]
    return score


def judge_labels(metric: str, probs: np.ndarray | Sequence[Sequence[float]], threshold: float | None = None) -> np.ndarray:
    """Judge labels (Eq. 2-5): the metric's positive decision where the score exceeds the
    threshold (strictly), ``"C"`` elsewhere."""
    th = DEFAULT_THRESHOLDS[metric] if threshold is None else float(threshold)
    positive, negative = METRIC_DECISIONS[metric]
    return np.where(judge_scores(metric, probs) > th, positive, negative)


@dataclass
class InstanceTable:
    """Instances as columns: metric ids, decisions, probs ``[n, 5]`` and session ids."""

    metric: np.ndarray
    decision: np.ndarray
    probs: np.ndarray
    session: np.ndarray

    @classmethod
    def from_any(cls, instances: "InstanceTable | Mapping[str, Sequence[Any]] | Iterable[Any]") -> "InstanceTable":
        """Accept an InstanceTable, a dict of columns, or an iterable of dicts / objects with
        ``metric``, ``decision``, ``probs`` and ``session``; validate them."""
        if isinstance(instances, InstanceTable):
            return instances
        if isinstance(instances, Mapping):
            columns = {k: list(instances[k]) for k in ("metric", "decision", "probs", "session") if k in instances}
            missing = {"metric", "decision", "probs", "session"} - set(columns)
            if missing:
                raise ValueError(f"instance columns are missing {sorted(missing)}")
        else:
            rows = [row if isinstance(row, Mapping) else vars(row) for row in instances]
            columns = {k: [] for k in ("metric", "decision", "probs", "session")}
            for i, row in enumerate(rows):
                for key in columns:
                    if key not in row:
                        raise ValueError(f"instance {i} has no {key!r} field")
                    columns[key].append(row[key])
        metric = np.asarray([str(m) for m in columns["metric"]], dtype=object)
        decision = np.asarray([str(d) for d in columns["decision"]], dtype=object)
        session = np.asarray([str(s) for s in columns["session"]], dtype=object)
        probs = np.asarray(columns["probs"], dtype=np.float64)
        if len(metric) == 0:
            probs = probs.reshape(0, len(LABELS))
        if probs.ndim != 2 or probs.shape[1] != len(LABELS):
            raise ValueError(f"each instance needs {len(LABELS)} probabilities in {LABELS} order; got shape {probs.shape}")
        if not np.all(np.isfinite(probs)):
            bad = int(np.flatnonzero(~np.isfinite(probs).all(axis=1))[0])
            raise ValueError(f"instance {bad} has NaN or inf probabilities")
        for i, (m, d) in enumerate(zip(metric, decision)):
            if m not in METRIC_DECISIONS:
                raise ValueError(f"instance {i}: unknown metric {m!r}; choose from {METRIC_IDS}")
            if d not in METRIC_DECISIONS[m]:
                raise ValueError(f"instance {i}: decision {d!r} is not one of {METRIC_DECISIONS[m]} for metric ({m})")
        return cls(metric, decision, probs, session)

    def select(self, metric: str) -> "InstanceTable":
        keep = self.metric == metric
        return InstanceTable(self.metric[keep], self.decision[keep], self.probs[keep], self.session[keep])

    def __len__(self) -> int:
        return len(self.metric)


def _decision_summary(agrees: np.ndarray, sessions: np.ndarray, z: float) -> dict[str, Any]:
    """Pooled agreement and the mean over sessions (each session's share of agreeing instances)."""
    per_session = [float(agrees[sessions == s].mean()) for s in sorted(set(sessions))]
    ci = mean_interval(per_session, z=z)
    return {
        "n_instances": int(len(agrees)),
        "n_sessions": ci.n,
        "agreement": float(agrees.mean()) if len(agrees) else math.nan,
        "session_mean": ci.mean,
        "session_sd": math.sqrt(ci.var) if ci.var == ci.var else math.nan,
        "ci95_low": ci.low,
        "ci95_high": ci.high,
        "ci95_half_width": ci.half_width,
    }


def agreement(
    instances: "InstanceTable | Mapping[str, Sequence[Any]] | Iterable[Any]",
    thresholds: Mapping[str, float] | None = None,
    z: float = Z95,
) -> dict[str, dict[str, Any]]:
    """Agreement of the judge labels with the decisions taken, per metric and decision.

    Args:
        instances: evaluation instances (see :class:`InstanceTable.from_any`).
        thresholds: per-metric thresholds overriding :data:`DEFAULT_THRESHOLDS`.
        z: normal quantile of the session interval.

    Returns:
        ``{metric: {"title", "threshold", "n_instances", "decisions": {decision: summary}}}``
        for every metric with instances. A decision summary holds ``description``,
        ``n_instances``, ``n_sessions`` (sessions with at least one such instance),
        ``agreement`` (pooled share), ``session_mean``, ``session_sd`` (ddof=1) and
        ``ci95_low``/``ci95_high``/``ci95_half_width`` (``session_mean -+ z sd/sqrt(n)``; zero
        width for one session, NaN for none).
    """
    table = InstanceTable.from_any(instances)
    ths = resolve_thresholds(thresholds)
    out: dict[str, dict[str, Any]] = {}
    for metric in METRIC_IDS:
        sub = table.select(metric)
        if not len(sub):
            continue
        agrees = judge_labels(metric, sub.probs, ths[metric]) == sub.decision
        decisions = {}
        for decision in METRIC_DECISIONS[metric]:
            mask = sub.decision == decision
            decisions[decision] = {"description": METRIC_DESCRIPTIONS[metric][decision], **_decision_summary(agrees[mask], sub.session[mask], z)}
        out[metric] = {
            "title": METRIC_DESCRIPTIONS[metric]["title"],
            "threshold": ths[metric],
            "n_instances": len(sub),
            "decisions": decisions,
        }
    return out


def occurrence_rates(instances: "InstanceTable | Mapping[str, Sequence[Any]] | Iterable[Any]") -> dict[str, dict[str, Any]]:
    """Talking Turns Table 2: per metric, the share of instances that took the positive decision.

    (a) % turn change when the user pauses, (b) % of the user's turn chunks where the system
    starts a backchannel, (c) % of user-alone chunks followed by a system interruption,
    (d) % turn change when the system pauses, (e) % of user interruptions that take the floor.
    Returns ``{metric: {"decision", "count", "n_instances", "rate"}}`` (rate in [0, 1]).
    """
    table = InstanceTable.from_any(instances)
    out = {}
    for metric in METRIC_IDS:
        sub = table.select(metric)
        if not len(sub):
            continue
        positive = METRIC_DECISIONS[metric][0]
        count = int(np.sum(sub.decision == positive))
        out[metric] = {"decision": positive, "count": count, "n_instances": len(sub), "rate": count / len(sub)}
    return out


def threshold_grid(metric: str, step: float = 0.01, wide: bool = False) -> np.ndarray:
    """The sweep of §A.8: -0.5..0.5 for the difference scores, 0..1 for (b), in ``step``s
    (both ends included; values rounded so that 0.1 is 0.1). ``wide``: the whole range a score
    can take (-1..1 for the differences), for judges whose probabilities sit elsewhere than
    the paper judge's (e.g. p_T - p_C below -0.5 at every instance)."""
    _check_metric(metric)
    low, high = (0.0, 1.0) if metric == "b" else ((-1.0, 1.0) if wide else (-0.5, 0.5))
    n = int(round((high - low) / step)) + 1
    return np.round(low + step * np.arange(n), 10)


def _count_above(scores: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """How many ``scores`` exceed each threshold (strictly, as the judge labels do): one sort and
    a binary search per threshold, not a scores x thresholds comparison."""
    return len(scores) - np.searchsorted(np.sort(scores), thresholds, side="right")


def threshold_sweep(
    instances: "InstanceTable | Mapping[str, Sequence[Any]] | Iterable[Any]",
    metric: str,
    thresholds: Sequence[float] | None = None,
    z: float = Z95,
) -> dict[str, Any]:
    """Threshold sensitivity (§A.8) of one metric.

    For every threshold of the grid, the pooled agreement per decision; the margin of error of
    each decision is ``z * sd / sqrt(n)`` over the ``n`` thresholds (sample sd, ddof=1).

    Returns:
        ``{"metric", "thresholds": [n], "agreement": {decision: [n]}, "mean": {decision},
        "margin_of_error": {decision}}``; a decision without instances has NaN agreements.
    """
    table = InstanceTable.from_any(instances).select(metric)
    grid = threshold_grid(metric) if thresholds is None else np.asarray(thresholds, dtype=np.float64)
    scores = judge_scores(metric, table.probs)
    positive, negative = METRIC_DECISIONS[metric]
    curves: dict[str, list[float]] = {}
    for decision in (positive, negative):
        s = scores[table.decision == decision]
        if not len(s):
            curves[decision] = [math.nan] * len(grid)
            continue
        above = _count_above(s, grid) / len(s)
        curves[decision] = (above if decision == positive else 1.0 - above).tolist()
    summaries = {d: mean_interval(v, z=z) for d, v in curves.items()}
    return {
        "metric": metric,
        "thresholds": grid.tolist(),
        "agreement": curves,
        "mean": {d: ci.mean for d, ci in summaries.items()},
        "margin_of_error": {d: ci.half_width for d, ci in summaries.items()},
    }


def single_labels(probs: np.ndarray | Sequence[Sequence[float]], operating_points: Sequence[float] | None = None) -> np.ndarray:
    """One label per chunk (§4.9): ``argmax(p - operating_points)``.

    With no operating points (all zero) this is the plain argmax. With per-class operating
    points, the label is the class whose probability clears its own threshold by the widest
    margin, so a rare class wins as soon as it is above its tuned point and the others are not.
    """
    probs = np.asarray(probs, dtype=np.float64).reshape(-1, len(LABELS))
    ops = np.zeros(len(LABELS)) if operating_points is None else np.asarray(operating_points, dtype=np.float64)
    if ops.shape != (len(LABELS),):
        raise ValueError(f"operating_points needs one value per label {LABELS}, got shape {ops.shape}")
    return np.asarray(LABELS, dtype=object)[np.argmax(probs - ops, axis=1)]


def confusion_matrix(
    actual: Sequence[str],
    probs: np.ndarray | Sequence[Sequence[float]],
    operating_points: Sequence[float] | None = None,
    normalize: bool = True,
) -> dict[str, Any]:
    """Single-label confusion matrix (Talking Turns §4.9, Fig. 4).

    Rows are the labels actually taken (``actual``, e.g. the system's decisions), columns the
    judge's single labels from ``probs`` (see :func:`single_labels`). With ``normalize`` the
    cells are percentages of all decisions, as in the paper.

    Returns ``{"labels", "matrix" ([5][5]), "counts" ([5][5]), "n", "accuracy"}``.
    """
    actual = [str(a) for a in actual]
    unknown = sorted(set(actual) - set(LABELS))
    if unknown:
        raise ValueError(f"unknown labels {unknown}; expected labels from {LABELS}")
    predicted = single_labels(probs, operating_points)
    if len(predicted) != len(actual):
        raise ValueError(f"{len(actual)} actual labels but {len(predicted)} probability rows")
    counts = np.zeros((len(LABELS), len(LABELS)), dtype=np.int64)
    for a, p in zip(actual, predicted):
        counts[_INDEX[a], _INDEX[p]] += 1
    n = int(counts.sum())
    matrix = counts * (100.0 / n) if (normalize and n) else counts.astype(np.float64)
    return {
        "labels": list(LABELS),
        "matrix": matrix.tolist(),
        "counts": counts.tolist(),
        "n": n,
        "accuracy": float(np.trace(counts) / n) if n else math.nan,
    }


def tune_operating_points(labels: Sequence[str], probs: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """Per-class operating points that maximise one-vs-rest F1 on a validation set (§4.9, A.4).

    For each class, the candidate thresholds are the distinct probabilities of that class; a
    chunk is positive when its probability is >= the threshold. A class absent from ``labels``
    gets 1.0 (never predicted over a present class by margin).
    """
    probs = np.asarray(probs, dtype=np.float64).reshape(-1, len(LABELS))
    labels = [str(x) for x in labels]
    if len(labels) != len(probs):
        raise ValueError(f"{len(labels)} labels but {len(probs)} probability rows")
    unknown = sorted(set(labels) - set(LABELS))
    if unknown:
        raise ValueError(f"unknown labels {unknown}; expected labels from {LABELS}")
    return f1_thresholds(np.array([_INDEX[x] for x in labels], dtype=np.int64), probs, len(LABELS))


def pause_decision_threshold(thresholds: Mapping[str, float] | None = None) -> float:
    """The pause decision probability (P(shift): the other party takes the turn) above which the
    judge says T in metric (a): its score is ``2 p - 1``
    (:func:`~turneval.dataset_scripts.agreement_instances.with_pause_decision_probabilities`),
    compared with the (a) threshold of ``thresholds`` (the paper's where not given).

    >>> pause_decision_threshold({"a": -0.61})
    0.195
    """
    return round((1.0 + resolve_thresholds(thresholds)["a"]) / 2.0, 12)


def tune_thresholds(instances: Sequence[Any], wide: bool = False) -> dict[str, dict[str, Any]]:
    """Per metric (a)-(e): the threshold of the §A.8 grid (``wide``: of the whole score range)
    that maximises the mean agreement of its two decisions, the agreements there, and the
    margin of error over the grid. Ties go to the threshold nearest the middle of the plateau."""
    result: dict[str, dict[str, Any]] = {}
    table = InstanceTable.from_any(instances)
    for metric in sorted(set(table.metric)):
        sweep = threshold_sweep(table, metric, threshold_grid(metric, wide=wide))
        curves = {d: np.asarray(v, dtype=np.float64) for d, v in sweep["agreement"].items()}
        balanced = np.nanmean(np.stack(list(curves.values())), axis=0)
        best = 0
        if np.isfinite(balanced).any():
            # a flat optimum (no instance between two grid points) would otherwise take its lowest edge
            ties = np.flatnonzero(balanced >= np.nanmax(balanced) - 1e-12)
            best = int(ties[len(ties) // 2])
        counts = {d: int(np.sum((table.metric == metric) & (table.decision == d))) for d in curves}
        result[metric] = {
            "threshold": float(sweep["thresholds"][best]),
            "agreement": {d: float(c[best]) for d, c in curves.items()},
            "margin_of_error": {d: float(v) for d, v in sweep["margin_of_error"].items()},
            "n_instances": counts,
        }
    return result


def agreement_ceiling(instances: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Per metric (a)-(e): the best that *any* threshold could do on these instances, read as
    the lower of the two decisions' agreements, and the threshold that gives it.

    Every distinct score is tried (the cut halfway to the next one, and one below the lowest),
    so no grid step hides a better cut. This is an in-sample bound, not a tuning recipe: the
    threshold is chosen on the very instances it is scored on. It says why a direction misses a
    target. When the ceiling's lower direction clears the target and a threshold tuned elsewhere
    does not, the judge ranks the decisions well enough and its probabilities shifted between
    the tuning data and these (a calibration miss). When the ceiling itself is below the
    target, no threshold can reach it: the judge does not rank the decisions well enough.

    Returns:
        ``{metric: {"threshold", "agreement": {decision: share}, "lowest", "n_instances":
        {decision: n}}}`` for each metric with instances of both decisions.

    Example:

        >>> rows = [{"metric": "b", "decision": d, "probs": [0.0, p, 0.0, 0.0, 1.0 - p], "session": "s"}
        ...         for d, p in [("BC", 0.04), ("BC", 0.02), ("C", 0.03), ("C", 0.01), ("C", 0.005)]]
        >>> ceiling = agreement_ceiling(rows)["b"]
        >>> round(ceiling["threshold"], 3), ceiling["agreement"], round(ceiling["lowest"], 3)
        (0.015, {'BC': 1.0, 'C': 0.6666666666666666}, 0.667)
    """
    table = InstanceTable.from_any(instances)
    result: dict[str, dict[str, Any]] = {}
    for metric in sorted(set(table.metric)):
        selected = table.select(metric)
        scores = judge_scores(metric, selected.probs)
        positive, negative = METRIC_DECISIONS[metric]
        pos, neg = scores[selected.decision == positive], scores[selected.decision == negative]
        if not len(pos) or not len(neg):
            continue
        distinct = np.unique(scores)
        cuts = np.concatenate([[distinct[0] - 1.0], (distinct[1:] + distinct[:-1]) / 2.0])
        said_positive = _count_above(pos, cuts) / len(pos)
        said_negative = (len(neg) - _count_above(neg, cuts)) / len(neg)
        lowest = np.minimum(said_positive, said_negative)
        best = int(np.argmax(lowest))
        result[metric] = {
            "threshold": float(cuts[best]),
            "agreement": {positive: float(said_positive[best]), negative: float(said_negative[best])},
            "lowest": float(lowest[best]),
            "n_instances": {positive: int(len(pos)), negative: int(len(neg))},
        }
    return result


def conversation_agreement(
    dialogue: "Dialogue",
    probs: np.ndarray,
    labels: "ChunkLabels",
    thresholds: Mapping[str, float] | None = None,
    pause_decision_probabilities: Mapping[int, float] | None = None,
    p_floor_taken: Mapping[int, float] | None = None,
    instances: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """Everything the judge says about one human-AI conversation: metrics (a)-(e) with every
    instance, occurrence rates (Table 2), the system's single-label confusion matrix (§4.9)
    and threshold sensitivity (§A.8).

    Args:
        dialogue: the conversation (its ``system_speaker`` makes the decisions).
        probs: the judge's ``[n_chunks, 5]`` probabilities (row t: the label of chunk t + 1).
        labels: the conversation's 40 ms labels and floor (:func:`~turneval.dataset_scripts.labels.chunk_labels`).
        thresholds: the judge's own thresholds (its config's ``agreement_thresholds``); the
            paper's :data:`DEFAULT_THRESHOLDS` fill what is not given.
        pause_decision_probabilities: ``{decision chunk: P(shift)}``, the judge's pause decision
            (``turneval.pause_decision.pause_decision_probabilities``): the (a)/(d) instances at
            those chunks are judged by it (score ``2 p - 1``) instead of by ``p_T - p_C``.
        p_floor_taken: ``{resolving chunk: P(the interruption takes the floor)}`` from an
            interruption head (``turneval.reporting.judge_interruption_probabilities``): the (e)
            instances at those chunks are judged by it (score ``2 p - 1``).
        instances: the conversation's decisions (a)-(e) already built on ``labels`` without
            probabilities (``ConversationView.instances``); built here when not given.
    """
    n = min(len(labels), probs.shape[0])
    chunk_labels_ = list(labels.labels[:n])
    floor = list(labels.floor[:n])
    if instances is None:
        instances = build_agreement_instances(
            chunk_labels_, floor, probs[:n], dialogue.system_speaker, dialogue.id, chunk_starts=labels.chunk_starts[:n]
        )
    else:  # a decision on a chunk the judge did not score is not an instance
        instances = with_judge_probabilities([inst for inst in instances if inst.chunk < n], probs[:n])
    if pause_decision_probabilities:
        instances = with_pause_decision_probabilities(instances, dict(pause_decision_probabilities))
    if p_floor_taken:
        instances = with_interruption_probabilities(instances, dict(p_floor_taken))
    thresholds = resolve_thresholds(thresholds)
    rows = []
    for inst in instances:
        judged = str(judge_labels(inst.metric, [inst.probs], thresholds[inst.metric])[0])
        rows.append({**inst.to_dict(), "judge_label": judged, "agrees": judged == inst.decision})
    present = sorted({inst.metric for inst in instances})
    decisions = system_decision_chunks(floor, dialogue.system_speaker)
    return {
        "thresholds": thresholds,
        "pause_decisions_judged_by": "the judge's pause rule (2 p - 1)" if pause_decision_probabilities else "p_T - p_C",
        "interruptions_judged_by": "interruption head (2 p - 1)" if p_floor_taken else "p_T - p_C",
        "metrics": agreement(instances, thresholds) if instances else {},
        "occurrence_rates": occurrence_rates(instances) if instances else {},
        # decision chunk k is what the judge predicted from the audio up to chunk k - 1: row k - 1
        "confusion_matrix": confusion_matrix([chunk_labels_[k] for k in decisions], probs[decisions - 1]) if len(decisions) else None,
        "threshold_sensitivity": {
            m: {key: value for key, value in threshold_sweep(instances, m).items() if key in ("mean", "margin_of_error")} for m in present
        },
        "n_instances": len(instances),
        "instances": rows,
    }
