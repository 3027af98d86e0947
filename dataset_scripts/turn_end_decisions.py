"""Turn-end decisions: after a speaker's IPU ends and a silence follows, who speaks next?

This is the decision that metric (a) of Talking Turns scores and that turn-end detectors
(smart-turn, silence thresholds, VAP's shift/hold) make: a speaker stops; ``min_silence``
seconds later nobody has spoken yet; does the *other* speaker take the turn (**shift**) or
does the same speaker go on (**hold**)?

One decision per IPU of :func:`~turneval.dataset_scripts.events.extract_events` that

- is followed by at least ``min_silence`` seconds in which *nobody* speaks (the partner is not
  speaking when it ends and does not start within ``min_silence``), and
- is followed by speech of exactly one speaker (both starting at the same instant, or the end
  of the conversation, decide nothing).

The next IPU decides: the partner's is a shift, the speaker's own a hold. By default every
IPU counts and so does every next IPU, backchannels included (a listener's "uh-huh", a pause,
then the main speaker goes on: a shift). Two switches give metric (a)'s stricter view, in
which only the floor holder's pauses count and a backchannel answer is neither T nor C:

- ``include_backchannel_ipus=False``: no decision after the speaker's own backchannel IPUs
  (a backchannel does not hold the floor);
- ``next_backchannel``: what a partner backchannel as the next speech counts as:
  ``"shift"`` (default: the partner spoke), ``"hold"`` (the turn did not change hands) or
  ``"skip"`` (no decision).

On Switchboard (200 test calls, ``min_silence=0.2``) the default gives 25.6 % shifts; the
metric (a) view (``include_backchannel_ipus=False, next_backchannel="skip"``) gives 16.2 %,
beside Talking Turns' 15.9 % (Table 2, (a), human in domain); docs/switchboard.md.

Features (what a predictor may see at the decision time, ``ipu_end + min_silence``):
the IPU's length, the length of the speaker's turn up to the IPU end, the time since the
partner's last IPU ended and that IPU's length (None when the partner has not spoken yet), the
IPU's last two words and its first word (lowercase, ms98 spelling such as ``uh-huh`` or
``[laughter]``; empty without words), the IPU end time and the speaker.

Example (A asks, pauses 0.5 s, goes on; then B answers after a 0.6 s gap):

>>> from turneval.dataset_scripts.dialogue import Dialogue, Word
>>> a = [Word(0.0, 0.4, "so"), Word(0.4, 1.0, "well"), Word(1.5, 2.0, "how"), Word(2.0, 2.4, "are"), Word(2.4, 3.0, "you")]
>>> b = [Word(3.6, 4.0, "fine"), Word(4.0, 4.5, "thanks")]
>>> dialogue = Dialogue("demo", [[(w.start, w.end) for w in a], [(w.start, w.end) for w in b]], words=[a, b])
>>> for d in turn_end_decisions(dialogue):
...     print(d.speaker, d.ipu_end, d.label, d.last_words, d.first_word, round(d.turn_duration, 2), round(d.silence_until_next_s, 2))
0 1.0 hold ('so', 'well') so 1.0 0.5
0 3.0 shift ('are', 'you') how 3.0 0.6
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from .dialogue import SPEAKERS, Dialogue
from .events import TurnTakingEvents, extract_events


DEFAULT_MIN_SILENCE_S = 0.2
"""Seconds of silence after the IPU before the decision is taken (pipecat's VAD stop time,
the "200 ms after the IPU end" of metric (a) decisions)."""

NEXT_BACKCHANNEL_RULES = ("skip", "hold", "shift")


@dataclass(frozen=True)
class TurnEndDecision:
    """One turn-end decision and the features a turn-end predictor may use.

    Attributes:
        dialogue_id: the conversation.
        speaker: 0 (A) or 1 (B), whose IPU ended.
        ipu_end: seconds, when the IPU ended.
        ipu_duration: seconds, the IPU's length.
        turn_duration: seconds from the start of the speaker's turn to ``ipu_end``.
        partner_since: seconds from the end of the partner's last IPU (backchannels included)
            to ``ipu_end``; negative never (an IPU of the partner still running at ``ipu_end``
            means no decision). None when the partner has not spoken yet.
        partner_ipu_duration: seconds, the length of that partner IPU (None likewise).
        last_words: the IPU's last two words (fewer when it has fewer), lowercase.
        first_word: the IPU's first word, lowercase ("" without words).
        shift: True when the next speech is the partner's, False when it is the speaker's.
        silence_until_next_s: seconds from ``ipu_end`` to the next speech of anyone (the
            outcome's timing; not a feature: it is not known at the decision time). The
            silences are named as in :mod:`~turneval.pause_decision.pause`.
        next_is_backchannel: the next speech is a partner backchannel.
        is_backchannel: the IPU that ended is itself a backchannel.
        silence_elapsed_s: seconds nobody has spoken when the decision is taken, at
            ``ipu_end + silence_elapsed_s`` (the ``min_silence`` of :func:`turn_end_decisions`).
    """

    dialogue_id: str
    speaker: int
    ipu_end: float
    ipu_duration: float
    turn_duration: float
    partner_since: float | None
    partner_ipu_duration: float | None
    last_words: tuple[str, ...]
    first_word: str
    shift: bool
    silence_until_next_s: float
    next_is_backchannel: bool = False
    is_backchannel: bool = False
    silence_elapsed_s: float = DEFAULT_MIN_SILENCE_S

    @property
    def label(self) -> str:
        """``"shift"`` or ``"hold"``."""
        return "shift" if self.shift else "hold"

    @property
    def speaker_name(self) -> str:
        return SPEAKERS[self.speaker]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["last_words"] = list(self.last_words)
        out["label"] = self.label
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TurnEndDecision":
        """The inverse of :meth:`to_dict` (``label`` is derived, so it is ignored)."""
        fields = {k: v for k, v in data.items() if k != "label"}
        fields["last_words"] = tuple(fields.get("last_words", ()))
        return cls(**fields)


def _word_features(words: Sequence[str]) -> tuple[tuple[str, ...], str]:
    lowered = [w.lower() for w in words]
    return tuple(lowered[-2:]), (lowered[0] if lowered else "")


def turn_end_decisions(
    dialogue: Dialogue,
    min_silence: float = DEFAULT_MIN_SILENCE_S,
    *,
    next_backchannel: str = "shift",
    include_backchannel_ipus: bool = True,
    events: TurnTakingEvents | None = None,
    **event_kwargs: Any,
) -> list[TurnEndDecision]:
    """Every turn-end decision of ``dialogue`` (rules in the module docstring), in time order.

    Args:
        dialogue: the conversation; words make the word features and word-based backchannels.
        min_silence: seconds of silence (nobody speaking) after the IPU end that a decision
            needs; the decision is taken at ``ipu_end + min_silence``.
        next_backchannel: ``"shift"`` (default), ``"hold"`` or ``"skip"``: what a partner
            backchannel as the next speech counts as.
        include_backchannel_ipus: also decide after the speaker's own backchannel IPUs
            (default True; their turn length is the IPU's own).
        events: the dialogue's events when already extracted (else extracted here).
        **event_kwargs: passed to :func:`~turneval.dataset_scripts.events.extract_events`.
    """
    if min_silence < 0:
        raise ValueError(f"min_silence must be >= 0 seconds, got {min_silence}")
    if next_backchannel not in NEXT_BACKCHANNEL_RULES:
        raise ValueError(f"next_backchannel must be one of {NEXT_BACKCHANNEL_RULES}, got {next_backchannel!r}")
    if events is None:
        events = extract_events(dialogue, **event_kwargs)
    ipus = events.ipus
    backchannels = events.backchannel_ipus()
    timings = event_timings(events)
    silence_at = {s.start: s for s in events.silences}
    starts_at: dict[float, list[int]] = {}
    for j, u in enumerate(ipus):
        starts_at.setdefault(u.start, []).append(j)

    out: list[TurnEndDecision] = []
    for i, ipu in enumerate(ipus):
        if i in backchannels and not include_backchannel_ipus:
            continue
        silence = silence_at.get(ipu.end)  # None: somebody is still speaking when this IPU ends
        if silence is None or silence.duration < min_silence - 1e-9:
            continue
        following = starts_at.get(silence.end, [])
        speakers = {ipus[j].speaker for j in following}
        if len(speakers) != 1:
            continue  # end of the conversation, or both start together
        shift = next(iter(speakers)) != ipu.speaker
        next_bc = shift and any(j in backchannels for j in following)
        if next_bc:
            if next_backchannel == "skip":
                continue
            shift = next_backchannel == "shift"
        last_words, first_word = _word_features(ipu.words)
        timing = timings[i]
        out.append(
            TurnEndDecision(
                dialogue_id=events.dialogue_id,
                speaker=ipu.speaker,
                ipu_end=ipu.end,
                ipu_duration=timing.ipu_duration,
                turn_duration=timing.turn_duration,
                partner_since=timing.partner_since,
                partner_ipu_duration=timing.partner_ipu_duration,
                last_words=last_words,
                first_word=first_word,
                shift=shift,
                silence_until_next_s=silence.duration,
                next_is_backchannel=next_bc,
                is_backchannel=timing.is_backchannel,
                silence_elapsed_s=float(min_silence),
            )
        )
    return out


# --------------------------------------------------------------------------- timing at an IPU end
@dataclass(frozen=True)
class IpuTiming:
    """What the conversation's timing says when one IPU ends: the timing fields of
    :class:`TurnEndDecision`, for every IPU (not only those followed by a decision)."""

    speaker: int
    ipu_end: float
    ipu_duration: float
    turn_duration: float
    partner_since: float | None
    partner_ipu_duration: float | None
    is_backchannel: bool


def event_timings(events: TurnTakingEvents) -> list[IpuTiming]:
    """One :class:`IpuTiming` per IPU of ``events`` (same order)."""
    ipus = events.ipus
    backchannels = events.backchannel_ipus()
    turn_start = {i: turn.start for turn in events.turns for i in turn.ipus}
    # Per speaker, IPU ends in time order (a speaker's IPUs are disjoint): the partner's last IPU.
    ends = [[u.end for u in ipus if u.speaker == k] for k in (0, 1)]
    lengths = [[u.duration for u in ipus if u.speaker == k] for k in (0, 1)]
    out = []
    for i, ipu in enumerate(ipus):
        partner = 1 - ipu.speaker
        k = bisect_right(ends[partner], ipu.end) - 1
        out.append(
            IpuTiming(
                speaker=ipu.speaker,
                ipu_end=ipu.end,
                ipu_duration=ipu.duration,
                turn_duration=ipu.end - turn_start.get(i, ipu.start),
                partner_since=ipu.end - ends[partner][k] if k >= 0 else None,
                partner_ipu_duration=lengths[partner][k] if k >= 0 else None,
                is_backchannel=i in backchannels,
            )
        )
    return out


def speech_timings(dialogue: Dialogue) -> list[IpuTiming]:
    """Every IPU's :class:`IpuTiming` from the speech segments alone (``use_words=False``: words,
    where the dialogue has them, are ignored, and backchannels are told by the duration proxy),
    which is what a report has from voice activity; so a model that reads these features was
    trained on what it will be given."""
    return event_timings(extract_events(dialogue, use_words=False))


def timing_at(timings: Sequence[IpuTiming], speaker: int, time_s: float, slack_s: float = 0.12) -> IpuTiming:
    """The timing of ``speaker``'s IPU that ends at ``time_s``: of those starting before
    ``time_s + slack_s`` (a 40 ms grid and rounding between readers stay inside the slack), the
    one whose end is nearest. A pause shorter than the IPU-splitting silence lies inside an
    IPU; that IPU's timing stands for it."""
    own = [t for t in timings if t.speaker == speaker and t.ipu_end - t.ipu_duration <= time_s + slack_s]
    if not own:
        raise ValueError(f"speaker {speaker} has no IPU starting before {time_s:.3f} s")
    return min(own, key=lambda t: abs(t.ipu_end - time_s))


TIMING_FEATURES = ("log_ipu_s", "log_turn_s", "log_partner_since_s", "partner_not_heard", "log_partner_ipu_s", "is_backchannel")
"""The timing features of a turn-end head, in order (:func:`timing_features`)."""

PARTNER_SINCE_CAP_S = 30.0
"""Longer times since the partner last spoke are this long (a cap, not a cut)."""


def timing_features(timing: IpuTiming | TurnEndDecision) -> np.ndarray:
    """The :data:`TIMING_FEATURES` of one IPU end, ``float32 [6]``: log(1 + seconds) of the IPU's
    and the turn's length, of the time since the partner's last IPU (capped at
    :data:`PARTNER_SINCE_CAP_S`) and of that IPU's length (0 when the partner has not spoken,
    which the fourth feature flags), and whether the IPU is a backchannel.

    >>> [round(float(v), 3) for v in timing_features(IpuTiming(0, 3.0, 1.0, 3.0, None, None, False))]
    [0.693, 1.386, 0.0, 1.0, 0.0, 0.0]
    """
    heard = timing.partner_since is not None
    since = min(max(float(timing.partner_since), 0.0), PARTNER_SINCE_CAP_S) if heard else 0.0
    partner_ipu = float(timing.partner_ipu_duration or 0.0) if heard else 0.0
    return np.array(
        [np.log1p(timing.ipu_duration), np.log1p(timing.turn_duration), np.log1p(since), 0.0 if heard else 1.0,
         np.log1p(partner_ipu), float(timing.is_backchannel)],
        dtype=np.float32,
    )


def corpus_turn_end_decisions(dialogues: Iterable[Dialogue], min_silence: float = DEFAULT_MIN_SILENCE_S, **kwargs: Any) -> list[TurnEndDecision]:
    """:func:`turn_end_decisions` of every dialogue, concatenated."""
    return [d for dialogue in dialogues for d in turn_end_decisions(dialogue, min_silence, **kwargs)]


def shift_rate(decisions: Sequence[TurnEndDecision]) -> float:
    """The share of shifts (NaN for no decision)."""
    return sum(d.shift for d in decisions) / len(decisions) if decisions else float("nan")


__all__ = [
    "DEFAULT_MIN_SILENCE_S",
    "NEXT_BACKCHANNEL_RULES",
    "PARTNER_SINCE_CAP_S",
    "TIMING_FEATURES",
    "IpuTiming",
    "TurnEndDecision",
    "corpus_turn_end_decisions",
    "event_timings",
    "shift_rate",
    "speech_timings",
    "timing_at",
    "timing_features",
    "turn_end_decisions",
]
