"""training/tune_judge_thresholds.py: a judge's own agreement thresholds from validation conversations."""
from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
import torch

from turneval.dataset_scripts.synthetic import generate_dialogue
from turneval.metrics.agreement import agreement, tune_thresholds
from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
from turneval.modeling.judge_loading import load_judge
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge
from turneval.training import tune_judge_thresholds as tool


TINY_WHISPER = {"d_model": 64, "encoder_layers": 2, "encoder_attention_heads": 4, "encoder_ffn_dim": 128, "max_source_positions": 1500}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("tune")
    torch.manual_seed(0)
    judge = TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="causal", context_s=4.0))
    with torch.no_grad():
        judge.classifier.weight.normal_(std=2.0)  # spread the probabilities so the thresholds matter
    judge.save_pretrained(root / "judge")
    lines = []
    for seed in (1, 2):
        dialogue = generate_dialogue(seed, duration_s=15.0, style="human")
        sf.write(root / f"d{seed}.flac", dialogue.audio.T, 16000)
        lines.append(json.dumps({**dialogue.to_dict(), "audio_path": f"d{seed}.flac"}))  # relative to the manifest
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_thresholds_are_tuned_on_every_decision_and_written_into_the_checkpoint(setup):
    judge = load_judge(setup / "judge").eval()
    dialogues = tool.load_manifest(setup)
    assert len(dialogues) == 2 and all(d.audio is not None for d in dialogues)
    result = tool.tune(judge, dialogues)
    assert set(result["thresholds"]) <= set("abcde") and result["thresholds"]
    # the tuned values are those of tune_thresholds(wide=True) on the same instances
    from turneval.dataset_scripts.agreement_instances import two_party_instances
    from turneval.reporting import judge_probabilities

    instances = [i for d in dialogues for i in two_party_instances(d, judge_probabilities(judge, d.audio))]
    expected = {m: r["threshold"] for m, r in tune_thresholds(instances, wide=True).items()}
    assert result["thresholds"] == expected
    tuned = agreement(instances, expected)
    for metric, r in tuned.items():
        mean_tuned = np.nanmean([s["agreement"] for s in r["decisions"].values() if s["n_instances"]])
        paper = agreement(instances)[metric]
        mean_paper = np.nanmean([s["agreement"] for s in paper["decisions"].values() if s["n_instances"]])
        assert mean_tuned >= mean_paper - 1e-9  # the paper's value is on the grid: tuning cannot do worse

    assert tool.main(["--judge", str(setup / "judge"), "--data", str(setup / "manifest.jsonl"), "--write"]) == 0
    reloaded = load_judge(setup / "judge")
    assert reloaded.config.agreement_thresholds == {k: round(v, 4) for k, v in expected.items()}
    assert "tune_judge_thresholds" in json.loads((setup / "judge" / "config.json").read_text())["agreement_thresholds_source"]


def test_a_missing_manifest_says_what_to_pass(tmp_path):
    with pytest.raises(SystemExit, match="manifest.jsonl"):
        tool.load_manifest(tmp_path / "nowhere")


def test_several_manifests_are_pooled_and_the_ceiling_is_reported(setup, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    # a second corpus folder holding the first conversation again, as another voicing of the same call would
    line = (setup / "manifest.jsonl").read_text().splitlines()[0]
    (other / "manifest.jsonl").write_text(line.replace('"audio_path": "d1.flac"', f'"audio_path": "{setup / "d1.flac"}"') + "\n")
    out = tmp_path / "tuned.json"
    assert tool.main(["--judge", str(setup / "judge"), "--data", str(setup), str(other), "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["n_dialogues"] == 3 and len(result["data"]) == 2
    assert result["agreement_ceiling"]  # metrics with both decisions exist in these conversations
    for metric, ceiling in result["agreement_ceiling"].items():
        # no threshold beats the ceiling on the lower direction, the tuned one included
        tuned = result["agreement_tuned_thresholds"]
        assert min(tuned[f"{metric}.{d}"] for d in ceiling["agreement"]) <= ceiling["lowest"] + 1e-12
    assert tool.data_name(setup / "manifest.jsonl") == f"{setup.parent.name}/{setup.name}"
