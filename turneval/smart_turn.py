"""smart-turn v3.2 (pipecat) as a turn-end judge for metrics (a) and (d), run without pipecat.

Metrics (a) and (d) ask one question at a pause: *does the turn end here?* smart-turn v3.2 is
the end-of-turn model voice-agent builders use (pipecat; trained on real speech). The report
offers it beside the TurnTakingJudge (``turneval report --turn-end-judge smart-turn``): at
every (a)/(d) decision it hears the pausing speaker's own channel and its "turn complete"
probability becomes a T/C label, scored against the decision taken with the same agreement
measure as the judge's.

The ONNX file ships in the PyPI package ``pipecat-ai``
(``pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx``); ``pip install --no-deps
pipecat-ai`` installs it, and nothing else of pipecat is needed or imported (importing pipecat
needs its whole dependency tree), so the file is located with ``importlib.util.find_spec``.
The pre-processing of ``LocalSmartTurnAnalyzerV3._predict_endpoint`` (pipecat-ai 1.14.0) is
replicated step by step:

1. the speaker's audio since the start of the turn (minus 500 ms of pre-speech, the
   ``pre_speech_ms`` default), as int16 samples scaled by 1/32768 (pipecat buffers int16);
2. the last 8 s, zero-padded at the *start* to exactly 8 s;
3. Whisper log-mel features as ``WhisperFeatureExtractor(chunk_length=8)`` with
   ``do_normalize=True``: zero-mean unit-variance waveform, centred 400-point periodic-Hann
   STFT (reflect padding, hop 160, float64), Slaney mel filters (80 bands, 0-8 kHz), log10 with
   a 1e-10 floor, last frame dropped, clamp at max - 8, then (x + 4) / 4 -> ``[80, 800]``;
4. ``onnxruntime`` with pipecat's session options (sequential, one inter-op thread); the
   output is the sigmoid probability that the turn is complete (> 0.5: complete).

This module is the model. When it is asked (the (a)/(d) pauses and the audio it hears) is
:func:`turneval.pause_decision.records.ipu_pauses` and
:func:`turneval.pause_decision.features.smart_turn_clip`; the report's section of its agreement
is :mod:`turneval.smart_turn_report`.
"""
from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np


SAMPLE_RATE = 16000
WINDOW_S = 8
N_FFT, HOP_LENGTH, N_MELS = 400, 160, 80
PRE_SPEECH_S = 0.5  # pipecat SmartTurnParams.pre_speech_ms
VAD_STOP_S = 0.2  # pipecat VADParams.stop_secs: silence before the turn analyser is asked
MODEL_FILE = "smart-turn-v3.2-cpu.onnx"
PACKAGE = "pipecat-ai"
NAME = "smart-turn v3.2"
TURN_END_JUDGES = ("smart-turn",)
"""Names ``turneval report --turn-end-judge`` accepts."""
INSTALL_HINT = (
    f"{NAME} needs the model file of the PyPI package {PACKAGE}: pip install --no-deps pipecat-ai==1.14.0 "
    "(only its ONNX file is used; pipecat itself is not imported)"
)


class SmartTurnUnavailable(RuntimeError):
    """The smart-turn ONNX model is not installed; the message says what to install."""


def model_path() -> Path:
    """The ONNX file inside the installed pipecat package (found without importing pipecat)."""
    spec = importlib.util.find_spec("pipecat")
    if spec is None or not spec.submodule_search_locations:
        raise SmartTurnUnavailable(INSTALL_HINT)
    for root in spec.submodule_search_locations:
        candidate = Path(root) / "audio" / "turn" / "smart_turn" / "data" / MODEL_FILE
        if candidate.is_file():
            return candidate
    raise SmartTurnUnavailable(f"{PACKAGE} is installed but has no {MODEL_FILE}; {INSTALL_HINT}")


@lru_cache(maxsize=1)
def _mel_filters() -> np.ndarray:
    """Slaney-scale, Slaney-normalised mel filters ``[201, 80]`` (Whisper's)."""
    from transformers.audio_utils import mel_filter_bank

    return mel_filter_bank(
        num_frequency_bins=N_FFT // 2 + 1, num_mel_filters=N_MELS, min_frequency=0.0,
        max_frequency=SAMPLE_RATE / 2, sampling_rate=SAMPLE_RATE, norm="slaney", mel_scale="slaney",
    )


def pipecat_segment(user_audio: np.ndarray) -> np.ndarray:
    """Steps 1-2: int16 quantisation, then the last 8 s, zero-padded at the start (the judge's
    turn-completion cue cuts its input the same way: one copy of the rule)."""
    from turneval.modeling.modeling_turn_taking_judge import cue_segment

    return cue_segment(user_audio, WINDOW_S, SAMPLE_RATE)


def log_mel_features(audio_8s: np.ndarray) -> np.ndarray:
    """Step 3: Whisper log-mel ``[80, 800]`` float32 of exactly 8 s of 16 kHz audio."""
    x = np.asarray(audio_8s, dtype=np.float32)
    if x.shape != (WINDOW_S * SAMPLE_RATE,):
        raise ValueError(f"smart-turn features need {WINDOW_S * SAMPLE_RATE} samples (8 s at 16 kHz), got shape {x.shape}")
    x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)  # float32, before the float64 STFT (as the reference)
    padded = np.pad(x.astype(np.float64), (N_FFT // 2, N_FFT // 2), mode="reflect")
    window = np.hanning(N_FFT + 1)[:-1]  # periodic Hann
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP_LENGTH]
    power = np.abs(np.fft.rfft(frames * window, axis=-1)) ** 2  # [frames, 201]
    log_spec = np.log10(np.maximum(1e-10, _mel_filters().T @ power.T))[:, :-1]
    log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
    return ((log_spec + 4.0) / 4.0).astype(np.float32)


class SmartTurnV3:
    """smart-turn v3.2 through onnxruntime: ``probability(user_audio)`` of a complete turn."""

    name = NAME

    def __init__(self, path: str | Path | None = None, threads: int = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.inter_op_num_threads = 1
        options.intra_op_num_threads = threads
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.path = Path(path) if path is not None else model_path()
        self.session = ort.InferenceSession(str(self.path), sess_options=options, providers=["CPUExecutionProvider"])
        from threadpoolctl import ThreadpoolController

        self._blas = ThreadpoolController()  # finds the loaded BLAS libraries once

    def probability(self, user_audio: np.ndarray) -> float:
        """P(turn complete) from the user's 16 kHz audio since the turn started (any length)."""
        # the mel product is large enough for OpenBLAS to split over every core, and its idle
        # threads then spin through the ONNX run: on 2 cores the smart-turn stage of a report cost
        # twice its wall time in CPU. One thread gives the same values (it splits the output, not the sums).
        with self._blas.limit(limits=1, user_api="blas"):
            features = log_mel_features(pipecat_segment(user_audio))[None]
        (probs,) = self.session.run(None, {"input_features": features})[:1]
        return float(np.asarray(probs).reshape(-1)[0])


def load_turn_end_judge(name: Any) -> SmartTurnV3:
    """The turn-end judge the report's ``turn_end_judge`` names ("smart-turn"), or a ready one."""
    if isinstance(name, SmartTurnV3):
        return name
    if name not in TURN_END_JUDGES:
        raise ValueError(f"unknown turn-end judge {name!r}; choose from {', '.join(TURN_END_JUDGES)}")
    return SmartTurnV3()


__all__ = [
    "INSTALL_HINT",
    "NAME",
    "SmartTurnUnavailable",
    "SmartTurnV3",
    "TURN_END_JUDGES",
    "load_turn_end_judge",
    "log_mel_features",
    "model_path",
    "pipecat_segment",
]
