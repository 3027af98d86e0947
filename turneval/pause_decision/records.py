"""The one producer of pause records: every (a)/(d) pause as a :class:`~turneval.pause_decision.pause.Pause`.

Three readers ask at a pause whether the other party takes the turn, each at its own moment, and
each reads its :class:`~turneval.pause_decision.pause.Pause` records from here:

* :func:`judge_pauses`: the judge's (a)/(d) decisions on the 40 ms grid (:func:`pause_readings`:
  speech end at the silence's first chunk, decision at its end, audio heard to ``stop_s`` after
  the speech end), for the report, the fit of the pause decision and the benchmarks;
* :func:`ipu_pauses`: the same decisions where the silence follows one of the pauser's IPUs, as
  pipecat asks smart-turn (speech end at the IPU's own end, audio to 200 ms after it);
* :func:`stop_time_pauses`: every IPU end of a two-channel recording, asked at the stop time (the
  TurnBench export streams the decision from there on);
* :func:`asked_pauses`: pauses a benchmark asks a turn-end model about at times it chose itself
  (Switchboard's word-level turn-end decisions, a speaker's own view of a meeting).

All three read the decisions off one :class:`~turneval.dataset_scripts.conversation_view.ConversationView`.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Sequence

import numpy as np

from turneval.dataset_scripts.agreement_instances import NOBODY, floor_owners
from turneval.dataset_scripts.dialogue import DialogueError
from turneval.dataset_scripts.grids import CHUNK_S

from .pause import PAUSE_DECISIONS, Pause


if TYPE_CHECKING:  # pragma: no cover - typing only
    from turneval.dataset_scripts.conversation_view import ConversationView
    from turneval.dataset_scripts.labels import ChunkLabels


def silence_start_chunk(names: Sequence[str], chunk: int) -> int:
    """The first chunk of the silence (run of ``NA`` labels) that ends just before ``chunk``;
    ``chunk`` itself when the chunk before it is not silent."""
    first = chunk
    while first > 0 and names[first - 1] == "NA":
        first -= 1
    return first


def pause_readings(labels: ChunkLabels, chunks: Sequence[int], stop_s: float = 0.2) -> dict[int, Pause]:
    """For every (a)/(d) decision chunk in ``chunks``, the :class:`~turneval.pause_decision.pause.Pause`
    a turn-end model reads there, on the 40 ms grid. Each chunk must end a silence (NA run) that
    follows a chunk of one speaker's floor, as every (a)/(d) instance does.

    The fields as measured here: ``speech_end`` is the end of the silence's first chunk (a
    chunk's label describes the chunk after it); ``time`` the decision chunk's start (the end of
    the silence, when Talking Turns' judge decides); ``horizon`` ``stop_s`` after the speech end,
    or ``time`` if that comes first; ``silence_elapsed_s`` the silent chunks before the decision
    chunk; ``turn_start`` the first chunk of the pauser's floor after the other party last held
    it; ``decision`` the decision chunk's label. Neither ``silence_until_next_s`` nor
    ``until_pauser_resumes_s`` is measured, nor ``metric`` (the labels do not say which party
    is the system).

    Example (A speaks to 1.0 s, pauses, goes on at 1.6 s; B answers at 2.5 s):

    >>> from turneval.dataset_scripts.conversation_view import conversation_view
    >>> from turneval.dataset_scripts.dialogue import Dialogue
    >>> view = conversation_view(Dialogue("demo", [[(0.0, 1.0), (1.6, 2.0)], [(2.5, 3.5)]], system_speaker=1))
    >>> [(inst.decision, inst.chunk) for inst in view.pause_instances]
    [('C', 38), ('T', 61)]
    >>> pause = pause_readings(view.labels, [38, 61])[61]
    >>> (pause.pauser, pause.speech_end, pause.horizon, pause.silence_elapsed_s, pause.turn_start, pause.time, pause.decision)
    (0, 2.0, 2.2, 0.48, 0.0, 2.44, 'T')
    """
    owners = floor_owners(labels.floor, labels.dialogue_id or "")
    out = {}
    for chunk in sorted({int(c) for c in chunks}):
        first_silent = silence_start_chunk(labels.labels, chunk)
        if first_silent == chunk or first_silent == 0 or owners[first_silent - 1] == NOBODY:
            raise DialogueError(f"chunk {chunk} does not end a silence after one speaker's floor; it is not an (a)/(d) decision")
        speech_end = float(labels.chunk_ends[first_silent])
        horizon = min(speech_end + stop_s, float(labels.chunk_starts[chunk]))
        pauser = int(owners[first_silent - 1])
        elapsed = float(labels.chunk_starts[chunk] - labels.chunk_starts[first_silent])
        turn_start = float(labels.chunk_starts[_turn_start_chunk(owners, pauser, first_silent)])
        decision = str(labels.labels[chunk])
        out[chunk] = Pause(
            session=labels.dialogue_id or "",
            chunk=chunk,
            pauser=pauser,
            speech_end=round(speech_end, 6),
            time=round(float(labels.chunk_starts[chunk]), 6),
            horizon=round(horizon, 6),
            turn_start=round(turn_start, 6),
            silence_elapsed_s=round(elapsed, 6),
            decision=decision if decision in PAUSE_DECISIONS else None,
        )
    return out


def _turn_start_chunk(owners: np.ndarray, speaker: int, before: int) -> int:
    """The first chunk of ``speaker``'s floor after the other party last held it before chunk ``before``."""
    other = np.flatnonzero(owners[:before] == 1 - speaker)
    since = int(other[-1]) + 1 if len(other) else 0
    own = np.flatnonzero(owners[since:before] == speaker)
    return since + int(own[0]) if len(own) else max(0, before - 1)


def judge_pauses(view: "ConversationView", stop_s: float) -> dict[int, Pause]:
    """``{decision chunk: Pause}`` at every (a)/(d) decision of ``view``, read on the 40 ms grid
    (:func:`pause_readings`) with the audio heard up to ``stop_s`` after the speech end (the
    judge's ``config.pause_stop_s``), each with its ``metric``."""
    metric = {inst.chunk: inst.metric for inst in view.pause_instances}
    readings = pause_readings(view.labels, sorted(metric), stop_s)
    return {chunk: replace(pause, metric=metric[chunk]) for chunk, pause in readings.items()}


def ipu_pauses(view: "ConversationView", stop_s: float) -> list[Pause]:
    """The (a)/(d) decisions of ``view`` whose silence starts where one of the pauser's IPUs ends
    (a silence entered otherwise, e.g. after an overlap, is left out), as pipecat asks smart-turn
    ``stop_s`` (its VAD's ``stop_secs``) after the IPU end.

    The fields as measured here: ``speech_end`` is where the pauser's IPU ended (s, off the
    grid); ``horizon`` ``stop_s`` after it on the 40 ms grid, or the decision time if that comes
    first; ``turn_start`` the start of the pauser's first IPU after the other party last held
    the floor (or, without one, the IPU end less smart-turn's 8 s window); ``silence_elapsed_s``
    as :func:`pause_readings` measures it; and ``until_pauser_resumes_s`` the seconds until the
    pauser speaks again (inf: never). ``silence_until_next_s`` is not measured."""
    from turneval.smart_turn import WINDOW_S

    dialogue, labels = view.dialogue, view.labels
    grid = judge_pauses(view, stop_s)
    owners = floor_owners(labels.floor)
    out = []
    for chunk, reading in grid.items():
        segments = dialogue.segments[reading.pauser]
        silence_start = float(labels.chunk_starts[silence_start_chunk(labels.labels, chunk)])
        # The pauser's IPU must end where the silence starts (the labels look one chunk ahead).
        ends = [e for s, e in segments if silence_start - 4 * CHUNK_S <= e <= silence_start + 2 * CHUNK_S]
        if not ends:
            continue
        ipu_end = max(ends)
        grid_end = math.ceil(ipu_end / CHUNK_S - 1e-9) * CHUNK_S
        horizon = round(min(grid_end + stop_s, float(labels.chunk_starts[chunk])) / CHUNK_S) * CHUNK_S
        # The pauser's turn began after the other party last held the floor (backchannels do not take it).
        other_floor = np.flatnonzero(owners[:chunk] == 1 - reading.pauser)
        since = float(labels.chunk_ends[other_floor[-1]]) if len(other_floor) else 0.0
        starts = [s for s, e in segments if s >= since - 1e-9 and s < ipu_end]
        later = [s for s, e in segments if s > ipu_end + 1e-9]
        out.append(replace(reading, session=dialogue.id, speech_end=ipu_end, horizon=horizon,
                           turn_start=min(starts) if starts else max(0.0, ipu_end - WINDOW_S),
                           until_pauser_resumes_s=(min(later) - ipu_end) if later else math.inf))
    return out


def stop_time_pauses(session: str, ipus: Sequence[Sequence[tuple[float, float]]], stop_s: float, frame_rate_hz: float) -> list[Pause]:
    """A :class:`Pause` at every IPU end of either speaker (``ipus``: per speaker, ``(start, end)``
    in order), asked ``stop_s`` after it with that much silence elapsed; ``chunk`` is the IPU
    end's frame at ``frame_rate_hz``. The pauser's turn began with their first IPU after the
    other party last spoke. Decisions are not known (a stream asks at every pause)."""
    out = []
    for k in (0, 1):
        for i, (start, end) in enumerate(ipus[k]):
            other_end = max((b for _, b in ipus[1 - k] if b <= start), default=-math.inf)
            turn_start = min(a for a, _ in ipus[k][: i + 1] if a >= other_end)
            out.append(Pause(session=session, chunk=int(end * frame_rate_hz), pauser=k, speech_end=end, time=end + stop_s,
                             horizon=end + stop_s, turn_start=turn_start, silence_elapsed_s=stop_s))
    return out


def asked_pauses(session: str, asked: Sequence[tuple[int, float, float, float]]) -> list[Pause]:
    """A :class:`Pause` for each ``(pauser, speech end, horizon, turn start)`` (s), asked at the
    horizon with the silence since the speech end elapsed; ``chunk`` 0 and the decision unknown
    (the caller keeps its own outcome)."""
    return [Pause(session=session, chunk=0, pauser=int(pauser), speech_end=float(end), time=float(horizon), horizon=float(horizon),
                  turn_start=float(turn_start), silence_elapsed_s=float(horizon) - float(end)) for pauser, end, horizon, turn_start in asked]


__all__ = ["asked_pauses", "ipu_pauses", "judge_pauses", "pause_readings", "silence_start_chunk", "stop_time_pauses"]
