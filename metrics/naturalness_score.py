"""The TurnNat naturalness score of one dialogue (TurnNat §III-D; docs/naturalness.md).

A future-activity (VAP-style) model predicts, at every 50 Hz frame, a distribution over
the 256 classes of the next two seconds of voice activity. Where the observed future is
unlikely under the model, the timing is surprising. The score looks only at turn-taking
boundary units (:mod:`turneval.metrics.turnnat_units`):

    unit NLL   = mean frame NLL of the observed class inside the unit
    MeanNLL    = mean over units
    TailNLL    = mean of the worst ceil(gamma * n) units (gamma = 0.25)
    dialog NLL = lam * MeanNLL + (1 - lam) * TailNLL (lam = 0.5)
    m          = -dialog NLL        (higher = more natural)

:func:`score_naturalness` runs the whole chain from model outputs and voice activity, and
returns a :class:`NaturalnessResult` that also names the worst units, so a report can point
at the moments that sounded least natural. The arithmetic reproduces TurnNat's reference
``aggregate_unit_rows`` (golden/turnnat ``aggregation_*``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from turneval.dataset_scripts import vap_targets
from turneval.dataset_scripts.dialogue import SPEAKERS
from turneval.dataset_scripts.grids import FRAME_HZ

from .turnnat_units import (
    CONTEXT_S,
    MIN_UNIT_FRAMES,
    BoundaryUnit,
    UnitRow,
    UnitSettings,
    clean_vad,
    extract_utterance_units,
    unit_rows_from_units,
)


TAIL_GAMMA = 0.25
"""Fraction of worst units averaged into TailNLL."""
LAMBDA_MEAN = 0.5
"""Weight of MeanNLL against TailNLL in the dialogue NLL."""


@dataclass(frozen=True)
class UnitAggregate:
    """MeanNLL, TailNLL and the naturalness score over a dialogue's unit NLLs.

    All values are NaN (and ``tail_k`` 0) when there are no units.
    """

    mean_nll: float
    tail_nll: float
    dialog_nll: float
    nat_score: float
    num_units: int
    tail_k: int
    unit_nll: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The reference's keys (``combined_nll`` and ``naturalness_score`` are aliases)."""
        return {
            "mean_nll": self.mean_nll,
            "tail_nll": self.tail_nll,
            "dialog_nll": self.dialog_nll,
            "combined_nll": self.dialog_nll,
            "nat_score": self.nat_score,
            "naturalness_score": self.nat_score,
            "num_units": self.num_units,
            "tail_k": self.tail_k,
            "unit_nll": list(self.unit_nll),
        }


def tail_count(n_units: int, gamma: float = TAIL_GAMMA) -> int:
    """``max(1, ceil(clip(gamma, 0, 1) * n))`` units in the tail (0 when there are none)."""
    if n_units <= 0:
        return 0
    return max(1, int(math.ceil(max(0.0, min(1.0, gamma)) * n_units)))


def aggregate_unit_nll(unit_nll: Sequence[float], gamma: float = TAIL_GAMMA, lam: float = LAMBDA_MEAN) -> UnitAggregate:
    """Dialogue-level MeanNLL, TailNLL and score from unit NLLs (float64).

    Args:
        unit_nll: one NLL per unit.
        gamma: tail fraction, clipped to [0, 1]; the tail has at least one unit.
        lam: weight of the mean (``lam = 1`` ignores the tail).
    """
    arr = np.asarray(unit_nll, dtype=np.float64).reshape(-1)
    if arr.size == 0:
        nan = float("nan")
        return UnitAggregate(nan, nan, nan, nan, 0, 0, [])
    k = tail_count(arr.size, gamma)
    mean_nll = float(arr.mean())
    tail_nll = float(np.sort(arr)[-k:].mean())  # ties are simply part of the sorted tail
    dialog_nll = float(lam * mean_nll + (1.0 - lam) * tail_nll)
    return UnitAggregate(mean_nll, tail_nll, dialog_nll, -dialog_nll, int(arr.size), k, [float(x) for x in arr])


def aggregate_unit_rows(unit_rows: Sequence[UnitRow], gamma: float = TAIL_GAMMA, lam: float = LAMBDA_MEAN) -> UnitAggregate:
    """:func:`aggregate_unit_nll` over the ``unit_nll`` of scored unit rows."""
    return aggregate_unit_nll([row.unit_nll for row in unit_rows], gamma, lam)


@dataclass(frozen=True)
class NaturalnessResult:
    """The naturalness of one dialogue.

    Attributes:
        mean_nll: MeanNLL over units.
        tail_nll: TailNLL (mean of the worst ``tail_k`` units).
        dialog_nll: ``lam * mean_nll + (1 - lam) * tail_nll``.
        score: m = -dialog_nll (higher is more natural; NaN when nothing could be scored).
        units: every scored unit, in time order.
        tail_k: units in the tail.
        gamma, lam: the aggregation parameters used.
    """

    mean_nll: float
    tail_nll: float
    dialog_nll: float
    score: float
    units: list[UnitRow]
    tail_k: int
    gamma: float = TAIL_GAMMA
    lam: float = LAMBDA_MEAN

    @property
    def m(self) -> float:
        """The naturalness score m (TurnNat's notation)."""
        return self.score

    @property
    def num_units(self) -> int:
        return len(self.units)

    @property
    def is_defined(self) -> bool:
        """False when no unit could be scored: then every figure is NaN and m means nothing."""
        return self.num_units > 0

    @property
    def undefined_reason(self) -> str | None:
        """Why the score is undefined (None when it is defined)."""
        if self.is_defined:
            return None
        return (
            "no turn-taking boundary unit could be scored: the dialogue needs speech after its first "
            "3 s (the model's context) with at least 5 scored frames around an utterance onset or offset"
        )

    def mean_unit_nll(self, speaker: int | None = None, boundary: str | None = None) -> float:
        """Mean NLL of the units of one ``speaker`` (0 = A, 1 = B) and/or one ``boundary`` kind
        (``"onset"``, ``"offset"``); NaN when there is none.

        A diagnostic beside m, not part of it: e.g. ``mean_unit_nll(1, "onset")`` says how expected
        the moments were at which the system (channel B) started to speak.
        """
        nll = [row.unit_nll for row in self.units if (speaker is None or row.speaker == speaker) and (boundary is None or row.boundary == boundary)]
        return float(np.mean(nll)) if nll else float("nan")

    def worst_units(self, k: int | None = None) -> list[UnitRow]:
        """The units with the highest NLL first (the tail by default)."""
        k = self.tail_k if k is None else k
        return sorted(self.units, key=lambda row: (-row.unit_nll, row.start_time))[: max(0, k)]

    def to_dict(self, n_worst: int | None = None) -> dict[str, Any]:
        """JSON-friendly summary, with the worst units described for a report."""
        return {
            "mean_nll": self.mean_nll,
            "tail_nll": self.tail_nll,
            "dialog_nll": self.dialog_nll,
            "naturalness_score": self.score,
            "defined": self.is_defined,
            "undefined_reason": self.undefined_reason,
            "num_units": self.num_units,
            "tail_k": self.tail_k,
            "gamma": self.gamma,
            "lambda": self.lam,
            "worst_units": [describe_unit(row) for row in self.worst_units(n_worst)],
            "units": [row.to_dict() for row in self.units],
        }


def describe_unit(row: UnitRow) -> dict[str, Any]:
    """What a report shows for one unit: boundary time and kind, speaker, window, NLL."""
    speaker = None if row.speaker is None or row.speaker < 0 else SPEAKERS[row.speaker]
    return {
        "time": row.boundary_time,
        "type": row.boundary,
        "speaker": speaker,
        "window": [row.start_time, row.end_time],
        "unit_nll": row.unit_nll,
        "num_frames": row.num_frames,
    }


def observed_frame_nll(frame_probs, va) -> np.ndarray:
    """Frame NLL of the observed VAP class from predicted class probabilities.

    Args:
        frame_probs: ``[T, 256]`` probabilities, frame t predicting the window after t.
        va: observed voice activity ``[T_va, 2]`` on the same grid; the labels need 100
            frames of future, so ``min(T, T_va - 100)`` frames get an NLL.

    Returns:
        float32 ``[min(T, T_va - 100)]``.
    """
    frame_probs = np.asarray(frame_probs, dtype=np.float32)
    labels = vap_targets.vap_labels(va)
    n = min(frame_probs.shape[0], labels.shape[0])
    return vap_targets.frame_nll(frame_probs[:n], labels[:n])


@dataclass(frozen=True)
class NaturalnessOptions(UnitSettings):
    """How a dialogue's units are cut, scored and aggregated (the defaults are TurnNat's).

    Attributes:
        unit_pre_s, unit_post_s, min_utterance_s, unit_mode, merge_gap_s,
        merge_other_max_ratio: unit extraction (:class:`UnitSettings`, :func:`extract_utterance_units`).
        gamma, lam: tail fraction and mean weight of the aggregation (:func:`aggregate_unit_rows`).
        context_s, min_unit_frames: frames scored per unit (:func:`unit_rows_from_units`).
    """

    gamma: float = TAIL_GAMMA
    lam: float = LAMBDA_MEAN
    context_s: float = CONTEXT_S
    min_unit_frames: int = MIN_UNIT_FRAMES


def score_naturalness(
    va,
    frame_probs=None,
    frame_nll=None,
    *,
    duration_s: float | None = None,
    clean: bool = True,
    frame_hz: float = FRAME_HZ,
    options: NaturalnessOptions = NaturalnessOptions(),
    segment_id: str = "",
) -> NaturalnessResult:
    """Naturalness of one dialogue from a future-activity model's outputs.

    Give either ``frame_probs`` (``[T, 256]`` class probabilities; the NLL of the observed
    class is taken) or ``frame_nll`` (``[N]`` already computed; NaN = unscored frame).

    Args:
        va: observed voice activity ``[T_va, 2]`` at 50 Hz (0/1, channel 0 = speaker A).
        frame_probs: predicted class probabilities.
        frame_nll: per-frame NLL instead of probabilities.
        duration_s: dialogue length; units are clipped to it (default ``T_va / frame_hz``).
        clean: apply the DualTurn cleanup to ``va`` first (as the reference does to its
            Silero VAD); pass False when ``va`` is already clean.
        frame_hz: the frame rate of ``va`` and the model.
        options: unit extraction, unit scoring and aggregation (:class:`NaturalnessOptions`).
        segment_id: a name stored in each unit row.
    """
    if (frame_probs is None) == (frame_nll is None):
        raise ValueError("pass exactly one of frame_probs ([T, 256] probabilities) or frame_nll ([N] per-frame NLL)")
    va = np.asarray(va)
    if va.ndim != 2 or va.shape[1] != 2:
        raise ValueError(f"va must be voice activity [n_frames, 2], got shape {va.shape}")
    if clean:
        va = clean_vad(va, frame_hz)
    if frame_nll is None:
        nll = observed_frame_nll(frame_probs, va)
    else:
        nll = np.asarray(frame_nll, dtype=np.float32).reshape(-1)
    if duration_s is None:
        duration_s = va.shape[0] / frame_hz
    o = options
    units: list[BoundaryUnit] = extract_utterance_units(va, duration_s, frame_hz, o)
    rows = unit_rows_from_units(nll, units, va, segment_id, frame_hz, o.context_s, o.min_unit_frames)
    agg = aggregate_unit_rows(rows, o.gamma, o.lam)
    return NaturalnessResult(agg.mean_nll, agg.tail_nll, agg.dialog_nll, agg.nat_score, rows, agg.tail_k, o.gamma, o.lam)


__all__ = [
    "LAMBDA_MEAN",
    "TAIL_GAMMA",
    "NaturalnessOptions",
    "NaturalnessResult",
    "UnitAggregate",
    "aggregate_unit_nll",
    "aggregate_unit_rows",
    "describe_unit",
    "observed_frame_nll",
    "score_naturalness",
    "tail_count",
]
