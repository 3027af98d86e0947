"""benchmarks/experiments/turn_end_finetune.py: the cached states give the head's own logits; training moves only its top."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import soundfile as sf
import torch

from turneval.dataset_scripts.synthetic import generate_dialogue
from turneval.dataset_scripts.turn_end_decisions import TIMING_FEATURES, turn_end_decisions
from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge
from turneval.training import fit_turn_end_head as fitter


def _experiment(name: str):
    """An experiment, not a recipe stage: it lives with the benchmarks, outside the package."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "experiments" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"experiment_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ft = _experiment("turn_end_finetune")


# four layers: two shared, and the head's own two (the first frozen and cached, the last trained)
TINY_WHISPER = {"d_model": 32, "encoder_layers": 4, "encoder_attention_heads": 2, "encoder_ffn_dim": 64, "max_source_positions": 1500}
WINDOW_S = 2.0


def _judge_with_head() -> TurnTakingJudge:
    torch.manual_seed(0)
    base = TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="window", context_s=WINDOW_S)).eval()
    rng = np.random.default_rng(0)
    windows = (0.1 * rng.standard_normal((12, int(WINDOW_S * 16000)))).astype(np.float32)
    x = np.stack([fitter.decision_features(base, torch.from_numpy(w)[None]) for w in windows])
    xt = np.concatenate([x, rng.standard_normal((12, len(TIMING_FEATURES)))], axis=1)
    fitted = fitter.fit_linear_head(xt, (xt[:, 0] > np.median(xt[:, 0])).astype(int), c=1.0)
    judge = TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="causal", context_s=4.0))
    judge.encoder.load_state_dict(base.encoder.state_dict())
    return fitter.install_head(judge.eval(), base, fitted, WINDOW_S, {}, timing=True)


def _manifest(folder, seeds=(3, 4)):
    folder.mkdir(parents=True, exist_ok=True)
    lines, shifts = [], []
    for seed in seeds:
        dialogue = generate_dialogue(seed, duration_s=20.0, style="human")
        sf.write(folder / f"d{seed}.flac", dialogue.audio.T, 16000)
        lines.append(json.dumps({**dialogue.to_dict(), "audio_path": f"d{seed}.flac"}))
        shifts += [int(d.shift) for d in turn_end_decisions(dialogue, fitter.DECISION_DELAY_S)]
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    return folder, shifts


def test_cached_states_give_the_installed_heads_probabilities(tmp_path):
    judge = _judge_with_head()
    folder, shifts = _manifest(tmp_path / "m")
    cached = ft.cache_states(judge, folder, tmp_path / "cache")
    data = ft.CachedDecisions([cached])
    assert data.labels.tolist() == shifts and len(data) == len(shifts) > 0
    # the same numbers as the report's path: windows + timing through the whole head
    timing, _ = fitter.manifest_timing(folder)
    windows = []
    from turneval.dataset_scripts.audio import load_stereo
    from turneval.dataset_scripts.builders.manifest import read_dialogue_manifest, resolve_manifest
    from turneval.modeling.modeling_turn_taking_judge import pause_window

    for _, dialogue in read_dialogue_manifest(resolve_manifest(folder)):
        stereo = load_stereo(dialogue.audio_path)
        for d in turn_end_decisions(dialogue, fitter.DECISION_DELAY_S):
            windows.append(pause_window(stereo[d.speaker], d.ipu_end + fitter.DECISION_DELAY_S, WINDOW_S))
    expected = judge.turn_end_probabilities(np.stack(windows), timing)
    got = torch.sigmoid(torch.from_numpy(ft.predict(judge.turn_end_head, data))).numpy()
    np.testing.assert_allclose(got, expected, atol=2e-3)  # the cache holds float16 states
    # read back, not recomputed
    stamp = (cached / "states.npy").stat().st_mtime_ns
    assert ft.cache_states(judge, folder, tmp_path / "cache") == cached and (cached / "states.npy").stat().st_mtime_ns == stamp
    assert not list((tmp_path / "cache").glob("*.partial"))


def test_finetuning_moves_only_the_top_of_the_head_and_keeps_the_best_epoch(tmp_path):
    judge = _judge_with_head()
    folder, _ = _manifest(tmp_path / "m", seeds=(3, 4, 5))
    data = ft.CachedDecisions([ft.cache_states(judge, folder, tmp_path / "cache")])
    head = judge.turn_end_head
    frozen_before = {k: v.clone() for k, v in head.layers[0].state_dict().items()}
    top_before = {k: v.clone() for k, v in head.layers[-1].state_dict().items()}
    tuned, history = ft.finetune(head, data, data, epochs=3, lr=3e-3, batch_size=4, weight_decay=0.0, seed=0, log=lambda _: None)
    assert [h["epoch"] for h in history] == [0, 1, 2, 3]
    best = max(history, key=lambda h: h["val_roc_auc"])
    assert ft.roc_auc(data.labels, ft.predict(tuned, data)) == best["val_roc_auc"]
    for k, v in tuned.layers[0].state_dict().items():
        torch.testing.assert_close(v, frozen_before[k], rtol=0, atol=0)
    if best["epoch"] > 0:
        assert any(not torch.equal(v, top_before[k]) for k, v in tuned.layers[-1].state_dict().items())
    assert not any(p.requires_grad for p in tuned.parameters())


def test_install_writes_the_chosen_head_into_the_judge(tmp_path):
    judge = _judge_with_head()
    judge.save_pretrained(tmp_path / "judge")
    folder, _ = _manifest(tmp_path / "m", seeds=(3, 4, 5))
    args = ["--judge", str(tmp_path / "judge"), "--train", str(folder), "--val", str(folder), "--cache", str(tmp_path / "cache"),
            "--epochs", "2", "--lr", "3e-3", "--batch_size", "4", "--output_dir", str(tmp_path / "out"), "--install"]
    assert ft.main(args) == 0
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    loaded = TurnTakingJudge.from_pretrained(tmp_path / "judge").eval()
    data = ft.CachedDecisions([ft.cache_states(loaded, folder, tmp_path / "cache")])
    assert abs(ft.roc_auc(data.labels, ft.predict(loaded.turn_end_head, data)) - result["roc_auc_after"]["val"]) < 1e-6
    assert loaded.config.turn_end_head["finetuned"]["chosen_epoch"] == result["chosen_epoch"]
    assert loaded.config.turn_end_head["timing_features"] == list(TIMING_FEATURES)
