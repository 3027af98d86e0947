# A copy of turneval.metrics.scorer_discrimination for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""Discrimination metrics for turn-taking naturalness scorers (TurnNat Eq. 11-14).

A naturalness scorer gives every dialogue a number. On a benchmark of matched
natural / perturbed pairs a good scorer ranks the natural clip as more natural. Two
scale-free views of that (TurnNat §IV-D):

* **C-index** (Eq. 13): over *all* perturbed x natural combinations (not only matched pairs),
  the share that is ordered the right way; ties are left out of the denominator.
* **Pairwise accuracy** (Eq. 14): over matched pairs, the share whose margin is positive
  (ties count as wrong), with a Wilson confidence interval.

plus the mean margin with its normal 95 % interval, and accuracy per perturbation type.

Direction. The reference scores dialogues by NLL, where *lower* is more natural, and calls
``delta = perturbed - natural`` (Eq. 12). A naturalness score such as TurnNat's
``m = -NLL`` is the other way round. Every function here therefore takes
``higher_is_better``:

* ``higher_is_better=False`` (default, NLL/surprisal): the natural clip should have the
  lower value; ``delta = perturbed - natural``.
* ``higher_is_better=True`` (naturalness scores): the natural clip should have the higher
  value; ``delta = natural - perturbed`` (TurnNat's Delta m).

Either way a positive ``delta`` means the pair was ranked correctly, and the C-index and
accuracy are identical for ``nll`` with ``higher_is_better=False`` and ``-nll`` with
``higher_is_better=True``.

Example:

    >>> from turneval.metrics.scorer_discrimination import evaluate_pairs
    >>> report = evaluate_pairs(natural=[1.0, 2.0, 3.0], perturbed=[2.0, 2.5, 2.9])
    >>> report.pairwise.accuracy, round(report.c_index.c_index, 4)
    (0.6666666666666666, 0.625)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from .turneval_intervals import Z95, MeanInterval, mean_interval, wilson_interval


__all__ = [
    "CIndexResult",
    "PairwiseAccuracy",
    "PairStatistics",
    "NaturalnessReport",
    "naturalness_margin",
    "c_index",
    "pairwise_accuracy",
    "pair_statistics",
    "per_type_accuracy",
    "evaluate_pairs",
]


def _as_vector(values: Iterable[float], name: str) -> np.ndarray:
    array = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of numbers, got shape {array.shape}")
    return array


def _paired(natural: Iterable[float], perturbed: Iterable[float]) -> tuple[np.ndarray, np.ndarray]:
    nat = _as_vector(natural, "natural")
    pert = _as_vector(perturbed, "perturbed")
    if nat.shape != pert.shape:
        raise ValueError(
            f"natural and perturbed must hold one value per pair: got {nat.size} natural and {pert.size} perturbed values"
        )
    return nat, pert


def naturalness_margin(
    natural: Iterable[float], perturbed: Iterable[float], higher_is_better: bool = False
) -> np.ndarray:
    """Per-pair margin, positive when the natural clip is ranked as more natural.

    ``perturbed - natural`` for NLL-like values (TurnNat Eq. 12), ``natural - perturbed`` when
    ``higher_is_better``.
    """
    nat, pert = _paired(natural, perturbed)
    return nat - pert if higher_is_better else pert - nat


@dataclass(frozen=True)
class CIndexResult:
    """Concordance of perturbed vs natural values over all combinations.

    ``c_index = concordant / (concordant + wrong)``; NaN when no combination is comparable.
    ``tied`` combinations are excluded; ``total_pairs = concordant + wrong + tied``.
    """

    c_index: float
    concordant: int
    wrong: int
    tied: int
    total_pairs: int
    comparable_pairs: int

    def to_dict(self, prefix: str = "c_index") -> dict[str, float | int]:
        """Reference layout: ``c_index, c_index_concordant, ..., c_index_comparable_pairs``."""
        return {
            prefix: self.c_index,
            f"{prefix}_concordant": self.concordant,
            f"{prefix}_wrong": self.wrong,
            f"{prefix}_tied": self.tied,
            f"{prefix}_total_pairs": self.total_pairs,
            f"{prefix}_comparable_pairs": self.comparable_pairs,
        }


def c_index(
    natural: Iterable[float], perturbed: Iterable[float], higher_is_better: bool = False
) -> CIndexResult:
    """C-index of TurnNat Eq. 13 over all perturbed x natural combinations.

    The two sides need not have the same length, and non-finite values are dropped from
    each side separately (as the reference ``c_index`` does), so a pair with one NaN still
    contributes its other value. Runs in O((N + M) log M) by sorting the natural side and
    counting with binary search: 10^5 x 10^5 takes milliseconds.

    Args:
        natural: values of the natural clips.
        perturbed: values of the perturbed clips.
        higher_is_better: False for NLL-like values (a combination is concordant when
            perturbed > natural), True for naturalness scores (concordant when
            perturbed < natural).

    >>> c_index(natural=[1.0, 2.0], perturbed=[2.0, 3.0]).to_dict()["c_index_tied"]
    1
    """
    nat = _as_vector(natural, "natural")
    pert = _as_vector(perturbed, "perturbed")
    nat = np.sort(nat[np.isfinite(nat)])
    pert = pert[np.isfinite(pert)]
    below = np.searchsorted(nat, pert, side="left").astype(np.int64)  # natural < perturbed
    not_above = np.searchsorted(nat, pert, side="right").astype(np.int64)  # natural <= perturbed
    n_lower = int(below.sum())
    n_tied = int((not_above - below).sum())
    n_higher = int((nat.size - not_above).sum())
    concordant, wrong = (n_higher, n_lower) if higher_is_better else (n_lower, n_higher)
    comparable = concordant + wrong
    return CIndexResult(
        c_index=concordant / comparable if comparable else math.nan,
        concordant=concordant,
        wrong=wrong,
        tied=n_tied,
        total_pairs=comparable + n_tied,
        comparable_pairs=comparable,
    )


@dataclass(frozen=True)
class PairwiseAccuracy:
    """Matched-pair accuracy (TurnNat Eq. 14) with its Wilson interval."""

    n: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float


def _accuracy_from_margins(margins: np.ndarray, confidence: float) -> PairwiseAccuracy:
    n = int(margins.size)
    correct = int(np.count_nonzero(margins > 0))  # a tie is not a correct ranking
    low, high = wilson_interval(correct, n, confidence=confidence)
    return PairwiseAccuracy(n, correct, correct / n if n else math.nan, low, high)


def pairwise_accuracy(
    natural: Iterable[float],
    perturbed: Iterable[float],
    higher_is_better: bool = False,
    confidence: float = 0.95,
) -> PairwiseAccuracy:
    """Share of matched pairs ranked the right way, with a Wilson interval.

    Pairs whose margin is not finite (a NaN or infinite score on either side) are left out;
    ties count as wrong.

    >>> pairwise_accuracy(natural=[1.0, 1.0, 2.0], perturbed=[2.0, 1.0, 1.5]).accuracy
    0.3333333333333333
    """
    margins = naturalness_margin(natural, perturbed, higher_is_better)
    return _accuracy_from_margins(margins[np.isfinite(margins)], confidence)


@dataclass(frozen=True)
class PairStatistics:
    """Mean intervals of the natural values, the perturbed values and their margins."""

    natural: MeanInterval
    perturbed: MeanInterval
    delta: MeanInterval


def pair_statistics(
    natural: Iterable[float], perturbed: Iterable[float], higher_is_better: bool = False, z: float = Z95
) -> PairStatistics:
    """Mean +- ``z`` * sd / sqrt(n) of each side and of the margin (no filtering)."""
    nat, pert = _paired(natural, perturbed)
    margins = naturalness_margin(nat, pert, higher_is_better)
    return PairStatistics(mean_interval(nat, z), mean_interval(pert, z), mean_interval(margins, z))


def per_type_accuracy(
    natural: Iterable[float],
    perturbed: Iterable[float],
    perturbation_types: Sequence[str],
    higher_is_better: bool = False,
    confidence: float = 0.95,
) -> dict[str, PairwiseAccuracy]:
    """Pairwise accuracy within each perturbation type (TurnNat Table III columns).

    Types are reported in sorted order; pairs with a non-finite margin are left out.
    """
    margins = naturalness_margin(natural, perturbed, higher_is_better)
    types = np.asarray([str(t) for t in perturbation_types], dtype=object)
    if types.size != margins.size:
        raise ValueError(f"perturbation_types has {types.size} entries for {margins.size} pairs")
    finite = np.isfinite(margins)
    return {
        name: _accuracy_from_margins(margins[(types == name) & finite], confidence)
        for name in sorted(set(types.tolist()))
    }


@dataclass(frozen=True)
class NaturalnessReport:
    """Everything :func:`evaluate_pairs` computes.

    Attributes:
        n: pairs kept (finite margin).
        n_dropped: pairs dropped because their margin was not finite.
        pairwise: matched-pair accuracy with its Wilson interval.
        c_index: C-index over all combinations of the kept pairs.
        scores: mean intervals of natural, perturbed and margin of the main score.
        parts: the same for every extra score component (e.g. ``mean_nll``, ``tail_nll``).
        per_type: pairwise accuracy per perturbation type (empty without types).
    """

    n: int
    n_dropped: int
    pairwise: PairwiseAccuracy
    c_index: CIndexResult
    scores: PairStatistics
    parts: dict[str, PairStatistics] = field(default_factory=dict)
    per_type: dict[str, PairwiseAccuracy] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """Flat summary (the ``turn_naturalness`` evaluate module returns exactly this).

        ``mean_delta`` is the mean margin (positive = natural ranked more natural) with its
        normal 95 % interval; ``per_type`` maps each perturbation type to its accuracy.
        """
        out: dict[str, object] = {
            "pairwise_accuracy": self.pairwise.accuracy,
            "pairwise_accuracy_ci_low": self.pairwise.ci_low,
            "pairwise_accuracy_ci_high": self.pairwise.ci_high,
            "n_pairs": self.n,
            "n_correct": self.pairwise.correct,
            "n_dropped": self.n_dropped,
        }
        out.update(self.c_index.to_dict("c_index"))
        out.update(
            mean_delta=self.scores.delta.mean,
            mean_delta_ci_low=self.scores.delta.low,
            mean_delta_ci_high=self.scores.delta.high,
            mean_natural=self.scores.natural.mean,
            mean_perturbed=self.scores.perturbed.mean,
        )
        out["per_type"] = {
            name: {
                "pairwise_accuracy": acc.accuracy,
                "ci_low": acc.ci_low,
                "ci_high": acc.ci_high,
                "n_pairs": acc.n,
                "n_correct": acc.correct,
            }
            for name, acc in self.per_type.items()
        }
        return out


def evaluate_pairs(
    natural: Iterable[float],
    perturbed: Iterable[float],
    perturbation_types: Sequence[str] | None = None,
    higher_is_better: bool = False,
    parts: Mapping[str, tuple[Iterable[float], Iterable[float]]] | None = None,
    confidence: float = 0.95,
    z: float = Z95,
) -> NaturalnessReport:
    """Summarise a natural/perturbed benchmark as TurnNat's ``summarize`` does.

    Pairs whose main margin is not finite are dropped from *everything* first (so, unlike
    :func:`c_index` called on the raw columns, the C-index here only sees complete pairs).

    Args:
        natural, perturbed: the main score of each pair's natural and perturbed clip.
        perturbation_types: optional type name per pair, for per-type accuracy.
        higher_is_better: direction of the scores (see the module docstring).
        parts: optional extra components, name -> (natural values, perturbed values), for
            which only mean intervals are reported (TurnNat: ``mean_nll``, ``tail_nll``).
        confidence: level of the Wilson intervals.
        z: normal quantile of the mean intervals (the reference's 1.96).
    """
    nat, pert = _paired(natural, perturbed)
    keep = np.isfinite(naturalness_margin(nat, pert, higher_is_better))
    nat, pert = nat[keep], pert[keep]
    part_stats = {}
    for name, (part_nat, part_pert) in (parts or {}).items():
        part_nat, part_pert = _paired(part_nat, part_pert)
        if part_nat.size != keep.size:
            raise ValueError(f"part {name!r} has {part_nat.size} pairs, the main score has {keep.size}")
        part_stats[name] = pair_statistics(part_nat[keep], part_pert[keep], higher_is_better, z)
    per_type = {}
    if perturbation_types is not None:
        types = list(perturbation_types)
        if len(types) != keep.size:
            raise ValueError(f"perturbation_types has {len(types)} entries for {keep.size} pairs")
        per_type = per_type_accuracy(
            nat, pert, [t for t, k in zip(types, keep) if k], higher_is_better, confidence
        )
    return NaturalnessReport(
        n=int(keep.sum()),
        n_dropped=int(keep.size - keep.sum()),
        pairwise=pairwise_accuracy(nat, pert, higher_is_better, confidence),
        c_index=c_index(nat, pert, higher_is_better),
        scores=pair_statistics(nat, pert, higher_is_better, z),
        parts=part_stats,
        per_type=per_type,
    )
