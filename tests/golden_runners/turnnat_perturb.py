"""golden/turnnat perturb_*: the deterministic parts of TurnNat's build_perturbations.py."""
from __future__ import annotations

import re

from turneval.dataset_scripts import perturbations as P
from turneval.dataset_scripts.grids import SAMPLE_RATE


SET = "turnnat"
PREFIXES = ("perturb_",)


def _refs(ctx: P.CandidateContext):
    """Segment -> "a[i]" / "b[i]" by identity."""
    names = {id(s): f"a[{i}]" for i, s in enumerate(ctx.segs_a)}
    names.update({id(s): f"b[{i}]" for i, s in enumerate(ctx.segs_b)})
    return lambda item: [x if isinstance(x, str) else names[id(x)] for x in item]


def _per_segment(seg: P.Segment, frame_ms: float) -> dict:
    return {
        "word_count": P.word_count(seg),
        "normalized_text": P.normalized_text(seg.text),
        "is_backchannel_like": P.is_backchannel_like(seg),
        "is_substantive_turn": P.is_substantive_turn(seg),
        "has_text_2": P.has_text(seg, 2),
        "is_question_like": P.is_question_like(seg),
        "start_ms": seg.start_ms(frame_ms),
        "end_ms": seg.end_ms(frame_ms),
        "duration_ms": seg.duration_ms(frame_ms),
    }


def _candidates(case: dict) -> dict:
    params, inp = case["params"], case["input"]
    frame_ms, sr = params["frame_ms"], params.get("sample_rate", SAMPLE_RATE)
    n_samples = int(round(inp["duration_s"] * sr))
    ctx = P.candidate_context(
        [inp["silero_timestamps_seconds"][s] for s in ("A", "B")],
        [inp["transcript_sidecar"].get(s, []) for s in ("A", "B")],
        n_samples=n_samples,
        sr=sr,
        settings=P.ContextSettings(
            frame_ms=frame_ms,
            min_transcript_ms=params["min_transcript_ms"],
            rms_threshold=params["rms_threshold"],
            vad_config=params["SILERO_CONFIG"],
        ),
    )
    ref = _refs(ctx)
    sa, sb, va, vb = ctx.segs_a, ctx.segs_b, ctx.va, ctx.vb
    late, early, hold = params["late_response"], params["early_entry_and_hold_finders"], params["hold_instead_of_shift"]
    bc, bcl = params["isolated_backchannel"], params["is_backchannel_like"]
    hold_returns = P.find_active_alone_shift_then_original_speaker_returns(
        sa, sb, va, vb, frame_ms=frame_ms, max_gap_ms=hold["max_gap_ms"],
        max_overlap_ms=hold["max_overlap_ms"], min_mutual_silence_ms=hold["min_mutual_silence_ms"],
    )

    def isolated(listener, lvad, svad):
        return [ref([s])[0] for s in P.find_isolated_backchannels(
            listener, lvad, svad, frame_ms=frame_ms, bc_duration_ms=bc["bc_duration_ms"],
            pre_silence_ms=bc["pre_silence_ms"], post_silence_ms=bc["post_silence_ms"])]

    return {
        "segments_a": [s.to_dict() for s in sa],
        "segments_b": [s.to_dict() for s in sb],
        "turn_sources": ctx.sources,
        "n_frames": ctx.n_frames,
        "va": "".join(str(int(v)) for v in va),
        "vb": "".join(str(int(v)) for v in vb),
        "per_segment": {ref([s])[0]: _per_segment(s, frame_ms) for s in sa + sb},
        "late_response.find_active_alone_shift_points_bidir": [ref(x) for x in P.find_active_alone_shift_points_bidir(
            sa, sb, va, vb, frame_ms=frame_ms, windows=P.ActiveAloneWindows(
                pre_offset_ms=late["pre_offset_ms"], post_onset_ms=late["post_onset_ms"],
                max_overlap_ms=late["max_overlap_ms"], max_gap_ms=late["max_gap_ms"],
                min_pre_duration_ms=late["min_pre_duration_ms"], min_post_duration_ms=late["min_post_duration_ms"]))],
        "early_entry.find_proper_shift_points_bidir": [ref(x) for x in P.find_proper_shift_points_bidir(
            sa, sb, va, vb, frame_ms=frame_ms, max_gap_ms=early["max_gap_ms"])],
        "shift_instead_of_hold.find_proper_hold_regions_bidir": [ref(x) for x in P.find_proper_hold_regions_bidir(
            sa, sb, va, vb, frame_ms=frame_ms)],
        "hold_instead_of_shift.find_active_alone_shift_then_original_speaker_returns": [ref(x) for x in hold_returns],
        "hold_instead_of_shift.candidate_filter_terms": [
            {"candidate": ref(x), **P.hold_instead_of_shift_terms(x, frame_ms)} for x in hold_returns
        ],
        "find_shift_then_original_speaker_returns(require_return_proper=True)": [ref(x) for x in P.find_shift_then_original_speaker_returns(
            sa, sb, va, vb, frame_ms=frame_ms, max_gap_ms=early["max_gap_ms"], require_return_proper=True)],
        "excessive_backchannel.find_isolated_backchannels": {
            "listener_b": isolated(sb, vb, va), "listener_a": isolated(sa, va, vb),
        },
        "find_short_backchannels": {
            "listener_b": [ref([s])[0] for s in P.find_short_backchannels(sb, va, bcl["max_frames"])],
            "listener_a": [ref([s])[0] for s in P.find_short_backchannels(sa, vb, bcl["max_frames"])],
        },
        "find_hold_regions_bidir": [ref(x) for x in P.find_hold_regions_bidir(sa, sb)],
        "find_shift_points_bidir(max_gap_frames=50)": [ref(x) for x in P.find_shift_points_bidir(sa, sb, 50)],
    }


_MOVED = re.compile(r"^with_(prior|new)_at_([0-9.]+)ms$")


def _moved(edit: dict, anchor_ms: float) -> dict:
    """The edit with its anchor time (whichever key supplies it) set to ``anchor_ms``."""
    edit = dict(edit)
    edit[P.anchor_key(edit) or "anchor_ms"] = anchor_ms
    return edit


def _conflict(case: dict) -> dict:
    params, inp = case["params"], case["input"]
    new, prior = inp["new_edit"], inp["prior_edits"]

    def check(new_edit, prior_edits):
        return P.edits_conflict(new_edit, prior_edits, params["min_gap_ms"], params["turn_overlap_ratio_threshold"])

    out = {
        "conflict": check(new, prior),
        "anchor_ms_new": P.edit_anchor_ms(new),
        "anchor_ms_prior": [P.edit_anchor_ms(e) for e in prior],
    }
    # Variant queries named "with_prior_at_<ms>ms" / "with_new_at_<ms>ms": the same check
    # with the prior edits' (or the new edit's) anchor moved to <ms>.
    for key in case["output"]:
        match = _MOVED.match(key)
        if match:
            at = float(match.group(2))
            if match.group(1) == "prior":
                out[key] = check(new, [_moved(e, at) for e in prior])
            else:
                out[key] = check(_moved(new, at), prior)
    return out


def run_case(case: dict) -> dict:
    if "new_edit" in case["input"]:
        return _conflict(case)
    return _candidates(case)
