"""Where the Full-Duplex-Bench run evaluator gets a sample's words and speech, and which samples it can score.

Words come from the benchmark's ASR JSON files (``output.json``, ``input.json``), or, with
``--transcribe``, from turneval's offline Whisper on the matching audio; speech segments from
Silero VAD with the benchmark's settings. :func:`usable_samples` sorts a task's samples into
those that hold every file a task needs and those it skips, and says which file is missing
and how to make it when skipping was not asked for.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from turneval.dataset_scripts.readers.full_duplex_bench import (
    BenchmarkLayoutError,
    FullDuplexBenchSample,
    FullDuplexBenchTask,
    read_asr_json,
)
from turneval.metrics import full_duplex_bench_tasks as rules


VadFunction = Callable[[Path], Sequence[tuple[float, float]]]
"""Audio file -> speech segments (s); the default is :func:`silero_segments`."""

WordsFunction = Callable[[Path, float], Sequence[rules.WordChunk]]
"""(audio file, start s) -> the words spoken from ``start`` on, in the file's time (``--transcribe``)."""

TASK_TITLES = {
    "pause_handling": "Pause Handling",
    "backchannel": "Backchannel",
    "smooth_turn_taking": "Smooth Turn-Taking",
    "user_interruption": "User Interruption",
    "overlap": "Overlap (v1.5)",
}

WORDS_MISSING = (
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


class WordSource:
    """Where a sample's words come from: the benchmark's ASR JSON, else (``--transcribe``) its audio."""

    def __init__(self, transcribe: WordsFunction | None):
        self.transcribe = transcribe

    def available(self, sample: FullDuplexBenchSample, json_name: str) -> bool:
        return sample.has(json_name) or (self.transcribe is not None and sample.has(_audio_of(json_name)))

    def read(self, sample: FullDuplexBenchSample, json_name: str, start_s: float = 0.0) -> tuple[list[rules.WordChunk], str]:
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
    vad = SileroVAD(band="full")  # the benchmark's own silero pass: the audio as given

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


def silero_segments(path: Path) -> list[tuple[float, float]]:
    """Speech segments (s) of an audio file by Silero VAD with silero's default settings on the
    audio as given (``band="full"``), as the benchmark's own code runs it."""
    from turneval.dataset_scripts.audio import load_audio
    from turneval.dataset_scripts.vad import SileroVAD

    audio, sr = load_audio(path)
    return [(float(s), float(e)) for s, e in SileroVAD(band="full").detect_speech(audio.mean(axis=0), sr)]


def usable_samples(
    task: FullDuplexBenchTask, required: Sequence[str], skip_missing: bool, words: WordSource, words_file: str | None = "output.json"
) -> tuple[list[FullDuplexBenchSample], list[dict[str, str]]]:
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
                WORDS_MISSING.format(n=len(ids), total=total, folder=task.folder, examples=", ".join(ids[:3]), crop=crop)
            )
        name, ids = next(iter(missing_by_file.items()))
        raise BenchmarkLayoutError(
            f"{task.folder}: the {TASK_TITLES[task.kind]} task needs {', '.join(required)} in every sample folder; "
            f"{name} is missing in {len(ids)} of {total} (e.g. {', '.join(ids[:3])}; that folder holds: "
            f"{', '.join(sorted(p.name for p in task.folder.joinpath(ids[0]).iterdir()))}). Put the benchmark's file "
            "there, or give --skip-missing to score only the complete samples"
        )
    return usable, skipped


def first_word_start(chunks: Sequence[rules.WordChunk]) -> float | None:
    """When the first word starts (s), None without words."""
    return chunks[0].start if chunks else None
