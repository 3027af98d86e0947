"""`turneval score` (naturalness of many dialogues, data-parallel) and `turneval compare`."""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from turneval.cli import main
from turneval.dataset_scripts.synthetic import generate_dialogue, write_dialogue
from turneval.metrics.intervals import Z95
from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel
from turneval.reporting import report, save_report

from ._launch import accelerate_two_ranks


TINY_PREDICTOR = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64, num_mel_bins=32, num_channel_layers=1, num_cross_layers=1)


@pytest.fixture(scope="module")
def predictor(tmp_path_factory) -> Path:
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("predictor") / "predictor"
    FutureActivityPredictorModel(FutureActivityPredictorConfig(**TINY_PREDICTOR)).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """Three short synthetic sessions (annotation JSON + stereo wav each) in one folder."""
    root = tmp_path_factory.mktemp("corpus")
    for seed, style in enumerate(("human", "cascaded", "eager_duplex")):
        write_dialogue(generate_dialogue(seed, duration_s=12.0, style=style, system_speaker=1), root)
    return root


@pytest.fixture(scope="module")
def folder_scores(corpus, predictor, tmp_path_factory) -> Path:
    """`turneval score FOLDER` in this process (one rank)."""
    out = tmp_path_factory.mktemp("scores") / "folder.json"
    assert main(["score", str(corpus), "--predictor", str(predictor), "--out", str(out)]) == 0
    return out


def _scores(path: Path) -> dict[str, float]:
    data = json.loads(path.read_text())
    return {d["id"]: d["naturalness_score"] for d in data["dialogues"]}


def test_score_folder_manifest_and_files_agree(corpus, predictor, folder_scores, tmp_path, capsys):
    jsons = sorted(corpus.glob("*.json"))
    (tmp_path / "manifest.csv").write_text("path,id\n" + "".join(f"{p.name},{p.stem}\n" for p in jsons))
    shutil.move(tmp_path / "manifest.csv", corpus / "manifest.csv")  # relative paths resolve beside the manifest
    runs = {"manifest": [str(corpus / "manifest.csv")], "files": [str(jsons[0]), str(jsons[1])]}
    results = {"folder": _scores(folder_scores)}
    for name, inputs in runs.items():
        out = tmp_path / f"{name}.json"
        assert main(["score", *inputs, "--predictor", str(predictor), "--out", str(out)]) == 0
        results[name] = _scores(out)
    assert results["folder"] == results["manifest"]
    assert results["files"] == {p.stem: results["folder"][p.stem] for p in jsons[:2]}
    assert len(results["folder"]) == 3
    data = json.loads(folder_scores.read_text())
    values = [d["naturalness_score"] for d in data["dialogues"]]
    agg = data["aggregate"]["naturalness_score"]
    assert agg["n"] == 3 and agg["mean"] == pytest.approx(np.mean(values))
    assert agg["ci95_half_width"] == pytest.approx(Z95 * np.std(values, ddof=1) / math.sqrt(3))
    assert "mean naturalness m over 3 dialogue(s)" in capsys.readouterr().out
    (corpus / "manifest.csv").unlink()


def test_score_audio_files_use_vad(corpus, predictor, tmp_path):
    wav = next(corpus.glob("*.wav"))
    out = tmp_path / "wav.json"
    assert main(["score", str(wav), "--predictor", str(predictor), "--out", str(out)]) == 0
    assert np.isfinite(_scores(out)[wav.stem])


def test_score_bad_input(corpus, predictor, tmp_path, capsys):
    assert main(["score", str(tmp_path / "missing.json"), "--predictor", str(predictor)]) == 1
    assert "missing.json: file not found" in capsys.readouterr().err
    (tmp_path / "bad.csv").write_text("audio_file\nx.wav\n")
    assert main(["score", str(tmp_path / "bad.csv"), "--predictor", str(predictor)]) == 1
    assert "bad.csv:1" in capsys.readouterr().err
    assert main(["score", str(corpus), "--predictor", str(tmp_path)]) == 1
    assert "--predictor" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.json"))


def test_score_splits_dialogues_across_two_ranks(corpus, predictor, folder_scores, tmp_path):
    single, double = folder_scores, tmp_path / "two.json"
    cmd = [*accelerate_two_ranks(), "-m", "turneval.cli", "score", str(corpus), "--predictor", str(predictor), "--out", str(double)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(double.read_text())["n_processes"] == 2
    one, two = _scores(single), _scores(double)
    assert list(one) == list(two)
    np.testing.assert_allclose(list(two.values()), list(one.values()), rtol=1e-5)


def test_compare_two_systems(tmp_path, capsys):
    for system, style in (("A", "human"), ("B", "cascaded")):
        for seed in range(2):
            rep = report(generate_dialogue(seed, duration_s=30.0, style=style, system_speaker=1), judge=False, predictor=False, progress=False)
            save_report(rep, tmp_path / system / f"session{seed}", html=False)
    out = tmp_path / "comparison.json"
    assert main(["compare", str(tmp_path / "A"), str(tmp_path / "B"), "--out", str(out)]) == 0
    assert "B - A" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["system_a"]["n_reports"] == data["system_b"]["n_reports"] == 2
    row = next(r for r in data["figures"] if r["key"] == "statistics.gap_mean_s")
    values = {
        s: [json.loads(p.read_text())["statistics"]["gap_mean_s"] for p in sorted((tmp_path / s).rglob("report.json"))] for s in "AB"
    }
    assert row["difference"]["mean"] == pytest.approx(np.mean(values["B"]) - np.mean(values["A"]))
    half = Z95 * math.sqrt(np.var(values["A"], ddof=1) / 2 + np.var(values["B"], ddof=1) / 2)
    assert row["difference"]["ci95_half_width"] == pytest.approx(half)
    assert row["difference"]["mean"] > 0, "the cascaded system leaves longer gaps"


def test_compare_bad_input(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["compare", str(tmp_path / "empty"), str(tmp_path / "empty")]) == 1
    assert "no report.json" in capsys.readouterr().err
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "report.json").write_text('{"summary": [\n')
    assert main(["compare", str(tmp_path / "x"), str(tmp_path / "x")]) == 1
    assert "report.json:2" in capsys.readouterr().err
