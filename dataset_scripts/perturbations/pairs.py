"""Natural / perturbed pairs: one edit, a 20-25 s crop in mutual silence, loudness normalised.

The crop follows the TurnNat builder's short-context rule: it must contain the edit with
enough context for the naturalness scorer (5 s before the first edited boundary: 3 s of
model context plus the 2 s boundary unit; 2 s after the last), start and end where both
speakers are silent, and place the edit between 18 % and 82 % of the clip. The natural
clip is the same stretch of the original conversation (crop bounds mapped back through
the edit's timeline). Conversations no longer than ``max_context_s`` are not cropped.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, MutableMapping

from ..dialogue import Dialogue
from .audio_ops import TARGET_RMS_DBFS, normalize_loudness
from .conflicts import edit_anchor_ms
from .edits import EDIT_FUNCTIONS, PERTURBATION_TYPES, EditResult, NoCandidateError


MIN_CONTEXT_S = 20.0
MAX_CONTEXT_S = 25.0
"""Clip length range of a pair (TurnNat: 20-25 s); shorter conversations are not cropped."""

ABSOLUTE_MS_SUFFIX = "_ms"
RELATIVE_MS_KEYS = frozenset({
    "delay_ms", "pre_response_gap_ms", "advance_ms", "gap_ms", "overlap_ms", "edited_hold_gap_ms",
    "insert_duration_ms", "original_hold_gap_ms",
})
"""Duration keys of edit descriptions; every other ``*_ms`` number is a time on the clock."""


@dataclass
class PerturbationPair:
    """A natural clip, the same clip with one turn-taking edit, and what was done."""

    pair_id: str
    perturbation_type: str
    natural: Dialogue
    perturbed: Dialogue
    edit: dict[str, Any]
    crop: dict[str, Any] = field(default_factory=dict)
    loudness: dict[str, Any] = field(default_factory=dict)

    @property
    def description(self) -> str:
        """One human-readable line about the edit."""
        e, t = self.edit, self.perturbation_type
        other = {"a": "B", "b": "A"}
        if t == "late_response":
            return f"{other[e['speaker_channel']]}'s response comes {e['delay_ms'] / 1000:.2f} s later"
        if t == "early_entry":
            return f"{other[e['speaker_channel']]}'s response starts {e['advance_ms'] / 1000:.2f} s earlier, overlapping the speaker"
        if t == "hold_instead_of_shift":
            return f"{e['removed_channel'].upper()}'s response is removed; {e['held_channel'].upper()} holds the floor"
        if t == "shift_instead_of_hold":
            return f"a {e['insert_duration_ms'] / 1000:.2f} s turn of {e['inserted_channel'].upper()} is inserted into {e['hold_channel'].upper()}'s pause"
        if t == "excessive_backchannel":
            return f"{e['bc_insert_count']} extra backchannels of {e['source_channel'].upper()} inside one turn of {e['speaker_channel'].upper()}"
        return t


def _speech_covers(dialogue: Dialogue, start: float, end: float) -> bool:
    return any(s < end and e > start for spk in dialogue.segments for s, e in spk)


def crop_bounds(
    result: EditResult,
    rng: random.Random,
    *,
    min_context_s: float = MIN_CONTEXT_S,
    max_context_s: float = MAX_CONTEXT_S,
    scorer_before_s: float = 5.0,
    scorer_after_s: float = 2.0,
    min_silence_s: float = 0.35,
    step_s: float = 0.08,
) -> tuple[float, float] | None:
    """Crop ``[start, end)`` of the edited dialogue, or None when it is short enough already.

    Raises NoCandidateError when no crop meets the constraints.
    """
    edited = result.dialogue
    total = float(edited.duration)
    if total <= max_context_s:
        return None
    boundaries = [b / 1000.0 for b in result.edit.get("boundaries_ms", [])] or [edit_anchor_ms(result.edit) / 1000.0]
    anchor = edit_anchor_ms(result.edit) / 1000.0
    first, last = min(boundaries + [anchor]), max(boundaries + [anchor])
    need_start, need_end = first - scorer_before_s, last + scorer_after_s
    if need_start < 0 or need_end > total or need_end - need_start > max_context_s:
        raise NoCandidateError("the edit and its scorer context do not fit a crop of this conversation", reason="crop_too_short")
    # only positions that can be part of a crop of at most max_context_s around the edit
    lo, hi = max(0, math.ceil((need_end - max_context_s) / step_s)), int(need_start / step_s)
    starts = [i * step_s for i in range(lo, hi + 1) if not _speech_covers(edited, i * step_s, i * step_s + min_silence_s)]
    lo, hi = math.ceil(need_end / step_s), int(min(total, need_start + max_context_s) / step_s)
    ends = [i * step_s for i in range(lo, hi + 1) if not _speech_covers(edited, i * step_s - min_silence_s, i * step_s)]
    target_len = max(min_context_s, min(max_context_s, (need_end - need_start) + rng.uniform(18.0, 30.0)))
    target_frac = rng.uniform(0.25, 0.75)
    middle = (first + last) / 2.0
    best: tuple[float, float, float] | None = None
    for st in starts:
        for en in ends:
            dur = en - st
            if not min_context_s <= dur <= max_context_s:
                continue
            frac = (middle - st) / dur
            if not 0.18 <= frac <= 0.82:
                continue
            score = abs(dur - target_len) + 1.5 * abs(frac - target_frac)
            if best is None or score < best[0]:
                best = (score, st, en)
    if best is None:
        raise NoCandidateError(f"no {min_context_s:g}-{max_context_s:g} s crop with mutual-silence start and end", reason="crop_too_short")
    return round(best[1], 3), round(best[2], 3)


def _shift_edit_times(edit: dict[str, Any], offset_ms: float) -> dict[str, Any]:
    """Edit times relative to the crop start; the uncropped value is kept as ``source_timeline_*``."""

    def shift(d: dict[str, Any]) -> dict[str, Any]:
        out = dict(d)
        for key, value in d.items():
            if key.endswith(ABSOLUTE_MS_SUFFIX) and key not in RELATIVE_MS_KEYS and isinstance(value, (int, float)):
                out[f"source_timeline_{key}"] = value
                out[key] = round(value - offset_ms, 1)
            elif key == "boundaries_ms":
                out[key] = [round(v - offset_ms, 1) for v in value]
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                out[key] = [shift(item) for item in value]
        return out

    return shift(edit)


def make_pair(
    dialogue: Dialogue,
    perturbation_type: str,
    seed: int = 0,
    *,
    min_context_s: float = MIN_CONTEXT_S,
    max_context_s: float = MAX_CONTEXT_S,
    normalize: bool = True,
    target_rms_dbfs: float = TARGET_RMS_DBFS,
    max_tries: int = 5,
    **edit_kwargs: Any,
) -> PerturbationPair:
    """Apply one perturbation to a dialogue (audio loaded) and cut the natural/perturbed pair.

    Deterministic per (seed, dialogue id, type). Tries up to ``max_tries`` random draws
    (different candidates) before giving up with NoCandidateError.
    """
    if perturbation_type not in EDIT_FUNCTIONS:
        raise ValueError(f"unknown perturbation type {perturbation_type!r}; choose from {list(PERTURBATION_TYPES)}")
    last_error: Exception | None = None
    reasons: set[str] = set()
    for attempt in range(max_tries):
        rng = random.Random(f"{seed}|{dialogue.id}|{perturbation_type}|{attempt}")
        try:
            result = EDIT_FUNCTIONS[perturbation_type](dialogue, rng, **edit_kwargs)
            bounds = crop_bounds(result, rng, min_context_s=min_context_s, max_context_s=max_context_s)
        except NoCandidateError as err:
            last_error = err
            reasons.add(err.reason)
            continue
        edit, crop = dict(result.edit), {"enabled": bounds is not None}
        natural, perturbed = dialogue, result.dialogue
        if bounds is not None:
            st, en = bounds
            src_st, src_en = result.timeline.to_source(st), result.timeline.to_source(en)
            perturbed = perturbed.crop(st, en, new_id=result.dialogue.id)
            natural = natural.crop(src_st, src_en, new_id=dialogue.id)
            crop.update(start_s=st, end_s=en, source_start_s=round(src_st, 3), source_end_s=round(src_en, 3))
            edit = _shift_edit_times(edit, st * 1000.0)
        loudness: dict[str, Any] = {"enabled": False}
        if normalize:
            natural, loud_n = _normalized(natural, target_rms_dbfs)
            perturbed, loud_p = _normalized(perturbed, target_rms_dbfs)
            loudness = {"natural": loud_n, "perturbed": loud_p}
        return PerturbationPair(
            pair_id=f"{dialogue.id}__{perturbation_type}",
            perturbation_type=perturbation_type,
            natural=natural,
            perturbed=perturbed,
            edit=edit,
            crop=crop,
            loudness=loudness,
        )
    # an edit that was found but fits no crop says more than a draw that found none
    reason = "crop_too_short" if "crop_too_short" in reasons else "no_candidate"
    raise NoCandidateError(f"{dialogue.id}: {perturbation_type}: {last_error}", reason=reason)


def _normalized(dialogue: Dialogue, target_rms_dbfs: float) -> tuple[Dialogue, dict[str, Any]]:
    audio, info = normalize_loudness(dialogue.audio, target_rms_dbfs=target_rms_dbfs)
    data = dialogue.to_dict()
    data["audio_path"] = None
    return Dialogue.from_dict(data, audio=audio), info


def iter_pairs(
    dialogues: Iterable[Dialogue],
    types: Iterable[str] = PERTURBATION_TYPES,
    seed: int = 0,
    *,
    skipped: list[str] | None = None,
    skip_counts: MutableMapping[str, int] | None = None,
    edit_params: Mapping[str, Mapping[str, Any]] | None = None,
    **kwargs: Any,
) -> Iterator[PerturbationPair]:
    """Every (dialogue, type) pair that can be made; the others are listed in ``skipped``.

    ``skip_counts`` (e.g. a ``collections.Counter``) counts the skips by reason
    (:attr:`NoCandidateError.reason`: ``no_candidate``, ``crop_too_short``).

    ``edit_params`` maps a perturbation type to keyword arguments of its edit function
    (e.g. ``{"hold_instead_of_shift": {"max_edited_hold_gap_ms": 4000.0}}``); ``kwargs`` go
    to :func:`make_pair` for every type.
    """
    types = tuple(types)
    edit_params = edit_params or {}
    for dialogue in dialogues:
        for perturbation_type in types:
            try:
                yield make_pair(dialogue, perturbation_type, seed, **kwargs, **dict(edit_params.get(perturbation_type, {})))
            except NoCandidateError as err:
                if skipped is not None:
                    skipped.append(str(err))
                if skip_counts is not None:
                    skip_counts[err.reason] = skip_counts.get(err.reason, 0) + 1


__all__ = ["PerturbationPair", "crop_bounds", "iter_pairs", "make_pair"]
