"""How each re-voiced IPU should end: as part of a turn, not as a stand-alone sentence.

Re-voicing speaks every inter-pausal unit (IPU) by itself, so each one ends with the engine's
sentence-final fall whether its speaker goes on or not: the audio carries no turn-final vs
turn-internal prosody. This module plans, per IPU, the ending a real speaker would give it:

- **internal** (the speaker's turn goes on after it): a continuation, no final fall;
- **final** (the last IPU of a turn): as the real utterance ends, a statement, a question or a
  backchannel. From Switchboard's dialogue acts when the call has them
  (:func:`~turneval.dataset_scripts.readers.switchboard_acts.read_switchboard_acts`), else from
  the words (:func:`act_from_words`: a wh- or auxiliary-initial IPU is a question);
- **backchannel** (a listener's IPU inside the other's turn, :mod:`..events`): a backchannel,
  or a question when its act says so ("really?", SWDA ``bh``).

Turns and backchannels are the ones :func:`~turneval.dataset_scripts.events.extract_events`
finds (docs/events_and_labels.md, "Events"), computed on the whole call so a turn that goes on after an excerpt's end is
not taken as ended. Each plan carries the punctuation that gives the ending
(:data:`PUNCTUATION`: eSpeak NG measured a fall for ".", a rise for "?", a level continuation
for ",") and its turn's index, so engines that ignore final punctuation can speak the turn
as one utterance (:mod:`.turn_synthesis`).
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Protocol, Sequence

from ..dialogue import Dialogue
from ..events import extract_events
from ..readers.switchboard_acts import ActWord, CallActs
from ..vocabulary import is_backchannel_text


PUNCTUATION = {"continue": ",", "statement": ".", "question": "?", "backchannel": ","}
"""The text appended to an IPU for each ending. A backchannel gets the level continuation:
it is a continuer ("go on"), and a final fall would make it sound like a turn of its own."""

WH_WORDS = frozenset("what where when why who whom whose which how".split())
AUX_WORDS = frozenset(
    "do does did is are was were am can could will would should shall may might must have has had "
    "don't doesn't didn't isn't aren't wasn't weren't can't couldn't won't wouldn't shouldn't haven't hasn't hadn't".split()
)
OPENERS = frozenset("uh um well so and but oh okay now like yeah then".split())
"""Discourse markers and fillers skipped before the word that tells a question ("so what do you ...")."""
TAG_QUESTIONS = ("or not", "isn't it", "aren't they", "don't you", "didn't you", "wasn't it", "don't they", "isn't that")

_SWDA_BASE = re.compile(r"^[a-z]*")
_WORD_SLACK_S = 0.002  # act-word times equal ms98 times up to float formatting


class SpokenUnit(Protocol):
    """What the plan needs of a unit (``revoice.Unit`` has it): speaker, real span, text."""

    speaker: int
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class UnitEnding:
    """How one unit ends.

    Attributes:
        speaker, start: the unit (its channel and real start, s), as in the dialogue planned.
        role: "internal", "final" or "backchannel".
        act: "continue", "statement", "question" or "backchannel" (the key of :data:`PUNCTUATION`).
        source: where the act came from: "role" (internal units), "acts" (dialogue acts) or "words".
        turn: index of the turn it belongs to (a backchannel is a turn of its own), per dialogue.
    """

    speaker: int
    start: float
    role: str
    act: str
    source: str
    turn: int

    @property
    def punctuation(self) -> str:
        return PUNCTUATION[self.act]


def act_of_tag(tag: str) -> str | None:
    """The ending an SWDA tag asks for ("statement", "question", "backchannel"), None when it
    tells nothing (no tag, ``%`` abandoned, ``+`` continuation: resolved by the caller)."""
    t = tag.strip().lower()
    if not t or t.startswith(("%", "+")):
        return None
    base = _SWDA_BASE.match(t).group(0)  # type: ignore[union-attr]  # "qy^d" -> "qy", "^g" -> ""
    if base == "bh" or "^g" in t or (base.startswith("q") and base != "qh"):
        return "question"  # qh (rhetorical) is said as a statement
    if base in ("b", "bk", "ba"):
        return "backchannel"
    return "statement"


def act_from_words(words: Sequence[str]) -> str:
    """The ending guessed from the words of a turn's last IPU, for calls without dialogue acts:
    a backchannel phrase; a question when, after fillers, it opens with a wh-word or an auxiliary
    ("do they have one") or ends with a tag ("... or not"); else a statement."""
    tokens = [w.lower() for w in words if w]
    if tokens and is_backchannel_text(tokens):
        return "backchannel"
    k = 0
    while k < len(tokens) - 1 and tokens[k] in OPENERS:
        k += 1
    text = " ".join(tokens)
    if tokens and (tokens[k] in WH_WORDS or tokens[k] in AUX_WORDS or text.endswith(TAG_QUESTIONS)):
        return "question"
    return "statement"


def _unit_act(acts: Sequence[ActWord], starts: Sequence[float], unit: SpokenUnit) -> str | None:
    """The act of the unit's last tagged word; a ``+`` continues the speaker's act before it."""
    hi = bisect_right(starts, unit.end + _WORD_SLACK_S)
    i = hi - 1
    while i >= 0 and acts[i].start >= unit.start - _WORD_SLACK_S and not acts[i].tag:
        i -= 1  # [laughter] and other untagged tokens at the end
    if i < 0 or acts[i].start < unit.start - _WORD_SLACK_S:
        return None
    while i >= 0 and (acts[i].tag.startswith("+") or not acts[i].tag):  # back to the act it continues
        i -= 1
    return act_of_tag(acts[i].tag) if i >= 0 else None


def plan_endings(dialogue: Dialogue, units: Sequence[SpokenUnit], acts: CallActs | None = None) -> list[UnitEnding]:
    """One :class:`UnitEnding` per unit of ``units`` (the spoken IPUs of ``dialogue``), in their order.

    Args:
        dialogue: the conversation the units come from (with words): its turns and
            backchannels decide the roles. Pass the whole call, not an excerpt.
        units: its spoken units (``revoice.dialogue_units``): runs of words between silences,
            so an event IPU (own silence > 200 ms splits it) may hold several.
        acts: the call's dialogue-act words per side, or None (endings from the words).
    """
    events = extract_events(dialogue)
    ipu_starts = [[ipu.start for ipu in events.ipus if ipu.speaker == k] for k in (0, 1)]
    ipu_index = [[i for i, ipu in enumerate(events.ipus) if ipu.speaker == k] for k in (0, 1)]
    turn_of_ipu = {i: t for t, turn in enumerate(events.turns) for i in turn.ipus}
    backchannel_ipus = events.backchannel_ipus()
    act_starts = [[w.start for w in side] for side in acts] if acts is not None else None

    def event_ipu(unit: SpokenUnit) -> int | None:
        j = bisect_right(ipu_starts[unit.speaker], unit.start + 1e-6) - 1
        if j < 0:
            return None
        i = ipu_index[unit.speaker][j]
        return i if unit.end <= events.ipus[i].end + 1e-6 else None

    # group units into turns: an event turn, or a backchannel (or stray) unit alone
    groups: list[int] = []
    group_of: dict[tuple[str, int], int] = {}
    roles = []
    for unit in units:
        i = event_ipu(unit)
        if i is not None and i in turn_of_ipu:
            key = ("turn", turn_of_ipu[i])
            roles.append("internal")
        else:
            key = ("unit", len(groups))
            roles.append("backchannel" if i in backchannel_ipus else "final")
        if key not in group_of:
            group_of[key] = len(group_of)
        groups.append(group_of[key])
    last_of_group: dict[int, int] = {}
    for u, g in enumerate(groups):
        if g not in last_of_group or units[u].end > units[last_of_group[g]].end:
            last_of_group[g] = u
    out = []
    for u, (unit, group) in enumerate(zip(units, groups)):
        role = roles[u]
        if role == "internal" and last_of_group[group] == u:
            role = "final"
        if role == "internal":
            out.append(UnitEnding(unit.speaker, unit.start, role, "continue", "role", group))
            continue
        act = _unit_act(acts[unit.speaker], act_starts[unit.speaker], unit) if acts is not None and act_starts else None
        source = "acts"
        if act is None:
            i = event_ipu(unit)
            act, source = act_from_words(list(events.ipus[i].words) if i is not None else unit.text.split()), "words"
        if role == "backchannel" and act != "question":
            act = "backchannel"
        out.append(UnitEnding(unit.speaker, unit.start, role, act, source, group))
    return out


__all__ = ["PUNCTUATION", "SpokenUnit", "UnitEnding", "act_from_words", "act_of_tag", "plan_endings"]
