"""Rubric pass rates (Audio MultiChallenge): APR, ARS, per axis, validation, evaluate module."""
from __future__ import annotations

import doctest

import pytest

from turneval.metrics.rubric import RubricError, item_scores, rubric_pass_rates


GRADES = [[True, True, True], [True, False], [False], [True], [True, True, False, True]]
AXES = ["memory", "memory", "editing", "editing", "coherence"]


def test_apr_and_ars_by_hand():
    scores = rubric_pass_rates(GRADES, axes=AXES)
    # items pass: yes, no, no, yes, no -> APR 2/5; shares 1, 1/2, 0, 1, 3/4 -> ARS 3.25/5
    assert scores["apr"] == pytest.approx(2 / 5)
    assert scores["ars"] == pytest.approx(3.25 / 5)
    assert (scores["n_items"], scores["n_rubrics"]) == (5, 11)
    assert scores["per_axis"]["memory"] == {"apr": 0.5, "ars": 0.75, "n_items": 2, "n_rubrics": 5}
    assert scores["per_axis"]["editing"] == {"apr": 0.5, "ars": 0.5, "n_items": 2, "n_rubrics": 2}
    assert scores["per_axis"]["coherence"] == {"apr": 0.0, "ars": 0.75, "n_items": 1, "n_rubrics": 4}
    assert scores["axis_macro_apr"] == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert scores["axis_macro_ars"] == pytest.approx((0.75 + 0.5 + 0.75) / 3)


def test_apr_never_exceeds_ars():
    passed_all, share = item_scores(GRADES)
    assert all(p <= s for p, s in zip(passed_all, share))
    assert "per_axis" not in rubric_pass_rates(GRADES)


def test_grades_as_strings_and_integers():
    assert rubric_pass_rates([["pass", "fail"], [1, 1]])["apr"] == 0.5
    assert rubric_pass_rates([["PASS"], [0]])["ars"] == 0.5


def test_item_without_rubrics_is_a_clear_error():
    with pytest.raises(RubricError, match="item 1 has no rubrics"):
        rubric_pass_rates([[True], []])
    with pytest.raises(RubricError, match="item 'q7' has no rubrics"):
        rubric_pass_rates([[True], []], item_ids=["q1", "q7"])
    with pytest.raises(RubricError, match="item 0, rubric 1: grade 'maybe' is not pass/fail"):
        rubric_pass_rates([[True, "maybe"]])
    with pytest.raises(RubricError, match="grade 2"):
        rubric_pass_rates([[2]])
    with pytest.raises(RubricError, match="one axis per item"):
        rubric_pass_rates([[True]], axes=["a", "b"])


def test_evaluate_module(repo_root, monkeypatch):
    import evaluate

    monkeypatch.chdir(repo_root)
    relative = evaluate.load("metrics/rubric_pass_rate")
    absolute = evaluate.load(str(repo_root / "metrics" / "rubric_pass_rate"))
    for module in (relative, absolute):
        assert module.compute(rubric_results=GRADES, axis=AXES) == rubric_pass_rates(GRADES, axes=AXES)
    # the module raises the RubricError of the copy of turneval.metrics.rubric it carries
    with pytest.raises(ValueError, match="no rubrics") as raised:
        relative.compute(rubric_results=[[True], []], axis=["a", "a"])
    assert type(raised.value).__name__ == "RubricError"
    test = doctest.DocTestParser().get_doctest(relative.inputs_description, {}, "rubric_pass_rate", None, 0)
    assert test.examples
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
