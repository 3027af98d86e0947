"""When two edits of one conversation are too close to both be applied.

The TurnNat builder places several edits in one conversation only when their anchors
are at least 8 s apart and they do not reuse the same speaker or responder turn
(overlap above half of the shorter turn). Anchors are picked per edit type.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence


ANCHOR_KEYS: dict[str, tuple[str, ...]] = {
    "early_entry": ("responder_new_start_ms", "cut_start_ms", "anchor_ms"),
    "late_response": ("anchor_ms", "responder_new_start_ms"),
    "hold_instead_of_shift": ("removed_responder_start_ms", "anchor_ms"),
    "shift_instead_of_hold": ("insert_ms", "hold_end_ms"),
    "missed_backchannel": ("backchannel_start_ms", "anchor_ms"),
    "excessive_backchannel": ("insert_ms", "anchor_ms"),
}
"""Per edit type, the description keys tried in order for the edit's anchor time."""

FALLBACK_ANCHOR_KEYS = (
    "anchor_ms", "insert_ms", "removed_responder_start_ms",
    "backchannel_start_ms", "responder_original_start_ms", "hold_end_ms",
)

MIN_GAP_MS = 8000.0
TURN_OVERLAP_RATIO = 0.5


def _finite(value: Any) -> bool:
    # as the reference: any int or float (bools included, being ints) that is finite
    return isinstance(value, (int, float)) and math.isfinite(float(value))


def anchor_key(edit: Mapping[str, Any]) -> str | None:
    """The description key that holds this edit's anchor, or None when it has none."""
    for key in ANCHOR_KEYS.get(str(edit.get("edit_type") or ""), FALLBACK_ANCHOR_KEYS):
        if _finite(edit.get(key)):
            return key
    return None


def edit_anchor_ms(edit: Mapping[str, Any]) -> float:
    """The edit's anchor time in ms (0.0 when no anchor key is present, as the reference)."""
    key = anchor_key(edit)
    return float(edit[key]) if key is not None else 0.0


def interval_overlap_ratio(a0: Any, a1: Any, b0: Any, b1: Any) -> float:
    """Overlap of [a0, a1] and [b0, b1] over the shorter one; 0 for missing or empty spans."""
    if not all(_finite(x) for x in (a0, a1, b0, b1)):
        return 0.0
    a0, a1, b0, b1 = float(a0), float(a1), float(b0), float(b1)
    if a1 <= a0 or b1 <= b0:
        return 0.0
    inter = max(0.0, min(a1, b1) - max(a0, b0))
    return inter / max(1e-6, min(a1 - a0, b1 - b0))


def edits_conflict(
    new_edit: Mapping[str, Any],
    prior_edits: Sequence[Mapping[str, Any]],
    min_gap_ms: float = MIN_GAP_MS,
    turn_overlap_ratio: float = TURN_OVERLAP_RATIO,
) -> str | None:
    """Why ``new_edit`` cannot join ``prior_edits`` (None when it can).

    Anchors closer than ``min_gap_ms`` (strictly) conflict; so do speaker or responder
    turns that overlap by more than ``turn_overlap_ratio`` of the shorter turn.
    """
    new_t = edit_anchor_ms(new_edit)
    for old in prior_edits:
        distance = abs(new_t - edit_anchor_ms(old))
        if distance < min_gap_ms:
            return f"too_close_to_existing_event:{distance:.1f}ms"
        for prefix in ("speaker", "responder_original"):
            ratio = interval_overlap_ratio(
                new_edit.get(f"{prefix}_start_ms"), new_edit.get(f"{prefix}_end_ms"),
                old.get(f"{prefix}_start_ms"), old.get(f"{prefix}_end_ms"),
            )
            if ratio > turn_overlap_ratio:
                return "overlaps_existing_turn"
    return None
