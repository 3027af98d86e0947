"""Real two-party recordings with audio, the predictors to score them with, and m as ``turneval score`` gets it.

Shared by ``real_perturbations.py`` (TurnNat's edits on real audio) and ``naturalness_range.py``
(the range of m on real human conversations):

* :func:`real_recordings`: the SpokenWOZ calls (``_spokenwoz``), the Harper Valley calls
  (``_harper_valley``) and every pair of close-talk
  channels of the AMI ES2004a excerpt (``_ami``), each a stereo Dialogue at 16 kHz whose speech
  segments come from Silero VAD per channel, as ``turneval score`` finds them;
* :func:`predictors`: (name, model) for both bundled predictors, the default one when
  ``$TURNEVAL_PREDICTOR`` names another, and any extra checkpoint folders;
* :func:`score_as_turneval`: m of a stereo Dialogue by the path of ``turneval score``: speech
  found by VAD on its audio, then :func:`turneval.naturalness_inference.score_dialogue`.
"""
from __future__ import annotations

import itertools
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np


CORPUS_TITLES = {"spokenwoz": "SpokenWOZ", "harper_valley": "Harper Valley", "ami": "AMI channel pairs"}
"""A Dialogue's ``metadata["corpus"]`` -> how the figures name it, in the order they are reported."""

GENERATIONS = (
    "future_activity_predictor_demo", "future_activity_predictor_switchboard", "future_activity_predictor_words", "future_activity_predictor_lookahead",
)
"""The predictors every naturalness benchmark on real speech reports side by side: the two that ship
(look-ahead, word-reading) and the earlier generations kept in benchmarks/baselines/ (demo, Switchboard)."""


def ami_channel_pairs(root: str | None = None) -> list:
    """One stereo Dialogue per pair of speakers of the AMI recordings that have their own
    close-talk channels (ES2004a: 4 channels, 6 pairs), speech by Silero VAD per channel.

    Raises ``_ami.AmiDataMissing`` when there is no AMI folder.
    """
    from _ami import load_recordings

    from turneval.dataset_scripts.dialogue import Dialogue
    from turneval.reporting.inputs import vad_segments

    out = []
    for rec in load_recordings(root):
        for a, b in itertools.combinations(sorted(rec.sources), 2):
            audio = np.stack([rec.sources[a], rec.sources[b]]).astype(np.float32)
            segments, _ = vad_segments(audio, None, progress=False)
            if not all(segments):
                continue  # a channel without speech is no conversation
            out.append(Dialogue(f"{rec.id}:{a}+{b}", segments, audio=audio, metadata={"corpus": "ami", "segments": "silero"}))
    return out


def real_recordings(spokenwoz_root: str | None = None, ami_root: str | None = None, quick: bool = False,
                    harper_valley_root: str | None = None) -> tuple[list, list[str]]:
    """``(dialogues, missing)``: the SpokenWOZ calls, the Harper Valley calls and the AMI channel
    pairs that are found (``quick``: SpokenWOZ only), and one line per data folder that is not.
    Each Dialogue names its corpus in ``metadata["corpus"]``."""
    from _ami import AmiDataMissing
    from _harper_valley import HarperValleyDataMissing
    from _harper_valley import load_calls as load_harper_valley
    from _spokenwoz import SpokenwozDataMissing, load_calls

    dialogues, missing = [], []
    try:
        dialogues += load_calls(spokenwoz_root)
    except SpokenwozDataMissing as err:
        missing.append(str(err))
    if not quick:
        try:
            dialogues += load_harper_valley(harper_valley_root)
        except HarperValleyDataMissing as err:
            missing.append(str(err))
        try:
            dialogues += ami_channel_pairs(ami_root)
        except AmiDataMissing as err:
            missing.append(str(err))
    return dialogues, missing


def checkpoint_label(path: str | Path) -> str:
    """The name a checkpoint gives itself (``provenance.json``), else its folder's name: the key
    of its range of m in the data file (:func:`turneval.naturalness_range.checkpoint_key`)."""
    from turneval.naturalness_range import checkpoint_key

    return checkpoint_key(path)


def predictors(extra: Sequence[str] = ()) -> list[tuple[str, Any]]:
    """(name, loaded model) for the predictors of every generation found, the default one (``$TURNEVAL_PREDICTOR``)
    when it is another, and ``extra`` checkpoint folders; each checkpoint once."""
    from turneval.checkpoints import default_checkpoint, named_checkpoint
    from turneval.naturalness_inference import load_predictor

    paths = [p for p in map(named_checkpoint, GENERATIONS) if p is not None]
    default = default_checkpoint("predictor")
    for path in ([Path(default)] if default is not None else []) + [Path(p) for p in extra]:
        if path.resolve() not in {p.resolve() for p in paths}:
            paths.append(path)
    return [(checkpoint_label(p), load_predictor(p)) for p in paths if (p / "config.json").is_file()]


def heard_as_turneval(dialogue):
    """The stereo Dialogue with each channel's speech as ``turneval score`` finds it in the same
    audio (the report's streamed Silero VAD pass)."""
    from dataclasses import replace

    from turneval.reporting.inputs import vad_segments

    segments, _ = vad_segments(dialogue.audio, None, progress=False)
    return replace(dialogue, segments=segments)


def score_given_segments(dialogue, model) -> float:
    """m of a Dialogue from the segments it carries (NaN when no boundary unit can be scored)."""
    from turneval.naturalness_inference import NaturalnessUndefinedWarning, score_dialogue

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NaturalnessUndefinedWarning)
        return float(score_dialogue(dialogue, model).score)


def score_as_turneval(dialogue, model) -> float:
    """m of a stereo Dialogue as ``turneval score`` gets it from the same audio: speech by
    :func:`heard_as_turneval`, then the predictor. To score one recording with several
    predictors, call :func:`heard_as_turneval` once and :func:`score_given_segments` per predictor."""
    return score_given_segments(heard_as_turneval(dialogue), model)
