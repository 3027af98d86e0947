"""Input and output checks the commands share, done before any analysis (docs/inputs.md).

Every problem is an error (a :class:`~turneval.dataset_scripts.dialogue.DialogueError`, which the
CLI prints as one line without a traceback) that names the file and the problem in the words of
the command line; what turneval accepts but changes (merged segments, padded files) is said in a
note and an :class:`InputWarning`.

* :func:`check_output_file` / :func:`check_output_dir`: the output location can be written,
  checked before the analysis, writing nothing (a scratch file is created and removed).
* :func:`seconds_limit`: the argparse type of ``--max-seconds`` (a finite number > 0);
  :func:`seconds_limit_or_zero` that of ``batch --call-timeout`` (0 or above, 0: no limit).
* :func:`read_annotation_data`: ``--annotations`` in any format turneval reads (a turneval
  annotation JSON, a VAD CSV from ``turneval vad``, RTTM, ...), checked field by field.
* :func:`annotated_dialogue`: the annotations joined to their audio; speech more than
  :data:`AUDIO_TOLERANCE_S` past the audio end is an error, overlapping segments of one speaker
  are merged with a note.
* :func:`compare_mono_lengths`: a note when ``--user`` and ``--system`` differ in length.
"""
from __future__ import annotations

import argparse
import math
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Sequence

from turneval.dataset_scripts.audio import audio_duration
from turneval.dataset_scripts.dialogue import SPEAKERS, Dialogue, DialogueError, Word
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.readers._common import load_json
from turneval.dataset_scripts.readers.annotations import checked_annotation_fields


AUDIO_TOLERANCE_S = 1.0
"""Speech may end at most this far past the end of its audio (docs/formats.md, ``audio_tolerance_s``)."""

MONO_LENGTH_TOLERANCE_S = 1.0
"""``--user`` and ``--system`` files that differ by more than this get a note (the shorter is padded)."""


class InputError(DialogueError):
    """An input or output location the command cannot use; the message names it and the problem."""


class InputWarning(UserWarning):
    """turneval accepted the input but changed it (merged, padded); the report's notes say the same."""


# ---------------------------------------------------------------------------------------
# Output locations
# ---------------------------------------------------------------------------------------


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path.cwd()


def _check_writable(folder: Path, target: Path, option: str) -> None:
    """Create and remove a scratch file in ``folder``; an OSError becomes an InputError."""
    try:
        fd, scratch = tempfile.mkstemp(prefix=".turneval-write-check-", dir=folder)
    except OSError as err:
        raise InputError(f"{option} {target}: cannot write into {folder} ({err.strerror or err}); choose another {option}") from None
    os.close(fd)
    os.unlink(scratch)


def check_output_dir(path: str | Path, option: str = "--out") -> Path:
    """Check that ``path`` is (or can become) a writable folder; creates nothing."""
    path = Path(path)
    base = _nearest_existing(path)
    if not base.is_dir():
        what = "is a file" if base == path else f"lies under {base}, which is a file"
        raise InputError(f"{option} {path}: {what}, not a folder; choose another {option}")
    _check_writable(base, path, option)
    return path


def check_output_file(path: str | Path, option: str = "--out") -> Path:
    """Check that the file ``path`` can be written (its folder exists or can be made); creates nothing."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{option} {path}: is a folder; give a file name")
    base = _nearest_existing(path.parent)
    if not base.is_dir():
        raise InputError(f"{option} {path}: lies under {base}, which is a file, not a folder; choose another {option}")
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError(f"{option} {path}: the file exists and is read-only; choose another {option}")
    _check_writable(base, path, option)
    return path


# ---------------------------------------------------------------------------------------
# Option values
# ---------------------------------------------------------------------------------------


def _seconds(text: str, zero_turns_off: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if zero_turns_off and value == 0:
        return value
    if not math.isfinite(value) or value <= 0:
        lowest = ">= 0 (0: no limit)" if zero_turns_off else "above 0"
        raise argparse.ArgumentTypeError(f"must be a number of seconds {lowest}, got {text!r}")
    return value


def seconds_limit(text: str) -> float:
    """argparse type of a time limit: a finite number of seconds above 0."""
    return _seconds(text, zero_turns_off=False)


def seconds_limit_or_zero(text: str) -> float:
    """argparse type of a time limit that 0 turns off: a finite number of seconds, 0 or above."""
    return _seconds(text, zero_turns_off=True)


# ---------------------------------------------------------------------------------------
# Annotations
# ---------------------------------------------------------------------------------------


def _note(notes: list[str], text: str) -> None:
    notes.append(text)
    warnings.warn(text, InputWarning, stacklevel=3)


def read_annotation_data(path: str | Path) -> dict[str, Any]:
    """The annotations of ``--annotations`` (or a JSON given as the conversation) as a checked dict
    (``id, segments, words, system_speaker, audio_path, metadata``).

    A ``.json`` file is a turneval annotation JSON (``Dialogue.save_annotations``); any other file
    is read with :func:`turneval.dataset_scripts.readers.read_dialogue` (a VAD CSV from
    ``turneval vad``, RTTM, Switchboard, word JSON pairs ...), without its audio.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: annotation file not found" if not path.is_dir() else f"{path}: is a folder, not an annotation file")
    if path.suffix.lower() != ".json":
        from turneval.dataset_scripts.readers import read_dialogue

        dialogue = read_dialogue(path)
        data = dialogue.to_dict()
        data["audio_path"] = None  # the audio comes from the command line
        return data

    raw = load_json(path)
    if not isinstance(raw, dict) or "segments" not in raw:
        raise InputError(f"{path}: not a turneval annotation JSON (needs \"segments\": [[A's [start, end] pairs], [B's]])")
    return checked_annotation_fields(raw, path)


def _overlaps(segments: Sequence[Sequence[float]]) -> int:
    """How many segments start before the previous one (in time order) ends."""
    count, end = 0, -math.inf
    for start, stop in sorted(map(tuple, segments)):
        if start < end:
            count += 1
        end = max(end, stop)
    return count


def annotated_dialogue(
    data: dict[str, Any], path: str | Path, audio: Any, system_channel: int, *, tolerance_s: float = AUDIO_TOLERANCE_S
) -> tuple[Dialogue, list[str]]:
    """The annotations joined to their ``[2, n]`` 16 kHz audio, and the notes about what changed.

    Raises InputError when speech or words run more than ``tolerance_s`` past the audio's end
    (the wrong audio file, or times in the wrong unit).
    """
    path = Path(path)
    duration = audio.shape[1] / SAMPLE_RATE
    notes: list[str] = []
    ends = [(end, SPEAKERS[k], "segment") for k, segs in enumerate(data["segments"]) for _, end in segs]
    ends += [(w[1], SPEAKERS[k], "word") for k, ws in enumerate(data.get("words") or []) for w in ws]
    if ends:
        last, speaker, what = max(ends)
        if last > duration + tolerance_s:
            raise InputError(
                f"{path}: speaker {speaker}'s {what} ends at {last:.2f} s but the audio is only {duration:.2f} s long "
                f"(more than {tolerance_s:g} s past its end); is it the right audio file, and are the times in seconds?"
            )
    for k, segs in enumerate(data["segments"]):
        n = _overlaps(segs)
        if n:
            _note(notes, f"{path}: speaker {SPEAKERS[k]} has {n} segment(s) overlapping an earlier one; they were merged.")
    words = None if data.get("words") is None else [[Word(*w) for w in ws] for ws in data["words"]]
    dialogue = Dialogue(
        id=data["id"],
        segments=data["segments"],
        words=words,
        audio=audio,
        system_speaker=system_channel,
        duration=duration,
        metadata=dict(data.get("metadata") or {}),
    )
    return dialogue, notes


def compare_mono_lengths(user: str | Path, system: str | Path, *, tolerance_s: float = MONO_LENGTH_TOLERANCE_S) -> list[str]:
    """A note (and an InputWarning) when the two mono files differ in length by more than ``tolerance_s``."""
    lengths = {"--user": audio_duration(user), "--system": audio_duration(system)}
    (short_flag, short), (long_flag, long) = sorted(lengths.items(), key=lambda kv: kv[1])
    notes: list[str] = []
    if long - short > tolerance_s:
        _note(
            notes,
            f"{long_flag} {system if long_flag == '--system' else user} is {long:.1f} s long but {short_flag} "
            f"{user if short_flag == '--user' else system} only {short:.1f} s; the shorter file was padded with silence at its end "
            "(are they two channels of the same session?).",
        )
    return notes


__all__ = [
    "AUDIO_TOLERANCE_S",
    "InputError",
    "InputWarning",
    "annotated_dialogue",
    "check_output_dir",
    "check_output_file",
    "compare_mono_lengths",
    "read_annotation_data",
    "seconds_limit",
    "seconds_limit_or_zero",
]
