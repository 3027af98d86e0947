"""turn_taking_chunks: one row per conversation with its 40 ms judge labels (docs/datasets.md).

Each row holds a reference to the audio (never the samples), the NA/BC/I/T/C label and
the floor owner of every 40 ms chunk, per-speaker voice activity on the same grid, the
speech segments and the words. The judge's training examples (30 s windows) are cut from
these rows on the fly by :class:`~turneval.dataset_scripts.sampler.BalancedChunkSampler`.

Usage (datasets 5 has no loading scripts: use the builder class directly)::

    from turneval.dataset_scripts.builders import TurnTakingChunks, write_dialogue_manifest
    manifest = write_dialogue_manifest(dialogues, "data/chunks_src")
    builder = TurnTakingChunks(cache_dir="cache", manifest=str(manifest))
    builder.download_and_prepare()
    ds = builder.as_dataset()            # DatasetDict, one split per manifest split
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import datasets
import numpy as np

from ..dialogue import SPEAKERS, Dialogue
from ..grids import CHUNK_HZ, CHUNK_S, segments_to_activity
from ..labels import FLOOR_STATES, LABELS, chunk_labels
from .checks import SILENT_CHANNEL, SkipCounter, check_audio_files, require_audio_file, silent_channels
from .manifest import manifest_split_generators, read_dialogue_manifest


logger = datasets.logging.get_logger(__name__)

_DESCRIPTION = "Two-party conversations with 40 ms turn-taking labels (NA, BC, I, T, C) and floor owner."


def chunk_features() -> datasets.Features:
    """The row schema of turn_taking_chunks."""
    return datasets.Features(
        {
            "conversation_id": datasets.Value("string"),
            "audio_path": datasets.Value("string"),
            "duration": datasets.Value("float64"),
            "chunk_s": datasets.Value("float64"),
            "first_chunk_s": datasets.Value("float64"),
            "n_chunks": datasets.Value("int32"),
            "labels": datasets.List(datasets.ClassLabel(names=list(LABELS))),
            "floor": datasets.List(datasets.ClassLabel(names=list(FLOOR_STATES))),
            "voice_activity_a": datasets.List(datasets.Value("int8")),
            "voice_activity_b": datasets.List(datasets.Value("int8")),
            "segments": datasets.List(
                {"speaker": datasets.Value("string"), "start": datasets.Value("float64"), "end": datasets.Value("float64")}
            ),
            "words": datasets.List(
                {
                    "speaker": datasets.Value("string"),
                    "start": datasets.Value("float64"),
                    "end": datasets.Value("float64"),
                    "text": datasets.Value("string"),
                }
            ),
            "system_speaker": datasets.Value("string"),
        }
    )


def conversation_row(dialogue: Dialogue, *, start_s: float = 0.0, **label_kwargs: Any) -> dict[str, Any]:
    """One turn_taking_chunks row for a dialogue (labels computed by ``labels.chunk_labels``).

    Args:
        dialogue: the conversation; its ``audio_path`` is stored as the audio reference.
        start_s: time of the first chunk (0.0 is turneval's grid; 0.2 s the ESPnet recipe's).
        **label_kwargs: passed on to ``chunk_labels`` (e.g. ``backchannel_words``).
    """
    labelled = chunk_labels(dialogue, start_s=start_s, **label_kwargs)
    count = len(labelled)
    activity = dialogue.activity(CHUNK_HZ, count=count) if start_s == 0.0 else _shifted_activity(dialogue, start_s, count)
    words = []
    for k, spk_words in enumerate(dialogue.words or []):
        words += [{"speaker": SPEAKERS[k], "start": w.start, "end": w.end, "text": w.text} for w in spk_words]
    return {
        "conversation_id": dialogue.id,
        "audio_path": dialogue.audio_path or "",
        "duration": float(dialogue.duration or 0.0),
        "chunk_s": CHUNK_S,
        "first_chunk_s": float(start_s),
        "n_chunks": count,
        "labels": [int(i) for i in labelled.label_ids()],
        "floor": [int(i) for i in labelled.floor_ids()],
        "voice_activity_a": activity[0].tolist(),
        "voice_activity_b": activity[1].tolist(),
        "segments": [
            {"speaker": SPEAKERS[k], "start": s, "end": e} for k, spk in enumerate(dialogue.segments) for s, e in spk
        ],
        "words": sorted(words, key=lambda w: (w["start"], w["speaker"])),
        "system_speaker": "" if dialogue.system_speaker is None else SPEAKERS[dialogue.system_speaker],
    }


def _shifted_activity(dialogue: Dialogue, start_s: float, count: int) -> np.ndarray:
    """Activity on a chunk grid starting at ``start_s`` instead of 0."""
    shifted = [[(s - start_s, e - start_s) for s, e in spk if e > start_s] for spk in dialogue.segments]
    return np.stack([segments_to_activity(spk, count, CHUNK_HZ) for spk in shifted])


@dataclass
class TurnTakingChunksConfig(datasets.BuilderConfig):
    """Config of :class:`TurnTakingChunks`.

    Args:
        manifest: the dialogue manifest (JSON Lines, see ``builders.manifest``); or give
            ``data_dir`` holding a ``manifest.jsonl``.
        first_chunk_s: time of the first chunk (0.0 = turneval's grid, 0.2 = the recipe's).
        require_audio: fail on dialogues without an audio path (the sampler needs one).
        manifest_version: any string that changes when the manifest does (e.g. its size and
            modification time). The datasets cache keys a build on the config's arguments, not
            on the file's content, so without it a manifest that grew is served from the build
            of its older version.
    """

    manifest: str | None = None
    first_chunk_s: float = 0.0
    require_audio: bool = True
    manifest_version: str | None = None


class TurnTakingChunks(datasets.GeneratorBasedBuilder):
    """Builder of turn_taking_chunks from a dialogue manifest."""

    BUILDER_CONFIG_CLASS = TurnTakingChunksConfig
    BUILDER_CONFIGS = [TurnTakingChunksConfig(name="default")]
    DEFAULT_CONFIG_NAME = "default"
    VERSION = datasets.Version("1.0.0")

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description=_DESCRIPTION, features=chunk_features())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.skipped = SkipCounter()
        """Dialogues skipped by the last build, by reason (policy: ``builders.checks``)."""

    def _split_generators(self, dl_manager) -> list[datasets.SplitGenerator]:
        self.skipped = SkipCounter()
        generators = manifest_split_generators(self.config.manifest, self.config.data_dir)
        if self.config.require_audio and generators:
            check_audio_files(generators[0].gen_kwargs["manifest"])  # one manifest for all splits
        return generators

    def _generate_examples(self, manifest: str, split: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for _, dialogue in read_dialogue_manifest(manifest, split=split):
            if self.config.require_audio:
                if not dialogue.audio_path:
                    raise ValueError(f"{manifest}: dialogue {dialogue.id!r} has no audio_path (set require_audio=False to allow)")
                require_audio_file(dialogue, manifest)
            silent = silent_channels(dialogue)
            if silent:
                self.skipped.skip(SILENT_CHANNEL, f"{dialogue.id}: no speech on channel {'/'.join(silent)}")
                continue
            yield dialogue.id, conversation_row(dialogue, start_s=self.config.first_chunk_s)
        logger.info(f"turn_taking_chunks {split}: skipped {self.skipped.summary()}")
