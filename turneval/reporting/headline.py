"""The headline figures a voice-agent builder checks first, computed from a conversation's events.

The names, units and ranges are the registry :data:`turneval.headline_figures.FIGURES` (what
``--require`` gates). The event
figures come from :func:`event_figures`, which ``tools/build_human_ranges.py`` also runs on
real human conversations (one speaker in the system's seat) to measure the human ranges the
report prints beside them; so the report and its ranges are one computation.
"""
from __future__ import annotations

import statistics as _stats
from typing import Any, Mapping

from turneval.dataset_scripts.dialogue import SPEAKERS
from turneval.dataset_scripts.events import TurnTakingEvents
from turneval.metrics.turn_statistics import dialogue_statistics


def _share(hits: int, n: int) -> float | None:
    return None if n == 0 else hits / n


def response_gaps(events: TurnTakingEvents, system: int) -> list[float]:
    """Silences (s) from the end of the user's speech to the start of the system's next
    non-backchannel IPU: the system's response gaps (a backchannel is not a reply)."""
    backchannels = events.backchannel_ipus()
    reply_starts = {u.start for i, u in enumerate(events.ipus) if u.speaker == system and i not in backchannels}
    user = 1 - system
    return [g.duration for g in events.gaps if g.from_speaker == user and g.to_speaker == system and g.end in reply_starts]


def event_figures(events: TurnTakingEvents, system: int) -> dict[str, float | None]:
    """The headline figures that need only the events, with ``system`` (0 or 1) in the system's seat.

    * ``response_latency_s``: median of :func:`response_gaps` (overlapping turn changes are
      counted by ``talk_over_rate``, not here).
    * ``talk_over_rate``: share of the user's turns inside which the system starts a
      non-backchannel IPU (an interruption, either kind).
    * ``yield_rate``: share of the user's interruptions of the system that take the floor
      (the system stops first).
    * ``cut_off_rate``: of the system's turns that start in a silence after the user's speech,
      the share into whose first IPU the user starts speaking again (not a backchannel): the
      user had not finished. Words cannot tell an unfinished pause; the user's resumption can.
    * ``backchannels_per_min``, ``overlap_share``: the statistics' system backchannel rate and
      overlap share of the duration (Talking Turns §3.2).
    Each is None when the conversation has nothing to count it on.
    """
    user = 1 - system
    interruptions = events.interruptions
    by_system = {iv.interrupted_ipu for iv in interruptions if iv.speaker == system}
    user_turns = events.of_speaker("turns", user)
    talked_over = sum(1 for t in user_turns if by_system.intersection(t.ipus))
    by_user = [iv for iv in interruptions if iv.speaker == user]
    after_user = {g.end for g in events.gaps if g.from_speaker == user and g.to_speaker == system}
    replies = [t for t in events.of_speaker("turns", system) if t.start in after_user]
    user_resumed = {iv.interrupted_ipu for iv in by_user}
    gaps = response_gaps(events, system)
    stats = dialogue_statistics(events)
    overlap = stats.get("overlap_percent")
    return {
        "response_latency_s": _stats.median(gaps) if gaps else None,
        "talk_over_rate": _share(talked_over, len(user_turns)),
        "yield_rate": _share(sum(iv.floor_taking for iv in by_user), len(by_user)),
        "cut_off_rate": _share(sum(t.ipus[0] in user_resumed for t in replies), len(replies)),
        "backchannels_per_min": stats.get(f"backchannels_per_min_{SPEAKERS[system]}"),
        "overlap_share": None if overlap is None else overlap / 100.0,
    }


def judge_agreement_a(agreement: Mapping[str, Any] | None) -> float | None:
    """Share of all (a) instances (both decisions pooled) on which the judge agrees with the system."""
    decisions = ((agreement or {}).get("metrics", {}).get("a") or {}).get("decisions") or {}
    n = agreed = 0.0
    for d in decisions.values():
        if d.get("agreement") is not None and d.get("n_instances"):
            n += d["n_instances"]
            agreed += d["agreement"] * d["n_instances"]
    return agreed / n if n else None


def headline_figures(events: TurnTakingEvents, system: int, agreement: Mapping[str, Any] | None,
                     naturalness: Mapping[str, Any] | None) -> dict[str, float | None]:
    """Every headline figure of a report, by the names of :data:`turneval.headline_figures.FIGURES`."""
    figures = event_figures(events, system)
    figures["judge_agreement_a"] = judge_agreement_a(agreement)
    figures["naturalness_m"] = None if naturalness is None else naturalness.get("naturalness_score")
    return figures
