"""golden/fdbench: FD-Bench SRR/SIR/SRIR/EIR/NIR and FSED/ERT/EIT/IRD from VAD segments."""
from __future__ import annotations

from turneval.metrics.fd_bench_rounds import (
    FDBenchConversation,
    FDBenchThresholds,
    evaluate_fd_bench,
    round_types_from_rounds,
)


SET = "fdbench"


def _segments(timestamps):
    return [(t["start"], t["end"]) for t in timestamps]


def run_case(case: dict) -> dict:
    params = case["params"]
    limits = params.get("thresholds_samples", {})
    thresholds = FDBenchThresholds(
        wrong_interrupt_lead=limits.get("ai_start_before_user_end_for_wrong_interrupt", 8000),
        noise_min_silence=limits.get("noise_min_silence_before_next_user", 40000),
        noise_max_segment=limits.get("noise_max_ai_segment", 88000),
        sample_rate=params.get("sample_rate", 16000),
    )
    conversations = [
        FDBenchConversation(
            user_segments=_segments(conv["user_timestamps"]),
            system_segments=_segments(conv["ai_timestamps"]),
            round_types=round_types_from_rounds(conv["ground_truth_rounds"]),
            conversation_id=conv["conversation_id"],
        )
        for conv in case["input"]["conversations"]
    ]
    report = evaluate_fd_bench(
        conversations, drop_first_system_segment=params.get("model_name") == "Moshi", thresholds=thresholds
    )
    result = report.result
    return {
        "metrics_scores": result.to_scores(),
        "metrics_raw": {
            "Success Respond Rate": result.srr,
            "Success Respond Rate to Interruption": result.srir,
            "Wrong Interrupt Rate": result.eir,
            "Success Interrupt Rate": result.sir,
            "Noise Interrupt Rate": result.nir,
            "Response Delays": result.fsed_ms,
            "Response Delays to Interruption": result.response_delay_to_interruption_ms,
            "Lead Times": result.ert_ms,
            "Wrong Lead Times Interrupt": result.eit_ms,
            "Lead Times to Interruption": result.lead_time_to_interruption_ms,
            "Interruption Delays": result.ird_ms,
        },
        "interruption_cats": dict(result.interruptions_by_category),
        "interruption_success_cats": dict(result.interrupt_successes_by_category),
        "interruption_res_suc_cats": dict(result.response_successes_by_category),
        "VAD_marks": {m.conversation_id: m.to_reference_dict() for m in report.marks},
        "strict_assertion_failures_printed_for": report.inconsistent_conversations,
    }
