"""Cached frozen encoder states, training on them, export, and the logit adjustment."""
from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
import torch

from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge, TurnTakingJudgeStream
from turneval.training import train_judge_cached
from turneval.training.judge_features import CachedFeatures, CacheLayout, build_cache, window_starts, window_targets
from turneval.training.train_judge_cached import (
    CachedTop,
    apply_mode,
    export_judge,
    logit_adjustment_from_weights,
    next_speaker_auc,
    next_speaker_loss,
)


TINY = {"d_model": 32, "encoder_layers": 3, "encoder_attention_heads": 2, "encoder_ffn_dim": 64}
SPC = 640
CONTEXT_S = 0.8  # 20 chunks


def _judge(seed: int = 0) -> TurnTakingJudge:
    torch.manual_seed(seed)
    judge = TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY, context_mode="causal", context_s=CONTEXT_S, stream_hop_s=CONTEXT_S / 2))
    with torch.no_grad():  # a non-trivial layer sum, so that every state matters
        judge.layer_weights.copy_(torch.randn(judge.layer_weights.shape))
    return judge.eval()


def _row(folder, name: str, rng: np.random.Generator, seconds: float = 2.0) -> dict:
    n = int(seconds * 25)
    labels = rng.integers(0, 5, n)
    audio = (0.1 * rng.standard_normal(n * SPC)).astype(np.float32)
    path = folder / f"{name}.wav"
    sf.write(path, audio, 16000)
    return {"conversation_id": name, "audio_path": str(path), "labels": labels.tolist()}


@pytest.fixture(scope="module")
def cached(tmp_path_factory):
    folder = tmp_path_factory.mktemp("features")
    rng = np.random.default_rng(0)
    judge = _judge()
    judge_dir = folder / "base_judge"
    judge.save_pretrained(judge_dir)
    rows = {split: [_row(folder, f"{split}{i}", rng) for i in range(n)] for split, n in (("train", 3), ("val", 2))}
    caches = {}
    for split, split_rows in rows.items():
        caches[split] = build_cache(judge, split_rows, folder / split, layout=CacheLayout(CONTEXT_S, (0.0, 0.4), (0, 1), str(judge_dir)), log=None)
    return judge, judge_dir, rows, caches


def test_window_plan_and_targets():
    assert window_starts(600, 250, [0, 125]) == [0, 250, 125]
    assert window_starts(10, 20, [0]) == []
    labels = np.array([0, 1, 2, 3, 4, -100, 1])
    np.testing.assert_array_equal(window_targets(labels, 2, 4), [3, 4, -100, 1])
    np.testing.assert_array_equal(window_targets(labels, 4, 4), [-100, 1, -100, -100])


@pytest.mark.parametrize("split_layer", [0, 1, 3])
def test_cached_top_equals_the_judge_forward(cached, split_layer):
    """Frozen lower states from the cache + the top layers = one causal pass of the judge."""
    judge, _, rows, caches = cached
    data = CachedFeatures(caches["train"], split_layer)
    meta = data.entries[0][0]
    top = CachedTop(judge, split_layer).eval()
    audio, _ = sf.read(rows["train"][0]["audio_path"], dtype="float32")
    for w, start in enumerate(meta["window_starts"]):
        window = torch.from_numpy(audio[start * SPC : (start + 20) * SPC])[None]
        expected = judge(input_values=window).logits
        item = data[w]
        got = top(item["pred_states"][None], item["full_states"][None] if "full_states" in item else None)
        torch.testing.assert_close(got, expected, atol=2e-2, rtol=1e-2)  # float16 cache


def test_cache_is_resumable_and_guards_its_settings(cached, tmp_path):
    judge, judge_dir, rows, caches = cached
    before = {p: p.stat().st_mtime_ns for p in caches["train"].glob("*/pred_states.npy")}
    build_cache(judge, rows["train"], caches["train"], layout=CacheLayout(CONTEXT_S, (0.0, 0.4), (0, 1), str(judge_dir)), log=None)
    assert {p: p.stat().st_mtime_ns for p in caches["train"].glob("*/pred_states.npy")} == before
    with pytest.raises(ValueError, match="other settings"):
        build_cache(judge, rows["train"], caches["train"], layout=CacheLayout(CONTEXT_S, (0.0,), (0, 1), str(judge_dir)), log=None)
    with pytest.raises(ValueError, match="no full-frame states of layer 2"):
        CachedFeatures(caches["train"], 2)


def test_logit_adjustment_inverts_class_weights():
    weights = np.array([0.2, 4.0, 10.0, 5.0, 0.1])
    adj = np.array(logit_adjustment_from_weights(weights))
    assert abs(adj.sum()) < 1e-5
    # q(y|x) ~ w_y p(y|x): adding the adjustment to log q recovers p
    p = np.array([0.3, 0.05, 0.01, 0.04, 0.6])
    q = weights * p / (weights * p).sum()
    recovered = np.exp(np.log(q) + adj)
    np.testing.assert_allclose(recovered / recovered.sum(), p, atol=1e-6)


def test_probabilities_apply_the_logit_adjustment_everywhere():
    judge = _judge()
    audio = torch.from_numpy(np.random.default_rng(1).standard_normal(40 * SPC).astype(np.float32) * 0.1)
    plain = judge.score(audio).probabilities
    adjustment = [1.0, -2.0, 0.5, 0.0, 0.5]
    judge.config.logit_adjustment = adjustment
    out = judge(input_values=audio[: 20 * SPC][None])
    torch.testing.assert_close(out.probabilities, torch.softmax(out.logits + torch.tensor(adjustment), -1))
    adjusted = judge.score(audio).probabilities
    expected = np.exp(np.log(plain) + np.array(adjustment))
    np.testing.assert_allclose(adjusted, expected / expected.sum(1, keepdims=True), atol=1e-5)
    _, streamed = TurnTakingJudgeStream(judge).push(audio.numpy())
    np.testing.assert_allclose(streamed, adjusted, atol=1e-4)
    with pytest.raises(ValueError, match="logit_adjustment has 2 values"):
        TurnTakingJudgeConfig(logit_adjustment=[0.0, 1.0])


def test_logit_adjustment_survives_save_and_load(tmp_path):
    judge = _judge()
    judge.config.logit_adjustment = [0.5, 0.0, -0.5, 1.0, -1.0]
    judge.save_pretrained(tmp_path / "j")
    assert TurnTakingJudge.from_pretrained(tmp_path / "j").config.logit_adjustment == [0.5, 0.0, -0.5, 1.0, -1.0]


@pytest.mark.parametrize("mode", ["partial", "lora"])
def test_export_carries_the_trained_top(cached, mode):
    judge, _, rows, caches = cached
    data = CachedFeatures(caches["train"], 1)
    model = apply_mode(CachedTop(judge, 1), mode, lora_r=4, lora_alpha=8)
    with torch.no_grad():  # move the trainable weights away from the base
        for p in model.parameters():
            if p.requires_grad:
                p.add_(0.05 * torch.randn_like(p))
    model.eval()
    item = data[0]
    expected = model(item["pred_states"][None], item["full_states"][None])
    exported = export_judge(judge, model, mode, [0.0] * 5)
    assert exported.config.backbone_mode == mode and exported.config.trained_layers == [2, 3]
    audio, _ = sf.read(rows["train"][0]["audio_path"], dtype="float32")
    start = data.entries[0][0]["window_starts"][0]
    got = exported(input_values=torch.from_numpy(audio[start * SPC : (start + 20) * SPC])[None]).logits
    torch.testing.assert_close(got, expected, atol=2e-2, rtol=1e-2)
    # the lower layers are untouched
    torch.testing.assert_close(exported.encoder.layers[0].fc1.weight, judge.encoder.layers[0].fc1.weight)


def test_training_resumes_exactly(cached, tmp_path):
    from accelerate.state import AcceleratorState, GradientState

    _, _, _, caches = cached
    common = ["--train", str(caches["train"]), "--validation", str(caches["val"]), "--mode", "partial", "--split_layer", "1",
              "--per_device_train_batch_size", "2", "--num_train_epochs", "2", "--num_warmup_steps", "0", "--cpu"]

    def run(*extra: str) -> dict:
        AcceleratorState._reset_state(True)  # several Accelerators in one test process
        GradientState._reset_state()
        return train_judge_cached.train(*train_judge_cached.parse_args([*common, *extra]))

    whole = run("--output_dir", str(tmp_path / "a"))
    run("--output_dir", str(tmp_path / "b"), "--checkpointing_steps", "2", "--stop_after_steps", "4")
    assert (tmp_path / "b" / "checkpoints" / "step_4").is_dir() and not (tmp_path / "b" / "final").exists()
    resumed = run("--output_dir", str(tmp_path / "b"), "--resume_from_checkpoint", "latest")
    assert resumed["step"] == whole["step"] == 12

    def losses(run: str) -> list[float]:
        lines = (tmp_path / run / "metrics.jsonl").read_text().splitlines()
        return [json.loads(line)["loss"] for line in lines if '"loss"' in line]

    np.testing.assert_allclose(losses("b"), losses("a"), rtol=1e-5)
    final = TurnTakingJudge.from_pretrained(tmp_path / "b" / "final")
    assert final.config.logit_adjustment is not None and final.config.backbone_mode == "partial"
    assert set(resumed["validation"]["validation"]["roc_auc"]) == {"NA", "BC", "I", "T", "C", "overall"}
    assert json.loads((tmp_path / "b" / "compute.json").read_text())["optimizer_steps"] == 12


def test_several_caches_train_together(cached):
    _, _, _, caches = cached
    both = CachedFeatures([caches["train"], caches["val"]], 1)
    assert len(both) == len(CachedFeatures(caches["train"], 1)) + len(CachedFeatures(caches["val"], 1))
    np.testing.assert_array_equal(both.target_counts(), CachedFeatures(caches["train"], 1).target_counts() + CachedFeatures(caches["val"], 1).target_counts())


def test_cache_carries_next_speaker_targets(cached):
    from turneval.dataset_scripts.labels import next_speaker_targets

    _, _, rows, caches = cached
    data = CachedFeatures(caches["train"], 1)
    meta, *_ = data.entries[0]
    row = next(r for r in rows["train"] if r["conversation_id"] == meta["conversation_id"])
    start = meta["window_starts"][0]
    expected = window_targets(next_speaker_targets(row["labels"]), start, 20)
    np.testing.assert_array_equal(data[0]["next_speaker"].numpy(), expected)


def test_next_speaker_loss_and_auc_read_t_against_c():
    names = ["NA", "BC", "I", "T", "C"]
    logits = torch.zeros(1, 4, 5)
    logits[0, :, 3] = torch.tensor([2.0, -2.0, 0.0, 5.0])  # T
    target = torch.tensor([[1, 0, -100, -100]])
    good = next_speaker_loss(logits, target, names)
    flipped = next_speaker_loss(logits, 1 - target.clamp(min=0) - 100 * (target < 0), names)
    assert good < flipped
    # p_NA does not matter: the loss reads logit_T - logit_C only
    shifted = logits.clone()
    shifted[0, :, 0] += 7.0
    torch.testing.assert_close(next_speaker_loss(shifted, target, names), good)
    assert next_speaker_loss(logits, torch.full((1, 4), -100), names).item() == 0.0
    assert next_speaker_auc(logits[0].numpy(), target[0].numpy(), names) == 1.0
    assert next_speaker_auc(logits[0].numpy(), np.array([1, 1, -100, -100]), names) is None


def test_training_with_the_next_speaker_loss_moves_the_t_c_odds(cached, tmp_path):
    from accelerate.state import AcceleratorState, GradientState

    _, _, _, caches = cached
    AcceleratorState._reset_state(True)
    GradientState._reset_state()
    summary = train_judge_cached.train(*train_judge_cached.parse_args([
        "--train", str(caches["train"]), "--validation", str(caches["val"]), "--mode", "frozen", "--next_speaker_weight", "1.0",
        "--per_device_train_batch_size", "2", "--num_train_epochs", "1", "--num_warmup_steps", "0", "--cpu", "--output_dir", str(tmp_path / "ns")]))
    assert "next_speaker_roc_auc" in summary["validation"]["validation"]
    final = TurnTakingJudge.from_pretrained(tmp_path / "ns" / "final")
    assert final.config.training_summary["next_speaker_weight"] == 1.0
