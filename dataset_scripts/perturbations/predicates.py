"""Text and duration predicates on perturbation segments (TurnNat reference rules).

These decide what counts as a backchannel, a substantive turn or a question when the
builder looks for edit candidates. They reproduce the reference exactly, including its
choices: a wh-word or ``?`` anywhere rules out a backchannel, and a segment without any
text is a backchannel by duration alone (at most ``max_frames`` frames).
"""
from __future__ import annotations

import re

from .segments import Segment


BACKCHANNEL_PHRASES = frozenset({
    "mm", "mhm", "hm", "hmm", "um", "uh", "uh huh", "uh-huh", "yeah", "yea", "yep", "yes",
    "right", "okay", "ok", "sure", "true", "exactly", "wow", "oh", "oh wow",
    "hell yeah", "yeah yeah", "yeah right",
})
"""Whole utterances the reference accepts as backchannels outright."""

BACKCHANNEL_STARTS = ("yeah", "yep", "yes", "right", "ok", "okay", "mm", "hm", "uh", "oh")
"""Prefixes that make a short, few-word segment backchannel-like."""

WH_WORDS = ("what", "why", "how", "when", "where", "who")


def normalized_text(text: str) -> str:
    """Lower case, runs of anything but ``[a-z0-9']`` collapsed to one space."""
    text = re.sub(r"[^a-z0-9']+", " ", text.lower().strip())
    return re.sub(r"\s+", " ", text).strip()


def word_count(seg: Segment) -> int:
    return len(re.findall(r"[A-Za-z0-9']+", seg.text or ""))


def is_backchannel_like(seg: Segment, max_frames: int = 14, max_words: int = 4) -> bool:
    """A listener token: a known phrase, or short and few-worded with a backchannel opener."""
    raw = seg.text or ""
    text = normalized_text(raw)
    if "?" in raw or any(tok in text.split() for tok in WH_WORDS):
        return False
    if not text:
        return seg.dur <= max_frames
    if text in BACKCHANNEL_PHRASES:
        return True
    if seg.dur <= max_frames and word_count(seg) <= max_words:
        return text.startswith(BACKCHANNEL_STARTS)
    return False


def is_substantive_turn(seg: Segment, min_frames: int = 12, min_words: int = 4) -> bool:
    """Long enough and, when it has text, wordy enough and not a backchannel."""
    if seg.dur < min_frames:
        return False
    if not (seg.text or "").strip():
        return True
    if word_count(seg) < min_words:
        return False
    return not is_backchannel_like(seg)


def has_text(seg: Segment, min_words: int = 2) -> bool:
    return word_count(seg) >= min_words


def distinct_text(a: Segment, b: Segment) -> bool:
    """Both have text and the texts differ after normalisation."""
    ta, tb = normalized_text(a.text or ""), normalized_text(b.text or "")
    return bool(ta and tb and ta != tb)


def is_question_like(seg: Segment) -> bool:
    """Contains a question mark (ASCII, full-width or inverted)."""
    text = str(seg.text or "")
    return any(mark in text for mark in ("?", "\uff1f", "\u00bf"))
