"""Per-channel word timings as JSON (Whisper-style ASR output), one transcript per speaker.

Each channel's transcript is one of:

- Hugging Face ``pipeline("automatic-speech-recognition", return_timestamps="word")``::

      {"text": "hi there", "chunks": [{"text": " hi", "timestamp": [0.5, 0.7]}, ...]}

- openai-whisper / faster-whisper / WhisperX with word timestamps::

      {"segments": [{"start": 0.5, "end": 1.2, "text": "hi there",
                     "words": [{"word": " hi", "start": 0.5, "end": 0.7}, ...]}]}

  A segment without ``words`` contributes its span as speech, but no words.
- a bare list of words ``[{"word": "hi", "start": 0.5, "end": 0.7}, ...]``.

Pass two files (channel 0 then channel 1), or one combined file
``{"id": ..., "system_speaker": 1, "channels": [<channel 0>, <channel 1>]}`` (``"A"``/``"B"``
keys work too). Segments are the union of the word spans.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..dialogue import Dialogue, DialogueError, Word
from ._common import (
    PathLike,
    RecordingInput,
    build_dialogue,
    line_of,
    load_json,
    located,
    parse_span,
    require,
    require_list,
    segments_from_words,
)


def _word(node: Any, path: Path, text_key: str, parent_line: int | None) -> Word | None:
    line = line_of(node, parent_line)
    if not isinstance(node, dict):
        raise located(path, line, f"a word must be a JSON object, got {type(node).__name__}")
    text = require(node, text_key, path, "word")
    if not isinstance(text, str):
        raise located(path, line, f"word {text_key!r} must be a string, got {text!r}")
    if text_key == "text":  # HF pipeline chunk
        stamp = require(node, "timestamp", path, "chunk")
        if not isinstance(stamp, list) or len(stamp) != 2:
            raise located(path, line, f"'timestamp' must be [start, end], got {stamp!r}")
        if stamp[1] is None:
            raise located(path, line, f"word {text.strip()!r} has no end time (timestamp [{stamp[0]}, null]); give it one or drop it")
        start, end = parse_span(stamp[0], stamp[1], path, line)
    else:
        start, end = parse_span(require(node, "start", path, "word"), require(node, "end", path, "word"), path, line)
    text = text.strip()
    return Word(start, end, text) if text else None


def channel_from_json(node: Any, path: PathLike, what: str = "transcript") -> tuple[list[tuple[float, float]], list[Word]]:
    """Speech segments and words of one channel's Whisper-style transcript."""
    path = Path(path)
    words: list[Word] = []
    spans: list[tuple[float, float]] = []
    if isinstance(node, list):
        items, key = node, "word"
    elif isinstance(node, dict) and "chunks" in node:
        items, key = require_list(node["chunks"], path, line_of(node), "'chunks'"), "text"
    elif isinstance(node, dict) and "segments" in node:
        items, key = [], "word"
        for segment in require_list(node["segments"], path, line_of(node), "'segments'"):
            if not isinstance(segment, dict):
                raise located(path, line_of(segment, line_of(node)), "a segment must be a JSON object")
            if segment.get("words"):
                items.extend(require_list(segment["words"], path, line_of(segment), "'words'"))
            else:
                spans.append(parse_span(require(segment, "start", path, "segment"), require(segment, "end", path, "segment"), path, line_of(segment)))
    else:
        raise located(path, line_of(node), f"{what}: expected a Whisper-style object with 'chunks' or 'segments', or a list of words")
    for item in items:
        word = _word(item, path, key, line_of(items))
        if word is not None:
            words.append(word)
    return segments_from_words(words) + spans, words


def _combined_channels(data: Any, path: Path) -> list[Any]:
    if isinstance(data, dict) and "channels" in data:
        channels = require_list(data["channels"], path, line_of(data), "'channels'")
        if len(channels) != 2:
            raise located(path, line_of(channels), f"'channels' must hold 2 transcripts (channel 0, channel 1), got {len(channels)}")
        return channels
    if isinstance(data, dict) and "A" in data and "B" in data:
        return [data["A"], data["B"]]
    raise located(path, line_of(data), "a combined word JSON needs 'channels': [channel 0, channel 1] (or 'A' and 'B' keys)")


def read_word_json(
    paths: PathLike | Sequence[PathLike],
    *,
    audio: PathLike | np.ndarray | None = None,
    load_audio: bool = True,
    dialogue_id: str | None = None,
    system_speaker: int | None = None,
    audio_tolerance_s: float = 1.0,
) -> Dialogue:
    """Read word timings from two per-channel JSON files, or one combined file."""
    if isinstance(paths, (str, Path)):
        path = Path(paths)
        data = load_json(path)
        nodes, sources = _combined_channels(data, path), [path, path]
        dialogue_id = dialogue_id or (data.get("id") if isinstance(data.get("id"), str) else None) or path.stem
        if system_speaker is None:
            system_speaker = data.get("system_speaker")
            if system_speaker not in (None, 0, 1):
                raise located(path, line_of(data), f"'system_speaker' must be 0, 1 or null, got {system_speaker!r}")
    else:
        if len(paths) != 2:
            raise DialogueError(f"read_word_json needs 2 files (channel 0, channel 1), got {len(paths)}")
        sources = [Path(p) for p in paths]
        nodes = [load_json(p) for p in sources]
        dialogue_id = dialogue_id or sources[0].stem
    segments, words = [], []
    for node, source, name in zip(nodes, sources, ("channel 0", "channel 1")):
        segs, ws = channel_from_json(node, source, name)
        segments.append(segs)
        words.append(ws)
    return build_dialogue(
        dialogue_id=dialogue_id,
        segments=segments,
        words=words if any(words) else None,
        source=sources[0],
        format_name="word_json",
        recording=RecordingInput(audio, load_audio, audio_tolerance_s),
        system_speaker=system_speaker,
        metadata={"files": sorted({str(s) for s in sources})},
    )
