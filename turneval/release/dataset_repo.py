"""A data set repo: Parquet shards with their features and configs in the card's YAML.

Each set is built by its own builder (``dataset_scripts/builders``) from the conversations of
the chosen sources (:mod:`.dataset_sources`), one split per source, and written as
``data/<split>-00000-of-00001.parquet``. The card (``model_cards/datasets/<name>/README.md``)
gets ``configs`` and ``dataset_info`` in its front matter, so ``load_dataset("ORG/NAME")``
needs no script. turn_taking_chunks rows refer to their audio, which the repo carries under
``audio/<split>/``; the other two sets embed their clips as WAV bytes.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from .cards import ReleaseLinks
from .dataset_card import dataset_card
from .dataset_sources import SOURCES, real_root
from .plan import ReleaseError, RepoPlan


SHARD = "data/{split}-00000-of-00001.parquet"
QUESTIONS_PER_CLASS = 5
"""Yes (and no) items per task in the released question set: a sample to try a model on, kept
small because every item carries its clip (``turneval dataset`` builds the full set)."""


def read_sources(names: tuple[str, ...], root: str | Path | None, scratch: Path) -> dict[str, list]:
    """Source name -> its conversations (Dialogues with ``audio_path``; audio a source assembles
    is written to ``scratch``, which must outlive the release)."""
    return {name: SOURCES[name].read(real_root(root), scratch) for name in names}


def audio_in_repo(split: str, audio_path: str) -> str:
    """Where a conversation's audio lies in the turn_taking_chunks repo (FLAC, as the source's sample rate)."""
    return f"audio/{split}/{Path(audio_path).stem}.flac"


def build(name: str, manifest: Path, cache: Path, *, questions_per_class: int = QUESTIONS_PER_CLASS) -> dict[str, Any]:
    """Split -> Dataset of data set ``name`` built from ``manifest`` (one split per source); a source
    the builder makes no row from (AMI has no 20 s crop that starts and ends in mutual silence) is
    left out."""
    from turneval.dataset_scripts.builders import TurnTakingChunks, TurnTakingPerturbations, TurnTakingQuestions

    if name == "turn_taking_chunks":
        builder = TurnTakingChunks(cache_dir=str(cache), manifest=str(manifest))
    elif name == "turn_taking_perturbations":
        builder = TurnTakingPerturbations(cache_dir=str(cache), manifest=str(manifest), seed=0)
    elif name == "turn_taking_questions":
        builder = TurnTakingQuestions(cache_dir=str(cache), manifest=str(manifest), seed=0, max_per_class=questions_per_class)
    else:
        raise ReleaseError(f"unknown data set {name!r}")
    builder.download_and_prepare()
    return {split: builder.as_dataset(split=split) for split in builder.info.splits if builder.info.splits[split].num_examples}


def _relocate_audio_paths(dataset: Any, split_of: dict[str, str]) -> Any:
    """Rows' ``audio_path`` (an absolute path on this machine) -> the path inside the chunks repo."""
    if "audio_path" not in dataset.column_names:
        return dataset
    return dataset.map(
        lambda row: {"audio_path": audio_in_repo(split_of[row["conversation_id"]], row["audio_path"]) if row["audio_path"] else ""},
        desc=None,
    )


def _copy_audio(dialogues: dict[str, list], out: Path) -> None:
    import soundfile as sf

    for split, items in dialogues.items():
        for dialogue in items:
            data, rate = sf.read(dialogue.audio_path, dtype="int16", always_2d=True)
            target = out / audio_in_repo(split, dialogue.audio_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            sf.write(str(target), data, rate, format="FLAC", subtype="PCM_16")


def write_dataset_repo(
    plan: RepoPlan, out: Path, dialogues: dict[str, list], *, questions_per_class: int = QUESTIONS_PER_CLASS, links: ReleaseLinks | None = None
) -> Path:
    """Write the data set repo of ``plan`` into ``out`` (a new folder) from ``dialogues`` (source -> list);
    ``links`` says where the card's links point on the Hub (default: this repo alone released)."""
    from turneval.dataset_scripts.builders import write_dialogue_manifest

    out.mkdir(parents=True)
    split_of = {d.id: split for split, items in dialogues.items() for d in items}
    with tempfile.TemporaryDirectory(prefix="turneval-release-") as work:
        manifest = write_dialogue_manifest([d for items in dialogues.values() for d in items], Path(work) / "manifest.jsonl", split=split_of)
        built = build(plan.name, manifest, Path(work) / "cache", questions_per_class=questions_per_class)
        if not built:
            raise ReleaseError(f"{plan.name}: the builder made no rows from the sources {', '.join(dialogues)}")
        sizes: dict[str, int] = {}
        for split in built:
            built[split] = _relocate_audio_paths(built[split], split_of)
            target = out / SHARD.format(split=split)
            target.parent.mkdir(parents=True, exist_ok=True)
            built[split].to_parquet(str(target))
            sizes[split] = built[split].data.nbytes
        card = dataset_card(plan, built, sizes, list(dialogues), links or ReleaseLinks.of([plan]))
    if plan.name == "turn_taking_chunks":
        _copy_audio(dialogues, out)
    (out / "README.md").write_text(card, encoding="utf-8")
    return out
