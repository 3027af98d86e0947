"""Switchboard, Mississippi State (ms98) word and utterance alignments.

Each side of conversation ``swNNNN`` has its own files::

    sw0001A-ms98-a-word.text    utt_id start end word      (one word per line)
    sw0001A-ms98-a-trans.text   utt_id start end text...   (one utterance per line)

The alignments cover the whole file: gaps are ``[silence]`` tokens. ``[silence]``,
``[noise]`` and ``[vocalized-noise]`` are not speech; ``[laughter]`` (and laughed words such
as ``[laughter-yes]``) are speech. Words keep their ms98 spelling (``uh-huh``, ``[laughter]``).
Segments are the union of the speech words' spans (word files) or the speech utterances'
spans (trans files). The duration is the end of the last token, silence included.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, NamedTuple

import numpy as np

from ..dialogue import Dialogue, DialogueError, Word
from ._common import NON_SPEECH_TOKENS, PathLike, build_dialogue, is_speech_token, located, parse_span, read_lines, segments_from_words

FILE_RE = re.compile(r"^(?P<conv>sw\d+)(?P<side>[AB])-ms98-a-(?P<kind>word|trans)\.text$")
"""``sw0001A-ms98-a-word.text``: conversation, side (A/B), kind (word/trans)."""


class Ms98Token(NamedTuple):
    """One alignment line."""

    utt_id: str
    start: float
    end: float
    text: str
    line: int


def parse_ms98_lines(
    lines: Iterable[tuple[int, str]] | Iterable[str],
    source: PathLike = "<lines>",
    *,
    kind: str = "word",
    utt_prefix: str | None = None,
) -> list[Ms98Token]:
    """Parse ms98 alignment lines (``utt_id start end token`` or ``utt_id start end text...``).

    Args:
        lines: strings, or ``(line_number, string)`` pairs.
        source: the file name used in error messages.
        kind: "word" (exactly one token per line) or "trans" (utterance text).
        utt_prefix: if given, every utterance id must start with it (e.g. ``sw0001A``).

    Raises:
        DialogueError: ``source:line: problem`` for a malformed line.
    """
    if kind not in ("word", "trans"):
        raise ValueError(f"kind must be 'word' or 'trans', got {kind!r}")
    tokens: list[Ms98Token] = []
    for index, item in enumerate(lines, start=1):
        number, text = item if isinstance(item, tuple) else (index, item)
        fields = text.split()
        if not fields:
            continue
        if kind == "word" and len(fields) != 4:
            raise located(source, number, f"expected 'utt_id start end word' (4 fields), got {len(fields)}: {text.strip()!r}")
        if kind == "trans" and len(fields) < 4:
            raise located(source, number, f"expected 'utt_id start end text', got {len(fields)} field(s): {text.strip()!r}")
        utt_id = fields[0]
        if utt_prefix is not None and not utt_id.startswith(utt_prefix):
            raise located(source, number, f"utterance id {utt_id!r} does not belong to this file (expected it to start with {utt_prefix!r})")
        start, end = parse_span(fields[1], fields[2], source, number)
        tokens.append(Ms98Token(utt_id, start, end, " ".join(fields[3:]), number))
    return tokens


def channel_from_tokens(
    tokens: list[Ms98Token], kind: str = "word", non_speech: Iterable[str] = NON_SPEECH_TOKENS
) -> tuple[list[tuple[float, float]], list[Word] | None]:
    """Speech segments (and words, for word files) of one side."""
    non_speech = frozenset(t.lower() for t in non_speech)
    if kind == "word":
        words = [Word(t.start, t.end, t.text) for t in tokens if is_speech_token(t.text, non_speech)]
        return segments_from_words(words), words
    spans = [(t.start, t.end) for t in tokens if any(is_speech_token(w, non_speech) for w in t.text.split())]
    return spans, None


def switchboard_from_lines(
    side_lines: tuple[Iterable[str], Iterable[str]],
    dialogue_id: str,
    *,
    kind: str = "word",
    duration: float | None = None,
    non_speech: Iterable[str] = NON_SPEECH_TOKENS,
    sources: tuple[PathLike, PathLike] = ("<A>", "<B>"),
) -> Dialogue:
    """A Dialogue from the ms98 lines of side A and side B (already in memory)."""
    segments, words, ends = [], [], []
    for side, lines in enumerate(side_lines):
        tokens = parse_ms98_lines(lines, sources[side], kind=kind)
        segs, ws = channel_from_tokens(tokens, kind, non_speech)
        segments.append(segs)
        words.append(ws)
        ends.extend(t.end for t in tokens)
    return Dialogue(
        id=dialogue_id,
        segments=segments,
        words=words if kind == "word" else None,
        duration=duration if duration is not None else max(ends, default=None),
        metadata={"format": "switchboard", "alignment": kind},
    )


def partner_paths(path: PathLike) -> tuple[Path, Path]:
    """The (side A, side B) files of the conversation that ``path`` belongs to.

    ``path`` is either side's ``-word.text`` / ``-trans.text`` file.
    """
    path = Path(path)
    match = FILE_RE.match(path.name)
    if not match:
        raise DialogueError(
            f"{path}: not a Switchboard ms98 file name (expected e.g. sw2001A-ms98-a-word.text or sw2001A-ms98-a-trans.text)"
        )
    conv, kind = match["conv"], match["kind"]
    pair = tuple(path.with_name(f"{conv}{side}-ms98-a-{kind}.text") for side in "AB")
    for side, candidate in zip("AB", pair):
        if not candidate.is_file():
            raise DialogueError(f"{path}: the other side's file {candidate.name} (side {side}) is missing from {path.parent}")
    return pair  # type: ignore[return-value]


def read_switchboard(
    path: PathLike,
    *,
    audio: PathLike | np.ndarray | None = None,
    load_audio: bool = True,
    non_speech: Iterable[str] = NON_SPEECH_TOKENS,
    system_speaker: int | None = None,
    audio_tolerance_s: float = 1.0,
) -> Dialogue:
    """Read one Switchboard conversation from its ms98 alignment files.

    Args:
        path: either side's ``swNNNN[AB]-ms98-a-word.text`` (words) or ``-trans.text``
            (utterances only); the other side's file must lie beside it.
        audio: optional stereo audio (channel 0 = side A), e.g. the conversation's
            ``.sph`` converted to wav/flac.
        load_audio: if False, keep only the audio path and duration.
        non_speech: tokens that are not speech.
        system_speaker: 0 or 1 if one side is a system.
        audio_tolerance_s: how far speech may run past the audio end before it is an error.
    """
    path_a, path_b = partner_paths(path)
    match = FILE_RE.match(Path(path).name)
    conv, kind = match["conv"], match["kind"]
    segments, words, ends = [], [], []
    for side, side_path in zip("AB", (path_a, path_b)):
        tokens = parse_ms98_lines(read_lines(side_path), side_path, kind=kind, utt_prefix=f"{conv}{side}")
        segs, ws = channel_from_tokens(tokens, kind, non_speech)
        segments.append(segs)
        words.append(ws)
        ends.extend(t.end for t in tokens)
    return build_dialogue(
        dialogue_id=conv,
        segments=segments,
        words=words if kind == "word" else None,
        source=path_a,
        format_name="switchboard",
        audio=audio,
        load_audio=load_audio,
        duration=max(ends, default=0.0),
        system_speaker=system_speaker,
        audio_tolerance_s=audio_tolerance_s,
        metadata={"alignment": kind, "files": [str(path_a), str(path_b)]},
    )
