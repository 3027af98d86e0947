"""training/perturbation_ranking.py on a few synthetic conversations."""
import json

import numpy as np
import pytest

from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.synthetic.corpus import CorpusRecipe, generate_corpus
from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel
from turneval.training import perturbation_ranking


def test_mean_gap_baseline_penalises_late_and_early_entries():
    natural = Dialogue(id="n", segments=[[(0.0, 2.0), (4.4, 6.0)], [(2.2, 4.2)]])
    late = Dialogue(id="l", segments=[[(0.0, 2.0), (5.9, 7.0)], [(2.2, 4.2)]])
    early = Dialogue(id="e", segments=[[(0.0, 2.0), (3.0, 6.0)], [(2.2, 4.2)]])
    assert perturbation_ranking.mean_gap_score(natural) == pytest.approx(-0.2)
    assert perturbation_ranking.mean_gap_score(late) < perturbation_ranking.mean_gap_score(natural)
    assert perturbation_ranking.mean_gap_score(early) < perturbation_ranking.mean_gap_score(natural)


def test_benchmark_end_to_end(tmp_path):
    corpus = tmp_path / "corpus"
    generate_corpus(corpus, n=2, seed=7, recipe=CorpusRecipe(duration_s=45), progress=False)
    config = FutureActivityPredictorConfig(input_type="vad", hidden_size=32, num_attention_heads=2, intermediate_size=64,
                                           num_channel_layers=1, num_cross_layers=1)
    FutureActivityPredictorModel(config).save_pretrained(tmp_path / "vad_model")
    out = tmp_path / "out"
    assert perturbation_ranking.main(["--dialogues", str(corpus), "--vad-predictor", str(tmp_path / "vad_model"), "--out", str(out)]) == 0
    summary = json.loads((out / "naturalness.json").read_text())
    assert summary["n_pairs"] > 0 and summary["n_pairs"] == sum(summary["pairs_per_type"].values())
    assert set(summary["results"]) == {"FutureActivityPredictor (VAD only)", "baseline: minus mean abs. gap"}
    for result in summary["results"].values():
        assert 0.0 <= result["pairwise_accuracy"] <= 1.0
        assert result["pairwise_accuracy_ci_low"] <= result["pairwise_accuracy"] <= result["pairwise_accuracy_ci_high"]
        assert np.isfinite(result["mean_delta"])
    table = (out / "naturalness.md").read_text()
    assert "late_response" in table and "C-index" in table
