"""One conversation read once (dataset_scripts/conversation_view.py): the view holds what each stage
built for itself before, and the pause decision reads it without building anything again."""
from __future__ import annotations

import json

import numpy as np
import pytest

from turneval.dataset_scripts import agreement_instances, events, labels
from turneval.dataset_scripts.agreement_instances import dialogue_agreement_instances
from turneval.dataset_scripts.conversation_view import conversation_view
from turneval.dataset_scripts.events import extract_events
from turneval.dataset_scripts.labels import chunk_labels
from turneval.dataset_scripts.synthetic import generate_dialogue
from turneval.metrics.agreement import conversation_agreement


@pytest.fixture(scope="module")
def dialogue():
    return generate_dialogue(7, duration_s=30.0, style="human", system_speaker=1)


def test_view_holds_the_events_labels_silences_and_decisions_each_stage_built(dialogue):
    view = conversation_view(dialogue)
    alone = chunk_labels(dialogue)
    assert list(view.labels.labels) == list(alone.labels) and list(view.labels.floor) == list(alone.floor)
    assert view.events.to_dict() == extract_events(dialogue).to_dict()
    probs = np.random.default_rng(0).dirichlet(np.ones(5), size=len(alone))
    built = dialogue_agreement_instances(dialogue, probs, labels=alone)
    assert [(i.metric, i.decision, i.chunk, i.time) for i in view.instances] == [(i.metric, i.decision, i.chunk, i.time) for i in built]
    assert all(i.probs == () for i in view.instances) and {i.metric for i in view.pause_instances} == {"a", "d"}
    assert len(view.silences) and np.all(view.silences[:, 0] > 0.0) and np.all(view.silences[:, 1] < view.events.duration)
    from dataclasses import replace

    from turneval.dataset_scripts.turn_end_decisions import speech_timings

    for d in (dialogue, replace(dialogue, words=None)):  # with words the timings read the segments alone; without, the view's events
        assert conversation_view(d).speech_timings == speech_timings(d)


def test_a_dialogue_without_a_system_is_read_with_channel_1_as_the_system(dialogue):
    from dataclasses import replace

    view = conversation_view(replace(dialogue, system_speaker=None))
    assert view.dialogue.system_speaker == 1 and view.pause_instances


def test_agreement_over_the_views_decisions_equals_building_them_again(dialogue):
    view = conversation_view(dialogue)
    probs = np.random.default_rng(1).dirichlet(np.ones(5), size=len(view.labels) - 1)  # one row short: the last chunk unscored
    p_shift = {inst.chunk: 0.7 for inst in view.pause_instances}
    again = conversation_agreement(dialogue, probs, view.labels, None, p_shift)
    once = conversation_agreement(dialogue, probs, view.labels, None, p_shift, instances=view.instances)
    # as JSON: the threshold sweep's NaN (a direction without instances) equals itself there
    assert json.dumps(once, sort_keys=True, default=str) == json.dumps(again, sort_keys=True, default=str) and once["n_instances"] > 0


def test_the_pause_decision_reads_the_view_and_builds_nothing_again(dialogue, monkeypatch):
    from tests.test_pause_decision import TEMPO_RULE, _judge_with_cue
    from turneval.modeling.configuration_turn_taking_judge import CallTempoConfig, PauseRule
    from turneval.pause_decision import decide_pauses

    judge = _judge_with_cue(None)
    judge.config.call_tempo = CallTempoConfig()
    judge.config.pause_decision = PauseRule.from_dict(TEMPO_RULE)  # reads the call's silences too
    view = conversation_view(dialogue)

    def built_again(*args, **kwargs):
        raise AssertionError("the conversation was read again")

    for module, name in ((events, "extract_events"), (labels, "chunk_labels"), (agreement_instances, "build_agreement_instances")):
        monkeypatch.setattr(module, name, built_again)
    decisions = decide_pauses(judge, view)
    assert set(decisions.probabilities) == {inst.chunk for inst in view.pause_instances}
