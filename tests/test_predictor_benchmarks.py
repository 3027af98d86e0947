"""benchmarks/validation/predictor_switchboard.py, predictor_vad.py, retimed_calls.py and predictor_revoiced.py: the pieces that turn model output into figures."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest


BENCH_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "validation"
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # its suite's scripts and the shared helpers


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


swb = _load("predictor_switchboard")
vadb = _load("predictor_vad")
retimed = _load("retimed_calls")
revoiced = _load("predictor_revoiced")


def test_backchannel_classes_are_short_entries_into_the_partners_turn():
    from turneval.dataset_scripts.vap_targets import decode_classes

    mask = swb.backchannel_class_mask()
    assert mask.shape == (256, 2)
    for k in np.flatnonzero(mask[:, 0]):
        bits = decode_classes(int(k))  # [2, 4]
        assert bits[0, :2].any() and not bits[0, 2:].any() and bits[1, 3]
    assert mask[:, 0].sum() == mask[:, 1].sum() > 0  # the same rule for both speakers


def test_classification_figures_and_a_model_that_knows_the_future():
    labels = np.array([1, 1, 0, 0, 0])
    fig = swb.classification_figures(np.array([0.9, 0.6, 0.4, 0.1, 0.7]), labels)
    assert fig["roc_auc"] == pytest.approx(5 / 6) and fig["balanced_accuracy"] == pytest.approx((1 + 2 / 3) / 2)
    assert np.isnan(swb.classification_figures(np.array([0.5]), np.array([1]))["roc_auc"])


def test_a_threshold_tuned_on_validation_data_is_applied_to_the_test_scores():
    from turneval.metrics.classification import balanced_accuracy_threshold

    # every score sits below 0.5, so 0.5 calls everything negative; the validation threshold separates them
    val_threshold = balanced_accuracy_threshold([1, 1, 0, 0], [0.3, 0.25, 0.1, 0.05])
    assert val_threshold == pytest.approx(0.25)
    fig = swb.classification_figures(np.array([0.35, 0.28, 0.2, 0.02]), np.array([1, 1, 0, 0]), tuned=val_threshold)
    assert fig["balanced_accuracy"] == pytest.approx(0.5) and fig["balanced_accuracy_tuned"] == pytest.approx(1.0)
    assert fig["threshold_tuned"] == val_threshold
    assert np.isnan(balanced_accuracy_threshold([1, 1], [0.2, 0.3]))


def test_event_samples_score_the_next_speaker():
    # A speaks 0-6 s, silence, B 6.5-12 s: one shift; an oracle p_now says B in the silence.
    va = np.zeros((800, 2), np.int8)
    va[:300, 0] = 1
    va[325:600, 1] = 1
    p_now = np.zeros((800, 2), np.float32)
    p_now[:, 1] = 1.0
    call = {"va": va, "p_now": p_now, "p_future": p_now, "p_bc": np.zeros((800, 2), np.float32)}
    samples = swb.event_samples([call])
    scores, labels = samples["shift_hold"]
    assert labels.size and labels.all() and (scores == 1.0).all()


def test_shift_hold_per_event_scores_each_silence_once_200_ms_in():
    # A 0-6 s, B 6.5-12 s (a shift), B again 12.5-16 s (a hold): the oracle gives B the floor after 6 s.
    va = np.zeros((900, 2), np.int8)
    va[:300, 0] = 1
    va[325:600, 1] = 1
    va[625:800, 1] = 1
    p_now = np.zeros((900, 2), np.float32)
    p_now[:310, 0] = 1.0
    p_now[310:, 1] = 1.0
    scores, labels = swb.shift_hold_per_event([{"va": va, "p_now": p_now}])
    assert labels.tolist() == [1, 0]
    # the shift: B (not the last speaker) at frame 310 -> 1; the hold: A (not the last speaker, B) -> 0
    assert scores.tolist() == [1.0, 0.0]


def test_decision_scores_read_the_partner_200_ms_into_the_silence():
    class D:
        dialogue_id, speaker, ipu_end = "sw0001", 0, 2.0

    p_now = np.zeros((300, 2), np.float32)
    p_now[109, 1] = 0.8  # frame int((2.0 + 0.2) * 50) - 1
    assert swb.decision_scores([D()], {"0001": {"p_now": p_now}})[0] == pytest.approx(0.8)


def test_rttm_and_speaker_map(tmp_path):
    (tmp_path / "mixture.rttm").write_text("SPEAKER mixture 1 0.00 5.29 <NA> <NA> FEE016 <NA> <NA>\nSPEAKER mixture 1 6.0 1.0 <NA> <NA> MEO015 <NA> <NA>\n")
    (tmp_path / "SPEAKER_MAP_inferred.txt").write_text("# comment\nsource0.wav  MEO015  text A\nsource3.wav  FEE016  text D\n")
    (tmp_path / "source0.flac").write_bytes(b"")
    segments = vadb.rttm_segments(tmp_path / "mixture.rttm")
    assert segments["FEE016"] == [(0.0, 5.29)] and segments["MEO015"] == [(6.0, 7.0)]
    assert vadb.ami_speakers(tmp_path) == {"MEO015": tmp_path / "source0.flac"}  # source3 is missing


def test_retimed_summary_counts_how_often_the_real_timing_wins():
    rows = [
        {"human": -3.0, "cascaded": -3.5, "cascaded, backchannels kept": -2.9, "eager_duplex": -4.0},
        {"human": -3.2, "cascaded": -3.1, "cascaded, backchannels kept": -3.3, "eager_duplex": -3.9},
        {"human": float("nan"), "cascaded": -3.0, "cascaded, backchannels kept": -3.0, "eager_duplex": -3.0},  # undefined: left out
    ]
    result = retimed.summarize(rows)
    assert result["pairs"] == 2
    assert result["human_above"]["cascaded"]["share"] == 0.5 and result["human_above"]["eager_duplex"]["share"] == 1.0
    low, high = result["human_above"]["eager_duplex"]["ci95"]
    assert 0 < low < 1.0 and high == 1.0
    assert result["mean_m"]["human"] == pytest.approx(-3.1)
    assert {f["name"] for f in retimed.figures({**result, "counts": {"calls": 1, "crop_s": 60.0}})} >= {
        "real call above its cascaded re-timing (share of pairs)"
    }
    units = {kind: retimed.summarize(rows, higher_is_better=False) for kind in retimed.UNIT_KINDS}
    table = retimed.markdown({**result, "predictor": "p", "counts": {"calls": 1, "crop_s": 60.0}, "units": units})
    assert "| user offsets (2) |" in table and table.count("| system") == 2


def test_retimed_versions_of_a_call_are_scored_with_both_speakers_as_the_system():
    import torch

    from turneval.dataset_scripts.synthetic import generate_dialogue
    from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
    from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel

    torch.manual_seed(0)
    config = FutureActivityPredictorConfig(input_type="vad", vad_features="timing", hidden_size=16, conv_layers=1, num_cross_layers=0,
                                           num_channel_layers=0, stream_window_s=20.0, stream_context_s=5.0)
    model = FutureActivityPredictorModel(config).eval()
    call = generate_dialogue(5, duration_s=60.0, style="human")
    rows = retimed.call_scores(call, model, crop_s=40.0, seed=0)
    assert len(rows) == 2 and all(set(r) == {"m", *retimed.UNIT_KINDS} for r in rows)
    assert all(set(r[kind]) == set(retimed.VERSIONS) for r in rows for kind in r)
    assert all(np.isfinite(v) for r in rows for part in r.values() for v in part.values())
    assert rows[0]["m"]["cascaded"] != rows[1]["m"]["cascaded"]  # another speaker is the system
    onsets = retimed.summarize([r["system_onsets"] for r in rows], higher_is_better=False)
    lower = sum(r["system_onsets"]["human"] < r["system_onsets"]["eager_duplex"] for r in rows)
    assert onsets["human_above"]["eager_duplex"]["wins"] == lower  # for NLLs, lower is better


def test_revoiced_intervals_resample_excerpts_and_compare_with_the_voice_activity_predictor():
    groups = np.repeat(np.arange(10), 4)  # 10 excerpts of 4 pairs
    correct = {
        revoiced.REFERENCE: np.tile([1.0, 0.0, 1.0, 0.0], 10),
        "always right": np.ones(40),
        "undefined twice": np.r_[np.nan, np.nan, np.ones(38)],
    }
    out = revoiced.excerpt_bootstrap(groups, correct)
    low, high = out["accuracy_ci95"][revoiced.REFERENCE]
    assert low <= 0.5 <= high
    assert out["accuracy_ci95"]["always right"] == [1.0, 1.0]
    diff = out[f"minus_{revoiced.REFERENCE}"]["always right"]
    assert diff["difference"] == pytest.approx(0.5) and diff["ci95"] == [0.5, 0.5]
    assert out[f"minus_{revoiced.REFERENCE}"]["undefined twice"]["difference"] == pytest.approx(0.5)  # NaN pairs left out
    assert revoiced.REFERENCE not in out[f"minus_{revoiced.REFERENCE}"]


def test_revoiced_benchmark_scores_every_predictor_on_the_same_pairs(tmp_path):
    from turneval.dataset_scripts.builders.manifest import write_dialogue_manifest
    from turneval.dataset_scripts.synthetic import generate_dialogue

    dialogues = [generate_dialogue(seed, duration_s=60.0, style="human") for seed in (1, 2)]
    write_dialogue_manifest(dialogues, tmp_path / "test", split="test")
    result = revoiced.evaluate(tmp_path, "test", {}, {"excerpts": None, "seeds": (0, 1), "train_calls": 0})
    assert result["excerpts"] == 2 and result["n_pairs"] == sum(result["pairs_per_type"].values()) > 0
    assert {"demo", revoiced.REFERENCE, revoiced.BASELINE} <= set(result["results"])
    assert {r["n_pairs"] for r in result["results"].values() if r.get("checkpoint")} == {result["n_pairs"]}
    for name, (low, high) in result["accuracy_ci95"].items():
        assert 0.0 <= low <= result["results"][name]["pairwise_accuracy"] <= high <= 1.0
    turn_end = result["turn_end"]
    assert turn_end["n_decisions"] > 0 and set(turn_end["roc_auc"]) == {"demo", revoiced.REFERENCE}
    assert all(0.0 <= auc <= 1.0 for auc in turn_end["roc_auc"].values())
    assert "| demo |" in revoiced.markdown(result)
    assert any(f["name"].endswith("pairwise accuracy, demo") for f in revoiced.figures(result))
    with pytest.raises(Exception, match="NAME=CHECKPOINT"):
        revoiced.parse_predictor("no-equals-sign")


def test_switchboard_pairs_carry_the_no_model_baseline_on_the_same_pairs():
    import torch

    from turneval.dataset_scripts.synthetic import generate_dialogue
    from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
    from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel

    torch.manual_seed(0)
    config = FutureActivityPredictorConfig(input_type="vad", vad_features="timing", hidden_size=16, conv_layers=1, num_cross_layers=0,
                                           num_channel_layers=0, stream_window_s=20.0, stream_context_s=5.0)
    model = FutureActivityPredictorModel(config).eval()
    report = swb.pair_results([generate_dialogue(seed, duration_s=60.0, style="human") for seed in (1, 2)], model)
    baseline = report[swb.NO_MODEL]
    assert report["n_pairs"] > 0 and baseline["n_pairs"] + baseline["n_dropped"] == report["n_pairs"] + report["n_dropped"]
    assert 0.0 <= baseline["pairwise_accuracy"] <= 1.0


def test_revoiced_benchmark_skips_with_a_message_without_the_corpus(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("TURNEVAL_REVOICED", str(tmp_path))  # an empty folder, and no default place
    monkeypatch.setattr(revoiced._revoiced, "DEFAULT_ROOT", tmp_path / "absent")
    assert revoiced._revoiced.revoiced_root() is None
    assert revoiced.run(quick=True) == []
    assert "TURNEVAL_REVOICED" in capsys.readouterr().out
