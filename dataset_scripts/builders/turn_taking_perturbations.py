"""turn_taking_perturbations: natural / perturbed pairs for turn-taking naturalness (docs/datasets.md).

Each row is one pair: the same 20-25 s stretch of a conversation, once as recorded and once
with one TurnNat perturbation (late_response, early_entry, hold_instead_of_shift,
shift_instead_of_hold, excessive_backchannel). Both sides carry their stereo audio (WAV
bytes, or a path when ``audio_storage="path"``), speech segments, 50 Hz voice activity and
words, all edited together; the row also says what was edited (``edit``, JSON with the
TurnNat builder's keys, times in ms from the clip start) and in words (``description``).

Usage::

    from turneval.dataset_scripts.builders import TurnTakingPerturbations
    builder = TurnTakingPerturbations(cache_dir="cache", manifest="dialogues/manifest.jsonl", seed=0)
    builder.download_and_prepare()
    pairs = builder.as_dataset()["train"]
    natural = decode_audio(pairs[0]["natural_audio"])   # float32 [2, n] at 16 kHz
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import datasets
import numpy as np
import soundfile as sf

from ..audio import read_wav_bytes, wav_bytes
from ..dialogue import SPEAKERS, Dialogue
from ..files import atomic_write_bytes
from ..grids import FRAME_HZ, SAMPLE_RATE
from ..perturbations.audio_ops import TARGET_RMS_DBFS
from ..perturbations.edits import PERTURBATION_TYPES
from ..perturbations.pairs import MAX_CONTEXT_S, MIN_CONTEXT_S, PerturbationPair, iter_pairs
from .checks import SILENT_CHANNEL, SkipCounter, check_audio_files, require_audio_file, silent_channels
from .manifest import manifest_split_generators, read_dialogue_manifest, with_audio


logger = datasets.logging.get_logger(__name__)

_DESCRIPTION = "Natural vs perturbed turn-taking pairs (TurnNat §IV-A perturbations) with audio, voice activity and words."

_SEGMENT = {"speaker": datasets.Value("string"), "start": datasets.Value("float64"), "end": datasets.Value("float64")}
_WORD = {**_SEGMENT, "text": datasets.Value("string")}
_AUDIO = {"bytes": datasets.Value("binary"), "path": datasets.Value("string")}


def perturbation_features() -> datasets.Features:
    """The row schema of turn_taking_perturbations."""
    side = {}
    for name in ("natural", "perturbed"):
        side.update({
            f"{name}_audio": _AUDIO,
            f"{name}_duration": datasets.Value("float64"),
            f"{name}_segments": datasets.List(_SEGMENT),
            f"{name}_voice_activity": datasets.List(datasets.List(datasets.Value("int8"))),
            f"{name}_words": datasets.List(_WORD),
        })
    return datasets.Features({
        "pair_id": datasets.Value("string"),
        "conversation_id": datasets.Value("string"),
        "perturbation_type": datasets.ClassLabel(names=list(PERTURBATION_TYPES)),
        "description": datasets.Value("string"),
        "edit": datasets.Value("string"),
        "crop": datasets.Value("string"),
        "sample_rate": datasets.Value("int32"),
        **side,
    })


def decode_audio(entry: Mapping[str, Any]) -> np.ndarray:
    """A row's ``*_audio`` entry (bytes or path) -> float32 [2, n] at 16 kHz."""
    if entry.get("bytes"):
        return read_wav_bytes(entry["bytes"])
    if entry.get("path"):
        data, _ = sf.read(entry["path"], dtype="float32", always_2d=True)
        return np.ascontiguousarray(data.T)
    raise ValueError("audio entry has neither bytes nor path")


def _side(dialogue: Dialogue, name: str, audio: dict[str, Any]) -> dict[str, Any]:
    words = [
        {"speaker": SPEAKERS[k], "start": w.start, "end": w.end, "text": w.text}
        for k, spk in enumerate(dialogue.words or []) for w in spk
    ]
    return {
        f"{name}_audio": audio,
        f"{name}_duration": float(dialogue.duration),
        f"{name}_segments": [{"speaker": SPEAKERS[k], "start": s, "end": e} for k, spk in enumerate(dialogue.segments) for s, e in spk],
        f"{name}_voice_activity": dialogue.activity(FRAME_HZ).tolist(),
        f"{name}_words": sorted(words, key=lambda w: (w["start"], w["speaker"])),
    }


def pair_row(pair: PerturbationPair, conversation_id: str, *, audio_dir: str | Path | None = None, wav_subtype: str = "PCM_16") -> dict[str, Any]:
    """One dataset row; audio as WAV bytes, or written under ``audio_dir`` and stored by path."""
    audio = {}
    for name, dialogue in (("natural", pair.natural), ("perturbed", pair.perturbed)):
        data = wav_bytes(dialogue.audio, SAMPLE_RATE, subtype=wav_subtype)
        if audio_dir is None:
            audio[name] = {"bytes": data, "path": f"{pair.pair_id}__{name}.wav"}
        else:
            path = Path(audio_dir) / f"{pair.pair_id}__{name}.wav"
            atomic_write_bytes(path, data)
            audio[name] = {"bytes": None, "path": str(path.resolve())}
    return {
        "pair_id": pair.pair_id,
        "conversation_id": conversation_id,
        "perturbation_type": pair.perturbation_type,
        "description": pair.description,
        "edit": json.dumps(pair.edit),
        "crop": json.dumps({**pair.crop, "loudness": pair.loudness}),
        "sample_rate": SAMPLE_RATE,
        **_side(pair.natural, "natural", audio["natural"]),
        **_side(pair.perturbed, "perturbed", audio["perturbed"]),
    }


@dataclass
class TurnTakingPerturbationsConfig(datasets.BuilderConfig):
    """Config of :class:`TurnTakingPerturbations`.

    Args:
        manifest: the dialogue manifest (or ``data_dir`` with ``manifest.jsonl``); the
            dialogues need audio (``audio_path``).
        types: perturbation types to attempt for every dialogue.
        seed: makes every draw (candidate, delay, crop) reproducible.
        min_context_s, max_context_s: crop length range (TurnNat: 20-25 s).
        normalize: scale each clip to ``target_rms_dbfs`` RMS (peak ceiling -1 dBFS).
        audio_storage: "bytes" (WAV in the row) or "path" (WAV files under ``audio_dir``).
        wav_subtype: soundfile subtype of the stored WAVs ("PCM_16" or "FLOAT").
        edit_params: per perturbation type, keyword arguments of its edit function, to
            depart from the reference defaults (e.g. ``{"hold_instead_of_shift":
            {"max_edited_hold_gap_ms": 4000.0}}``; see ``perturbations.edits``).
    """

    manifest: str | None = None
    types: tuple[str, ...] = PERTURBATION_TYPES
    seed: int = 0
    min_context_s: float = MIN_CONTEXT_S
    max_context_s: float = MAX_CONTEXT_S
    normalize: bool = True
    target_rms_dbfs: float = TARGET_RMS_DBFS
    audio_storage: str = "bytes"
    audio_dir: str | None = None
    wav_subtype: str = "PCM_16"
    edit_params: dict[str, dict[str, Any]] | None = None


class TurnTakingPerturbations(datasets.GeneratorBasedBuilder):
    """Builder of natural / perturbed pairs from a dialogue manifest."""

    BUILDER_CONFIG_CLASS = TurnTakingPerturbationsConfig
    BUILDER_CONFIGS = [TurnTakingPerturbationsConfig(name="default")]
    DEFAULT_CONFIG_NAME = "default"
    VERSION = datasets.Version("1.0.0")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.skipped = SkipCounter()
        """Skips of the last build by reason: ``silent_channel`` per dialogue, ``no_candidate``
        and ``crop_too_short`` per (dialogue, type) (policy: ``builders.checks``)."""

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description=_DESCRIPTION, features=perturbation_features())

    def _split_generators(self, dl_manager) -> list[datasets.SplitGenerator]:
        cfg = self.config
        unknown = [t for t in cfg.types if t not in PERTURBATION_TYPES]
        if unknown:
            raise ValueError(f"unknown perturbation types {unknown}; choose from {list(PERTURBATION_TYPES)}")
        if cfg.audio_storage not in ("bytes", "path"):
            raise ValueError(f"audio_storage must be 'bytes' or 'path', got {cfg.audio_storage!r}")
        if cfg.audio_storage == "path" and not cfg.audio_dir:
            raise ValueError("audio_storage='path' needs audio_dir (where the pair WAVs are written)")
        self.skipped = SkipCounter()
        generators = manifest_split_generators(cfg.manifest, cfg.data_dir)
        if generators:
            check_audio_files(generators[0].gen_kwargs["manifest"])  # one manifest for all splits
        return generators

    def _usable_dialogues(self, manifest: str, split: str) -> Iterator[Dialogue]:
        """The split's dialogues with audio loaded; silent-channel ones counted and left out."""
        for _, dialogue in read_dialogue_manifest(manifest, split=split):
            require_audio_file(dialogue, manifest)
            silent = silent_channels(dialogue)
            if silent:
                self.skipped.skip(SILENT_CHANNEL, f"{dialogue.id}: no speech on channel {'/'.join(silent)}")
                continue
            yield with_audio(dialogue)

    def _generate_examples(self, manifest: str, split: str) -> Iterator[tuple[str, dict[str, Any]]]:
        cfg = self.config
        skipped: list[str] = []
        counts: dict[str, int] = {}
        pairs = iter_pairs(
            self._usable_dialogues(manifest, split), cfg.types, cfg.seed, skipped=skipped, skip_counts=counts,
            min_context_s=cfg.min_context_s, max_context_s=cfg.max_context_s,
            normalize=cfg.normalize, target_rms_dbfs=cfg.target_rms_dbfs, edit_params=cfg.edit_params,
        )
        audio_dir = cfg.audio_dir if cfg.audio_storage == "path" else None
        for pair in pairs:
            yield pair.pair_id, pair_row(pair, pair.natural.id, audio_dir=audio_dir, wav_subtype=cfg.wav_subtype)
        for detail in skipped:
            logger.info(f"turn_taking_perturbations: skipped {detail}")
        self.skipped.update(counts)
        logger.info(f"turn_taking_perturbations {split}: skipped {self.skipped.summary()}")
