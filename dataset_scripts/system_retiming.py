"""Real conversations re-timed as if one party were a spoken dialogue system.

The synthetic known groups (``benchmarks/validation/known_groups.py``) compare a human-like, a
cascaded-like and an eager-duplex-like *synthetic* system. Whether a naturalness score prefers
human timing there depends on how human the synthetic "human-like" timing is. This module
builds the same three groups from a real call instead: the human-like version is the call's
own timing, and the other two keep every IPU, every word and the user's behaviour but lay the
system's turns out with the response timing of :mod:`~turneval.dataset_scripts.synthetic.timing`'s
system styles.

How a call is re-laid (:func:`retime_as_system`): the turns of :func:`~turneval.dataset_scripts.events.extract_events`
are taken in order of their start. Each turn keeps its IPUs' positions relative to its start
and starts at the same offset from the end of the turn before it as in the call (negative in
overlap), except a system turn that follows a user turn: it starts the style's response gap
after that turn's end (``CASCADED_SYSTEM``: 1.0-2.0 s; ``EAGER_DUPLEX_SYSTEM``: -1.0-0.3 s, in
overlap). Backchannels move with the turn they answer; a style that never backchannels
(cascaded) drops the system's. Only response timing changes: an eager system here does not
also interrupt mid-turn, as the synthetic one does. With ``style="human"`` the call comes back
as its IPUs (the other two are rebuilt from them too, so all three pass the same code).
"""
from __future__ import annotations

import numpy as np

from turneval.dataset_scripts.dialogue import Dialogue, normalize_segments
from turneval.dataset_scripts.events import extract_events
from turneval.dataset_scripts.synthetic.timing import CASCADED_SYSTEM, EAGER_DUPLEX_SYSTEM, SpeakerBehaviour


SYSTEM_STYLES: dict[str, SpeakerBehaviour | None] = {"human": None, "cascaded": CASCADED_SYSTEM, "eager_duplex": EAGER_DUPLEX_SYSTEM}
"""The re-timings: the call as it is, and the synthetic corpus's two system behaviours."""


def retime_as_system(dialogue: Dialogue, system_speaker: int, style: str, seed: int = 0, keep_backchannels: bool | None = None) -> Dialogue:
    """``dialogue`` with speaker ``system_speaker``'s turns re-timed as ``style`` would take them.

    Returns a new dialogue with segments only (no audio, no words): the voice activity a
    voice-activity model reads. ``seed`` draws the response gaps. ``keep_backchannels``
    overrides whether the system keeps its backchannels (default: as the style behaves), to
    tell the effect of the timing from that of the missing backchannels.
    """
    if style not in SYSTEM_STYLES:
        raise ValueError(f"unknown style {style!r}; choose one of {', '.join(SYSTEM_STYLES)}")
    if system_speaker not in (0, 1):
        raise ValueError(f"system_speaker must be 0 or 1, got {system_speaker!r}")
    behaviour = SYSTEM_STYLES[style]
    rng = np.random.default_rng(seed)
    events = extract_events(dialogue)
    ipus, turns = events.ipus, events.turns
    shift_of_turn: list[float] = []
    previous_end_new = previous_end_old = None
    for k, turn in enumerate(turns):
        if previous_end_old is None:
            new_start = turn.start
        elif behaviour is not None and turn.speaker == system_speaker and turns[k - 1].speaker != system_speaker:
            new_start = previous_end_new + behaviour.response_gap.sample(rng)
        else:
            new_start = previous_end_new + (turn.start - previous_end_old)
        shift_of_turn.append(new_start - turn.start)
        previous_end_old, previous_end_new = turn.end, turn.end + shift_of_turn[-1]

    shift_of_ipu = {i: shift for turn, shift in zip(turns, shift_of_turn) for i in turn.ipus}
    if keep_backchannels is None:
        keep_backchannels = behaviour is None or behaviour.backchannel_rate > 0
    drop_system_backchannels = not keep_backchannels
    for bc in events.backchannels:
        if drop_system_backchannels and bc.speaker == system_speaker:
            continue
        # the turn it answers: the other speaker's last turn that started before it
        answered = [k for k, t in enumerate(turns) if t.speaker != bc.speaker and t.start <= bc.start]
        shift_of_ipu[bc.ipu] = shift_of_turn[answered[-1]] if answered else 0.0

    segments: list[list[tuple[float, float]]] = [[], []]
    for i, shift in shift_of_ipu.items():
        ipu = ipus[i]
        start = max(0.0, ipu.start + shift)
        segments[ipu.speaker].append((start, max(start, ipu.end + shift)))
    where = f"{dialogue.id} re-timed as {style}: "
    segments = [normalize_segments(s, where) for s in segments]
    duration = max([end for s in segments for _, end in s] + [0.0])
    if behaviour is None:
        duration = max(duration, float(dialogue.duration or 0.0))
    return Dialogue(id=f"{dialogue.id}:{style}:{'AB'[system_speaker]}", segments=segments, duration=duration, system_speaker=system_speaker)


__all__ = ["SYSTEM_STYLES", "retime_as_system"]
