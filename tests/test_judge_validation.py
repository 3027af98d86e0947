"""Directions of agreement that rest on too few real instances are said so beside the figure."""
from __future__ import annotations

import json

from turneval.reporting.judge_validation import MIN_REAL_INSTANCES, mark_validation, validation_note


def _agreement():
    return {"metrics": {"c": {"decisions": {"I": {"agreement": 0.5, "n_instances": 2}, "C": {"agreement": 0.8, "n_instances": 300}}},
                        "e": {"decisions": {"T": {"agreement": 1.0, "n_instances": 1}}}}}


def test_each_direction_carries_its_real_count_and_whether_it_is_validated():
    marked = mark_validation(_agreement(), {"source": "3 calls", "instances": {"c": {"I": 7, "C": 900}}})
    interrupts, keeps_quiet = marked["metrics"]["c"]["decisions"]["I"], marked["metrics"]["c"]["decisions"]["C"]
    assert (interrupts["validation_instances"], interrupts["validated"]) == (7, False)
    assert (keeps_quiet["validation_instances"], keeps_quiet["validated"]) == (900, True)
    # a direction the tuning never saw counts 0 real instances, so it is not validated either
    assert marked["metrics"]["e"]["decisions"]["T"]["validation_instances"] == 0
    assert validation_note(interrupts) == f"too few real instances to validate: 7, {MIN_REAL_INSTANCES} needed"
    assert validation_note(keeps_quiet) == ""
    assert marked["validation"] == {"source": "3 calls", "minimum_instances": MIN_REAL_INSTANCES}


def test_without_a_record_nothing_is_claimed():
    agreement = _agreement()
    assert mark_validation(agreement, None) == _agreement()
    assert validation_note(agreement["metrics"]["c"]["decisions"]["I"]) == ""


def test_tuning_on_real_recordings_writes_the_counts(tmp_path):
    from turneval.training.tune_judge_thresholds import write_thresholds

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "turn_taking_judge"}))
    write_thresholds(tmp_path, {"a": 0.1}, "made up", {"source": "2 real recordings", "instances": {"a": {"T": 30, "C": 25}}})
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["agreement_validation"]["instances"] == {"a": {"T": 30, "C": 25}}
    write_thresholds(tmp_path, {"a": 0.2}, "synthetic only")  # no record: the earlier one stays as it was
    assert json.loads((tmp_path / "config.json").read_text())["agreement_validation"]["source"] == "2 real recordings"


def test_the_shipped_judge_says_which_directions_real_calls_checked():
    from turneval.checkpoints import default_checkpoint

    config = json.loads((default_checkpoint("judge") / "config.json").read_text())
    counts = config["agreement_validation"]["instances"]
    assert counts["a"]["T"] >= MIN_REAL_INSTANCES and counts["a"]["C"] >= MIN_REAL_INSTANCES
    assert counts["c"]["I"] < MIN_REAL_INSTANCES, "real calls hold few interruptions: the report must say so beside (c)"
