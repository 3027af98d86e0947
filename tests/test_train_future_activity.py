"""training/train_future_activity.py: runs, resumes exactly, and runs on two CPU ranks."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from safetensors.numpy import load_file

from turneval.dataset_scripts.dialogue import Dialogue
from turneval.training import train_future_activity
from turneval.training.future_activity_data import FutureActivityWindows, WindowConfig, boundary_unit_mask

from ._launch import accelerate_two_ranks


TINY = {"hidden_size": 32, "num_attention_heads": 2, "intermediate_size": 64, "num_mel_bins": 32, "num_channel_layers": 1, "num_cross_layers": 1, "dropout": 0.0}
SCRIPT = Path(train_future_activity.__file__)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    rng = np.random.default_rng(0)
    for k in range(2):
        duration, sr = 12.0, 16000
        segments, t, speaker = [[], []], 0.3, 0
        while t < duration - 1.5:
            length = rng.uniform(0.6, 2.0)
            segments[speaker].append((t, min(t + length, duration)))
            t += length + rng.uniform(0.1, 0.5)
            speaker = 1 - speaker
        audio = np.zeros((2, int(duration * sr)), np.float32)
        for ch in range(2):
            for s, e in segments[ch]:
                audio[ch, int(s * sr) : int(e * sr)] = 0.1 * rng.standard_normal(int(e * sr) - int(s * sr))
        sf.write(folder / f"d{k}.wav", audio.T, sr)
        (folder / f"d{k}.json").write_text(json.dumps(Dialogue(id=f"d{k}", segments=segments).to_dict()))
    (folder / "tiny.json").write_text(json.dumps(TINY))
    return folder


def _args(corpus: Path, out: Path, steps: int, *extra: str) -> list[str]:
    return ["--train_dir", str(corpus), "--output_dir", str(out), "--model_config", str(corpus / "tiny.json"), "--input_type", "vad",
            "--max_train_steps", str(steps), "--per_device_train_batch_size", "2", "--checkpointing_steps", "2", "--window_s", "4",
            "--cpu", "--num_warmup_steps", "1", *extra]


def _main(argv: list[str]) -> int:
    from accelerate.state import AcceleratorState, GradientState

    AcceleratorState._reset_state(True)  # several Accelerators in one test process
    GradientState._reset_state()
    return train_future_activity.main(argv)


def test_boundary_unit_mask_marks_two_seconds_before_boundaries():
    va = np.zeros((600, 2), dtype=np.int8)
    va[300:400, 0] = 1  # one 2 s utterance of A: onset at 6 s, offset at 8 s
    mask = boundary_unit_mask(va)
    assert mask[200:300].all() and mask[300:400].all()  # [4 s, 6 s] and [6 s, 8 s]
    assert not mask[:200].any() and not mask[401:].any()


def test_windows_are_deterministic_and_labelled(corpus):
    dialogues = train_future_activity.load_corpus(corpus)
    ds = FutureActivityWindows(dialogues, WindowConfig(window_s=4.0), draws=10, seed=3)
    a, b = ds[7], ds[7]
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert a["input_values"].shape == (2, 4 * 16000)
    assert a["labels"].shape == (200,) and (a["labels"] >= -100).all() and (a["labels"] < 256).all()


def test_corpora_given_as_parts_are_pooled_once_per_dialogue(corpus, tmp_path):
    from turneval.dataset_scripts.builders.manifest import write_dialogue_manifest

    d0, d1 = train_future_activity.load_corpus(corpus)
    other = Dialogue(id="d1", segments=[[(0.0, 1.0)], []], audio_path=d1.audio_path)  # the same id in a second part
    extra = Dialogue(id="d9", segments=[[(0.0, 1.0)], [(1.5, 2.0)]], audio_path=d1.audio_path)
    a = write_dialogue_manifest([d0, d1], tmp_path / "a")
    b = write_dialogue_manifest([other, extra], tmp_path / "b")
    pooled = train_future_activity.load_corpus(f"{a},{b.parent}")
    assert [d.id for d in pooled] == ["d0", "d1", "d9"]
    assert pooled[1].segments == d1.segments  # the first part's copy wins


def test_resume_is_exact(corpus, tmp_path):
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    _main(_args(corpus, straight, 4))
    _main(_args(corpus, resumed, 4, "--stop_after_steps", "2"))
    assert not (resumed / "final").exists() and (resumed / "checkpoints" / "step_2").is_dir()
    _main(_args(corpus, resumed, 4, "--resume_from_checkpoint", "latest"))
    w1 = load_file(straight / "final" / "model.safetensors")
    w2 = load_file(resumed / "final" / "model.safetensors")
    assert w1.keys() == w2.keys()
    for key in w1:
        np.testing.assert_allclose(w1[key], w2[key], rtol=1e-5, atol=1e-6, err_msg=key)
    # the loss curve of the resumed run continues the uninterrupted one
    curve = [r["loss"] for r in _log(straight) if "loss" in r]
    np.testing.assert_allclose([r["loss"] for r in _log(resumed) if "loss" in r], curve, rtol=1e-5)
    # --export_latest writes the same final model from the newest checkpoint
    exported = tmp_path / "exported"
    shutil.copytree(resumed / "checkpoints", exported / "checkpoints")
    _main(_args(corpus, exported, 4, "--export_latest"))
    w3 = load_file(exported / "final" / "model.safetensors")
    assert w3.keys() == w2.keys() and all(np.array_equal(w3[k], w2[k]) for k in w2)


def _log(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_two_cpu_ranks_follow_the_one_rank_schedule(corpus, tmp_path):
    """Accelerate steps a prepared scheduler once per process: the skeleton stretches the schedule
    by the number of processes, so two ranks see the learning rate of one rank at every step
    (unstretched, the two-rank schedule would reach its end halfway)."""
    one, two = tmp_path / "one", tmp_path / "two"
    schedule = ("--lr_scheduler_type", "linear", "--num_warmup_steps", "2", "--checkpointing_steps", "6")
    _main(_args(corpus, one, 6, *schedule))
    cmd = [*accelerate_two_ranks(), str(SCRIPT), *_args(corpus, two, 6, *schedule)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    rates_one = [(r["step"], r["lr"]) for r in _log(one) if "lr" in r]
    rates_two = [(r["step"], r["lr"]) for r in _log(two) if "lr" in r]
    assert [s for s, _ in rates_two] == [1, 2, 3, 4, 5, 6]
    np.testing.assert_allclose([lr for _, lr in rates_two], [lr for _, lr in rates_one], rtol=1e-9)
    peak = 3e-4  # warm-up over steps 1-2, then linear decay to 0 after step 6
    np.testing.assert_allclose([lr for _, lr in rates_one], [0.0, peak / 2, peak, peak * 3 / 4, peak / 2, peak / 4], rtol=1e-9)
    assert (two / "checkpoints" / "step_6" / "random_states_1.pkl").is_file()  # both ranks saved state
    assert (two / "final" / "model.safetensors").exists() and json.loads((two / "compute.json").read_text())["processes"] == 2


def test_trust_remote_code_loading_without_turneval(corpus, tmp_path):
    out = tmp_path / "remote"
    _main(_args(corpus, out, 1))
    code = (
        "import sys, torch; sys.modules['turneval'] = None\n"
        "from transformers import AutoModel\n"
        f"m = AutoModel.from_pretrained({str(out / 'final')!r}, trust_remote_code=True)\n"
        "print(type(m).__name__, m(voice_activity=torch.zeros(1, 60, 2)).probs.shape[-1])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "FutureActivityPredictorModel 256" in result.stdout


def test_voice_activity_cache_training_resumes_exactly(tmp_path):
    from turneval.training.switchboard_va import load_voice_activity

    rng = np.random.default_rng(1)
    arrays = [(rng.random((900, 2)) < 0.4).repeat(2, axis=0).astype(np.int8) for _ in range(3)]
    cache = tmp_path / "va.npz"
    offsets = np.concatenate([[0], np.cumsum([a.shape[0] for a in arrays])])
    np.savez(cache, ids=np.array(["1", "2", "3"]), offsets=offsets, va=np.concatenate(arrays))
    assert len(load_voice_activity(cache)) == 3
    config = tmp_path / "timing.json"
    config.write_text(json.dumps({"input_type": "vad", "vad_features": "timing", "hidden_size": 16, "num_attention_heads": 2,
                                  "conv_layers": 2, "conv_kernel_size": 3, "num_channel_layers": 0, "num_cross_layers": 0}))

    def args(out, *extra):
        return ["--train_va", str(cache), "--val_va", str(cache), "--output_dir", str(out), "--model_config", str(config),
                "--input_type", "vad", "--max_train_steps", "4", "--per_device_train_batch_size", "2", "--checkpointing_steps", "2",
                "--eval_steps", "2", "--window_s", "4", "--cpu", "--num_warmup_steps", "1", "--vad_like_p", "0.5", "--clean_labels", *extra]

    _main(args(tmp_path / "straight"))
    _main(args(tmp_path / "resumed", "--stop_after_steps", "2"))
    _main(args(tmp_path / "resumed", "--resume_from_checkpoint", "latest"))
    w1 = load_file(tmp_path / "straight" / "final" / "model.safetensors")
    w2 = load_file(tmp_path / "resumed" / "final" / "model.safetensors")
    for key in w1:
        np.testing.assert_allclose(w1[key], w2[key], rtol=1e-5, atol=1e-6, err_msg=key)
    log = [json.loads(line) for line in (tmp_path / "straight" / "metrics.jsonl").read_text().splitlines()]
    assert any(r.get("val_loss", 0) > 0 for r in log)
    with pytest.raises(SystemExit, match="--train_va"):
        _main(["--output_dir", str(tmp_path / "x"), "--model_config", str(config), "--cpu"])
