"""benchmarks/validation/known_groups.py: the group table, the checks, the human-human data readers."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import soundfile as sf


REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "benchmarks" / "validation"), str(REPO / "benchmarks"), str(REPO / "tools")]

import known_groups  # noqa: E402

from turneval.dataset_scripts.synthetic import generate_dialogue  # noqa: E402


def _rows(values: dict[str, float]) -> list[dict]:
    return [{"key": k, "label": k, "unit": "%", "value": v} for k, v in values.items()]


def _reports(human: list[float], eager: list[float]) -> dict:
    """Three groups; figure agreement.a.C takes the given values, 'x' is the same everywhere."""
    return {
        "human": [_rows({"agreement.a.C": h, "x": 1.0}) for h in human],
        "cascaded": [_rows({"agreement.a.C": None, "x": 1.0}) for _ in human],
        "eager_duplex": [_rows({"agreement.a.C": e, "x": 1.0}) for e in eager],
    }


def test_group_table_orders_groups_and_pairs_conversations():
    table = known_groups.group_table(_reports([80.0, 70.0, 75.0], [20.0, 30.0, 10.0]))
    row = next(t for t in table if t["key"] == "agreement.a.C")
    assert row["groups"]["human"][0] == pytest.approx(75.0) and row["groups"]["eager_duplex"][0] == pytest.approx(20.0)
    assert math.isnan(row["groups"]["cascaded"][0]) and row["ordering"] == "human-like > eager-duplex-like"
    diff = row["differences"]["human-eager_duplex"]
    assert diff[0] == pytest.approx(55.0) and diff[1] > 0, "paired per conversation: 60, 40, 65"
    check = known_groups.eager_check(table)
    assert check["value"] == pytest.approx(-55.0) and "MET" in check["note"]
    markdown = known_groups.markdown_table(table)
    assert markdown.count("\n") == 3 and "| ? | > | ? |" in markdown
    same = next(t for t in table if t["key"] == "x")
    assert known_groups._clear(same["differences"]["human-eager_duplex"]) == "~"


def test_eager_check_misses_when_the_groups_overlap():
    table = known_groups.group_table(_reports([50.0, 10.0], [40.0, 30.0]))
    assert "MISSED" in known_groups.eager_check(table)["note"]


def test_revoiced_split_is_read(tmp_path):
    dialogue = generate_dialogue(5, duration_s=12.0, style="human")
    sf.write(tmp_path / "d.flac", dialogue.audio.T, 16000)
    data = dialogue.to_dict()
    data["audio_path"] = "d.flac"  # relative to the manifest
    (tmp_path / "manifest.jsonl").write_text(json.dumps(data) + "\n")
    (loaded,) = known_groups.load_revoice_test(tmp_path)
    assert loaded.audio.shape == dialogue.audio.shape and loaded.segments == dialogue.segments
    with pytest.raises(FileNotFoundError, match="--revoice-test"):
        known_groups.load_revoice_test(tmp_path / "missing")


def test_human_human_check_names_the_lowest_direction():
    from turneval.dataset_scripts.agreement_instances import AgreementInstance

    def inst(metric, decision, p_t, session):
        probs = (0.0, 0.0, 0.0, p_t, 1.0 - p_t)
        return AgreementInstance(metric=metric, decision=decision, probs=probs, session=session, chunk=1, time=0.04)

    instances = [inst("a", "T", 0.9, "s1"), inst("a", "T", 0.8, "s2"), inst("a", "C", 0.9, "s1"), inst("a", "C", 0.1, "s2")]
    figures = known_groups.human_human_figures(instances, "test data", "judge x")
    lowest, ceiling = figures[-2:]
    assert lowest["value"] == pytest.approx(50.0) and "lets the user continue" in lowest["note"] and "MISSED" in lowest["note"]
    # one "continue" decision scores as high as the best "speaks up" one: no threshold lifts the
    # lower direction above 50 %, so the ceiling says the judge's ranking, not its threshold, misses
    assert ceiling["name"].startswith("test data agreement ceiling") and ceiling["value"] == pytest.approx(50.0)
    assert "1 of 2 directions could reach 60 %" in ceiling["note"]
