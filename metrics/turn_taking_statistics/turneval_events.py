# A copy of turneval.dataset_scripts.events for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""Turn-taking events of a dialogue: IPUs, silences, pauses, gaps, overlaps, backchannels,
turns and interruptions (docs/events_and_labels.md, Talking Turns §3.1).

One entry point, :func:`extract_events`, turns a
:class:`~turneval.dataset_scripts.dialogue.Dialogue` into a frozen :class:`TurnTakingEvents`.
The definitions, in the order they are computed:

- **IPU** (inter-pausal unit): a stretch of one speaker's speech bounded by more than
  ``ipu_silence_s`` (200 ms) of that speaker's silence on both sides. Built from the
  speaker's words when the dialogue has words for them (the word times; non-speech tokens
  such as ``[silence]`` or ``[noise]`` are ignored), else from their voice-activity segments.
- **Silence**: nobody speaks (between and around the IPUs, within ``[0, duration]``).
  A silence between two IPUs is a **pause** when the speaker who stopped is the one who
  resumes, else a **gap**. Leading and trailing silence is neither.
- **Overlap**: both speakers are inside an IPU.
- **Backchannel**: a listener IPU inside the other speaker's turn that is either made only
  of backchannel words (:func:`~turneval.dataset_scripts.vocabulary.load_backchannel_words`; by words, when the IPU has words) or,
  without words, at most ``max_backchannel_s`` (1.0 s) long (the duration proxy). "Inside the
  other speaker's turn" means: the other speaker holds the floor when it starts (they are
  speaking then, or the last IPU to end before it that is not itself backchannel-like is
  theirs) and the listener does not take the floor after it (the other speaker is still
  speaking when it ends, or speaks again before the listener's next IPU that is not
  backchannel-like).
- **Turn**: successive non-backchannel IPUs of one speaker, joined as long as the other
  speaker says nothing but backchannels between them (across pauses). Turns of the two
  speakers may overlap (an interruption starts a turn inside the other's).
- **Interruption**: a non-backchannel IPU that starts strictly inside an IPU of the other
  speaker. It is **floor-taking** when the interrupter is still speaking when the interrupted
  IPU ends (the interrupter holds the floor afterwards), **butting-in** when the first speaker
  outlasts it (or both stop together). This is the case the 40 ms labels encode as
  ``I ... T`` versus ``I ... C``.

All times are seconds. Speakers are 0 (A) and 1 (B).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence

from .turneval_dialogue import SPEAKERS, Dialogue, DialogueError, Word
from .turneval_vocabulary import as_phrase_set, is_backchannel_text, is_speech_word


DEFAULT_IPU_SILENCE_S = 0.2
"""Own silence longer than this splits IPUs (Talking Turns: "more than 200 ms")."""

DEFAULT_MAX_BACKCHANNEL_S = 1.0
"""Duration proxy: without words, a backchannel IPU is at most this long."""

_EPS = 1e-9  # float slack for "more than 200 ms" style comparisons of times given in seconds


# ---------------------------------------------------------------------------------------
# Event types
# ---------------------------------------------------------------------------------------


class _Span:
    """Mixin of the event types that have ``start`` and ``end`` (seconds)."""

    start: float
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class IPU(_Span):
    """An inter-pausal unit of one speaker; ``words`` holds its tokens when words exist."""

    speaker: int
    start: float
    end: float
    words: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return " ".join(self.words)


@dataclass(frozen=True)
class Silence(_Span):
    """Nobody speaks in [start, end)."""

    start: float
    end: float


@dataclass(frozen=True)
class Pause(_Span):
    """Silence between two IPUs of ``speaker`` (indices into ``TurnTakingEvents.ipus``)."""

    speaker: int
    start: float
    end: float
    before: int
    after: int


@dataclass(frozen=True)
class Gap(_Span):
    """Silence between IPUs of different speakers: ``from_speaker`` stopped, ``to_speaker`` started.

    Either speaker is None when both stopped (or both started) at the same instant.
    """

    start: float
    end: float
    from_speaker: int | None
    to_speaker: int | None


@dataclass(frozen=True)
class Overlap(_Span):
    """Both speakers speak in [start, end); ``first_speaker`` was speaking first (None: both
    started together). ``ipus`` are the overlapping IPUs of A and of B."""

    start: float
    end: float
    first_speaker: int | None
    ipus: tuple[int, int]


@dataclass(frozen=True)
class Backchannel(_Span):
    """A listener backchannel; ``ipu`` indexes ``TurnTakingEvents.ipus``; ``method`` is
    ``"words"`` or ``"duration"`` (the proxy)."""

    speaker: int
    start: float
    end: float
    ipu: int
    method: str
    text: str = ""


@dataclass(frozen=True)
class Turn(_Span):
    """Successive IPUs of one speaker (indices into ``TurnTakingEvents.ipus``)."""

    speaker: int
    start: float
    end: float
    ipus: tuple[int, ...]


@dataclass(frozen=True)
class Interruption:
    """``speaker`` starts IPU ``ipu`` at ``start`` inside IPU ``interrupted_ipu`` of the other
    speaker; the overlap lasts until ``overlap_end``."""

    speaker: int
    start: float
    overlap_end: float
    ipu: int
    interrupted_ipu: int
    floor_taking: bool

    @property
    def interrupted_speaker(self) -> int:
        return 1 - self.speaker

    @property
    def kind(self) -> str:
        """``"floor_taking"`` or ``"butting_in"``."""
        return "floor_taking" if self.floor_taking else "butting_in"


EVENT_TYPES: tuple[str, ...] = ("ipus", "silences", "pauses", "gaps", "overlaps", "backchannels", "turns", "interruptions")
"""The event lists of :class:`TurnTakingEvents`, by attribute name."""


@dataclass(frozen=True)
class TurnTakingEvents:
    """Every turn-taking event of one dialogue, each list in time order.

    ``ipus`` is sorted by (start, speaker); the other events refer to IPUs by index into it.
    ``has_words`` tells whether IPUs (and so backchannels) came from words.
    """

    dialogue_id: str
    duration: float
    ipus: tuple[IPU, ...]
    silences: tuple[Silence, ...]
    pauses: tuple[Pause, ...]
    gaps: tuple[Gap, ...]
    overlaps: tuple[Overlap, ...]
    backchannels: tuple[Backchannel, ...]
    turns: tuple[Turn, ...]
    interruptions: tuple[Interruption, ...]
    has_words: bool = False

    def of_speaker(self, name: str, speaker: int) -> tuple:
        """The events of one list (``"ipus"``, ``"pauses"``, ...) that belong to ``speaker``."""
        if name not in ("ipus", "pauses", "backchannels", "turns", "interruptions"):
            raise ValueError(f"{name!r} has no single speaker; per-speaker lists: ipus, pauses, backchannels, turns, interruptions")
        return tuple(e for e in getattr(self, name) if e.speaker == speaker)

    def total_duration(self, name: str) -> float:
        """Summed duration (s) of one event list (``"ipus"``, ``"pauses"``, ``"gaps"``, ...)."""
        if name not in EVENT_TYPES or name == "interruptions":
            raise ValueError(f"no durations for {name!r}; choose from {[n for n in EVENT_TYPES if n != 'interruptions']}")
        return float(sum(e.duration for e in getattr(self, name)))

    def backchannel_ipus(self) -> frozenset[int]:
        """Indices of the IPUs that are backchannels."""
        return frozenset(bc.ipu for bc in self.backchannels)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: every event as a dict, plus the dialogue id and duration."""
        out: dict[str, Any] = {"dialogue_id": self.dialogue_id, "duration": self.duration, "has_words": self.has_words}
        for name in EVENT_TYPES:
            out[name] = [asdict(e) for e in getattr(self, name)]
        for entry, event in zip(out["interruptions"], self.interruptions):
            entry["kind"] = event.kind
        return out


# ---------------------------------------------------------------------------------------
# IPUs
# ---------------------------------------------------------------------------------------


def merge_into_ipus(
    pieces: Sequence[tuple[float, float]],
    speaker: int,
    *,
    max_silence_s: float = DEFAULT_IPU_SILENCE_S,
    tokens: Sequence[str] | None = None,
) -> list[IPU]:
    """Join one speaker's speech pieces (segments or words) into IPUs.

    Pieces separated by at most ``max_silence_s`` of silence belong to the same IPU; a longer
    silence splits. ``tokens`` (one per piece) become the IPU's words.
    """
    if tokens is not None and len(tokens) != len(pieces):
        raise ValueError("tokens must give one token per piece")
    order = sorted(range(len(pieces)), key=lambda i: (pieces[i][0], pieces[i][1]))
    ipus: list[IPU] = []
    start = end = None
    words: list[str] = []
    for i in order:
        s, e = float(pieces[i][0]), float(pieces[i][1])
        if start is not None and s - end > max_silence_s + _EPS:
            ipus.append(IPU(speaker, start, end, tuple(words)))
            start = None
        if start is None:
            start, end, words = s, e, []
        else:
            end = max(end, e)
        if tokens is not None:
            words.append(tokens[i])
    if start is not None:
        ipus.append(IPU(speaker, start, end, tuple(words)))
    return ipus


def _speaker_ipus(dialogue: Dialogue, speaker: int, use_words: bool | None, max_silence_s: float) -> tuple[list[IPU], bool]:
    words: list[Word] = dialogue.words[speaker] if dialogue.words is not None else []
    from_words = bool(words) if use_words is None else use_words
    if from_words:
        if dialogue.words is None:
            raise DialogueError(f"dialogue {dialogue.id!r}: use_words=True but the dialogue has no words")
        spoken = [w for w in words if is_speech_word(w.text)]
        ipus = merge_into_ipus([(w.start, w.end) for w in spoken], speaker, max_silence_s=max_silence_s, tokens=[w.text for w in spoken])
        return ipus, True
    return merge_into_ipus(dialogue.segments[speaker], speaker, max_silence_s=max_silence_s), False


# ---------------------------------------------------------------------------------------
# Silences, pauses, gaps, overlaps
# ---------------------------------------------------------------------------------------


def _silences(ipus: Sequence[IPU], duration: float) -> list[Silence]:
    silences = []
    cursor = 0.0
    for ipu in sorted(ipus, key=lambda u: u.start):
        if ipu.start > cursor:
            silences.append(Silence(cursor, ipu.start))
        cursor = max(cursor, ipu.end)
    if duration > cursor:
        silences.append(Silence(cursor, duration))
    return silences


class _SpeakerTimeline:
    """One speaker's IPUs (a subset, e.g. the non-backchannel ones) for fast time queries.

    A speaker's IPUs are disjoint, so sorted by start they are sorted by end too.
    """

    def __init__(self, ipus: Sequence[IPU], indices: Iterable[int]):
        self.indices = sorted(indices, key=lambda i: ipus[i].start)
        self.starts = [ipus[i].start for i in self.indices]
        self.ends = [ipus[i].end for i in self.indices]

    def covering(self, t: float) -> int | None:
        """The IPU with start <= t < end."""
        k = bisect_right(self.starts, t) - 1
        return self.indices[k] if k >= 0 and self.ends[k] > t else None

    def strictly_containing(self, t: float) -> int | None:
        """The IPU with start < t < end."""
        k = bisect_left(self.starts, t) - 1
        return self.indices[k] if k >= 0 and self.ends[k] > t else None

    def first_ending_after(self, t: float) -> int | None:
        k = bisect_right(self.ends, t)
        return self.indices[k] if k < len(self.indices) else None

    def first_starting_from(self, t: float) -> int | None:
        k = bisect_left(self.starts, t)
        return self.indices[k] if k < len(self.indices) else None

    def last_ending_by(self, t: float) -> int | None:
        k = bisect_right(self.ends, t) - 1
        return self.indices[k] if k >= 0 else None

    def speaks_between(self, a: float, b: float) -> bool:
        """Whether an IPU overlaps the open interval (a, b): start < b and end > a."""
        k = bisect_right(self.ends, a)
        return k < len(self.indices) and self.starts[k] < b


def _timelines(ipus: Sequence[IPU], keep: Iterable[int]) -> tuple[_SpeakerTimeline, _SpeakerTimeline]:
    kept = set(keep)
    return tuple(_SpeakerTimeline(ipus, [i for i in kept if ipus[i].speaker == k]) for k in (0, 1))  # type: ignore[return-value]


def _pauses_and_gaps(ipus: Sequence[IPU], silences: Sequence[Silence]) -> tuple[list[Pause], list[Gap]]:
    ending_at: dict[float, list[int]] = {}
    starting_at: dict[float, list[int]] = {}
    for i, u in enumerate(ipus):
        ending_at.setdefault(u.end, []).append(i)
        starting_at.setdefault(u.start, []).append(i)
    pauses, gaps = [], []
    for silence in silences:
        before = ending_at.get(silence.start, [])
        after = starting_at.get(silence.end, [])
        if not before or not after:
            continue  # leading or trailing silence
        spk_before = {ipus[i].speaker for i in before}
        spk_after = {ipus[i].speaker for i in after}
        if len(spk_after) == 1 and spk_after <= spk_before:
            speaker = next(iter(spk_after))
            prev = max(i for i in before if ipus[i].speaker == speaker)
            pauses.append(Pause(speaker, silence.start, silence.end, prev, min(after)))
        else:
            gaps.append(
                Gap(
                    silence.start,
                    silence.end,
                    next(iter(spk_before)) if len(spk_before) == 1 else None,
                    next(iter(spk_after)) if len(spk_after) == 1 else None,
                )
            )
    return pauses, gaps


def _overlaps(ipus: Sequence[IPU]) -> list[Overlap]:
    a_ipus = [i for i, u in enumerate(ipus) if u.speaker == 0]
    b_ipus = [i for i, u in enumerate(ipus) if u.speaker == 1]
    overlaps = []
    ka = kb = 0
    while ka < len(a_ipus) and kb < len(b_ipus):  # merge walk: both lists are sorted and disjoint
        ia, ib = a_ipus[ka], b_ipus[kb]
        a, b = ipus[ia], ipus[ib]
        start, end = max(a.start, b.start), min(a.end, b.end)
        if end > start:
            first = None if a.start == b.start else (0 if a.start < b.start else 1)
            overlaps.append(Overlap(start, end, first, (ia, ib)))
        if a.end <= b.end:
            ka += 1
        if b.end <= a.end:
            kb += 1
    overlaps.sort(key=lambda o: (o.start, o.end))
    return overlaps


# ---------------------------------------------------------------------------------------
# Backchannels, turns, interruptions
# ---------------------------------------------------------------------------------------


def _backchannels(
    ipus: Sequence[IPU],
    from_words: Sequence[bool],
    phrases: frozenset[str],
    max_backchannel_s: float,
) -> list[Backchannel]:
    """Listener IPUs that are backchannel-like and lie inside the other speaker's turn."""
    methods: list[str | None] = []
    for ipu in ipus:
        if from_words[ipu.speaker]:
            methods.append("words" if is_backchannel_text(ipu.words, phrases) else None)
        else:
            methods.append("duration" if ipu.duration <= max_backchannel_s + _EPS else None)

    substantive = _timelines(ipus, [i for i, m in enumerate(methods) if m is None])
    result = []
    for i, ipu in enumerate(ipus):
        if methods[i] is None:
            continue
        listener, other = ipu.speaker, 1 - ipu.speaker
        # The floor holder when the candidate starts: the other speaker if they are speaking
        # then, else whoever spoke last (a butting-in listener does not get the floor).
        if substantive[other].covering(ipu.start) is None:
            last = [j for j in (substantive[0].last_ending_by(ipu.start), substantive[1].last_ending_by(ipu.start)) if j is not None]
            if not last or ipus[max(last, key=lambda j: (ipus[j].end, ipus[j].start, -j))].speaker != other:
                continue
        # Does the listener take the floor afterwards?
        resume = substantive[other].first_ending_after(ipu.end)
        if resume is None:
            continue
        listener_next = substantive[listener].first_starting_from(ipu.end)
        if listener_next is not None and max(ipus[resume].start, ipu.end) > ipus[listener_next].start:
            continue
        result.append(Backchannel(listener, ipu.start, ipu.end, i, methods[i], ipu.text))
    return result


def _turns(ipus: Sequence[IPU], backchannel_ipus: frozenset[int]) -> list[Turn]:
    """Join each speaker's successive non-backchannel IPUs while the other says only backchannels."""
    speech = _timelines(ipus, [i for i in range(len(ipus)) if i not in backchannel_ipus])
    turns = []
    for speaker in (0, 1):
        current: list[int] = []
        for i in speech[speaker].indices:
            if current and speech[1 - speaker].speaks_between(ipus[current[-1]].end, ipus[i].start):
                turns.append(_make_turn(ipus, current))
                current = []
            current.append(i)
        if current:
            turns.append(_make_turn(ipus, current))
    turns.sort(key=lambda t: (t.start, t.speaker))
    return turns


def _make_turn(ipus: Sequence[IPU], members: Sequence[int]) -> Turn:
    return Turn(ipus[members[0]].speaker, ipus[members[0]].start, max(ipus[i].end for i in members), tuple(members))


def _interruptions(ipus: Sequence[IPU], backchannel_ipus: frozenset[int]) -> list[Interruption]:
    speech = _timelines(ipus, [i for i in range(len(ipus)) if i not in backchannel_ipus])
    result = []
    for i, ipu in enumerate(ipus):
        if i in backchannel_ipus:
            continue
        j = speech[1 - ipu.speaker].strictly_containing(ipu.start)
        if j is not None:
            other = ipus[j]
            result.append(Interruption(ipu.speaker, ipu.start, min(ipu.end, other.end), i, j, floor_taking=ipu.end > other.end))
    return result


# ---------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------


def extract_events(
    dialogue: Dialogue,
    *,
    backchannel_words: Iterable[str] | None = None,
    use_words: bool | None = None,
    ipu_silence_s: float = DEFAULT_IPU_SILENCE_S,
    max_backchannel_s: float = DEFAULT_MAX_BACKCHANNEL_S,
) -> TurnTakingEvents:
    """All turn-taking events of ``dialogue`` (definitions in the module docstring).

    Args:
        dialogue: the conversation (segments, and words when available).
        backchannel_words: backchannel phrases; default :func:`~turneval.dataset_scripts.vocabulary.load_backchannel_words`.
        use_words: build IPUs from word times (True), from segments (False), or from words
            for each speaker that has them (None, the default).
        ipu_silence_s: own silence longer than this splits IPUs (default 0.2 s).
        max_backchannel_s: the duration proxy's limit for IPUs without words (default 1.0 s).

    Returns:
        A frozen :class:`TurnTakingEvents`.
    """
    if ipu_silence_s < 0 or max_backchannel_s < 0:
        raise ValueError("ipu_silence_s and max_backchannel_s must be >= 0")
    phrases = as_phrase_set(backchannel_words)
    per_speaker = [_speaker_ipus(dialogue, k, use_words, ipu_silence_s) for k in range(2)]
    from_words = [w for _, w in per_speaker]
    ipus = tuple(sorted((u for spk, _ in per_speaker for u in spk), key=lambda u: (u.start, u.speaker, u.end)))
    duration = max([float(dialogue.duration or 0.0)] + [u.end for u in ipus])

    silences = _silences(ipus, duration)
    pauses, gaps = _pauses_and_gaps(ipus, silences)
    backchannels = _backchannels(ipus, from_words, phrases, max_backchannel_s)
    bc_ipus = frozenset(bc.ipu for bc in backchannels)
    return TurnTakingEvents(
        dialogue_id=dialogue.id,
        duration=duration,
        ipus=ipus,
        silences=tuple(silences),
        pauses=tuple(pauses),
        gaps=tuple(gaps),
        overlaps=tuple(_overlaps(ipus)),
        backchannels=tuple(backchannels),
        turns=tuple(_turns(ipus, bc_ipus)),
        interruptions=tuple(_interruptions(ipus, bc_ipus)),
        has_words=any(from_words),
    )


__all__ = [
    "DEFAULT_IPU_SILENCE_S",
    "DEFAULT_MAX_BACKCHANNEL_S",
    "EVENT_TYPES",
    "IPU",
    "Backchannel",
    "Gap",
    "Interruption",
    "Overlap",
    "Pause",
    "SPEAKERS",
    "Silence",
    "Turn",
    "TurnTakingEvents",
    "extract_events",
    "merge_into_ipus",
]
