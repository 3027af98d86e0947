"""Evaluate a Full-Duplex-Bench run folder with the benchmark's own rules.

Full-Duplex-Bench (Lin et al., 2025; v1.5: Lin et al., 2025b) scores a full-duplex system on
scripted user audio. Per task folder (see :mod:`turneval.dataset_scripts.readers.full_duplex_bench`
for the layout):

* **pause handling**: take-over rate (TOR, lower is better) from the words of ``output.json``;
* **backchannel**: TOR, backchannels per second and the JS distance of their timing to the
  human distribution, from Silero VAD segments of ``output.wav`` and the words;
* **smooth turn-taking**: TOR (higher is better) and latency from the user's turn end;
* **user interruption**: TOR, latency from the interruption's end, and the judge rating where
  the benchmark's ``rating.json`` files exist (turneval calls no GPT judge);
* **v1.5 overlap scenarios**: the per-sample overlap check of the user's and the model's words,
  behaviour tag counts and ratios where the judge's ``content_tag.json`` files exist, and stop /
  response latency from ``latency_intervals.json`` or from Silero VAD of ``input.wav`` and
  ``output.wav`` as ``get_timing.py`` computes them.

Example:

    >>> from turneval.benchmark_runs.fdb import evaluate_fdb_run
    >>> result = evaluate_fdb_run("fdb_run/")                      # doctest: +SKIP
    >>> print(result.to_markdown())                                # doctest: +SKIP
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from turneval.dataset_scripts.files import to_jsonable
from turneval.dataset_scripts.readers.full_duplex_bench import (
    FDB_TASK_KINDS,
    GT_DISTRIBUTION_FILE,
    V15_SCENARIOS,
    BenchmarkLayoutError,
    FDBSample,
    FDBTask,
    find_fdb_tasks,
    read_asr_json,
    read_behaviour_tags,
    read_gt_distributions,
    read_interrupt_end,
    read_latency_intervals,
    read_rating,
    read_turn_end,
)
from turneval.metrics import full_duplex_bench_tasks as rules

from ._common import RunResult, fmt, load_schema, progress


__all__ = ["FDB_SCHEMA_VERSION", "FDBTaskResult", "FDBRunResult", "evaluate_fdb_run", "fdb_schema", "silero_segments", "whisper_words"]

FDB_SCHEMA_VERSION = 1
SCHEMA_FILE = "fdb.schema.json"

VadFunction = Callable[[Path], Sequence[tuple[float, float]]]
"""Audio file -> speech segments (s); the default is :func:`silero_segments`."""

WordsFunction = Callable[[Path, float], Sequence[rules.WordChunk]]
"""(audio file, start s) -> the words spoken from ``start`` on, in the file's time (``--transcribe``)."""

_TASK_TITLES = {
    "pause_handling": "Pause Handling",
    "backchannel": "Backchannel",
    "smooth_turn_taking": "Smooth Turn-Taking",
    "user_interruption": "User Interruption",
    "overlap": "Overlap (v1.5)",
}

_WORDS_MISSING = (
    "the benchmark's word-based rules need the words of the system's output: output.json (word timestamps in "
    "the benchmark's ASR format {{'text', 'chunks': [{{'text', 'timestamp': [start, end]}}]}}) is missing in "
    "{n} of {total} samples of {folder} (e.g. {examples}). Write it with the benchmark's "
    "v1_v1.5/get_transcript/asr.py{crop} (or any ASR giving word times in that format), give --transcribe to "
    "let turneval transcribe output.wav (Whisper, offline), or give --skip-missing to score only the samples "
    "that have it"
)


def read_asr_words(path: Path) -> list[rules.WordChunk]:
    """The words of a benchmark ASR JSON file; a malformed chunk is named with the file."""
    try:
        return rules.chunks_from_asr(read_asr_json(path))
    except ValueError as err:
        raise BenchmarkLayoutError(f"{path}: {err}") from None


class _Words:
    """Where a sample's words come from: the benchmark's ASR JSON, else (``--transcribe``) its audio."""

    def __init__(self, transcribe: WordsFunction | None):
        self.transcribe = transcribe

    def available(self, sample: FDBSample, json_name: str) -> bool:
        return sample.has(json_name) or (self.transcribe is not None and sample.has(_audio_of(json_name)))

    def read(self, sample: FDBSample, json_name: str, start_s: float = 0.0) -> tuple[list[rules.WordChunk], str]:
        """The words and their source (the JSON file's name, or "transcribed")."""
        if sample.has(json_name):
            return read_asr_words(sample.path(json_name)), json_name
        if self.transcribe is None or not sample.has(_audio_of(json_name)):
            raise BenchmarkLayoutError(f"{sample.path(json_name)}: no such file, and nothing to transcribe it from")
        return list(self.transcribe(sample.path(_audio_of(json_name)), start_s)), "transcribed"


def _audio_of(json_name: str) -> str:
    """The audio file an ASR JSON transcribes (output.json -> output.wav)."""
    return json_name.removesuffix(".json") + ".wav"


def whisper_words(asr_model: str | None = None, device: str = "cpu", show_progress: bool = False) -> WordsFunction:
    """Words of an audio file by turneval's offline Whisper (:mod:`turneval.transcribe`, tiny.en by default).

    Like the benchmark's ``asr.py``, the audio is cut at ``start_s`` (the interruption end for
    user interruption) and the word times shifted back; Silero VAD picks the speech to decode.
    """
    try:
        from turneval.transcribe import WhisperTranscriber
    except ImportError as err:  # the offline recogniser is not part of this installation
        raise BenchmarkLayoutError(
            f"--transcribe needs turneval's offline Whisper (turneval.transcribe), which this installation lacks ({err}); "
            "write output.json with the benchmark's get_transcript/asr.py instead"
        ) from None
    from turneval.dataset_scripts.audio import load_audio
    from turneval.dataset_scripts.vad import SileroVAD

    transcriber = WhisperTranscriber(asr_model, device=device)
    vad = SileroVAD()

    def words(path: Path, start_s: float) -> list[rules.WordChunk]:
        audio, sr = load_audio(path)
        mono = audio.mean(axis=0)[int(round(start_s * sr)) :]
        segments = vad.detect_speech(mono, sr)
        if not segments:
            return []  # nothing said: decoding silence only invents words
        found = transcriber.transcribe(mono, segments, progress=show_progress, desc=path.parent.name)[0]
        return [rules.WordChunk(w.text, w.start + start_s, w.end + start_s) for w in found]

    words.description = f"turneval.transcribe Whisper ({asr_model or 'tiny.en'})"  # type: ignore[attr-defined]
    return words



def fdb_schema() -> dict[str, Any]:
    """The JSON schema every ``fdb.json`` validates against (``turneval/data/fdb.schema.json``)."""
    return load_schema(SCHEMA_FILE)


def silero_segments(path: Path) -> list[tuple[float, float]]:
    """Speech segments (s) of an audio file by Silero VAD with its default settings (the benchmark's)."""
    from turneval.dataset_scripts.audio import load_audio
    from turneval.dataset_scripts.vad import SileroVAD

    audio, sr = load_audio(path)
    return [(float(s), float(e)) for s, e in SileroVAD().detect_speech(audio.mean(axis=0), sr)]


@dataclass
class FDBTaskResult:
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


@dataclass
class FDBRunResult(RunResult):
    """Every task of one run folder."""

    FILE_STEM = "fdb"

    run_dir: str
    model_name: str
    tasks: list[FDBTaskResult]
    settings: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        from turneval import __version__

        return to_jsonable(
            {
                "schema_version": FDB_SCHEMA_VERSION,
                "benchmark": "Full-Duplex-Bench",
                "turneval_version": __version__,
                "run_dir": self.run_dir,
                "model_name": self.model_name,
                "settings": self.settings,
                "tasks": [task.to_dict() for task in self.tasks],
            }
        )


    def to_markdown(self, per_sample: bool = True) -> str:
        return _markdown(self, per_sample)


# --------------------------------------------------------------------------- sample collection


def _usable(
    task: FDBTask, required: Sequence[str], skip_missing: bool, words: _Words, words_file: str | None = "output.json"
) -> tuple[list[FDBSample], list[dict[str, str]]]:
    """Samples that hold every required file; the others are skipped (``skip_missing``) or an error.

    The words file counts as present when it can be transcribed (``--transcribe``)."""
    usable, skipped = [], []
    missing_by_file: dict[str, list[str]] = {}
    for sample in task.samples:
        absent = [name for name in required if not (words.available(sample, name) if name == words_file else sample.has(name))]
        if absent:
            skipped.append({"sample": sample.sample_id, "reason": "missing " + ", ".join(absent)})
            for name in absent:
                missing_by_file.setdefault(name, []).append(sample.sample_id)
        else:
            usable.append(sample)
    if missing_by_file and not skip_missing:
        total = len(task.samples)
        if words_file in missing_by_file:
            ids = missing_by_file[words_file]
            crop = " --task user_interruption" if task.kind == "user_interruption" else ""
            raise BenchmarkLayoutError(
                _WORDS_MISSING.format(n=len(ids), total=total, folder=task.folder, examples=", ".join(ids[:3]), crop=crop)
            )
        name, ids = next(iter(missing_by_file.items()))
        raise BenchmarkLayoutError(
            f"{task.folder}: the {_TASK_TITLES[task.kind]} task needs {', '.join(required)} in every sample folder; "
            f"{name} is missing in {len(ids)} of {total} (e.g. {', '.join(ids[:3])}; that folder holds: "
            f"{', '.join(sorted(p.name for p in task.folder.joinpath(ids[0]).iterdir()))}). Put the benchmark's file "
            "there, or give --skip-missing to score only the complete samples"
        )
    return usable, skipped


def _first_start(chunks: Sequence[rules.WordChunk]) -> float | None:
    return chunks[0].start if chunks else None


# --------------------------------------------------------------------------- the v1.0 tasks


def _pause_handling(task: FDBTask, skip_missing: bool, show: bool, source: _Words) -> FDBTaskResult:
    samples, skipped = _usable(task, ["output.json"], skip_missing, source)
    words, origin = {}, {}
    for sample in progress(samples, len(samples), task.name, show):
        words[sample.sample_id], origin[sample.sample_id] = source.read(sample, "output.json")
    result = rules.pause_handling(words)
    detail = {
        key: {"tor": outcome.tor, "n_words": len(words[key]), "first_word_start_s": _first_start(words[key]),
              "words_source": origin[key]}
        for key, outcome in result.samples.items()
    }
    return FDBTaskResult(task.name, task.kind, task.version, str(task.folder), len(samples), {"tor": result.take_over_rate}, detail, skipped)


def _take_turn_with_latency(task: FDBTask, skip_missing: bool, show: bool, source: _Words) -> FDBTaskResult:
    interruption = task.kind == "user_interruption"
    metadata = "interrupt.json" if interruption else "turn_taking.json"
    samples, skipped = _usable(task, ["output.json", metadata], skip_missing, source)
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
            "first_word_start_s": _first_start(words),
            ("interrupt_end_s" if interruption else "turn_end_s"): reference,
            "words_source": origin[key],
        }
        if interruption:
            row["rating"] = ratings.get(key)
        detail[key] = row
    summary: dict[str, Any] = {"tor": result.take_over_rate, "latency_s": result.mean_latency}
    if interruption:
        summary.update(rating=result.mean_rating, n_rated=sum(1 for k, s in result.samples.items() if s.tor == 1 and k in ratings))
    return FDBTaskResult(task.name, task.kind, task.version, str(task.folder), len(samples), summary, detail, skipped, notes)


def _find_gt_distribution(task: FDBTask, explicit: str | Path | None) -> Path | None:
    if explicit is not None:
        return Path(explicit)
    for folder in (task.folder, *list(task.folder.parents)[:2]):
        for candidate in (folder / GT_DISTRIBUTION_FILE, folder / "evaluation" / GT_DISTRIBUTION_FILE):
            if candidate.is_file():
                return candidate
    return None


def _backchannel(
    task: FDBTask, skip_missing: bool, show: bool, vad: VadFunction, gt_path: str | Path | None, source: _Words
) -> FDBTaskResult:
    from turneval.dataset_scripts.audio import audio_duration

    # the reference scores only the numeric sample folders of the task (``spk.isdigit()``)
    ignored = [{"sample": s.sample_id, "reason": "not a numeric sample folder (the benchmark scores only those)"}
               for s in task.samples if not s.sample_id.isdigit()]
    task = FDBTask(task.name, task.kind, task.folder, [s for s in task.samples if s.sample_id.isdigit()])
    samples, skipped = _usable(task, ["output.wav", "output.json"], skip_missing, source)
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
            "jsd": s.jsd,
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
        "jsd": result.jsd_mean,
        "jsd_std": result.jsd_std,
        "n_jsd": sum(1 for s in result.samples.values() if not math.isnan(s.jsd)),
        "gt_distribution_file": str(gt_file) if gt_file else None,
    }
    return FDBTaskResult(task.name, task.kind, task.version, str(task.folder), len(samples), summary, detail, skipped, notes)


# --------------------------------------------------------------------------- v1.5


def _overlap(task: FDBTask, skip_missing: bool, show: bool, vad: VadFunction, source: _Words) -> FDBTaskResult:
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
    return FDBTaskResult(task.name, task.kind, task.version, str(task.folder), len(samples), summary, detail, skipped, notes)


# --------------------------------------------------------------------------- entry point


def evaluate_fdb_run(
    run_dir: str | Path,
    *,
    task: str | None = None,
    gt_distribution: str | Path | None = None,
    vad: VadFunction | None = None,
    skip_missing: bool = False,
    model_name: str | None = None,
    show_progress: bool = False,
    transcribe: WordsFunction | None = None,
) -> FDBRunResult:
    """Score every task folder of a Full-Duplex-Bench run.

    Args:
        run_dir: the run folder (task folders below it, or one task folder).
        task: force the task kind of the folders (one of ``FDB_TASK_KINDS``).
        gt_distribution: the benchmark's ``icc_gt_distribution.json`` (default: looked up in
            the task folder and the two folders above it).
        vad: speech segments of an audio file (default: Silero VAD, as the benchmark).
        skip_missing: score the complete samples and list the others, instead of failing.
        model_name: the row label of the tables (default: the run folder's name).
        show_progress: tqdm bars on stderr.
        transcribe: words of an audio file where the benchmark's ASR JSON is missing
            (:func:`whisper_words` for ``--transcribe``); None requires the JSON files.

    Raises:
        BenchmarkLayoutError: the folder is not in the benchmark's layout, or files are missing.
    """
    run_dir = Path(run_dir)
    vad_function = vad or silero_segments
    source = _Words(transcribe)
    results = []
    found = find_fdb_tasks(run_dir, task)
    # the paper's task order, then the folder name
    found.sort(key=lambda t: (FDB_TASK_KINDS.index(t.kind), t.name))
    for item in found:
        if item.kind == "pause_handling":
            results.append(_pause_handling(item, skip_missing, show_progress, source))
        elif item.kind in ("smooth_turn_taking", "user_interruption"):
            results.append(_take_turn_with_latency(item, skip_missing, show_progress, source))
        elif item.kind == "backchannel":
            results.append(_backchannel(item, skip_missing, show_progress, vad_function, gt_distribution, source))
        else:
            results.append(_overlap(item, skip_missing, show_progress, vad_function, source))
    settings = {
        "task": task,
        "skip_missing": skip_missing,
        "vad": "silero-vad (default settings)" if vad is None else getattr(vad, "__name__", "custom"),
        "gt_distribution": str(gt_distribution) if gt_distribution else None,
        "transcribe": None if transcribe is None else getattr(transcribe, "description", "custom"),
    }
    return FDBRunResult(str(run_dir), model_name or run_dir.resolve().name, results, settings)


# --------------------------------------------------------------------------- markdown

_V1_COLUMNS = {
    "pause_handling": (("TOR ↓", "tor"),),
    "backchannel": (("TOR ↓", "tor"), ("Freq ↑", "freq_per_s"), ("JSD ↓", "jsd")),
    "smooth_turn_taking": (("TOR ↑", "tor"), ("Latency ↓", "latency_s")),
    "user_interruption": (("TOR ↑", "tor"), ("GPT-4o ↑", "rating"), ("Latency ↓", "latency_s")),
}


def _v1_table(result: FDBRunResult) -> list[str]:
    """One row in the shape of the paper's Table (tasks in its order, a column group per folder)."""
    header, cells = ["Model"], [result.model_name]
    for kind in ("pause_handling", "backchannel", "smooth_turn_taking", "user_interruption"):
        for task in (t for t in result.tasks if t.kind == kind):
            for label, key in _V1_COLUMNS[kind]:
                header.append(f"{_TASK_TITLES[kind]} ({task.name}) {label}")
                cells.append(fmt(task.summary.get(key)))
    if len(header) == 1:
        return []
    return [
        "## Full-Duplex-Bench v1.0",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        "| " + " | ".join(cells) + " |",
        "",
        "TOR: take-over rate; Freq: backchannels per second; JSD: Jensen-Shannon distance of backchannel timing to "
        "human listeners; Latency in seconds; GPT-4o: judge rating 0-5 (from the benchmark's rating.json files).",
        "",
    ]


def _v15_table(result: FDBRunResult) -> list[str]:
    tasks = sorted((t for t in result.tasks if t.kind == "overlap"),
                   key=lambda t: (V15_SCENARIOS.index(t.name) if t.name in V15_SCENARIOS else len(V15_SCENARIOS), t.name))
    if not tasks:
        return []
    tags = sorted({tag for t in tasks for ratios in t.summary["behaviour_ratios"].values() for tag in ratios})
    header = ["Scenario", "n", "overlap rate", *tags, "stop latency (s) ↓", "response latency (s) ↓"]
    lines = ["## Full-Duplex-Bench v1.5", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for t in tasks:
        ratios = {tag: r for axis in t.summary["behaviour_ratios"].values() for tag, r in axis.items()}
        row = [t.name, str(t.n_samples), fmt(t.summary["overlap_rate"]), *[fmt(ratios.get(tag), 2) for tag in tags],
               fmt(t.summary["stop_latency_s"]), fmt(t.summary["response_latency_s"])]
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "overlap rate: share of samples whose input.json and output.json words overlap in time (check_overlap); "
        "behaviour columns: ratio of each judge tag (content_tag.json); latencies: mean length of the stop-latency "
        "intervals and response gaps of get_timing, pooled over samples.",
        "",
    ]
    return lines


def _sample_table(task: FDBTaskResult) -> list[str]:
    columns = {
        "pause_handling": ("tor", "n_words", "first_word_start_s"),
        "smooth_turn_taking": ("tor", "latency_s", "n_words", "first_word_start_s", "turn_end_s"),
        "user_interruption": ("tor", "latency_s", "rating", "n_words", "first_word_start_s", "interrupt_end_s"),
        "backchannel": ("tor", "freq_per_s", "jsd", "backchannel_predictions", "duration_s"),
        "overlap": ("overlap", "behaviour", "latency_stop_list", "latency_resp_list", "timing_source"),
    }[task.kind]
    lines = ["| sample | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 1)]
    for key, row in task.samples.items():
        cells = [json.dumps(to_jsonable(row[c])) if isinstance(row.get(c), list) else fmt(row.get(c)) for c in columns]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return lines


def _markdown(result: FDBRunResult, per_sample: bool) -> str:
    lines = [f"# Full-Duplex-Bench: {result.model_name}", "", f"Run folder: `{result.run_dir}`", ""]
    lines += _v1_table(result) + _v15_table(result)
    for task in result.tasks:
        lines += [f"## {_TASK_TITLES[task.kind]}: {task.name} ({task.version}, {task.n_samples} samples)", ""]
        lines += [f"- {key}: {fmt(value) if not isinstance(value, dict) else json.dumps(to_jsonable(value))}"
                  for key, value in task.summary.items()]
        lines += [f"- note: {note}" for note in task.notes]
        if task.skipped:
            lines.append(f"- skipped: {len(task.skipped)} sample(s): " + "; ".join(f"{s['sample']} ({s['reason']})" for s in task.skipped[:10]))
        lines.append("")
        if per_sample and task.samples:
            lines += _sample_table(task) + [""]
    return "\n".join(lines)
