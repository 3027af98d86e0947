"""TurnNat perturbations: natural vs perturbed turn-taking pairs (TurnNat §IV-A).

- ``segments``: the 80 ms candidate grid (VAD timestamps -> merged segments -> activity).
- ``predicates``: backchannel-like, substantive, question-like, ... segment tests.
- ``candidates``: where each perturbation type can be applied.
- ``conflicts``: edit anchors and when two edits are too close.
- ``edits``: the five edits on a stereo conversation (audio, activity and words together),
  built on ``audio_ops`` (faded splices, room tone, loudness) and ``timeline`` (moving
  segments and words with the audio).
- ``pairs``: 20-25 s crops in mutual silence, loudness normalisation, natural/perturbed pairs.
"""
from .candidates import (
    ActiveAloneWindows,
    CleanGapWindows,
    find_active_alone_shift_points_bidir,
    find_active_alone_shift_then_original_speaker_returns,
    find_hold_regions_bidir,
    find_isolated_backchannels,
    find_proper_hold_regions_bidir,
    find_proper_shift_points_bidir,
    find_shift_points_bidir,
    find_shift_then_original_speaker_returns,
    find_short_backchannels,
    hold_instead_of_shift_terms,
    passes_hold_instead_of_shift_filter,
)
from .conflicts import anchor_key, edit_anchor_ms, edits_conflict, interval_overlap_ratio
from .predicates import (
    distinct_text,
    has_text,
    is_backchannel_like,
    is_question_like,
    is_substantive_turn,
    normalized_text,
    word_count,
)
from .segments import (
    FRAME_MS,
    CandidateContext,
    ContextSettings,
    Segment,
    candidate_context,
    merge_close_segments,
    sec_to_segment,
    segments_to_vad,
)


__all__ = [
    "FRAME_MS",
    "ActiveAloneWindows",
    "CandidateContext",
    "CleanGapWindows",
    "ContextSettings",
    "Segment",
    "anchor_key",
    "candidate_context",
    "distinct_text",
    "edit_anchor_ms",
    "edits_conflict",
    "find_active_alone_shift_points_bidir",
    "find_active_alone_shift_then_original_speaker_returns",
    "find_hold_regions_bidir",
    "find_isolated_backchannels",
    "find_proper_hold_regions_bidir",
    "find_proper_shift_points_bidir",
    "find_shift_points_bidir",
    "find_shift_then_original_speaker_returns",
    "find_short_backchannels",
    "has_text",
    "hold_instead_of_shift_terms",
    "interval_overlap_ratio",
    "is_backchannel_like",
    "is_question_like",
    "is_substantive_turn",
    "merge_close_segments",
    "normalized_text",
    "passes_hold_instead_of_shift_filter",
    "sec_to_segment",
    "segments_to_vad",
    "word_count",
]
