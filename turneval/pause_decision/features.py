"""What the judge's pause decision reads at each pause: its features, the clips they are heard on,
the reader of Whisper's turn-completion cue, and whether that cue can be trusted there (line echo)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from turneval.dataset_scripts.dialogue import DialogueError
from turneval.dataset_scripts.grids import SAMPLE_RATE

from .pause import Pause


if TYPE_CHECKING:  # pragma: no cover - typing only
    from turneval.dataset_scripts.conversation_view import ConversationView


class PauseDecisionError(DialogueError):
    """The judge's pause decision cannot be taken on this conversation or checkpoint; the message says what to fix."""


def completion_cue(names: Sequence[str]) -> str | None:
    """Which of Whisper's turn-completion cues (``COMPLETION_CUE_FEATURES``: the completion
    reader's, Whisper's own) ``names`` reads, or None.

    >>> completion_cue(["log_silence_s", "completion_reader_logit"])
    'completion_reader_logit'
    """
    from turneval.modeling.configuration_turn_taking_judge import COMPLETION_CUE_FEATURES

    cues = [n for n in names if n in COMPLETION_CUE_FEATURES]
    if len(cues) > 1:
        raise PauseDecisionError(f"the features {list(names)} read Whisper's turn-completion cue twice ({cues}); keep one")
    return cues[0] if cues else None


COMPLETION_READER_ENV_VAR = "TURNEVAL_COMPLETION_READER"
"""The folder of a completion reader (``training/distill_completion_reader.py``) for a judge whose
rule reads ``completion_reader_logit``: none ships (docs/validation.md)."""


def load_cue_reader(cue: str, device: str = "cpu", transcriber: Any = None) -> Any:
    """The reader of ``cue``: Whisper's own 30 s decoding (``whisper_complete_logit``, every
    report's) or a completion reader (``completion_reader_logit``; the folder in
    ``$TURNEVAL_COMPLETION_READER``). Either hears with the ``transcriber``'s Whisper when the
    report transcribes, so Whisper is loaded once."""
    import os

    lent = {"model": transcriber.model, "processor": transcriber.processor} if transcriber is not None else {}
    if cue == "whisper_complete_logit":
        from turneval.whisper_completion import WhisperCompletion

        return WhisperCompletion(device=device, **lent)
    if cue == "completion_reader_logit":
        from turneval.modeling.modeling_completion_reader import CompletionReader

        folder = os.environ.get(COMPLETION_READER_ENV_VAR)
        if not folder:
            raise PauseDecisionError(
                "this judge's pause rule reads completion_reader_logit, the completion reader's cue, and no completion reader ships "
                "with turneval (docs/validation.md: its left-out runs did not beat the silence on every corpus); build one with "
                f"training/distill_completion_reader.py and set ${COMPLETION_READER_ENV_VAR} to its folder, or use a judge whose "
                "rule reads whisper_complete_logit")
        return CompletionReader(folder, device=device, **lent)
    raise PauseDecisionError(f"{cue!r} is not a turn-completion cue; expected completion_reader_logit or whisper_complete_logit")


def own_channels(dialogue: Any, reader: str) -> np.ndarray:
    """The conversation's ``[2, n]`` audio, one speaker per channel, which ``reader`` (a part of the judge) hears."""
    audio = np.asarray(dialogue.audio)
    if audio.ndim != 2 or audio.shape[0] != 2:
        raise PauseDecisionError(f"dialogue {dialogue.id!r}: the judge's {reader} hears each speaker's own channel; give two channels (got shape {audio.shape})")
    return audio


def turn_end_head_probabilities(judge: Any, view: "ConversationView", pauses: Sequence[Pause]) -> np.ndarray:
    """The judge's turn-end head alone at ``pauses``: the pauser's own channel up to each pause's
    horizon and, where the head reads timing features, the conversation's timing when that IPU
    ended (the view's :attr:`~turneval.dataset_scripts.conversation_view.ConversationView.speech_timings`)."""
    from turneval.dataset_scripts.turn_end_decisions import TIMING_FEATURES, timing_at, timing_features
    from turneval.modeling.modeling_turn_taking_judge import pause_window

    head = judge.config.turn_end_head
    if not len(pauses):
        return np.zeros(0, dtype=np.float32)
    channels = own_channels(view.dialogue, "turn-end head")
    windows = np.stack([pause_window(channels[p.pauser], p.horizon, float(head["window_s"]), SAMPLE_RATE) for p in pauses])
    names = list(head.get("timing_features") or [])
    timing = None
    if names:
        if names != list(TIMING_FEATURES):
            raise PauseDecisionError(f"the judge's turn-end head reads timing features {names}; this turneval computes {list(TIMING_FEATURES)}: "
                                     "update turneval or the checkpoint")
        timings = view.speech_timings
        timing = np.stack([timing_features(timing_at(timings, p.pauser, p.speech_end)) for p in pauses])
    return judge.turn_end_probabilities(windows, timing)


def cue_clips(judge: Any, view: "ConversationView", pauses: Sequence[Pause]) -> list[np.ndarray]:
    """The turn-completion cue's clip at each pause: the pauser's own channel from the turn start
    minus the cue's ``pre_speech_s`` to its ``clip_end_s`` (empty list when the judge has no cue)."""
    cue = judge.config.turn_completion_cue
    if cue is None:
        return []
    audio = own_channels(view.dialogue, "pause decision")
    return [audio[p.pauser, int(cue.clip_start_s(p.turn_start) * SAMPLE_RATE) : int(round(cue.clip_end_s(p.horizon, p.time) * SAMPLE_RATE))]
            for p in pauses]


def pause_decision_features(judge: Any, view: "ConversationView", pauses: Sequence[Pause], names: Sequence[str],
                            whisper: Any = None) -> dict[str, np.ndarray]:
    """The features ``names`` at each pause, in order, each one array of one value per pause:
    the turn-end head's logit (``turn_end_logit``), the turn-completion cue's logit and probability
    (``turn_complete_logit``, ``turn_complete_p``: both when either is named) and Whisper's
    punctuation cue (``whisper_complete_logit``; ``whisper``: a
    :class:`~turneval.whisper_completion.WhisperCompletion`; NaN where Whisper heard no word) on
    :func:`cue_clips` (or ``completion_reader_logit``, the same cue through the completion
    reader's 8 s window; ``whisper`` is then a
    :class:`~turneval.modeling.modeling_completion_reader.CompletionReader`: :func:`load_cue_reader`), the silence elapsed at the decision (``silence_elapsed_s`` always, its log
    ``log_silence_s`` when named), and that log against the call's earlier silences
    (``log_silence_vs_call``: the view's silences that ended before the pause's began). The rule
    reads these as they are (``TurnTakingJudge.pause_decision_probabilities``)."""
    from turneval.modeling.modeling_turn_taking_judge import log_silence, log_silence_vs_call

    names = list(names)
    pauses = list(pauses)
    out: dict[str, np.ndarray] = {}
    if "turn_end_logit" in names:
        p = np.clip(np.asarray(turn_end_head_probabilities(judge, view, pauses), dtype=np.float64), 1e-6, 1 - 1e-6)
        out["turn_end_logit"] = np.log(p / (1 - p))
    clips = cue_clips(judge, view, pauses)
    if "turn_complete_logit" in names or "turn_complete_p" in names:
        out["turn_complete_logit"] = np.asarray(judge.turn_complete_logits(clips), dtype=np.float64)
        out["turn_complete_p"] = 1.0 / (1.0 + np.exp(-out["turn_complete_logit"]))
    cue = completion_cue(names)
    if cue is not None:
        if whisper is None or judge.config.turn_completion_cue is None:
            raise ValueError(f"{cue} needs its reader (turneval.pause_decision.load_cue_reader) and the judge's turn-completion cue")
        out[cue] = np.asarray(whisper.logits(clips), dtype=np.float64)
    out["silence_elapsed_s"] = np.array([p.silence_elapsed_s for p in pauses], dtype=np.float64)
    if "log_silence_s" in names:
        out["log_silence_s"] = log_silence(out["silence_elapsed_s"])
    if "log_silence_vs_call" in names:
        if judge.config.call_tempo is None:
            raise PauseDecisionError("log_silence_vs_call needs the judge's call_tempo (its config.json has none): "
                                     "add a call_tempo block (modeling.configuration_turn_taking_judge.CallTempoConfig) or drop the feature")
        out["log_silence_vs_call"] = log_silence_vs_call(out["silence_elapsed_s"], np.array([p.time - p.silence_elapsed_s for p in pauses]),
                                                         view.silences, judge.config.call_tempo)
    return out


ECHO_MARGIN_DB = 10.0
"""How much louder the other party's own channel must be, over the pauser's last speech, for that
speech to count as the other party's echo: a line echo comes back 10-30 dB down."""
ECHO_OVERLAP = 0.8
"""The share of the pauser's last speech during which the other party speaks, for an echo."""
ECHO_LISTEN_S = 1.0
"""How much of the pauser's last speech (s, before its end) the echo check hears."""


def heard_echo(dialogue: Any, pause: Pause) -> bool:
    """Whether the pauser's last speech before ``pause`` is the other party's voice leaking back
    on the pauser's channel (line echo) rather than the pauser's own: over its last
    :data:`ECHO_LISTEN_S`, the other party speaks at least :data:`ECHO_OVERLAP` of the time and
    their own channel is :data:`ECHO_MARGIN_DB` louder. Whisper would read the other party's words
    there, so its cue says nothing about the pauser."""
    audio = np.asarray(dialogue.audio)
    start, end = max(0.0, pause.speech_end - ECHO_LISTEN_S), pause.speech_end
    if end - start < 0.1:
        return False
    other = 1 - pause.pauser
    overlap = sum(max(0.0, min(e, end) - max(s, start)) for s, e in dialogue.segments[other])
    if overlap < ECHO_OVERLAP * (end - start):
        return False
    a, b = int(start * SAMPLE_RATE), int(end * SAMPLE_RATE)
    power = [float(np.mean(np.square(audio[ch, a:b], dtype=np.float64))) + 1e-12 for ch in (pause.pauser, other)]
    return 10.0 * np.log10(power[1] / power[0]) >= ECHO_MARGIN_DB


def smart_turn_clip(dialogue: Any, pause: Pause) -> np.ndarray:
    """What pipecat hands smart-turn at ``pause``: the pauser's channel from the turn start minus
    the pre-speech margin to the pause's horizon."""
    from turneval.smart_turn import PRE_SPEECH_S

    lo = int(max(0.0, pause.turn_start - PRE_SPEECH_S) * SAMPLE_RATE)
    return dialogue.audio[pause.pauser, lo : int(round(pause.horizon * SAMPLE_RATE))]


__all__ = ["COMPLETION_READER_ENV_VAR", "ECHO_LISTEN_S", "ECHO_MARGIN_DB", "ECHO_OVERLAP", "PauseDecisionError", "completion_cue", "cue_clips", "heard_echo", "load_cue_reader", "own_channels",
           "pause_decision_features", "smart_turn_clip", "turn_end_head_probabilities"]
