"""turn_taking_statistics: corpus-level turn-taking statistics (Talking Turns §3.2).

A thin face over ``turneval.metrics.turn_statistics`` (the rules) and
``turneval.dataset_scripts.events`` (the events they count)."""
from __future__ import annotations

import datasets
import evaluate

# turneval's code, copied beside this file (turneval_*.py, `make sync-metrics`) so that the module
# runs without turneval. evaluate carries only the files a script imports, so every copy is
# imported here, also those only the other copies or the Space's app.py use (noqa: F401).
from .turneval_dialogue import Dialogue, Word
from .turneval_events import DEFAULT_IPU_SILENCE_S, DEFAULT_MAX_BACKCHANNEL_S
from .turneval_files import (
    atomic_write_text,  # noqa: F401
)
from .turneval_grids import (
    CHUNK_S,  # noqa: F401
)
from .turneval_turn_statistics import corpus_statistics
from .turneval_vocabulary import (
    is_speech_word,  # noqa: F401
)
from .turneval_widget import (
    launch_gradio_widget,  # noqa: F401
)


_CITATION = """\
@inproceedings{arora2025talking,
  title={Talking Turns: Benchmarking Audio Foundation Models on Turn-Taking Dynamics},
  author={Arora, Siddhant and Lu, Zhiyun and Chiu, Chung-Cheng and Pang, Ruoming and Watanabe, Shinji},
  booktitle={International Conference on Learning Representations (ICLR)},
  year={2025}
}
"""

_DESCRIPTION = """\
Turn-taking statistics of spoken conversations between two speakers (e.g. a user and a spoken
dialogue system), as in Talking Turns §3.2: for inter-pausal units (IPUs: speech bounded by more
than 200 ms of the speaker's own silence), pauses (silence between IPUs of the same speaker),
gaps (silence between IPUs of different speakers) and overlaps (both speak), the number of
events per minute and their cumulated duration as a percentage of the conversation. With word
timings it also gives the speaking rate (words per minute of own speech) and the backchannel
word rate (backchannel words per minute of conversation). Each input row is one dialogue;
statistics are pooled over all rows (summed counts and durations, then rates).
"""

_KWARGS_DESCRIPTION = """
Args:
    segments_a (`list` of `list` of `[start, end]`): per dialogue, speaker A's speech segments (s).
    segments_b (`list` of `list` of `[start, end]`): per dialogue, speaker B's speech segments (s).
    duration (`list` of `float`): per dialogue, its length in seconds.
    words_a, words_b (`list` of `list` of `{"start", "end", "text"}`): word timings; only with
        `config_name="words"`. Then IPUs come from the words and backchannels from the word list.
    ipu_silence_s (`float`, default 0.2): own silence longer than this splits IPUs.
    max_backchannel_s (`float`, default 1.0): without words, IPUs up to this long inside the
        other speaker's turn are backchannels.
    backchannel_words (`list` of `str`, optional): backchannel phrases (default: the shipped
        Switchboard list).
    per_dialogue (`bool`, default False): also return each row's statistics under `dialogues`.
Returns:
    n_dialogues, duration_s, duration_min,
    for ipu, pause, gap, overlap and silence: `<event>_count`, `<event>_per_min`,
        `<event>_percent` (of total duration), `<event>_mean_s`;
    backchannel_count, backchannels_per_min, turn_count, turns_per_min, interruption_count,
    interruptions_per_min, floor_taking_count, floor_taking_share;
    word_count, speaking_rate_wpm, backchannel_word_rate (None without words);
    per speaker (suffix `_A` / `_B`): ipu and pause count / per_min / percent, backchannel and
    interruption count / per_min, speaking_rate_wpm, backchannel_word_rate.
Examples:
    >>> import evaluate
    >>> stats = evaluate.load("metrics/turn_taking_statistics")
    >>> results = stats.compute(
    ...     segments_a=[[[0.0, 20.0], [21.0, 40.0]]], segments_b=[[[40.5, 60.0]]], duration=[60.0]
    ... )
    >>> results["ipu_per_min"], results["pause_per_min"], results["gap_per_min"], results["pause_percent"]
    (3.0, 1.0, 1.0, 1.6666666666666667)
    >>> with_words = evaluate.load("metrics/turn_taking_statistics", config_name="words")
    >>> results = with_words.compute(
    ...     segments_a=[[]], segments_b=[[]], duration=[60.0],
    ...     words_a=[[{"start": 0.0, "end": 15.0, "text": "long"}, {"start": 15.0, "end": 30.0, "text": "story"}]],
    ...     words_b=[[{"start": 10.0, "end": 10.5, "text": "uh-huh"}, {"start": 31.0, "end": 31.5, "text": "so"}]],
    ... )
    >>> results["backchannel_count"], results["backchannel_word_rate"], results["speaking_rate_wpm_A"]
    (1, 1.0, 4.0)
"""


def _words(rows):
    return [Word(float(w["start"]), float(w["end"]), str(w["text"])) for w in rows]


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TurnTakingStatistics(evaluate.Measurement):
    """IPU, pause, gap and overlap rates and shares; speaking and backchannel rates."""

    def _info(self) -> evaluate.MeasurementInfo:
        segments = datasets.List(datasets.List(datasets.Value("float64")))
        features = {"segments_a": segments, "segments_b": segments, "duration": datasets.Value("float64")}
        if self.config_name == "words":
            word = {"start": datasets.Value("float64"), "end": datasets.Value("float64"), "text": datasets.Value("string")}
            features["words_a"] = datasets.List(word)
            features["words_b"] = datasets.List(word)
        return evaluate.MeasurementInfo(
            module_type="measurement",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(features),
            reference_urls=["https://arxiv.org/abs/2503.01174"],
        )

    def _compute(
        self,
        segments_a,
        segments_b,
        duration,
        words_a=None,
        words_b=None,
        ipu_silence_s: float = DEFAULT_IPU_SILENCE_S,
        max_backchannel_s: float = DEFAULT_MAX_BACKCHANNEL_S,
        backchannel_words=None,
        per_dialogue: bool = False,
    ) -> dict:
        dialogues = []
        for i, (seg_a, seg_b, dur) in enumerate(zip(segments_a, segments_b, duration)):
            words = None
            if words_a is not None and words_b is not None:
                words = [_words(words_a[i]), _words(words_b[i])]
            dialogues.append(Dialogue(id=f"dialogue_{i}", segments=[seg_a, seg_b], words=words, duration=dur))
        return corpus_statistics(
            dialogues,
            per_dialogue=per_dialogue,
            ipu_silence_s=ipu_silence_s,
            max_backchannel_s=max_backchannel_s,
            backchannel_words=backchannel_words,
        )
