"""Seamless Interaction style recordings: audio plus per-participant transcript JSON.

The public Seamless Interaction release stores one file set per participant: a mono
``<interaction>_<participant>.wav`` and a ``.json`` with, among others::

    {"id": "V00_S0809_I00000582_P0947",
     "metadata:transcript": [{"transcript": "so how was it", "start": 1.02, "end": 2.3,
                              "words": [{"word": "so", "start": 1.02, "end": 1.2, "score": 0.98}, ...]}],
     "metadata:vad": [{"start": 1.0, "end": 2.35}, ...]}

turneval reads two layouts:

1. **Sidecar** (one stereo wav + one json with the same stem): the json lists both
   participants, each with the release's own fields and the channel it occupies::

       {"id": "V00_S0809_I00000582",
        "audio": "V00_S0809_I00000582.wav",          (optional; default: same stem, .wav/.flac)
        "system_channel": null,                      (optional: 0 or 1 for human-AI sessions)
        "participants": [
          {"participant_id": "P0947", "channel": 0,
           "metadata:transcript": [...], "metadata:vad": [...]},
          {"participant_id": "P0948", "channel": 1, ...}]}

2. **Release pair**: the two participants' own json files (each with its mono wav of the
   same stem). Pass one of them; the partner is the other ``<interaction>_<P...>.json`` in
   the folder. Participants are ordered by file name (channel 0 first).

Segments come from ``segments_from``: ``"words"`` (union of word spans), ``"transcript"``
(utterance spans), ``"vad"`` (``metadata:vad``), or ``"auto"``: words if the participant has
any, else utterance spans, else VAD.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..audio import audio_duration, load_two_mono
from ..dialogue import Dialogue, DialogueError, Word
from ._common import (
    AUDIO_SUFFIXES,
    PathLike,
    RecordingInput,
    audio_beside,
    build_dialogue,
    line_of,
    load_json,
    located,
    parse_span,
    require,
    require_list,
    segments_from_words,
)


TRANSCRIPT_KEY = "metadata:transcript"
VAD_KEY = "metadata:vad"
SEGMENT_SOURCES = ("auto", "words", "transcript", "vad")
_PARTICIPANT_RE = re.compile(r"^(?P<interaction>.+)_(?P<participant>P[^_]+)$")


def _spans(items: Any, path: Path, parent: Any, what: str) -> list[tuple[float, float]]:
    items = require_list(items, path, line_of(parent), what)
    return [
        parse_span(require(i, "start", path, what), require(i, "end", path, what), path, line_of(i, line_of(items)))
        for i in items
    ]


def participant_speech(
    node: Any, path: PathLike, segments_from: str = "auto"
) -> tuple[list[tuple[float, float]], list[Word], str]:
    """Segments, words and the source used, for one participant object."""
    if segments_from not in SEGMENT_SOURCES:
        raise ValueError(f"segments_from must be one of {SEGMENT_SOURCES}, got {segments_from!r}")
    path = Path(path)
    if not isinstance(node, dict):
        raise located(path, line_of(node), f"a participant must be a JSON object, got {type(node).__name__}")
    utterances = require_list(node.get(TRANSCRIPT_KEY, []), path, line_of(node), f"{TRANSCRIPT_KEY!r}")
    words: list[Word] = []
    for utterance in utterances:
        if not isinstance(utterance, dict):
            raise located(path, line_of(utterance, line_of(utterances)), "a transcript entry must be a JSON object")
        for item in require_list(utterance.get("words", []), path, line_of(utterance), "'words'"):
            line = line_of(item, line_of(utterance))
            text = require(item, "word", path, "word")
            if not isinstance(text, str):
                raise located(path, line, f"'word' must be a string, got {text!r}")
            start, end = parse_span(require(item, "start", path, "word"), require(item, "end", path, "word"), path, line)
            if text.strip():
                words.append(Word(start, end, text.strip()))
    source = segments_from
    if source == "auto":
        source = "words" if words else "transcript" if utterances else "vad"
    if source == "words":
        segments = segments_from_words(words)
    elif source == "transcript":
        segments = _spans(utterances, path, node, f"{TRANSCRIPT_KEY!r} entry")
    else:
        if VAD_KEY not in node:
            raise located(path, line_of(node), f"participant has no {VAD_KEY!r} (needed for segments_from={segments_from!r})")
        segments = _spans(node[VAD_KEY], path, node, f"{VAD_KEY!r} entry")
    return segments, words, source


def _find_audio(json_path: Path, named: Any) -> Path | None:
    if named is not None:
        if not isinstance(named, str):
            raise located(json_path, None, f"'audio' must be a file name, got {named!r}")
        audio = Path(named) if Path(named).is_absolute() else json_path.parent / named
        if not audio.is_file():
            raise located(json_path, None, f"its audio {audio} does not exist")
        return audio
    return audio_beside(json_path)


def _read_sidecar(path: Path, data: dict, *, load_audio: bool, segments_from: str, system_speaker: int | None) -> Dialogue:
    participants = require_list(data["participants"], path, line_of(data), "'participants'")
    if len(participants) != 2:
        raise located(path, line_of(participants), f"'participants' must list 2 participants, got {len(participants)}")
    segments: list[list] = [[], []]
    words: list[list[Word]] = [[], []]
    names, sources = ["", ""], ["", ""]
    seen: set[int] = set()
    for default_channel, node in enumerate(participants):
        channel = node.get("channel", default_channel) if isinstance(node, dict) else default_channel
        if channel not in (0, 1) or channel in seen:
            raise located(path, line_of(node), f"participant 'channel' must be 0 or 1, each used once; got {channel!r}")
        seen.add(channel)
        segments[channel], words[channel], sources[channel] = participant_speech(node, path, segments_from)
        names[channel] = str(node.get("participant_id", f"P{channel}"))
    if system_speaker is None:
        system_speaker = data.get("system_channel")
        if system_speaker not in (None, 0, 1):
            raise located(path, line_of(data), f"'system_channel' must be 0, 1 or null, got {system_speaker!r}")
    audio = _find_audio(path, data.get("audio"))
    return build_dialogue(
        dialogue_id=str(data.get("id") or path.stem),
        segments=segments,
        words=words if any(words) else None,
        source=path,
        format_name="seamless",
        recording=RecordingInput(audio, load_audio),
        system_speaker=system_speaker,
        metadata={"participants": names, "segments_from": sources},
    )


def release_partner(path: PathLike) -> Path:
    """The other participant's json of a release pair (same interaction prefix, same folder)."""
    path = Path(path)
    match = _PARTICIPANT_RE.match(path.stem)
    if not match:
        raise DialogueError(f"{path}: not a participant file name '<interaction>_<Pxxxx>.json'; cannot find the partner")
    others = sorted(
        p
        for p in path.parent.glob(f"{match['interaction']}_P*.json")
        if p != path and _PARTICIPANT_RE.match(p.stem) and _PARTICIPANT_RE.match(p.stem)["interaction"] == match["interaction"]
    )
    if len(others) != 1:
        found = ", ".join(p.name for p in others) or "none"
        raise DialogueError(f"{path}: expected exactly one partner file {match['interaction']}_P*.json beside it, found {found}")
    return others[0]


def read_seamless_pair(
    json_a: PathLike,
    json_b: PathLike,
    *,
    load_audio: bool = True,
    segments_from: str = "auto",
    system_speaker: int | None = None,
) -> Dialogue:
    """Two release participant files (channel 0, channel 1) with their mono wavs if present."""
    paths = [Path(json_a), Path(json_b)]
    segments, words, sources, names = [], [], [], []
    for path in paths:
        data = load_json(path)
        segs, ws, source = participant_speech(data, path, segments_from)
        segments.append(segs)
        words.append(ws)
        sources.append(source)
        names.append(str(data.get("id", path.stem)))
    audios = [_find_audio(p, None) for p in paths]
    array, duration = None, None
    if all(audios):
        if load_audio:
            array = load_two_mono(audios[0], audios[1], system_channel=1)
        else:
            duration = max(audio_duration(a) for a in audios)
    elif any(audios):
        missing = paths[audios.index(None)]
        raise located(missing, None, "has no mono audio beside it (.wav/.flac/.ogg with the same name) while its partner does")
    match = _PARTICIPANT_RE.match(paths[0].stem)
    dialogue = build_dialogue(
        dialogue_id=match["interaction"] if match else paths[0].stem,
        segments=segments,
        words=words if any(words) else None,
        source=paths[0],
        format_name="seamless",
        recording=RecordingInput(array, duration=duration),
        system_speaker=system_speaker,
        metadata={"participants": names, "segments_from": sources, "files": [str(p) for p in paths]},
    )
    if all(audios):
        dialogue.metadata["audio_files"] = [str(a) for a in audios]
    return dialogue


def read_seamless(
    path: PathLike,
    *,
    load_audio: bool = True,
    segments_from: str = "auto",
    system_speaker: int | None = None,
) -> Dialogue:
    """Read a Seamless Interaction style recording.

    ``path`` is the sidecar json, the stereo audio beside it, or one participant json of a
    release pair (see the module docstring).
    """
    path = Path(path)
    if path.suffix.lower() in AUDIO_SUFFIXES:
        sidecar = path.with_suffix(".json")
        if not sidecar.is_file():
            raise DialogueError(f"{path}: no sidecar {sidecar.name} beside it")
        path = sidecar
    data = load_json(path)
    if isinstance(data, dict) and "participants" in data:
        return _read_sidecar(path, data, load_audio=load_audio, segments_from=segments_from, system_speaker=system_speaker)
    if isinstance(data, dict) and (TRANSCRIPT_KEY in data or VAD_KEY in data):
        pair = sorted([path, release_partner(path)], key=lambda p: p.name)
        return read_seamless_pair(*pair, load_audio=load_audio, segments_from=segments_from, system_speaker=system_speaker)
    raise located(path, line_of(data), f"expected 'participants' (sidecar) or {TRANSCRIPT_KEY!r} (release participant file)")
