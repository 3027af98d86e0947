"""golden/turnnat units_*: TurnNat boundary units from observed VAD, unit NLL and the dialogue score."""
from __future__ import annotations

import numpy as np

from turneval.metrics import naturalness_score as ns
from turneval.metrics import turnnat_units as tu


SET = "turnnat"
PREFIXES = ("units_",)
# Unit NLLs are float32 means in the reference.
TOLERANCE = {"rel": 1e-6, "abs": 1e-9}


def _segment_id(case: dict) -> str:
    # The segment id is an input of the reference's unit_rows_from_units (a label copied into
    # every row); the golden file records it only in its output rows.
    rows = case["output"].get("unit_rows") or []
    return rows[0]["segment_id"] if rows else ""


def run_case(case: dict) -> dict:
    params, data = case["params"], case["input"]
    frame_hz = float(params["frame_hz"])
    samples = data["silero_timestamps_samples"]
    raw = tu.observed_vad_from_samples(
        [[(s["start"], s["end"]) for s in samples[name]] for name in ("A", "B")],
        data["n_samples"],
        int(round(data["sample_rate"] / frame_hz)),
    )
    clean = tu.clean_vad(raw, frame_hz, params["clean_min_speech_ms"], params["clean_min_silence_ms"])
    segments = tu.speech_segments(clean, frame_hz)
    utterances = tu.merge_utterance_segments(
        segments, clean, frame_hz, params["utterance_merge_gap_s"], params["utterance_merge_other_max_ratio"]
    )
    units = tu.units_from_utterances(
        utterances,
        data["duration_s"],
        params["unit_pre_s"],
        params["unit_post_s"],
        params["min_utterance_s"],
        params["unit_mode"],
        params["utterance_merge_gap_s"],
        params["utterance_merge_other_max_ratio"],
    )
    nll = np.asarray(data["frame_nll"], dtype=np.float32)
    rows = tu.unit_rows_from_units(
        nll, units, clean, _segment_id(case), frame_hz, params["context_s"], params["min_unit_frames"]
    )
    aggregate = ns.aggregate_unit_rows(rows, params["tail_gamma"], params["lambda_mean"])
    return {
        "raw_vad_frames": raw.tolist(),
        "clean_vad_frames": clean.tolist(),
        "speech_segments": [s.to_dict() for s in segments],
        "merged_utterances": [u.to_dict() for u in utterances],
        "units": [u.to_dict() for u in units],
        "unit_frame_slices": [list(tu.frame_slice_for_unit(u, len(nll), frame_hz, params["context_s"])) for u in units],
        "unit_rows": [r.to_dict() for r in rows],
        "aggregate": aggregate.to_dict(),
    }
