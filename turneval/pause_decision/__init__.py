"""The judge's pause decision, in one place: at every (a)/(d) pause, does the other party take the turn?

Metrics (a) and (d) of Talking Turns, the fit of the judge's rule, the TurnBench export and the
benchmarks all take this decision the same way, from one
:class:`~turneval.dataset_scripts.conversation_view.ConversationView` of the conversation:

==========================================  =========================================================
module                                      what it holds
==========================================  =========================================================
:mod:`~turneval.pause_decision.pause`       :class:`Pause`, one pause record (who paused, where the
                                            speech ended, when the decision is taken, the outcome)
:mod:`~turneval.pause_decision.records`     the one producer of pause records (:class:`Pause`): the
                                            judge's grid readings, smart-turn's IPU-end ones, the
                                            TurnBench stream's stop-time ones, a benchmark's asked ones
:mod:`~turneval.pause_decision.features`    what the rule reads at each pause (silence, Whisper's
                                            turn-completion cue and its readers, smart-turn's cue,
                                            the turn-end head) and the echo check
:mod:`~turneval.pause_decision.decide`      the decision: :func:`decide_pauses` and its output, the
                                            *pause decision probabilities* ``{chunk: P(shift)}``
==========================================  =========================================================

The rule itself (a logistic regression over named features, ``PauseRule``) lives in the judge's
config; ``TurnTakingJudge.pause_decision_probabilities`` applies it to the features it is given.
``TurnTakingJudge.turn_end_probabilities`` is the turn-end head alone, one of those features::

    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.pause_decision import decide_pauses

    decisions = decide_pauses(judge, conversation_view(dialogue))
    decisions.probabilities        # the pause decision probabilities: {decision chunk: P(shift)}
"""
from .decide import (
    PauseDecisions,
    decide_pauses,
    default_cue_reader,
    judge_pause_records,
    pause_decision_probabilities,
    pause_rule_name,
    reads_pauses,
)
from .features import (
    PauseDecisionError,
    completion_cue,
    cue_clips,
    heard_echo,
    load_cue_reader,
    pause_decision_features,
    smart_turn_clip,
    turn_end_head_probabilities,
)
from .pause import PAUSE_DECISIONS, Pause
from .records import asked_pauses, ipu_pauses, judge_pauses, pause_readings, silence_start_chunk, stop_time_pauses


__all__ = [
    "PAUSE_DECISIONS",
    "Pause",
    "PauseDecisionError",
    "PauseDecisions",
    "asked_pauses",
    "completion_cue",
    "cue_clips",
    "decide_pauses",
    "default_cue_reader",
    "heard_echo",
    "ipu_pauses",
    "judge_pause_records",
    "judge_pauses",
    "load_cue_reader",
    "pause_decision_features",
    "pause_decision_probabilities",
    "pause_readings",
    "pause_rule_name",
    "reads_pauses",
    "silence_start_chunk",
    "smart_turn_clip",
    "stop_time_pauses",
    "turn_end_head_probabilities",
]
