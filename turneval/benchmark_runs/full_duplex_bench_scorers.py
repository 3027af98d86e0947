"""The scorers of a Full-Duplex-Bench run's task folders, one per kind of task.

Each reads a task folder's samples (files from :mod:`turneval.benchmark_runs.full_duplex_bench_sources`),
applies the benchmark's rules (:mod:`turneval.metrics.full_duplex_bench_tasks`) and returns a
:class:`FullDuplexBenchTaskResult`: the paper's figures for the folder, per-sample detail, the skipped
samples and notes on what could not be computed and why.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turneval.dataset_scripts.readers.full_duplex_bench import (
    GT_DISTRIBUTION_FILE,
    BenchmarkLayoutError,
    FullDuplexBenchTask,
    read_behaviour_tags,
    read_gt_distributions,
    read_interrupt_end,
    read_latency_intervals,
    read_rating,
    read_turn_end,
)
from turneval.metrics import full_duplex_bench_tasks as rules

from ._common import progress
from .full_duplex_bench_sources import VadFunction, WordSource, first_word_start, usable_samples


@dataclass
class FullDuplexBenchTaskResult:
    """The figures of one task folder: ``summary`` (the paper's columns) and per-sample detail."""

    name: str
    kind: str
    version: str
    folder: str
    n_samples: int
    summary: dict[str, Any]
    samples: dict[str, dict[str, Any]]
    skipped: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "version": self.version,
            "folder": self.folder,
            "n_samples": self.n_samples,
            "summary": self.summary,
            "samples": self.samples,
            "skipped": self.skipped,
            "notes": self.notes,
        }


def score_pause_handling(task: FullDuplexBenchTask, skip_missing: bool, show: bool, source: WordSource) -> FullDuplexBenchTaskResult:
    """Pause handling: the take-over rate of the system's words over the user's pauses (lower is better)."""
    samples, skipped = usable_samples(task, ["output.json"], skip_missing, source)
    words, origin = {}, {}
    for sample in progress(samples, len(samples), task.name, show):
        words[sample.sample_id], origin[sample.sample_id] = source.read(sample, "output.json")
    result = rules.pause_handling(words)
    detail = {
        key: {"tor": outcome.tor, "n_words": len(words[key]), "first_word_start_s": first_word_start(words[key]),
              "words_source": origin[key]}
        for key, outcome in result.samples.items()
    }
    return FullDuplexBenchTaskResult(task.name, task.kind, task.version, str(task.folder), len(samples), {"tor": result.take_over_rate}, detail, skipped)


def score_take_turn(task: FullDuplexBenchTask, skip_missing: bool, show: bool, source: WordSource) -> FullDuplexBenchTaskResult:
    """Smooth turn-taking or user interruption: take-over rate and latency from the user's turn end
    (or the interruption's end), and the judge's rating where the benchmark's rating.json exists."""
    interruption = task.kind == "user_interruption"
    metadata = "interrupt.json" if interruption else "turn_taking.json"
    samples, skipped = usable_samples(task, ["output.json", metadata], skip_missing, source)
    inputs, ratings, origin = {}, {}, {}
    for sample in progress(samples, len(samples), task.name, show):
        reference = read_interrupt_end(sample.path(metadata)) if interruption else read_turn_end(sample.path(metadata))
        # the benchmark transcribes a user-interruption output from the interruption's end on
        words, origin[sample.sample_id] = source.read(sample, "output.json", reference if interruption else 0.0)
        inputs[sample.sample_id] = (words, reference)
        if interruption and sample.has("rating.json"):
            ratings[sample.sample_id] = read_rating(sample.path("rating.json"))
    notes = []
    if interruption:
        result = rules.user_interruption(inputs, ratings=ratings)
        if not ratings:
            notes.append(
                "rating: n/a; the GPT-4o relevance rating comes from the benchmark's judge (rating.json per sample, "
                "written by eval_user_interruption.py); turneval calls no judge"
            )
    else:
        result = rules.smooth_turn_taking(inputs)
    if samples and math.isnan(result.mean_latency):
        notes.append("latency: n/a; no sample took the turn (the reference divides by zero here)")
    detail = {}
    for key, outcome in result.samples.items():
        words, reference = inputs[key]
        row = {
            "tor": outcome.tor,
            "latency_s": outcome.latency,
            "n_words": len(words),
            "first_word_start_s": first_word_start(words),
            ("interrupt_end_s" if interruption else "turn_end_s"): reference,
            "words_source": origin[key],
        }
        if interruption:
            row["rating"] = ratings.get(key)
        detail[key] = row
    summary: dict[str, Any] = {"tor": result.take_over_rate, "latency_s": result.mean_latency}
    if interruption:
        summary.update(rating=result.mean_rating, n_rated=sum(1 for k, s in result.samples.items() if s.tor == 1 and k in ratings))
    return FullDuplexBenchTaskResult(task.name, task.kind, task.version, str(task.folder), len(samples), summary, detail, skipped, notes)


def _find_gt_distribution(task: FullDuplexBenchTask, explicit: str | Path | None) -> Path | None:
    if explicit is not None:
        return Path(explicit)
    for folder in (task.folder, *list(task.folder.parents)[:2]):
        for candidate in (folder / GT_DISTRIBUTION_FILE, folder / "evaluation" / GT_DISTRIBUTION_FILE):
            if candidate.is_file():
                return candidate
    return None


def score_backchannel(
    task: FullDuplexBenchTask, skip_missing: bool, show: bool, vad: VadFunction, gt_path: str | Path | None, source: WordSource
) -> FullDuplexBenchTaskResult:
    """Backchannel: take-over rate, backchannels per second and the JS distance of their timing to the
    human distribution (the benchmark's icc_gt_distribution.json), from Silero VAD of output.wav and the words."""
    from turneval.dataset_scripts.audio import audio_duration

    # the reference scores only the numeric sample folders of the task (``spk.isdigit()``)
    ignored = [{"sample": s.sample_id, "reason": "not a numeric sample folder (the benchmark scores only those)"}
               for s in task.samples if not s.sample_id.isdigit()]
    task = FullDuplexBenchTask(task.name, task.kind, task.folder, [s for s in task.samples if s.sample_id.isdigit()])
    samples, skipped = usable_samples(task, ["output.wav", "output.json"], skip_missing, source)
    skipped = ignored + skipped
    gt_file = _find_gt_distribution(task, gt_path)
    distributions = read_gt_distributions(gt_file) if gt_file is not None else {}
    notes = []
    if gt_file is None:
        notes.append(
            f"JSD: n/a; it needs the benchmark's human timing distributions ({GT_DISTRIBUTION_FILE}, in its "
            "v1_v1.5/evaluation/ folder): put it in the run folder or give --gt-distribution"
        )
    inputs, extra = {}, {}
    for sample in progress(samples, len(samples), task.name, show):
        # the reference asks Silero for seconds, which it rounds to 0.1 s (time_resolution=1)
        segments = [(round(s, 1), round(e, 1)) for s, e in vad(sample.path("output.wav"))]
        duration = audio_duration(sample.path("output.wav"))
        gt = distributions.get(sample.sample_id)
        words, origin = source.read(sample, "output.json")
        inputs[sample.sample_id] = (segments, words, duration, gt)
        extra[sample.sample_id] = {"duration_s": duration, "vad_segments": [list(s) for s in segments],
                                   "has_gt": gt is not None, "words_source": origin}
    missing_gt = [k for k, v in extra.items() if not v["has_gt"]]
    if gt_file is not None and missing_gt:
        notes.append(f"JSD: {len(missing_gt)} sample(s) have no distribution in {gt_file} and are left out of the JSD mean")
    result = rules.backchannel(inputs)
    detail = {
        key: {
            "tor": s.tor,
            "freq_per_s": s.freq_per_s,
            "jsd": s.jsd if gt_file is not None else math.nan,
            "backchannel_predictions": [list(p) for p in s.predictions],
            **extra[key],
        }
        for key, s in result.samples.items()
    }
    summary = {
        "tor": result.tor_mean,
        "tor_std": result.tor_std,
        "freq_per_s": result.freq_mean,
        "freq_std": result.freq_std,
        # without the human distributions the JSD is not measured: n/a once (the note), not the reference's 1.0
        "jsd": result.jsd_mean if gt_file is not None else math.nan,
        "jsd_std": result.jsd_std if gt_file is not None else math.nan,
        "n_jsd": sum(1 for s in result.samples.values() if not math.isnan(s.jsd)),
        "gt_distribution_file": str(gt_file) if gt_file else None,
    }
    return FullDuplexBenchTaskResult(task.name, task.kind, task.version, str(task.folder), len(samples), summary, detail, skipped, notes)


# --------------------------------------------------------------------------- v1.5 overlap scenarios


def score_overlap(task: FullDuplexBenchTask, skip_missing: bool, show: bool, vad: VadFunction, source: WordSource) -> FullDuplexBenchTaskResult:
    """A v1.5 overlap scenario: each sample's word-overlap check, the judge's behaviour tags where they
    exist, and stop / response latency from latency_intervals.json or from VAD of both audio files."""
    # timing needs the benchmark's latency_intervals.json or both audio files; words and tags are optional
    samples, skipped = [], []
    for sample in task.samples:
        if sample.has("latency_intervals.json") or (sample.has("input.wav") and sample.has("output.wav")):
            samples.append(sample)
        else:
            skipped.append({"sample": sample.sample_id, "reason": "missing output.wav or input.wav (and no latency_intervals.json)"})
    if skipped and not skip_missing:
        example = task.folder / skipped[0]["sample"]
        raise BenchmarkLayoutError(
            f"{task.folder}: v1.5 timing needs input.wav and the system's output.wav (or the benchmark's "
            f"latency_intervals.json) in every sample folder; {len(skipped)} of {len(task.samples)} lack them "
            f"(e.g. {example}, which holds: {', '.join(sorted(p.name for p in example.iterdir()))}). "
            "Run the system on input.wav, or give --skip-missing"
        )
    words, tags, timing, detail = {}, {}, {}, {}
    sources = set()
    for sample in progress(samples, len(samples), task.name, show):
        key = sample.sample_id
        user = source.read(sample, "input.json")[0] if source.available(sample, "input.json") else None
        model = source.read(sample, "output.json")[0] if source.available(sample, "output.json") else None
        words[key] = (user, model)
        if sample.has("content_tag.json"):
            tags[key] = read_behaviour_tags(sample.path("content_tag.json"))
        if sample.has("latency_intervals.json"):
            timing[key] = read_latency_intervals(sample.path("latency_intervals.json"))
            timing_source = "latency_intervals.json"
        else:
            timing[key] = rules.timing_intervals(vad(sample.path("input.wav")), vad(sample.path("output.wav")))
            timing_source = "vad"
        sources.add(timing_source)
        detail[key] = {"timing_source": timing_source, "behaviour": tags.get(key),
                       "words_source": "+".join(sorted({n if sample.has(n) else "transcribed"
                                                        for n in ("input.json", "output.json") if source.available(sample, n)})) or None}
    behaviour = rules.behaviour_analysis(words, tags)
    summary_timing = rules.timing_summary(timing)
    for key in detail:
        detail[key].update(
            overlap=behaviour.overlap[key], latency_stop_list=timing[key][0], latency_resp_list=timing[key][1]
        )
    notes = []
    no_words = [k for k, (u, m) in words.items() if u is None or m is None]
    if no_words:
        notes.append(
            f"overlap check: n/a for {len(no_words)} sample(s) without input.json and output.json (the benchmark's ASR "
            f"word timestamps of input.wav and output.wav; e.g. {', '.join(no_words[:3])}); --transcribe makes them"
        )
    if not tags:
        notes.append(
            "behaviour: n/a; the behaviour tags come from the benchmark's GPT-4o judge (content_tag.json per sample, "
            "written by eval_behavior.py); turneval calls no judge"
        )
    elif len(tags) < len(samples):
        notes.append(f"behaviour: {len(samples) - len(tags)} sample(s) have no content_tag.json and are not counted")
    summary = {
        "scenario": task.name,
        "overlap_rate": behaviour.overlap_rate,
        "n_overlap_checked": sum(1 for v in behaviour.overlap.values() if v is not None),
        "n_tagged": behaviour.n_tagged,
        "behaviour_counts": behaviour.stats.counts,
        "behaviour_totals": behaviour.stats.totals,
        "behaviour_ratios": behaviour.stats.ratios,
        "behaviour_ratios_rounded": behaviour.rounded_ratios,
        "stop_latency_s": summary_timing.stop_latency_s,
        "response_latency_s": summary_timing.response_latency_s,
        "n_stop_intervals": summary_timing.n_stop,
        "n_response_intervals": summary_timing.n_response,
        "timing_source": "+".join(sorted(sources)) or None,
    }
    return FullDuplexBenchTaskResult(task.name, task.kind, task.version, str(task.folder), len(samples), summary, detail, skipped, notes)
