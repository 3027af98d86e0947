"""The report's model stages: which device, which checkpoints, and the judge over a whole conversation."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from turneval.checkpoints import CheckpointNotFoundError
from turneval.checkpoints import resolve_checkpoint as resolve
from turneval.dataset_scripts.audio import mono_mix
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.pause_decision.features import PauseDecisionError, own_channels

from .progress import progress_bar
from .result import ReportError


def check_device(device: str) -> str:
    """``device`` if this machine has it: ``cpu``, ``cuda``, ``cuda:N`` or ``mps``."""
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError):
        parsed = None
    if parsed is None or parsed.type not in ("cpu", "cuda", "mps"):
        raise ReportError(f"--device {device!r} is not a device; use cpu, cuda, cuda:N (a GPU index) or mps")
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise ReportError(f"--device {device}: CUDA is not available on this machine; use --device cpu")
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise ReportError(f"--device {device}: this machine has {torch.cuda.device_count()} CUDA device(s) (cuda:0 ...); pick one of them")
    if parsed.type == "mps" and not torch.backends.mps.is_available():
        raise ReportError(f"--device {device}: Apple's MPS backend is not available on this machine; use --device cpu")
    return str(parsed)


def resolve_checkpoint(kind: str, spec: str | Path | None, skip_flag: str) -> Path | None:
    """:func:`turneval.checkpoints.resolve_checkpoint` with errors worded for the report's options."""
    try:
        return resolve(kind, spec, hint=f"pass a local checkpoint folder, or {skip_flag} to skip this stage")
    except CheckpointNotFoundError as err:
        raise ReportError(str(err)) from None


def load_judge_model(judge: Any, device: str = "cpu") -> tuple[Any, str]:
    """A TurnTakingJudge from a checkpoint path (None: the bundled judge, ``turneval.checkpoints``) or a loaded model."""
    from turneval.modeling.judge_loading import JudgeCheckpointError, load_judge

    if judge is not None and not isinstance(judge, (str, Path)):
        return judge.to(device).eval(), type(judge).__name__
    path = resolve_checkpoint("judge", judge, "--no-judge")
    if path is None:
        raise ReportError(
            "no judge checkpoint: the bundled judge is not installed; "
            "pass --judge PATH (a TurnTakingJudge checkpoint folder), or --no-judge to skip the judge and agreement metrics"
        )
    try:
        model = load_judge(path)
    except JudgeCheckpointError as err:
        raise ReportError(f"{err} (pass --judge PATH to another checkpoint, or --no-judge to skip the judge)") from None
    return model.to(device).eval(), str(path)


def load_predictor_model(predictor: Any, device: str = "cpu") -> tuple[Any, str]:
    """A FutureActivityPredictor from a checkpoint path (None: the bundled default, ``turneval.checkpoints``) or a loaded model."""
    from turneval.naturalness_inference import load_predictor

    if predictor is not None and not isinstance(predictor, (str, Path)):
        return predictor.to(device).eval(), type(predictor).__name__
    path = resolve_checkpoint("predictor", predictor, "--no-predictor")
    if path is None or not (path / "config.json").is_file():
        what = "the bundled predictor is not installed" if path is None else f"{path} is not a FutureActivityPredictor checkpoint (no config.json)"
        raise ReportError(f"no naturalness predictor: {what}; pass --predictor PATH, or --no-predictor to skip the naturalness score")
    try:
        return load_predictor(path, device=device), str(path)
    except (OSError, ValueError, RuntimeError) as err:
        raise ReportError(f"{path}: the predictor checkpoint does not load ({err}); pass another --predictor PATH or --no-predictor") from None


def judge_probabilities(judge: Any, audio: np.ndarray, progress: bool = False, precision: str | None = None) -> np.ndarray:
    """The judge's ``[n_chunks, 5]`` probabilities over the mono mix: row t is the distribution
    over the label of chunk t + 1 from the audio up to the end of chunk t (``judge.score``'s layout).

    A causal judge is streamed window by window (progress bar, flat memory), its encoder in
    :func:`judge_precision`'s precision; a window-mode judge scores one window per chunk via
    ``judge.score``, in float32.
    """
    from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudgeStream

    mono = mono_mix(audio)
    config = judge.config
    spc = config.samples_per_chunk
    n_chunks = mono.shape[0] // spc
    if n_chunks < 2:
        raise ReportError(f"the conversation is {mono.shape[0] / SAMPLE_RATE:.3f} s long; the judge needs at least two {config.chunk_s * 1000:g} ms chunks")
    if config.context_mode != "causal":
        return judge.score(mono, sample_rate=SAMPLE_RATE).probabilities
    stream = TurnTakingJudgeStream(_judge_in_precision(judge, precision))
    probs = np.zeros((n_chunks, len(config.label_names)), dtype=np.float32)
    block = config.hop_chunks * spc
    starts = range(0, n_chunks * spc, block)
    for start in progress_bar(starts, len(starts), "turn-taking judge", progress and len(starts) > 1):
        indices, rows = stream.push(mono[start : min(start + block, n_chunks * spc)])
        probs[indices] = rows
    return probs


def judge_precision(judge: Any, precision: str | None = None) -> str:
    """The precision :func:`judge_probabilities` runs the judge's encoder in: ``precision``
    (``"auto"``, ``"bfloat16"``, ``"float32"``; None: ``$TURNEVAL_WHISPER_PRECISION``, else
    ``"auto"``: bfloat16 where the CPU multiplies it natively, as Whisper's cue,
    :func:`turneval.whisper_completion.encoder_dtype`); always float32 for a window-mode judge.

    On the real dev calls (1,042 s) the streamed judge costs 0.0119 CPU s per audio s in
    bfloat16 against 0.0247 in float32 on an AMX CPU, r = 0.99997 between them
    (benchmarks/experiments/judge_precision.py)."""
    from turneval.whisper_completion import precision_name

    return precision_name(_judge_dtype(judge, precision))


def _judge_dtype(judge: Any, precision: str | None) -> Any:
    import torch

    from turneval.whisper_completion import encoder_dtype

    return encoder_dtype(precision, judge.device) if judge.config.context_mode == "causal" else torch.float32


def _judge_in_precision(judge: Any, precision: str | None) -> Any:
    """The judge itself where its encoder already runs in that precision, else a copy whose
    encoder does (its head stays float32: the states are handed up in float32)."""
    import copy

    import torch

    dtype = _judge_dtype(judge, precision)
    if judge.encoder.conv1.weight.dtype == dtype:
        return judge
    # the encoder's weights are copied straight into dtype (deepcopy takes what its memo holds):
    # a float32 copy first would add 33 MB to the report's peak
    memo = {id(p): torch.nn.Parameter(p.detach().to(dtype), requires_grad=False) for p in judge.encoder.parameters()}
    lowered = copy.deepcopy(judge, memo)
    lowered.encoder.to(dtype)  # its buffers, if any
    return lowered


def judge_interruption_probabilities(judge: Any, dialogue: Any, labels: Any) -> dict[int, float]:
    """The judge's interruption rule (``judge.interruption_probabilities``) at every (e) decision
    of a two-speaker conversation: ``{resolving chunk: P(the interruption takes the floor)}``,
    from the features of each speaker's own channel before the decision
    (:mod:`~turneval.dataset_scripts.interruption_outcomes`). Empty when the judge has no
    interruption head."""
    from turneval.dataset_scripts.interruption_outcomes import (
        INTERRUPTION_FEATURES,
        interruption_features,
        interruption_readings,
    )

    rule = judge.config.interruption_head
    if rule is None:
        return {}
    unknown = [name for name in rule.features if name not in INTERRUPTION_FEATURES]
    if unknown:
        raise ReportError(f"the judge's interruption_head names features {unknown} that this turneval does not compute ({list(INTERRUPTION_FEATURES)})")
    try:
        audio = own_channels(dialogue, "interruption head")
    except PauseDecisionError as err:  # the same check as the pause decision's, worded as a report error
        raise ReportError(str(err)) from None
    readings = interruption_readings(labels)
    if not readings:
        return {}
    columns = [INTERRUPTION_FEATURES.index(name) for name in rule.features]
    features = np.stack([interruption_features(audio, reading)[columns] for reading in readings.values()])
    return {chunk: float(p) for chunk, p in zip(readings, judge.interruption_probabilities(features, rule))}


def two_party_judged_instances(judge: Any, dialogue: Any, labels: Any = None) -> list:
    """Every decision of a two-speaker conversation, each speaker as the system in turn
    (``two_party_instances``), with the judge's view of it as the report judges it: the chunk
    head's distribution, (a)/(d) from the judge's pause decision and (e) from the interruption
    head when the judge has them."""
    from turneval.dataset_scripts.agreement_instances import (
        two_party_instances,
        with_interruption_probabilities,
        with_pause_decision_probabilities,
    )
    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.pause_decision import pause_decision_probabilities

    view = conversation_view(dialogue)
    labels = view.labels if labels is None else labels
    instances = two_party_instances(dialogue, judge_probabilities(judge, dialogue.audio), labels)
    instances = with_pause_decision_probabilities(instances, pause_decision_probabilities(judge, view))
    return with_interruption_probabilities(instances, judge_interruption_probabilities(judge, dialogue, labels))
