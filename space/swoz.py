"""Switching backchannel test (SWOZ, Poppe, ter Maat & Heylen): stimulus construction.

In the Switching Wizard of Oz the listener's backchannels come either from the human
listener or from a synthesis algorithm, the source switching at random intervals (normal,
mean 30 s, sd 10 s, clipped to 10-50 s, §4.1.3), with at least 1 s between generated
backchannels. The participant presses 'not human' (yuck) whenever the listener does not
sound human.

Here the conversation is recorded, so the switching is rendered offline: during human
intervals the listener channel is the original; during algorithm intervals the listener's
own backchannels that start there are removed and the algorithm's backchannels are inserted,
each one a backchannel snippet cut from the same listener's audio (so voice and loudness do
not give the source away). A yuck press cannot switch the source back to the human (as in
the paper's live setting), because the audio is fixed before playback.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from listening import SOURCES, SourceSegment, source_at

from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.events import extract_events
from turneval.dataset_scripts.grids import CHUNK_S, SAMPLE_RATE
from turneval.reporting import judge_probabilities, load_judge_model


SWITCH_MEAN_S = 30.0
SWITCH_SD_S = 10.0
SWITCH_MIN_S = 10.0
SWITCH_MAX_S = 50.0
MIN_BACKCHANNEL_SPACING_S = 1.0
"""SWOZ keeps at least 1 s between generated backchannels (also across a switch)."""
FADE_S = 0.01


class SwozError(ValueError):
    """The stimulus cannot be built from this dialogue; the message says why."""


def switching_schedule(
    duration_s: float,
    rng: random.Random,
    *,
    first_source: str | None = None,
    mean_s: float = SWITCH_MEAN_S,
    sd_s: float = SWITCH_SD_S,
    min_s: float = SWITCH_MIN_S,
    max_s: float = SWITCH_MAX_S,
) -> list[SourceSegment]:
    """Alternating human/algorithm intervals covering ``[0, duration_s)``.

    Interval lengths are drawn from N(mean_s, sd_s) and clipped to [min_s, max_s]; the
    last interval is cut at the end. The first source is random unless given.
    """
    if duration_s <= 0:
        raise SwozError(f"stimulus duration must be positive, got {duration_s}")
    source = first_source if first_source is not None else rng.choice(SOURCES)
    if source not in SOURCES:
        raise SwozError(f"first_source must be one of {SOURCES}, got {source!r}")
    schedule: list[SourceSegment] = []
    start = 0.0
    while start < duration_s:
        length = min(max(rng.gauss(mean_s, sd_s), min_s), max_s)
        end = min(start + length, duration_s)
        schedule.append(SourceSegment(round(start, 3), round(end, 3), source))
        start = end
        source = SOURCES[1 - SOURCES.index(source)]
    return schedule


def pause_rule_backchannels(
    dialogue: Dialogue,
    listener: int,
    *,
    min_speech_s: float = 1.0,
    min_pause_s: float = 0.2,
    delay_s: float = 0.25,
    min_spacing_s: float = MIN_BACKCHANNEL_SPACING_S,
) -> list[float]:
    """A simple listener algorithm: backchannel ``delay_s`` into each pause of the speaker
    (a silence of at least ``min_pause_s`` inside the speaker's turn) that follows at least
    ``min_speech_s`` of the speaker's speech, keeping ``min_spacing_s`` between backchannels.
    """
    events = extract_events(dialogue)
    speaker = 1 - listener
    ipus = events.ipus
    times: list[float] = []
    for pause in events.of_speaker("pauses", speaker):
        before = [u for u in ipus if u.speaker == speaker and abs(u.end - pause.start) < 1e-6]
        if pause.duration < min_pause_s or not before or before[0].duration < min_speech_s:
            continue
        t = pause.start + delay_s
        if not times or t - times[-1] >= min_spacing_s:
            times.append(round(t, 3))
    return times


def judge_backchannels(
    bc_probability: Sequence[float],
    *,
    threshold: float = 0.1,
    chunk_s: float = CHUNK_S,
    min_spacing_s: float = MIN_BACKCHANNEL_SPACING_S,
) -> list[float]:
    """Backchannel times from a judge's per-chunk BC probability (row k: chunk k from the
    audio before it): a backchannel at the start of each chunk where ``p_BC`` exceeds the
    threshold (default: Talking Turns' th_b = 0.1), at least ``min_spacing_s`` apart.
    NaN rows (no prediction) never trigger."""
    times: list[float] = []
    for k, p in enumerate(bc_probability):
        if p is None or not math.isfinite(float(p)) or float(p) <= threshold:
            continue
        t = round(k * chunk_s, 3)
        if not times or t - times[-1] >= min_spacing_s:
            times.append(t)
    return times


def judge_listener_backchannels(
    dialogue: Dialogue,
    listener: int,
    judge: Any,
    *,
    threshold: float = 0.1,
    min_spacing_s: float = MIN_BACKCHANNEL_SPACING_S,
) -> list[float]:
    """The judge as the listener algorithm: :func:`judge_backchannels` on its BC probability
    over the conversation's mono mix, kept only inside the speaker's turns (the judge says
    *that* a backchannel fits, not who gives it).

    Args:
        judge: a TurnTakingJudge checkpoint folder or a loaded model.
    """
    if dialogue.audio is None:
        raise SwozError(f"dialogue {dialogue.id!r} has no audio for the judge")
    model, _ = load_judge_model(judge)
    probs = judge_probabilities(model, dialogue.audio)
    bc = list(model.config.label_names).index("BC")
    turns = extract_events(dialogue).of_speaker("turns", 1 - listener)
    times = judge_backchannels(probs[:, bc], threshold=threshold, min_spacing_s=min_spacing_s)
    return [t for t in times if any(turn.start <= t < turn.end for turn in turns)]


@dataclass
class SwozStimulus:
    """The mixed conversation and where each listener backchannel came from."""

    stimulus_id: str
    audio: np.ndarray
    listener: int
    schedule: list[SourceSegment]
    backchannels: list[dict] = field(default_factory=list)
    """``{"start", "end", "source"}`` of every backchannel heard on the listener channel."""

    @property
    def duration(self) -> float:
        return self.audio.shape[1] / SAMPLE_RATE


def _fade(clip: np.ndarray) -> np.ndarray:
    n = min(int(FADE_S * SAMPLE_RATE), clip.shape[0] // 2)
    if n == 0:
        return clip
    ramp = np.linspace(0.0, 1.0, n, dtype=np.float32)
    clip = clip.copy()
    clip[:n] *= ramp
    clip[-n:] *= ramp[::-1]
    return clip


def _silence(channel: np.ndarray, start: float, end: float) -> None:
    """Zero ``[start, end)`` with short fades so the cut does not click."""
    a, b = int(start * SAMPLE_RATE), min(int(math.ceil(end * SAMPLE_RATE)), channel.shape[0])
    n = min(int(FADE_S * SAMPLE_RATE), max(0, (b - a) // 2))
    if n:
        channel[a : a + n] *= np.linspace(1.0, 0.0, n, dtype=np.float32)
        channel[b - n : b] *= np.linspace(0.0, 1.0, n, dtype=np.float32)
        channel[a + n : b - n] = 0.0
    else:
        channel[a:b] = 0.0


def build_swoz_stimulus(
    dialogue: Dialogue,
    listener: int,
    schedule: Sequence[SourceSegment],
    algorithm_times: Sequence[float],
    *,
    min_spacing_s: float = MIN_BACKCHANNEL_SPACING_S,
) -> SwozStimulus:
    """Mix the stimulus: human backchannels in human intervals, the algorithm's (the
    listener's own snippets, in rotation) in algorithm intervals.

    An algorithm backchannel is placed only where the listener's remaining speech leaves
    room for the whole snippet and at least ``min_spacing_s`` from every other backchannel.

    Raises:
        SwozError: no audio, or the listener has no backchannel in the dialogue to reuse.
    """
    if dialogue.audio is None:
        raise SwozError(f"dialogue {dialogue.id!r} has no audio")
    if listener not in (0, 1):
        raise SwozError(f"listener must be channel 0 or 1, got {listener!r}")
    events = extract_events(dialogue)
    human = list(events.of_speaker("backchannels", listener))
    if not human:
        raise SwozError(f"dialogue {dialogue.id!r}: channel {listener} has no backchannels to reuse as the algorithm's voice; pick the other listener channel or another dialogue")
    audio = dialogue.audio.copy()
    channel = audio[listener]
    clips = [_fade(dialogue.audio[listener, int(b.start * SAMPLE_RATE) : int(math.ceil(b.end * SAMPLE_RATE))].copy()) for b in human]

    def source(t: float) -> str:
        return source_at(schedule, t)

    kept: list[dict] = []
    for bc in human:
        if source(bc.start) == "algorithm":
            _silence(channel, bc.start, bc.end)
        else:
            kept.append({"start": bc.start, "end": bc.end, "source": "human"})
    removed = {(bc.start, bc.end) for bc in human if source(bc.start) == "algorithm"}
    busy = [(s, e) for s, e in dialogue.segments[listener] if not any(s <= rs and re <= e for rs, re in removed)]
    placed: list[dict] = []
    for t in (t for t in algorithm_times if source(t) == "algorithm"):
        clip = clips[len(placed) % len(clips)]
        end = t + clip.shape[0] / SAMPLE_RATE
        if end > dialogue.duration or any(s < end and e > t for s, e in busy):
            continue
        if any(abs(t - b["start"]) < min_spacing_s for b in kept + placed):
            continue
        a = int(round(t * SAMPLE_RATE))
        channel[a : a + clip.shape[0]] += clip[: channel.shape[0] - a]
        placed.append({"start": round(t, 3), "end": round(end, 3), "source": "algorithm"})
    np.clip(audio, -1.0, 1.0, out=audio)
    return SwozStimulus(
        stimulus_id=f"{dialogue.id}__swoz",
        audio=audio,
        listener=listener,
        schedule=list(schedule),
        backchannels=sorted(kept + placed, key=lambda b: b["start"]),
    )


def default_listener(dialogue: Dialogue) -> int:
    """The channel with more backchannels (ties: the system's, else B)."""
    events = extract_events(dialogue)
    counts = [len(events.of_speaker("backchannels", s)) for s in (0, 1)]
    if counts[0] == counts[1]:
        return dialogue.system_speaker if dialogue.system_speaker is not None else 1
    return int(np.argmax(counts))


__all__ = [
    "SWITCH_MAX_S",
    "SWITCH_MEAN_S",
    "SWITCH_MIN_S",
    "SWITCH_SD_S",
    "SwozError",
    "SwozStimulus",
    "build_swoz_stimulus",
    "default_listener",
    "judge_backchannels",
    "judge_listener_backchannels",
    "pause_rule_backchannels",
    "switching_schedule",
]
