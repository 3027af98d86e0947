"""golden/turnnat aggregation_*: MeanNLL / TailNLL / naturalness score from unit NLLs."""
from __future__ import annotations

import numpy as np

from turneval.metrics import naturalness_score as ns
from turneval.metrics import turnnat_units as tu


SET = "turnnat"
PREFIXES = ("aggregation_",)
# The chain cases take float32 means of frame NLL, as the reference.
TOLERANCE = {"rel": 1e-6, "abs": 1e-9}


def _segment_id(case: dict) -> str:
    # An input label of unit_rows_from_units that the golden file records only in its output.
    rows = case["output"].get("unit_rows") or []
    return rows[0]["segment_id"] if rows else ""


def _chain_case(case: dict) -> dict:
    params, data = case["params"], case["input"]
    frame_hz = float(params["frame_hz"])
    # JSON null inside frame_nll is NaN (an unscored frame).
    nll = np.asarray([np.nan if v is None else v for v in data["frame_nll"]], dtype=np.float32)
    units = [tu.BoundaryUnit.from_dict(u) for u in data["units"]]
    # No voice activity is given: a silent VAD leaves the fallbacks to the all-valid rule.
    vad = np.zeros((len(nll), 2), dtype=np.int8)
    rows = tu.unit_rows_from_units(nll, units, vad, _segment_id(case), frame_hz, params["context_s"], params["min_unit_frames"])
    return {
        "unit_frame_slices": [list(tu.frame_slice_for_unit(u, len(nll), frame_hz, params["context_s"])) for u in units],
        "unit_rows": [r.to_dict() for r in rows],
        "aggregate": ns.aggregate_unit_rows(rows, params["tail_gamma"], params["lambda_mean"]).to_dict(),
    }


def run_case(case: dict) -> dict:
    if "units" in case["input"]:
        return _chain_case(case)
    params = case["params"]
    return ns.aggregate_unit_nll(case["input"]["unit_nll"], params["tail_gamma"], params["lambda_mean"]).to_dict()
