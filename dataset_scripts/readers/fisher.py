"""Fisher English transcripts (LDC ``fe_03_NNNNN.txt``).

::

    # fe_03_00001.sph

    0.36 2.36 A: and i'm not sure what to say
    2.10 2.81 B: (( mhm ))

Comment lines start with ``#``; blank lines are skipped. Each utterance line is
``start end SPEAKER: text`` with speaker A (channel 0) or B (channel 1). Fisher has no word
times, so segments are the utterance spans and ``words`` is None; the utterance texts are kept
in ``metadata["utterances"]`` as ``[start, end, text]`` per speaker. An utterance whose text
is only non-speech markers (``[noise]``, ...) or empty is not speech.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

import numpy as np

from ..dialogue import Dialogue
from ._common import (
    NON_SPEECH_TOKENS,
    PathLike,
    RecordingInput,
    build_dialogue,
    is_speech_token,
    located,
    parse_span,
    parse_speaker,
    read_lines,
)


LINE_RE = re.compile(r"^\s*(?P<start>\S+)\s+(?P<end>\S+)\s+(?P<speaker>[^\s:]+):(?P<text>.*)$")


def read_fisher(
    path: PathLike,
    *,
    audio: PathLike | np.ndarray | None = None,
    load_audio: bool = True,
    non_speech: Iterable[str] = NON_SPEECH_TOKENS,
    system_speaker: int | None = None,
    audio_tolerance_s: float = 1.0,
) -> Dialogue:
    """Read a Fisher transcript; ``audio`` is the optional stereo recording (channel 0 = A)."""
    path = Path(path)
    non_speech = frozenset(t.lower() for t in non_speech)
    segments: list[list[tuple[float, float]]] = [[], []]
    utterances: list[list[list]] = [[], []]
    for number, text in read_lines(path):
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = LINE_RE.match(text)
        if not match:
            raise located(path, number, f"expected 'start end A: text' or 'start end B: text', got {stripped!r}")
        start, end = parse_span(match["start"], match["end"], path, number)
        speaker = parse_speaker(match["speaker"], path, number)
        utterance = match["text"].strip()
        # (( ... )) marks uncertain transcription: still speech.
        tokens = utterance.replace("((", " ").replace("))", " ").split()
        if any(is_speech_token(t, non_speech) for t in tokens):
            segments[speaker].append((start, end))
        utterances[speaker].append([start, end, utterance])
    return build_dialogue(
        dialogue_id=path.stem,
        segments=segments,
        words=None,
        source=path,
        format_name="fisher",
        recording=RecordingInput(audio, load_audio, audio_tolerance_s),
        system_speaker=system_speaker,
        metadata={"utterances": utterances},
    )
