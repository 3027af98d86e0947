"""Corpus readers: every format becomes a :class:`~turneval.dataset_scripts.dialogue.Dialogue`.

One module per format; :func:`read_dialogue` picks the reader from the file name. Every
reader fails on malformed input with ``file:line: problem`` (a DialogueError).

==============  ===========================================  =========================
format          files                                        reader
==============  ===========================================  =========================
switchboard     ``swNNNN[AB]-ms98-a-word.text`` (+ trans)    :func:`read_switchboard`
fisher          ``fe_03_NNNNN.txt``                          :func:`read_fisher`
harper_valley   ``transcript/SID.json`` (+ ``../audio``)     :func:`read_harper_valley`
rttm            ``*.rttm`` (+ stereo audio)                  :func:`read_rttm`
word_json       two Whisper-style ``*.json`` or a combined   :func:`read_word_json`
vad_csv         ``*.csv`` with ``speaker,start,end``         :func:`read_vad_csv`
seamless        stereo wav + ``*.json`` sidecar, or a pair   :func:`read_seamless`
turneval        ``Dialogue.save_annotations`` JSON           :func:`read_annotations`
audio           stereo wav/flac/ogg only: speech by VAD      :func:`dialogue_from_audio`
==============  ===========================================  =========================

A corpus of turneval annotation files (a folder of ``NAME.json`` + ``NAME.wav`` pairs, or a
``manifest.csv`` as ``turneval synth`` writes it) is read by :func:`read_annotated_corpus`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..dialogue import Dialogue, DialogueError
from ..vad import dialogue_from_audio
from ._common import AUDIO_SUFFIXES, NON_SPEECH_TOKENS, load_json, located
from .annotations import annotation_pairs, read_annotated_corpus, read_annotations
from .fisher import read_fisher
from .harper_valley import read_harper_valley
from .rttm import read_rttm, read_rttm_all
from .seamless import _PARTICIPANT_RE as _SEAMLESS_PARTICIPANT_RE
from .seamless import read_seamless, read_seamless_pair
from .switchboard import FILE_RE as SWITCHBOARD_FILE_RE
from .switchboard import (
    iter_switchboard_calls,
    parse_ms98_lines,
    read_split_ids,
    read_switchboard,
    switchboard_from_lines,
    switchboard_word_file,
)
from .vad_csv import format_vad_csv, read_vad_csv, write_vad_csv
from .word_json import read_word_json


def _audio_reader(path: str | Path, *, load_audio: bool = True, **kwargs: Any) -> Dialogue:
    """Stereo audio only: speech found by VAD (``load_audio=False`` streams it and keeps no audio)."""
    return dialogue_from_audio(path, keep_audio=load_audio, **kwargs)


READERS: dict[str, Callable[..., Dialogue]] = {
    "switchboard": read_switchboard,
    "fisher": read_fisher,
    "rttm": read_rttm,
    "word_json": read_word_json,
    "vad_csv": read_vad_csv,
    "seamless": read_seamless,
    "turneval": read_annotations,
    "audio": _audio_reader,
}
"""Format name -> reader. Each reader takes the path first, then keyword options."""


def _looks_like_annotations(data: dict) -> bool:
    """turneval's own JSON: ``Dialogue.to_dict`` keys, or ``segments`` as two lists (one per speaker)."""
    segments = data["segments"]
    two_lists = isinstance(segments, list) and len(segments) == 2 and all(isinstance(s, list) for s in segments)
    return two_lists or ("id" in data and "duration" in data) or bool({"audio_path", "system_speaker"} & data.keys())


def _guess_json(path: Path) -> str:
    data = load_json(path)
    if isinstance(data, dict):
        if "participants" in data or "metadata:transcript" in data or "metadata:vad" in data:
            return "seamless"
        if "channels" in data or ("A" in data and "B" in data):
            return "word_json"
        if "segments" in data and _looks_like_annotations(data):
            return "turneval"
        if "chunks" in data or "segments" in data:
            raise DialogueError(
                f"{path}: holds one channel's word timings; pass both channels: read_dialogue([channel0.json, channel1.json])"
            )
    raise located(path, getattr(data, "line", None), "unknown JSON layout; pass format= (one of " + ", ".join(READERS) + ")")


def guess_format(path: str | Path | Sequence[str | Path]) -> str:
    """The format name for a path (or a pair of per-channel JSON paths), from its name and content."""
    if not isinstance(path, (str, Path)):
        paths = [Path(p) for p in path]
        if len(paths) == 2 and all(p.suffix.lower() == ".json" for p in paths):
            return "word_json"
        raise DialogueError(f"cannot guess the format of {', '.join(map(str, paths))}: only a pair of per-channel JSON files is read together")
    path = Path(path)
    suffix = path.suffix.lower()
    if SWITCHBOARD_FILE_RE.match(path.name):
        return "switchboard"
    if suffix == ".rttm":
        return "rttm"
    if suffix == ".csv":
        return "vad_csv"
    if suffix == ".txt":
        return "fisher"
    if suffix == ".json":
        return _guess_json(path)
    if suffix in AUDIO_SUFFIXES:
        return "seamless" if path.with_suffix(".json").is_file() else "audio"
    raise DialogueError(f"{path}: cannot tell the format from the name; pass format= (one of {', '.join(READERS)})")


def read_dialogue(path: str | Path | Sequence[str | Path], format: str | None = None, **options: Any) -> Dialogue:
    """Read a conversation in any supported format (guessed from the name unless ``format`` is given).

    ``options`` go to the format's reader (e.g. ``audio=``, ``system_speaker=``, ``speaker_map=``).
    """
    name = format or guess_format(path)
    if name not in READERS:
        raise ValueError(f"unknown format {name!r}; choose one of {', '.join(READERS)}")
    if isinstance(path, (str, Path)) and not Path(path).exists():
        raise DialogueError(f"{path}: file not found")
    return READERS[name](path, **options)


def _corpus_key(path: Path, name: str) -> str:
    """Files that hold the same conversation share a key (both sides, both participants)."""
    if name == "switchboard":
        match = SWITCHBOARD_FILE_RE.match(path.name)
        return f"switchboard:{path.parent / match['conv']}:{match['kind']}"
    if name == "seamless":
        match = _SEAMLESS_PARTICIPANT_RE.match(path.stem)
        if match and path.suffix.lower() == ".json":
            return f"seamless:{path.parent / match['interaction']}"
        return f"seamless:{path.with_suffix('')}"  # sidecar json and its wav
    return f"{name}:{path}"


def read_corpus(paths: Iterable[str | Path], format: str | None = None, **options: Any) -> Iterator[Dialogue]:
    """Read many files, one Dialogue per conversation.

    Files of the same conversation (the A and B sides of a Switchboard call, the two
    participant files of a Seamless pair, a sidecar json and its wav) give one Dialogue.
    Typical use: ``read_corpus(sorted(Path("swb_ms98").rglob("*-word.text")))``. ``options``
    go to every reader (``load_audio=False`` keeps large corpora light).
    """
    seen: set[str] = set()
    for path in paths:
        path = Path(path)
        name = format or guess_format(path)
        key = _corpus_key(path, name)
        if key in seen:
            continue
        seen.add(key)
        yield read_dialogue(path, format=name, **options)


__all__ = [
    "NON_SPEECH_TOKENS",
    "READERS",
    "annotation_pairs",
    "guess_format",
    "iter_switchboard_calls",
    "parse_ms98_lines",
    "read_annotated_corpus",
    "read_annotations",
    "read_corpus",
    "read_dialogue",
    "read_fisher",
    "read_harper_valley",
    "read_rttm",
    "read_rttm_all",
    "read_seamless",
    "read_seamless_pair",
    "read_split_ids",
    "read_switchboard",
    "read_vad_csv",
    "read_word_json",
    "switchboard_from_lines",
    "switchboard_word_file",
    "format_vad_csv",
    "write_vad_csv",
]
