"""Naturalness of whole dialogues with a FutureActivityPredictor (TurnNat §III-D).

    >>> from turneval.naturalness_inference import load_predictor, score_dialogue   # doctest: +SKIP
    >>> model = load_predictor("checkpoints/future_activity_predictor_lookahead")
    >>> result = score_dialogue(dialogue, model)
    >>> result.score, result.worst_units(3)

The model runs over the conversation in overlapping windows (flat memory for any length),
its per-frame distributions are compared with the observed future voice activity, and
``turneval.metrics.naturalness_score`` turns the frame NLLs into MeanNLL, TailNLL and m.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import torch

from turneval.dataset_scripts.audio import load_stereo  # audio I/O only when needed
from turneval.dataset_scripts.dialogue import Dialogue, DialogueError
from turneval.dataset_scripts.grids import FRAME_HZ, SAMPLE_RATE
from turneval.dataset_scripts.vap_targets import DEFAULT_LAYOUT
from turneval.metrics.naturalness_score import NaturalnessResult, score_naturalness
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel


def load_predictor(path: str | Path | None = None, device: str = "cpu") -> FutureActivityPredictorModel:
    """A FutureActivityPredictor from a local checkpoint folder (safetensors); by default the one
    :func:`turneval.checkpoints.default_checkpoint` names (``$TURNEVAL_PREDICTOR``, else the bundled one)."""
    if path is None:
        from turneval.checkpoints import default_checkpoint

        path = default_checkpoint("predictor")
        if path is None:
            raise FileNotFoundError("no predictor checkpoint given and the bundled one is not installed; pass a checkpoint folder")
    path = Path(path)
    if not (path / "config.json").exists():
        raise FileNotFoundError(f"{path}: not a FutureActivityPredictor checkpoint (no config.json); pass a checkpoint folder")
    model = FutureActivityPredictorModel.from_pretrained(str(path), use_safetensors=True)
    return model.to(device).eval()


def _audio(dialogue: Dialogue) -> np.ndarray:
    if dialogue.audio is not None:
        return dialogue.audio
    if dialogue.audio_path is None:
        raise DialogueError(f"dialogue {dialogue.id!r} has no audio to score")

    return load_stereo(dialogue.audio_path)


def stream_windows(total: int, window: int, context: int) -> list[tuple[int, int, int]]:
    """``(window start, first frame it emits, window end)`` of ``predict_long``'s window grid:
    every window after the first starts ``context`` frames before the frames it emits."""
    out, start_out = [], 0
    while start_out < total:
        win_start = max(0, start_out - context)
        win_end = min(total, win_start + window)
        out.append((win_start, start_out, win_end))
        start_out = win_end
    return out


def dialogue_words(dialogue: Dialogue) -> list[list[tuple[float, float, str]]] | None:
    """Per speaker ``(start, end, text)`` of the dialogue's words (a transcript, or ``--transcribe``'s
    Whisper words), None when it has none: what a word-reading predictor reads."""
    if not dialogue.has_words:
        return None
    return [[(w.start, w.end, w.text) for w in spoken] for spoken in dialogue.words]


def reads_words(model: FutureActivityPredictorModel) -> bool:
    """Whether ``model`` reads the words beside the timing (``vad_features="timing+words"``)."""
    return bool(getattr(model, "reads_words", False))


@torch.no_grad()
def frame_probabilities(
    dialogue: Dialogue,
    model: FutureActivityPredictorModel,
    window_s: float | None = None,
    context_s: float | None = None,
    progress: bool = False,
) -> np.ndarray:
    """The model's ``[frames, 256]`` future-activity distribution over the whole dialogue.

    ``window_s`` / ``context_s``: streaming windows (default: the model configuration's).
    ``progress``: a progress bar over the windows on stderr. A word-reading model reads the
    dialogue's words (:func:`dialogue_words`); without words its cue inputs are 0. The windows are those of
    ``model.predict_long`` (one call per window), so the result equals a single ``predict_long`` call.
    """
    device = next(model.parameters()).device
    config = model.config
    if config.input_type == "audio":
        if config.sample_rate != SAMPLE_RATE:
            raise ValueError(f"model expects {config.sample_rate} Hz audio; turneval works at {SAMPLE_RATE} Hz")
        inputs = torch.from_numpy(np.ascontiguousarray(_audio(dialogue), dtype=np.float32)).to(device)
        total, hop = inputs.shape[-1] // config.hop_length, config.hop_length
    else:
        va = dialogue.frame_activity().T.astype(np.float32)
        inputs = torch.from_numpy(model.vad_inputs(va, dialogue_words(dialogue))).to(device)
        total, hop = inputs.shape[0], None
    window_s = config.stream_window_s if window_s is None else window_s
    context_s = config.stream_context_s if context_s is None else context_s
    if not 0 < context_s < window_s:
        raise ValueError(f"need 0 < context_s < window_s, got {context_s}, {window_s}")
    windows = stream_windows(total, int(round(window_s * config.frame_hz)), int(round(context_s * config.frame_hz)))
    from tqdm.auto import tqdm

    out = np.empty((total, config.num_classes), dtype=np.float32)
    bar = tqdm(windows, desc="naturalness", unit="window", disable=not progress or len(windows) < 2, leave=False, file=sys.stderr)
    for win_start, start_out, win_end in bar:
        piece = inputs[:, win_start * hop : win_end * hop] if hop else inputs[win_start:win_end]
        probs = model.predict_long(piece, window_s=window_s, context_s=context_s)
        out[start_out:win_end] = probs[start_out - win_start :].float().cpu().numpy()
    return out


class NaturalnessUndefinedWarning(UserWarning):
    """A dialogue had no turn-taking boundary unit to score: its naturalness is undefined (NaN)."""


def score_dialogue(dialogue: Dialogue, model: FutureActivityPredictorModel, progress: bool = False, **score_kwargs) -> NaturalnessResult:
    """Naturalness (MeanNLL, TailNLL, m and the worst units) of one dialogue.

    Voice activity comes from the dialogue's segments (ground truth or VAD); extra keyword
    arguments go to :func:`turneval.metrics.naturalness_score.score_naturalness`; ``progress``
    shows a progress bar over the model's windows. When no unit
    can be scored the result's figures are NaN, ``result.is_defined`` is False and a
    :class:`NaturalnessUndefinedWarning` says why.
    """
    if model.config.frame_hz != FRAME_HZ:
        raise ValueError(f"model runs at {model.config.frame_hz} Hz; naturalness units are defined at {FRAME_HZ} Hz")

    va = dialogue.frame_activity().T
    if va.shape[0] <= DEFAULT_LAYOUT.horizon:
        # Too short for any frame to have its 2 s of future: nothing can be scored (undefined, not an error).
        nll = np.full(va.shape[0], np.nan, dtype=np.float32)
        result = score_naturalness(va, frame_nll=nll, duration_s=dialogue.duration, segment_id=dialogue.id, **score_kwargs)
    else:
        probs = frame_probabilities(dialogue, model, progress=progress)
        result = score_naturalness(va, frame_probs=probs, duration_s=dialogue.duration, segment_id=dialogue.id, **score_kwargs)
    if not result.is_defined:
        warnings.warn(f"dialogue {dialogue.id!r}: naturalness undefined: {result.undefined_reason}", NaturalnessUndefinedWarning, stacklevel=2)
    return result
