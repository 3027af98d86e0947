"""Write a synthetic corpus: one stereo audio file and one JSON ground truth per conversation.

Layout of ``out_dir``::

    <id>.wav        stereo 16 kHz 16-bit PCM (A on channel 0, B on channel 1); or .flac
    <id>.json       Dialogue.to_dict() (segments, words, system_speaker, metadata)
    manifest.csv    one row per conversation

Every file is written atomically (temp file, then rename), so an interrupted run leaves no
half-written files.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from tqdm.auto import tqdm

from ..audio import write_audio
from ..dialogue import Dialogue
from ..files import atomic_write_text
from ..grids import SAMPLE_RATE
from ..readers.annotations import read_annotations
from .generator import generate_dialogue
from .timing import STYLES


AUDIO_FORMATS = {"wav": "PCM_16", "flac": "PCM_16"}
"""``audio_format`` -> soundfile subtype (the container follows the file suffix)."""
MANIFEST_COLUMNS = (
    "id", "audio", "annotations", "seed", "style", "system_speaker", "duration",
    "turns", "backchannels", "interruptions", "floor_taking_interruptions",
)


def conversation_seed(seed: int, index: int) -> int:
    """The seed of conversation ``index`` of a corpus drawn with ``seed`` (independent streams)."""
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1)[0])


def write_dialogue(dialogue: Dialogue, out_dir: str | Path, audio_format: str = "wav") -> tuple[Path, Path]:
    """Write ``dialogue``'s audio and annotations to ``out_dir/<id>.<format>`` and ``<id>.json``.

    The JSON's ``audio_path`` is the audio file name, relative to the JSON file.
    """
    if audio_format not in AUDIO_FORMATS:
        raise ValueError(f"audio_format must be one of {', '.join(AUDIO_FORMATS)}, got {audio_format!r}")
    if dialogue.audio is None:
        raise ValueError(f"dialogue {dialogue.id!r} has no audio to write")
    out_dir = Path(out_dir)
    audio_path = out_dir / f"{dialogue.id}.{audio_format}"
    json_path = out_dir / f"{dialogue.id}.json"
    write_audio(audio_path, np.clip(dialogue.audio, -1.0, 1.0), SAMPLE_RATE, subtype=AUDIO_FORMATS[audio_format])
    dialogue.audio_path = audio_path.name
    dialogue.save_annotations(json_path)
    return audio_path, json_path


@dataclass(frozen=True)
class CorpusRecipe:
    """What each conversation of a corpus is drawn from: its length (s), the styles to draw
    from (one per conversation, uniformly), the system channel of the system styles (None:
    drawn per conversation) and the background noise (SNR in dB; None: clean audio)."""

    duration_s: float = 120.0
    styles: Sequence[str] = ("human",)
    system_speaker: int | None = None
    snr_db: float | None = None

    def check(self) -> None:
        unknown = [s for s in self.styles if s not in STYLES]
        if not self.styles or unknown:
            raise ValueError(f"styles must be a non-empty list from {', '.join(STYLES)}, got {list(self.styles)!r}")


def generate_corpus(
    out_dir: str | Path,
    n: int,
    seed: int,
    *,
    recipe: CorpusRecipe = CorpusRecipe(),
    audio_format: str = "wav",
    progress: bool = True,
) -> Path:
    """Generate ``n`` conversations into ``out_dir`` and return the path of its manifest.csv.

    Args:
        out_dir: output folder (created if needed).
        n: number of conversations.
        seed: corpus seed; conversation i uses ``conversation_seed(seed, i)`` (in the manifest),
            so any single conversation can be regenerated with ``generate_dialogue``.
        recipe: length, styles, system channel and noise of the conversations (:class:`CorpusRecipe`).
        audio_format: "wav" or "flac".
        progress: show a tqdm progress bar.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    recipe.check()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    picker = np.random.default_rng(np.random.SeedSequence([int(seed), 1 << 20]))
    rows = []
    for i in tqdm(range(n), desc="synthetic conversations", unit="conv", disable=not progress):
        style = recipe.styles[int(picker.integers(len(recipe.styles)))]
        drawn = int(picker.integers(2)) if recipe.system_speaker is None else recipe.system_speaker
        dialogue = generate_dialogue(
            conversation_seed(seed, i),
            duration_s=recipe.duration_s,
            style=style,
            system_speaker=None if style == "human" else drawn,
            snr_db=recipe.snr_db,
            dialogue_id=f"synth_{seed}_{i:05d}",
        )
        rows.append(_manifest_row(dialogue, write_dialogue(dialogue, out_dir, audio_format), conversation_seed(seed, i), style))
    manifest = out_dir / "manifest.csv"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(manifest, buffer.getvalue())
    return manifest


def _manifest_row(dialogue: Dialogue, written: tuple[Path, Path], conv_seed: int, style: str) -> dict[str, object]:
    """The manifest.csv row of a written conversation."""
    audio_path, json_path = written
    counts = dialogue.metadata["counts"]
    return {
        "id": dialogue.id,
        "audio": audio_path.name,
        "annotations": json_path.name,
        "seed": conv_seed,
        "style": style,
        "system_speaker": "" if dialogue.system_speaker is None else dialogue.system_speaker,
        "duration": dialogue.duration,
        **{key: counts[key] for key in MANIFEST_COLUMNS[7:]},
    }


def load_dialogue(json_path: str | Path) -> Dialogue:
    """Read a conversation written by :func:`write_dialogue` (annotations and audio).

    The dialogue's ``audio_path`` stays as written (the file name, relative to the JSON), so
    saving the annotations beside the audio again writes the same file.
    """
    return read_annotations(json_path, require_audio=True, resolve_audio_path=False)
