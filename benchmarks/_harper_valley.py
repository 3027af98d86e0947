"""Real bank calls for the benchmarks: the Harper Valley dev calls of ``../shared/real/harper_valley``.

The folder (``--harper-valley-root``, ``$TURNEVAL_HARPER_VALLEY_ROOT``, default
``<repository>/../shared/real/harper_valley``) holds ``audio/SID.flac`` (stereo 8 kHz, channel 0
= agent, channel 1 = caller) and ``transcript/SID.json``; the reader is
:func:`turneval.dataset_scripts.readers.read_harper_valley`. Licence CC BY 4.0: credit
"Gridspace-Stanford Harper Valley speech dataset (CC BY 4.0)" beside every figure.

* :func:`load_calls`: the calls loaded as ``turneval score`` loads a stereo file (16 kHz) with
  each channel's speech found by the same streamed Silero VAD pass, the words attached (the
  perturbation edits need them for their text rules).
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path


ENV_VAR = "TURNEVAL_HARPER_VALLEY_ROOT"


class HarperValleyDataMissing(FileNotFoundError):
    """No Harper Valley calls where they were looked for; the message says where and how to point at them."""


def default_root() -> Path:
    """``$TURNEVAL_HARPER_VALLEY_ROOT``, else ``<repository>/../shared/real/harper_valley``."""
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "real" / "harper_valley"


def load_calls(root: str | os.PathLike | None = None, limit: int | None = None) -> list:
    """Every call with audio and a transcript under ``root`` (in name order) as a Dialogue: 16 kHz
    stereo audio, Silero VAD segments per channel (the report's settings), the words.

    Raises HarperValleyDataMissing when the folder holds no such call.
    """
    from turneval.dataset_scripts.readers import read_harper_valley
    from turneval.reporting.inputs import vad_segments

    root = Path(root) if root is not None else default_root()
    transcripts = [t for t in sorted((root / "transcript").glob("*.json")) if (root / "audio" / f"{t.stem}.flac").is_file()]
    if not transcripts:
        raise HarperValleyDataMissing(f"no Harper Valley data: no call under {root} has both audio/SID.flac and transcript/SID.json; "
                                      f"pass --harper-valley-root PATH or set ${ENV_VAR}")
    calls = []
    for transcript in transcripts[:limit]:
        call = read_harper_valley(transcript)
        segments, _ = vad_segments(call.audio, None, progress=False)
        calls.append(replace(call, segments=segments, metadata={**call.metadata, "segments": "silero"}))
    return calls
