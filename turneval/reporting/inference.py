"""The report's model stages: which device, which checkpoints, and the judge over a whole conversation."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from turneval.checkpoints import CheckpointNotFoundError
from turneval.checkpoints import resolve_checkpoint as resolve
from turneval.dataset_scripts.audio import mono_mix
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.pauses import Pause

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


def judge_probabilities(judge: Any, audio: np.ndarray, progress: bool = False) -> np.ndarray:
    """The judge's ``[n_chunks, 5]`` probabilities over the mono mix: row t is the distribution
    over the label of chunk t + 1 from the audio up to the end of chunk t (``judge.score``'s layout).

    A causal judge is streamed window by window (progress bar, flat memory); a window-mode
    judge scores one window per chunk via ``judge.score``.
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
    stream = TurnTakingJudgeStream(judge)
    probs = np.zeros((n_chunks, len(config.label_names)), dtype=np.float32)
    block = config.hop_chunks * spc
    starts = range(0, n_chunks * spc, block)
    for start in progress_bar(starts, len(starts), "turn-taking judge", progress and len(starts) > 1):
        indices, rows = stream.push(mono[start : min(start + block, n_chunks * spc)])
        probs[indices] = rows
    return probs


def turn_end_head_probabilities(judge: Any, channels: np.ndarray, dialogue: Any, pauses: Sequence[tuple[int, float, float]]) -> np.ndarray:
    """The judge's turn-end head at ``pauses``, each ``(speaker, speech_end_s, horizon_s)``: that
    speaker's own channel (a row of ``channels``) up to the horizon and, where the head reads
    timing features, the conversation's timing when that IPU ended, from ``dialogue``'s speech
    segments (:func:`~turneval.dataset_scripts.turn_end_decisions.speech_timings`)."""
    from turneval.dataset_scripts.turn_end_decisions import TIMING_FEATURES, speech_timings, timing_at, timing_features
    from turneval.modeling.modeling_turn_taking_judge import pause_window

    head = judge.config.turn_end_head
    if not len(pauses):
        return np.zeros(0, dtype=np.float32)
    windows = np.stack([pause_window(channels[speaker], horizon, float(head["window_s"]), SAMPLE_RATE) for speaker, _, horizon in pauses])
    names = list(head.get("timing_features") or [])
    timing = None
    if names:
        if names != list(TIMING_FEATURES):
            raise ReportError(f"the judge's turn-end head reads timing features {names}; this turneval computes {list(TIMING_FEATURES)}: update turneval or the checkpoint")
        timings = speech_timings(dialogue)
        timing = np.stack([timing_features(timing_at(timings, speaker, end)) for speaker, end, _ in pauses])
    return judge.turn_end_probabilities(windows, timing)


def _own_channels(dialogue: Any, head: str) -> np.ndarray:
    """The conversation's ``[2, n]`` audio, one speaker per channel, which the judge's ``head`` hears."""
    audio = np.asarray(dialogue.audio)
    if audio.ndim != 2 or audio.shape[0] != 2:
        raise ReportError(f"dialogue {dialogue.id!r}: the judge's {head} hears each speaker's own channel; give two channels (got shape {audio.shape})")
    return audio


@dataclass
class PauseDecisions:
    """The judge's (a)/(d) decisions of one conversation.

    Attributes:
        probabilities: ``{decision chunk: P(the other party speaks next)}``.
        unread: ``{decision chunk: why}`` where Whisper's cue could not be read ("no words": Whisper
            heard no word in the clip; "echo": the pauser's last speech is the other party's
            echo, :func:`heard_echo`), so the judge's ``pause_decision_fallback`` decided there.
    """

    probabilities: dict[int, float]
    unread: dict[int, str] = field(default_factory=dict)


def judge_pause_decisions(judge: Any, dialogue: Any, labels: Any, readings: dict[int, Pause] | None = None,
                          whisper: Any = None) -> PauseDecisions:
    """The judge's decision at every (a)/(d) pause of a two-speaker conversation. With a pause
    rule (``judge.pause_rule``), the rule over :func:`pause_decision_features` (taken at the end
    of the silence); else the turn-end head alone. Empty when the judge has neither.
    ``readings``: the pauses' :func:`judge_pause_readings`, when the caller has them already.
    ``whisper``: a :class:`~turneval.whisper_completion.WhisperCompletion` (the report's, on its
    transcriber's Whisper when it transcribes); a rule that reads ``whisper_complete_logit`` loads
    the default one when none is given. Where that cue cannot be read, the judge's
    ``pause_decision_fallback`` decides."""
    readings = judge_pause_readings(judge, dialogue, labels) if readings is None else readings
    if not readings:
        return PauseDecisions({})
    chosen = judge.pause_rule(transcribing=whisper is not None)
    if chosen is None:
        audio = _own_channels(dialogue, "turn-end head")
        p = turn_end_head_probabilities(judge, audio, dialogue, [(r.pauser, r.speech_end, r.horizon) for r in readings.values()])
        return PauseDecisions({chunk: float(v) for chunk, v in zip(readings, p)})
    rule = chosen[1]
    reads_whisper = "whisper_complete_logit" in rule.features
    if reads_whisper and whisper is None:
        whisper = default_whisper_completion()
    features = pause_decision_features(judge, dialogue, readings, names=rule.features, whisper=whisper if reads_whisper else None)
    unread: dict[int, str] = {}
    if reads_whisper:
        cue = features["whisper_complete_logit"]
        for k, (chunk, reading) in enumerate(readings.items()):
            if not np.isfinite(cue[k]):
                unread[chunk] = "no words"
            elif heard_echo(dialogue, reading):
                unread[chunk] = "echo"
        # without a fallback rule an unread cue is no evidence either way
        features["whisper_complete_logit"] = np.where(np.isfinite(cue), cue, 0.0)
    p = np.asarray(judge.pause_decision_probabilities(features, rule=rule), dtype=np.float64)
    fallback = judge.config.pause_decision_fallback
    if unread and fallback is not None:
        rows = np.array([chunk in unread for chunk in readings])
        p = np.where(rows, judge.pause_decision_probabilities(features, rule=fallback), p)
    return PauseDecisions({chunk: float(v) for chunk, v in zip(readings, p)}, unread)


def judge_pause_probabilities(judge: Any, dialogue: Any, labels: Any, readings: dict[int, Pause] | None = None,
                              whisper: Any = None) -> dict[int, float]:
    """``{decision chunk: P(the other party speaks next)}`` at every (a)/(d) pause:
    :func:`judge_pause_decisions`' probabilities."""
    return judge_pause_decisions(judge, dialogue, labels, readings, whisper).probabilities


@functools.lru_cache(maxsize=1)
def default_whisper_completion() -> Any:
    """Whisper tiny.en's turn-completion reader (:mod:`turneval.whisper_completion`), loaded once a process."""
    from turneval.whisper_completion import WhisperCompletion

    return WhisperCompletion()


def pause_rule_name(judge: Any, whisper: Any = None) -> str | None:
    """The config key of the rule that decides (a)/(d) (``judge.pause_rule``): with Whisper's cue
    at hand ``pause_decision_whisper`` where the judge has it; None without a rule. Where Whisper's
    cue cannot be read, ``pause_decision_fallback`` decides (:class:`PauseDecisions`)."""
    chosen = judge.pause_rule(transcribing=whisper is not None)
    return None if chosen is None else chosen[0]


def judge_pause_readings(judge: Any, dialogue: Any, labels: Any) -> dict[int, Pause]:
    """Every (a)/(d) decision of a two-speaker conversation (both views: (a) the user's pauses,
    (d) the system's) as a :class:`~turneval.dataset_scripts.pauses.Pause` of
    :func:`~turneval.dataset_scripts.agreement_instances.pause_readings` at the judge's ``stop_s``; empty when the judge has no turn-end head, pause decision or
    turn-completion cue to read them."""
    from dataclasses import replace

    from turneval.dataset_scripts.agreement_instances import (
        PAUSE_METRICS,
        dialogue_agreement_instances,
        pause_readings,
    )

    config = judge.config
    if config.turn_end_head is None and config.pause_decision is None and config.turn_completion_cue is None:
        return {}
    placeholder = np.zeros((len(labels), len(config.label_names)))
    view = dialogue if dialogue.system_speaker is not None else replace(dialogue, system_speaker=1)
    chunks = {inst.chunk for inst in dialogue_agreement_instances(view, placeholder, labels=labels, metrics=PAUSE_METRICS)}
    return pause_readings(labels, sorted(chunks), config.pause_stop_s)


def pause_decision_features(judge: Any, dialogue: Any, readings: dict[int, Pause], names: Sequence[str] | None = None,
                            whisper: Any = None) -> dict[str, np.ndarray]:
    """The features ``names`` (default: those ``config.pause_decision`` reads) at each reading,
    in order: the turn-end head's logit (the pausing speaker's own channel up to the reading's
    horizon), the turn-completion cue's logit and probability (that channel from the turn start
    minus the cue's ``pre_speech_s`` to its ``clip_end_s``), Whisper's punctuation cue on the same
    clips (``whisper``: a :class:`~turneval.whisper_completion.WhisperCompletion`) and the silence elapsed at the decision
    (``silence_elapsed_s`` always, its log ``log_silence_s`` when named), and that log against the
    call's earlier silences (``log_silence_vs_call``: only silences that ended before the pause's
    began, :func:`call_silences`)."""
    from turneval.modeling.modeling_turn_taking_judge import log_silence, log_silence_vs_call

    names = list(judge.config.pause_decision.features if names is None else names)
    audio = _own_channels(dialogue, "pause decision")
    rows = list(readings.values())
    out: dict[str, np.ndarray] = {}
    if "turn_end_logit" in names:
        p = turn_end_head_probabilities(judge, audio, dialogue, [(r.pauser, r.speech_end, r.horizon) for r in rows])
        p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
        out["turn_end_logit"] = np.log(p / (1 - p))
    cue = judge.config.turn_completion_cue
    clips = []
    if cue is not None:
        clips = [audio[r.pauser, int(cue.clip_start_s(r.turn_start) * SAMPLE_RATE) : int(round(cue.clip_end_s(r.horizon, r.time) * SAMPLE_RATE))]
                 for r in rows]
    if "turn_complete_logit" in names or "turn_complete_p" in names:
        out["turn_complete_logit"] = np.asarray(judge.turn_complete_logits(clips), dtype=np.float64)
        out["turn_complete_p"] = 1.0 / (1.0 + np.exp(-out["turn_complete_logit"]))
    if "whisper_complete_logit" in names:
        if whisper is None or cue is None:
            raise ValueError("whisper_complete_logit needs a WhisperCompletion (turneval.whisper_completion) and the judge's turn-completion cue")
        out["whisper_complete_logit"] = np.asarray(whisper.logits(clips), dtype=np.float64)
    out["silence_elapsed_s"] = np.array([r.silence_elapsed_s for r in rows], dtype=np.float64)
    if "log_silence_s" in names:
        out["log_silence_s"] = log_silence(out["silence_elapsed_s"])
    if "log_silence_vs_call" in names:
        if judge.config.call_tempo is None:
            raise ReportError("log_silence_vs_call needs the judge's call_tempo (its config.json has none): "
                              "add a call_tempo block (modeling.configuration_turn_taking_judge.CallTempoConfig) or drop the feature")
        out["log_silence_vs_call"] = log_silence_vs_call(out["silence_elapsed_s"], np.array([r.time - r.silence_elapsed_s for r in rows]),
                                                         call_silences(dialogue), judge.config.call_tempo)
    return out


ECHO_MARGIN_DB = 10.0
"""How much louder the other party's own channel must be, over the pauser's last speech, for that
speech to count as the other party's echo: a line echo comes back 10-30 dB down."""
ECHO_OVERLAP = 0.8
"""The share of the pauser's last speech during which the other party speaks, for an echo."""
ECHO_LISTEN_S = 1.0
"""How much of the pauser's last speech (s, before its end) the echo check hears."""


def heard_echo(dialogue: Any, reading: Pause) -> bool:
    """Whether the pauser's last speech before ``reading`` is the other party's voice leaking back
    on the pauser's channel (line echo) rather than the pauser's own: over its last
    :data:`ECHO_LISTEN_S`, the other party speaks at least :data:`ECHO_OVERLAP` of the time and
    their own channel is :data:`ECHO_MARGIN_DB` louder. Whisper would read the other party's words
    there, so its cue says nothing about the pauser."""
    audio = np.asarray(dialogue.audio)
    start, end = max(0.0, reading.speech_end - ECHO_LISTEN_S), reading.speech_end
    if end - start < 0.1:
        return False
    other = 1 - reading.pauser
    overlap = sum(max(0.0, min(e, end) - max(s, start)) for s, e in dialogue.segments[other])
    if overlap < ECHO_OVERLAP * (end - start):
        return False
    a, b = int(start * SAMPLE_RATE), int(end * SAMPLE_RATE)
    power = [float(np.mean(np.square(audio[ch, a:b], dtype=np.float64))) + 1e-12 for ch in (reading.pauser, other)]
    return 10.0 * np.log10(power[1] / power[0]) >= ECHO_MARGIN_DB


def call_silences(dialogue: Any) -> np.ndarray:
    """``[n, 2]``: where nobody speaks in ``dialogue`` (start, end; s), between its first and last
    speech (the report's events: IPUs from words where a speaker has them, else segments)."""
    from turneval.dataset_scripts.events import extract_events

    events = extract_events(dialogue)
    inner = [(s.start, s.end) for s in events.silences if s.start > 0.0 and s.end < events.duration]
    return np.asarray(inner, dtype=np.float64).reshape(-1, 2)


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
    audio = _own_channels(dialogue, "interruption head")
    readings = interruption_readings(labels)
    if not readings:
        return {}
    columns = [INTERRUPTION_FEATURES.index(name) for name in rule.features]
    features = np.stack([interruption_features(audio, reading)[columns] for reading in readings.values()])
    return {chunk: float(p) for chunk, p in zip(readings, judge.interruption_probabilities(features, rule))}


def two_party_judged_instances(judge: Any, dialogue: Any, labels: Any = None) -> list:
    """Every decision of a two-speaker conversation, each speaker as the system in turn
    (``two_party_instances``), with the judge's view of it as the report judges it: the chunk
    head's distribution, (a)/(d) from the turn-end head and (e) from the interruption head when
    the judge has them."""
    from turneval.dataset_scripts.agreement_instances import (
        two_party_instances,
        with_interruption_probabilities,
        with_turn_end_probabilities,
    )
    from turneval.dataset_scripts.labels import chunk_labels

    labels = chunk_labels(dialogue) if labels is None else labels
    instances = two_party_instances(dialogue, judge_probabilities(judge, dialogue.audio), labels)
    instances = with_turn_end_probabilities(instances, judge_pause_probabilities(judge, dialogue, labels))
    return with_interruption_probabilities(instances, judge_interruption_probabilities(judge, dialogue, labels))
