"""RTTM speaker diarisation (NIST Rich Transcription Time Marked), usually beside a stereo wav.

::

    SPEAKER call_0001 1 0.50 2.10 <NA> <NA> spk_user <NA> <NA>
    SPEAKER call_0001 1 2.80 1.25 <NA> <NA> spk_agent <NA> <NA>

Only ``SPEAKER`` lines are read (fields: type, file id, channel, onset, duration, ortho,
speaker type, speaker name, confidence, lookahead; the last may be missing); other line
types and ``;;`` comments are skipped. A file may hold several recordings (file ids): pick
one with ``file_id`` or read them all with :func:`read_rttm_all`.

The two speaker names map to channels 0 and 1 by ``speaker_map``:

- ``"sorted"`` (default): the names in sorted order (``A``/``B``, ``spk0``/``spk1`` ...);
- ``"first"``: the order in which they first speak;
- ``"channel"``: the RTTM channel field, 1 -> channel 0 and 2 -> channel 1;
- a dict ``{name: 0 or 1}``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np

from ..dialogue import Dialogue, DialogueError
from ._common import PathLike, RecordingInput, build_dialogue, located, parse_time, read_lines


SpeakerMap = str | Mapping[str, int]


def _parse(path: Path) -> dict[str, list[tuple[int, str, str, float, float]]]:
    """Per file id: (line, channel, speaker, start, end) of every SPEAKER line, in file order."""
    turns: dict[str, list[tuple[int, str, str, float, float]]] = {}
    for number, text in read_lines(path):
        fields = text.split()
        if not fields or fields[0].startswith(";;") or fields[0] != "SPEAKER":
            continue
        if len(fields) not in (9, 10):
            raise located(
                path,
                number,
                f"a SPEAKER line has 10 fields (SPEAKER file chan onset dur <NA> <NA> name <NA> <NA>), got {len(fields)}",
            )
        onset = parse_time(fields[3], path, number, "onset")
        duration = parse_time(fields[4], path, number, "duration")
        turns.setdefault(fields[1], []).append((number, fields[2], fields[7], onset, onset + duration))
    return turns


def _channel_of(path: Path, turns: list[tuple[int, str, str, float, float]], speaker_map: SpeakerMap) -> dict[str, int]:
    names = list(dict.fromkeys(t[2] for t in turns))
    if isinstance(speaker_map, Mapping):
        for number, _, name, _, _ in turns:
            if name not in speaker_map:
                raise located(path, number, f"speaker {name!r} is not in speaker_map {dict(speaker_map)}")
            if speaker_map[name] not in (0, 1):
                raise DialogueError(f"speaker_map must map names to 0 or 1, got {name!r}: {speaker_map[name]!r}")
        return dict(speaker_map)
    if speaker_map == "channel":
        mapping = {}
        for number, channel, name, _, _ in turns:
            if channel not in ("1", "2"):
                raise located(path, number, f"speaker_map='channel' needs channel 1 or 2, got {channel!r}")
            if mapping.setdefault(name, int(channel) - 1) != int(channel) - 1:
                raise located(path, number, f"speaker {name!r} appears on both channels")
        return mapping
    if speaker_map not in ("sorted", "first"):
        raise ValueError(f"speaker_map must be 'sorted', 'first', 'channel' or a dict, got {speaker_map!r}")
    if len(names) > 2:
        third = next(t for t in turns if t[2] == names[2])
        raise located(path, third[0], f"more than two speakers ({', '.join(names)}); pass speaker_map to choose two")
    order = sorted(names) if speaker_map == "sorted" else names
    return {name: index for index, name in enumerate(order)}


def _dialogue(
    path: Path,
    file_id: str,
    turns: list[tuple[int, str, str, float, float]],
    speaker_map: SpeakerMap,
    recording: RecordingInput = RecordingInput(),
    system_speaker: int | None = None,
) -> Dialogue:
    mapping = _channel_of(path, turns, speaker_map)
    segments: list[list[tuple[float, float]]] = [[], []]
    for _, _, name, start, end in turns:
        segments[mapping[name]].append((start, end))
    names = [sorted(n for n, c in mapping.items() if c == ch) for ch in (0, 1)]
    return build_dialogue(
        dialogue_id=file_id,
        segments=segments,
        words=None,
        source=path,
        format_name="rttm",
        recording=recording,
        system_speaker=system_speaker,
        metadata={"speaker_names": names},
    )


def read_rttm(
    path: PathLike,
    *,
    file_id: str | None = None,
    speaker_map: SpeakerMap = "sorted",
    audio: PathLike | np.ndarray | None = None,
    load_audio: bool = True,
    system_speaker: int | None = None,
    audio_tolerance_s: float = 1.0,
) -> Dialogue:
    """Read one recording from an RTTM file (the only one, or ``file_id``)."""
    path = Path(path)
    turns = _parse(path)
    if not turns:
        raise located(path, None, "no SPEAKER lines")
    if file_id is None:
        if len(turns) > 1:
            raise located(path, None, f"holds several recordings ({', '.join(turns)}); pass file_id or use read_rttm_all")
        file_id = next(iter(turns))
    if file_id not in turns:
        raise located(path, None, f"has no recording {file_id!r} (it has {', '.join(turns)})")
    return _dialogue(
        path,
        file_id,
        turns[file_id],
        speaker_map,
        RecordingInput(audio, load_audio, audio_tolerance_s),
        system_speaker,
    )


def read_rttm_all(path: PathLike, *, speaker_map: SpeakerMap = "sorted") -> list[Dialogue]:
    """Every recording in an RTTM file, without audio."""
    path = Path(path)
    turns = _parse(path)
    if not turns:
        raise located(path, None, "no SPEAKER lines")
    return [_dialogue(path, file_id, file_turns, speaker_map) for file_id, file_turns in turns.items()]
