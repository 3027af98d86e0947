"""The judge's turn-end head: installed from its linear fit, saved and loaded, read at (a)/(d) pauses."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from turneval.dataset_scripts.agreement_instances import (
    dialogue_agreement_instances,
    two_party_instances,
    with_pause_decision_probabilities,
)
from turneval.dataset_scripts.conversation_view import conversation_view
from turneval.dataset_scripts.labels import chunk_labels
from turneval.dataset_scripts.synthetic import generate_dialogue
from turneval.metrics.agreement import conversation_agreement
from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge, pause_window
from turneval.pause_decision import pause_decision_probabilities, pause_readings
from turneval.reporting import judge_probabilities
from turneval.training import fit_turn_end_head as fitter


TINY_WHISPER = {"d_model": 32, "encoder_layers": 3, "encoder_attention_heads": 2, "encoder_ffn_dim": 64, "max_source_positions": 1500}
WINDOW_S = 2.0


def _base() -> TurnTakingJudge:
    """The "pretrained" encoder the head fit reads (window mode, bidirectional)."""
    torch.manual_seed(0)
    return TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="window", context_s=WINDOW_S)).eval()


def _causal_judge(base: TurnTakingJudge, retrain_upper: bool = True) -> TurnTakingJudge:
    """A causal judge sharing the base's front end and lower layers; its upper layer "fine-tuned"."""
    judge = TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="causal", context_s=4.0))
    judge.encoder.load_state_dict(base.encoder.state_dict())
    if retrain_upper:
        with torch.no_grad():
            for param in judge.encoder.layers[2].parameters():
                param.add_(0.1)
    return judge.eval()


def _windows(n: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (0.1 * rng.standard_normal((n, int(WINDOW_S * 16000)))).astype(np.float32)


def _fitted_head(base: TurnTakingJudge, windows: np.ndarray):
    x = np.stack([fitter.decision_features(base, torch.from_numpy(w)[None]) for w in windows])
    y = (x[:, 0] > np.median(x[:, 0])).astype(int)  # any learnable labels
    return fitter.fit_linear_head(x, y, c=1.0), x


def test_installed_head_reproduces_the_fit_through_the_judge():
    base = _base()
    windows = _windows(24)
    fitted, x = _fitted_head(base, windows)
    judge = fitter.install_head(_causal_judge(base), base, fitted, WINDOW_S, {"note": "test"})
    p = judge.turn_end_probabilities(windows, batch_size=5)
    np.testing.assert_allclose(p, fitted.predict_proba(x)[:, 1], atol=1e-4)
    assert judge.config.turn_end_head["window_s"] == WINDOW_S and judge.config.turn_end_head["note"] == "test"


def test_head_survives_save_and_load(tmp_path):
    base = _base()
    windows = _windows(6)
    fitted, _ = _fitted_head(base, windows)
    judge = fitter.install_head(_causal_judge(base), base, fitted, WINDOW_S, {})
    judge.save_pretrained(tmp_path / "judge")
    loaded = TurnTakingJudge.from_pretrained(tmp_path / "judge").eval()
    assert loaded.turn_end_head is not None
    np.testing.assert_allclose(loaded.turn_end_probabilities(windows), judge.turn_end_probabilities(windows), atol=1e-6)


def test_install_refuses_a_judge_whose_lower_layers_were_fine_tuned():
    base = _base()
    fitted, _ = _fitted_head(base, _windows(6))
    judge = _causal_judge(base)
    with torch.no_grad():
        judge.encoder.layers[0].fc1.weight.add_(0.01)
    with pytest.raises(ValueError, match="lower layers were fine-tuned"):
        fitter.install_head(judge, base, fitted, WINDOW_S, {})


def test_a_judge_without_a_head_says_so_and_bad_head_configs_fail():
    with pytest.raises(ValueError, match="no turn-end head"):
        _base().turn_end_probabilities(_windows(1))
    with pytest.raises(ValueError, match="shared_layers"):
        TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, turn_end_head={"shared_layers": 3})
    with pytest.raises(ValueError, match="pool_frames"):
        TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, turn_end_head={"window_s": 0.2, "pool_frames": [25, 5]})


def test_pause_window_reads_nothing_after_the_horizon():
    channel = np.arange(16000 * 3, dtype=np.float32)
    window = pause_window(channel, 1.03, 2.0)
    assert window.shape == (32000,) and window[-1] == 15999.0 and (window[:16000] == 0).all()


def test_pause_readings_follow_the_pausers_speech_end():
    dialogue = generate_dialogue(5, duration_s=20.0, style="human", system_speaker=1)
    labels = chunk_labels(dialogue)
    instances = [i for i in two_party_instances(dialogue, np.full((len(labels), 5), 0.2), labels) if i.metric in ("a", "d")]
    assert instances
    readings = pause_readings(labels, [i.chunk for i in instances])
    for inst in instances:
        reading = readings[inst.chunk]
        assert reading.decision == inst.decision and reading.shift == (inst.decision == "T") and reading.session == dialogue.id
        # the silence's first chunk ends at the speech end, and the chunk before it is the pauser's speech
        first_silent = int(round(reading.speech_end / 0.04)) - 1
        assert labels.labels[first_silent] == "NA" and labels.channel_labels[reading.pauser][first_silent - 1] != "NA"
        # nothing is heard after the decision chunk starts, nor later than 200 ms after the speech end
        assert reading.horizon <= labels.chunk_starts[inst.chunk] + 1e-9
        assert reading.horizon <= reading.speech_end + 0.2 + 1e-9
    with pytest.raises(Exception, match="not an \\(a\\)/\\(d\\) decision"):
        pause_readings(labels, [next(i.chunk for i in two_party_instances(dialogue, np.full((len(labels), 5), 0.2), labels) if i.metric == "c")])


def test_pause_decision_probabilities_judge_only_the_pause_metrics():
    dialogue = generate_dialogue(5, duration_s=20.0, style="human", system_speaker=1)
    labels = chunk_labels(dialogue)
    probs = np.full((len(labels), 5), 0.2)
    instances = dialogue_agreement_instances(dialogue, probs, labels=labels)
    p = {inst.chunk: 0.9 for inst in instances}
    replaced = with_pause_decision_probabilities(instances, p)
    for before, after in zip(instances, replaced):
        if before.metric in ("a", "d"):
            assert after.probs == (0.0, 0.0, 0.0, 0.9, pytest.approx(0.1))
        else:
            assert after == before
    result = conversation_agreement(dialogue, probs, labels, {"a": 0.5, "d": 0.5}, p)
    assert result["pause_decisions_judged_by"].startswith("the judge's pause rule")
    for row in result["instances"]:
        if row["metric"] in ("a", "d"):
            assert row["judge_label"] == "T"  # 2 * 0.9 - 1 = 0.8 > 0.5


def test_the_report_stage_reads_each_pausers_own_channel():
    base = _base()
    fitted, _ = _fitted_head(base, _windows(8))
    judge = fitter.install_head(_causal_judge(base), base, fitted, WINDOW_S, {})
    dialogue = generate_dialogue(7, duration_s=20.0, style="human", system_speaker=1)
    labels = chunk_labels(dialogue)
    p = pause_decision_probabilities(judge, conversation_view(dialogue))
    chunks = {i.chunk for i in two_party_instances(dialogue, np.zeros((len(labels), 5)), labels) if i.metric in ("a", "d")}
    assert set(p) == chunks and all(0.0 <= v <= 1.0 for v in p.values())
    # silencing the *other* channel leaves a reading unchanged: only the pauser's own channel is heard
    readings = pause_readings(labels, sorted(p))
    chunk, reading = next(iter(readings.items()))
    quiet = copy.deepcopy(dialogue)
    quiet.audio = dialogue.audio.copy()
    quiet.audio[1 - reading.pauser] = 0.0
    assert pause_decision_probabilities(judge, conversation_view(quiet))[chunk] == pytest.approx(p[chunk], abs=1e-6)
    # and the causal chunk head is untouched by the head's presence
    assert judge_probabilities(judge, dialogue.audio).shape[1] == 5


def test_tail_layer_is_the_full_layer_on_its_last_frames():
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoderLayer

    from turneval.modeling.modeling_turn_taking_judge import tail_layer

    torch.manual_seed(0)
    config = WhisperConfig(d_model=32, encoder_attention_heads=2, encoder_ffn_dim=64)
    config._attn_implementation = "eager"
    layer = WhisperEncoderLayer(config).eval()
    hidden = torch.randn(3, 40, 32)
    with torch.no_grad():
        np.testing.assert_allclose(tail_layer(layer, hidden, 7).numpy(), layer(hidden, None)[:, -7:].numpy(), atol=1e-5)
        # the early frames matter through keys and values: changing one changes the tail
        moved = hidden.clone()
        moved[:, 0] += 1.0
        assert not torch.allclose(tail_layer(layer, moved, 7), tail_layer(layer, hidden, 7))


def test_speech_timings_are_the_decisions_timing_without_words():
    from turneval.dataset_scripts.turn_end_decisions import (
        speech_timings,
        timing_at,
        timing_features,
        turn_end_decisions,
    )

    dialogue = generate_dialogue(3, duration_s=40.0, style="human", system_speaker=1)
    timings = speech_timings(dialogue)
    decisions = turn_end_decisions(dialogue, 0.2, use_words=False)
    assert decisions
    for decision in decisions:
        found = timing_at(timings, decision.speaker, decision.ipu_end)
        assert (found.ipu_end, found.ipu_duration, found.turn_duration, found.partner_since, found.is_backchannel) == (
            decision.ipu_end, decision.ipu_duration, decision.turn_duration, decision.partner_since, decision.is_backchannel)
        np.testing.assert_array_equal(timing_features(found), timing_features(decision))
        # a reading 40 ms off the IPU end (the chunk grid) finds the same IPU
        assert timing_at(timings, decision.speaker, decision.ipu_end + 0.04) == found


def test_a_timing_head_reads_the_timing_it_was_fitted_on():
    from turneval.dataset_scripts.turn_end_decisions import TIMING_FEATURES

    base = _base()
    windows = _windows(24)
    rng = np.random.default_rng(3)
    timing = rng.standard_normal((24, len(TIMING_FEATURES))).astype(np.float32)
    x = np.stack([fitter.decision_features(base, torch.from_numpy(w)[None]) for w in windows])
    xt = np.concatenate([x, timing], axis=1)
    y = (timing[:, 0] + x[:, 0] > np.median(timing[:, 0] + x[:, 0])).astype(int)
    fitted = fitter.fit_linear_head(xt, y, c=1.0)
    judge = fitter.install_head(_causal_judge(base), base, fitted, WINDOW_S, {}, timing=True)
    assert judge.config.turn_end_head["timing_features"] == list(TIMING_FEATURES)
    np.testing.assert_allclose(judge.turn_end_probabilities(windows, timing, batch_size=5), fitted.predict_proba(xt)[:, 1], atol=1e-4)
    with pytest.raises(ValueError, match="timing features"):
        judge.turn_end_probabilities(windows)
    # the report stage computes the timing from the speech segments
    dialogue = generate_dialogue(7, duration_s=20.0, style="human", system_speaker=1)
    p = pause_decision_probabilities(judge, conversation_view(dialogue))
    assert p and all(0.0 <= v <= 1.0 for v in p.values())
