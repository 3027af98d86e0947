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

When it is asked (:func:`pause_decisions`): pipecat asks smart-turn once its VAD has heard
``stop_secs`` = 200 ms of silence after the speaker's IPU; the audio given ends there (on the
40 ms grid), or earlier when the other party starts speaking first.
"""
from __future__ import annotations

import importlib.util
import math
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from turneval.dataset_scripts.agreement_instances import (
    AgreementInstance,
    dialogue_agreement_instances,
    floor_owners,
    pause_readings,
    silence_start_chunk,
)
from turneval.dataset_scripts.grids import CHUNK_S
from turneval.dataset_scripts.labels import chunk_labels
from turneval.dataset_scripts.pauses import Pause
from turneval.metrics.agreement import agreement


if TYPE_CHECKING:  # pragma: no cover - typing only
    from turneval.dataset_scripts.dialogue import Dialogue
    from turneval.dataset_scripts.labels import ChunkLabels

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

    def probability(self, user_audio: np.ndarray) -> float:
        """P(turn complete) from the user's 16 kHz audio since the turn started (any length)."""
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


# ---------------------------------------------------------------------------------------
# When smart-turn is asked: the (a)/(d) decisions and what the pausing speaker said
# ---------------------------------------------------------------------------------------


def pause_decisions(
    dialogue: "Dialogue", labels: "ChunkLabels | None" = None, metrics: Sequence[str] = ("a", "d"), stop_s: float = VAD_STOP_S
) -> list[Pause]:
    """The (a)/(d) agreement instances of ``dialogue`` whose silence starts where one of the
    pauser's IPUs ends (a silence entered otherwise, e.g. after an overlap, is left out), as
    :class:`~turneval.dataset_scripts.pauses.Pause` records of what a turn-end model hears.

    The fields as measured here: ``speech_end`` is where the pauser's IPU ended (s, off the
    grid); ``horizon`` ``stop_s`` after it on the 40 ms grid, or the decision time if that comes
    first; ``turn_start`` the start of the pauser's first IPU after the other party last held
    the floor; ``silence_elapsed_s`` as
    :func:`~turneval.dataset_scripts.agreement_instances.pause_readings` measures it; and
    ``until_pauser_resumes_s`` the seconds until the pauser speaks again (inf: never).
    ``silence_until_next_s`` is not measured."""
    bad = [m for m in metrics if m not in ("a", "d")]
    if bad:
        raise ValueError(f"turn-end decisions exist for metrics a and d only, got {bad}")
    if labels is None:
        labels = chunk_labels(dialogue)
    n = len(labels)
    placeholder = np.full((n, 5), 0.2)  # the instances only need the decisions, not a judge
    instances = dialogue_agreement_instances(dialogue, placeholder, labels=labels, metrics=tuple(metrics))
    elapsed = {chunk: r.silence_elapsed_s for chunk, r in pause_readings(labels, [i.chunk for i in instances], stop_s).items()}
    owners = floor_owners(labels.floor)
    out = []
    for inst in instances:
        pauser = dialogue.user_speaker if inst.metric == "a" else dialogue.system_speaker
        segments = dialogue.segments[pauser]
        decision_start = float(labels.chunk_starts[inst.chunk])
        silence_start = float(labels.chunk_starts[silence_start_chunk(labels.labels, inst.chunk)])
        # The pauser's IPU must end where the silence starts (the labels look one chunk ahead).
        ends = [e for s, e in segments if silence_start - 4 * CHUNK_S <= e <= silence_start + 2 * CHUNK_S]
        if not ends:
            continue
        ipu_end = max(ends)
        grid_end = math.ceil(ipu_end / CHUNK_S - 1e-9) * CHUNK_S
        horizon = round(min(grid_end + stop_s, decision_start) / CHUNK_S) * CHUNK_S
        # The pauser's turn began after the other party last held the floor (backchannels do not take it).
        other_floor = np.flatnonzero(owners[: inst.chunk] == 1 - pauser)
        since = float(labels.chunk_ends[other_floor[-1]]) if len(other_floor) else 0.0
        starts = [s for s, e in segments if s >= since - 1e-9 and s < ipu_end]
        turn_start = min(starts) if starts else max(0.0, ipu_end - WINDOW_S)
        later = [s for s, e in segments if s > ipu_end + 1e-9]
        out.append(Pause(
            session=dialogue.id, chunk=inst.chunk, pauser=pauser, speech_end=ipu_end, time=inst.time, horizon=horizon,
            turn_start=turn_start, silence_elapsed_s=elapsed[inst.chunk],
            until_pauser_resumes_s=(min(later) - ipu_end) if later else math.inf, decision=inst.decision, metric=inst.metric,
        ))
    return out


def pauser_audio(dialogue: "Dialogue", pause: Pause) -> np.ndarray:
    """What pipecat hands smart-turn: the pauser's channel from the turn start minus the
    pre-speech margin to the pause's horizon."""
    lo = int(max(0.0, pause.turn_start - PRE_SPEECH_S) * SAMPLE_RATE)
    return dialogue.audio[pause.pauser, lo : int(round(pause.horizon * SAMPLE_RATE))]


# ---------------------------------------------------------------------------------------
# The report's section
# ---------------------------------------------------------------------------------------

RULE = (
    f"{NAME} hears the pausing speaker's own channel from the start of their turn (minus 0.5 s) to 200 ms after "
    "their IPU ends (pipecat's VAD stop_secs; earlier if the other party speaks first), the last 8 s of it; "
    "P(turn complete) > 0.5 is the label T (the other party takes the turn), else C. Instances: the report's (a) and "
    "(d) instances whose silence follows the pauser's IPU. The TurnTakingJudge figures beside it are on the same "
    "instances, at its own decision time (the end of the silence)."
)


def turn_end_judge_section(
    dialogue: "Dialogue",
    model: SmartTurnV3,
    labels: "ChunkLabels | None" = None,
    judge_agreement: dict[str, Any] | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Agreement of ``model`` with the (a)/(d) decisions taken, and the TurnTakingJudge's on
    the same instances (from the report's ``agreement`` section, when the judge ran)."""
    from tqdm.auto import tqdm


    if dialogue.audio is None:
        raise ValueError(f"dialogue {dialogue.id!r} has no audio for the turn-end judge")
    decisions = pause_decisions(dialogue, labels)
    judged = {}
    if judge_agreement is not None:
        judged = {(row["metric"], row["chunk"]): row for row in judge_agreement.get("instances", []) if row["metric"] in ("a", "d")}
    ours, judge_same, rows = [], [], []
    for d in tqdm(decisions, desc=NAME, unit="pause", disable=not progress or len(decisions) < 2, leave=False, file=sys.stderr):
        p = model.probability(pauser_audio(dialogue, d))
        # p_T = P(complete), p_C = 1 - p: the metrics' rule p_T - p_C > 0 is exactly p > 0.5.
        ours.append(AgreementInstance(d.metric, d.decision, (0.0, 0.0, 0.0, p, 1.0 - p), d.session, d.time, d.chunk))
        label = "T" if p > 0.5 else "C"
        row = {"metric": d.metric, "time": d.time, "chunk": d.chunk, "decision": d.decision, "ipu_end": round(d.speech_end, 4),
               "horizon": round(d.horizon, 4), "turn_start": round(d.turn_start, 4), "p_complete": round(p, 4),
               "label": label, "agrees": label == d.decision}
        judge_row = judged.get((d.metric, d.chunk))
        if judge_row is not None:
            judge_same.append(judge_row)
            row.update(judge_label=judge_row["judge_label"], judge_agrees=judge_row["agrees"])
        rows.append(row)
    return {
        "name": NAME,
        "model_file": str(model.path),
        "rule": RULE,
        "n_instances": len(rows),
        "metrics": agreement(ours) if ours else {},
        "judge_same_instances": (agreement(judge_same) if judge_same else {}) if judge_agreement is not None else None,
        "instances": rows,
    }


__all__ = [
    "INSTALL_HINT",
    "NAME",
    "SmartTurnUnavailable",
    "SmartTurnV3",
    "TURN_END_JUDGES",
    "load_turn_end_judge",
    "log_mel_features",
    "model_path",
    "pauser_audio",
    "pipecat_segment",
    "pause_decisions",
    "turn_end_judge_section",
]
