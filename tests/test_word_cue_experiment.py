"""benchmarks/experiments/word_cue_predictor.py: the same Switchboard pairs scored with and without the words."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks" / "experiments"))

import word_cue_predictor as experiment  # noqa: E402

from turneval.checkpoints import bundled_root  # noqa: E402
from turneval.training.recipes.quick_data import made_up_switchboard  # noqa: E402


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    ms98, splits = made_up_switchboard(tmp_path_factory.mktemp("swb"))
    predictors = [str(bundled_root() / name) for name in experiment.DEFAULT_PREDICTORS]
    return experiment.evaluate(str(ms98), str(splits), predictors, pair_calls=2)


def test_a_word_reading_predictor_is_scored_with_and_without_words_on_the_same_pairs(result):
    va, words = (result["predictors"][name] for name in experiment.DEFAULT_PREDICTORS)
    assert va["words"] == va["no words"], "a voice-activity predictor reads no words: one figure"
    assert words["words"]["n_pairs"] == words["no words"]["n_pairs"] == va["words"]["n_pairs"] > 0
    assert 0.0 <= words["words"]["pairwise_accuracy"] <= 1.0
    table = experiment.markdown(result)
    assert table.count("| future_activity_predictor_words |") == 2 and "no words" in table
