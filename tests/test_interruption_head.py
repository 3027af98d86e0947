"""The judge's interruption head (metric (e)): where the decisions are, what it may hear, how
the report uses it."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import soundfile as sf

from turneval.dataset_scripts.agreement_instances import two_party_instances, with_interruption_probabilities
from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.interruption_outcomes import (
    INTERRUPTION_FEATURES,
    LEVEL_FLOOR_DB,
    interruption_features,
    interruption_readings,
)
from turneval.dataset_scripts.labels import chunk_labels
from turneval.dataset_scripts.synthetic import generate_dialogue
from turneval.metrics.agreement import conversation_agreement
from turneval.modeling.configuration_turn_taking_judge import InterruptionRule, TurnTakingJudgeConfig
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge
from turneval.reporting import ReportError, judge_interruption_probabilities
from turneval.training import fit_interruption_head as fitter


def _overlapping_dialogue(seed: int = 5) -> Dialogue:
    dialogue = generate_dialogue(seed, duration_s=40.0, style="eager_duplex", system_speaker=1)
    assert interruption_readings(chunk_labels(dialogue)), "the eager style must interrupt"
    return dialogue


def test_readings_are_the_e_instances_of_both_views():
    dialogue = _overlapping_dialogue()
    labels = chunk_labels(dialogue)
    readings = interruption_readings(labels)
    e = [i for i in two_party_instances(dialogue, np.zeros((len(labels), 5)), labels) if i.metric == "e"]
    assert sorted(readings) == sorted(i.chunk for i in e)
    for inst in e:
        reading = readings[inst.chunk]
        assert inst.session.endswith("AB"[reading.holder])
        assert labels.labels[inst.chunk - 1] == "I" and labels.labels[inst.chunk] in ("T", "C")
        assert reading.time == pytest.approx(labels.chunk_starts[inst.chunk])
        run = int(round(reading.overlap_s / 0.04))
        assert all(lab == "I" for lab in labels.labels[inst.chunk - run : inst.chunk])
        assert labels.labels[inst.chunk - run - 1] != "I"


def test_features_hear_nothing_after_the_decision_and_ignore_channel_gain():
    dialogue = _overlapping_dialogue()
    reading = next(iter(interruption_readings(chunk_labels(dialogue)).values()))
    x = interruption_features(dialogue.audio, reading)
    assert x.shape == (len(INTERRUPTION_FEATURES),) and np.isfinite(x).all()
    later = dialogue.audio.copy()
    later[:, int(np.floor(reading.time * 16000)) :] = 0.9
    np.testing.assert_array_equal(interruption_features(later, reading), x)
    # above the level floor a channel's gain does not matter
    hiss = dialogue.audio + 1e-3 * np.random.default_rng(1).standard_normal(dialogue.audio.shape).astype(np.float32)
    louder = hiss * np.array([[3.0], [0.2]], dtype=np.float32)
    np.testing.assert_allclose(interruption_features(louder, reading), interruption_features(hiss, reading), atol=1e-4)
    # digital silence reads as the floor: changes stay bounded
    silent = dialogue.audio.copy()
    silent[1 - reading.holder] = 0.0
    assert np.abs(interruption_features(silent, reading)).max() <= 2 * abs(LEVEL_FLOOR_DB)
    with pytest.raises(ValueError, match="two channels"):
        interruption_features(dialogue.audio[0], reading)


def test_a_fading_holder_reads_as_a_floor_taken():
    # holder (channel 0) speaks 0-3 s, the interrupter from 2 s; in one version the holder fades out
    t = np.arange(int(6 * 16000)) / 16000
    noise = np.random.default_rng(0).standard_normal(len(t)).astype(np.float32) * 0.1
    stereo = np.stack([noise * (t < 3.0), noise[::-1] * (t >= 2.0)]).astype(np.float32)
    fading = stereo.copy()
    fading[0] *= np.clip((3.0 - t) / 0.3, 0.0, 1.0).astype(np.float32)
    d = Dialogue("x", [[(0.0, 3.0)], [(2.0, 5.0)]], duration=6.0)
    reading = next(iter(interruption_readings(chunk_labels(d)).values()))
    steady, faded = interruption_features(stereo, reading), interruption_features(fading, reading)
    holder_last = INTERRUPTION_FEATURES.index("holder_last_vs_back")
    assert faded[holder_last] < steady[holder_last] - 3.0  # the fade shows as a level drop


def _manifest(folder, seeds) -> None:
    lines = []
    for seed in seeds:
        d = _overlapping_dialogue(seed)
        sf.write(folder / f"d{seed}.flac", d.audio.T, 16000)
        lines.append(json.dumps({**d.to_dict(), "audio_path": f"d{seed}.flac"}))
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n")


TINY_WHISPER = {"d_model": 32, "encoder_layers": 2, "encoder_attention_heads": 2, "encoder_ffn_dim": 64, "max_source_positions": 1500}


def _judge(head) -> TurnTakingJudge:
    """A small judge whose interruption rule is ``head`` (an InterruptionRule, its dict, or None)."""
    return TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, interruption_head=head)).eval()


def test_installed_head_reproduces_the_regression_in_the_report_path(tmp_path):
    _manifest(tmp_path, (5, 6, 7))
    x, y = fitter.manifest_interruptions(tmp_path)
    assert x.shape[1] == len(INTERRUPTION_FEATURES) and set(y) <= {0, 1}
    if len(set(y)) < 2:
        y = (x[:, 0] > np.median(x[:, 0])).astype(int)  # any learnable labels
    fitted = fitter.fit_linear_head(x, y, c=1.0)
    rule = fitter.head_config(fitted, {"c": 1.0})
    assert isinstance(rule, InterruptionRule) and rule.to_dict()["c"] == 1.0 and "source" not in rule.to_dict()
    judge = _judge(rule)
    dialogue = _overlapping_dialogue(5)
    labels = chunk_labels(dialogue)
    p = judge_interruption_probabilities(judge, dialogue, labels)
    readings = interruption_readings(labels)
    assert set(p) == set(readings)
    expected = fitted.predict_proba(np.stack([interruption_features(dialogue.audio, r) for r in readings.values()]))[:, 1]
    np.testing.assert_allclose([p[c] for c in readings], expected, atol=1e-9)
    # the report's path is the model's decision method on the features it reads
    matrix = np.stack([interruption_features(dialogue.audio, r) for r in readings.values()])
    np.testing.assert_array_equal([p[c] for c in readings], judge.interruption_probabilities(matrix))
    # only (e) is judged by it, as 2 p - 1 against the (e) threshold
    probs = np.full((len(labels), 5), 0.2)
    result = conversation_agreement(dialogue, probs, labels, {"e": 0.0}, None, p)
    assert result["interruptions_judged_by"].startswith("interruption head")
    for row in result["instances"]:
        if row["metric"] == "e":
            assert row["judge_label"] == ("T" if 2 * p[row["chunk"]] - 1 > 0.0 else "C")
    untouched = with_interruption_probabilities([i for i in two_party_instances(dialogue, probs, labels) if i.metric != "e"], p)
    assert all(i.probs == (0.2,) * 5 for i in untouched)


def test_a_judge_without_the_head_or_with_bad_inputs_says_so():
    dialogue = _overlapping_dialogue()
    labels = chunk_labels(dialogue)
    assert judge_interruption_probabilities(_judge(None), dialogue, labels) == {}
    head = {"features": list(INTERRUPTION_FEATURES), "weight": [0.0] * len(INTERRUPTION_FEATURES), "bias": 0.0}
    mono = copy.deepcopy(dialogue)
    mono.audio = dialogue.audio.mean(axis=0)
    with pytest.raises(ReportError, match="two channels"):
        judge_interruption_probabilities(_judge(head), mono, labels)
    with pytest.raises(ReportError, match="does not compute"):
        judge_interruption_probabilities(_judge({**head, "features": ["pitch"] + head["features"][1:]}), dialogue, labels)
    with pytest.raises(ValueError, match="weights for"):
        TurnTakingJudgeConfig(interruption_head={**head, "weight": [0.0]})
    with pytest.raises(ValueError, match=r"lacks \['weight', 'bias'\]"):
        TurnTakingJudgeConfig(interruption_head={"features": ["overlap_s"]})
    with pytest.raises(ValueError, match=r"unknown keys \['note'\].*InterruptionRule"):
        TurnTakingJudgeConfig(interruption_head={**head, "note": "test"})
    with pytest.raises(ValueError, match="reads 8 features"):
        _judge(head).interruption_probabilities(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="no interruption rule"):
        _judge(None).interruption_probabilities(np.zeros((2, 8)))


def test_the_bundled_judge_carries_an_interruption_head():
    from turneval.checkpoints import default_checkpoint

    config = json.loads((default_checkpoint("judge") / "config.json").read_text())
    head = config.get("interruption_head")
    assert head and head["features"] == list(INTERRUPTION_FEATURES) and len(head["weight"]) == len(INTERRUPTION_FEATURES)
