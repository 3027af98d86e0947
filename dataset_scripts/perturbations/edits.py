"""The five TurnNat perturbations (TurnNat §IV-A) applied to a stereo Dialogue.

Each edit finds its candidates with the reference finders on the 80 ms grid
(:mod:`.candidates`), picks one with the given ``random.Random``, edits the audio of the
affected channel(s) with faded splices and room-tone fills, and moves the speech segments
and words with the audio, so audio, voice activity and words stay consistent.

==========================  ================================================================
late_response               the responder's turn starts 1.2-2.0 s later (fill inserted after
                            the speaker's offset and before the responder's onset)
early_entry                 the responder's turn starts 1.2-2.5 s earlier, overlapping the
                            speaker's end (silence cut from both channels)
hold_instead_of_shift       the responding turn of an A-B-A exchange is removed, so A holds
shift_instead_of_hold       a turn of the other speaker (from elsewhere in the conversation)
                            is inserted into A's pause
excessive_backchannel       2-3 extra backchannels of the listener (copies of their own
                            backchannels) are mixed into the speaker's turn
==========================  ================================================================

Every edit returns an :class:`EditResult`: the edited dialogue, a description with the
reference's keys (times in ms on the edited clock, ``edit_type``, texts, ...) and the
:class:`~.timeline.Timeline` of inserted/deleted time. No candidate raises
:class:`NoCandidateError`.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..dialogue import Dialogue, Word
from ..grids import SAMPLE_RATE
from . import audio_ops
from .candidates import (
    find_active_alone_shift_points_bidir,
    find_active_alone_shift_then_original_speaker_returns,
    find_isolated_backchannels,
    find_proper_hold_regions_bidir,
    find_proper_shift_points_bidir,
    passes_hold_instead_of_shift_filter,
)
from .predicates import distinct_text, has_text, is_substantive_turn
from .segments import FRAME_MS, CandidateContext, ContextSettings, Segment, candidate_context, frame_length
from .timeline import Timeline, delete_time, insert_time, remove_speech


CHANNELS = ("a", "b")


class NoCandidateError(RuntimeError):
    """The conversation offers no place where this perturbation can be applied.

    ``reason`` is a short key for counting skips: ``"no_candidate"`` (no place for the
    edit), ``"crop_too_short"`` (an edit was found but no 20-25 s crop can host it).
    """

    def __init__(self, message: str, reason: str = "no_candidate") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class EditResult:
    """An edited conversation, what was done (reference keys, ms) and the time changes."""

    dialogue: Dialogue
    edit: dict[str, Any]
    timeline: Timeline


class _Draft:
    """Mutable copy of a dialogue's audio, segments and words during an edit."""

    def __init__(self, dialogue: Dialogue) -> None:
        if dialogue.audio is None:
            raise ValueError(f"dialogue {dialogue.id!r} has no audio loaded; perturbations edit audio")
        self.source = dialogue
        self.audio = [dialogue.audio[0].copy(), dialogue.audio[1].copy()]
        self.segments = [list(s) for s in dialogue.segments]
        self.words = [list(w) for w in (dialogue.words or [[], []])]
        self.timeline = Timeline()

    def insert(self, c: int, at: int, length: int, sr: int, fill: np.ndarray | None, fade_ms: float) -> None:
        self.audio[c] = audio_ops.insert_with_crossfade(self.audio[c], at, length, fill, sr, fade_ms)
        self.segments[c], self.words[c] = insert_time(self.segments[c], self.words[c], at / sr, length / sr)

    def delete(self, c: int, start: int, length: int, sr: int) -> None:
        self.audio[c] = audio_ops.delete_with_fade(self.audio[c], start, length, sr)
        self.segments[c], self.words[c] = delete_time(self.segments[c], self.words[c], start / sr, length / sr)

    def finish(self, edit_type: str, edit: dict[str, Any]) -> EditResult:
        n = min(len(self.audio[0]), len(self.audio[1]))
        d = self.source
        edited = Dialogue(
            id=f"{d.id}__{edit_type}",
            segments=[[(s, min(e, n / SAMPLE_RATE)) for s, e in spk if s < n / SAMPLE_RATE] for spk in self.segments],
            words=None if d.words is None else [sorted(ws, key=lambda w: (w.start, w.end)) for ws in self.words],
            audio=np.stack([self.audio[0][:n], self.audio[1][:n]]),
            system_speaker=d.system_speaker,
            metadata=dict(d.metadata, perturbation=edit_type, natural_id=d.id),
        )
        return EditResult(edited, {"edit_type": edit_type, **edit}, self.timeline)


def dialogue_context(dialogue: Dialogue, *, frame_ms: float = FRAME_MS, min_transcript_ms: float = 250.0) -> CandidateContext:
    """The 80 ms candidate context of a dialogue: its segments as VAD, its words as transcript."""
    if dialogue.audio is None:
        raise ValueError(f"dialogue {dialogue.id!r} has no audio loaded")
    transcripts = [
        [{"start": w.start, "end": w.end, "transcript": w.text} for w in spk] for spk in (dialogue.words or [[], []])
    ]
    return candidate_context(
        dialogue.segments,
        transcripts,
        n_samples=dialogue.audio.shape[1],
        sr=SAMPLE_RATE,
        audio=dialogue.audio,
        settings=ContextSettings(frame_ms=frame_ms, min_transcript_ms=min_transcript_ms),
    )


def _ms(samples: int, sr: int = SAMPLE_RATE) -> float:
    return round(samples * 1000.0 / sr, 1)


def _np_rng(rng: random.Random) -> np.random.Generator:
    return np.random.default_rng(rng.randrange(2**32))


def _silent(segments: list[tuple[float, float]], start_s: float, end_s: float) -> bool:
    return all(e <= start_s or s >= end_s for s, e in segments)


def _words_in(words: list[Word], start_s: float, end_s: float, shift_s: float) -> list[Word]:
    """Words whose middle lies in [start_s, end_s), moved by ``shift_s``."""
    return [Word(w.start + shift_s, w.end + shift_s, w.text) for w in words if start_s <= (w.start + w.end) / 2 < end_s]


def _speech_in(segments: list[tuple[float, float]], start_s: float, end_s: float, shift_s: float) -> list[tuple[float, float]]:
    return [(max(s, start_s) + shift_s, min(e, end_s) + shift_s) for s, e in segments if e > start_s and s < end_s]


def make_late_response(
    dialogue: Dialogue,
    rng: random.Random,
    *,
    min_delay_ms: float = 1200.0,
    max_delay_ms: float = 2000.0,
    frame_ms: float = FRAME_MS,
    splice_fade_ms: float = 60.0,
) -> EditResult:
    """Delay a responding turn by 1.2-2.0 s.

    Candidates are active-alone shifts (each speaker alone for 1 s around the transition,
    at most 200 ms overlap, a positive gap only if mutually silent). The same amount of the
    channel's own room tone is inserted after the speaker's offset (speaker channel) and
    before the responder's onset (responder channel), so both channels stay aligned.
    """
    sr = SAMPLE_RATE
    ctx = dialogue_context(dialogue, frame_ms=frame_ms)
    shifts = find_active_alone_shift_points_bidir(ctx.segs_a, ctx.segs_b, ctx.va, ctx.vb, frame_ms=frame_ms)
    if not shifts:
        raise NoCandidateError("no active-alone A-B transition for late_response")
    ch, speaker, responder = rng.choice(shifts)
    sp, rp = CHANNELS.index(ch), 1 - CHANNELS.index(ch)
    delay = int(round(sr * rng.uniform(min_delay_ms, max_delay_ms) / 1000.0))
    speaker_insert, responder_insert = speaker.end_sample(sr, frame_ms), responder.start_sample(sr, frame_ms)
    draft, np_rng = _Draft(dialogue), _np_rng(rng)
    fade = audio_ops.fade_len(sr, splice_fade_ms)
    for c, at in ((sp, speaker_insert), (rp, responder_insert)):
        tone = audio_ops.room_tone(draft.audio[c], draft.segments[c], delay + 2 * fade, sr, np_rng)
        draft.insert(c, at, delay, sr, tone, splice_fade_ms)
    anchor = min(speaker_insert, responder_insert)
    draft.timeline.insert(anchor / sr, delay / sr)
    resp_len = responder.end_sample(sr, frame_ms) - responder.start_sample(sr, frame_ms)
    return draft.finish("late_response", {
        "delay_ms": _ms(delay),
        "pre_response_gap_ms": _ms(responder_insert - speaker_insert),
        "anchor_ms": _ms(anchor),
        "speaker_channel": ch,
        "responder_channel": CHANNELS[rp],
        "speaker_start_ms": speaker.start_ms(frame_ms),
        "speaker_end_ms": speaker.end_ms(frame_ms),
        "responder_original_start_ms": responder.start_ms(frame_ms),
        "responder_original_end_ms": responder.end_ms(frame_ms),
        "responder_new_start_ms": _ms(responder_insert + delay),
        "responder_new_end_ms": _ms(responder_insert + delay + resp_len),
        "speaker_text": speaker.text,
        "responder_text": responder.text,
        "boundaries_ms": [speaker.start_ms(frame_ms), speaker.end_ms(frame_ms), _ms(responder_insert + delay), _ms(responder_insert + delay + resp_len)],
    })


def make_early_entry(
    dialogue: Dialogue,
    rng: random.Random,
    *,
    min_advance_ms: float = 1200.0,
    max_advance_ms: float = 2500.0,
    min_gap_ms: float = 200.0,
    max_gap_ms: float = 1000.0,
    guard_ms: float = 50.0,
    frame_ms: float = FRAME_MS,
) -> EditResult:
    """Start a responding turn 1.2-2.5 s earlier, so it overlaps the speaker's end.

    Candidates are proper shifts (TurnNat's VAP-style transitions) with a 0.2-1.0 s gap
    and a later turn of the first speaker. Both channels lose the same length of their own
    silence: the responder's before its onset, the speaker's after its offset; the speaker
    must stay quiet long enough before its next turn.
    """
    sr = SAMPLE_RATE
    ctx = dialogue_context(dialogue, frame_ms=frame_ms)
    guard = int(round(sr * guard_ms / 1000.0))
    min_adv, max_adv = (int(round(sr * x / 1000.0)) for x in (min_advance_ms, max_advance_ms))
    options = []
    for ch, speaker, responder in find_proper_shift_points_bidir(ctx.segs_a, ctx.segs_b, ctx.va, ctx.vb, frame_ms=frame_ms):
        sp = CHANNELS.index(ch)
        gap_s, gap_e = speaker.end_sample(sr, frame_ms), responder.start_sample(sr, frame_ms)
        if not min_gap_ms <= _ms(gap_e - gap_s) <= max_gap_ms:
            continue
        own = ctx.segs_a if ch == "a" else ctx.segs_b
        later = [s for s in own if s.start > responder.end and is_substantive_turn(s)]
        if not later:
            continue
        next_turn = min(later, key=lambda s: s.start)
        speaker_budget = next_turn.start_sample(sr, frame_ms) - guard - (gap_s + guard)
        allowed = min(max_adv, gap_e - speaker.start_sample(sr, frame_ms) - int(round(0.3 * sr)), speaker_budget)
        # the responder channel must be silent over the span cut before its onset
        while allowed >= min_adv and not _silent(dialogue.segments[1 - sp], (gap_e - guard - allowed) / sr, (gap_e - guard) / sr):
            allowed -= int(0.1 * sr)
        if allowed >= min_adv:
            options.append((ch, speaker, responder, next_turn, gap_s, gap_e, allowed))
    if not options:
        raise NoCandidateError("no 0.2-1.0 s shift with room for a 1.2-2.5 s early entry")
    ch, speaker, responder, next_turn, gap_s, gap_e, allowed = rng.choice(options)
    advance = rng.randint(min_adv, allowed)
    sp, rp = CHANNELS.index(ch), 1 - CHANNELS.index(ch)
    draft = _Draft(dialogue)
    speaker_cut = gap_s + guard
    responder_cut = gap_e - guard - advance
    draft.delete(sp, speaker_cut, advance, sr)
    draft.delete(rp, responder_cut, advance, sr)
    draft.timeline.delete(min(speaker_cut, responder_cut) / sr, advance / sr)
    new_start = responder.start_sample(sr, frame_ms) - advance
    resp_len = responder.end_sample(sr, frame_ms) - responder.start_sample(sr, frame_ms)
    return draft.finish("early_entry", {
        "advance_ms": _ms(advance),
        "gap_ms": _ms(gap_e - gap_s),
        "overlap_ms": _ms(max(0, gap_s - new_start)),
        "cut_start_ms": _ms(responder_cut),
        "cut_end_ms": _ms(responder_cut + advance),
        "speaker_channel_cut_start_ms": _ms(speaker_cut),
        "speaker_channel": ch,
        "responder_channel": CHANNELS[rp],
        "speaker_start_ms": speaker.start_ms(frame_ms),
        "speaker_end_ms": speaker.end_ms(frame_ms),
        "responder_original_start_ms": responder.start_ms(frame_ms),
        "responder_original_end_ms": responder.end_ms(frame_ms),
        "responder_new_start_ms": _ms(new_start),
        "responder_new_end_ms": _ms(new_start + resp_len),
        "next_turn_start_ms": _ms(next_turn.start_sample(sr, frame_ms) - advance),
        "speaker_text": speaker.text,
        "responder_text": responder.text,
        "boundaries_ms": [speaker.start_ms(frame_ms), speaker.end_ms(frame_ms), _ms(new_start), _ms(new_start + resp_len)],
    })


def make_hold_instead_of_shift(
    dialogue: Dialogue,
    rng: random.Random,
    *,
    frame_ms: float = FRAME_MS,
    **filter_kwargs: Any,
) -> EditResult:
    """Remove the responding turn of an A-B-A exchange, so A seems to hold the floor.

    Candidates: active-alone A-B shifts (no overlap, >= 100 ms mutual silence) after which
    A returns, filtered as the reference CLI does (texts present and distinct, the response
    not a question and 1.2-8 s long, the resulting pause 0.5-1.5 s; ``filter_kwargs``
    override). The responder channel from A's offset to A's return becomes room tone.
    """
    sr = SAMPLE_RATE
    ctx = dialogue_context(dialogue, frame_ms=frame_ms)
    found = find_active_alone_shift_then_original_speaker_returns(
        ctx.segs_a, ctx.segs_b, ctx.va, ctx.vb, frame_ms=frame_ms, max_overlap_ms=0.0, min_mutual_silence_ms=100.0
    )
    found = [x for x in found if passes_hold_instead_of_shift_filter(x, frame_ms=frame_ms, **filter_kwargs)]
    if not found:
        raise NoCandidateError("no textual non-question shift-return for hold_instead_of_shift")
    ch, speaker, responder, returning = rng.choice(found)
    rp = 1 - CHANNELS.index(ch)
    remove_s, remove_e = speaker.end_sample(sr, frame_ms), returning.start_sample(sr, frame_ms)
    draft = _Draft(dialogue)
    tone = audio_ops.room_tone(draft.audio[rp], draft.segments[rp], remove_e - remove_s, sr, _np_rng(rng))
    audio_ops.replace_with_fill(draft.audio[rp], remove_s, remove_e, tone, sr)
    draft.segments[rp], draft.words[rp] = remove_speech(draft.segments[rp], draft.words[rp], remove_s / sr, remove_e / sr)
    return draft.finish("hold_instead_of_shift", {
        "removed_channel": CHANNELS[rp],
        "held_channel": ch,
        "removed_region_start_ms": _ms(remove_s),
        "removed_region_end_ms": _ms(remove_e),
        "edited_hold_gap_ms": returning.start_ms(frame_ms) - speaker.end_ms(frame_ms),
        "speaker_start_ms": speaker.start_ms(frame_ms),
        "speaker_end_ms": speaker.end_ms(frame_ms),
        "removed_responder_start_ms": responder.start_ms(frame_ms),
        "removed_responder_end_ms": responder.end_ms(frame_ms),
        "next_original_speaker_start_ms": returning.start_ms(frame_ms),
        "next_original_speaker_end_ms": returning.end_ms(frame_ms),
        "speaker_text": speaker.text,
        "removed_responder_text": responder.text,
        "next_original_speaker_text": returning.text,
        "boundaries_ms": [speaker.start_ms(frame_ms), speaker.end_ms(frame_ms), returning.start_ms(frame_ms), returning.end_ms(frame_ms)],
    })


@dataclass(frozen=True)
class HoldShiftOptions:
    """The settings of :func:`make_shift_instead_of_hold` (TurnNat's): the hold's pause length, the
    inserted turn's length and distance, its gain, and the frame grid."""

    min_gap_ms: float = 300.0
    max_gap_ms: float = 1000.0
    min_insert_s: float = 1.0
    max_insert_s: float = 4.0
    avoid_window_ms: float = 15000.0
    insert_gain: float = 0.9
    frame_ms: float = FRAME_MS


def _insertable_turns(ctx: Any, ic: int, curr: Any, nxt: Any, o: HoldShiftOptions) -> list:
    """The other speaker's substantive turns of the allowed length, far enough from the hold."""
    sr, frame_ms = SAMPLE_RATE, o.frame_ms
    avoid = int(round(o.avoid_window_ms / frame_ms))
    pool = []
    for seg in ctx.segs_b if ic == 1 else ctx.segs_a:
        dur = seg.end_sample(sr, frame_ms) - seg.start_sample(sr, frame_ms)
        if (
            has_text(seg, min_words=3)
            and is_substantive_turn(seg, min_frames=10, min_words=3)
            and (seg.end < max(0, curr.start - avoid) or seg.start > nxt.end + avoid)
            and int(round(sr * o.min_insert_s)) <= dur <= int(round(sr * o.max_insert_s))
        ):
            pool.append(seg)
    return pool


def make_shift_instead_of_hold(dialogue: Dialogue, rng: random.Random, options: HoldShiftOptions = HoldShiftOptions()) -> EditResult:
    """Insert a turn of the other speaker into a pause of a holding speaker.

    Candidates: proper holds (A alone 1 s before and after a mutually silent pause) with
    distinct texts and a 0.3-1.0 s pause. The inserted turn is a 1-4 s substantive turn of
    the other speaker from at least 15 s away, pasted at the middle of the pause; both
    channels get the same length of room tone there, so everything after moves later.
    """
    frame_ms, min_gap_ms, max_gap_ms, insert_gain = options.frame_ms, options.min_gap_ms, options.max_gap_ms, options.insert_gain
    sr = SAMPLE_RATE
    flen = frame_length(sr, frame_ms)
    ctx = dialogue_context(dialogue, frame_ms=frame_ms, min_transcript_ms=40.0)
    holds = [
        x for x in find_proper_hold_regions_bidir(ctx.segs_a, ctx.segs_b, ctx.va, ctx.vb, frame_ms=frame_ms)
        if has_text(x[1]) and has_text(x[2]) and distinct_text(x[1], x[2])
    ]
    rng.shuffle(holds)
    for hold_ch, curr, nxt in holds:
        gap_s, gap_e = curr.end_sample(sr, frame_ms), nxt.start_sample(sr, frame_ms)
        if not min_gap_ms <= _ms(gap_e - gap_s) <= max_gap_ms:
            continue
        ic = 1 - CHANNELS.index(hold_ch)
        pool = _insertable_turns(ctx, ic, curr, nxt, options)
        if not pool:
            continue
        src = rng.choice(pool)
        src_s, src_e = src.start_sample(sr, frame_ms), src.end_sample(sr, frame_ms)
        length = src_e - src_s
        draft = _Draft(dialogue)
        clip = audio_ops.edge_faded(draft.audio[ic][src_s:src_e], sr)
        at = gap_s + (gap_e - gap_s) // 2
        np_rng = _np_rng(rng)
        fade = audio_ops.fade_len(sr, 60.0)
        for c in (0, 1):
            tone = audio_ops.room_tone(draft.audio[c], draft.segments[c], length + 2 * fade, sr, np_rng)
            draft.insert(c, at, length, sr, tone, 60.0)
        draft.audio[ic][at : at + length] = np.clip(insert_gain * clip, -1.0, 1.0)
        shift = (at - src_s) / sr
        draft.segments[ic] += _speech_in(dialogue.segments[ic], src_s / sr, src_e / sr, shift)
        draft.words[ic] += _words_in(dialogue.words[ic] if dialogue.words else [], src_s / sr, src_e / sr, shift)
        draft.segments[ic].sort()
        draft.timeline.insert(at / sr, length / sr)
        return draft.finish("shift_instead_of_hold", {
            "insert_ms": _ms(at),
            "insert_end_ms": _ms(at + length),
            "insert_duration_ms": _ms(length),
            "insert_frame": int(round(at / flen)),
            "original_hold_gap_ms": _ms(gap_e - gap_s),
            "hold_channel": hold_ch,
            "inserted_channel": CHANNELS[ic],
            "source_start_ms": src.start_ms(frame_ms),
            "source_end_ms": src.end_ms(frame_ms),
            "hold_start_ms": curr.start_ms(frame_ms),
            "hold_end_ms": curr.end_ms(frame_ms),
            "next_hold_original_start_ms": nxt.start_ms(frame_ms),
            "next_hold_new_start_ms": round(nxt.start_ms(frame_ms) + _ms(length), 1),
            "next_hold_new_end_ms": round(nxt.end_ms(frame_ms) + _ms(length), 1),
            "inserted_text": src.text,
            "hold_text": curr.text,
            "next_hold_text": nxt.text,
            "boundaries_ms": [curr.start_ms(frame_ms), curr.end_ms(frame_ms), _ms(at), _ms(at + length), round(nxt.start_ms(frame_ms) + _ms(length), 1)],
        })
    raise NoCandidateError("no 0.3-1.0 s textual hold with an off-window 1-4 s turn of the other speaker")


def _backchannel_clip_bounds(seg: Segment, words: list[Word], sr: int, frame_ms: float, pad_s: float = 0.03) -> tuple[int, int, str]:
    """Sample bounds of the audible backchannel: its words (+30 ms) when known, else the segment."""
    start_s = seg.start_s if seg.start_s is not None else seg.start * frame_ms / 1000.0
    end_s = seg.end_s if seg.end_s is not None else (seg.end + 1) * frame_ms / 1000.0
    inside = [w for w in words if w.end > start_s and w.start < end_s]
    if inside:
        return int(round((inside[0].start - pad_s) * sr)), int(round((inside[-1].end + pad_s) * sr)), " ".join(w.text for w in inside)
    return seg.start_sample(sr, frame_ms), seg.end_sample(sr, frame_ms), seg.text


def _spaced_frames(frames: list[int], min_gap: int, count: int) -> list[int]:
    """Up to ``count`` of ``frames`` (taken in their order) at least ``min_gap`` apart, sorted."""
    chosen: list[int] = []
    for f in frames:
        if all(abs(f - g) >= min_gap for g in chosen):
            chosen.append(f)
            if len(chosen) == count:
                break
    return sorted(chosen)


def _paste_backchannels(dialogue: Dialogue, draft: "_Draft", lc: int, words: list, starts: list[int], order: list[dict], gain: float) -> list[dict]:
    """Paste each source clip of ``order`` at the sample of ``starts`` into channel ``lc`` of
    ``draft``, with its speech and words; returns what was inserted (ms)."""
    sr = SAMPLE_RATE
    inserted = []
    for at, src in zip(starts, order):
        clip = audio_ops.edge_faded(dialogue.audio[lc][src["start"] : src["end"]], sr)
        audio_ops.paste_add(draft.audio[lc], clip, at, gain)
        shift = (at - src["start"]) / sr
        draft.segments[lc] += _speech_in(dialogue.segments[lc], src["start"] / sr, src["end"] / sr, shift) or [
            (at / sr, (at + len(clip)) / sr)
        ]
        draft.words[lc] += _words_in(words, src["start"] / sr, src["end"] / sr, shift)
        inserted.append({
            "start_ms": _ms(at),
            "end_ms": _ms(at + len(clip)),
            "source_start_ms": _ms(src["start"]),
            "source_end_ms": _ms(src["end"]),
            "text": src["text"],
        })
    draft.segments[lc].sort()
    return inserted


def make_excessive_backchannel(
    dialogue: Dialogue,
    rng: random.Random,
    *,
    counts: tuple[int, ...] = (2, 3),
    min_gap_ms: float = 800.0,
    max_uses_per_source: int = 2,
    gain: float = 1.0,
    frame_ms: float = FRAME_MS,
) -> EditResult:
    """Mix 2-3 extra backchannels of a listener into one turn of the speaker.

    Sources are the listener's own isolated backchannels (short, backchannel-like, silent
    around them, inside the other's speech). They are pasted at spaced frames where the
    speaker talks and the listener is silent, all inside one speaker segment, so the extra
    feedback is one local event. A source may be reused ``max_uses_per_source`` times.
    """
    sr = SAMPLE_RATE
    flen = frame_length(sr, frame_ms)
    ctx = dialogue_context(dialogue, frame_ms=frame_ms, min_transcript_ms=40.0)
    count = rng.choice(list(counts))
    words = dialogue.words or [[], []]
    channels = [0, 1]
    rng.shuffle(channels)
    for lc in channels:
        own_segs, own_vad = ctx.channel(CHANNELS[lc])
        other_segs, other_vad = ctx.channel(CHANNELS[1 - lc])
        sources = []
        for seg in find_isolated_backchannels(own_segs, own_vad, other_vad, frame_ms=frame_ms):
            s, e, text = _backchannel_clip_bounds(seg, words[lc], sr, frame_ms)
            s, e = max(0, s), min(dialogue.audio.shape[1], e)
            if e > s:
                sources.append({"start": s, "end": e, "text": text, "frames": max(1, math.ceil((e - s) / flen))})
        if not sources or len(sources) * max_uses_per_source < count:
            continue
        max_frames = max(x["frames"] for x in sources)
        min_gap = max(max_frames, int(math.ceil(min_gap_ms / frame_ms)))
        windows = [w for w in other_segs if w.dur >= max_frames]
        rng.shuffle(windows)
        for window in windows:
            lo, hi = window.start, min(len(other_vad), window.end + 1 - max_frames)
            frames = [f for f in range(lo, max(lo, hi)) if other_vad[f] and not own_vad[f : f + max_frames].any()]
            rng.shuffle(frames)
            chosen = _spaced_frames(frames, min_gap, count)
            if len(chosen) < count:
                continue
            order = [src for _ in range(max_uses_per_source) for src in rng.sample(sources, len(sources))][:count]
            draft = _Draft(dialogue)
            inserted = _paste_backchannels(dialogue, draft, lc, words[lc], [f * flen for f in chosen], order, gain)
            return draft.finish("excessive_backchannel", {
                "source_channel": CHANNELS[lc],
                "speaker_channel": CHANNELS[1 - lc],
                "insert_ms": inserted[0]["start_ms"],
                "insert_frame": chosen[0],
                "bc_insert_count": len(inserted),
                "inserted_backchannels": inserted,
                "speaker_start_ms": window.start_ms(frame_ms),
                "speaker_end_ms": window.end_ms(frame_ms),
                "speaker_text": window.text,
                "boundaries_ms": [window.start_ms(frame_ms), window.end_ms(frame_ms)] + [x["end_ms"] for x in inserted],
            })
    raise NoCandidateError(f"no listener with backchannels to insert {count} times into one speaker turn")


EDIT_FUNCTIONS: dict[str, Callable[..., EditResult]] = {
    "late_response": make_late_response,
    "early_entry": make_early_entry,
    "hold_instead_of_shift": make_hold_instead_of_shift,
    "shift_instead_of_hold": make_shift_instead_of_hold,
    "excessive_backchannel": make_excessive_backchannel,
}
"""Perturbation type -> edit function."""

PERTURBATION_TYPES: tuple[str, ...] = tuple(EDIT_FUNCTIONS)
