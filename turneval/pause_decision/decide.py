"""The judge's (a)/(d) decision at every pause of a conversation: its pause decision probabilities.

The *pause decision probability* at a pause is P(shift): that the other party takes the turn
rather than the pauser going on. The judge's ``pause_decision`` rule gives it from the features of
:mod:`~turneval.pause_decision.features`; a judge without a rule gives its turn-end head's
probability instead (``TurnTakingJudge.turn_end_probabilities``: the head alone).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .features import completion_cue, heard_echo, load_cue_reader, pause_decision_features, turn_end_head_probabilities
from .pause import Pause
from .records import judge_pauses


if TYPE_CHECKING:  # pragma: no cover - typing only
    from turneval.dataset_scripts.conversation_view import ConversationView


@dataclass
class PauseDecisions:
    """The judge's (a)/(d) decisions of one conversation.

    Attributes:
        probabilities: ``{decision chunk: pause decision probability}`` (P(shift): the other party
            takes the turn).
        unread: ``{decision chunk: why}`` where Whisper's cue could not be read ("no words": Whisper
            heard no word in the clip, or the clip is silent; "echo": the pauser's last speech is the other party's
            echo, :func:`~turneval.pause_decision.features.heard_echo`), so the judge's
            ``pause_decision_fallback`` decided there.
    """

    probabilities: dict[int, float]
    unread: dict[int, str] = field(default_factory=dict)


def reads_pauses(judge: Any) -> bool:
    """Whether ``judge`` decides pauses at all (a turn-end head, a pause decision rule or a turn-completion cue)."""
    config = judge.config
    return config.turn_end_head is not None or config.pause_decision is not None or config.turn_completion_cue is not None


def judge_pause_records(judge: Any, view: "ConversationView") -> dict[int, Pause]:
    """``{decision chunk: Pause}`` at every (a)/(d) decision of ``view`` as the judge reads it (at
    its ``pause_stop_s``; :func:`~turneval.pause_decision.records.judge_pauses`); empty when the
    judge does not decide pauses (:func:`reads_pauses`)."""
    return judge_pauses(view, judge.config.pause_stop_s) if reads_pauses(judge) else {}


def decide_pauses(judge: Any, view: "ConversationView", pauses: dict[int, Pause] | None = None, whisper: Any = None) -> PauseDecisions:
    """The judge's decision at every (a)/(d) pause of ``view``. With a pause rule
    (``judge.pause_rule``), the rule over :func:`~turneval.pause_decision.features.pause_decision_features`
    (taken at the end of the silence); else the turn-end head alone. Empty when the judge has neither.
    ``pauses``: :func:`judge_pause_records` of ``view``, when the caller has them already.
    ``whisper``: the reader of the turn-completion cue the rule reads (the report's, from
    :func:`~turneval.pause_decision.features.load_cue_reader`: the completion reader for
    ``completion_reader_logit``, Whisper's own decoding for ``whisper_complete_logit``); a rule that
    reads one loads the default reader when none is given. Where that cue cannot be read, the
    judge's ``pause_decision_fallback`` decides."""
    pauses = judge_pause_records(judge, view) if pauses is None else pauses
    if not pauses:
        return PauseDecisions({})
    chosen = judge.pause_rule(transcribing=whisper is not None)
    if chosen is None:
        p = turn_end_head_probabilities(judge, view, list(pauses.values()))
        return PauseDecisions({chunk: float(v) for chunk, v in zip(pauses, p)})
    rule, fallback = chosen[1], judge.config.pause_decision_fallback
    cue_name = completion_cue(rule.features)
    if cue_name is not None and whisper is None:
        whisper = default_cue_reader(cue_name)
    names = list(dict.fromkeys([*rule.features, *(fallback.features if fallback is not None else ())]))
    features = pause_decision_features(judge, view, list(pauses.values()), names, whisper=whisper if cue_name else None)
    unread: dict[int, str] = {}
    if cue_name is not None:
        cue = features[cue_name]
        for k, (chunk, pause) in enumerate(pauses.items()):
            if not np.isfinite(cue[k]):
                unread[chunk] = "no words"
            elif heard_echo(view.dialogue, pause):
                unread[chunk] = "echo"
        # without a fallback rule an unread cue is no evidence either way
        features[cue_name] = np.where(np.isfinite(cue), cue, 0.0)
    p = np.asarray(judge.pause_decision_probabilities(features, rule=rule), dtype=np.float64)
    if unread and fallback is not None:
        rows = np.array([chunk in unread for chunk in pauses])
        p = np.where(rows, judge.pause_decision_probabilities(features, rule=fallback), p)
    return PauseDecisions({chunk: float(v) for chunk, v in zip(pauses, p)}, unread)


def pause_decision_probabilities(judge: Any, view: "ConversationView", pauses: dict[int, Pause] | None = None,
                                 whisper: Any = None) -> dict[int, float]:
    """``{decision chunk: pause decision probability}`` at every (a)/(d) pause: :func:`decide_pauses`' probabilities."""
    return decide_pauses(judge, view, pauses, whisper).probabilities


@functools.lru_cache(maxsize=2)
def default_cue_reader(cue: str) -> Any:
    """The reader of the turn-completion cue ``cue`` (:func:`~turneval.pause_decision.features.load_cue_reader`), loaded once a process."""
    return load_cue_reader(cue)


def pause_rule_name(judge: Any, whisper: Any = None) -> str | None:
    """The config key of the rule that decides (a)/(d) (``judge.pause_rule``): with Whisper's cue
    at hand ``pause_decision_whisper`` where the judge has it; None without a rule. Where Whisper's
    cue cannot be read, ``pause_decision_fallback`` decides (:class:`PauseDecisions`)."""
    chosen = judge.pause_rule(transcribing=whisper is not None)
    return None if chosen is None else chosen[0]


__all__ = ["PauseDecisions", "decide_pauses", "default_cue_reader", "judge_pause_records", "pause_decision_probabilities",
           "pause_rule_name", "reads_pauses"]
