"""When smart-turn is asked, and what it hears: the (a)/(d) pauses that follow the pauser's IPU.

pipecat asks smart-turn once its VAD has heard ``stop_secs`` = 200 ms of silence after the
speaker's IPU; the audio given ends there (on the 40 ms grid), or earlier when the other party
starts speaking first. The model itself is :mod:`turneval.smart_turn`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from turneval.dataset_scripts.agreement_instances import (
    dialogue_agreement_instances,
    floor_owners,
    pause_readings,
    silence_start_chunk,
)
from turneval.dataset_scripts.grids import CHUNK_S
from turneval.dataset_scripts.labels import chunk_labels
from turneval.dataset_scripts.pauses import Pause
from turneval.smart_turn import PRE_SPEECH_S, SAMPLE_RATE, VAD_STOP_S, WINDOW_S


if TYPE_CHECKING:  # pragma: no cover - typing only
    from turneval.dataset_scripts.dialogue import Dialogue
    from turneval.dataset_scripts.labels import ChunkLabels


def pause_decisions(
    dialogue: "Dialogue", labels: "ChunkLabels | None" = None, metrics: Sequence[str] = ("a", "d"), stop_s: float = VAD_STOP_S
) -> list[Pause]:
    """The (a)/(d) agreement instances of ``dialogue`` whose silence starts where one of the
    pauser's IPUs ends (a silence entered otherwise, e.g. after an overlap, is left out), as
    :class:`~turneval.dataset_scripts.pauses.Pause` records of what a turn-end model hears.

    The fields as measured here: ``speech_end`` is where the pauser's IPU ended (s, off the
    grid); ``horizon`` ``stop_s`` after it on the 40 ms grid, or the decision time if that comes
    first; ``turn_start`` the start of the pauser's first IPU after the other party last held
    the floor; ``silence_elapsed_s`` as
    :func:`~turneval.dataset_scripts.agreement_instances.pause_readings` measures it; and
    ``until_pauser_resumes_s`` the seconds until the pauser speaks again (inf: never).
    ``silence_until_next_s`` is not measured."""
    bad = [m for m in metrics if m not in ("a", "d")]
    if bad:
        raise ValueError(f"turn-end decisions exist for metrics a and d only, got {bad}")
    if labels is None:
        labels = chunk_labels(dialogue)
    n = len(labels)
    placeholder = np.full((n, 5), 0.2)  # the instances only need the decisions, not a judge
    instances = dialogue_agreement_instances(dialogue, placeholder, labels=labels, metrics=tuple(metrics))
    elapsed = {chunk: r.silence_elapsed_s for chunk, r in pause_readings(labels, [i.chunk for i in instances], stop_s).items()}
    owners = floor_owners(labels.floor)
    out = []
    for inst in instances:
        pauser = dialogue.user_speaker if inst.metric == "a" else dialogue.system_speaker
        segments = dialogue.segments[pauser]
        decision_start = float(labels.chunk_starts[inst.chunk])
        silence_start = float(labels.chunk_starts[silence_start_chunk(labels.labels, inst.chunk)])
        # The pauser's IPU must end where the silence starts (the labels look one chunk ahead).
        ends = [e for s, e in segments if silence_start - 4 * CHUNK_S <= e <= silence_start + 2 * CHUNK_S]
        if not ends:
            continue
        ipu_end = max(ends)
        grid_end = math.ceil(ipu_end / CHUNK_S - 1e-9) * CHUNK_S
        horizon = round(min(grid_end + stop_s, decision_start) / CHUNK_S) * CHUNK_S
        # The pauser's turn began after the other party last held the floor (backchannels do not take it).
        other_floor = np.flatnonzero(owners[: inst.chunk] == 1 - pauser)
        since = float(labels.chunk_ends[other_floor[-1]]) if len(other_floor) else 0.0
        starts = [s for s, e in segments if s >= since - 1e-9 and s < ipu_end]
        turn_start = min(starts) if starts else max(0.0, ipu_end - WINDOW_S)
        later = [s for s, e in segments if s > ipu_end + 1e-9]
        out.append(Pause(
            session=dialogue.id, chunk=inst.chunk, pauser=pauser, speech_end=ipu_end, time=inst.time, horizon=horizon,
            turn_start=turn_start, silence_elapsed_s=elapsed[inst.chunk],
            until_pauser_resumes_s=(min(later) - ipu_end) if later else math.inf, decision=inst.decision, metric=inst.metric,
        ))
    return out


def pauser_audio(dialogue: "Dialogue", pause: Pause) -> np.ndarray:
    """What pipecat hands smart-turn: the pauser's channel from the turn start minus the
    pre-speech margin to the pause's horizon."""
    lo = int(max(0.0, pause.turn_start - PRE_SPEECH_S) * SAMPLE_RATE)
    return dialogue.audio[pause.pauser, lo : int(round(pause.horizon * SAMPLE_RATE))]


__all__ = ["pause_decisions", "pauser_audio"]
