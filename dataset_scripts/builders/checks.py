"""Checks a builder runs on each dialogue before using it, and the count of what it skipped.

Policy (the same in every builder):

- a dialogue whose audio file is missing stops the build with :class:`FileNotFoundError`
  naming the manifest, the dialogue and the file, before any example is generated: a wrong
  path is a user error to fix, not data to drop silently;
- a dialogue with one silent channel (no speech segment for one speaker) is skipped with
  the counted reason ``silent_channel``: it has no turn-taking to label or perturb, and
  corpora do hold such recordings (a dead microphone), which must not kill a long build;
- a dialogue where a perturbation has no place, or no 20-25 s crop can host it, is skipped
  per perturbation type with the reasons ``no_candidate`` / ``crop_too_short``.

Counts are kept in a :class:`SkipCounter` on the builder (``builder.skipped``) and
summarised in the log at the end of each split.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import datasets

from ..dialogue import SPEAKERS, Dialogue
from .manifest import read_dialogue_manifest


logger = datasets.logging.get_logger(__name__)

SILENT_CHANNEL = "silent_channel"


def require_audio_file(dialogue: Dialogue, manifest: str | Path) -> None:
    """Fail clearly when the dialogue names no audio or its audio file does not exist."""
    if dialogue.audio is not None:
        return
    if not dialogue.audio_path:
        raise ValueError(f"{manifest}: dialogue {dialogue.id!r} has no audio_path")
    if not Path(dialogue.audio_path).is_file():
        raise FileNotFoundError(
            f"{manifest}: dialogue {dialogue.id!r}: audio file {dialogue.audio_path} not found "
            "(fix its audio_path; relative paths are relative to the manifest)"
        )


def check_audio_files(manifest: str | Path) -> None:
    """Fail before any generation when a dialogue of the manifest misses its audio file.

    Checking up front means a wrong path costs nothing: the build stops with the file's
    name before hours of generation, not somewhere in the middle.
    """
    for _, dialogue in read_dialogue_manifest(manifest):
        require_audio_file(dialogue, manifest)


def silent_channels(dialogue: Dialogue) -> list[str]:
    """The speakers ("A"/"B") without a single speech segment in the ground truth."""
    return [SPEAKERS[k] for k, spk in enumerate(dialogue.segments) if not spk]


class SkipCounter(Counter):
    """Skips by reason (``Counter[str]``), with one log line per skip and a summary."""

    def skip(self, reason: str, detail: str) -> None:
        """Count one skip and say why in the log."""
        self[reason] += 1
        logger.warning(f"skipped ({reason}): {detail}")

    def summary(self) -> str:
        """``"2 silent_channel, 1 crop_too_short"``, or ``"none"``."""
        return ", ".join(f"{n} {reason}" for reason, n in self.most_common()) or "none"


__all__ = ["SILENT_CHANNEL", "SkipCounter", "check_audio_files", "require_audio_file", "silent_channels"]
