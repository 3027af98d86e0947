"""Where the Space finds its audio: the bundled example conversations, the natural/perturbed
pairs of the naturalness test, and the rendered SWOZ stimuli.

Pairs come from :func:`turneval.dataset_scripts.perturbations.pairs.iter_pairs` run over the
bundled examples (written once into a cache folder), or from a folder made earlier by
:func:`build_pair_stimuli` (``$TURNEVAL_SPACE_PAIRS``): ``pairs.json`` beside the clips, one
entry per pair with ``pair_id``, ``perturbation_type``, ``description``, ``natural`` and
``perturbed`` (audio paths relative to the folder).
"""
from __future__ import annotations

import json
import os
import random
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

from turneval.dataset_scripts.audio import load_audio, write_audio
from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.files import atomic_write_text, read_json
from turneval.dataset_scripts.perturbations.pairs import iter_pairs
from turneval.dataset_scripts.readers import read_annotations


EXAMPLES_ENV_VAR = "TURNEVAL_SPACE_EXAMPLES"
PAIRS_ENV_VAR = "TURNEVAL_SPACE_PAIRS"
CACHE_ENV_VAR = "TURNEVAL_SPACE_CACHE"
MANIFEST = "pairs.json"


class StimulusError(ValueError):
    """Stimuli are missing or malformed; the message names the file."""


def examples_dir() -> Path | None:
    """``$TURNEVAL_SPACE_EXAMPLES``, else ``examples/`` beside app.py (a Space repo), else the
    repository's ``examples/`` (a checkout); None when none exists."""
    override = os.environ.get(EXAMPLES_ENV_VAR)
    here = Path(__file__).resolve().parent
    for candidate in ([Path(override)] if override else []) + [here / "examples", here.parent / "examples"]:
        if candidate.is_dir() and any(candidate.glob("*.wav")):
            return candidate
    return None


def example_files() -> list[Path]:
    """The bundled example conversations (stereo wav files), sorted by name."""
    folder = examples_dir()
    return sorted(folder.glob("*.wav")) if folder is not None else []


def example_dialogues(folder: Path | None = None) -> list[Dialogue]:
    """The examples that have annotations (``<name>.json`` beside ``<name>.wav``), audio loaded."""
    folder = folder if folder is not None else examples_dir()
    if folder is None:
        return []
    return [read_annotations(path) for path in sorted(Path(folder).glob("*.json")) if path.with_suffix(".wav").is_file()]


def cache_dir() -> Path:
    """``$TURNEVAL_SPACE_CACHE``, else ``<temp>/turneval_space/cache``."""
    override = os.environ.get(CACHE_ENV_VAR)
    path = Path(override) if override else Path(tempfile.gettempdir()) / "turneval_space" / "cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass(frozen=True)
class PairStimulus:
    """One natural/perturbed pair as two audio files."""

    pair_id: str
    perturbation_type: str
    description: str
    natural: Path
    perturbed: Path


def build_pair_stimuli(dialogues: Iterable[Dialogue], out_dir: str | Path, *, seeds: Sequence[int] = (0,)) -> list[PairStimulus]:
    """Cut natural/perturbed pairs (every type that fits) and write them with ``pairs.json``.

    A pair made by more than one seed with the same id gets the seed in its id.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    dialogues = list(dialogues)
    stimuli: list[PairStimulus] = []
    seen: set[str] = set()
    for seed in seeds:
        for pair in iter_pairs(dialogues, seed=seed):
            pair_id = pair.pair_id if pair.pair_id not in seen else f"{pair.pair_id}__seed{seed}"
            if pair_id in seen:
                continue
            seen.add(pair_id)
            paths = {}
            for kind, dialogue in (("natural", pair.natural), ("perturbed", pair.perturbed)):
                paths[kind] = out_dir / f"{pair_id}__{kind}.wav"
                write_audio(paths[kind], dialogue.audio)
            stimuli.append(PairStimulus(pair_id, pair.perturbation_type, pair.description, paths["natural"], paths["perturbed"]))
    manifest = [{**asdict(s), "natural": s.natural.name, "perturbed": s.perturbed.name} for s in stimuli]
    atomic_write_text(out_dir / MANIFEST, json.dumps(manifest, indent=1))
    return stimuli


def load_pair_folder(folder: str | Path) -> list[PairStimulus]:
    """Pairs listed in ``<folder>/pairs.json`` (see the module docstring)."""
    folder = Path(folder)
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise StimulusError(f"{manifest}: no pair manifest; build one with build_pair_stimuli()")
    entries = read_json(manifest, error=StimulusError)
    stimuli = []
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        try:
            stimulus = PairStimulus(
                pair_id=str(entry["pair_id"]),
                perturbation_type=str(entry["perturbation_type"]),
                description=str(entry.get("description", "")),
                natural=folder / entry["natural"],
                perturbed=folder / entry["perturbed"],
            )
        except (KeyError, TypeError) as err:
            raise StimulusError(f"{manifest}: entry {i} lacks {err} (needs pair_id, perturbation_type, natural, perturbed)") from None
        for path in (stimulus.natural, stimulus.perturbed):
            if not path.is_file():
                raise StimulusError(f"{manifest}: entry {i} ({stimulus.pair_id}): audio file {path} not found")
        stimuli.append(stimulus)
    if not stimuli:
        raise StimulusError(f"{manifest}: no pairs listed (expected a JSON list of pair entries)")
    return stimuli


def pair_stimuli() -> list[PairStimulus]:
    """``$TURNEVAL_SPACE_PAIRS`` if set, else pairs cut from the bundled examples (cached)."""
    override = os.environ.get(PAIRS_ENV_VAR)
    if override:
        return load_pair_folder(override)
    folder = cache_dir() / "pairs"
    if (folder / MANIFEST).is_file():
        try:
            return load_pair_folder(folder)
        except StimulusError:
            pass  # a stale or partial cache: rebuild it below
    dialogues = example_dialogues()
    if not dialogues:
        raise StimulusError(f"no pairs: set ${PAIRS_ENV_VAR} to a pair folder, or ship examples/ (wav + json) beside app.py")
    return build_pair_stimuli(dialogues, folder)


def serve_pair(pair: PairStimulus, natural_position: str, out_root: str | Path) -> tuple[Path, Path]:
    """The pair's two clips as the rater gets them: ``clip_A.wav`` and ``clip_B.wav`` in a fresh
    folder with a random name, equally long (the shorter is padded with silence at its end).

    Nothing the browser sees (URL, download name, duration) says which clip is natural: the
    clip files of a pair folder are named after their condition, and a perturbation such as a
    late response changes a clip's length.
    """
    import tempfile

    import numpy as np


    if natural_position not in ("A", "B"):
        raise ValueError(f"natural_position must be 'A' or 'B', got {natural_position!r}")
    natural, sr = load_audio(pair.natural, target_sr=None)
    perturbed, sr_p = load_audio(pair.perturbed, target_sr=None)
    if sr_p != sr or natural.shape[0] != perturbed.shape[0]:
        raise StimulusError(f"{pair.pair_id}: the natural and perturbed clips differ in rate or channels ({sr} vs {sr_p} Hz)")
    n = max(natural.shape[1], perturbed.shape[1])
    natural, perturbed = (np.pad(x, ((0, 0), (0, n - x.shape[1]))) for x in (natural, perturbed))
    folder = Path(tempfile.mkdtemp(prefix="analysis_pair_", dir=out_root))  # swept with the analysis outputs
    clips = (natural, perturbed) if natural_position == "A" else (perturbed, natural)
    paths = (folder / "clip_A.wav", folder / "clip_B.wav")
    for path, audio in zip(paths, clips):
        write_audio(path, audio, sr)
    return paths


def choose_pair(stimuli: Sequence[PairStimulus], answered: set[str], rng: random.Random) -> tuple[PairStimulus, str]:
    """A random pair this rater has not answered (any pair once all are answered) and the
    position ('A' or 'B') of its natural clip, drawn at random."""
    if not stimuli:
        raise StimulusError("no pairs to play")
    fresh = [s for s in stimuli if s.pair_id not in answered]
    pair = rng.choice(fresh or list(stimuli))
    return pair, rng.choice(("A", "B"))


__all__ = [
    "PairStimulus",
    "StimulusError",
    "build_pair_stimuli",
    "cache_dir",
    "choose_pair",
    "example_dialogues",
    "example_files",
    "examples_dir",
    "load_pair_folder",
    "pair_stimuli",
    "serve_pair",
]
