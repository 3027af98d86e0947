"""full_duplex_timing: turn-taking timing of full-duplex spoken dialogue systems, as FD-Bench
(SRR, SIR, SRIR, EIR, NIR, FSED, ERT, EIT, IRD) and Full-Duplex-Bench (take-over rate,
latency) score it. A thin face over ``turneval.metrics.fd_bench_rounds`` and
``turneval.metrics.full_duplex_bench_tasks``, where every rule lives."""
from __future__ import annotations

import math

import datasets
import evaluate

# turneval's code, copied beside this file (turneval_*.py, `make sync-metrics`) so that the module
# runs without turneval. evaluate carries only the files a script imports, so every copy is
# imported here, also those only the other copies or the Space's app.py use (noqa: F401).
from .turneval_fd_bench_rounds import (
    FDBenchConversation,
    FDBenchThresholds,
    evaluate_fd_bench,
    seconds_to_samples,
    transcript_error_rate,
)
from .turneval_files import (
    to_jsonable,  # noqa: F401
)
from .turneval_full_duplex_bench_tasks import chunks_from_words, take_turn_task
from .turneval_grids import SAMPLE_RATE
from .turneval_widget import (
    launch_gradio_widget,  # noqa: F401
)


_CITATION = """\
@article{peng2025fdbench,
  title={FD-Bench: A Full-Duplex Benchmarking Pipeline Designed for Full Duplex Spoken Dialogue Systems},
  author={Peng, Yizhou and others},
  journal={arXiv preprint arXiv:2507.19040},
  year={2025}
}
@article{lin2025fullduplexbench,
  title={Full-Duplex-Bench: A Benchmark to Evaluate Full-duplex Spoken Dialogue Models on Turn-taking Capabilities},
  author={Lin, Guan-Ting and others},
  journal={arXiv preprint arXiv:2503.04721},
  year={2025}
}
"""

_DESCRIPTION = """\
Full-duplex timing scores when a spoken dialogue system speaks, yields and replies, from the
speech segments of the user and the system. Two configurations:

`fd_bench` (default), FD-Bench over multi-round conversations with scripted user
interruptions: rates SRR (success response), SIR (success interrupt: the system yields to the
user), SRIR (success response after a yielded interruption), EIR (early interrupt: the system
starts > 0.5 s before the user ends), NIR (noise interrupt, per gap; can exceed 1), and median
times in ms FSED (response delay), ERT (early response time), EIT (early interrupt time) and IRD
(time to yield to an interruption). Higher is better for SRR, SIR, SRIR; lower is better for
EIR, NIR and the four times. Optional transcripts give the WER of the system's speech.

`full_duplex_bench`, Full-Duplex-Bench v1 take-turn tasks from the system's transcribed words:
take-over rate (TOR: the reply is more than a < 1 s, <= 3-word blip) and mean latency (first
word start minus the reference time; negatives count as 0; only samples that took the turn).
For `pause_handling` a lower TOR is better; for `smooth_turn_taking` and `user_interruption` a
higher TOR and a lower latency are better.
"""

_KWARGS_DESCRIPTION = """
Args (config `fd_bench`):
    user_segments (`list` of `list` of [start, end]): per conversation, one user speech segment
        per round.
    system_segments (`list` of `list` of [start, end]): per conversation, the system's speech.
    round_types (`list` of `list` of `str`): per conversation and round, "First Inquiry" for
        round 1, then the interruption type announced by the previous round ("Further Inquiry",
        "Topic Shift", "Affirmative Acknowledgment", "Third-Party Noise", "Denial and
        Discontent", or combinations joined by " + "); None where unknown.
    time_unit (`str`, defaults to "seconds"): "seconds" or "samples" (16 kHz sample indices).
    sample_rate (`int`, defaults to 16000): rate of sample indices (time_unit "samples"); the
        0.5 s / 2.5 s / 5.5 s thresholds are scaled to it.
    drop_first_system_segment (`bool`, defaults to False): ignore a greeting preamble (Moshi).
    transcript_references, transcript_hypotheses (`list` of `str`, *optional*): intended and
        recognised text of the system's speech, for `wer`; `wer_unit` "word" or "char".
Args (config `full_duplex_bench`):
    words (`list` of `list` of `str`), word_starts, word_ends (`list` of `list` of `float`):
        per sample, the system's transcribed words and their times (s); an end may be None.
    reference_time (`list` of `float`): per sample, the user's turn end (smooth_turn_taking)
        or the interruption end (user_interruption); ignored for pause_handling.
    task (`str`, defaults to "smooth_turn_taking"): "pause_handling", "smooth_turn_taking" or
        "user_interruption".
Returns:
    fd_bench: srr, sir, srir, eir, nir (`float`, fractions), fsed_ms, ert_ms, eit_ms, ird_ms
    (`float`), per-category counts, n_conversations, inconsistent_conversations, wer (with
    transcripts).
    full_duplex_bench: take_over_rate, mean_latency (`float`, None when no sample took the
    turn), tor and latency (`list`, per sample).
Examples:
    >>> import evaluate
    >>> timing = evaluate.load("metrics/full_duplex_timing")
    >>> results = timing.compute(
    ...     user_segments=[[[0.0, 2.0], [5.0, 7.0]]],
    ...     system_segments=[[[2.5, 6.0], [7.6, 10.0]]],
    ...     round_types=[["First Inquiry", "Topic Shift"]],
    ... )
    >>> results["srr"], results["sir"], results["srir"], results["fsed_ms"], results["ird_ms"]
    (0.5, 1.0, 1.0, 550.0, 1000)

    >>> fdb = evaluate.load("metrics/full_duplex_timing", "full_duplex_bench")
    >>> results = fdb.compute(
    ...     words=[["sure", "that", "works"], ["mm"]],
    ...     word_starts=[[5.4, 5.7, 5.9], [4.5]],
    ...     word_ends=[[5.7, 5.9, 6.5], [4.7]],
    ...     reference_time=[5.0, 4.5],
    ...     task="smooth_turn_taking",
    ... )
    >>> results["take_over_rate"], round(results["mean_latency"], 3), results["tor"]
    (0.5, 0.4, [1, 0])
"""

_FD_BENCH = ("default", "fd_bench")
_FULL_DUPLEX_BENCH = "full_duplex_bench"


def _segment_list() -> datasets.List:
    return datasets.List(datasets.List(datasets.Value("float64")))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class FullDuplexTiming(evaluate.Metric):
    """FD-Bench and Full-Duplex-Bench timing metrics."""

    def _info(self) -> evaluate.MetricInfo:
        if self.config_name in _FD_BENCH:
            features = datasets.Features(
                {
                    "user_segments": _segment_list(),
                    "system_segments": _segment_list(),
                    "round_types": datasets.List(datasets.Value("string")),
                }
            )
        elif self.config_name == _FULL_DUPLEX_BENCH:
            features = datasets.Features(
                {
                    "words": datasets.List(datasets.Value("string")),
                    "word_starts": datasets.List(datasets.Value("float64")),
                    "word_ends": datasets.List(datasets.Value("float64")),
                    "reference_time": datasets.Value("float64"),
                }
            )
        else:
            raise KeyError(
                f"unknown configuration {self.config_name!r}: use 'fd_bench' (default) or 'full_duplex_bench'"
            )
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=features,
            reference_urls=["https://github.com/pengyizhou/FD-Bench", "https://github.com/DanielLin94144/Full-Duplex-Bench"],
        )

    def _compute(self, transcript_references=None, transcript_hypotheses=None, wer_unit: str = "word", **kwargs) -> dict:
        transcripts = transcript_references is not None or transcript_hypotheses is not None
        if self.config_name == _FULL_DUPLEX_BENCH:
            if transcripts:
                raise ValueError("transcript_references and transcript_hypotheses (the WER) go with the 'fd_bench' configuration")
            return self._compute_full_duplex_bench(**kwargs)
        out = self._compute_fd_bench(**kwargs)
        if transcripts:
            out["wer"] = transcript_error_rate(transcript_references or [], transcript_hypotheses or [], wer_unit)
        return out

    def _compute_fd_bench(
        self,
        user_segments,
        system_segments,
        round_types,
        time_unit: str = "seconds",
        sample_rate: int = SAMPLE_RATE,
        drop_first_system_segment: bool = False,
    ) -> dict:
        if time_unit not in ("seconds", "samples"):
            raise ValueError(f"time_unit must be 'seconds' or 'samples', got {time_unit!r}")

        # seconds go onto FD-Bench's own 16 kHz grid; sample indices keep their rate and the
        # thresholds are scaled to it
        rate = SAMPLE_RATE if time_unit == "seconds" else sample_rate

        def to_samples(segments):
            if time_unit == "seconds":
                return seconds_to_samples(segments, rate)
            return [(start, end) for start, end in segments]

        conversations = [
            FDBenchConversation(to_samples(user), to_samples(system), types, f"conversation_{k + 1}")
            for k, (user, system, types) in enumerate(zip(user_segments, system_segments, round_types))
        ]
        report = evaluate_fd_bench(
            conversations,
            drop_first_system_segment=drop_first_system_segment,
            thresholds=FDBenchThresholds.for_sample_rate(rate),
        )
        out = report.result.to_dict()
        out["n_conversations"] = len(conversations)
        out["inconsistent_conversations"] = report.inconsistent_conversations
        return out

    def _compute_full_duplex_bench(
        self, words, word_starts, word_ends, reference_time, task: str = "smooth_turn_taking"
    ) -> dict:
        chunks = [chunks_from_words(w, s, e) for w, s, e in zip(words, word_starts, word_ends)]
        result = take_turn_task(task, chunks, None if task == "pause_handling" else reference_time)
        samples = list(result.samples.values())
        return {
            "take_over_rate": result.take_over_rate,
            "mean_latency": None if math.isnan(result.mean_latency) else result.mean_latency,
            "tor": [s.tor for s in samples],
            "latency": [s.latency for s in samples],
        }
