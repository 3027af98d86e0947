# A copy of turneval.metrics.full_duplex_bench_tasks for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""Full-Duplex-Bench v1 / v1.5 timing metrics (Lin et al., 2025).

Full-Duplex-Bench feeds scripted user audio to a full-duplex system, transcribes the system's
output with word timestamps, and scores turn-taking behaviour from those words and from
voice-activity segments. This module holds the rules of its evaluation scripts
(``v1_v1.5/evaluation``) as plain functions:

* **Take-over rate (TOR)** (pause handling, smooth turn-taking, user interruption): a sample
  takes the turn unless the system said nothing, or said at most 3 words spanning less
  than 1 s (a backchannel-like blip). Lower is better for pause handling, higher for
  smooth turn-taking and user interruption.
* **Latency**: first output word start minus the user's turn end (smooth turn-taking) or
  interruption end (user interruption); negative latencies count as 0 in the mean, which
  only covers samples with TOR = 1.
* **Backchannel** frequency per second, TOR and the Jensen-Shannon distance between the
  backchannel timing histogram and a ground-truth distribution.
* v1.5 **timing**: stop-latency intervals (user speech overlapping the model) and response
  gaps (user end to the next model start) after merging short pauses.
* v1.5 **behaviour** helpers: word-overlap check and tag statistics per axis.

Word transcripts use the benchmark's ASR JSON layout,
``{"text": ..., "chunks": [{"text": ..., "timestamp": [start_s, end_s]}]}``; see
:func:`chunks_from_asr`. Times are seconds.

Example:

    >>> from turneval.metrics.full_duplex_bench_tasks import WordChunk, take_turn
    >>> take_turn([WordChunk("mm", 1.0, 1.2), WordChunk("hmm", 1.3, 1.5)])
    0
    >>> take_turn([WordChunk("sure", 1.0, 1.4), WordChunk("go", 1.5, 2.1)])
    1
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np


__all__ = [
    "TURN_MIN_DURATION_S",
    "TURN_MAX_SHORT_WORDS",
    "USER_MERGE_GAP_S",
    "MODEL_MERGE_GAP_S",
    "WordChunk",
    "chunks_from_asr",
    "chunks_from_words",
    "take_turn",
    "TakeTurnSample",
    "TakeTurnResult",
    "pause_handling",
    "smooth_turn_taking",
    "user_interruption",
    "TAKE_TURN_TASKS",
    "take_turn_task",
    "BackchannelSample",
    "BackchannelResult",
    "backchannel_sample",
    "backchannel",
    "merge_segments",
    "stop_latency_intervals",
    "response_gap_intervals",
    "check_overlap",
    "stats_by_axis",
    "AxisStats",
    "TimingResult",
    "timing_intervals",
    "timing_summary",
    "BehaviourResult",
    "behaviour_analysis",
]

TURN_MIN_DURATION_S = 1.0
"""A reply spanning less than this ..."""
TURN_MAX_SHORT_WORDS = 3
"""... with at most this many words does not take the turn."""

BACKCHANNEL_MAX_SEGMENT_S = 3.0
"""A VAD segment longer than this is formal speech, not a backchannel."""
BACKCHANNEL_SHORT_S = 1.0
BACKCHANNEL_MAX_WORDS = 2
BACKCHANNEL_MAX_ANY_WORDS = 3
JSD_WINDOW_S = 0.2
JSD_EPSILON = 1e-10

USER_MERGE_GAP_S = 0.6
"""v1.5 timing: user pauses up to this long are merged."""
MODEL_MERGE_GAP_S = 0.5
"""v1.5 timing: model pauses up to this long are merged."""


@dataclass(frozen=True)
class WordChunk:
    """One transcribed word; ``start``/``end`` in seconds, None where the ASR gave none."""

    text: str
    start: float | None
    end: float | None


def chunks_from_asr(asr: Mapping[str, object]) -> list[WordChunk]:
    """Word chunks from Full-Duplex-Bench's ASR JSON (``{"text", "chunks": [...]}``).

    Raises:
        ValueError: naming the chunk whose layout is wrong.
    """
    raw_chunks = asr.get("chunks")
    if not isinstance(raw_chunks, list):
        raise ValueError("ASR JSON needs a 'chunks' list of {'text', 'timestamp': [start, end]}")
    chunks = []
    for k, chunk in enumerate(raw_chunks):
        try:
            start, end = chunk["timestamp"]
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"chunks[{k}] needs 'timestamp': [start, end], got {chunk!r}") from err
        chunks.append(WordChunk(str(chunk.get("text", "")), _optional_float(start), _optional_float(end)))
    return chunks


def chunks_from_words(
    words: Sequence[str], starts: Sequence[float | None], ends: Sequence[float | None]
) -> list[WordChunk]:
    """Word chunks from parallel lists of words, start times and end times (s)."""
    if not len(words) == len(starts) == len(ends):
        raise ValueError(f"got {len(words)} words, {len(starts)} start times and {len(ends)} end times")
    return [WordChunk(str(w), _optional_float(s), _optional_float(e)) for w, s, e in zip(words, starts, ends)]


def _optional_float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _span_s(chunks: Sequence[WordChunk]) -> float:
    """First word start to last word end (the last word's start where its end is missing)."""
    last = chunks[-1].end if chunks[-1].end is not None else chunks[-1].start
    if last is None or chunks[0].start is None:
        raise ValueError("the first and last word chunks need a start time")
    return last - chunks[0].start


def take_turn(
    chunks: Sequence[WordChunk],
    min_duration_s: float = TURN_MIN_DURATION_S,
    max_short_words: int = TURN_MAX_SHORT_WORDS,
) -> int:
    """1 when the system's reply takes the turn, 0 when it does not (TOR of one sample).

    No words, or at most ``max_short_words`` words spanning less than ``min_duration_s``,
    is not a turn. A missing end time of the last word is read as its start (as the
    pause-handling script does).
    """
    if not chunks:
        return 0
    if _span_s(chunks) < min_duration_s and len(chunks) <= max_short_words:
        return 0
    return 1


@dataclass(frozen=True)
class TakeTurnSample:
    """TOR of one sample, and its latency (s, unclamped) when it took the turn."""

    tor: int
    latency: float | None = None


@dataclass(frozen=True)
class TakeTurnResult:
    """Per-sample outcomes and the benchmark means.

    ``mean_latency`` averages the latencies of the samples that took the turn, negative
    ones counted as 0; NaN when there are none (the reference raises ZeroDivisionError).
    ``mean_rating`` is the mean judge rating over samples that took the turn (user
    interruption only; NaN when no rating applies).
    """

    samples: dict[str, TakeTurnSample]
    take_over_rate: float
    mean_latency: float = math.nan
    mean_rating: float = math.nan


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def pause_handling(samples: Mapping[str, Sequence[WordChunk]]) -> TakeTurnResult:
    """Pause handling: the system should *not* take the turn while the user pauses.

    Args:
        samples: sample id -> the system's transcribed words after the user's pause.

    Returns:
        Per-sample TOR and the take-over rate (lower is better); NaN for no samples.
    """
    per_sample = {key: TakeTurnSample(take_turn(chunks)) for key, chunks in samples.items()}
    return TakeTurnResult(per_sample, _mean([s.tor for s in per_sample.values()]))


def _latency_samples(
    samples: Mapping[str, tuple[Sequence[WordChunk], float]]
) -> dict[str, TakeTurnSample]:
    per_sample = {}
    for key, (chunks, reference_time) in samples.items():
        tor = take_turn(chunks)
        latency = chunks[0].start - reference_time if tor and chunks[0].start is not None else None
        per_sample[key] = TakeTurnSample(tor, latency)
    return per_sample


def smooth_turn_taking(samples: Mapping[str, tuple[Sequence[WordChunk], float]]) -> TakeTurnResult:
    """Smooth turn-taking: the system should take the turn soon after the user ends.

    Args:
        samples: sample id -> (the system's transcribed words, the user's turn end in s;
            Full-Duplex-Bench reads it as ``turn_taking.json[0].timestamp[0]``).

    Returns:
        Per-sample TOR and latency, the take-over rate (higher is better) and the mean
        latency of the samples that took the turn, negative latencies as 0 (lower is better).
    """
    per_sample = _latency_samples(samples)
    latencies = [max(0.0, s.latency) for s in per_sample.values() if s.tor == 1 and s.latency is not None]
    return TakeTurnResult(per_sample, _mean([s.tor for s in per_sample.values()]), _mean(latencies))


def user_interruption(
    samples: Mapping[str, tuple[Sequence[WordChunk], float]],
    ratings: Mapping[str, float] | None = None,
    keep_zero_latency: bool = False,
) -> TakeTurnResult:
    """User interruption: the system should stop and answer the interrupting user.

    Args:
        samples: sample id -> (the system's transcribed words after the interruption, the
            interruption's end in s, ``interrupt.json[0].timestamp[1]``).
        ratings: optional judge rating (0-5) of each sample's reply; only samples that take
            the turn are rated, as in the benchmark (which asks GPT-4 for them).
        keep_zero_latency: the reference drops a latency of exactly 0 s from the mean
            (``if latency:``); set True to keep it.

    Returns:
        Per-sample TOR and latency, take-over rate, mean latency (negatives as 0) and the
        mean rating.
    """
    per_sample = _latency_samples(samples)
    latencies = [
        max(0.0, s.latency)
        for s in per_sample.values()
        if s.tor == 1 and s.latency is not None and (s.latency != 0 or keep_zero_latency)
    ]
    rated = [float(ratings[key]) for key, s in per_sample.items() if s.tor == 1 and key in ratings] if ratings else []
    return TakeTurnResult(per_sample, _mean([s.tor for s in per_sample.values()]), _mean(latencies), _mean(rated))


TAKE_TURN_TASKS = ("pause_handling", "smooth_turn_taking", "user_interruption")
"""Full-Duplex-Bench v1 tasks scored by take-over rate (and latency)."""


def take_turn_task(
    task: str,
    chunks: Sequence[Sequence[WordChunk]],
    reference_times: Sequence[float | None] | None = None,
) -> TakeTurnResult:
    """Score a list of samples for one Full-Duplex-Bench take-turn task.

    Args:
        task: one of :data:`TAKE_TURN_TASKS`.
        chunks: the system's words per sample.
        reference_times: per sample, the user's turn end (smooth_turn_taking) or the
            interruption end (user_interruption); not used for pause_handling.
    Samples are keyed by their position (``"0"``, ``"1"``, ...).
    """
    if task not in TAKE_TURN_TASKS:
        raise ValueError(f"task must be one of {TAKE_TURN_TASKS}, got {task!r}")
    keys = [str(k) for k in range(len(chunks))]
    if task == "pause_handling":
        return pause_handling(dict(zip(keys, chunks)))
    if reference_times is None or len(reference_times) != len(chunks) or any(t is None for t in reference_times):
        raise ValueError(f"{task} needs one reference time (s) per sample")
    samples = {key: (c, float(t)) for key, c, t in zip(keys, chunks, reference_times)}  # type: ignore[arg-type]
    return smooth_turn_taking(samples) if task == "smooth_turn_taking" else user_interruption(samples)


def _words_in_segment(chunks: Sequence[WordChunk], start: float, end: float) -> list[str]:
    """Words of the chunks that fall in or straddle [start, end] (the reference's rules)."""
    words = []
    for chunk in chunks:
        t_start, t_end = chunk.start, chunk.end
        # the reference skips a word without start, and a word without end that starts
        # before the segment ends; a word without end otherwise counts as a point
        if t_start is None or (t_end is None and t_start < end):
            continue
        if t_end is None:
            t_end = t_start
        inside = t_start >= start and t_end <= end
        straddles_end = t_start <= end and t_end > end
        straddles_start = t_start <= start and t_end > start
        if inside or straddles_end or straddles_start:
            words.append(chunk.text)
    return words


@dataclass(frozen=True)
class BackchannelSample:
    """Backchannel outcome of one sample (see :func:`backchannel_sample`)."""

    tor: int
    predictions: list[tuple[float, float]]
    freq_per_s: float
    jsd: float


def _timing_jsd(
    predictions: Sequence[tuple[float, float]], duration_s: float, gt_distribution: Sequence[float]
) -> float:
    """JS distance between the 0.2 s histogram of the predictions and the ground truth."""
    from scipy.interpolate import interp1d
    from scipy.spatial.distance import jensenshannon

    counts = np.zeros(int(duration_s / JSD_WINDOW_S) + 1)
    for start, end in predictions:
        # every window from the one holding the start to the one holding the end
        first, last = int(start / JSD_WINDOW_S), int(end / JSD_WINDOW_S)
        counts[first : min(last + 1, counts.size)] += 1
    histogram = (counts + JSD_EPSILON) / np.sum(counts + JSD_EPSILON)
    gt = np.asarray(gt_distribution, dtype=np.float64)
    resample = interp1d(np.linspace(0, 1, gt.size), gt, kind="linear", fill_value="extrapolate")
    return float(jensenshannon(histogram, resample(np.linspace(0, 1, histogram.size))))


def backchannel_sample(
    vad_segments: Sequence[tuple[float, float]],
    chunks: Sequence[WordChunk],
    duration_s: float,
    gt_distribution: Sequence[float] | None = None,
) -> BackchannelSample:
    """Backchannel behaviour of the system while the user speaks (one sample).

    Each VAD segment of the system, in order: one longer than 3 s is a formal turn (TOR = 1)
    and ends the scan. A shorter one is a backchannel prediction, whatever its words; its
    TOR is 1 with more than 3 words, 0 when it is under 1 s with at most 2 words, and 1
    otherwise. The sample's TOR is that of the last segment examined.

    Args:
        vad_segments: the system's speech segments (s), as Silero VAD gives them.
        chunks: the system's transcribed words.
        duration_s: length of the system's output audio (s).
        gt_distribution: the human backchannel timing distribution of this sample; the JS
            distance is 1.0 when there is no prediction. Without it ``jsd`` is NaN.
    """
    if duration_s <= 0:
        raise ValueError(f"duration_s must be positive, got {duration_s!r}")
    tor = 0
    predictions: list[tuple[float, float]] = []
    for start, end in vad_segments:
        length = end - start
        if length > BACKCHANNEL_MAX_SEGMENT_S:
            tor = 1
            break
        n_words = len(_words_in_segment(chunks, start, end))
        if n_words > BACKCHANNEL_MAX_ANY_WORDS:
            tor = 1
        else:
            tor = 0 if length < BACKCHANNEL_SHORT_S and n_words <= BACKCHANNEL_MAX_WORDS else 1
        predictions.append((start, end))
    if not predictions:
        jsd = 1.0
    elif gt_distribution is None:
        jsd = math.nan
    else:
        jsd = _timing_jsd(predictions, duration_s, gt_distribution)
    return BackchannelSample(tor, predictions, len(predictions) / duration_s, jsd)


@dataclass(frozen=True)
class BackchannelResult:
    """Per-sample backchannel outcomes with their means and (population) standard deviations."""

    samples: dict[str, BackchannelSample]
    jsd_mean: float
    jsd_std: float
    tor_mean: float
    tor_std: float
    freq_mean: float
    freq_std: float


def backchannel(
    samples: Mapping[str, tuple[Sequence[tuple[float, float]], Sequence[WordChunk], float, Sequence[float] | None]]
) -> BackchannelResult:
    """Backchannel metrics over samples: id -> (VAD segments, words, duration_s, gt distribution).

    JSD: lower is better; TOR: lower is better (the system should not take the turn);
    frequency: compare with human listeners. A sample without a ground-truth distribution
    (JSD NaN) counts for TOR and frequency but not for the JSD mean, as in the reference.
    """
    per_sample = {key: backchannel_sample(*args) for key, args in samples.items()}

    def mean_std(values: list[float]) -> tuple[float, float]:
        if not values:
            return math.nan, math.nan
        return float(np.mean(values)), float(np.std(values))

    # a sample without a ground-truth distribution has no JSD; the reference skips it there
    jsd = mean_std([s.jsd for s in per_sample.values() if not math.isnan(s.jsd)])
    tor = mean_std([s.tor for s in per_sample.values()])
    freq = mean_std([s.freq_per_s for s in per_sample.values()])
    return BackchannelResult(per_sample, *jsd, *tor, *freq)


def merge_segments(segments: Iterable[tuple[float, float]], max_gap_s: float) -> list[tuple[float, float]]:
    """Sort segments and merge those separated by at most ``max_gap_s`` (v1.5 ``_merge``)."""
    ordered = sorted((float(s), float(e)) for s, e in segments)
    merged: list[tuple[float, float]] = []
    for start, end in ordered:
        if merged and start - merged[-1][1] <= max_gap_s:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def stop_latency_intervals(
    user: Sequence[tuple[float, float]], model: Sequence[tuple[float, float]]
) -> list[list[float]]:
    """Overlaps of user and model speech: how long the model kept talking over the user.

    Two-pointer sweep over time-ordered segments; where several overlaps end at the same
    ms, the shortest is kept. Intervals are rounded to ms and sorted by end.
    """
    raw = []
    i = j = 0
    while i < len(user) and j < len(model):
        start = max(user[i][0], model[j][0])
        end = min(user[i][1], model[j][1])
        if end > start:
            raw.append((start, end))
        if user[i][1] < model[j][1]:
            i += 1
        else:
            j += 1
    shortest: dict[int, tuple[float, float]] = {}
    for start, end in raw:
        key = int(round(end * 1000))
        if key not in shortest or end - start < shortest[key][1] - shortest[key][0]:
            shortest[key] = (start, end)
    return [[round(s, 3), round(e, 3)] for s, e in sorted(shortest.values(), key=lambda iv: iv[1])]


def response_gap_intervals(
    user: Sequence[tuple[float, float]], model: Sequence[tuple[float, float]]
) -> list[list[float]]:
    """From each user end to the first model start after it, one interval per model start.

    Where several user ends lead to the same model start, the latest user end (the
    shortest gap) is kept. Rounded to ms, sorted by model start.
    """
    model_starts = [start for start, _ in model]
    by_start: dict[int, list[float]] = {}
    for _, user_end in user:
        reply = next((s for s in model_starts if s > user_end), None)
        if reply is None:
            continue
        key = int(round(reply * 1000))
        candidate = [round(user_end, 3), round(reply, 3)]
        if key not in by_start or candidate[0] > by_start[key][0]:
            by_start[key] = candidate
    return [interval for _, interval in sorted(by_start.items(), key=lambda kv: kv[1][1])]


def check_overlap(chunks_a: Sequence[WordChunk], chunks_b: Sequence[WordChunk]) -> int:
    """1 when any word of ``chunks_a`` overlaps any word of ``chunks_b`` in time, else 0.

    Overlap is strict (``max(start) < min(end)``): words that only touch do not overlap.
    """
    for a in chunks_a:
        for b in chunks_b:
            if max(a.start, b.start) < min(a.end, b.end):  # type: ignore[type-var]
                return 1
    return 0


@dataclass(frozen=True)
class AxisStats:
    """Tag counts, totals and ratios per axis (the tag's first letter)."""

    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    ratios: dict[str, dict[str, float]] = field(default_factory=dict)


def stats_by_axis(records: Iterable[Mapping[str, Sequence[str]]], axes: Sequence[str] = ("C",)) -> AxisStats:
    """Count the behaviour tags of judged samples per axis (v1.5 ``stats_by_axis``).

    Args:
        records: one ``{"behaviour": [tag, ...]}`` per sample; a tag's first letter is its axis.
        axes: the axes to report (v1.5 reports the content axis "C").

    Raises:
        ValueError: for a tag of another axis (the reference fails with a KeyError).
    """
    counters: dict[str, Counter] = {axis: Counter() for axis in axes}
    for record in records:
        for tag in record.get("behaviour", []):
            if tag[:1] not in counters:
                raise ValueError(f"behaviour tag {tag!r} belongs to no axis of {list(axes)}")
            counters[tag[:1]][tag] += 1
    totals = {axis: sum(counter.values()) for axis, counter in counters.items()}
    return AxisStats(
        counts={axis: dict(counter) for axis, counter in counters.items()},
        totals=totals,
        ratios={axis: {tag: n / totals[axis] for tag, n in counter.items()} for axis, counter in counters.items()},
    )


def timing_intervals(
    user: Sequence[tuple[float, float]],
    model: Sequence[tuple[float, float]],
    user_merge_gap_s: float = USER_MERGE_GAP_S,
    model_merge_gap_s: float = MODEL_MERGE_GAP_S,
) -> tuple[list[list[float]], list[list[float]]]:
    """v1.5 ``get_timing`` of one sample: (stop-latency intervals, response-gap intervals).

    Both sides' VAD segments are merged across short pauses first (user 0.6 s, model 0.5 s).
    """
    user_merged = merge_segments(user, user_merge_gap_s)
    model_merged = merge_segments(model, model_merge_gap_s)
    return stop_latency_intervals(user_merged, model_merged), response_gap_intervals(user_merged, model_merged)


@dataclass(frozen=True)
class TimingResult:
    """Stop and response latency over samples (s).

    ``stop_latency_s`` is the mean length of all stop-latency intervals (how long the model
    kept talking over the user), ``response_latency_s`` the mean length of all response gaps,
    each pooled over samples; NaN when there are none. The reference writes the intervals per
    sample (``latency_intervals.json``) and defines no aggregate; this pooled mean is turneval's.
    """

    stop_latency_s: float
    response_latency_s: float
    n_stop: int
    n_response: int
    samples_with_stop: int
    samples_with_response: int


def timing_summary(per_sample: Mapping[str, tuple[Sequence[Sequence[float]], Sequence[Sequence[float]]]]) -> TimingResult:
    """Pool per-sample ``(stop intervals, response intervals)`` into mean latencies."""
    stops = [e - s for stop, _ in per_sample.values() for s, e in stop]
    responses = [e - s for _, resp in per_sample.values() for s, e in resp]
    return TimingResult(
        stop_latency_s=_mean(stops),
        response_latency_s=_mean(responses),
        n_stop=len(stops),
        n_response=len(responses),
        samples_with_stop=sum(1 for stop, _ in per_sample.values() if stop),
        samples_with_response=sum(1 for _, resp in per_sample.values() if resp),
    )


@dataclass(frozen=True)
class BehaviourResult:
    """v1.5 behaviour analysis of one scenario.

    ``overlap`` is each sample's :func:`check_overlap` of the user's and the model's words
    (None where a word file is missing); ``overlap_rate`` the share of checked samples with
    overlap. ``stats`` counts the judge's behaviour tags of the samples that have them
    (``stats_by_axis``) and ``rounded_ratios`` are its ratios rounded to 2 decimals, the way
    the reference reports them.
    """

    overlap: dict[str, int | None]
    overlap_rate: float
    stats: AxisStats
    rounded_ratios: dict[str, dict[str, float]]
    n_tagged: int


def behaviour_analysis(
    words: Mapping[str, tuple[Sequence[WordChunk] | None, Sequence[WordChunk] | None]],
    tags: Mapping[str, Sequence[str]],
    axes: Sequence[str] = ("C",),
) -> BehaviourResult:
    """Per-sample overlap check and behaviour tag statistics (v1.5 ``eval_behavior``).

    Args:
        words: sample id -> (the user's words of ``input.json``, the model's words of
            ``output.json``); either may be None when its file is missing.
        tags: sample id -> the judge's behaviour tags (``content_tag.json``), for the samples
            that have them.
        axes: the tag axes to count (the reference reports the content axis "C").
    """
    overlap = {
        key: None if user is None or model is None else check_overlap(user, model) for key, (user, model) in words.items()
    }
    checked = [v for v in overlap.values() if v is not None]
    stats = stats_by_axis(({"behaviour": list(t)} for t in tags.values()), axes)
    rounded = {axis: {tag: round(v, 2) for tag, v in sorted(ratios.items())} for axis, ratios in stats.ratios.items()}
    return BehaviourResult(overlap, _mean(checked), stats, rounded, len(tags))
