"""TurnNat boundary units and the naturalness score (beyond golden/turnnat units_/aggregation_)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from turneval.dataset_scripts import vap_targets as vt
from turneval.metrics import naturalness_score as ns
from turneval.metrics import turnnat_units as tu


def activity(segments_a, segments_b, duration_s: float) -> np.ndarray:
    return tu.observed_vad([segments_a, segments_b], duration_s)


EXCHANGE = activity([(0.5, 4.0), (8.5, 11.5)], [(4.6, 8.0)], 12.0)


# -- voice activity ----------------------------------------------------------------------
def test_observed_vad_uses_sample_floor_division() -> None:
    vad = tu.observed_vad_from_samples([[(8000, 64000)], [(73600, 128000)]], 192000)
    assert vad.shape == (600, 2)
    assert np.flatnonzero(vad[:, 0]).tolist() == list(range(25, 200))
    assert np.flatnonzero(vad[:, 1])[[0, -1]].tolist() == [230, 399]
    # A segment running past the end is cut at the last frame.
    assert tu.observed_vad_from_samples([[(0, 10**6)], []], 3200).sum() == 10
    with pytest.raises(ValueError, match="segment 0"):
        tu.observed_vad_from_samples([[(50, 10)], []], 3200)
    np.testing.assert_array_equal(activity([(0.5, 4.0)], [], 5.0)[:, 0], tu.observed_vad_from_samples([[(8000, 64000)], []], 80000)[:, 0])


def test_clean_vad_rules() -> None:
    x = np.zeros(60, dtype=np.int8)
    x[10:16] = 1  # 6-frame blip (< 7): removed
    x[20:40] = 1
    x[40:45] = 0  # 5-frame pause (< 7) closed by speech: filled
    x[45:55] = 1
    x[57:60] = 1  # short run still open at the end: kept
    out = tu.clean_vad_channel(x)
    assert not out[10:16].any()
    assert out[20:55].all()
    assert out[57:60].all()
    lead = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1], dtype=np.int8)
    assert tu.clean_vad_channel(lead).all()  # a short leading silence is filled
    assert tu.clean_vad(np.stack([x, lead[:1].repeat(60)], axis=1)).shape == (60, 2)


# -- utterances and units ----------------------------------------------------------------
def test_merge_needs_short_gap_and_quiet_partner() -> None:
    quiet = activity([(3.0, 5.0), (5.8, 8.0)], [], 10.0)
    merged = tu.merge_utterance_segments(tu.speech_segments(quiet), quiet)
    assert [(u.start, u.end, u.merged_from) for u in merged] == [(3.0, 8.0, 2)]
    assert merged[0].internal_gap_s == pytest.approx(0.8)
    busy = activity([(3.0, 5.0), (5.8, 8.0)], [(5.1, 5.5)], 10.0)
    merged = tu.merge_utterance_segments(tu.speech_segments(busy), busy)
    assert [(u.speaker, u.start, u.end) for u in merged] == [(0, 3.0, 5.0), (1, 5.1, 5.5), (0, 5.8, 8.0)]
    far = activity([(3.0, 5.0), (6.5, 8.0)], [], 10.0)
    assert len(tu.merge_utterance_segments(tu.speech_segments(far), far)) == 2


def test_boundary_units_of_an_exchange() -> None:
    units = tu.extract_utterance_units(EXCHANGE, 12.0)
    kinds = [(u.unit_type, u.speaker) for u in units]
    assert kinds == [
        ("utterance_start", 0),
        ("utterance_end", 0),
        ("utterance_start", 1),
        ("utterance_end", 1),
        ("utterance_start", 0),
        ("utterance_end", 0),
    ]
    assert (units[0].start_time, units[0].end_time) == (0.0, 0.5)  # clamped at 0
    assert units[2].end_time == 4.6 and units[2].start_time == pytest.approx(2.6)
    spans = tu.extract_utterance_units(EXCHANGE, 12.0, settings=tu.UnitSettings(unit_mode="spans"))
    assert [u.unit_type for u in spans] == ["utterance_span"] * 3
    assert len(tu.extract_utterance_units(EXCHANGE, 12.0, settings=tu.UnitSettings(unit_mode="both"))) == 9
    with pytest.raises(ValueError, match="unit_mode"):
        tu.extract_utterance_units(EXCHANGE, 12.0, settings=tu.UnitSettings(unit_mode="turns"))


def test_unit_start_float_quirk_lands_one_frame_early() -> None:
    unit = tu.BoundaryUnit("utterance_start", 5.6 - 2.0, 5.6, 0, 1)
    assert unit.start_time == 3.5999999999999996
    assert tu.frame_slice_for_unit(unit, 1000) == (179, 280)
    early = tu.BoundaryUnit("utterance_end", 0.0, 2.0, 0, 1)
    lo, hi = tu.frame_slice_for_unit(early, 1000)
    assert hi <= lo  # inside the first 3 s: nothing to score


def test_unit_rows_minimum_frames_nan_and_fallbacks() -> None:
    nll = np.full(500, 2.0, dtype=np.float32)
    units = [tu.BoundaryUnit("utterance_end", 5.0, 7.0, 1, 0), tu.BoundaryUnit("utterance_start", 2.0, 3.06, 0, 1)]
    nll[260:270] = np.nan
    rows = tu.unit_rows_from_units(nll, units, np.zeros((600, 2)), "x")
    assert len(rows) == 1 and rows[0].num_frames == 90 and rows[0].unit_nll == 2.0
    assert rows[0].boundary == "offset" and rows[0].segment_id == "x"
    # No unit survives: frames near VAD changes, then every frame after 3 s.
    vad = np.zeros((600, 2), dtype=np.int8)
    vad[300:, 0] = 1
    fb = tu.unit_rows_from_units(nll, [], vad)
    assert fb[0].unit_type == "fallback_vad_boundaries" and (fb[0].start_time, fb[0].end_time) == (4.0, 8.02)
    fb = tu.unit_rows_from_units(nll, [], np.zeros((600, 2)))
    assert fb[0].unit_type == "fallback_all_valid" and fb[0].num_frames == 340
    assert tu.unit_rows_from_units(np.full(500, np.nan, dtype=np.float32), [], np.zeros((600, 2))) == []


# -- aggregation -------------------------------------------------------------------------
def test_aggregation_rules() -> None:
    agg = ns.aggregate_unit_nll([1.5, 2.5, 3.5, 4.5, 5.5])
    assert (agg.tail_k, agg.mean_nll, agg.tail_nll, agg.dialog_nll, agg.nat_score) == (2, 3.5, 5.0, 4.25, -4.25)
    assert ns.aggregate_unit_nll([1.0, 2.0, 3.0], gamma=0.0).tail_k == 1
    assert ns.aggregate_unit_nll([1.0, 2.0, 3.0], gamma=1.7).tail_k == 3
    assert ns.aggregate_unit_nll([1.0, 2.0, 6.0, 7.0], lam=1.0).dialog_nll == 4.0
    empty = ns.aggregate_unit_nll([])
    assert empty.tail_k == 0 and empty.num_units == 0 and math.isnan(empty.nat_score)
    assert empty.to_dict()["naturalness_score"] != empty.to_dict()["naturalness_score"]


# -- the whole score ---------------------------------------------------------------------
def one_hot_probs(va: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """A model that predicts the observed future perfectly (``eps`` spread elsewhere)."""
    labels = vt.vap_labels(va)
    probs = np.full((len(labels), 256), eps / 255, dtype=np.float32)
    probs[np.arange(len(labels)), labels] = 1.0 - eps
    return probs


def test_perfect_and_uniform_models() -> None:
    perfect = ns.score_naturalness(EXCHANGE, frame_probs=one_hot_probs(EXCHANGE))
    assert perfect.num_units == 5 and perfect.score == 0.0
    uniform = ns.score_naturalness(EXCHANGE, frame_probs=np.full((600, 256), 1 / 256, dtype=np.float32))
    assert uniform.score == pytest.approx(-math.log(256), rel=1e-6)
    assert uniform.mean_nll == pytest.approx(uniform.tail_nll, rel=1e-6)
    assert perfect.score > ns.score_naturalness(EXCHANGE, frame_probs=one_hot_probs(EXCHANGE, eps=0.5)).score


def test_mean_unit_nll_selects_units_by_speaker_and_boundary() -> None:
    nll = np.full(500, 1.0, dtype=np.float32)
    nll[380:400] = 9.0  # just before B's offset at 8.0 s
    result = ns.score_naturalness(EXCHANGE, frame_nll=nll)
    b_offsets = [row.unit_nll for row in result.units if row.speaker == 1 and row.boundary == "offset"]
    assert result.mean_unit_nll(1, "offset") == pytest.approx(np.mean(b_offsets)) and result.mean_unit_nll(1, "offset") > 1.0
    assert result.mean_unit_nll(0, "offset") == pytest.approx(1.0)  # A's offsets (4 s, 11.5 s) are far from the raised frames
    assert result.mean_unit_nll(boundary="onset") == pytest.approx(np.mean([r.unit_nll for r in result.units if r.boundary == "onset"]))
    assert result.mean_unit_nll() == pytest.approx(result.mean_nll)
    assert math.isnan(result.mean_unit_nll(1, "no such boundary"))


def test_worst_units_point_at_the_surprising_boundary() -> None:
    nll = np.full(500, 1.0, dtype=np.float32)
    nll[380:400] = 9.0  # just before B's offset at 8.0 s
    result = ns.score_naturalness(EXCHANGE, frame_nll=nll)
    worst = ns.describe_unit(result.worst_units(1)[0])
    assert worst["type"] == "offset" and worst["speaker"] == "B" and worst["time"] == 8.0
    assert result.tail_k == 2 and result.m == result.score
    summary = result.to_dict(n_worst=2)
    assert [w["time"] for w in summary["worst_units"]][0] == 8.0
    assert summary["num_units"] == 5 and len(summary["units"]) == 5


def test_score_rejects_ambiguous_input() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ns.score_naturalness(EXCHANGE)
    with pytest.raises(ValueError, match="exactly one"):
        ns.score_naturalness(EXCHANGE, frame_probs=np.ones((600, 256)), frame_nll=np.ones(500))
    with pytest.raises(ValueError, match=r"\[n_frames, 2\]"):
        ns.score_naturalness(np.ones(600), frame_nll=np.ones(500))


def test_boundary_frame_mask_covers_unit_frames() -> None:
    units = tu.extract_utterance_units(EXCHANGE, 12.0)
    mask = tu.boundary_frame_mask(units, 600)
    assert mask[0:25].all()  # A's onset unit [0, 0.5 s], kept without a context cut
    assert mask[100:230].all() and not mask[230:300].any()
    assert tu.boundary_frame_mask(units, 600, context_s=3.0)[:150].sum() == 0


def test_undefined_score_says_why():
    from turneval.metrics.naturalness_score import score_naturalness

    va = np.zeros((160, 2), dtype=np.int8)  # 3.2 s of silence: nothing after the 3 s context to score
    result = score_naturalness(va, frame_nll=np.ones(60, dtype=np.float32))
    assert not result.is_defined and np.isnan(result.score)
    summary = result.to_dict()
    assert summary["defined"] is False and "boundary unit" in summary["undefined_reason"]
