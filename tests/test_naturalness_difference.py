"""Whether two systems' naturalness m differ beyond the noise: the unit bootstrap, the human
range data file and what `turneval compare` says."""
from __future__ import annotations

import json

import numpy as np
import pytest

from turneval.checkpoints import bundled_root
from turneval.cli import main
from turneval.dataset_scripts.synthetic import generate_dialogue
from turneval.metrics.naturalness_difference import bootstrap_m_difference, difference_sentence
from turneval.metrics.naturalness_score import aggregate_unit_nll
from turneval.naturalness_range import checkpoint_key, human_m_range, naturalness_ranges
from turneval.reporting import report, save_report


BUNDLED_PREDICTORS = ("future_activity_predictor_lookahead", "future_activity_predictor_words")
"""The predictors that ship (tests never read the earlier generations kept in benchmarks/baselines/)."""


def test_bootstrap_separates_shifted_systems_and_not_equal_ones():
    rng = np.random.default_rng(0)
    a = [rng.gamma(2.0, 1.0, 80) for _ in range(3)]
    same = bootstrap_m_difference(a, [rng.permutation(c) for c in a])
    assert same.difference == pytest.approx(0.0, abs=1e-12) and same.low < 0 < same.high and not same.beyond_noise
    worse = bootstrap_m_difference(a, [c + 0.8 for c in a])
    assert worse.difference == pytest.approx(-0.8) and worse.high < 0 and worse.beyond_noise, "higher NLL: lower m"
    assert worse.m_a == pytest.approx(np.mean([aggregate_unit_nll(c).nat_score for c in a]))
    assert bootstrap_m_difference(a, [c + 0.8 for c in a]) == worse, "deterministic per seed"
    # fewer units, wider interval
    few = bootstrap_m_difference([c[:10] for c in a], [c[:10] + 0.8 for c in a])
    assert few.high - few.low > worse.high - worse.low
    with pytest.raises(ValueError, match="system B has no scored boundary unit"):
        bootstrap_m_difference(a, [[float("nan")]])


def test_sentence_says_beyond_or_within_the_noise_and_the_human_spread():
    rng = np.random.default_rng(1)
    a = [rng.gamma(2.0, 1.0, 200)]
    beyond = difference_sentence(bootstrap_m_difference(a, [a[0] - 0.6]), human_sd=0.2, human_n=50)
    assert "B takes turns more naturally than A beyond the sampling noise" in beyond and "times the spread" in beyond and "over 50" in beyond
    within = difference_sentence(bootstrap_m_difference(a, [rng.permutation(a[0])]), human_sd=0.2)
    assert "do not differ beyond the sampling noise" in within and "smaller than the spread" in within


def test_range_file_names_its_sources_and_both_bundled_predictors():
    data = naturalness_ranges()
    assert data["command"].startswith("python tools/build_naturalness_range.py") and data["source"] and data["commit"]
    for name in BUNDLED_PREDICTORS:
        entry = human_m_range(bundled_root() / name)
        assert entry is not None, f"{name}: no range of m on real conversations"
        r = entry["range"]
        assert r["low"] <= r["median"] <= r["high"] < 0 and r["n"] >= 3 and entry["sd"] > 0 and name in r["source"]
    assert checkpoint_key(bundled_root() / BUNDLED_PREDICTORS[0]) == BUNDLED_PREDICTORS[0]
    assert human_m_range("elsewhere/unmeasured_predictor") is None


def _reports(tmp_path, predictor, systems=(("A", "human"), ("B", "eager_duplex"))):
    for system, style in systems:
        rep = report(generate_dialogue(5, duration_s=40.0, style=style, system_speaker=1), judge=False, predictor=predictor, progress=False)
        save_report(rep, tmp_path / system / "session0", html=False)


def test_compare_gives_the_m_difference_an_interval_and_a_sentence(tmp_path, capsys):
    predictor = bundled_root() / "future_activity_predictor_lookahead"
    _reports(tmp_path, str(predictor))
    out = tmp_path / "comparison.json"
    assert main(["compare", str(tmp_path / "A"), str(tmp_path / "B"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    nat = json.loads(out.read_text())["naturalness"]
    assert nat["predictors"] == ["future_activity_predictor_lookahead"] and nat["sentence"] in printed
    m = {s: json.loads((tmp_path / s / "session0" / "report.json").read_text())["naturalness"]["naturalness_score"] for s in "AB"}
    d = nat["difference"]
    assert d["difference"] == pytest.approx(m["B"] - m["A"]) and d["low"] <= d["difference"] <= d["high"]
    assert d["n_conversations_a"] == d["n_conversations_b"] == 1 and d["high"] - d["low"] > 0, "one conversation each is enough"
    assert nat["human_sd"] == human_m_range(predictor)["sd"] and "spread of m between real human conversations" in nat["sentence"]


def test_compare_refuses_m_from_different_predictors(tmp_path, capsys):
    _reports(tmp_path / "one", str(bundled_root() / "future_activity_predictor_lookahead"), systems=(("A", "human"),))
    _reports(tmp_path / "two", str(bundled_root() / "future_activity_predictor_words"), systems=(("B", "human"),))
    assert main(["compare", str(tmp_path / "one" / "A"), str(tmp_path / "two" / "B")]) == 0
    assert "not compared: the reports were scored by different predictors" in capsys.readouterr().out
