"""The ESPnet Talking Turns recipe's reading of Switchboard: ms98 ``-word.text`` files and the
VoiceActivityProjection ``backchannels.csv`` rows -> the recipe's 40 ms labels.

The recipe (ESPnet ``egs2/swbd/turn_taking``) cleans tokens its own way, walks the word file in
the csv's utterance order to split backchannel words from speech words, and labels chunks on
its own grid (:func:`~turneval.dataset_scripts.labels.label_chunks`, first chunk at 0.2 s). This
reader reproduces it exactly, quirks included (golden ``espnet_labels`` cases); the file parsing
lives here, the labelling rules in :mod:`turneval.dataset_scripts.labels`.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..dialogue import SPEAKERS, DialogueError
from ..grids import CHUNK_S
from ..labels import RECIPE_START_S, ChunkLabels, Interval, LabelError, label_chunks, recipe_chunk_count
from .switchboard import parse_ms98_lines


def _file_of_utterance(utterance: str) -> str:
    """``sw0002B-ms98-a-0002`` -> ``sw0002B-ms98-a``: the transcript file of an utterance id."""
    return utterance.rsplit("-", 1)[0]


@dataclass(frozen=True)
class Ms98Word:
    """One line of an MS-State ``-word.text`` file: utterance id, times, token."""

    utterance: str
    start: float
    end: float
    token: str

    @property
    def file_name(self) -> str:
        """The transcript file the utterance belongs to, e.g. ``sw0002B-ms98-a``."""
        return _file_of_utterance(self.utterance)


def parse_ms98_word_lines(lines: Iterable[str], source: str = "<word lines>") -> list[Ms98Word]:
    """Parse ``-word.text`` lines (``<utt-id> <start> <end> <word>``); blank lines are skipped.

    The lines are parsed by the Switchboard reader's
    :func:`~turneval.dataset_scripts.readers.switchboard.parse_ms98_lines`. Raises LabelError
    naming ``source`` and the line number on a malformed line.
    """
    try:
        tokens = parse_ms98_lines(lines, source, kind="word")
    except DialogueError as err:
        raise LabelError(str(err)) from None
    return [Ms98Word(t.utt_id, t.start, t.end, t.text) for t in tokens]


@dataclass(frozen=True)
class BackchannelRow:
    """The columns of a ``backchannels.csv`` row the recipe reads: start, end, utt_idx."""

    utterance: str
    start: float
    end: float

    @property
    def file_name(self) -> str:
        return _file_of_utterance(self.utterance)


def parse_backchannel_csv_lines(lines: Iterable[str], source: str = "<backchannels.csv>") -> list[BackchannelRow]:
    """Parse ``backchannels.csv`` text (with its header): columns 0 (start), 1 (end), 3 (utt_idx)."""
    rows = []
    reader = csv.reader(list(lines))
    for number, row in enumerate(reader, start=1):
        if number == 1 or not row:
            continue  # header
        if len(row) < 4:
            raise LabelError(f"{source}:{number}: expected at least 4 columns (start,end,text,utt_idx,...), got {len(row)}")
        try:
            start, end = float(row[0]), float(row[1])
        except ValueError:
            raise LabelError(f"{source}:{number}: start and end must be numbers, got {row[0]!r} {row[1]!r}") from None
        rows.append(BackchannelRow(row[3], start, end))
    return rows


def recipe_clean_token(token: str) -> str:
    """The recipe's ``clean_line``: drop noise/silence markers and brackets, '-' to a space.

    ``[silence]``, ``[noise]`` and ``[vocalized-noise]`` become empty (not speech);
    ``[laughter]`` becomes ``laughter`` and counts as speech.
    """
    for marker in ("[noise]", "[silence]", "[vocalized-noise]"):
        token = token.replace(marker, "")
    return token.replace("]", "").replace("[", "").replace("-", " ")


def recipe_split_backchannel_words(
    words: Sequence[Ms98Word], rows: Sequence[BackchannelRow]
) -> tuple[list[Ms98Word], list[Ms98Word]]:
    """Split one channel's words into (speech words, backchannel words) the recipe's way.

    The recipe walks the word file once, in the csv's utterance order. Inside a backchannel
    utterance, the words from the one starting at the row's start up to the one ending at
    its end are backchannel words; every other word whose cleaned token is not empty is a
    speech word. Rows must follow word-file order, and their times must equal word times
    (float equality) — as in the recipe, a row that matches no word start swallows the rest
    of the file into the speech list. With two rows in one utterance the recipe re-examines
    the last word of the first row and, unless the second row starts there, also keeps it
    as speech; that is reproduced.
    """
    by_utterance: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        by_utterance.setdefault(row.utterance, []).append((row.start, row.end))

    speech: list[Ms98Word] = []
    backchannel: list[Ms98Word] = []

    def keep(word: Ms98Word) -> None:
        if recipe_clean_token(word.token) != "":
            speech.append(word)

    pos = 0
    current: Ms98Word | None = None
    for utterance in by_utterance:
        while pos < len(words):  # copy words up to (and consume) the utterance's first word
            current = words[pos]
            pos += 1
            if current.utterance == utterance:
                break
            keep(current)
        if current is None or current.utterance not in by_utterance:
            continue
        for bc_start, bc_end in by_utterance[current.utterance]:
            found_start = found_end = False
            while pos < len(words):
                found_start = found_start or bc_start == current.start
                found_end = found_end or bc_end == current.end
                if found_start and found_end:
                    backchannel.append(current)
                    break
                if found_start:
                    backchannel.append(current)
                elif found_end:
                    if bc_start != bc_end:
                        raise LabelError(
                            f"backchannel row {current.utterance} ({bc_start}, {bc_end}) ends at a word "
                            f"before any word starts at {bc_start}: row times must equal word times"
                        )
                else:
                    keep(current)
                current = words[pos]
                pos += 1
    for word in words[pos:]:
        keep(word)
    return speech, backchannel


def recipe_backchannel_intervals(rows: Sequence[BackchannelRow]) -> list[Interval]:
    """One channel's backchannel intervals sorted by start; two rows may not share a start."""
    by_start: dict[float, Interval] = {}
    for row in rows:
        if row.start in by_start:
            raise LabelError(f"two backchannel rows of {row.file_name} start at {row.start} s")
        by_start[row.start] = (row.start, row.end)
    return [by_start[k] for k in sorted(by_start)]


def recipe_labels_from_ms98(
    word_lines: Sequence[Sequence[str]],
    backchannel_rows: Sequence[BackchannelRow],
    duration_s: float,
    *,
    start_s: float = RECIPE_START_S,
    chunk_s: float = CHUNK_S,
    dialogue_id: str | None = None,
) -> ChunkLabels:
    """The ESPnet recipe's labels for one Switchboard session, from its ms98 word lines.

    Args:
        word_lines: the ``-word.text`` lines of channel A and of channel B.
        backchannel_rows: ``backchannels.csv`` rows (:func:`parse_backchannel_csv_lines`);
            rows of other sessions are ignored.
        duration_s: the audio length (the recipe's ``sox`` duration).
        start_s: first chunk start (the recipe's 0.2 s).

    Returns:
        :class:`ChunkLabels` on the recipe's grid; ``two_channel_rows()`` and ``mono_rows()``
        give the recipe's CSV rows.
    """
    if len(word_lines) != 2:
        raise LabelError("need the word lines of exactly 2 channels (A, B)")
    speech: list[list[Interval]] = []
    backchannels: list[list[Interval]] = []
    for k, lines in enumerate(word_lines):
        words = parse_ms98_word_lines(lines, source=f"channel {SPEAKERS[k]} word lines")
        names = {w.file_name for w in words}
        rows = [row for row in backchannel_rows if row.file_name in names]
        speech_words, _ = recipe_split_backchannel_words(words, rows)
        speech.append([(w.start, w.end) for w in speech_words])
        backchannels.append(recipe_backchannel_intervals(rows))
    count = recipe_chunk_count(duration_s, start_s, chunk_s)
    return label_chunks(
        speech, backchannels, count, start_s=float(f"{start_s:.2f}"), chunk_s=chunk_s, strict=True, dialogue_id=dialogue_id
    )


__all__ = [
    "BackchannelRow",
    "Ms98Word",
    "parse_backchannel_csv_lines",
    "parse_ms98_word_lines",
    "recipe_backchannel_intervals",
    "recipe_clean_token",
    "recipe_labels_from_ms98",
    "recipe_split_backchannel_words",
]
