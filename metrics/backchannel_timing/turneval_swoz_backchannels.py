# A copy of turneval.metrics.swoz_backchannels for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""Backchannel quantity and timing (Switching Wizard of Oz, Poppe et al. 2013, §5.1-5.2).

SWOZ found that speakers judge a listener as non-human when it backchannels too rarely or
too often - segments without complaints peak at **4-6 backchannels per minute** - and when its
backchannels are badly timed; a backchannel *matches* one of a reference listener when the two
are at most **500 ms** apart. The listener it evaluated also never produced two backchannels
less than **1 s** apart. This module measures all three on backchannel onset times (seconds):

* per segment, backchannels per minute (onsets in ``[start, end)`` divided by the length in
  minutes) and the share of segments inside the band (``low <= rate <= high``);
* the timing match against a reference listener: a one-to-one matching of onsets with
  ``|t_sys - t_ref| <= tolerance`` (maximum cardinality), giving precision (matched system
  backchannels / all system backchannels), recall (matched reference / all reference) and F1;
* spacing violations: consecutive backchannels less than ``min_spacing`` apart.

Example:

    >>> from turneval.metrics.swoz_backchannels import backchannel_timing
    >>> result = backchannel_timing(
    ...     [5.0, 5.6, 20.0, 40.0, 50.0], segments=[(0.0, 60.0)], reference_times=[5.3, 21.0, 49.6]
    ... )
    >>> result["rate_per_minute"], result["in_band_share"]
    ([5.0], 1.0)
    >>> result["timing"]["n_matched"], result["timing"]["precision"], result["spacing"]["n_violations"]
    (2, 0.4, 1)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np


if TYPE_CHECKING:  # pragma: no cover - typing only
    from .turneval_dialogue import Dialogue
    from .turneval_events import TurnTakingEvents

__all__ = [
    "BAND_PER_MINUTE",
    "MATCH_TOLERANCE_S",
    "MIN_SPACING_S",
    "SwozCriteria",
    "fixed_segments",
    "rates_per_minute",
    "band_share",
    "match_onsets",
    "timing_match",
    "spacing_violations",
    "backchannel_timing",
    "pool_backchannel_timing",
]

BAND_PER_MINUTE = (4.0, 6.0)
"""SWOZ §5.1: segments that were not judged inhuman peak at 4-6 backchannels per minute."""
MATCH_TOLERANCE_S = 0.5
"""SWOZ §5.2: backchannels within 500 ms earlier or later match."""
MIN_SPACING_S = 1.0
"""SWOZ §4.1.2-4.1.3: at least 1 s between successive backchannels."""


@dataclass(frozen=True)
class SwozCriteria:
    """The three SWOZ criteria a listener's backchannels are held to: the rate band
    (backchannels per minute, ``low <= rate <= high``), the largest distance (s) at which a
    backchannel matches a reference one, and the smallest spacing (s) between two."""

    band: tuple[float, float] = BAND_PER_MINUTE
    tolerance: float = MATCH_TOLERANCE_S
    min_spacing: float = MIN_SPACING_S


def _times(values: Sequence[float], name: str) -> np.ndarray:
    arr = np.asarray(list(values), dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contain NaN or inf")
    if np.any(arr < 0):
        raise ValueError(f"{name} contain negative times; give onsets in seconds from the start")
    return np.sort(arr)


def fixed_segments(duration: float, segment_s: float = 60.0, min_segment_s: float = 10.0) -> list[tuple[float, float]]:
    """Consecutive windows of ``segment_s`` over ``[0, duration)``.

    A trailing window shorter than ``min_segment_s`` is dropped: a few seconds give a rate
    dominated by chance (SWOZ likewise kept its switching intervals at 10 s or more). A
    dialogue shorter than ``min_segment_s`` still gives one segment, the whole dialogue.
    """
    if not (duration > 0 and math.isfinite(duration)):
        raise ValueError(f"duration must be a positive number of seconds, got {duration!r}")
    if segment_s <= 0:
        raise ValueError(f"segment_s must be positive, got {segment_s!r}")
    starts = np.arange(0.0, duration, segment_s)
    segments = [(float(s), float(min(s + segment_s, duration))) for s in starts]
    kept = [seg for seg in segments if seg[1] - seg[0] >= min_segment_s - 1e-9]
    return kept or [(0.0, float(duration))]


def rates_per_minute(times: Sequence[float], segments: Sequence[Sequence[float]]) -> np.ndarray:
    """Backchannels per minute in each segment (onsets in ``[start, end)``)."""
    onsets = _times(times, "backchannel times")
    rates = []
    for i, seg in enumerate(segments):
        start, end = float(seg[0]), float(seg[1])
        if not end > start:
            raise ValueError(f"segment {i} ({start}, {end}) is empty; segments need end > start")
        count = int(np.searchsorted(onsets, end, side="left") - np.searchsorted(onsets, start, side="left"))
        rates.append(count * 60.0 / (end - start))
    return np.asarray(rates, dtype=np.float64)


def band_share(rates: Sequence[float], band: tuple[float, float] = BAND_PER_MINUTE) -> float:
    """Share of segments whose rate lies in ``[band[0], band[1]]`` (both ends included)."""
    rates = np.asarray(rates, dtype=np.float64)
    if rates.size == 0:
        return math.nan
    return float(np.mean((rates >= band[0]) & (rates <= band[1])))


def match_onsets(system: Sequence[float], reference: Sequence[float], tolerance: float = MATCH_TOLERANCE_S) -> list[tuple[int, int]]:
    """A maximum one-to-one matching of sorted onsets with ``|s - r| <= tolerance``.

    Greedy in time order is optimal here: each system onset can match a contiguous range of
    reference onsets, and those ranges move right with the onsets, so matching each system
    onset to the earliest still-free reference onset in range never blocks a later match.
    Returns ``(system_index, reference_index)`` pairs into the *sorted* arrays.
    """
    sys_t = _times(system, "system backchannel times")
    ref_t = _times(reference, "reference backchannel times")
    pairs = []
    j = 0
    for i, t in enumerate(sys_t):
        while j < len(ref_t) and ref_t[j] < t - tolerance - 1e-9:
            j += 1
        if j < len(ref_t) and ref_t[j] <= t + tolerance + 1e-9:
            pairs.append((i, j))
            j += 1
    return pairs


def timing_match(system: Sequence[float], reference: Sequence[float], tolerance: float = MATCH_TOLERANCE_S) -> dict[str, Any]:
    """Precision, recall and F1 of system backchannel timing against a reference listener.

    Precision is NaN without system backchannels, recall NaN without reference ones, F1 NaN
    when either is NaN and 0 when both are 0. ``mean_abs_offset_s`` averages ``|s - r|`` over
    matched pairs.
    """
    sys_t = _times(system, "system backchannel times")
    ref_t = _times(reference, "reference backchannel times")
    pairs = match_onsets(sys_t, ref_t, tolerance)
    offsets = [abs(sys_t[i] - ref_t[j]) for i, j in pairs]
    return {
        **_precision_recall(len(pairs), len(sys_t), len(ref_t)),
        "mean_abs_offset_s": float(np.mean(offsets)) if offsets else math.nan,
        "tolerance_s": float(tolerance),
    }


def _precision_recall(n_matched: int, n_system: int, n_reference: int) -> dict[str, Any]:
    precision = n_matched / n_system if n_system else math.nan
    recall = n_matched / n_reference if n_reference else math.nan
    if math.isnan(precision) or math.isnan(recall):
        f1 = math.nan
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {
        "n_system": int(n_system),
        "n_reference": int(n_reference),
        "n_matched": int(n_matched),
        "precision": precision,
        "recall": recall,
        "f1": f1,
    }


def spacing_violations(times: Sequence[float], min_spacing: float = MIN_SPACING_S) -> dict[str, Any]:
    """Consecutive backchannels less than ``min_spacing`` seconds apart (onset to onset).

    ``share`` is violations over the number of consecutive pairs (NaN for fewer than two
    backchannels); ``times`` lists the onsets that came too soon after the previous one.
    """
    onsets = _times(times, "backchannel times")
    gaps = np.diff(onsets)
    too_close = gaps < min_spacing
    return {
        "n_violations": int(too_close.sum()),
        "n_pairs": int(gaps.size),
        "share": float(too_close.mean()) if gaps.size else math.nan,
        "times": onsets[1:][too_close].tolist(),
        "min_spacing_s": float(min_spacing),
    }


def backchannel_timing(
    times: Sequence[float],
    segments: Sequence[Sequence[float]] | None = None,
    duration: float | None = None,
    reference_times: Sequence[float] | None = None,
    segment_s: float = 60.0,
    min_segment_s: float = 10.0,
    criteria: SwozCriteria = SwozCriteria(),
) -> dict[str, Any]:
    """All SWOZ backchannel measures for one listener (e.g. the system) in one dialogue.

    Args:
        times: backchannel onsets in seconds.
        segments: the evaluation segments ``[(start, end), ...]``; by default
            :func:`fixed_segments` of ``segment_s`` over ``[0, duration)``.
        duration: dialogue length (needed when ``segments`` is not given).
        reference_times: onsets of a reference listener (e.g. a human in the same slot);
            without them there is no ``"timing"`` entry.
        segment_s, min_segment_s: the length of the fixed segments, and of the shortest
            last one kept.
        criteria: the SWOZ rate band, match tolerance and spacing (:class:`SwozCriteria`).

    Returns:
        ``{"n_backchannels", "segments", "rate_per_minute" (per segment), "mean_rate_per_minute",
        "in_band_share", "band", "spacing", "timing"?}``.
    """
    if segments is None:
        if duration is None:
            raise ValueError("give `segments` or the dialogue `duration` to cut fixed segments")
        segments = fixed_segments(duration, segment_s, min_segment_s)
    segments = [(float(s[0]), float(s[1])) for s in segments]
    if not segments:
        raise ValueError("no segments to measure the backchannel rate in")
    rates = rates_per_minute(times, segments)
    band = criteria.band
    out: dict[str, Any] = {
        "n_backchannels": int(len(_times(times, "backchannel times"))),
        "segments": [list(s) for s in segments],
        "rate_per_minute": rates.tolist(),
        "mean_rate_per_minute": float(rates.mean()),
        "in_band_share": band_share(rates, band),
        "band": [float(band[0]), float(band[1])],
        "spacing": spacing_violations(times, criteria.min_spacing),
    }
    if reference_times is not None:
        out["timing"] = timing_match(times, reference_times, criteria.tolerance)
    return out


def pool_backchannel_timing(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Pool :func:`backchannel_timing` results of several dialogues (a corpus).

    Segments of all dialogues are pooled for the rates and the band share; spacing violations
    and timing matches are summed before the shares, precision, recall and F1 are taken
    (micro-averages, so long dialogues weigh more). ``"timing"`` is present when every
    dialogue had reference times.
    """
    if not results:
        raise ValueError("no backchannel timing results to pool")
    rates = np.asarray([r for res in results for r in res["rate_per_minute"]], dtype=np.float64)
    band = tuple(results[0]["band"])
    n_violations = sum(res["spacing"]["n_violations"] for res in results)
    n_pairs = sum(res["spacing"]["n_pairs"] for res in results)
    out: dict[str, Any] = {
        "n_dialogues": len(results),
        "n_segments": int(rates.size),
        "n_backchannels": int(sum(res["n_backchannels"] for res in results)),
        "rate_per_minute": rates.tolist(),
        "mean_rate_per_minute": float(rates.mean()) if rates.size else math.nan,
        "in_band_share": band_share(rates, band),  # type: ignore[arg-type]
        "band": list(band),
        "spacing": {
            "n_violations": int(n_violations),
            "n_pairs": int(n_pairs),
            "share": n_violations / n_pairs if n_pairs else math.nan,
            "min_spacing_s": results[0]["spacing"]["min_spacing_s"],
        },
    }
    if all("timing" in res for res in results):
        timing = [res["timing"] for res in results]
        out["timing"] = {
            **_precision_recall(
                sum(t["n_matched"] for t in timing), sum(t["n_system"] for t in timing), sum(t["n_reference"] for t in timing)
            ),
            "tolerance_s": timing[0]["tolerance_s"],
        }
    return out


def system_backchannel_timing(dialogue: "Dialogue", events: "TurnTakingEvents") -> dict[str, Any]:
    """SWOZ backchannel measures of the system (no reference listener: no timing match)."""
    system = dialogue.system_speaker
    times = [bc.start for bc in events.backchannels if bc.speaker == system]
    out = backchannel_timing(times, duration=max(dialogue.duration, 1e-3), min_segment_s=min(10.0, dialogue.duration))
    out["listener"] = "system"
    out["user_n_backchannels"] = sum(1 for bc in events.backchannels if bc.speaker != system)
    return out
