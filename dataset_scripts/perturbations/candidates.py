"""Where each TurnNat perturbation can be applied: candidate finders on the 80 ms grid.

Each finder reproduces the reference ``build_perturbations.py`` finder of the same name,
quirks included (golden/turnnat README §3d). Frame ranges are ``[start, end)`` and segment
ends are inclusive, so "the frames after segment s" start at ``s.end + 1``.

Results are tuples of segments; the first element of bidirectional results names the
channel ("a" or "b") of the first speaker.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .predicates import distinct_text, has_text, is_backchannel_like, is_question_like, is_substantive_turn
from .segments import FRAME_MS, Segment


Shift = tuple[str, Segment, Segment]
"""(speaker channel, speaker segment, responder segment)."""
ShiftReturn = tuple[str, Segment, Segment, Segment]
"""(speaker channel, speaker segment, responder segment, speaker's next segment)."""
Hold = tuple[str, Segment, Segment]
"""(holding channel, segment before the pause, segment after it)."""


def ms_to_frames(ms: float, frame_ms: float = FRAME_MS, minimum: int = 1) -> int:
    """``max(minimum, ceil(ms / frame_ms))``: the reference's duration-to-frames rule."""
    return max(minimum, int(math.ceil(ms / frame_ms)))


def _clip(vad: np.ndarray, start: int, end: int) -> tuple[int, int]:
    start = max(0, min(len(vad), start))
    return start, max(start, min(len(vad), end))


def any_active(vad: np.ndarray, start: int, end: int) -> bool:
    s, e = _clip(vad, start, end)
    return bool(e > s and vad[s:e].max() > 0)


def all_silent(vad: np.ndarray, start: int, end: int) -> bool:
    """No activity in ``[start, end)`` (clipped to the array; an empty range is silent)."""
    s, e = _clip(vad, start, end)
    return bool(e <= s or vad[s:e].max() == 0)


def mutual_silence(va: np.ndarray, vb: np.ndarray, start: int, end: int) -> bool:
    return all_silent(va, start, end) and all_silent(vb, start, end)


def only_active(active: np.ndarray, other: np.ndarray, start: int, end: int) -> bool:
    """``active`` speaks in every frame of ``[start, end)`` and ``other`` in none.

    Not clipped: a range reaching outside the arrays fails.
    """
    if start < 0 or end > len(active) or end > len(other) or end <= start:
        return False
    return bool(active[start:end].min() > 0 and other[start:end].max() == 0)


@dataclass(frozen=True)
class CleanGapWindows:
    """The windows of the reference's clean transition test (``proper_transition``), in ms.

    The gap must be mutual silence at least ``eval_start_ms + eval_dur_ms`` long (the VAP
    evaluation window) and at most ``max_gap_ms`` (None: no limit); the speaker before it is
    alone for ``pre_offset_ms`` and the one after it for ``post_onset_ms``.
    """

    frame_ms: float = FRAME_MS
    pre_offset_ms: float = 1000.0
    post_onset_ms: float = 1000.0
    eval_start_ms: float = 50.0
    eval_dur_ms: float = 100.0
    max_gap_ms: float | None = None


@dataclass(frozen=True)
class ActiveAloneWindows:
    """The windows of the reference's late-response shift test, in ms: each speaker alone for
    ``pre_offset_ms`` / ``post_onset_ms`` around the shift, at most ``max_overlap_ms`` of
    overlap and ``max_gap_ms`` of gap (None: no limit), and both turns at least
    ``min_pre_duration_ms`` / ``min_post_duration_ms`` long."""

    pre_offset_ms: float = 1000.0
    post_onset_ms: float = 1000.0
    max_overlap_ms: float = 200.0
    max_gap_ms: float | None = None
    min_pre_duration_ms: float = 1000.0
    min_post_duration_ms: float = 1000.0


def _clean_gap(
    first: Segment,
    second: Segment,
    first_vad: np.ndarray,
    first_other: np.ndarray,
    second_vad: np.ndarray,
    second_other: np.ndarray,
    windows: CleanGapWindows,
) -> bool:
    """A mutual-silence gap from ``first`` to ``second`` as ``windows`` asks, ``first_vad``
    alone before it and ``second_vad`` alone after it (each against its ``*_other``)."""
    if second.start <= first.end:
        return False
    w = windows
    pre_frames = ms_to_frames(w.pre_offset_ms, w.frame_ms)
    post_frames = ms_to_frames(w.post_onset_ms, w.frame_ms)
    eval_frames = ms_to_frames(w.eval_start_ms + w.eval_dur_ms, w.frame_ms)
    gap_start, gap_end = first.end + 1, second.start
    if gap_end - gap_start < eval_frames:
        return False
    if w.max_gap_ms is not None and (gap_end - gap_start) * float(w.frame_ms) > float(w.max_gap_ms):
        return False
    return (
        mutual_silence(first_vad, first_other, gap_start, gap_end)
        and only_active(first_vad, first_other, first.end + 1 - pre_frames, first.end + 1)
        and only_active(second_vad, second_other, second.start, second.start + post_frames)
    )


def proper_transition(
    pre: Segment, post: Segment, pre_vad: np.ndarray, post_vad: np.ndarray, windows: CleanGapWindows = CleanGapWindows()
) -> bool:
    """A clean shift: a mutual-silence gap of at least the VAP evaluation window, the
    first speaker alone for ``pre_offset_ms`` before it, the next alone after it."""
    return _clean_gap(pre, post, pre_vad, post_vad, post_vad, pre_vad, windows)


def proper_hold_transition(
    curr: Segment,
    nxt: Segment,
    speaker_vad: np.ndarray,
    other_vad: np.ndarray,
    windows: CleanGapWindows = CleanGapWindows(),
) -> bool:
    """A clean hold: like ``proper_transition`` but the same speaker on both sides (the
    reference's hold test has no longest gap: ``max_gap_ms`` is not read)."""
    return _clean_gap(curr, nxt, speaker_vad, other_vad, speaker_vad, other_vad, replace(windows, max_gap_ms=None))


def find_shift_points(
    segs_a: Sequence[Segment], segs_b: Sequence[Segment], max_gap_frames: int = 50, require_substantive: bool = True
) -> list[tuple[Segment, Segment]]:
    """For each A segment, the first B segment starting within ``max_gap_frames`` after it."""
    pairs = []
    for sa in segs_a:
        if require_substantive and not is_substantive_turn(sa):
            continue
        for sb in segs_b:
            if require_substantive and not is_substantive_turn(sb):
                continue
            if sb.start > sa.end and sb.start - sa.end <= max_gap_frames:
                pairs.append((sa, sb))
                break
    return pairs


def find_shift_points_bidir(segs_a: Sequence[Segment], segs_b: Sequence[Segment], max_gap_frames: int = 50) -> list[Shift]:
    out: list[Shift] = [("a", sa, sb) for sa, sb in find_shift_points(segs_a, segs_b, max_gap_frames)]
    out += [("b", sb, sa) for sb, sa in find_shift_points(segs_b, segs_a, max_gap_frames)]
    return out


def _holds_one_way(ch: str, own: Sequence[Segment], other: Sequence[Segment]) -> list[Hold]:
    out: list[Hold] = []
    for curr, nxt in zip(own, own[1:]):
        if nxt.start - curr.end - 1 <= 0:
            continue
        # the other speaker must not touch the frames between the two segments
        if all(o.end < curr.end + 1 or o.start > nxt.start - 1 for o in other):
            out.append((ch, curr, nxt))
    return out


def find_hold_regions_bidir(segs_a: Sequence[Segment], segs_b: Sequence[Segment]) -> list[Hold]:
    """Consecutive same-speaker segments with the other speaker silent in between."""
    return _holds_one_way("a", segs_a, segs_b) + _holds_one_way("b", segs_b, segs_a)


def find_proper_shift_points_bidir(
    segs_a: Sequence[Segment],
    segs_b: Sequence[Segment],
    va: np.ndarray,
    vb: np.ndarray,
    *,
    frame_ms: float = FRAME_MS,
    max_gap_ms: float | None = None,
) -> list[Shift]:
    """Substantive A->B (and B->A) shifts that are ``proper_transition``s (early entry)."""
    windows = CleanGapWindows(frame_ms=frame_ms, max_gap_ms=max_gap_ms)
    out: list[Shift] = []
    for ch, own, other, own_vad, other_vad in (("a", segs_a, segs_b, va, vb), ("b", segs_b, segs_a, vb, va)):
        for pre in own:
            if not is_substantive_turn(pre):
                continue
            for post in other:
                if is_substantive_turn(post) and proper_transition(pre, post, own_vad, other_vad, windows):
                    out.append((ch, pre, post))
                    break
    return out


def _active_alone_shift(
    pre: Segment, post: Segment, pre_vad: np.ndarray, post_vad: np.ndarray, frame_ms: float, windows: ActiveAloneWindows
) -> bool:
    """``pre`` -> ``post`` passes the late-response test of ``windows`` on the ``frame_ms`` grid."""
    w = windows
    if pre.dur < ms_to_frames(w.min_pre_duration_ms, frame_ms) or post.dur < ms_to_frames(w.min_post_duration_ms, frame_ms):
        return False
    gap = post.start - pre.end
    if gap < -ms_to_frames(w.max_overlap_ms, frame_ms, minimum=0):
        return False
    if w.max_gap_ms is not None and gap > ms_to_frames(w.max_gap_ms, frame_ms, minimum=0):
        return False
    # a positive gap must be mutual silence, so a short turn in between is not skipped
    if gap > 0 and not mutual_silence(pre_vad, post_vad, pre.end + 1, post.start):
        return False
    pre_frames = ms_to_frames(w.pre_offset_ms, frame_ms)
    post_frames = ms_to_frames(w.post_onset_ms, frame_ms)
    return only_active(pre_vad, post_vad, pre.end + 1 - pre_frames, pre.end + 1) and only_active(
        post_vad, pre_vad, post.start, post.start + post_frames
    )


def find_active_alone_shift_points_bidir(
    segs_a: Sequence[Segment],
    segs_b: Sequence[Segment],
    va: np.ndarray,
    vb: np.ndarray,
    *,
    frame_ms: float = FRAME_MS,
    windows: ActiveAloneWindows = ActiveAloneWindows(),
) -> list[Shift]:
    """Shifts guarded by "each speaker alone" windows, with no minimum gap (late response).

    Reference quirk kept: the pre-offset "alone" window runs up to ``pre.end + 1``, so any
    overlap at all fails it and ``max_overlap_ms`` never lets an overlap through.
    """
    out: list[Shift] = []
    for ch, own, other, own_vad, other_vad in (("a", segs_a, segs_b, va, vb), ("b", segs_b, segs_a, vb, va)):
        for pre in own:
            for post in other:
                if _active_alone_shift(pre, post, own_vad, other_vad, frame_ms, windows):
                    out.append((ch, pre, post))
                    break
    return out


def find_proper_hold_regions_bidir(
    segs_a: Sequence[Segment], segs_b: Sequence[Segment], va: np.ndarray, vb: np.ndarray, *, frame_ms: float = FRAME_MS
) -> list[Hold]:
    """Consecutive same-speaker segments forming a ``proper_hold_transition`` (shift instead of hold)."""
    out: list[Hold] = []
    for ch, own, own_vad, other_vad in (("a", segs_a, va, vb), ("b", segs_b, vb, va)):
        for curr, nxt in zip(own, own[1:]):
            if proper_hold_transition(curr, nxt, own_vad, other_vad, CleanGapWindows(frame_ms=frame_ms)):
                out.append((ch, curr, nxt))
    return out


def next_substantive_after(segs_a: Sequence[Segment], segs_b: Sequence[Segment], frame: int) -> tuple[str, Segment] | None:
    """The earliest substantive segment of either channel starting after ``frame`` (A wins ties)."""
    best: tuple[int, str, Segment] | None = None
    for ch, segs in (("a", segs_a), ("b", segs_b)):
        for seg in segs:
            if seg.start > frame and is_substantive_turn(seg) and (best is None or seg.start < best[0]):
                best = (seg.start, ch, seg)
    return None if best is None else (best[1], best[2])


def find_shift_then_original_speaker_returns(
    segs_a: Sequence[Segment],
    segs_b: Sequence[Segment],
    va: np.ndarray,
    vb: np.ndarray,
    *,
    frame_ms: float = FRAME_MS,
    max_gap_ms: float | None = None,
    require_return_proper: bool = True,
) -> list[ShiftReturn]:
    """A->B->A from proper shifts whose next substantive turn is the first speaker's."""
    windows = CleanGapWindows(frame_ms=frame_ms, max_gap_ms=max_gap_ms)
    out: list[ShiftReturn] = []
    for ch, speaker, responder in find_proper_shift_points_bidir(segs_a, segs_b, va, vb, frame_ms=frame_ms, max_gap_ms=max_gap_ms):
        nxt = next_substantive_after(segs_a, segs_b, responder.end)
        if nxt is None or nxt[0] != ch:
            continue
        if require_return_proper:
            resp_vad, speaker_vad = (vb, va) if ch == "a" else (va, vb)
            if not proper_transition(responder, nxt[1], resp_vad, speaker_vad, windows):
                continue
        out.append((ch, speaker, responder, nxt[1]))
    return out


def find_active_alone_shift_then_original_speaker_returns(
    segs_a: Sequence[Segment],
    segs_b: Sequence[Segment],
    va: np.ndarray,
    vb: np.ndarray,
    *,
    frame_ms: float = FRAME_MS,
    max_gap_ms: float | None = None,
    max_overlap_ms: float = 0.0,
    min_mutual_silence_ms: float = 100.0,
) -> list[ShiftReturn]:
    """A->B->A for hold instead of shift: active-alone shifts with some mutual silence,
    after which the first speaker returns alone for 1 s."""
    post_frames = ms_to_frames(1000.0, frame_ms)
    min_silence = ms_to_frames(min_mutual_silence_ms, frame_ms)
    windows = ActiveAloneWindows(max_overlap_ms=max_overlap_ms, max_gap_ms=max_gap_ms)
    shifts = find_active_alone_shift_points_bidir(segs_a, segs_b, va, vb, frame_ms=frame_ms, windows=windows)
    out: list[ShiftReturn] = []
    for ch, speaker, responder in shifts:
        if responder.start - speaker.end < min_silence:
            continue
        nxt = next_substantive_after(segs_a, segs_b, responder.end)
        if nxt is None or nxt[0] != ch:
            continue
        own_vad, other_vad = (va, vb) if ch == "a" else (vb, va)
        if only_active(own_vad, other_vad, nxt[1].start, nxt[1].start + post_frames):
            out.append((ch, speaker, responder, nxt[1]))
    return out


def find_isolated_backchannels(
    listener_segs: Sequence[Segment],
    listener_vad: np.ndarray,
    speaker_vad: np.ndarray,
    *,
    frame_ms: float = FRAME_MS,
    bc_duration_ms: float = 1000.0,
    pre_silence_ms: float = 1000.0,
    post_silence_ms: float = 2000.0,
) -> list[Segment]:
    """Short backchannel-like listener segments, silent around them, inside the speaker's talk."""
    max_bc = ms_to_frames(bc_duration_ms, frame_ms)
    pre = ms_to_frames(pre_silence_ms, frame_ms)
    post = ms_to_frames(post_silence_ms, frame_ms)
    out = []
    for seg in listener_segs:
        if seg.dur > max_bc or not is_backchannel_like(seg, max_frames=max_bc):
            continue
        if not all_silent(listener_vad, seg.start - pre, seg.start):
            continue
        if not all_silent(listener_vad, seg.end + 1, seg.end + 1 + post):
            continue
        if any_active(speaker_vad, seg.start - pre, seg.start) and any_active(speaker_vad, seg.start, seg.end + 1):
            out.append(seg)
    return out


def find_short_backchannels(listener_segs: Sequence[Segment], speaker_vad: np.ndarray, max_bc_frames: int = 14) -> list[Segment]:
    """Backchannel-like listener segments of at most ``max_bc_frames`` overlapping the speaker."""
    out = []
    for seg in listener_segs:
        overlap = speaker_vad[seg.start : seg.end + 1]
        if seg.dur <= max_bc_frames and overlap.size and overlap.max() > 0 and is_backchannel_like(seg, max_frames=max_bc_frames):
            out.append(seg)
    return out


HOLD_SHIFT_DEFAULTS = {
    "min_responder_s": 1.2,
    "max_responder_s": 8.0,
    "min_edited_hold_gap_ms": 500.0,
    "max_edited_hold_gap_ms": 1500.0,
}
"""The reference CLI defaults of the hold-instead-of-shift candidate filter."""


def hold_instead_of_shift_terms(candidate: ShiftReturn, frame_ms: float = FRAME_MS) -> dict:
    """The quantities the hold-instead-of-shift filter tests for one A->B->A candidate.

    ``edited_hold_gap_ms`` is the pause the edit leaves: from the speaker's end to the
    speaker's return.
    """
    _, speaker, responder, nxt = candidate
    return {
        "has_text(speaker,responder,next)": [has_text(speaker), has_text(responder), has_text(nxt)],
        "distinct_text(speaker,responder)": distinct_text(speaker, responder),
        "responder_is_question_like": is_question_like(responder),
        "responder_duration_s": (responder.end_ms(frame_ms) - responder.start_ms(frame_ms)) / 1000.0,
        "edited_hold_gap_ms": nxt.start_ms(frame_ms) - speaker.end_ms(frame_ms),
    }


def passes_hold_instead_of_shift_filter(
    candidate: ShiftReturn,
    *,
    frame_ms: float = FRAME_MS,
    min_responder_s: float = HOLD_SHIFT_DEFAULTS["min_responder_s"],
    max_responder_s: float = HOLD_SHIFT_DEFAULTS["max_responder_s"],
    min_edited_hold_gap_ms: float = HOLD_SHIFT_DEFAULTS["min_edited_hold_gap_ms"],
    max_edited_hold_gap_ms: float | None = HOLD_SHIFT_DEFAULTS["max_edited_hold_gap_ms"],
) -> bool:
    """Textual, non-question responder of suitable length; edited pause in range."""
    terms = hold_instead_of_shift_terms(candidate, frame_ms)
    gap = terms["edited_hold_gap_ms"]
    return (
        all(terms["has_text(speaker,responder,next)"])
        and terms["distinct_text(speaker,responder)"]
        and not terms["responder_is_question_like"]
        and min_responder_s <= terms["responder_duration_s"] <= max_responder_s
        and min_edited_hold_gap_ms <= gap
        and (max_edited_hold_gap_ms is None or gap <= max_edited_hold_gap_ms)
    )
