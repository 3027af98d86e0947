"""Training and evaluation recipes of the TurnTakingJudge on a tiny in-test corpus."""
from __future__ import annotations

import json
import os
import subprocess

import datasets
import numpy as np
import pytest
import soundfile as sf
import torch

from turneval.metrics.classification import f1_table, f1_thresholds, roc_auc_table
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge
from turneval.training import evaluate_judge, train_judge
from turneval.training.judge_data import load_chunk_rows, window_labels

from ._launch import accelerate_two_ranks


TINY = {"d_model": 32, "encoder_layers": 1, "encoder_attention_heads": 2, "encoder_ffn_dim": 64}
SPC = 640


def _conversation(folder, name, rng, seconds=4.0):
    """Audio whose level and pitch follow the chunk labels, so the labels are learnable."""
    n = int(seconds * 25)
    labels = np.zeros(n, np.int64)
    audio = np.zeros(n * SPC, np.float32)
    k = 0
    while k < n:
        length, label = int(rng.integers(4, 15)), int(rng.integers(0, 5))
        labels[k : k + length] = label
        t = np.arange(min(length, n - k) * SPC) / 16000
        amp = (0.0, 0.05, 0.3, 0.15, 0.1)[label]
        audio[k * SPC : k * SPC + t.size] = amp * np.sin(2 * np.pi * (150 + 60 * label) * t) + 0.01 * rng.standard_normal(t.size)
        k += length
    path = folder / f"{name}.wav"
    sf.write(path, np.stack([audio, 0.5 * audio], axis=1), 16000)
    return {"conversation_id": name, "audio_path": str(path), "labels": labels.tolist(), "floor": [1] * n}


@pytest.fixture(scope="module")
def tiny_config(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "tiny.json"
    path.write_text(json.dumps({"encoder_config": TINY}))
    return str(path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chunks")
    rng = np.random.default_rng(0)
    for split, count in (("train", 3), ("validation", 2), ("test", 2)):
        rows = [_conversation(folder, f"{split}{i}", rng) for i in range(count)]
        datasets.Dataset.from_list(rows).to_parquet(str(folder / f"{split}.parquet"))
    return folder


def _args(corpus, out, *extra):
    model_config = out.parent / "tiny_model.json"
    model_config.write_text(json.dumps({"encoder_config": TINY}))
    return train_judge.parse_args(
        ["--data", str(corpus), "--backbone", "random", "--model_config", str(model_config), "--context_s", "0.4",
         "--per_device_train_batch_size", "4", "--gradient_accumulation_steps", "2", "--max_train_steps", "4",
         "--max_eval_examples", "16", "--output_dir", str(out), "--cpu", "--cache_dir", str(out / "cache"), *extra]
    )


def _train(args):
    from accelerate.state import AcceleratorState, GradientState

    AcceleratorState._reset_state(True)  # several Accelerators in one test process
    GradientState._reset_state()
    return train_judge.train(*args)


def _random_judge(tiny_config, *extra):
    args, training = train_judge.parse_args(["--data", "x", "--backbone", "random", "--model_config", tiny_config, "--context_s", "0.4", *extra])
    return train_judge.build_model(args, train_judge.read_options_file(training.model_config))


def _log(out):
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_resume_reproduces_uninterrupted_loss_curve(corpus, tmp_path):
    schedule = ("--checkpointing_steps", "2", "--lr_scheduler_type", "linear", "--num_warmup_steps", "1")
    full = _train(_args(corpus, tmp_path / "full", *schedule))
    assert full["step"] == 4 and all(np.isfinite(full["losses"]))
    first = _train(_args(corpus, tmp_path / "split", *schedule, "--stop_after_steps", "2"))
    assert first["step"] == 2 and (tmp_path / "split" / "checkpoints" / "step_2").is_dir()
    assert not (tmp_path / "split" / "final").exists()
    second = _train(_args(corpus, tmp_path / "split", *schedule, "--resume_from_checkpoint", "latest"))
    assert second["step"] == 4
    np.testing.assert_allclose(first["losses"] + second["losses"], full["losses"], rtol=1e-6)
    steps = [row["step"] for row in _log(tmp_path / "split") if "loss" in row]
    assert steps == [1, 2, 3, 4]
    a = TurnTakingJudge.from_pretrained(tmp_path / "full" / "final")
    b = TurnTakingJudge.from_pretrained(tmp_path / "split" / "final")
    for (name, pa), pb in zip(a.state_dict().items(), b.state_dict().values()):
        torch.testing.assert_close(pa, pb, rtol=1e-6, atol=1e-7, msg=name)
    validation = [row for row in _log(tmp_path / "full") if "eval_roc_auc" in row]
    assert validation and set(validation[-1]["eval_roc_auc"]) == {"NA", "BC", "I", "T", "C", "overall"}


def test_lora_is_merged_into_a_plain_judge(corpus, tiny_config, tmp_path):
    _train(_args(corpus, tmp_path, "--backbone_mode", "lora", "--lora_r", "2", "--max_train_steps", "1", "--learning_rate", "0.05", "--validation_split", "none"))
    folder = tmp_path / "final"
    config = json.loads((folder / "config.json").read_text())
    assert config["backbone_mode"] == "lora"
    judge = TurnTakingJudge.from_pretrained(folder)  # loads without peft: adapters merged
    assert not any("lora" in k for k in judge.state_dict())
    torch.manual_seed(0)  # the same random init as the run (seed 0) ...
    init = _random_judge(tiny_config)
    q = "encoder.layers.0.self_attn.q_proj.weight"
    # ... differs from the trained attention projections (LoRA's B starts at zero, one step moves it)
    assert not torch.equal(judge.state_dict()[q], init.state_dict()[q])
    assert torch.equal(judge.state_dict()["encoder.layers.0.fc1.weight"], init.state_dict()["encoder.layers.0.fc1.weight"])


def test_causal_all_chunk_labels(corpus, tmp_path):
    summary = _train(_args(corpus, tmp_path, "--context_mode", "causal", "--window_labels", "all", "--max_train_steps", "2", "--backbone_mode", "full"))
    assert summary["step"] == 2 and np.isfinite(summary["losses"]).all()
    assert TurnTakingJudge.from_pretrained(tmp_path / "final").config.context_mode == "causal"


def test_window_labels_align_with_predictions():
    labels = np.arange(10)
    out = window_labels(labels, chunk_index=3, n_chunks=6)  # window ends at the end of chunk 3
    assert out.tolist() == [-100, -100, 1, 2, 3, 4]  # ends -2..3 -> labels of chunks -1..4
    assert window_labels(labels, 9, 3).tolist() == [8, 9, -100]


def test_bad_options_name_the_problem(tmp_path):
    with pytest.raises(SystemExit, match="--data"):
        train_judge.parse_args([])
    with pytest.raises(SystemExit, match="causal"):
        train_judge.parse_args(["--data", "x", "--window_labels", "all"])
    config = tmp_path / "c.yaml"
    config.write_text("learning_rate: 0.1\nper_device_train_batch_sise: 3\n")
    with pytest.raises(SystemExit, match="per_device_train_batch_sise"):
        train_judge.parse_args(["--config", str(config), "--data", "x"])
    config.write_text("learning_rate: 0.1\nper_device_train_batch_size: 3\ncontext_s: 8\n")
    args, training = train_judge.parse_args(["--config", str(config), "--data", "x", "--per_device_train_batch_size", "5"])
    assert training.learning_rate == 0.1 and training.per_device_train_batch_size == 5 and args.context_s == 8
    # the judge's own default rate where neither the file nor a flag sets one
    assert train_judge.parse_args(["--data", "x"])[1].learning_rate == train_judge.TRAINING_DEFAULTS["learning_rate"]


def test_two_cpu_ranks_with_accelerate_launch(corpus, tiny_config, tmp_path):
    command = [
        *accelerate_two_ranks(), "-m", "turneval.training.train_judge", "--data", str(corpus), "--backbone", "random", "--model_config", tiny_config,
        "--context_s", "0.4", "--per_device_train_batch_size", "2", "--max_train_steps", "2", "--checkpointing_steps", "2", "--validation_split", "none",
        "--output_dir", str(tmp_path), "--cpu", "--cache_dir", str(tmp_path / "cache"),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "checkpoints" / "step_2" / "random_states_1.pkl").is_file()  # both ranks saved state
    losses = [row for row in _log(tmp_path) if "loss" in row]
    assert [row["step"] for row in losses] == [1, 2]
    assert (tmp_path / "final" / "model.safetensors").is_file()


# ---------------------------------------------------------------------------- evaluation
def test_roc_auc_and_f1_tables():
    labels = np.array([0, 0, 1, 1, 2])
    probs = np.array([[0.9, 0.1, 0.0], [0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.7, 0.4, 0.1], [0.1, 0.1, 0.8]])
    table = roc_auc_table(labels, probs, ["A", "B", "C"])
    assert table["A"] == pytest.approx(5 / 6) and table["C"] == 1.0
    assert table["overall"] == pytest.approx(np.mean([table["A"], table["B"], table["C"]]))
    thresholds = f1_thresholds(labels, probs, 3)
    assert thresholds[2] == pytest.approx(0.8) and thresholds[0] == pytest.approx(0.6)
    f1 = f1_table(labels, probs, thresholds, ["A", "B", "C"])
    assert f1["A"] == pytest.approx(0.8) and f1["C"] == 1.0  # A at 0.6: tp 2, fp 1 (the 0.7 of a B chunk)
    assert 0 <= f1["overall"] <= 1
    absent = roc_auc_table(np.zeros(4, int), np.full((4, 3), 1 / 3), ["A", "B", "C"])
    assert np.isnan(absent["A"]) and np.isnan(absent["overall"])


def test_evaluate_writes_tables(corpus, tiny_config, tmp_path):
    torch.manual_seed(0)
    judge = _random_judge(tiny_config, "--context_mode", "causal").eval()
    validation = load_chunk_rows(corpus, "validation", tmp_path / "cache")
    tests = {"in-domain": load_chunk_rows(corpus, "test", tmp_path / "cache"), "ood": validation[:1]}
    report = evaluate_judge.evaluate(judge, validation, tests, batch_size=4)
    assert set(report["sets"]) == {"in-domain", "ood"}
    assert report["sets"]["in-domain"]["n_chunks"] == 2 * 99
    assert set(report["validation"]["operating_points"]) == {"NA", "BC", "I", "T", "C"}
    json_path, md_path = evaluate_judge.write_report(report, tmp_path / "out")
    assert json.loads(json_path.read_text())["sets"]["ood"]["roc_auc"]["overall"] == report["sets"]["ood"]["roc_auc"]["overall"]
    markdown = md_path.read_text()
    assert "| Turn-Taking Label | in-domain | ood |" in markdown and "| T (Turn change) |" in markdown
    assert "| Turn-Taking Label | ROC-AUC | F1 |" in markdown


def test_shipped_configs_are_valid(repo_root):
    configs = sorted((repo_root / "training" / "configs").glob("judge_*.yaml"))
    assert len(configs) >= 3
    for path in configs:
        args, _ = train_judge.parse_args(["--config", str(path)])
        assert args.context_mode in ("window", "causal") and args.backbone_mode in ("frozen", "lora", "full")
