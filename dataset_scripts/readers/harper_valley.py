"""Harper Valley Bank calls (Gridspace-Stanford, CC BY 4.0): one stereo file and one transcript per call.

Layout of a call ``SID`` (as ``../shared/real/harper_valley`` and the corpus ship it)::

    audio/SID.flac        stereo 8 kHz, channel 0 = agent, channel 1 = caller
    transcript/SID.json   one record per utterance: speaker_role (agent / caller), offset_ms,
                          duration_ms, word_offsets_ms and word_durations_ms (from the utterance
                          start), transcript (the ASR words the times belong to), human_transcript

The utterance spans are the speech segments; the words are the aligner's times of the
``transcript`` words (an utterance whose word count and time count differ gives no words).
Credit "Gridspace-Stanford Harper Valley speech dataset (CC BY 4.0)" wherever a figure from it
is shown.

>>> import json, tempfile
>>> from pathlib import Path
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "c1.json").write_text(json.dumps([
...     {"speaker_role": "agent", "offset_ms": 1000, "duration_ms": 900, "transcript": "hello there",
...      "word_offsets_ms": [0, 500], "word_durations_ms": [400, 400]},
...     {"speaker_role": "caller", "offset_ms": 2500, "duration_ms": 400, "transcript": "hi",
...      "word_offsets_ms": [0], "word_durations_ms": [400]}]))
>>> call = read_harper_valley(folder / "c1.json", load_audio=False)
>>> call.segments, [w.text for w in call.words[0]]
([[(1.0, 1.9)], [(2.5, 2.9)]], ['hello', 'there'])
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..dialogue import Dialogue, DialogueError, Word
from ._common import PathLike, RecordingInput, build_dialogue, load_json


ROLE_CHANNEL = {"agent": 0, "caller": 1}
CREDIT = "Gridspace-Stanford Harper Valley speech dataset (CC BY 4.0)"


def _field(utt: dict[str, Any], key: str, where: str) -> Any:
    if key not in utt:
        raise DialogueError(f"{where}: utterance lacks {key!r}; a Harper Valley transcript record has speaker_role, offset_ms, duration_ms")
    return utt[key]


def read_harper_valley(transcript: PathLike, audio: PathLike | None = None, load_audio: bool = True) -> Dialogue:
    """One Harper Valley call from its ``transcript/SID.json`` (and ``audio/SID.flac``, found
    beside it as ``../audio/SID.flac`` when ``audio`` is not given and it exists)."""

    transcript = Path(transcript)
    records = load_json(transcript)
    if not isinstance(records, list):
        raise DialogueError(f"{transcript}: expected a JSON list of utterances, got {type(records).__name__}")
    segments: list[list[tuple[float, float]]] = [[], []]
    words: list[list[Word]] = [[], []]
    for i, utt in enumerate(records):
        where = f"{transcript}: utterance {i}"
        role = _field(utt, "speaker_role", where)
        if role not in ROLE_CHANNEL:
            raise DialogueError(f"{where}: speaker_role {role!r}; expected 'agent' or 'caller'")
        side = ROLE_CHANNEL[role]
        start = float(_field(utt, "offset_ms", where)) / 1000
        segments[side].append((start, start + float(_field(utt, "duration_ms", where)) / 1000))
        texts = str(utt.get("transcript", "")).split()
        offsets, lengths = utt.get("word_offsets_ms") or [], utt.get("word_durations_ms") or []
        if len(texts) == len(offsets) == len(lengths):
            words[side] += [Word(start + o / 1000, start + (o + n) / 1000, t) for t, o, n in zip(texts, offsets, lengths)]
    if audio is None:
        beside = transcript.parent.parent / "audio" / f"{transcript.stem}.flac"
        audio = beside if beside.is_file() else None
    for side in words:
        side.sort(key=lambda w: w.start)
    return build_dialogue(dialogue_id=transcript.stem, segments=segments, words=words, source=transcript, format_name="harper_valley",
                          recording=RecordingInput(audio, load_audio), metadata={"corpus": "harper_valley", "credit": CREDIT})


__all__ = ["CREDIT", "ROLE_CHANNEL", "read_harper_valley"]
