"""golden/fdb: Full-Duplex-Bench v1 / v1.5 evaluation rules.

Each case names its reference script in ``source.path``; the runner sends the case to the
matching function of ``turneval.metrics.full_duplex_bench_tasks`` and lays the result out as the
script's harness recorded it. Where the reference divides by zero (no sample took the
turn), the harness recorded the exception and no averages; our functions return NaN there,
which the runner turns back into that record.
"""
from __future__ import annotations

import math

from turneval.metrics import full_duplex_bench_tasks as fdb


SET = "fdb"

ZERO_DIVISION = "ZeroDivisionError: division by zero"


def _pause_handling(inp: dict, params: dict) -> dict:
    samples = {key: fdb.chunks_from_asr(asr) for key, asr in inp["samples_output_json"].items()}
    result = fdb.pause_handling(samples)
    per_sample = {}
    for key in samples:
        alone = fdb.pause_handling({key: samples[key]})
        per_sample[key] = {"TOR": alone.take_over_rate, "error": None}
    return {"per_sample": per_sample, "average_take_turn": result.take_over_rate, "error": None}


def _smooth_turn_taking(inp: dict, params: dict) -> dict:
    samples = {
        key: (fdb.chunks_from_asr(s["output_json"]), s["turn_taking_json"][0]["timestamp"][0])
        for key, s in inp["samples"].items()
    }
    result = fdb.smooth_turn_taking(samples)
    out = {
        "per_sample": {key: {"TOR": s.tor, "latency": s.latency} for key, s in result.samples.items()},
        "error": None,
        "average_take_turn": result.take_over_rate,
        "average_latency": result.mean_latency,
    }
    if math.isnan(result.mean_latency):
        out.update(error=ZERO_DIVISION, average_take_turn=None, average_latency=None)
    return out


def _user_interruption(inp: dict, params: dict) -> dict:
    rating = params.get("fake_gpt_rating", 4)
    samples = {
        key: (fdb.chunks_from_asr(s["output_json"]), s["interrupt_json"][0]["timestamp"][1])
        for key, s in inp["samples"].items()
    }

    def record(subset: dict) -> dict:
        result = fdb.user_interruption(subset, ratings=dict.fromkeys(subset, rating))
        values = (result.mean_rating, result.take_over_rate, result.mean_latency)
        if any(math.isnan(v) for v in values):
            return {"rating": None, "TOR": None, "latency": None, "error": ZERO_DIVISION}
        return {"rating": result.mean_rating, "TOR": result.take_over_rate, "latency": result.mean_latency, "error": None}

    per_sample = {}
    for key in samples:
        alone = record({key: samples[key]})
        per_sample[key] = {"TOR": alone["TOR"], "latency": alone["latency"], "error": alone["error"]}
    overall = record(samples)
    return {
        "per_sample_run_alone": per_sample,
        "average_take_turn": overall["TOR"],
        "average_latency": overall["latency"],
        "average_rating": overall["rating"],
        "error": overall["error"],
    }


def _backchannel(inp: dict, params: dict) -> dict:
    samples = {
        key: (
            [tuple(seg) for seg in s["silero_segments_seconds"]],
            fdb.chunks_from_asr(s["output_json"]),
            s["output_wav_duration_s"],
            s.get("gt_distribution"),
        )
        for key, s in inp["samples"].items()
    }
    result = fdb.backchannel(samples)
    return {
        "per_sample": {
            key: {
                "JSD": s.jsd,
                "TOR": s.tor,
                "freq_per_s": s.freq_per_s,
                "backchannel_prediction": [list(p) for p in s.predictions],
            }
            for key, s in result.samples.items()
        },
        "JSD_mean": result.jsd_mean,
        "JSD_std": result.jsd_std,
        "TOR_mean": result.tor_mean,
        "TOR_std": result.tor_std,
        "freq_mean": result.freq_mean,
        "freq_std": result.freq_std,
        "error": None,
    }


def _timing(inp: dict, params: dict) -> dict:
    user = fdb.merge_segments(inp["user_segments_s"], params.get("USER_MERGE_GAP", fdb.USER_MERGE_GAP_S))
    model = fdb.merge_segments(inp["model_segments_s"], params.get("MODEL_MERGE_GAP", fdb.MODEL_MERGE_GAP_S))
    return {
        "user_merged": [list(seg) for seg in user],
        "model_merged": [list(seg) for seg in model],
        "latency_stop_list": fdb.stop_latency_intervals(user, model),
        "latency_resp_list": fdb.response_gap_intervals(user, model),
    }


def _chunk_lists(container: dict) -> list[list[fdb.WordChunk]]:
    """Every value that is an ASR JSON or a list of timestamped chunks, in order."""
    found = []
    for value in container.values():
        if isinstance(value, dict) and isinstance(value.get("chunks"), list):
            found.append(fdb.chunks_from_asr(value))
        elif isinstance(value, list) and value and all(isinstance(v, dict) and "timestamp" in v for v in value):
            found.append(fdb.chunks_from_asr({"chunks": value}))
    return found


def _tags(sample: dict) -> list | None:
    """A sample's behaviour tags: a ``behaviour`` list, directly or inside its content tag record."""
    for value in (sample, *(v for v in sample.values() if isinstance(v, dict))):
        tags = value.get("behaviour", value.get("behavior"))
        if isinstance(tags, list):
            return tags
    return None


def _behavior(inp: dict, params: dict) -> dict:
    """check_overlap and stats_by_axis; the inputs are located by their shape."""
    out: dict = {}
    chunk_lists = _chunk_lists(inp)
    if len(chunk_lists) >= 2:
        overlap = fdb.check_overlap(chunk_lists[0], chunk_lists[1])
        out.update(overlap=overlap, check_overlap=overlap)
    for value in inp.values():
        # a list of cases, each holding two chunk lists
        if isinstance(value, list) and value and all(isinstance(v, dict) and len(_chunk_lists(v)) >= 2 for v in value):
            overlaps = [fdb.check_overlap(*_chunk_lists(v)[:2]) for v in value]
            out.update(overlaps=overlaps, check_overlap=overlaps, overlap=overlaps)
    samples = inp.get("samples")
    if isinstance(samples, dict) and samples and all(isinstance(v, dict) and len(_chunk_lists(v)) >= 2 for v in samples.values()):
        # per-sample inputs: the overlap check of each sample beside the tag statistics
        words = {key: tuple(_chunk_lists(v)[:2]) for key, v in samples.items()}
        tags = {key: _tags(v) for key, v in samples.items() if _tags(v) is not None}
        result = fdb.behaviour_analysis(words, tags)
        out["per_sample"] = {key: {"overlap": o, "check_overlap": o} for key, o in result.overlap.items()}
        out.update(overlaps=result.overlap, check_overlap=result.overlap, overlap=result.overlap)
        if tags:
            layout = {
                "counts": result.stats.counts,
                "axes": result.stats.counts,
                "totals": result.stats.totals,
                "ratios": result.stats.ratios,
                "fmt_ratios": result.rounded_ratios,
            }
            out.update(layout, stats_by_axis=layout)
    records = next(
        (v for v in inp.values() if isinstance(v, list) and v and all(isinstance(r, dict) and "behaviour" in r for r in v)),
        None,
    )
    if records is not None:
        stats = fdb.stats_by_axis(records)
        layout = {
            "counts": stats.counts,
            "axes": stats.counts,
            "totals": stats.totals,
            "ratios": stats.ratios,
            "fmt_ratios": {ax: {k: round(v, 2) for k, v in sorted(r.items())} for ax, r in stats.ratios.items()},
        }
        out.update(layout, stats_by_axis=layout)
    return out


_BY_SCRIPT = {
    "eval_pause_handling.py": _pause_handling,
    "eval_smooth_turn_taking.py": _smooth_turn_taking,
    "eval_user_interruption.py": _user_interruption,
    "eval_backchannel.py": _backchannel,
    "get_timing.py": _timing,
    "eval_behavior.py": _behavior,
}


def run_case(case: dict) -> dict:
    script = case["source"]["path"].rsplit("/", 1)[-1]
    return _BY_SCRIPT[script](case["input"], case.get("params", {}))
