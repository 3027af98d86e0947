# A copy of turneval.metrics.turn_statistics for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""Corpus-level turn-taking statistics (Talking Turns §3.2; docs/events_and_labels.md, "Statistics").

For each of IPU, pause, gap and overlap: the number of events per minute and their cumulated
duration as a percentage of the total duration of the conversation. With words: the speaking
rate (words per minute of the speaker's own speech, i.e. of their IPU time) and the
backchannel word rate (backchannel words per minute of conversation). Backchannels,
interruptions and turns are counted as well (backchannels also without words, by the
duration proxy of :mod:`turneval.dataset_scripts.events`).

Every statistic is computed from summed totals (counts, seconds, words), so one dialogue and
a corpus share one rule: a corpus statistic pools the totals of its dialogues (e.g. IPUs per
minute = all IPUs / all minutes), it is not a mean of per-dialogue rates.

Per-speaker values carry the suffix ``_A`` / ``_B``. Word-based values are None when no
dialogue (or speaker) has words.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .turneval_dialogue import SPEAKERS, Dialogue
from .turneval_events import TurnTakingEvents, extract_events


EVENT_STATISTICS: tuple[str, ...] = ("ipu", "pause", "gap", "overlap")
"""The events with a per-minute rate and a percent of duration (Talking Turns Fig. 2)."""

_EVENT_LISTS = {"ipu": "ipus", "pause": "pauses", "gap": "gaps", "overlap": "overlaps", "silence": "silences"}


def _events(item: Dialogue | TurnTakingEvents, event_kwargs: Mapping[str, Any]) -> TurnTakingEvents:
    if isinstance(item, TurnTakingEvents):
        return item
    if isinstance(item, Dialogue):
        return extract_events(item, **event_kwargs)
    raise TypeError(f"expected a Dialogue or TurnTakingEvents, got {type(item).__name__}")


def event_totals(events: TurnTakingEvents) -> dict[str, float]:
    """The additive totals of one dialogue that every statistic is derived from.

    Keys: ``duration_s``, ``n_dialogues``, ``<event>_count`` / ``<event>_total_s`` for ipu, pause,
    gap, overlap, silence (and per speaker ``_A`` / ``_B`` for ipu and pause), counts of
    backchannels, turns and interruptions (``floor_taking_count``), and, for dialogues with
    words, ``word_count``, ``backchannel_word_count``, ``speech_s`` (IPU time of speakers with
    words) and ``word_duration_s`` (duration of dialogues with words), per speaker too.
    """
    totals: dict[str, float] = {"duration_s": float(events.duration), "n_dialogues": 1.0}
    for name, attr in _EVENT_LISTS.items():
        items = getattr(events, attr)
        totals[f"{name}_count"] = float(len(items))
        totals[f"{name}_total_s"] = float(sum(e.duration for e in items))
    for k, spk in enumerate(SPEAKERS):
        for name in ("ipu", "pause"):
            items = [e for e in getattr(events, _EVENT_LISTS[name]) if e.speaker == k]
            totals[f"{name}_count_{spk}"] = float(len(items))
            totals[f"{name}_total_s_{spk}"] = float(sum(e.duration for e in items))
        totals[f"backchannel_count_{spk}"] = float(sum(1 for b in events.backchannels if b.speaker == k))
        totals[f"interruption_count_{spk}"] = float(sum(1 for i in events.interruptions if i.speaker == k))
    totals["backchannel_count"] = float(len(events.backchannels))
    totals["turn_count"] = float(len(events.turns))
    totals["interruption_count"] = float(len(events.interruptions))
    totals["floor_taking_count"] = float(sum(1 for i in events.interruptions if i.floor_taking))

    for key in ("word_count", "backchannel_word_count", "speech_s", "word_duration_s"):
        totals[key] = 0.0
        for spk in SPEAKERS:
            totals[f"{key}_{spk}"] = 0.0
    bc_ipus = events.backchannel_ipus()
    any_words = False
    for k, spk in enumerate(SPEAKERS):
        ipus = [(i, u) for i, u in enumerate(events.ipus) if u.speaker == k]
        if not any(u.words for _, u in ipus):
            continue  # this speaker's IPUs came from segments (or they said nothing)
        any_words = True
        n_words = float(sum(len(u.words) for _, u in ipus))
        n_bc_words = float(sum(len(u.words) for i, u in ipus if i in bc_ipus))
        speech = float(sum(u.duration for _, u in ipus))
        for suffix in ("", f"_{spk}"):
            totals[f"word_count{suffix}"] += n_words
            totals[f"backchannel_word_count{suffix}"] += n_bc_words
            totals[f"speech_s{suffix}"] += speech
        totals[f"word_duration_s_{spk}"] = float(events.duration)
    if any_words:
        totals["word_duration_s"] = float(events.duration)
    return totals


def add_totals(totals: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Sum the totals of several dialogues (pooling for corpus statistics)."""
    summed: dict[str, float] = {}
    for item in totals:
        for key, value in item.items():
            summed[key] = summed.get(key, 0.0) + float(value)
    return summed


def _ratio(num: float, den: float, scale: float = 1.0) -> float | None:
    return None if den <= 0 else scale * num / den


def statistics_from_totals(totals: Mapping[str, float]) -> dict[str, Any]:
    """Rates and percentages from (pooled) totals; see the module docstring."""
    duration = totals.get("duration_s", 0.0)
    minutes = duration / 60.0
    out: dict[str, Any] = {
        "n_dialogues": int(totals.get("n_dialogues", 0)),
        "duration_s": duration,
        "duration_min": minutes,
    }
    for name in (*EVENT_STATISTICS, "silence"):
        count, total = totals.get(f"{name}_count", 0.0), totals.get(f"{name}_total_s", 0.0)
        out[f"{name}_count"] = int(count)
        out[f"{name}_per_min"] = _ratio(count, minutes)
        out[f"{name}_percent"] = _ratio(total, duration, 100.0)
        out[f"{name}_mean_s"] = _ratio(total, count)
    for name in ("backchannel", "turn", "interruption"):
        count = totals.get(f"{name}_count", 0.0)
        out[f"{name}_count"] = int(count)
        out[f"{name}s_per_min"] = _ratio(count, minutes)
    out["floor_taking_count"] = int(totals.get("floor_taking_count", 0.0))
    out["floor_taking_share"] = _ratio(totals.get("floor_taking_count", 0.0), totals.get("interruption_count", 0.0))
    out["word_count"] = int(totals.get("word_count", 0.0))
    out["speaking_rate_wpm"] = _ratio(totals.get("word_count", 0.0), totals.get("speech_s", 0.0), 60.0)
    out["backchannel_word_rate"] = _ratio(
        totals.get("backchannel_word_count", 0.0), totals.get("word_duration_s", 0.0), 60.0
    )
    for spk in SPEAKERS:
        for name in ("ipu", "pause"):
            count, total = totals.get(f"{name}_count_{spk}", 0.0), totals.get(f"{name}_total_s_{spk}", 0.0)
            out[f"{name}_count_{spk}"] = int(count)
            out[f"{name}_per_min_{spk}"] = _ratio(count, minutes)
            out[f"{name}_percent_{spk}"] = _ratio(total, duration, 100.0)
        for name in ("backchannel", "interruption"):
            count = totals.get(f"{name}_count_{spk}", 0.0)
            out[f"{name}_count_{spk}"] = int(count)
            out[f"{name}s_per_min_{spk}"] = _ratio(count, minutes)
        out[f"speaking_rate_wpm_{spk}"] = _ratio(totals.get(f"word_count_{spk}", 0.0), totals.get(f"speech_s_{spk}", 0.0), 60.0)
        out[f"backchannel_word_rate_{spk}"] = _ratio(
            totals.get(f"backchannel_word_count_{spk}", 0.0), totals.get(f"word_duration_s_{spk}", 0.0), 60.0
        )
    return out


def dialogue_statistics(item: Dialogue | TurnTakingEvents, **event_kwargs: Any) -> dict[str, Any]:
    """Statistics of one dialogue (a Dialogue, or its already extracted events).

    ``event_kwargs`` go to :func:`~turneval.dataset_scripts.events.extract_events`
    (e.g. ``backchannel_words``, ``max_backchannel_s``).

    Example:
        >>> from turneval.dataset_scripts.dialogue import Dialogue
        >>> stats = dialogue_statistics(Dialogue("d", [[(0, 20), (21, 40)], [(40.5, 60)]]))
        >>> stats["ipu_count"], stats["ipu_per_min"], stats["pause_percent"], stats["gap_per_min"]
        (3, 3.0, 1.6666666666666667, 1.0)
    """
    return statistics_from_totals(event_totals(_events(item, event_kwargs)))


def corpus_statistics(items: Iterable[Dialogue | TurnTakingEvents], *, per_dialogue: bool = False, **event_kwargs: Any) -> dict[str, Any]:
    """Statistics pooled over a corpus (totals summed over dialogues, then rates).

    Args:
        items: dialogues or their events.
        per_dialogue: also return each dialogue's own statistics under ``"dialogues"``
            (a dict by dialogue id; a repeated id gets a ``#2``, ``#3``, ... suffix).
        **event_kwargs: passed on to ``extract_events``.
    """
    totals, singles = [], {}
    for item in items:
        events = _events(item, event_kwargs)
        t = event_totals(events)
        totals.append(t)
        if per_dialogue:
            key, n = events.dialogue_id, 2
            while key in singles:  # two files with the same dialogue id: keep both
                key, n = f"{events.dialogue_id}#{n}", n + 1
            singles[key] = statistics_from_totals(t)
    out = statistics_from_totals(add_totals(totals))
    if per_dialogue:
        out["dialogues"] = singles
    return out


__all__ = [
    "EVENT_STATISTICS",
    "add_totals",
    "corpus_statistics",
    "dialogue_statistics",
    "event_totals",
    "statistics_from_totals",
]
