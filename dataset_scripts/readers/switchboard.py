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
from typing import Iterable, Iterator, NamedTuple

import numpy as np

from ..dialogue import Dialogue, DialogueError, Word
from ._common import (
    NON_SPEECH_TOKENS,
    PathLike,
    RecordingInput,
    build_dialogue,
    is_speech_token,
    located,
    parse_span,
    read_lines,
    segments_from_words,
)


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
        recording=RecordingInput(audio, load_audio, audio_tolerance_s, duration=max(ends, default=0.0)),
        system_speaker=system_speaker,
        metadata={"alignment": kind, "files": [str(path_a), str(path_b)]},
    )


# ---------------------------------------------------------------------------------------
# The corpus on disk: calls by id, the conversation-level splits
# ---------------------------------------------------------------------------------------

SPLIT_NAMES = ("train", "val", "test")
"""The splits of ``splits/{train,val,test}.txt`` (one call id per line, VAP's split)."""


def switchboard_word_file(root: PathLike, call_id: str | int) -> Path:
    """Side A's word file of call ``call_id`` (``2001``, ``"sw2001"``) under the ms98 tree.

    The extracted ``swb_ms98_transcriptions`` archive keeps ``<first 2 digits>/<id>/``
    folders (``20/2001/sw2001A-ms98-a-word.text``); a flat folder of word files works too.

    Raises:
        DialogueError: the file is in neither place.
    """
    number = str(call_id).strip().lower().removeprefix("sw")
    root = Path(root)
    name = f"sw{number}A-ms98-a-word.text"
    for candidate in (root / number[:2] / number / name, root / name):
        if candidate.is_file():
            return candidate
    raise DialogueError(
        f"{root}: no word file for Switchboard call {call_id} (looked for {number[:2]}/{number}/{name} and {name}); "
        "pass the folder the swb_ms98_transcriptions archive was extracted to"
    )


def read_split_ids(split_dir: PathLike, split: str) -> list[str]:
    """The call ids of one split file (``splits/test.txt``), sorted so that "the first N" is
    the same set on every machine.

    ``split="all"`` gives the ids of the three splits together.
    """
    names = SPLIT_NAMES if split == "all" else (split,)
    if split != "all" and split not in SPLIT_NAMES:
        raise ValueError(f"split must be one of {SPLIT_NAMES} or 'all', got {split!r}")
    ids: set[str] = set()
    for name in names:
        path = Path(split_dir) / f"{name}.txt"
        if not path.is_file():
            raise DialogueError(f"{path}: split file not found (expected one call id per line, e.g. 2001)")
        for number, text in read_lines(path):
            token = text.strip()
            if not token:
                continue
            if not token.lower().removeprefix("sw").isdigit():
                raise located(path, number, f"expected a call id such as 2001, got {token!r}")
            ids.add(token.lower().removeprefix("sw"))
    return sorted(ids, key=int)


ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")


def is_switchboard_archive(root: PathLike) -> bool:
    """Whether ``root`` is the ms98 archive itself (``swb_ms98_transcriptions.tar.gz``)."""
    return Path(root).is_file() and Path(root).name.endswith(ARCHIVE_SUFFIXES)


def iter_switchboard_calls(root: PathLike, call_ids: Iterable[str | int]) -> Iterator[Dialogue]:
    """Read the calls ``call_ids`` (word alignments, no audio) one at a time.

    ``root`` is the extracted ms98 folder (calls come in the order of ``call_ids``) or the
    ``swb_ms98_transcriptions.tar.gz`` archive itself, streamed once without unpacking it
    (calls come in archive order; about 4 s for the whole archive).
    """
    if not is_switchboard_archive(root):
        for call_id in call_ids:
            yield read_switchboard(switchboard_word_file(root, call_id), load_audio=False)
        return
    yield from _iter_archive(Path(root), {str(c).strip().lower().removeprefix("sw") for c in call_ids})


def _iter_archive(path: Path, wanted: set[str]) -> Iterator[Dialogue]:
    import tarfile

    pending: dict[str, dict[str, list[str]]] = {}
    with tarfile.open(path, "r:*") as archive:
        for member in archive:
            match = FILE_RE.match(Path(member.name).name)
            if not member.isfile() or not match or match["kind"] != "word":
                continue
            number = match["conv"].removeprefix("sw")
            if number not in wanted:
                continue
            raw = archive.extractfile(member).read()  # type: ignore[union-attr]
            try:
                lines = raw.decode("utf-8").splitlines()
            except UnicodeDecodeError as err:
                raise DialogueError(f"{path}:{member.name}: not valid UTF-8 text ({err.reason})") from err
            sides = pending.setdefault(number, {})
            sides[match["side"]] = lines
            if len(sides) == 2:
                del pending[number]
                wanted.discard(number)
                sources = tuple(f"{path}:{match['conv']}{s}-ms98-a-word.text" for s in "AB")
                yield switchboard_from_lines((sides["A"], sides["B"]), match["conv"], sources=sources)  # type: ignore[arg-type]
    if wanted:
        missing = sorted(wanted)
        raise DialogueError(f"{path}: no word files (both sides) for {len(missing)} call(s), e.g. {', '.join(missing[:5])}")
