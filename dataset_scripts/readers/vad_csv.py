"""Voice activity segments as CSV: a header, then one speech segment per row.

::

    speaker,start,end
    A,0.50,2.10
    B,2.35,4.00

Columns ``speaker`` (A/B or 0/1), ``start`` and ``end`` (seconds) are required, in any
order; other columns are ignored. Segments may overlap or touch: they are merged per speaker.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ..dialogue import SPEAKERS, Dialogue
from ..files import atomic_write_text
from ._common import PathLike, RecordingInput, build_dialogue, located, parse_span, parse_speaker, read_lines


REQUIRED_COLUMNS = ("speaker", "start", "end")


def read_vad_csv(
    path: PathLike,
    *,
    audio: PathLike | np.ndarray | None = None,
    load_audio: bool = True,
    system_speaker: int | None = None,
    audio_tolerance_s: float = 1.0,
) -> Dialogue:
    """Read a segment CSV; ``audio`` is the optional stereo recording."""
    path = Path(path)
    numbered = [(n, t) for n, t in read_lines(path) if t.strip()]
    if not numbered:
        raise located(path, 1, "empty file: expected a header 'speaker,start,end'")
    rows = csv.reader([t for _, t in numbered], skipinitialspace=True)
    header = [h.strip().lower() for h in next(rows)]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise located(path, numbered[0][0], f"header lacks column(s) {', '.join(missing)}; expected 'speaker,start,end'")
    index = {c: header.index(c) for c in REQUIRED_COLUMNS}
    segments: list[list[tuple[float, float]]] = [[], []]
    for (number, _), row in zip(numbered[1:], rows):
        if len(row) != len(header):
            raise located(path, number, f"expected {len(header)} columns like the header, got {len(row)}")
        speaker = parse_speaker(row[index["speaker"]], path, number)
        segments[speaker].append(parse_span(row[index["start"]], row[index["end"]], path, number))
    return build_dialogue(
        dialogue_id=path.stem,
        segments=segments,
        words=None,
        source=path,
        format_name="vad_csv",
        recording=RecordingInput(audio, load_audio, audio_tolerance_s),
        system_speaker=system_speaker,
    )


def format_vad_csv(dialogue: Dialogue, *, decimals: int = 3) -> str:
    """The dialogue's segments as VAD CSV text (rows sorted by start time)."""
    rows = sorted((start, end, SPEAKERS[speaker]) for speaker, segs in enumerate(dialogue.segments) for start, end in segs)
    lines = ["speaker,start,end"] + [f"{spk},{start:.{decimals}f},{end:.{decimals}f}" for start, end, spk in rows]
    return "\n".join(lines) + "\n"


def write_vad_csv(dialogue: Dialogue, path: PathLike, *, decimals: int = 3) -> None:
    """Write the dialogue's segments as VAD CSV (atomically), readable by :func:`read_vad_csv`."""
    atomic_write_text(path, format_vad_csv(dialogue, decimals=decimals))
