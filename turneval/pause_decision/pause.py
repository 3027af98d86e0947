"""One pause record: a speaker falls silent and a turn-taking decision is taken there.

Metrics (a) and (d) of Talking Turns, the judge's pause rule, smart-turn and the silence timer
all ask the same question at a pause: does the other party take the turn (``T``, a shift) or
does the pauser go on (``C``, a hold)? :class:`Pause` is what the report, the training of the
pause rule and the benchmarks read about such a pause: who paused, where their speech ended,
when the decision is taken, what audio a model may hear, and the outcome.

Three durations are easy to confuse at a pause, so each has its own name here and wherever a
pause's silence is read (the word *silence* always means that nobody speaks):

``silence_elapsed_s``
    how long nobody has spoken when the decision is taken: what a model deciding then knows.
``silence_until_next_s``
    from the pauser's speech end to the next speech of *anyone*: the whole silence, the
    outcome's timing (not known at the decision).
``until_pauser_resumes_s``
    from the pauser's speech end until *the pauser* speaks again (``inf``: never). After a
    shift this spans the other party's speech, so it is not a silence.

Every record is made by :mod:`turneval.pause_decision.records` (the one producer), which fills
what it measures and leaves the rest None: ``judge_pauses`` (the judge's (a)/(d) decisions on
the 40 ms grid), ``ipu_pauses`` (the same decisions where the silence follows one of the
pauser's IPUs, at smart-turn's stop time) and ``stop_time_pauses`` (every IPU end, for a
streamed decision).
Switchboard's word-level :class:`~turneval.dataset_scripts.turn_end_decisions.TurnEndDecision`
carries the same silence names.

>>> pause = Pause(session="demo", chunk=61, pauser=0, speech_end=2.0, time=2.44, horizon=2.2, turn_start=0.0,
...               silence_elapsed_s=0.48, decision="T")
>>> pause.shift, pause.label
(True, 'shift')
"""
from __future__ import annotations

from dataclasses import dataclass


PAUSE_DECISIONS = ("T", "C")
"""The outcomes of a pause: the other party takes the turn (a shift), the pauser continues (a hold)."""


@dataclass(frozen=True)
class Pause:
    """One (a)/(d)-style decision at a pause (the silences are named in the module docstring).

    Attributes:
        session: the conversation id ("" when the labels carry none).
        chunk: the decision chunk on the 40 ms grid (the first chunk after the silence).
        pauser: the channel of the speaker who fell silent.
        speech_end: where the pauser's speech ended (s); each producer says how it measures it.
        time: when the decision is taken (s).
        horizon: the end of the audio a model may hear (s), never after ``time``.
        turn_start: where the pauser's current turn began (s): after the other party last held
            the floor (backchannels do not take it), or at the conversation's start.
        silence_elapsed_s: how long nobody has spoken at ``time`` (s).
        silence_until_next_s: from ``speech_end`` to the next speech of anyone (s); None where
            the producer does not measure it.
        until_pauser_resumes_s: from ``speech_end`` until the pauser speaks again (s; inf:
            never); None where the producer does not measure it.
        decision: "T" (the other party took the turn) or "C" (the pauser went on); None when
            unknown.
        metric: "a" (the user paused) or "d" (the system paused); None when the producer does
            not know which party is the system.
    """

    session: str
    chunk: int
    pauser: int
    speech_end: float
    time: float
    horizon: float
    turn_start: float
    silence_elapsed_s: float
    silence_until_next_s: float | None = None
    until_pauser_resumes_s: float | None = None
    decision: str | None = None
    metric: str | None = None

    def __post_init__(self) -> None:
        if self.decision is not None and self.decision not in PAUSE_DECISIONS:
            raise ValueError(f"a pause's decision is one of {PAUSE_DECISIONS} or None, got {self.decision!r}")

    @property
    def shift(self) -> bool | None:
        """True when the other party took the turn, False when the pauser went on, None when unknown."""
        return None if self.decision is None else self.decision == "T"

    @property
    def label(self) -> str | None:
        """``"shift"``, ``"hold"`` or None (the words of turn-end decisions)."""
        return None if self.shift is None else ("shift" if self.shift else "hold")


__all__ = ["PAUSE_DECISIONS", "Pause"]
