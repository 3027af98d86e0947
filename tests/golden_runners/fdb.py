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


# v1.5 behaviour (eval_behavior.py) returns two things: check_overlap(list_a, list_b), 1 when
# any word of one chunk list overlaps any word of the other, which the script runs on each
# sample's input.json and output.json; and stats_by_axis(records) -> (counts, totals, ratios)
# of the judge's tags, printed as ratios rounded to 2 decimals (fmt_ratios). A case may hold
# its word-chunk pairs in several shapes and at any depth (a two-item list [chunks_a,
# chunks_b]; a record naming two chunk lists beside its name or tags; a sample with four ASR
# files), so the runner finds every pair by shape, computes check_overlap of each, and lays
# the results out as the input holds the pairs (a list stays a list, named pairs keep their
# names), beside the tag statistics of every record that carries tags.

TAG_KEY = "behaviour"
"""The key of a record's tags; the reference reads only this spelling (``rec.get("behaviour", [])``)."""
AXES = ("C",)
"""The axes of the reference's stats_by_axis: only the content axis; a tag of another raises KeyError."""
PROSE_INPUT_KEYS = frozenset({"description", "note"})


class _Outputs(dict):
    """Results by name; a golden output named by its call (``check_overlap(list_a, list_b)``,
    the way the TurnNat cases name theirs) finds the result of that function."""

    def _bare(self, key: object) -> object:
        return key.split("(", 1)[0].strip() if isinstance(key, str) else key

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or dict.__contains__(self, self._bare(key))

    def __missing__(self, key: object) -> object:
        bare = self._bare(key)
        if bare != key and dict.__contains__(self, bare):
            return self[bare]
        raise KeyError(key)


def _as_chunks(value: object) -> list[fdb.WordChunk] | None:
    """An ASR JSON (``{"chunks": [...]}``) or a bare list of timestamped chunks, else None."""
    if isinstance(value, dict) and isinstance(value.get("chunks"), list):
        value = value["chunks"]
    if isinstance(value, list) and all(isinstance(v, dict) and "timestamp" in v for v in value):
        return fdb.chunks_from_asr({"chunks": value})
    return None


def _as_pair(value: object) -> tuple[list[fdb.WordChunk], list[fdb.WordChunk]] | None:
    """The two chunk lists of a word-chunk pair, or None when ``value`` is not one."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        a, b = (_as_chunks(v) for v in value)
        return (a, b) if a is not None and b is not None else None
    if isinstance(value, dict) and "chunks" not in value:
        # an empty list under a record or tag key is no word list
        named = {
            k: c for k, v in value.items()
            if not (k == TAG_KEY or "record" in k or "tag" in k) and (c := _as_chunks(v)) is not None
        }
        if len(named) > 2:  # a sample's four ASR files: the reference checks the noisy input.json against output.json
            named = {k: c for k, c in named.items() if "clean" not in k}
        if len(named) == 2:
            a, b = named.values()
            return a, b
    return None


def _overlaps(value: object, records: bool = False) -> object:
    """check_overlap of every pair in ``value``, laid out as ``value`` holds them; None if none.

    With ``records``, a pair given as a record stays a record: its names and flags beside
    its result (``check_overlap`` / ``overlap``), as a case that mirrors its input would lay it out.
    """
    pair = _as_pair(value)
    if pair is not None:
        result = fdb.check_overlap(*pair)
        if records and isinstance(value, dict):
            names = {k: v for k, v in value.items() if isinstance(v, (str, int, float, bool)) and k not in PROSE_INPUT_KEYS}
            return {**names, "check_overlap": result, "overlap": result}
        return result
    if isinstance(value, list):
        found = [_overlaps(v, records) for v in value]
        return found if found and all(r is not None for r in found) else None
    if isinstance(value, dict):
        named = {k: r for k, v in value.items() if (r := _overlaps(v, records)) is not None}
        return named or None
    return None


def _tag_records(value: object) -> list[dict]:
    """Every record that carries tags, in input order (a sample's tags may sit in its content-tag record)."""
    if isinstance(value, dict):
        own = [value] if TAG_KEY in value else []
        return own + [r for v in value.values() for r in _tag_records(v)]
    if isinstance(value, list):
        return [r for v in value for r in _tag_records(v)]
    return []


def _tag_statistics(records: list[dict]) -> dict:
    """stats_by_axis of the records in every layout the reference's names give it, or its KeyError."""
    unknown = next((t for r in records for t in r[TAG_KEY] if t[:1] not in AXES), None)
    if unknown is not None:
        return {"error": f"KeyError: {unknown[:1]!r}"}
    stats = fdb.stats_by_axis(records, AXES)
    layout = {
        "counts": stats.counts,
        "axes": stats.counts,
        "totals": stats.totals,
        "ratios": stats.ratios,
        "fmt_ratios": {ax: {k: round(v, 2) for k, v in sorted(r.items())} for ax, r in stats.ratios.items()},
    }
    return {**layout, "stats_by_axis": layout}


def _behavior(inp: dict, params: dict) -> dict:
    out = _Outputs(_tag_statistics(_tag_records(inp)))
    overlaps = _overlaps({k: v for k, v in inp.items() if k not in PROSE_INPUT_KEYS})
    if overlaps is None:
        return out
    if not isinstance(overlaps, dict):  # one pair
        out.update(check_overlap=overlaps, overlap=overlaps, overlaps=overlaps)
        return out
    # each input key that held pairs names their results, laid out as it held them
    out.update(_overlaps({k: inp[k] for k in overlaps}, records=True))
    first = next(iter(overlaps.values()))
    out.update(check_overlap=first, overlap=first, overlaps=first, check_overlap_results=first, overlap_results=first)
    samples = inp.get("samples")
    if isinstance(samples, dict) and isinstance(overlaps.get("samples"), dict):
        # per-sample inputs go through the library's scenario analysis, as a run folder does
        words = {key: _as_pair(v) for key, v in samples.items() if _as_pair(v) is not None}
        tags = {key: r[0][TAG_KEY] for key, v in samples.items() if (r := _tag_records(v))}
        result = fdb.behaviour_analysis(words, tags if out.get("error") is None else {}, AXES)
        out["per_sample"] = {key: {"overlap": o, "check_overlap": o} for key, o in result.overlap.items()}
        out.update(check_overlap=result.overlap, overlap=result.overlap, overlaps=result.overlap)
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
