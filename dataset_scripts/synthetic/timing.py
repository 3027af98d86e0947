"""Timing model: how each speaker of a synthetic dialogue behaves in time.

A :class:`SpeakerBehaviour` holds the distributions one speaker draws from (the gap before
taking a turn, pauses inside its turns, how often it backchannels, interrupts and yields).
A dialogue style gives both speakers a behaviour: ``human`` makes both human-like;
``cascaded`` and ``eager_duplex`` make the system speaker act like those kinds of spoken
dialogue system while the user stays human.

Human targets (Talking Turns §3, Switchboard/Fisher statistics): gaps centred near 200 ms
with about one in six overlapping starts (negative gaps), pauses inside a turn longer than
gaps (median ~0.55 s), about 4 listener backchannels per minute of the other's speech,
rare interruptions of which about 60 % take the floor.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np


STYLES = ("human", "cascaded", "eager_duplex")


@dataclass(frozen=True)
class Truncnorm:
    """A normal distribution clipped to [low, high] (seconds)."""

    mean: float
    sd: float
    low: float
    high: float

    def sample(self, rng: np.random.Generator) -> float:
        return float(np.clip(rng.normal(self.mean, self.sd), self.low, self.high))


@dataclass(frozen=True)
class Lognorm:
    """A log-normal distribution with the given median, clipped to [low, high] (seconds)."""

    median: float
    sigma: float
    low: float
    high: float

    def sample(self, rng: np.random.Generator) -> float:
        return float(np.clip(self.median * np.exp(rng.normal(0.0, self.sigma)), self.low, self.high))


@dataclass(frozen=True)
class SpeakerBehaviour:
    """Timing behaviour of one speaker.

    Attributes:
        response_gap: silence (s) between the other's turn end and this speaker's turn start;
            negative values are overlapping starts.
        pause: silence (s) between two IPUs inside this speaker's turn. Kept above the 200 ms
            IPU boundary so that each clause is its own IPU.
        ipus_per_turn_mean: mean number of IPUs in a turn (1 + Poisson).
        question_prob: probability that a turn ends with a question.
        backchannel_rate: backchannel attempts per minute of the other speaker's speech; some
            find no room (listener busy, clause too short), so the default 6 gives about 4
            backchannels per minute of conversation.
        backchannel_placement: "cue" (at the other's IPU ends, where listeners backchannel) or
            "anywhere" (at random points inside the other's IPUs).
        interruption_prob: probability of interrupting each long IPU of the other speaker.
        interruption_placement: "late" (in the last part of the IPU, near a likely end) or
            "anywhere" (also early, at unlikely places).
        yield_prob: when interrupted, the probability that this speaker gives up the floor
            (the interruption is floor-taking); otherwise the interrupter gives up (butting-in).
        register: "human" or "assistant" wording.
    """

    response_gap: Truncnorm | Lognorm = Truncnorm(0.2, 0.2, -0.4, 1.2)
    pause: Truncnorm | Lognorm = Lognorm(0.55, 0.35, 0.3, 1.6)
    ipus_per_turn_mean: float = 1.6
    question_prob: float = 0.3
    backchannel_rate: float = 6.0
    backchannel_placement: str = "cue"
    interruption_prob: float = 0.04
    interruption_placement: str = "late"
    yield_prob: float = 0.6
    register: str = "human"

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in ("response_gap", "pause"):
            out[key] = {"distribution": type(getattr(self, key)).__name__.lower(), **out[key]}
        return out


HUMAN = SpeakerBehaviour()

CASCADED_SYSTEM = SpeakerBehaviour(
    # A cascaded (ASR -> LLM -> TTS) system waits for an end-of-turn timeout and then for its pipeline.
    response_gap=Truncnorm(1.5, 0.2, 1.0, 2.0),
    pause=Truncnorm(0.45, 0.05, 0.35, 0.6),
    ipus_per_turn_mean=2.0,
    question_prob=0.2,
    backchannel_rate=0.0,
    interruption_prob=0.0,
    yield_prob=1.0,
    register="assistant",
)

EAGER_DUPLEX_SYSTEM = SpeakerBehaviour(
    # An eager full-duplex model starts before the user has finished and talks over them.
    response_gap=Truncnorm(-0.3, 0.3, -1.0, 0.3),
    pause=Lognorm(0.4, 0.3, 0.3, 1.0),
    ipus_per_turn_mean=1.8,
    question_prob=0.2,
    backchannel_rate=6.0,
    backchannel_placement="anywhere",
    interruption_prob=0.3,
    interruption_placement="anywhere",
    yield_prob=0.15,
    register="assistant",
)

# Users talking to a system: human timing, but they barge in on long system turns more often.
USER = replace(HUMAN, interruption_prob=0.08)


def style_behaviours(style: str, system_speaker: int | None) -> tuple[SpeakerBehaviour, SpeakerBehaviour]:
    """Behaviours of speakers A and B for a dialogue ``style``."""
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; choose one of {', '.join(STYLES)}")
    if style == "human":
        return HUMAN, HUMAN
    if system_speaker not in (0, 1):
        raise ValueError(f"style {style!r} needs system_speaker 0 or 1, got {system_speaker!r}")
    system = CASCADED_SYSTEM if style == "cascaded" else EAGER_DUPLEX_SYSTEM
    return (system, USER) if system_speaker == 0 else (USER, system)
