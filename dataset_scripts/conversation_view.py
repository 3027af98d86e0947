"""One conversation read once: its events, 40 ms labels, silences and decision instances.

A report, the fit of the judge's pause decision, the TurnBench export and the benchmarks all read
the same things off a two-speaker :class:`~turneval.dataset_scripts.dialogue.Dialogue`: the
turn-taking events (:func:`~turneval.dataset_scripts.events.extract_events`), the 40 ms labels and
floor (:func:`~turneval.dataset_scripts.labels.chunk_labels`), the silences between the first and
the last speech, and the decisions of metrics (a)-(e)
(:mod:`~turneval.dataset_scripts.agreement_instances`). :func:`conversation_view` builds them once
and every stage reads them from the :class:`ConversationView`, so they cannot disagree.

>>> from turneval.dataset_scripts.dialogue import Dialogue
>>> view = conversation_view(Dialogue("demo", [[(0.0, 1.0), (1.6, 2.0)], [(2.5, 3.5)]], system_speaker=1))
>>> [(inst.metric, inst.decision, inst.chunk) for inst in view.pause_instances]
[('a', 'C', 38), ('a', 'T', 61)]
>>> view.silences.tolist()
[[1.0, 1.6], [2.0, 2.5]]
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .agreement_instances import METRIC_IDS, PAUSE_METRICS, AgreementInstance, instances_from_chunk_labels
from .dialogue import Dialogue
from .events import TurnTakingEvents, extract_events
from .labels import ChunkLabels, chunk_labels


@dataclass(frozen=True)
class ConversationView:
    """What every stage reads off one conversation, built once by :func:`conversation_view`.

    Attributes:
        dialogue: the conversation; its ``system_speaker`` is set (1 where the dialogue named
            none: then (a) holds channel 0's pauses and (d) channel 1's, so one view holds every
            pause of a two-party call).
        events: the turn-taking events (IPUs from words where a speaker has them, else segments).
        labels: the 40 ms labels and floor, with the backchannels of ``events``.
        silences: ``[n, 2]``, where nobody speaks (start, end; s) between the first and the last
            speech.
        instances: the decisions of metrics (a)-(e), in chunk order, without the judge's
            probabilities (``probs`` is empty): the agreement metrics attach them.
    """

    dialogue: Dialogue
    events: TurnTakingEvents
    labels: ChunkLabels
    silences: np.ndarray
    instances: list[AgreementInstance] = field(repr=False)

    @property
    def pause_instances(self) -> list[AgreementInstance]:
        """The (a)/(d) decisions: a speaker falls silent, and the other party takes the turn or not."""
        return [inst for inst in self.instances if inst.metric in PAUSE_METRICS]

    @functools.cached_property
    def speech_timings(self) -> list[Any]:
        """Every IPU's timing from the speech segments alone
        (:func:`~turneval.dataset_scripts.turn_end_decisions.speech_timings`: words ignored), which
        a turn-end head with timing features reads; made on first use, then kept."""
        from .turn_end_decisions import event_timings, speech_timings

        # without words the view's events are the segments' own: no second extraction
        return speech_timings(self.dialogue) if self.events.has_words else event_timings(self.events)


def inner_silences(events: TurnTakingEvents) -> np.ndarray:
    """``[n, 2]``: the silences of ``events`` between the first and the last speech (start, end; s)."""
    inner = [(s.start, s.end) for s in events.silences if s.start > 0.0 and s.end < events.duration]
    return np.asarray(inner, dtype=np.float64).reshape(-1, 2)


def conversation_view(dialogue: Dialogue) -> ConversationView:
    """The events, labels, silences and decision instances of a two-speaker ``dialogue``, each
    made once (see :class:`ConversationView`)."""
    if dialogue.system_speaker is None:
        dialogue = replace(dialogue, system_speaker=1)
    events = extract_events(dialogue)
    labels = chunk_labels(dialogue, events=events)
    instances = instances_from_chunk_labels(labels, None, dialogue.system_speaker, dialogue.id, METRIC_IDS)
    return ConversationView(dialogue=dialogue, events=events, labels=labels, silences=inner_silences(events), instances=instances)


__all__ = ["ConversationView", "conversation_view", "inner_silences"]
