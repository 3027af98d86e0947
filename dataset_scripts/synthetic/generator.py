"""Plan, speak and mix one synthetic dyadic conversation.

The conversation is built turn by turn on a timeline. A turn is one or more clauses (IPUs)
of the floor holder separated by pauses; turn-internal clauses end with ',' and the last
one with '.' or '?'. While a clause plays, the listener may backchannel (at the clause end
or, for the "anywhere" placement, inside it) or interrupt it. An interruption either takes
the floor (the speaker stops shortly after the overlap starts and the interrupter's turn
begins) or butts in (the interrupter breaks off and the speaker carries on). Every choice
is drawn from one seeded generator, so a seed always gives the same dialogue, and every
planned event is recorded in ``Dialogue.metadata`` as ground truth.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from ..dialogue import SPEAKERS, Dialogue, Word
from ..grids import SAMPLE_RATE
from .espeak import Utterance, Voice, synthesize
from .material import Clause, SentenceMaker
from .timing import STYLES, SpeakerBehaviour, style_behaviours


GENERATOR_VERSION = "1"

MIN_SAME_SPEAKER_SILENCE = 0.3
"""Seconds of silence kept between two IPUs of one speaker, above the 200 ms IPU rule."""
END_MARGIN = 0.3
"""Seconds of silence left at the end of the recording."""
MIN_INTERRUPTIBLE = 1.2
"""Only clauses at least this long (s) get interrupted."""
MAX_IPUS_PER_TURN = 5
_FADE_S = 0.02

_MALE_VARIANTS = ("m1", "m2", "m3", "m4", "m5", "m6", "m7")
_FEMALE_VARIANTS = ("f1", "f2", "f3", "f4", "f5")


def draw_voices(rng: np.random.Generator) -> tuple[Voice, Voice]:
    """Two clearly different voices: one male, one female variant, with distinct pitch and rate.

    Which channel gets which is drawn too.
    """
    male = Voice(
        name=f"en-us+{_MALE_VARIANTS[int(rng.integers(len(_MALE_VARIANTS)))]}",
        rate=int(rng.integers(150, 186)),
        pitch=int(rng.integers(25, 46)),
        pitch_range=int(rng.integers(40, 71)),
        gain=round(float(rng.uniform(0.55, 0.85)), 3),
    )
    female = Voice(
        name=f"en-us+{_FEMALE_VARIANTS[int(rng.integers(len(_FEMALE_VARIANTS)))]}",
        rate=int(rng.integers(155, 191)),
        pitch=int(rng.integers(55, 76)),
        pitch_range=int(rng.integers(45, 81)),
        gain=round(float(rng.uniform(0.55, 0.85)), 3),
    )
    return (male, female) if rng.random() < 0.5 else (female, male)


@dataclass
class _Placed:
    """An utterance placed on the timeline."""

    speaker: int
    start: float
    utterance: Utterance
    role: str  # turn_internal | turn_final | interrupted | backchannel | butt_in
    punct: str

    @property
    def end(self) -> float:
        return self.start + self.utterance.duration


@dataclass
class _Timeline:
    limit: float
    placed: list[_Placed] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def add(self, item: _Placed) -> _Placed:
        self.placed.append(item)
        return item

    def last_end(self, speaker: int) -> float:
        return max((p.end for p in self.placed if p.speaker == speaker), default=-math.inf)

    def is_free(self, speaker: int, start: float, end: float, margin: float = MIN_SAME_SPEAKER_SILENCE) -> bool:
        """True when ``speaker`` says nothing within ``margin`` of [start, end]."""
        return all(p.end + margin <= start or p.start >= end + margin for p in self.placed if p.speaker == speaker)


def _truncate(utt: Utterance, cut: float) -> Utterance:
    """The utterance stopped at ``cut`` seconds (a short fade avoids a click); later words are dropped."""
    words = [Word(w.start, min(w.end, cut), w.text) for w in utt.words if w.start < cut - 0.05]
    if not words:
        raise ValueError("cut before the first word")
    end = words[-1].end
    audio = utt.audio[: int(round(end * SAMPLE_RATE))].copy()
    fade = min(len(audio), int(_FADE_S * SAMPLE_RATE))
    audio[len(audio) - fade :] *= np.linspace(1.0, 0.0, fade, dtype=np.float32)
    return Utterance(audio=audio, words=words, text=" ".join(w.text for w in words))


class _Planner:
    """Builds the timeline of one dialogue."""

    def __init__(self, rng: np.random.Generator, voices: tuple[Voice, Voice], behaviours: tuple[SpeakerBehaviour, SpeakerBehaviour], duration_s: float):
        self.rng = rng
        self.voices = voices
        self.behaviours = behaviours
        self.material = SentenceMaker(rng)
        self.timeline = _Timeline(limit=duration_s - END_MARGIN)

    def speak(self, speaker: int, clause: Clause) -> Utterance:
        return synthesize(clause.tokens, self.voices[speaker])

    def run(self) -> _Timeline:
        rng = self.rng
        speaker = int(rng.integers(2))
        turn_start: float | None = float(rng.uniform(0.2, 0.8))
        first: tuple[Utterance, Clause] | None = None  # an interrupter's opening clause, already spoken
        prev_punct = None
        prev_end = 0.0
        while True:
            if turn_start is None:
                gap = self.behaviours[speaker].response_gap.sample(rng)
                last_other = [p for p in self.timeline.placed if p.speaker != speaker and p.role in ("turn_internal", "turn_final")]
                if last_other:  # an overlapping start still begins after the other's last clause starts
                    gap = max(gap, last_other[-1].start + 0.3 - prev_end)
                turn_start = max(prev_end + gap, self.timeline.last_end(speaker) + MIN_SAME_SPEAKER_SILENCE)
                planned_gap = turn_start - prev_end
            else:
                planned_gap = None
            outcome = self._turn(speaker, turn_start, prev_punct, first, planned_gap)
            if outcome is None:
                return self.timeline
            prev_end, prev_punct, interruption = outcome
            speaker = 1 - speaker
            if interruption is not None:
                turn_start, first = interruption
            else:
                turn_start, first = None, None

    def _turn(self, speaker: int, start: float, prev_punct: str | None, first, planned_gap):
        """Speak one turn; returns (end, final punctuation, pending floor-taking interruption) or None when time is up."""
        rng, beh = self.rng, self.behaviours[speaker]
        n_ipus = min(MAX_IPUS_PER_TURN, 1 + int(rng.poisson(max(beh.ipus_per_turn_mean - 1.0, 0.0))))
        final_punct = "?" if rng.random() < beh.question_prob else "."
        if first is not None:
            # An interrupter's opening clause is already spoken: its punctuation says whether it goes on.
            n_ipus = 1 if first[1].punct in ".?" else max(2, n_ipus)
        self.material.maybe_change_topic()
        t = start
        placed_ipus: list[_Placed] = []
        i = 0
        while i < n_ipus:
            last = i == n_ipus - 1
            punct = final_punct if last else ","
            if i == 0 and first is not None:
                utt, clause = first
                role_punct = clause.punct
            else:
                clause = self._clause(speaker, i, last, punct, prev_punct)
                utt = self.speak(speaker, clause)
                role_punct = punct
            if i > 0:
                t = placed_ipus[-1].end + beh.pause.sample(rng)
            if t + utt.duration > self.timeline.limit:
                self._drop_late_backchannels(placed_ipus)
                break
            item = self.timeline.add(_Placed(speaker, t, utt, "turn_final" if last else "turn_internal", role_punct))
            placed_ipus.append(item)
            interruption = self._maybe_interrupt(item)
            if interruption is not None:
                kind, payload = interruption
                if kind == "floor_taking":
                    self._close_turn(speaker, placed_ipus, start, planned_gap, interrupted=True)
                    return placed_ipus[-1].end, placed_ipus[-1].punct, payload
                if last:  # the speaker kept the floor after a butt-in, so it goes on speaking
                    n_ipus += 1
                    item.role = "turn_internal"
            else:
                self._maybe_backchannel(item, last)
            i += 1
        if not placed_ipus:
            return None
        self._close_turn(speaker, placed_ipus, start, planned_gap, interrupted=False)
        if len(placed_ipus) < n_ipus:
            return None  # time is up inside this turn
        return placed_ipus[-1].end, placed_ipus[-1].punct, None

    def _drop_late_backchannels(self, ipus: list[_Placed]) -> None:
        """Remove backchannels that outlast a turn cut short by the end of the recording.

        They were placed at the end of a turn-internal clause, expecting the turn to go on;
        without a following clause they would no longer lie inside the speaker's turn.
        """
        if not ipus:
            return
        end = ipus[-1].end
        late = [p for p in self.timeline.placed if p.role == "backchannel" and p.speaker != ipus[-1].speaker and p.end > end]
        if late:
            self.timeline.placed = [p for p in self.timeline.placed if p not in late]
            starts = {round(p.start, 4) for p in late}
            self.timeline.events = [e for e in self.timeline.events if not (e["type"] == "backchannel" and e["start"] in starts)]

    def _clause(self, speaker: int, index: int, last: bool, punct: str, prev_punct: str | None) -> Clause:
        beh = self.behaviours[speaker]
        m = self.material
        if index == 0:
            opener = m.answer_opener(beh.register) if (prev_punct == "?" or self.rng.random() < 0.25) else None
            kind = "question" if (last and punct == "?") else "statement"
            return m.clause(kind, punct, opener=opener, register=beh.register)
        kind = "question" if punct == "?" else ("continuation" if self.rng.random() < 0.6 else "statement")
        return m.clause(kind, punct, register=beh.register)

    def _close_turn(self, speaker: int, ipus: list[_Placed], start: float, planned_gap, interrupted: bool) -> None:
        self.timeline.events.append(
            {
                "type": "turn",
                "speaker": SPEAKERS[speaker],
                "start": round(ipus[0].start, 4),
                "end": round(ipus[-1].end, 4),
                "n_ipus": len(ipus),
                "final_punct": ipus[-1].punct,
                "gap_before": None if planned_gap is None else round(planned_gap, 4),
                "interrupted": interrupted,
            }
        )

    def _maybe_backchannel(self, item: _Placed, last_of_turn: bool) -> None:
        rng = self.rng
        listener = 1 - item.speaker
        beh = self.behaviours[listener]
        if beh.backchannel_rate <= 0:
            return
        expected = beh.backchannel_rate / 60.0 * item.utterance.duration
        if rng.random() >= 1.0 - math.exp(-expected):
            return
        utt = self.speak(listener, self.material.backchannel())
        if beh.backchannel_placement == "cue" and not last_of_turn:
            # At the end of a turn-internal clause, where the ',' cue invites one.
            start = item.end + float(rng.uniform(-0.25, 0.15))
        else:
            # Inside the clause: after a word (cue) or anywhere (an eager system).
            lo, hi = item.start + 0.5, item.end - 0.4 - utt.duration
            if hi <= lo:
                return
            if beh.backchannel_placement == "cue":
                ends = [item.start + w.end for w in item.utterance.words if lo <= item.start + w.end <= hi]
                if not ends:
                    return
                start = ends[int(rng.integers(len(ends)))] + float(rng.uniform(0.0, 0.15))
            else:
                start = float(rng.uniform(lo, hi))
        end = start + utt.duration
        if end > self.timeline.limit or not self.timeline.is_free(listener, start, end):
            return
        self.timeline.add(_Placed(listener, start, utt, "backchannel", "."))
        self.timeline.events.append(
            {"type": "backchannel", "speaker": SPEAKERS[listener], "start": round(start, 4), "end": round(end, 4), "text": " ".join(w.text for w in utt.words)}
        )

    def _maybe_interrupt(self, item: _Placed):
        """Maybe interrupt ``item``: returns ("floor_taking", (start, (utt, clause))), ("butt_in", None) or None."""
        rng = self.rng
        listener = 1 - item.speaker
        beh = self.behaviours[listener]
        dur = item.utterance.duration
        if dur < MIN_INTERRUPTIBLE or beh.interruption_prob <= 0 or rng.random() >= beh.interruption_prob:
            return None
        low, high = (0.55, 0.85) if beh.interruption_placement == "late" else (0.15, 0.85)
        point = item.start + max(0.4, float(rng.uniform(low, high)) * dur)
        floor_taking = rng.random() < self.behaviours[item.speaker].yield_prob
        if floor_taking:
            punct = "," if rng.random() < 0.5 else "."
            clause = self.material.clause("statement", punct, opener=self.material.interruption_opener(), register=beh.register)
        else:
            clause = self.material.butt_in()
        utt = self.speak(listener, clause)
        if not floor_taking:
            # The interrupter gives up before the speaker's clause ends.
            point = min(point, item.end - 0.15 - utt.duration)
            if point < item.start + 0.3:
                return None
        if point + utt.duration > self.timeline.limit or not self.timeline.is_free(listener, point, point + utt.duration):
            return None
        event = {"type": "interruption", "speaker": SPEAKERS[listener], "interrupted": SPEAKERS[item.speaker], "start": round(point, 4), "floor_taking": floor_taking}
        if floor_taking:
            cut = point + float(rng.uniform(0.2, 0.6))
            if cut < item.end - 0.05:
                item.utterance = _truncate(item.utterance, cut - item.start)
            item.role = "interrupted"  # the clause that lost the floor (cut short unless nearly done)
            event["interrupted_end"] = round(item.end, 4)
            self.timeline.events.append(event)
            return "floor_taking", (point, (utt, clause))
        self.timeline.add(_Placed(listener, point, utt, "butt_in", ","))
        event["end"] = round(point + utt.duration, 4)
        self.timeline.events.append(event)
        return "butt_in", None


def _mix(timeline: _Timeline, n_samples: int) -> np.ndarray:
    audio = np.zeros((2, n_samples), dtype=np.float32)
    for p in timeline.placed:
        a = int(round(p.start * SAMPLE_RATE))
        seg = p.utterance.audio[: max(0, n_samples - a)]
        audio[p.speaker, a : a + len(seg)] += seg
    return audio


def add_noise(audio: np.ndarray, segments: list[list[tuple[float, float]]], snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """Add independent Gaussian noise to each channel at ``snr_db`` relative to that channel's speech power."""
    noisy = audio.copy()
    for ch in range(audio.shape[0]):
        mask = np.zeros(audio.shape[1], dtype=bool)
        for s, e in segments[ch]:
            mask[int(s * SAMPLE_RATE) : int(e * SAMPLE_RATE)] = True
        power = float(np.mean(audio[ch, mask] ** 2)) if mask.any() else 1e-4
        noise_power = power / (10.0 ** (snr_db / 10.0))
        noisy[ch] += rng.normal(0.0, math.sqrt(noise_power), audio.shape[1]).astype(np.float32)
    return np.clip(noisy, -1.0, 1.0)


def generate_dialogue(
    seed: int,
    *,
    duration_s: float = 60.0,
    style: str = "human",
    system_speaker: int | None = None,
    snr_db: float | None = None,
    voices: tuple[Voice, Voice] | None = None,
    behaviours: tuple[SpeakerBehaviour, SpeakerBehaviour] | None = None,
    dialogue_id: str | None = None,
) -> Dialogue:
    """Generate one synthetic two-speaker conversation with its audio and ground truth.

    Args:
        seed: the random seed; the same arguments always give the same dialogue.
        duration_s: length of the recording in seconds (speech stops ``END_MARGIN`` before).
        style: "human" (human-human), "cascaded" or "eager_duplex" (the system speaker acts
            like that kind of spoken dialogue system; the other speaker is a human user).
        system_speaker: the system's channel (0 or 1). Defaults to None for "human" (a
            human-human dialogue; a given channel is only recorded) and to 1 for the system
            styles.
        snr_db: if given, add Gaussian noise to each channel at this signal-to-noise ratio.
        voices: the voices of A and B; drawn from the seed by default (one male, one female).
        behaviours: the timing behaviours of A and B; by default those of ``style``
            (see :func:`~turneval.dataset_scripts.synthetic.timing.style_behaviours`).
        dialogue_id: the dialogue id; defaults to ``synth_<style>_<seed>``.

    Returns:
        A Dialogue with stereo 16 kHz audio (A on channel 0, B on channel 1), one segment per
        IPU, words with times from eSpeak's word events, and ``metadata`` holding the planned
        events (turns with their gaps, backchannels, interruptions with their floor-taking
        flag), the voices and the timing parameters.
    """
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; choose one of {', '.join(STYLES)}")
    if not (math.isfinite(duration_s) and duration_s >= 5.0):
        raise ValueError(f"duration_s must be at least 5 s, got {duration_s!r}")
    if style != "human" and system_speaker is None:
        system_speaker = 1
    if behaviours is None:
        behaviours = style_behaviours(style, system_speaker)
    elif len(behaviours) != 2:
        raise ValueError(f"behaviours must give one SpeakerBehaviour per speaker, got {len(behaviours)}")
    rng = np.random.default_rng(seed)
    if voices is None:
        voices = draw_voices(rng)
        if style != "human":
            # A system speaks at an even, default rate and pitch range.
            voices = tuple(replace(v, rate=175, pitch_range=50) if i == system_speaker else v for i, v in enumerate(voices))  # type: ignore[assignment]
    elif len(voices) != 2:
        raise ValueError(f"voices must give one Voice per speaker, got {len(voices)}")
    timeline = _Planner(rng, voices, behaviours, duration_s).run()
    n_samples = int(round(duration_s * SAMPLE_RATE))
    audio = _mix(timeline, n_samples)
    placed = sorted(timeline.placed, key=lambda p: (p.start, p.speaker))
    segments: list[list[tuple[float, float]]] = [[], []]
    words: list[list[Word]] = [[], []]
    for p in placed:
        segments[p.speaker].append((round(p.start, 4), round(p.end, 4)))
        words[p.speaker].extend(Word(round(p.start + w.start, 4), round(p.start + w.end, 4), w.text) for w in p.utterance.words)
    if snr_db is not None:
        audio = add_noise(audio, segments, snr_db, rng)
    events = sorted(timeline.events, key=lambda e: e["start"])
    metadata = _metadata(seed, style, snr_db, voices, behaviours, placed, events)
    return Dialogue(
        id=dialogue_id or f"synth_{style}_{seed}",
        segments=segments,
        words=words,
        audio=audio,
        system_speaker=system_speaker,
        duration=duration_s,
        metadata=metadata,
    )


def _metadata(seed: int, style: str, snr_db: float | None, voices: Sequence[Voice], behaviours: Sequence[SpeakerBehaviour],
              placed: list[Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """A generated dialogue's ``metadata``: how it was made, its IPUs and its planned events."""
    return {
        "generator": "turneval.dataset_scripts.synthetic",
        "generator_version": GENERATOR_VERSION,
        "seed": int(seed),
        "style": style,
        "snr_db": snr_db,
        "voices": [v.to_dict() for v in voices],
        "behaviours": [b.to_dict() for b in behaviours],
        "ipus": [
            {"speaker": SPEAKERS[p.speaker], "start": round(p.start, 4), "end": round(p.end, 4), "role": p.role, "punct": p.punct, "text": " ".join(w.text for w in p.utterance.words)}
            for p in placed
        ],
        "events": events,
        "counts": {
            "turns": sum(e["type"] == "turn" for e in events),
            "backchannels": sum(e["type"] == "backchannel" for e in events),
            "interruptions": sum(e["type"] == "interruption" for e in events),
            "floor_taking_interruptions": sum(e["type"] == "interruption" and e["floor_taking"] for e in events),
        },
    }
