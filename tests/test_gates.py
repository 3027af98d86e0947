"""CI gates (`--require`, `turneval check`) and the headline figures they gate."""
from __future__ import annotations

import json
import math

import pytest

from turneval.cli import main
from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.events import extract_events
from turneval.gates import (
    GATE_FAILED_EXIT,
    HEADLINE_FIGURES,
    GateError,
    Requirement,
    check_requirements,
    evaluate,
    figures_from_report,
    format_gate_table,
    parse_requirement,
)
from turneval.reporting.headline import event_figures, judge_agreement_a, response_gaps


@pytest.mark.parametrize("text, expected", [
    ("response_latency_s<=0.8", Requirement("response_latency_s", "<=", 0.8)),
    ("  talk_over_rate >= 1e-2 ", Requirement("talk_over_rate", ">=", 0.01)),
    ("yield_rate<0.5", Requirement("yield_rate", "<", 0.5)),
    ("naturalness_m>-4", Requirement("naturalness_m", ">", -4.0)),
    ("backchannels_per_min==0", Requirement("backchannels_per_min", "==", 0.0)),
])
def test_requirements_are_read(text, expected):
    assert parse_requirement(text) == expected


@pytest.mark.parametrize("text, message", [
    ("latency<=0.8", "unknown figure 'latency'; known figures: response_latency_s, talk_over_rate"),
    ("response_latency_s=<0.8", "not NAME OP NUMBER"),
    ("response_latency_s<=fast", "'fast' is not a number"),
    ("response_latency_s<=nan", "finite"),
    ("response_latency_s 0.8", "not NAME OP NUMBER"),
])
def test_bad_requirements_name_the_requirement_and_the_problem(text, message):
    with pytest.raises(GateError) as err:
        parse_requirement(text)
    assert message in str(err.value) and repr(text) in str(err.value)


def test_operators_at_their_edges_and_unmeasured_figures_fail():
    figures = {"response_latency_s": 0.8, "talk_over_rate": None, "yield_rate": math.nan}
    results = check_requirements(
        ["response_latency_s<=0.8", "response_latency_s<0.8", "response_latency_s==0.8", "response_latency_s>0.8",
         "talk_over_rate<=1", "yield_rate>=0", "cut_off_rate<=1"], figures)
    assert [r.passed for r in results] == [True, False, True, False, False, False, False]
    assert [r.reason for r in results[4:]] == ["not measured"] * 3
    table = format_gate_table(results)
    assert table.splitlines()[0].split() == ["requirement", "value", "result"]
    assert "response_latency_s<=0.8  0.8" in table and table.count("FAIL") == 5 and table.count("not measured") == 3


def test_a_report_without_headline_figures_is_refused():
    with pytest.raises(GateError, match="no headline figures"):
        figures_from_report({"summary": []})
    assert figures_from_report({"headline": {"figures": {"yield_rate": 0.5}}}) == {"yield_rate": 0.5}


def _dialogue() -> Dialogue:
    # user A, system B. B replies after 0.5 s; A answers; B starts inside A's second turn and keeps
    # the floor (talks over); B replies after 0.4 s and A restarts inside that reply, taking the floor
    # (a cut-off, and the system yields); B replies after 0.6 s.
    user = [(0.0, 2.0), (4.3, 6.0), (7.8, 9.0), (10.0, 13.0)]
    system = [(2.5, 4.0), (5.0, 7.0), (9.4, 12.0), (13.6, 15.0)]
    return Dialogue("gates", [user, system], duration=15.0)


def test_event_figures_count_what_they_say():
    events = extract_events(_dialogue())
    assert response_gaps(events, system=1) == pytest.approx([0.5, 0.4, 0.6])
    figures = event_figures(events, system=1)
    assert figures == pytest.approx({
        "response_latency_s": 0.5,
        "talk_over_rate": 1 / 4,      # one of the user's four turns
        "yield_rate": 1.0,            # the user's one interruption took the floor
        "cut_off_rate": 1 / 3,        # of three replies after the user's speech, one the user talked into
        "backchannels_per_min": 0.0,
        "overlap_share": 3.0 / 15.0,  # [5, 6] and [10, 12]
    })
    swapped = event_figures(events, system=0)  # A in the system's seat: gaps 0.3 and 0.8 s; B's interruption at 5 s took the floor
    assert swapped["response_latency_s"] == pytest.approx(0.55)
    assert swapped["yield_rate"] == 1.0 and swapped["talk_over_rate"] == pytest.approx(1 / 4)


def test_judge_agreement_a_pools_both_decisions():
    agreement = {"metrics": {"a": {"decisions": {"T": {"agreement": 0.8, "n_instances": 5},
                                                 "C": {"agreement": 0.5, "n_instances": 2},
                                                 "X": {"agreement": None, "n_instances": 0}}}}}
    assert judge_agreement_a(agreement) == pytest.approx(5 / 7)
    assert judge_agreement_a(None) is None and judge_agreement_a({"metrics": {"a": None}}) is None


def test_check_command_gates_a_report_json(tmp_path, capsys):
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"headline": {"figures": {"response_latency_s": 0.62, "talk_over_rate": 0.2}}}))
    assert main(["check", str(path), "--require", "response_latency_s<=0.8"]) == 0
    assert "requirements: all 1 passed" in capsys.readouterr().out
    code = main(["check", str(tmp_path), "--require", "response_latency_s<=0.8", "--require", "talk_over_rate<=0.1",
                 "--require", "naturalness_m>-5"])
    out = capsys.readouterr().out
    assert code == GATE_FAILED_EXIT and "2 of 3 failed" in out and "not measured" in out
    path.write_text(json.dumps({"summary": []}))
    assert main(["check", str(path), "--require", "yield_rate>=0.5"]) == 1
    assert "no headline figures" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["check", str(path), "--require", "latency<1"])
    assert stop.value.code == 2 and "known figures: response_latency_s" in capsys.readouterr().err


def test_report_require_sets_the_exit_code_after_writing(tmp_path, capsys):
    import numpy as np
    import soundfile as sf

    wav = tmp_path / "call.wav"  # the report reads audio; the segments come from the annotations
    sf.write(wav, np.random.default_rng(0).normal(0, 0.05, (15 * 16000, 2)).astype(np.float32), 16000)
    annotations = tmp_path / "call.json"
    _dialogue().save_annotations(annotations)
    data = json.loads(annotations.read_text())
    annotations.write_text(json.dumps({**data, "audio_path": str(wav)}))
    out = tmp_path / "out"
    base = ["report", str(annotations), "--system-channel", "1", "--no-judge", "--no-predictor", "--no-html", "--quiet", "--out", str(out)]
    assert main([a for a in base if a != "--quiet"] + ["--require", "response_latency_s<=0.8", "--require", "overlap_share<0.25"]) == 0
    assert "requirements: all 2 passed" in capsys.readouterr().out
    assert main(base + ["--require", "response_latency_s<=0.8"]) == 0
    assert capsys.readouterr().out == ""  # --quiet: errors only, and a passed gate is none
    code = main(base + ["--require", "response_latency_s<=0.3", "--require", "judge_agreement_a>=0.7"])
    captured = capsys.readouterr()
    assert captured.out == "" and code == GATE_FAILED_EXIT and "2 of 2 failed" in captured.err  # --quiet still says why
    written = json.loads((out / "report.json").read_text())  # the report is written even when a gate fails
    assert set(written["headline"]["figures"]) == set(HEADLINE_FIGURES)
    assert written["headline"]["figures"]["response_latency_s"] == pytest.approx(0.5)
    assert evaluate([parse_requirement("talk_over_rate<=0.25")], written["headline"]["figures"])[0].passed


def test_report_help_shows_the_gate_with_an_example(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = capsys.readouterr().out
    assert "--require" in text and "response_latency_s<=0.8" in text
