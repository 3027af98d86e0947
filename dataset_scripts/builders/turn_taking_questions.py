"""turn_taking_questions: can an audio foundation model understand and predict turn-taking?

The benchmark of Talking Turns §5 / Appendix A.5, built from any labelled conversations.
Every item is a mono clip, a yes/no question (the prompt, stored with the item) and the
true answer; positives and negatives are balanced per task.

Understanding (clips of at most 10 s; "does the clip contain ...?"):

- ``understand_T``: a turn change (a chunk labelled T);
- ``understand_BC``: a backchannel (BC);
- ``understand_I``: an interruption / overlap (I).

Prediction (clips of at most 30 s, the judge's context, ending at the end of chunk t;
"will ... follow?"):

- ``predict_T``: a speaker's speech is followed by silence; yes if the next speech is the
  other speaker (T), no if the same speaker resumes (C) (metric (a));
- ``predict_BC``: one speaker talks; yes if the listener backchannels in chunk t+1, no if
  the speaker just goes on (metric (b));
- ``predict_I``: one speaker talks; yes if the other starts talking over them in chunk t+1
  (I), no if not (C) (metric (c));
- ``predict_floor_taking``: the clip ends in the first chunk of an overlap; yes if the
  interrupter ends up with the floor (I ... T), no if the first speaker keeps it (I ... C)
  (metric (e)).

:func:`turneval.metrics.turn_taking_questions.score_questions` runs any ``model(audio, prompt) -> bool`` over
the items and reports balanced accuracy per task (chance = 0.5).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Sequence

import datasets
import numpy as np

from ..audio import mono_mix, read_wav_bytes, wav_bytes
from ..dialogue import Dialogue
from ..grids import CHUNK_S, SAMPLE_RATE
from ..labels import chunk_labels
from ..sampler import read_context_window
from .checks import SILENT_CHANNEL, SkipCounter, check_audio_files, silent_channels
from .manifest import manifest_split_generators, read_dialogue_manifest


UNDERSTANDING_TASKS = ("understand_T", "understand_BC", "understand_I")
PREDICTION_TASKS = ("predict_T", "predict_BC", "predict_I", "predict_floor_taking")
QUESTION_TASKS = UNDERSTANDING_TASKS + PREDICTION_TASKS

PROMPTS: dict[str, str] = {
    "understand_T": (
        "You are provided the audio of a 2 speaker conversation. Does the given audio have a turn change "
        "anywhere? Briefly explain your answer. You must reply with (a) Yes or (b) No."
    ),
    "understand_BC": (
        "Backchannels are brief words or sounds (like 'um', 'right' or 'okay') that a listener makes to show "
        "they're paying attention. Do the 2 speakers backchannel anywhere in the provided audio? Briefly explain "
        "your answer. You must reply with (a) Yes or (b) No."
    ),
    "understand_I": (
        "Do the 2 speakers interrupt each other anywhere in the provided audio? Briefly explain your answer. "
        "You must reply with (a) Yes or (b) No."
    ),
    "predict_T": (
        "You are provided the audio of a 2 speaker conversation. The current speaker takes a pause at the end of "
        "the audio. Given the provided audio, do you think that after the pause the second speaker will speak up "
        "(rather than the current speaker continuing)? You must reply with (a) Yes or (b) No."
    ),
    "predict_BC": (
        "You are provided the audio of a 2 speaker conversation. Given the provided audio, do you think any of the "
        "2 speakers will backchannel exactly after the end of the audio? Answer (a) Yes or (b) No. Briefly explain "
        "your answer."
    ),
    "predict_I": (
        "During spontaneous human conversation, interruptions occur frequently and often correspond to breaks in "
        "the information flow between conversation partners. You are analyzing a brief audio clip from a "
        "two-person conversation. The clip ends abruptly while the current speaker is still in the middle of a "
        "sentence. Based ONLY on the provided audio, will the other speaker interrupt BEFORE the current speaker "
        "finishes their sentence? You must reply with (a) Yes or (b) No."
    ),
    "predict_floor_taking": (
        "You are examining a short audio clip from a conversation between two people. The audio ends suddenly "
        "RIGHT as the second speaker begins to talk, overlapping with the first speaker. Based ONLY on the provided "
        "audio, is the second speaker's overlap a successful interruption, so that they will take over the "
        "conversation? You must reply with (a) Yes or (b) No."
    ),
}
"""One yes/no prompt per task, adapted from the paper's best prompts (Tables 12-14)."""


@dataclass(frozen=True)
class QuestionInstance:
    """Where a question's clip comes from: conversation, clip bounds (s), event chunk and answer."""

    task: str
    answer: bool
    conversation_id: str
    clip_start_s: float
    clip_end_s: float
    event_chunk: int


def _runs(labels: Sequence[str]) -> Iterator[tuple[int, int, str]]:
    """(start, end_exclusive, label) runs."""
    start = 0
    for i in range(1, len(labels) + 1):
        if i == len(labels) or labels[i] != labels[start]:
            yield start, i, labels[start]
            start = i


def prediction_events(labels: Sequence[str]) -> dict[str, list[tuple[int, bool]]]:
    """Per prediction task, (t, answer): the clip ends at the end of chunk t.

    ``labels`` are the five-class chunk labels of one conversation (NA, BC, I, T, C).
    """
    out: dict[str, list[tuple[int, bool]]] = {task: [] for task in PREDICTION_TASKS}
    n = len(labels)
    for t in range(n - 1):
        here, nxt = labels[t], labels[t + 1]
        if here in ("T", "C") and nxt == "NA":  # speech followed by silence: who speaks next?
            k = t + 1
            while k < n and labels[k] == "NA":
                k += 1
            if k < n and labels[k] in ("T", "C"):
                out["predict_T"].append((t, labels[k] == "T"))
        if here in ("T", "C") and nxt in ("BC", "C"):
            out["predict_BC"].append((t, nxt == "BC"))
        if here in ("T", "C") and nxt in ("I", "C"):
            out["predict_I"].append((t, nxt == "I"))
    for start, end, label in _runs(labels):
        if label != "I" or start == 0:
            continue
        following = [x for x in labels[end:] if x in ("T", "C", "NA")]
        if following and following[0] in ("T", "C"):
            out["predict_floor_taking"].append((start, following[0] == "T"))
    return out


def understanding_windows(labels: Sequence[str], clip_chunks: int, hop_chunks: int) -> dict[str, list[tuple[int, int, bool]]]:
    """Per understanding task, (first chunk, n chunks, answer) of windows tiling the conversation.

    Windows are ``clip_chunks`` long every ``hop_chunks``; a conversation shorter than one
    window is a single (shorter) window.
    """
    n = len(labels)
    firsts = range(0, n - clip_chunks + 1, hop_chunks) if n >= clip_chunks else ([0] if n else [])
    out: dict[str, list[tuple[int, int, bool]]] = {task: [] for task in UNDERSTANDING_TASKS}
    for first in firsts:
        inside = set(labels[first : first + clip_chunks])
        for task in UNDERSTANDING_TASKS:
            out[task].append((first, min(clip_chunks, n - first), task.split("_", 1)[1] in inside))
    return out


def question_instances(
    conversations: Iterable[tuple[str, Sequence[str]]],
    *,
    tasks: Sequence[str] = QUESTION_TASKS,
    seed: int = 0,
    max_per_class: int = 750,
    understanding_clip_s: float = 10.0,
    understanding_hop_s: float = 5.0,
    prediction_clip_s: float = 30.0,
    chunk_s: float = CHUNK_S,
) -> list[QuestionInstance]:
    """Balanced question instances from (conversation id, chunk labels) pairs.

    For each task, positives and negatives are drawn without replacement to the same count
    ``min(#positives, #negatives, max_per_class)``; the draw is deterministic per seed.
    """
    unknown = [t for t in tasks if t not in QUESTION_TASKS]
    if unknown:
        raise ValueError(f"unknown question tasks {unknown}; choose from {list(QUESTION_TASKS)}")
    clip_chunks = int(round(understanding_clip_s / chunk_s))
    hop_chunks = max(1, int(round(understanding_hop_s / chunk_s)))
    pools: dict[str, dict[bool, list[QuestionInstance]]] = {t: {True: [], False: []} for t in tasks}
    for conv_id, labels in conversations:
        labels = list(labels)
        for task, found in understanding_windows(labels, clip_chunks, hop_chunks).items():
            if task in pools:
                for first, count, answer in found:
                    start = round(first * chunk_s, 6)
                    pools[task][answer].append(
                        QuestionInstance(task, answer, conv_id, start, round(start + count * chunk_s, 6), first)
                    )
        for task, found in prediction_events(labels).items():
            if task in pools:
                for t, answer in found:
                    end = round((t + 1) * chunk_s, 6)
                    pools[task][answer].append(
                        QuestionInstance(task, answer, conv_id, round(max(0.0, end - prediction_clip_s), 6), end, t)
                    )
    rng = random.Random(seed)
    chosen: list[QuestionInstance] = []
    for task in tasks:
        pos, neg = pools[task][True], pools[task][False]
        count = min(len(pos), len(neg), max_per_class)
        items = rng.sample(pos, count) + rng.sample(neg, count)
        rng.shuffle(items)
        chosen += items
    return chosen


def clip_audio(audio_path: str, start_s: float, end_s: float) -> np.ndarray:
    """Mono 16 kHz samples of ``[start_s, end_s)`` read from the file (partial read)."""
    end = int(round(end_s * SAMPLE_RATE))
    values, mask = read_context_window(audio_path, end, end - int(round(start_s * SAMPLE_RATE)))
    return values[mask.astype(bool)]


def question_audio(item: Mapping[str, Any]) -> np.ndarray:
    """The mono 16 kHz clip of a question item (an array, WAV ``{"bytes": ...}`` or ``audio_path`` + clip bounds)."""
    audio = item.get("audio")
    if isinstance(audio, np.ndarray):
        return audio.astype(np.float32, copy=False)
    if isinstance(audio, Mapping) and audio.get("bytes"):
        return mono_mix(read_wav_bytes(audio["bytes"]))
    if item.get("audio_path"):
        return clip_audio(item["audio_path"], item["clip_start_s"], item["clip_end_s"])
    raise ValueError(f"question item {item.get('task')!r} has no audio (array, bytes or audio_path + clip bounds)")


def question_features() -> datasets.Features:
    """The row schema of turn_taking_questions."""
    return datasets.Features({
        "item_id": datasets.Value("string"),
        "task": datasets.Value("string"),
        "prompt": datasets.Value("string"),
        "answer": datasets.Value("bool"),
        "conversation_id": datasets.Value("string"),
        "audio_path": datasets.Value("string"),
        "clip_start_s": datasets.Value("float64"),
        "clip_end_s": datasets.Value("float64"),
        "event_chunk": datasets.Value("int32"),
        "audio": {"bytes": datasets.Value("binary"), "path": datasets.Value("string")},
    })


@dataclass
class TurnTakingQuestionsConfig(datasets.BuilderConfig):
    """Config of :class:`TurnTakingQuestions`.

    Args:
        manifest: dialogue manifest (or ``data_dir`` with ``manifest.jsonl``); dialogues need
            ``audio_path``. Labels are computed with ``labels.chunk_labels``.
        tasks: which question tasks to build.
        seed: balanced draw seed.
        max_per_class: cap on positives (and negatives) per task (the paper: 750).
        understanding_clip_s, prediction_clip_s: clip length limits (paper: 10 s and 30 s).
        embed_audio: store each clip as mono 16 kHz WAV bytes (else only path + bounds).
    """

    manifest: str | None = None
    tasks: tuple[str, ...] = QUESTION_TASKS
    seed: int = 0
    max_per_class: int = 750
    understanding_clip_s: float = 10.0
    understanding_hop_s: float = 5.0
    prediction_clip_s: float = 30.0
    embed_audio: bool = True


class TurnTakingQuestions(datasets.GeneratorBasedBuilder):
    """Builder of the turn-taking question set for audio foundation models from a dialogue manifest."""

    BUILDER_CONFIG_CLASS = TurnTakingQuestionsConfig
    BUILDER_CONFIGS = [TurnTakingQuestionsConfig(name="default")]
    DEFAULT_CONFIG_NAME = "default"
    VERSION = datasets.Version("1.0.0")

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description="Turn-taking understanding/prediction questions for audio foundation models.", features=question_features())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.skipped = SkipCounter()
        """Dialogues skipped by the last build, by reason (policy: ``builders.checks``)."""

    def _split_generators(self, dl_manager) -> list[datasets.SplitGenerator]:
        self.skipped = SkipCounter()
        generators = manifest_split_generators(self.config.manifest, self.config.data_dir)
        if generators:
            check_audio_files(generators[0].gen_kwargs["manifest"])  # one manifest for all splits
        return generators

    def _generate_examples(self, manifest: str, split: str) -> Iterator[tuple[str, dict[str, Any]]]:
        cfg = self.config
        paths: dict[str, str] = {}
        labelled: list[tuple[str, Sequence[str]]] = []
        for _, dialogue in read_dialogue_manifest(manifest, split=split):
            if not dialogue.audio_path:
                raise ValueError(f"{manifest}: dialogue {dialogue.id!r} has no audio_path; questions need audio")
            silent = silent_channels(dialogue)
            if silent:  # only negatives to offer: it would skew the balance, not test anything
                self.skipped.skip(SILENT_CHANNEL, f"{dialogue.id}: no speech on channel {'/'.join(silent)}")
                continue
            paths[dialogue.id] = dialogue.audio_path
            labelled.append((dialogue.id, chunk_labels(dialogue).labels))
        instances = question_instances(
            labelled, tasks=cfg.tasks, seed=cfg.seed, max_per_class=cfg.max_per_class,
            understanding_clip_s=cfg.understanding_clip_s, understanding_hop_s=cfg.understanding_hop_s,
            prediction_clip_s=cfg.prediction_clip_s,
        )
        for i, inst in enumerate(instances):
            item_id = f"{inst.task}-{i:05d}"
            audio = {"bytes": None, "path": None}
            if cfg.embed_audio:
                clip = clip_audio(paths[inst.conversation_id], inst.clip_start_s, inst.clip_end_s)
                audio = {"bytes": wav_bytes(clip, SAMPLE_RATE, subtype="PCM_16"), "path": f"{item_id}.wav"}
            yield item_id, {
                "item_id": item_id,
                "task": inst.task,
                "prompt": PROMPTS[inst.task],
                "answer": inst.answer,
                "conversation_id": inst.conversation_id,
                "audio_path": paths[inst.conversation_id],
                "clip_start_s": inst.clip_start_s,
                "clip_end_s": inst.clip_end_s,
                "event_chunk": inst.event_chunk,
                "audio": audio,
            }


def dialogue_labels(dialogues: Iterable[Dialogue]) -> list[tuple[str, Sequence[str]]]:
    """(id, five-class chunk labels) for dialogues, the input of :func:`question_instances`."""
    return [(d.id, chunk_labels(d).labels) for d in dialogues]
