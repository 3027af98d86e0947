"""Tests for turneval.metrics.fd_bench_rounds (FD-Bench) and turneval.metrics.full_duplex_bench_tasks."""
from __future__ import annotations

import math

import numpy as np
import pytest

from turneval.metrics import fd_bench_rounds as fdbench
from turneval.metrics import full_duplex_bench_tasks as fdb
from turneval.metrics.fd_bench_rounds import FDBenchConversation, analyze_conversation, evaluate_fd_bench


SEC = 16000


# --------------------------------------------------------------------------- FD-Bench
def test_round_types_from_rounds_shifts_interruptions_by_one_round() -> None:
    rounds = {
        "round-2": {"user": "b", "interruption": "Further Inquiry"},
        "round-1": {"user": "a", "interruption": "Topic Shift"},
        "round-3": {"user": "c", "interruption": None},
    }
    assert fdbench.round_types_from_rounds(rounds) == ["First Inquiry", "Topic Shift", "Further Inquiry"]
    with pytest.raises(ValueError, match="round-<k>"):
        fdbench.round_types_from_rounds({"first": {}})


def test_seconds_to_samples() -> None:
    assert fdbench.seconds_to_samples([(0.5, 1.25)]) == [(8000, 20000)]
    assert fdbench.seconds_to_samples([(0.5, 1.0)], sample_rate=8000) == [(4000, 8000)]


def test_plain_reply_and_medians() -> None:
    marks = analyze_conversation([(0, 2 * SEC), (5 * SEC, 7 * SEC)], [(int(2.5 * SEC), 3 * SEC), (8 * SEC, 9 * SEC)], ["First Inquiry", None])
    assert marks.success_responses == 2 and marks.response_delay == [8000, 16000]
    result = fdbench.aggregate_marks([marks])
    assert result.srr == 1.0 and result.fsed_ms == 750.0  # median of 500 ms and 1000 ms
    assert result.sir == 0 and result.srir == 0  # no interruption: reported as 0, not an error


def test_early_interrupt_counts_lead_time() -> None:
    # the system starts 1.5 s before the user ends: an early (wrong) interrupt
    marks = analyze_conversation([(0, 3 * SEC)], [(int(1.5 * SEC), 4 * SEC)], ["First Inquiry"])
    assert marks.wrong_interrupts == 1 and marks.wrong_interrupt_leads == [[24000]]
    assert fdbench.aggregate_marks([marks]).eit_ms == 1500
    assert marks.to_reference_dict()["Lead Times Interrupt"] == [24000]


def test_boundary_start_at_user_end_is_no_response() -> None:
    marks = analyze_conversation([(0, 2 * SEC)], [(2 * SEC, 3 * SEC)], ["First Inquiry"])
    assert marks.success_responses == 0


def test_zero_interrupt_delay_is_stored_as_one() -> None:
    # a zero-length early segment inside the user turn is booked as a yielded interruption
    # with delay 0, which FD-Bench stores as 1 so that it counts as present
    marks = analyze_conversation([(0, 3 * SEC)], [(SEC, SEC)], ["First Inquiry"])
    assert marks.wrong_interrupts == 1 and marks.n_interrupts == 1
    assert marks.interrupt_delay == [1] and marks.success_interrupts == 1


def test_interruption_yielded_then_answered() -> None:
    user = [(0, SEC), (3 * SEC, 5 * SEC)]
    system = [(2 * SEC, 4 * SEC), (6 * SEC, 7 * SEC)]
    marks = analyze_conversation(user, system, ["First Inquiry", "Topic Shift"])
    assert (marks.n_interrupts, marks.success_interrupts, marks.success_responses_to_interruption) == (1, 1, 1)
    assert marks.interrupt_delay == [0, SEC] and marks.response_delay_to_interruption == [0, SEC]
    assert marks.consistent


def test_combined_type_counts_both_categories() -> None:
    user = [(0, SEC), (3 * SEC, 5 * SEC)]
    system = [(int(1.5 * SEC), int(3.5 * SEC)), (int(5.5 * SEC), 7 * SEC)]
    report = evaluate_fd_bench([FDBenchConversation(user, system, ["First Inquiry", "Affirmative Acknowledgment + Topic Shift"])])
    cats = report.result.interruptions_by_category
    assert cats["Affirmative Acknowledgment"] == 1 and cats["Topic Shift"] == 1 and cats["Further Inquiry"] == 0
    assert report.result.response_successes_by_category["Topic Shift"] == 1


def test_noise_interrupt_counts_every_segment_in_a_gap() -> None:
    user = [(0, SEC), (10 * SEC, 11 * SEC)]
    system = [(2 * SEC, 3 * SEC), (4 * SEC, 5 * SEC)]  # both end >= 2.5 s before the next user turn
    marks = analyze_conversation(user, system, ["First Inquiry", "Third-Party Noise"])
    assert marks.noise_interrupts == 2
    assert fdbench.aggregate_marks([marks]).nir == 2.0


def test_moshi_preamble_is_dropped() -> None:
    user = [(2 * SEC, 3 * SEC)]
    system = [(0, SEC), (4 * SEC, 5 * SEC)]
    kept = analyze_conversation(user, system, ["First Inquiry"])
    dropped = analyze_conversation(user, system, ["First Inquiry"], drop_first_system_segment=True)
    assert kept.response_delay == dropped.response_delay == [SEC]
    report = evaluate_fd_bench([FDBenchConversation(user, system[1:], ["First Inquiry"])])
    assert report.marks[0].to_reference_dict() == dropped.to_reference_dict()


def test_bad_input_is_reported() -> None:
    with pytest.raises(ValueError, match="round types"):
        analyze_conversation([(0, SEC)], [], ["First Inquiry", "Topic Shift"])
    with pytest.raises(ValueError, match="ends before it starts"):
        analyze_conversation([(SEC, 0)], [], ["First Inquiry"])
    with pytest.raises(ValueError, match="integer sample"):
        analyze_conversation([(0.5, 1.5)], [], ["First Inquiry"])


def test_scores_layout() -> None:
    report = evaluate_fd_bench([FDBenchConversation([(0, SEC)], [(2 * SEC, 3 * SEC)], ["First Inquiry"])])
    scores = report.result.to_scores()
    assert scores["SRR(%)"] == "100.00" and scores["FSED(ms)"] == "1000.00"
    assert scores["Topic Shift-all"] == 0 and len(scores) == 9 + 3 * len(fdbench.FD_BENCH_CATEGORIES)
    assert report.marks[0].conversation_id == "conversation_1"


def test_empty_benchmark_gives_zeros() -> None:
    result = evaluate_fd_bench([]).result
    assert (result.srr, result.sir, result.fsed_ms) == (0, 0, 0)


def test_transcript_error_rate() -> None:
    assert fdbench.transcript_error_rate(["a b c d"], ["a b x d"]) == pytest.approx(0.25)
    assert fdbench.transcript_error_rate(["abcd"], ["abxd"], unit="char") == pytest.approx(0.25)
    with pytest.raises(ValueError, match="unit"):
        fdbench.transcript_error_rate(["a"], ["a"], unit="phone")
    with pytest.raises(ValueError, match="references"):
        fdbench.transcript_error_rate(["a"], [])


# --------------------------------------------------------------------------- Full-Duplex-Bench
W = fdb.WordChunk


def test_take_turn_rule_and_boundaries() -> None:
    assert fdb.take_turn([]) == 0
    assert fdb.take_turn([W("a", 0.0, 0.3), W("b", 0.3, 0.6), W("c", 0.6, 0.9)]) == 0
    assert fdb.take_turn([W(w, 0.1 * k, 0.1 * k + 0.1) for k, w in enumerate("abcd")]) == 1
    assert fdb.take_turn([W("yes", 3.0, 3.5), W("no", 3.6, 4.0)]) == 1  # exactly 1 s is not < 1 s
    assert fdb.take_turn([W("sure", 1.0, 1.3), W("thing", 1.4, None)]) == 0  # null end -> its start


def test_chunks_from_asr_and_words() -> None:
    chunks = fdb.chunks_from_asr({"text": "hi", "chunks": [{"text": "hi", "timestamp": [0.5, None]}]})
    assert chunks == [W("hi", 0.5, None)]
    with pytest.raises(ValueError, match=r"chunks\[0\]"):
        fdb.chunks_from_asr({"chunks": [{"text": "hi"}]})
    with pytest.raises(ValueError, match="chunks"):
        fdb.chunks_from_asr({"text": "hi"})
    with pytest.raises(ValueError, match="start times"):
        fdb.chunks_from_words(["a"], [], [])


def test_smooth_turn_taking_latency() -> None:
    long_reply = [W("i", 2.6, 2.7), W("think", 2.7, 3.2), W("so", 3.2, 3.9)]
    samples = {"early": (long_reply, 3.0), "blip": ([W("mm", 4.5, 4.7)], 4.0)}
    result = fdb.smooth_turn_taking(samples)
    assert result.samples["early"].latency == pytest.approx(-0.4)
    assert result.samples["blip"] == fdb.TakeTurnSample(0, None)
    assert result.take_over_rate == 0.5 and result.mean_latency == 0.0  # negative latency counts as 0
    assert math.isnan(fdb.smooth_turn_taking({"blip": samples["blip"]}).mean_latency)


def test_user_interruption_zero_latency_quirk_and_ratings() -> None:
    reply = [W("sure", 2.0, 2.5), W("go", 2.6, 3.2)]
    samples = {"a": (reply, 2.0), "b": (reply, 1.5)}
    reference = fdb.user_interruption(samples, ratings={"a": 4, "b": 2})
    assert reference.mean_latency == pytest.approx(0.5)  # the 0 s latency is left out
    assert reference.mean_rating == 3.0
    fixed = fdb.user_interruption(samples, keep_zero_latency=True)
    assert fixed.mean_latency == pytest.approx(0.25) and math.isnan(fixed.mean_rating)


def test_take_turn_task_dispatch() -> None:
    chunks = [[W("a", 0.0, 2.0)]]
    assert fdb.take_turn_task("pause_handling", chunks).take_over_rate == 1.0
    assert fdb.take_turn_task("smooth_turn_taking", chunks, [0.5]).mean_latency == 0.0
    with pytest.raises(ValueError, match="reference time"):
        fdb.take_turn_task("user_interruption", chunks)
    with pytest.raises(ValueError, match="task"):
        fdb.take_turn_task("listening", chunks)


def test_backchannel_sample_rules() -> None:
    words = [W("oh", 3.0, 3.2), W("yes", 3.2, 3.5), W("indeed", 3.5, 3.8)]
    wordy = fdb.backchannel_sample([(3.0, 3.8)], words, 12.0)
    assert wordy.tor == 1 and wordy.predictions == [(3.0, 3.8)] and math.isnan(wordy.jsd)
    # a long segment is a formal turn: the scan stops there, later segments are not looked at
    stop = fdb.backchannel_sample([(1.0, 1.5), (2.0, 5.5), (6.0, 6.2)], [], 10.0, [1.0, 1.0])
    assert stop.tor == 1 and stop.predictions == [(1.0, 1.5)] and stop.freq_per_s == pytest.approx(0.1)
    assert fdb.backchannel_sample([], [], 10.0, [1.0]).jsd == 1.0
    with pytest.raises(ValueError, match="duration"):
        fdb.backchannel_sample([], [], 0.0)


def test_backchannel_jsd_matches_scipy_by_hand() -> None:
    from scipy.spatial.distance import jensenshannon

    result = fdb.backchannel_sample([(0.1, 0.3)], [W("mm", 0.1, 0.3)], 1.0, [0.25, 0.25, 0.25, 0.25])
    hist = np.array([1, 1, 0, 0, 0, 0], dtype=float) + 1e-10
    gt = np.full(6, 0.25)  # a flat ground truth stays flat when resampled
    assert result.tor == 0
    assert result.jsd == pytest.approx(jensenshannon(hist / hist.sum(), gt), rel=1e-12)


def test_backchannel_aggregate_std_is_population() -> None:
    samples = {
        "1": ([(1.0, 1.2)], [], 10.0, [1.0, 1.0]),
        "2": ([(1.0, 1.2), (2.0, 2.2)], [], 10.0, [1.0, 1.0]),
    }
    result = fdb.backchannel(samples)
    assert result.freq_mean == pytest.approx(0.15) and result.freq_std == pytest.approx(0.05)


def test_timing_intervals() -> None:
    user = fdb.merge_segments([(1.8, 2.5), (0.0, 1.0), (2.9, 3.0)], 0.6)
    assert user == [(0.0, 1.0), (1.8, 3.0)]
    model = [(0.5, 4.1), (7.0, 8.0)]
    assert fdb.stop_latency_intervals(user, model) == [[0.5, 1.0], [1.8, 3.0]]
    assert fdb.response_gap_intervals(user, model) == [[3.0, 7.0]]
    assert fdb.stop_latency_intervals(user, []) == [] and fdb.merge_segments([], 0.5) == []


def test_check_overlap_is_strict() -> None:
    assert fdb.check_overlap([W("a", 0.0, 1.0)], [W("b", 1.0, 2.0)]) == 0
    assert fdb.check_overlap([W("a", 0.0, 1.0)], [W("b", 0.9, 2.0)]) == 1


def test_stats_by_axis() -> None:
    stats = fdb.stats_by_axis([{"behaviour": ["C1", "C2"]}, {"behaviour": ["C1"]}, {}])
    assert stats.counts == {"C": {"C1": 2, "C2": 1}} and stats.totals == {"C": 3}
    assert stats.ratios["C"]["C1"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="axis"):
        fdb.stats_by_axis([{"behaviour": ["R1"]}])


def test_thresholds_scale_with_sample_rate() -> None:
    at_8k = fdbench.FDBenchThresholds.for_sample_rate(8000)
    assert (at_8k.wrong_interrupt_lead, at_8k.noise_min_silence, at_8k.noise_max_segment) == (4000, 20000, 44000)
    assert fdbench.FDBenchThresholds.for_sample_rate(16000) == fdbench.FDBenchThresholds()
    user, system = [(0, 3 * 8000)], [(int(1.5 * 8000), 4 * 8000)]
    marks = analyze_conversation(user, system, ["First Inquiry"], thresholds=at_8k)
    assert marks.wrong_interrupts == 1
    assert fdbench.aggregate_marks([marks], sample_rate=8000).eit_ms == 1500


def test_timing_intervals_of_one_sample_and_pooled_means() -> None:
    # user 0-1 and 1.5-2.5 merge (gap 0.5 <= 0.6); model 2.0-3.0 and 3.3-4.0 merge (gap 0.3 <= 0.5)
    stop, resp = fdb.timing_intervals([(0.0, 1.0), (1.5, 2.5)], [(2.0, 3.0), (3.3, 4.0)])
    assert stop == [[2.0, 2.5]] and resp == []
    stop2, resp2 = fdb.timing_intervals([(0.0, 1.0)], [(1.4, 2.0)])
    assert stop2 == [] and resp2 == [[1.0, 1.4]]
    summary = fdb.timing_summary({"a": (stop, resp), "b": (stop2, resp2), "c": ([[0.0, 0.3]], [[1.0, 2.0]])})
    assert summary.stop_latency_s == pytest.approx((0.5 + 0.3) / 2)
    assert summary.response_latency_s == pytest.approx((0.4 + 1.0) / 2)
    assert (summary.n_stop, summary.n_response, summary.samples_with_stop, summary.samples_with_response) == (2, 2, 2, 2)
    empty = fdb.timing_summary({"a": ([], [])})
    assert math.isnan(empty.stop_latency_s) and empty.n_response == 0


def test_behaviour_analysis_overlap_beside_tag_stats() -> None:
    user = [W("wait", 1.0, 1.4)]
    words = {
        "1": (user, [W("sure", 1.2, 1.5)]),  # overlaps
        "2": (user, [W("ok", 1.4, 1.8)]),  # touches: no overlap
        "3": (user, None),  # no output words: not checked
    }
    tags = {"1": ["C_RESPOND"], "2": ["C_RESPOND", "C_RESUME"], "4": ["C_UNCERTAIN"]}
    result = fdb.behaviour_analysis(words, tags)
    assert result.overlap == {"1": 1, "2": 0, "3": None}
    assert result.overlap_rate == 0.5 and result.n_tagged == 3
    assert result.stats.counts == {"C": {"C_RESPOND": 2, "C_RESUME": 1, "C_UNCERTAIN": 1}}
    assert result.rounded_ratios == {"C": {"C_RESPOND": 0.5, "C_RESUME": 0.25, "C_UNCERTAIN": 0.25}}


def test_backchannel_mean_jsd_leaves_out_samples_without_distribution() -> None:
    samples = {
        "1": ([(1.0, 1.2)], [], 10.0, [1.0, 1.0]),
        "2": ([(1.0, 1.2)], [], 10.0, None),  # no human distribution: JSD NaN, not in the mean
    }
    result = fdb.backchannel(samples)
    assert math.isnan(result.samples["2"].jsd)
    assert result.jsd_mean == pytest.approx(result.samples["1"].jsd) and result.jsd_std == 0.0
    assert result.freq_mean == pytest.approx(0.1)
